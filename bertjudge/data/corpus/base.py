"""Shared machinery of the embedded corpus: its constants, number and text helpers, the :class:`Item`,
the per-split random stream (:class:`Ctx`), the split a question belongs to, and the record of a row."""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import NamedTuple

from bertjudge.core import records
from bertjudge.core.extract import ONES, TENS

# ----------------------------------------------------------------------------- constants
CORPUS_VERSION = "embedded-v1"
LABEL_SOURCE = f"synthetic:{CORPUS_VERSION}"
SPLITS = ("train", "val", "test", "adversarial")
EVAL_SPLITS = SPLITS[1:]
TASKS = {
    "multiple_choice": "embedded-mc",
    "context_extraction": "embedded-extraction",
    "open_math": "embedded-math",
    "open_qa": "embedded-openqa",
}
CATEGORY_ORDER = tuple(TASKS)
ANS = "\x00ANS\x00"  # placeholder for the stated result in a reasoning line


# ----------------------------------------------------------------------------- numbers and words
_ORDINALS = (
    "first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth "
    "thirteenth fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth twentieth"
).split()


def words(n: int) -> str:
    """English words for an integer below a million: 42 -> 'forty-two'."""
    if n < 0:
        return "minus " + words(-n)
    if n < 20:
        return ONES[n]
    if n < 100:
        tens, ones = divmod(n, 10)
        return TENS[tens] + (f"-{ONES[ones]}" if ones else "")
    if n < 1000:
        hundreds, rest = divmod(n, 100)
        return f"{ONES[hundreds]} hundred" + (f" {words(rest)}" if rest else "")
    thousands, rest = divmod(n, 1000)
    return f"{words(thousands)} thousand" + (f" {words(rest)}" if rest else "")


def year_words(y: int) -> str:
    high, low = divmod(y, 100)
    if 2000 <= y < 2010:
        return "two thousand" + (f" {words(low)}" if low else "")
    return f"{words(high)} " + ("hundred" if low == 0 else f"oh-{words(low)}" if low < 10 else words(low))


def ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def ordinal_words(n: int) -> str:
    return (
        _ORDINALS[n - 1]
        if n <= 20
        else f"{TENS[n // 10]}-{_ORDINALS[n % 10 - 1]}"
        if n % 10
        else f"{TENS[n // 10][:-1]}ieth"
    )


def with_article(word: str) -> str:
    return f"an {word}" if word[0].lower() in "aeiou" else f"a {word}"


def money(x: Fraction) -> str:
    return f"{float(x):.2f}"


_NUM_RE = re.compile(r"-?\d[\d,]*(?:\.\d+)?(?:\s*/\s*\d+)?|-?\.\d+")


def parse_number(text: str) -> Fraction | None:
    """The value of a plain numeric answer ('$1,250.50', '3/4', '\\frac{3}{4}', '12 cm', '45%'
    -> 45); None when the text holds no number or more than one."""
    text = text.strip().replace("−", "-")
    m = re.fullmatch(r"\\[dt]?frac\{(-?\d+)\}\{(\d+)\}", text)
    if m:
        return Fraction(int(m[1]), int(m[2])) if int(m[2]) else None
    found = _NUM_RE.findall(text)
    if len(found) != 1:
        return None
    raw = found[0].replace(",", "").replace(" ", "")
    try:
        return Fraction(raw)
    except (ValueError, ZeroDivisionError):
        return None


# ----------------------------------------------------------------------------- text
def cap_first(text: str) -> str:
    return text[0].upper() + text[1:] if text and text[0].islower() else text


def has_word(text: str, part: str) -> bool:
    """Whether part occurs in text as whole words (what ``(?<!\\w)part(?!\\w)`` finds, without a regex)."""
    start = text.find(part)
    while start >= 0 and part:
        end = start + len(part)
        if (start == 0 or not (text[start - 1].isalnum() or text[start - 1] == "_")) and (
            end == len(text) or not (text[end].isalnum() or text[end] == "_")
        ):
            return True
        start = text.find(part, start + 1)
    return False


