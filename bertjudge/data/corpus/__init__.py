"""The embedded corpus: procedural, labelled (question, candidate, reference) records.

Offline training data and a stress test for judges, generated in-process in seconds.
Four categories in equal shares, each with many question families and phrasings:

* ``multiple_choice`` (task ``embedded-mc``): 4-10 options labelled ``A.``, ``A)``, ``(A)``,
  ``(1)``, ``1)`` or as markdown lists; the reference is the option label.
* ``context_extraction`` (``embedded-extraction``): a passage about fictional people (births,
  moves, companies, books, teams, farms, prizes) and a question whose answer is a span of it, or
  ``unanswerable`` when the passage does not say.
* ``open_math`` (``embedded-math``): multi-step word problems (money, percentages, fractions,
  rates, units, algebra, expressions) whose answer the generator computes exactly.
* ``open_qa`` (``embedded-openqa``): factual questions without a passage, as in TriviaQA or NQ-open
  (capitals, chemical symbols, rivers, a city's country; and fictional founders, authors, prize
  winners, years, dates, professions, birthplaces, heights, lengths, populations), whose references
  are one to six aliases ("New York City" / "NYC", "July 4, 1976" / "1976-07-04", "the Seine" /
  "Seine River"). Correct answers range from the bare entity to a paragraph that buries it among
  other facts, names and dates, with citations, bold, light hedges and unlisted equivalent forms;
  wrong ones mention the reference but commit to something else, contain it as part of another
  name ("Okafor" in "Kenji Okafor"), are off by one, in the wrong unit, or answer another question.
  It draws from its own random stream, so adding it left the other categories' rows unchanged.

Every question gets one correct and one wrong candidate (labels exactly balanced), written in
the styles of real models (bare, "Final answer:", ``\\boxed{}``, sentences, markdown, answer plus
explanation, step-by-step reasoning) and in equivalent forms (0.5 = 1/2 = ``\\frac{1}{2}``,
12 = twelve, $18.50 = 18.5 dollars, letter or option text, paraphrases, longer spans). Wrong
candidates are the ones that fool lexical metrics: another option, the right letter with another
option's text, an intermediate result, off-by-one and sign errors, the right number with the wrong
unit, another span of the passage, the reference negated, hedging, listing every option, reasoning
that reaches the answer then states another, truncation, refusals and text addressed to the judge.

Splits: ``train``/``val``/``test`` use disjoint random streams; a held-out part of the phrasings,
whole families (see ``HELDOUT_FAMILIES``) and the last fifth of every word list appear only outside
``train``, and every question text is assigned to exactly one split by its hash, so no question
text is shared between splits (open QA hashes the bare question without its intro or instruction,
and for a real fact its subject, so "the capital of France" is asked in one split only, however
phrased). ``adversarial`` is a named suite: each pair of rows carries
``meta['attack']`` (see ``ATTACKS``), one wrong candidate and one correct counterpart.

The candidate functions are reusable for user data (``bertjudge.data.synth``): ``item_from_reference``
builds an :class:`Item` from a question and references, and ``candidate(item, label, rng)`` writes
a candidate text of that label.

Modules, lowest first (each imports only the ones above it):

* ``base``: constants (``CORPUS_VERSION``, ``SPLITS``, ``TASKS`` ...), number and text helpers, the
  :class:`Item`, the per-split random stream ``Ctx``, ``question_split`` and ``make_record``;
* ``lexicon``: the shared word lists (names, cities, objects, capitals, elements ...);
* ``open_math``, ``multiple_choice``, ``extraction``, ``open_qa``: one category each, its facts,
  phrasings and family registry (``MATH_FAMILIES``, ``MC_FAMILIES``, ``FACTS``, ``QA_FAMILIES``);
* ``templates``: every family in every phrasing (``TEMPLATES``), ``HELDOUT_FAMILIES`` and ``new_item``;
* ``answers``: right and wrong short answers and their presentation styles;
* ``candidates``: the candidate kinds (``KINDS``), the fictional ``MODELS`` and ``candidate``;
* ``attacks``: the adversarial pairs (``ATTACKS``);
* ``splits``: ``generate``, ``split_sizes`` and ``summary``;
* ``user``: ``item_from_reference`` and ``infer_category`` for user rows;
* ``multilingual``: the corpus in French, German, Spanish and Korean (open math, multiple choice, open QA;
  ``multilingual.generate``, ``meta.language`` on every row), its own random streams and splits, so the
  English rows above are unchanged by it.

The corpus is what the project's judges were trained on: the same arguments give the same rows, byte
for byte (``tests/test_corpus.py`` pins their hash). A deliberate change of the rows bumps
``CORPUS_VERSION``.
"""

from __future__ import annotations

from bertjudge.core.extract import fmt, parse_options  # re-exported: callers read numbers and options through here
from bertjudge.data.corpus import multilingual
from bertjudge.data.corpus.answers import STYLES, correct_answer, wrong_answer
from bertjudge.data.corpus.attacks import ATTACKS
from bertjudge.data.corpus.base import (
    ANS,
    CATEGORY_ORDER,
    CORPUS_VERSION,
    LABEL_SOURCE,
    SPLITS,
    TASKS,
    Item,
    money,
    words,
)
from bertjudge.data.corpus.candidates import INJECTIONS, KINDS, MODELS, REFUSALS, candidate
from bertjudge.data.corpus.lexicon import CAPITALS, CITIES, FIRST_NAMES, MONTHS, ORG_HEADS, PLURALS, WEEKDAYS
from bertjudge.data.corpus.open_qa import BIG_CITIES, QA_FAMILIES, QA_INTROS
from bertjudge.data.corpus.splits import generate, split_sizes, summary
from bertjudge.data.corpus.templates import HELDOUT_FAMILIES
from bertjudge.data.corpus.user import _date_of, has_passage, infer_category, item_from_reference

__all__ = [
    # generation
    "CORPUS_VERSION",
    "LABEL_SOURCE",
    "SPLITS",
    "TASKS",
    "CATEGORY_ORDER",
    "generate",
    "split_sizes",
    "summary",
    "multilingual",
    # candidates for user rows (bertjudge.data.synth)
    "Item",
    "MODELS",
    "item_from_reference",
    "infer_category",
    "has_passage",
    "candidate",
    "correct_answer",
    "wrong_answer",
    # registries and word lists that tests and the command line read
    "ATTACKS",
    "KINDS",
    "STYLES",
    "HELDOUT_FAMILIES",
    "QA_FAMILIES",
    "QA_INTROS",
    "REFUSALS",
    "INJECTIONS",
    "ANS",
    "CAPITALS",
    "BIG_CITIES",
    "CITIES",
    "FIRST_NAMES",
    "ORG_HEADS",
    "PLURALS",
    "MONTHS",
    "WEEKDAYS",
    # helpers
    "words",
    "money",
    "fmt",
    "parse_options",
    "_date_of",
]
