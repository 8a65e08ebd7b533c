"""Bootstrap a labelled training set from a user's (question, reference) rows.

``python -m bertjudge synth --input QR.jsonl --output DIR`` reads one JSON object per line with
``question`` (string or null), ``reference`` (string) or ``references`` (list of strings), and
optionally ``category`` and ``task``; it writes ``train.jsonl`` and ``val.jsonl`` (split by question,
so no question is in both) with correct and wrong candidates per question, in the embedded corpus's
styles (``bertjudge.data.corpus``): bare, "Final answer:", ``\\boxed{}``, markdown, explanations,
reasoning, hedges, refusals, truncations, text addressed to the judge.

What it can know, and what it cannot:

* Correct candidates restate a reference (or an equivalent form the generator can prove: the same
  number as a fraction, decimal, words, with the reference's unit; an option's label or its text)
  and are right by construction.
* Open-QA rows (a factual question without a passage) get correct candidates in the forms real
  assistants write: any listed alias, the bare entity or a sentence restating the question, a
  paragraph that buries the answer among neutral sentences, citations "[1]", bold, a light hedge
  that still commits, case and punctuation changes, and the derivable forms of a date ("July 4,
  1776" = "4 July 1776" = "1776-07-04"), a river ("the Nile" = "Nile River") or a person's
  initials ("R. Bagdasarian").
* Wrong candidates come only from what the row shows: another option of a multiple-choice question
  (options parsed from the question text), the number off by one, its sign flipped, scaled by ten,
  a number copied from the question, the right number with another unit (math), another span of
  the passage (extraction), or answers that are wrong in any domain (negating the reference,
  hedging between answers, listing all options, refusing, stopping before the answer, a reasoning
  that states something else at the end, an injection aimed at the judge). For open QA they also
  come from the corpus's own lists when a reference is an entity it knows (another capital, country,
  river, element, profession, planet, month), made-up names for a "who" question about a person
  (including the same surname with another first name, "Ross Bagdasarian" -> "Freya Bagdasarian",
  and a longer surname, "Ross Bagdasarianson"), moved dates and numbers ("Apollo 11" -> "Apollo 12"),
  and the question's own names (an answer to another question); sentences that mention the
  reference but commit to one of these, and paragraphs built around them.
* It cannot invent wrong answers that need domain knowledge beyond the reference (a plausible but
  false capital, a typical reasoning mistake specific to the problem), and it cannot know aliases
  the references do not list: a passage span offered as a wrong answer can be a synonym of the
  reference (e.g. "the French capital" for "Paris"). An open-QA row whose reference is none of
  these gets only the domain-free wrong kinds and the question's own names. Review a sample before
  training on it; for real model outputs, label them with a teacher instead.

Category is inferred when missing: a numeric reference -> ``open_math``; a single option label with
options listed in the question -> ``multiple_choice``; a question holding a passage (a line starting
"Passage:", "Context:", "Text:", "Article:" ..., "read the text", "according to the passage", or
more than 400 characters), an "unanswerable" reference, a reference of more than 8 words, or no
question -> ``context_extraction``; anything else (a factual question without a passage and a
short answer, as in TriviaQA or NQ-open) -> ``open_qa``.

Languages: ``--language en`` (the default) is all of the above. ``--language fr``, ``de``, ``es`` or ``ko`` reads
the questions and references in that language and writes candidates with the multilingual corpus's writers
(``corpus.multilingual.candidate_for``): its answer markers ("Réponse finale :", "Die Antwort ist", "Respuesta
final:", "정답:"), decimal commas and grouped thousands (Korean: English notation), number words, fractions,
units, ``\\boxed{}``, markdown, reasoning, hedges and paragraphs; Korean options listed circled ("① 파리") are
answered "③", "3번" or "③ 파리". References are read in the language's notation ("3,5" = 3.5, "1.000" = 1000,
so "1,000" is one in fr/de/es), and a math row's references gain the number in English notation ("3.5") where
none holds it. Wrong answers: another option; the number off by one, a place off, its sign flipped, a number of
the question, or reasoning that states another at the end; for open QA another entity only when a reference is
one of the corpus's lexicon in that language (its capitals, chemical symbols, authors, weekdays; with true
sentences about others beside the answer), or a moved number ("1969" -> "1970"); and in every category the
domain-free kinds: a refusal, the reference negated ("Ce n'est pas 3,5."), two answers without choosing, the
reference named and another stated. Categories are inferred as above, with the language's passage marks
("Texte :", "laut dem Text", "según el texto", "지문에 따르면") and 'unanswerable' words ("sans réponse",
"keine Antwort", "sin respuesta", "답 없음"); a reference naming an option ("3" of circled options) is multiple
choice before it is a number. Not in these languages: context extraction (a row of that category, given or
inferred, is refused with its file and line), the right number in another unit, near misses, made-up names, a
question restated other than in the corpus's own phrasings (the others get "La réponse est ..."), and wrong
entities the lexicon does not hold: an open-QA reference it does not know, and that holds no number, gets only
the domain-free wrong kinds. Rows carry ``meta.language`` and the label source ``synthetic:synth-v1-<lang>``.
"""

