"""The category of a row that names none, read from the row alone (``infer_category``), so that every entry point
reads it the same way: ``core.records.normalize`` fills it in for every row it reads without one."""

from __future__ import annotations

import re

from bertjudge.core.extract import number_value, parse_options

_LABEL = re.compile(r"\s*[(\[]?([A-Ja-j]|\d{1,2})[)\].:]?\s*")
_MATH_QUESTION = re.compile(
    r"\\(?:frac|dfrac|sqrt|cdot|times|pi)|\$|\^|\d\s*[-+*/=<>]\s*\d|\b(?:compute|calculate|evaluate|simplify|solve|"
    r"how many|how much|what is the (?:largest|smallest|greatest|least|value|sum|product|number|probability|remainder)|"
    r"find|integers?|equations?|functions?|digits?)\b|\d",
    re.IGNORECASE,
)
_MATH_REFERENCE = re.compile(r"(?=.*\d)[\w\s\\{}()\[\]^*/+\-.,=<>√π|!$%]{1,80}")
_STRONG_MATH = re.compile(  # a question that is math whatever its answer ("Yes", "No integer solutions")
    r"\^|\\(?:frac|sqrt)|\b[a-z]\s*[=<>≥≤]\s*[-\w(]|\d\s*[-+*/=<>≥≤]\s*\d|\b(?:integers?|primes?|equations?|polynomials?)\b"
)
_PASSAGE_WORD = re.compile(
    r"\b(?:passage|context|article|paragraph|document)\b|(?:^|\s)(?:Q|Question)\s*:|\bAnswer the question\s*:",
    re.IGNORECASE,
)
_PASSAGE_CHARS = 200  # a question this long may hold a passage


def infer_category(question: str | None, references: list[str]) -> str:
    """The category of a row that names none, from the row alone, so that every entry point reads it the same way:
    ``multiple_choice`` when the question lists options and every reference is one of their labels or texts;
    ``context_extraction`` when a long question holds a passage (it says so — "passage", "context", … — or holds
    every reference that is not a number); ``open_math`` when the question is plainly math (powers, equations, "integers", …),
    or when every reference is a number or a math expression and the question reads as math (digits, operators,
    "how many", "compute", …) or is missing; ``open_qa`` for any other
    question; ``other`` without a question."""
    if question:
        labels, texts = parse_options(question)
        known = {label.upper() for label in labels} | {text.strip().lower() for text in texts}
        if labels and all(_option_reference(ref, known) for ref in references):
            return "multiple_choice"
        if len(question) >= _PASSAGE_CHARS and (_PASSAGE_WORD.search(question) or _all_quoted(question, references)):
            return "context_extraction"
    if (question and _STRONG_MATH.search(question)) or (
        all(_MATH_REFERENCE.fullmatch(ref.strip()) for ref in references)
        and (not question or _MATH_QUESTION.search(question))
    ):
        return "open_math"
    return "open_qa" if question else "other"


def _option_reference(ref: str, known: set[str]) -> bool:
    match = _LABEL.fullmatch(ref)
    return (match is not None and match[1].upper() in known) or ref.strip().lower() in known


def _all_quoted(question: str, references: list[str]) -> bool:
    """Whether the question holds every reference that is not a number (a passage the answer is taken from)."""
    lowered, words = question.lower(), [ref.strip().lower() for ref in references if number_value(ref) is None]
    return bool(words) and all(re.search(rf"(?<!\w){re.escape(w)}(?!\w)", lowered) for w in words)
