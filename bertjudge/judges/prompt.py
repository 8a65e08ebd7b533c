"""The judging prompt of generative judges and the parser of their verdicts (no model needed).

The prompt is versioned: a judge fine-tuned on one prompt is refused with another
(``PROMPT_VERSION`` is saved in ``judge.json``). *Direct* mode asks for one word, True or False;
*reasoning* mode asks for a short reasoning that ends with a ``Verdict: True|False`` line.
"""

from __future__ import annotations

import re

PROMPT_VERSION = "bertjudge-v1"
MODES = ("direct", "reasoning")
VERDICT_WORDS = ("True", "False")

_TITLES = {
    "question": "Question",
    "reference": "Reference answer",
    "candidate": "Candidate answer",
    "answer": "Final answer of the candidate (extracted by rules, may be missing)",
}
_INTRO = ("You check answers to questions. You are given a question, a reference answer that is known "
          "to be right, and a candidate answer to check.")
_ASK = ("Is the final answer of the candidate equivalent to the reference answer, with respect to the "
        "question? Only the final answer counts, not its wording, its form or the reasoning before it. "
        "A candidate that gives several different final answers, or none, is not equivalent.")
_TAIL = {
    "direct": "Reply with a single word: True or False.",
    "reasoning": "Think it over in a few short sentences, then finish with a last line that is exactly "
                 "'Verdict: True' or 'Verdict: False'.",
}


def prompt_text(texts: dict[str, str], parts: list[str], mode: str) -> str:
    """The user message for one example: the intro, one block per part (in ``parts`` order), the ask."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    blocks = [f"### {_TITLES[part]}\n{texts[part].strip()}" for part in parts]
    return "\n\n".join([_INTRO, *blocks, f"{_ASK} {_TAIL[mode]}"])


def messages(texts: dict[str, str], parts: list[str], mode: str) -> list[dict]:
    """The chat messages for one example (one user turn)."""
    return [{"role": "user", "content": prompt_text(texts, parts, mode)}]


def shorten(text: str, max_chars: int, head_chars: int = 200) -> str:
    """Keep the head and the tail (where the final answer is) of a text longer than ``max_chars``."""
    if len(text) <= max_chars:
        return text
    head = min(head_chars, max_chars // 4)
    return text[:head] + " […] " + text[len(text) - (max_chars - head):]


_THINK = re.compile(r"<think>.*?</think>", re.S | re.I)
_WORD = r"(true|false|correct|incorrect)\b(?!\s*(?:/|or\b))"  # not "True/False", "true or false"
_VERDICT = re.compile(r"verdict\W{0,6}(?:is\W{0,4})?" + _WORD, re.I)
_LEADING = re.compile(r"^\W{0,6}" + _WORD, re.I)


def parse_verdict(output: str | None) -> bool | None:
    """The verdict of a generated output: True, False, or None when it cannot be read.

    The last ``Verdict: …`` wins (after removing ``<think>…</think>`` blocks); without one, an
    output that starts with the verdict word counts. A reasoning cut before ``</think>`` is None.
    """
    if output is None:
        return None
    text = _THINK.sub(" ", output)
    if "<think>" in text.lower():
        return None
    found = _VERDICT.findall(text)
    word = found[-1] if found else None
    if word is None:
        leading = _LEADING.match(text.strip())
        word = leading.group(1) if leading else None
    return None if word is None else word.lower() in ("true", "correct")
