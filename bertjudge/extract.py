"""Rule-based extraction of a candidate's final answer (pure string scanning, never raises).

``final_answer`` looks, in this order, for: the last "Final answer:" marker, the last
``\\boxed{…}`` / ``\\fbox{…}`` (nested braces kept), the last "the answer is X" (or an
"Answer: X" line), a trailing option letter, and the last number.
"""

from __future__ import annotations

import re

_FINAL = re.compile(r"final\s+answer\s*\**\s*(?::|\bis\b\s*:?)\s*\**", re.IGNORECASE)
_ANSWER_IS = re.compile(
    r"\bthe\s+(?:correct\s+|right\s+)?answer\s+(?:is|would\s+be|should\s+be)\s*:?"
    r"|^[ \t>#*_]*answer[ \t*_]*:",
    re.IGNORECASE | re.MULTILINE,
)
_BOX = re.compile(r"\\(?:boxed|fbox)\s*\{")
_OPTION_LINE = re.compile(
    r"(?:^|\b(?:answer|option|choice)(?:\s+is)?\s*[:\-]?\s*)[(\[]?([A-J])[)\]]?[.:]?$", re.IGNORECASE
)
_OPTION = re.compile(r"^[(\[]?([A-Za-z])[)\]]?[.:]?$")
_OPTION_PREFIX = re.compile(r"^[(\[]?([A-J])(?:[)\]]|[.:])?(?:\s|$)")
_NUMBER = re.compile(r"(?<![\w.,])[-+−]?(?:(?:\d{1,3}(?:,\d{3})+(?!\d)|\d+)(?:\.\d+)?|\.\d+)(?:/\d+)?")
_SENTENCE_END = re.compile(r"\.\s")
_CLAUSE_END = re.compile(r"[.,;!?]\s")
_EMPHASIS = "*_`"
_EDGE_PUNCT = " \t\n.,;:!?\"'“”‘’"


def boxed(text: str) -> str | None:
    """The content of the last balanced ``\\boxed{…}`` or ``\\fbox{…}``, nested braces kept."""
    if not isinstance(text, str):
        return None
    stop = len(text)
    for match in reversed(list(_BOX.finditer(text))):
        depth, start = 1, match.end()
        for i in range(start, stop):  # a box that is still open at the next box cannot close
            char = text[i]
            if char == "{":
                depth += 1
            elif char == "}":
                depth -= 1
                if depth == 0:
                    return text[start:i].strip()
        stop = match.start()
    return None


def _strip_math(s: str) -> str:
    """Remove one layer of ``$…$``, ``$$…$$``, ``\\(…\\)`` or ``\\[…\\]`` around the whole string."""
    for left, right in (("$$", "$$"), ("$", "$"), ("\\(", "\\)"), ("\\[", "\\]")):
        if len(s) > len(left) + len(right) and s.startswith(left) and s.endswith(right):
            return s[len(left):-len(right)].strip()
    return s


def _clean(s: str) -> str:
    """Trim a marker's answer: markdown emphasis, edge punctuation, math delimiters, boxes."""
    inner = boxed(s)
    if inner is not None:
        return inner
    previous = None
    while s != previous:
        previous = s
        s = s.strip(_EDGE_PUNCT).strip(_EMPHASIS)
        s = _strip_math(s)
    return s


def _after(text: str, pos: int, end_pattern: re.Pattern) -> str:
    """The answer following a marker ending at ``pos``: the rest of that line (or the next
    non-empty line), up to the first ``end_pattern`` match outside math."""
    line = next((line for line in text[pos:pos + 2000].split("\n") if line.strip()), "")
    end = end_pattern.search(line, max(line.rfind("$"), line.rfind("}")) + 1)  # not inside math
    return _clean(line[:end.start()] if end else line)


def _last_answer_after(pattern: re.Pattern, text: str, end_pattern: re.Pattern) -> str | None:
    for match in reversed(list(pattern.finditer(text))):
        answer = _after(text, match.end(), end_pattern)
        if answer:
            return answer
    return None


def final_answer(text: str) -> str | None:
    """The rule-extracted final answer of a candidate, or None when nothing is found."""
    if not isinstance(text, str) or not text.strip():
        return None
    answer = _last_answer_after(_FINAL, text, _SENTENCE_END)
    if answer:  # "Final answer: the correct answer is (C)" → "(C)"
        return _last_answer_after(_ANSWER_IS, answer, _SENTENCE_END) or answer
    answer = boxed(text)
    if answer:
        return answer
    answer = _last_answer_after(_ANSWER_IS, text, _CLAUSE_END)
    if answer:
        return answer
    last_line = text.strip().rsplit("\n", 1)[-1].strip().strip(_EMPHASIS).strip()
    option = _OPTION_LINE.search(last_line)
    if option:
        return option.group(1).upper()
    numbers = _NUMBER.findall(text[-3000:])
    return numbers[-1].replace("−", "-") if numbers else None


def option_letter(s: str | None) -> str | None:
    """The option letter an answer is or starts with ("(B) Paris", "B because…", "B.", "b)") or None."""
    if not isinstance(s, str):
        return None
    s = s.strip().strip(_EMPHASIS).strip()
    match = _OPTION.match(s) or _OPTION_PREFIX.match(s)
    return match.group(1).upper() if match else None


def normalize_answer(s: str | None) -> str:
    """Case-, whitespace-, emphasis- and edge-punctuation-insensitive form; "(b)", "B." → "B"."""
    if not isinstance(s, str):
        return ""
    previous = None
    while s != previous:
        previous = s
        s = _strip_math(s.strip(_EDGE_PUNCT).strip(_EMPHASIS))
    option = _OPTION.match(s)
    if option:
        return option.group(1).upper()
    if len(s) > 2 and s[0] + s[-1] in ("()", "[]") and s.count(s[0]) == 1:
        s = s[1:-1]
    return " ".join(s.lower().split())
