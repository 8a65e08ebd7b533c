"""Multiple choice (task ``embedded-mc``): 4-10 options labelled ``A.``, ``A)``, ``(A)``, ``(1)``, ``1)``
or as markdown lists; the reference is the option label."""

from __future__ import annotations

from fractions import Fraction
from typing import NamedTuple

from bertjudge.core.extract import decimal
from bertjudge.data.corpus.base import Ctx, Family, Item, with_article
from bertjudge.data.corpus.lexicon import (
    ANTONYMS,
    CAPITALS,
    COLORS,
    ELEMENTS,
    FIRST_NAMES,
    KINDS_OF,
    MONTHS,
    OBJECTS,
    PLURALS,
    WEEKDAYS,
)


class Draw(NamedTuple):
    """What a family draws for one question: the stem's subject (a pair for two-slot stems), the right
    option, the wrong ones to sample from, the claim that the right one satisfies ("{t}" for it) and
    whether the options are numbers (never numbered labels then)."""

    subject: str | tuple[str, object]
    right: str
    wrong: list[str]
    claim: str
    numeric: bool


# ----------------------------------------------------------------------------- families
def _mc_capital(c):
    (country, city), *others = c.sample(CAPITALS, 10)
    return Draw(country, city, [o.city for o in others], f"{{t}} is the capital of {country}", False)


def _mc_symbol(c):
    (element, sym), *others = c.sample([e for e in ELEMENTS if len(e.symbol) == 2], 10)
    return Draw(element, sym, [o.symbol for o in others], f"{{t}} is the chemical symbol of {element}", False)


def _mc_kind(c):
    kind, other = c.rng.sample(list(KINDS_OF), 2)
    if c.rng.random() < 0.5:  # which one is a <kind>?
        right = c.pick(KINDS_OF[kind])
        wrong = [w for k, ws in KINDS_OF.items() if k != kind for w in c.pool(ws)]
        return Draw(kind, right, c.rng.sample(wrong, 9), f"{{t}} is {with_article(kind)}", False)
    right = c.pick(KINDS_OF[other])  # which one is NOT a <kind>?
    return Draw(
        "not " + kind,
        right,
        c.sample(KINDS_OF[kind], min(9, len(c.pool(KINDS_OF[kind])))),
        f"{{t}} is not {with_article(kind)}",
        False,
    )


def _mc_arith(c):
    a, b = c.rng.randint(6, 29), c.rng.randint(3, 19)
    right = a * b
    wrong = list(dict.fromkeys([right + d for d in (-b, b, -a, a, 10, -10, 1, -1, 2 * a, a + b)]))
    return Draw(f"{a} × {b}", str(right), [str(w) for w in wrong if w != right and w > 0], f"{a} × {b} = {{t}}", True)


def _mc_largest(c):
    values = list(dict.fromkeys(Fraction(c.rng.randint(1, 999), c.rng.choice([10, 100, 1000])) for _ in range(12)))
    right = max(values)
    return Draw(
        "largest",
        decimal(right),
        [decimal(v) for v in values if v != right],
        "{t} is larger than every other option",
        True,
    )


def _mc_sequence(c):
    start, step, k = c.rng.randint(1, 30), c.rng.choice([2, 3, 4, 5, 6, 7, 9, 11, -3, -4]), 4
    seq = [start + step * i for i in range(k)]
    right = start + step * k
    wrong = list(dict.fromkeys([right + d for d in (1, -1, step, -step, 2, -2, 2 * step, step + 1)]))
    return Draw(
        ", ".join(map(str, seq)),
        str(right),
        [str(w) for w in wrong if w != right],
        f"the sequence adds {step} each time, so {{t}} comes next",
        True,
    )


def _mc_weekday(c):
    day, k = c.rng.randrange(7), c.rng.randint(2, 40)
    right = WEEKDAYS[(day + k) % 7]
    return Draw(
        (WEEKDAYS[day], k),
        right,
        [d for d in WEEKDAYS if d != right],
        f"{k} days after {WEEKDAYS[day]} is a {{t}}",
        False,
    )


def _mc_month(c):
    m, k = c.rng.randrange(12), c.rng.randint(2, 30)
    right = MONTHS[(m + k) % 12]
    return Draw(
        (MONTHS[m], k), right, [x for x in MONTHS if x != right], f"{k} months after {MONTHS[m]} comes {{t}}", False
    )


def _mc_antonym(c):
    (w, opp), *others = c.sample(ANTONYMS, 10)
    if c.rng.random() < 0.5:
        w, opp = opp, w
    return Draw(w, opp, [c.rng.choice(o) for o in others], f"'{{t}}' is the opposite of '{w}'", False)


def _mc_reading(c):
    name = c.pick(FIRST_NAMES)
    (o1, _), (o2, _), (o3, _) = c.sample(OBJECTS, 3)
    col = c.sample(COLORS, 3)
    text = f"{name} owns {with_article(col[0])} {o1}, {with_article(col[1])} {o2} and {with_article(col[2])} {o3}."
    return Draw(
        (text, o2), col[1], [x for x in c.pool(COLORS) if x != col[1]], f"the text says the {o2} is {{t}}", False
    )