from __future__ import annotations

import hashlib
import random
from pathlib import Path

from bertjudge.core import records
from bertjudge.data import corpus
from bertjudge.data.corpus import multilingual

SYNTH_VERSION = "synth-v1"
LABEL_SOURCE = f"synthetic:{SYNTH_VERSION}"
LANGUAGES = ("en", *multilingual.LANGUAGES)


def label_source(language: str = "en") -> str:
    """Who labelled the rows of a language: ``synthetic:synth-v1`` (English), ``synthetic:synth-v1-fr`` …"""
    return LABEL_SOURCE if language == "en" else f"{LABEL_SOURCE}-{language}"


def read_rows(path: Path) -> list[dict]:
    """Validated (question, references, category, task) rows; RecordError names the file and line."""
    rows = []
    for where, obj in records.iter_raw(path):
        rec = records.normalize({**obj, "candidate": ""} if isinstance(obj, dict) else obj, where)
        if obj.get("category") is None:
            rec["category"] = None  # to be inferred by synthesize, from the references' shape
        rows.append(
            {
                "question": rec["question"],
                "references": rec["references"],
                "category": rec["category"],
                "task": obj.get("task") or "synth",
                "where": where,
            }
        )
    if not rows:
        raise records.RecordError(f"{path}: empty file, no rows")
    return rows


def synthesize(
    rows: list[dict], per_question: int = 4, seed: int = 0, val_fraction: float = 0.1, language: str = "en"
) -> list[dict]:
    """Labelled records: per question, ``per_question`` candidates, half correct and half wrong
    (the extra one correct when odd), each text distinct; split by a hash of the question. ``language``:
    the language of the questions and of the candidates written (``LANGUAGES``; English by default, whose rows
    are those of the English corpus's writers, unchanged; other languages carry ``meta.language``)."""
    if language not in LANGUAGES:
        raise ValueError(f"unknown language {language!r}; expected one of {', '.join(LANGUAGES)}")
    english = language == "en"
    rng = random.Random(f"{SYNTH_VERSION}/{seed}" if english else f"{SYNTH_VERSION}/{language}/{seed}")
    models = list(corpus.MODELS)
    out = []
    for row in rows:
        try:
            if english:
                item = corpus.item_from_reference(row["question"], row["references"], row["category"], row["task"])
            else:
                item = multilingual.item_from_reference(
                    row["question"], row["references"], row["category"], row["task"], language
                )
        except ValueError as err:
            raise records.RecordError(f"{row['where']}: {err}") from None
        h = int(hashlib.md5((row["question"] or "").encode("utf-8")).hexdigest()[:8], 16)
        split = "val" if h % 1000 < val_fraction * 1000 else "train"
        texts = set()
        labels = [1, 0] * (per_question // 2) + [1] * (per_question % 2)
        for label in labels:
            for _ in range(20):
                model = rng.choice(models)
                if english:
                    text, meta = corpus.candidate(item, label, rng, model)
                else:
                    text, meta = multilingual.candidate_for(item, label, rng, model, language)
                if text.strip() not in texts:
                    break
            else:
                continue
            texts.add(text.strip())
            meta.update(source=row["where"], inferred_category=row["category"] is None)
            if not english:
                meta["language"] = language
            out.append(
                {
                    "id": records.make_id(item.task, item.question, model, meta["kind"], text),
                    "task": item.task,
                    "category": item.category,
                    "question": row["question"],
                    "candidate": text,
                    # English: the user's references; other languages: the item's (a number in English notation added)
                    "references": list(row["references"] if english else item.references),
                    "label": label,
                    "label_source": label_source(language),
                    "candidate_model": model,
                    "split": split,
                    "meta": meta,
                }
            )
    return out