def names_any(text: str, right: set[str]) -> bool:
    """Whether the text names one of the (lowercase) right answers as whole words."""
    low = text.lower()
    return any(has_word(low, r) for r in right)


# ----------------------------------------------------------------------------- the item
@dataclass
class Item:
    """A question with everything needed to write right and wrong candidates for it."""

    category: str
    question: str
    references: list[str]
    task: str = "user"
    family: str = "user"
    template: str = "user"
    heldout: bool = False
    forms: list[tuple[str, str]] = field(default_factory=list)  # (form name, equivalent correct answer)
    # multiple choice
    labels: list[str] = field(default_factory=list)
    options: list[str] = field(default_factory=list)
    correct: int = -1
    claim: str = ""  # e.g. "{t} is the capital of Peru"
    # open math
    value: Fraction | None = None
    unit: str = ""
    is_money: bool = False
    percent_ok: bool = False
    alt_units: list[str] = field(default_factory=list)  # the number with one of these is wrong
    conversions: list[tuple[Fraction, str]] = field(default_factory=list)  # equal quantities
    intermediates: list[Fraction] = field(default_factory=list)
    steps: list[str] = field(default_factory=list)  # reasoning lines; the last holds ANS
    # context extraction (open QA: spans are wrong entities of the answer's type)
    spans: list[str] = field(default_factory=list)  # wrong spans of the same type
    evidence: dict[str, str] = field(default_factory=dict)  # span -> the passage sentence stating it
    answerable: bool = True
    asked: str = "this"  # what the question asks about, for "the passage does not mention ..."
    # open QA
    claims: list[str] = field(default_factory=list)  # sentences restating the answer, "{t}" for it
    facts: list[str] = field(default_factory=list)  # side facts to state before the answer
    after: list[str] = field(default_factory=list)  # side facts to state after it
    wrong_forms: dict[str, list[str]] = field(default_factory=dict)  # error kind -> wrong answers
    mentions: list[str] = field(default_factory=list)  # "{m}" mentioned, "{c}" committed to
    split_key: str = ""  # open QA: what decides the split (a real fact's subject, else the bare question)


class Family(NamedTuple):
    """A question family of a category: its generator and its phrasings (open QA: per asked slot)."""

    make: Callable[..., Item]
    phrasings: list[str] | dict[str, list[str]]


# ----------------------------------------------------------------------------- random stream, splits, records
class Ctx:
    """The random stream of one (split, seed[, stream]) and the word-list view of its split."""

    def __init__(self, split: str, seed: int, stream: str = ""):
        self.rng = random.Random(f"{CORPUS_VERSION}/{split}/{seed}" + (f"/{stream}" if stream else ""))
        self.train = split == "train"

    def pool(self, seq):
        return seq[: len(seq) - max(1, len(seq) // 5)] if self.train else seq

    def pick(self, seq):
        return self.rng.choice(self.pool(seq))

    def sample(self, seq, k):
        return self.rng.sample(self.pool(seq), k)


def question_split(question: str, heldout: bool) -> str:
    """The one split a question text belongs to: by hash, 70/10/10/10 (held-out templates: eval splits only)."""
    h = int(hashlib.md5(question.encode("utf-8")).hexdigest()[:8], 16)
    if heldout:
        return EVAL_SPLITS[h % 3]
    return "train" if h % 10 < 7 else EVAL_SPLITS[h % 10 - 7]


def make_record(item: Item, text: str, label: int, model: str, split: str, meta: dict) -> dict:
    """One corpus row: the item's question and references, a candidate text, its label and meta."""
    meta = {
        **meta,
        "family": item.family,
        "template": item.template,
        "heldout_template": item.heldout,
        "formatted": "final answer" in text.lower(),
    }
    return {
        "id": records.make_id(item.task, item.question, model, meta["kind"], text),
        "task": item.task,
        "category": item.category,
        "question": item.question,
        "candidate": text,
        "references": list(item.references),
        "label": label,
        "label_source": LABEL_SOURCE,
        "candidate_model": model,
        "split": split,
        "meta": meta,
    }