def _mc_plural(c):
    word, right = c.pick(PLURALS)
    wrong = list(dict.fromkeys([word + "s", word + "es", right + "s", word + "en", word + "i", word + "ies"]))
    return Draw(word, right, [w for w in wrong if w != right], f"'{{t}}' is the plural of '{word}'", False)


MC_FAMILIES = {
    "capital": Family(
        _mc_capital, ["What is the capital of {x}?", "Which city is the capital of {x}?", "{x}'s capital city is:"]
    ),
    "symbol": Family(
        _mc_symbol,
        [
            "What is the chemical symbol for {x}?",
            "Which symbol stands for the element {x}?",
            "In the periodic table, {x} is written as:",
        ],
    ),
    "kind": Family(
        _mc_kind,
        ["Which of the following is {ax}?", "Pick the option that is {ax}.", "Which word in this list is {ax}?"],
    ),
    "arith": Family(_mc_arith, ["What is {x}?", "Compute {x}.", "{x} equals:"]),
    "largest": Family(
        _mc_largest,
        ["Which of the following numbers is the largest?", "Which value is greatest?", "Select the biggest number."],
    ),
    "sequence": Family(
        _mc_sequence,
        [
            "What number comes next in the sequence {x}, ...?",
            "Continue the pattern: {x}, ?",
            "Which number should follow {x}?",
        ],
    ),
    "weekday": Family(
        _mc_weekday,
        [
            "If today is {x0}, what day of the week will it be in {x1} days?",
            "Today is {x0}. Which day is it {x1} days from now?",
            "What weekday falls {x1} days after a {x0}?",
        ],
    ),
    "month": Family(
        _mc_month,
        [
            "Which month comes {x1} months after {x0}?",
            "It is {x0} now. What month will it be in {x1} months?",
            "Counting {x1} months forward from {x0}, which month do you reach?",
        ],
    ),
    "antonym": Family(
        _mc_antonym,
        ["Which word is the opposite of '{x}'?", "Choose the antonym of '{x}'.", 'What is the opposite of "{x}"?'],
    ),
    "reading": Family(
        _mc_reading,
        [
            "{x0} What color is the {x1}?",
            "Read: {x0} Which color is the {x1}?",
            "{x0} Based on this sentence, what color is the {x1}?",
        ],
    ),
    "plural": Family(
        _mc_plural,
        [
            "What is the plural of '{x}'?",
            'Which is the correct plural form of "{x}"?',
            "Choose the plural of the noun '{x}'.",
        ],
    ),
}
OPTION_FORMATS = ["{L}. {t}", "{L}) {t}", "({L}) {t}", "- {L}. {t}", "- **{L}**: {t}", "* ({L}) {t}", "{L}: {t}"]
NUMBER_FORMATS = ["({L}) {t}", "{L}) {t}", "- ({L}) {t}"]
MC_INSTRUCTIONS = [
    "",
    "Answer with the letter of the correct option.",
    "Respond with only the option label.",
    "Choose the best answer.",
    "Think step by step, then write 'Final answer: <label>'.",
    "Select one option.",
    "Explain your choice briefly.",
]


def mc_item(c: Ctx, family: str, idx: int) -> Item:
    """A question of a family in its phrasing ``idx``: the stem, the shuffled options in one layout, an instruction."""
    make, phrasings = MC_FAMILIES[family]
    phr = phrasings[idx]
    subject, right, wrong, claim, numeric = make(c)
    n = c.rng.randint(4, min(10, len(wrong) + 1))
    options = [right] + c.rng.sample(wrong, n - 1)
    c.rng.shuffle(options)
    numbered = not numeric and c.rng.random() < 0.25
    labels = [str(i + 1) for i in range(n)] if numbered else list("ABCDEFGHIJ"[:n])
    fmt_ = c.rng.choice(NUMBER_FORMATS if numbered else OPTION_FORMATS)
    if family == "kind":
        stem = phr.format(
            ax="not " + with_article(subject[4:]) if subject.startswith("not ") else with_article(subject)
        )
    elif isinstance(subject, tuple):
        x0, x1 = subject
        stem = phr.format(x0=x0, x1=x1)
    else:
        stem = phr.format(x=subject)
    if c.rng.random() < 0.2 and not numbered:
        body = " ".join(f"({lab}) {t}" for lab, t in zip(labels, options))
    else:
        body = "\n".join(fmt_.format(L=lab, t=t) for lab, t in zip(labels, options))
    instr = c.rng.choice(MC_INSTRUCTIONS)
    question = f"{stem}\n\n{body}" + (f"\n\n{instr}" if instr else "")
    k = options.index(right)
    refs = [labels[k]] + ([right] if c.rng.random() < 0.2 else [])
    return Item("multiple_choice", question, refs, labels=labels, options=options, correct=k, claim=claim)
