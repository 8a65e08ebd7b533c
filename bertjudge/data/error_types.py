"""The error type of a labelled row: the training target of an encoder judge's error-type head and the
truth its report is measured against. The one place that maps the corpus's candidate kinds and attacks to
the names of ``bertjudge.core.error_types``.

- A row whose ``meta.error_type`` names a type (a person or an agent said why it is wrong) uses it; the
  type must agree with the label (``none``/``format_only`` for a correct row, another one for a wrong row).
- A row written by the procedural corpus's candidate kinds (``embedded:`` sources and ``synth``: a
  ``label_source`` of ``KIND_SOURCES`` and a ``meta.kind`` of ``candidates.KINDS`` whose label is the
  row's) takes its kind's type: a wrong kind through ``KIND_ERROR_TYPES``; a correct one is
  ``format_only`` when it names no reference as written (the answer in another form: 1/2 for 0.5, twelve
  for 12, the option's text for its letter, a converted unit or an alias not listed), else ``none``. That
  test reads the text rather than the kind because the kinds overlap here: a ``plain`` answer is now and
  then written in another form, and an ``alt_form`` one often names a listed alias
  (``tests/test_error_head.py`` counts both).
- Any other row (real model outputs, which mostly say nothing about why; the multilingual corpus, whose
  kinds are its own) is unknown (``None``): it is left out of the head's loss and of the report's
  error-type metrics. Unknown is not trained as ``other``: real rows would then teach the head "a
  real-looking wrong answer is ``other``", a shortcut of the data's source, and would mislabel the wrong
  entities and numbers they mostly are.
"""

from __future__ import annotations

import re
import unicodedata

from bertjudge.core.error_types import CORRECT_TYPES, ERROR_TYPES, UNKNOWN
from bertjudge.core.records import RecordError
from bertjudge.data import synth
from bertjudge.data.corpus.attacks import ATTACKS
from bertjudge.data.corpus.base import LABEL_SOURCE
from bertjudge.data.corpus.candidates import KINDS

KIND_SOURCES = (LABEL_SOURCE, synth.LABEL_SOURCE)  # the label sources of rows whose meta.kind is a KINDS name

# every wrong candidate kind of the corpus (``candidates.KINDS`` with label 0) -> its error type
KIND_ERROR_TYPES = {
    "other_option": "wrong_entity",  # another option
    "letter_text_mismatch": "wrong_entity",  # the right letter with another option's text
    "other_span": "wrong_entity",  # another span of the passage
    "other_entity": "wrong_entity",  # open QA: another entity of the answer's type
    "near_miss": "wrong_entity",  # a similar name: Ca for C, another first name
    "mentions_reference": "wrong_entity",  # names the reference, commits to another entity
    "wrong_paragraph": "wrong_entity",  # a paragraph that commits to another entity
    "off_by_one": "wrong_number",
    "sign_error": "wrong_number",
    "slip": "wrong_number",
    "decimal_shift": "wrong_number",
    "rounding": "wrong_number",
    "wrong_unit": "wrong_unit",
    "percent_misuse": "wrong_unit",  # 45% for 45
    "intermediate": "partial",  # an intermediate result of the computation
    "hedge": "hedged_or_multiple",
    "list_all": "hedged_or_multiple",
    "refusal": "refusal_or_no_answer",
    "false_unanswerable": "refusal_or_no_answer",  # "the passage does not say" when it does
    "truncated": "refusal_or_no_answer",  # reasoning cut off before any answer
    "right_then_wrong": "right_then_wrong",
    "judge_injection": "judge_directed",
    "negated": "other",  # denies the right answer, mostly without giving one
    "other_question": "other",  # answers a neighbouring question (the year when asked who)
}
# every attack of the adversarial suite -> the type of its wrong row (its correct row is none/format_only)
ATTACK_ERROR_TYPES = {name: KIND_ERROR_TYPES.get(attack.wrong) for name, attack in ATTACKS.items()}

_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_NOT_WORD = re.compile(r"[\W_]+")


def _words(text: str) -> str:
    """Text as a space-framed run of lower-case words: accents, punctuation and thousands separators
    dropped ("8,800,000." -> " 8800000 ", "Perú" -> " peru ")."""
    text = unicodedata.normalize("NFKD", _THOUSANDS.sub("", text))
    text = "".join(c for c in text if not unicodedata.combining(c)).lower()
    return " " + " ".join(_NOT_WORD.sub(" ", text).split()) + " "


def names_a_reference(record: dict) -> bool:
    """Whether the candidate names one of the references as written (whole words; case, accents and
    punctuation aside): what tells a ``none`` correct answer from a ``format_only`` one."""
    text = _words(record["candidate"])
    return any(ref.strip() and ref in text for ref in map(_words, record["references"]))


def _given(record: dict, name) -> str:
    """A row's own ``meta.error_type``, checked against the known types and the row's label."""
    where = f"row {record.get('id')!r}: meta.error_type {name!r}"
    if name not in ERROR_TYPES:
        raise RecordError(f"{where} is not an error type; expected one of {', '.join(ERROR_TYPES)} (or null)")
    label = record.get("label")
    if label is not None and (name in CORRECT_TYPES) != (label == 1):
        raise RecordError(
            f"{where} contradicts its label {label}: {', '.join(CORRECT_TYPES)} are the types of a correct "
            "answer, the others of a wrong one"
        )
    return name


def row_error_type(record: dict) -> str | None:
    """The error type of a row (one of ``ERROR_TYPES``), or None where it is unknown (see the module)."""
    meta = record.get("meta") or {}
    if meta.get("error_type") is not None:
        return _given(record, meta["error_type"])
    label, kind = record.get("label"), meta.get("kind")
    if label is None or kind not in KINDS or record.get("label_source") not in KIND_SOURCES:
        return None
    if KINDS[kind].label != label:  # a corpus row relabelled without its source changing: its kind is no guide
        return None
    if label == 1:
        return "none" if names_a_reference(record) else "format_only"
    return KIND_ERROR_TYPES.get(kind)


def row_error_index(record: dict) -> int:
    """``row_error_type`` as the head's target: its index in ``ERROR_TYPES``, ``UNKNOWN`` (-1) if unknown."""
    name = row_error_type(record)
    return UNKNOWN if name is None else ERROR_TYPES.index(name)
