"""The judging prompt of generative judges and the parser of their verdicts (no model needed).

The prompt is versioned: a judge fine-tuned on one prompt is refused with another
(``PROMPT_VERSION`` is saved in ``judge.json``). *Direct* mode asks for one word, True or False;
*reasoning* mode asks for a short reasoning that ends with a ``Verdict: True|False`` line.

*score10* (prompted judges only, not trained) is JudgeLM's prompt shape for one answer: the question,
the reference answer and the assistant's answer in bracketed blocks, then a request to rate the answer
on a scale of 1 to 10 and to output a single line containing only the score (``parse_score`` reads
it). It has its own version, ``SCORE_PROMPT_VERSION``.
"""

from __future__ import annotations

import re

PROMPT_VERSION = "bertjudge-v1"
MODES = ("direct", "reasoning")  # the modes of trained generative judges
SCORE_MODE = "score10"
PROMPTED_MODES = (*MODES, SCORE_MODE)  # the modes of off-the-shelf (prompted) judges
SCORE_PROMPT_VERSION = "judgelm-v1"
SCORE_TOKENS = 10  # what a score10 answer needs: a score on one line (and an end token)
VERDICT_WORDS = ("True", "False")

_TITLES = {
    "question": "Question",
    "reference": "Reference answer",
    "candidate": "Candidate answer",
    "answer": "Final answer of the candidate (extracted by rules, may be missing)",
}
_INTRO = (
    "You check answers to questions. You are given a question, a reference answer that is known "
    "to be right, and a candidate answer to check."
)
_ASK = (
    "Is the final answer of the candidate equivalent to the reference answer, with respect to the "
    "question? Only the final answer counts, not its wording, its form or the reasoning before it. "
    "A candidate that gives several different final answers, or none, is not equivalent."
)
_TAIL = {
    "direct": "Reply with a single word: True or False.",
    "reasoning": "Think it over in a few short sentences, then finish with a last line that is exactly "
    "'Verdict: True' or 'Verdict: False'.",
}


def prompt_version(mode: str) -> str:
    """The version of the prompt of ``mode`` (saved in ``judge.json``)."""
    return SCORE_PROMPT_VERSION if mode == SCORE_MODE else PROMPT_VERSION


_SCORE_TITLES = {
    "question": ("[Question]", None),
    "reference": ("[Reference Answer]", None),
    "candidate": ("[The Start of Assistant's Answer]", "[The End of Assistant's Answer]"),
    "answer": ("[Final Answer of the Assistant (extracted by rules, may be missing)]", None),
}
_SCORE_INTRO = "You are a helpful and precise assistant for checking the quality of the answer."
_SCORE_ASK = (
    "[System]\nWe would like to request your feedback on the performance of an AI assistant in response to "
    "the user question displayed above, against the reference answer, which is known to be right.\n"
    "Please rate the accuracy of the assistant's final answer with respect to the reference answer. The "
    "assistant receives an overall score on a scale of 1 to 10, where a higher score indicates better "
    "overall performance: a final answer equivalent to the reference gets a high score, a wrong one, "
    "several different ones or none a low score.\n"
    "Please output a single line containing only the score, a whole number from 1 to 10."
)


def score_prompt_text(texts: dict[str, str], parts: list[str]) -> str:
    """JudgeLM's prompt shape for one answer: the intro, one bracketed block per part, the rating request."""
    blocks = []
    for part in parts:
        start, end = _SCORE_TITLES[part]
        blocks.append(f"{start}\n{texts[part].strip()}" + (f"\n{end}" if end else ""))
    return "\n\n".join([_SCORE_INTRO + "\n" + blocks[0], *blocks[1:], _SCORE_ASK]) if blocks else _SCORE_ASK


def prompt_text(texts: dict[str, str], parts: list[str], mode: str) -> str:
    """The user message for one example: the intro, one block per part (in ``parts`` order), the ask."""
    if mode == SCORE_MODE:
        return score_prompt_text(texts, parts)
    if mode not in MODES:
        raise ValueError(f"mode must be one of {PROMPTED_MODES}, got {mode!r}")
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
    return text[:head] + " […] " + text[len(text) - (max_chars - head) :]


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


_NUMBER = r"(?<![\d.])(\d{1,2}(?:\.\d+)?)(?![\d.]*\d)"
_OUT_OF = r"(?:\s*(?:/|out\s+of)\s*(\d+))?"
_LABELLED = re.compile(
    r"\b(?:score|rating|rated?|grade)\b(?:\s*\([^)]*\))?\s*(?:is|of|=|:|-)?\W{0,4}?\s*" + _NUMBER + _OUT_OF, re.I
)
_OUT_OF_TEN = re.compile(_NUMBER + r"\s*(?:/|out\s+of)\s*10\b", re.I)
_LEADING_NUMBER = re.compile(r"^\W{0,4}?" + _NUMBER + _OUT_OF + r"(?![ \t]*[a-z%])", re.I)


def parse_score(output: str | None) -> float | None:
    """The 1–10 score of a generated output, or None when it cannot be read.

    After removing ``<think>…</think>`` blocks (a reasoning cut before ``</think>`` is None): the last
    labelled score (``Score: 7``, ``Rating: [[8]]``, ``score of 6/10``) wins; else the last ``N/10`` or
    ``N out of 10``; else a number that starts the output (``7``, ``8.5``, ``9/10``), as JudgeLM writes
    it on the first line. A score out of another scale (``3/5``) or outside [1, 10] is None.
    """
    if output is None:
        return None
    text = _THINK.sub(" ", output)
    if "<think>" in text.lower():
        return None
    labelled = _LABELLED.findall(text)
    if labelled:
        number, scale = labelled[-1]
    elif out_of_ten := _OUT_OF_TEN.findall(text):
        number, scale = out_of_ten[-1], "10"
    elif leading := _LEADING_NUMBER.match(text.strip().partition("\n")[0]):
        number, scale = leading.groups()
    else:
        return None
    if scale and scale != "10":
        return None
    score = float(number)
    return score if 1.0 <= score <= 10.0 else None


def score_to_probability(score: float | None) -> float:
    """P(correct) of a 1–10 score: (score − 1) / 9; NaN when there is no score."""
    return float("nan") if score is None else (score - 1.0) / 9.0
