"""Answers to an item in many forms: a correct short answer (``correct_answer``), a wrong one of an error
kind (``wrong_answer``), either presented in a model's style (``present``: bare, "Final answer:",
``\\boxed{}``, markdown, explained, step-by-step reasoning reaching it, ``rationale``)."""

from __future__ import annotations

import random
import re
from fractions import Fraction
from typing import NamedTuple

from bertjudge.core.extract import fmt
from bertjudge.data.corpus.base import ANS, Item, cap_first, money, parse_number
from bertjudge.data.corpus.extraction import UNANSWERABLE
from bertjudge.data.corpus.open_math import math_wrong, number_forms


class Correct(NamedTuple):
    """A correct short answer: its text, the form it takes and what a reasoning reaches (``rationale``)."""

    text: str
    form: str
    basis: object


class Wrong(NamedTuple):
    """A wrong short answer: its text and what a reasoning reaching it reaches (``rationale``)."""

    text: str
    basis: object


STYLES = ("bare", "final_line", "boxed", "sentence", "markdown", "explained", "reasoning")
GENERIC_CLAIMS = ["The answer is {t}.", "It is {t}.", "That would be {t}."]
QA_ERRORS = ("near_miss", "other_question")  # error kinds that only open QA has


# ----------------------------------------------------------------------------- claims
def _fill_claim(template: str, t: str, bold: bool = False) -> str:
    """A claim template with the answer in it: "{t}" as is, "{a_t}" with an article, "{the_t}" with 'the'."""
    shown = f"**{t}**" if bold else t
    if "{a_t}" in template:
        article = "" if re.match(r"(?:a|an|the)\s", t, re.I) else "an " if t[0].lower() in "aeiou" else "a "
        template = template.replace("{a_t}", article + shown)
    if "{the_t}" in template:
        template = template.replace("{the_t}", ("" if re.match(r"the\s", t, re.I) else "the ") + shown)
    return cap_first(template.replace("{t}", shown))


def qa_claim(item: Item, t: str, rng: random.Random, bold: bool = False) -> str:
    """One of the item's claims (or a generic one) stating ``t`` as the answer."""
    return _fill_claim(rng.choice(item.claims or GENERIC_CLAIMS), t, bold)


# ----------------------------------------------------------------------------- reasoning
def rationale(item: Item, basis, rng: random.Random) -> tuple[list[str], list[str]]:
    """(lines before the decisive one, the decisive lines) of a reasoning reaching ``basis``:
    a number (math), an option index (multiple choice) or a span (extraction, open QA, other)."""
    if item.category == "open_qa":
        pre = [
            rng.choice(
                [
                    "Let me recall the relevant facts.",
                    "The question asks about {a}.",
                    "Let's think about {a}.",
                    "Step by step:",
                ]
            ).format(a=item.asked)
        ]
        if item.facts and rng.random() < 0.6:
            pre.append(rng.choice(item.facts))
        return pre, [qa_claim(item, str(basis), rng)]
    if item.category == "open_math" and item.steps:
        lines = [s.replace(ANS, fmt(basis) if not item.is_money else money(basis)) for s in item.steps]
        intro = rng.choice(
            ["Let's solve this step by step.", "We work through the problem carefully.", "Step by step:", ""]
        )
        return ([intro] if intro else []) + lines[:-1], lines[-1:]
    if item.category == "multiple_choice" and item.options:
        others = [i for i in range(len(item.options)) if i != basis]
        pre = [
            rng.choice(
                [
                    "Let me look at the options one by one.",
                    "We need to pick the single best option.",
                    "Let's think about each choice.",
                ]
            )
        ]
        for i in rng.sample(others, min(len(others), rng.randint(1, 3))):
            pre.append(
                rng.choice(
                    ["Option {L} ({t}) does not fit.", "{L}) {t} can be ruled out.", "{t} ({L}) is not right here."]
                ).format(L=item.labels[i], t=item.options[i])
            )
        claim = (item.claim or "{t} is the right choice").format(t=item.options[basis])
        return pre, [f"{claim[0].upper()}{claim[1:]}, which is option {item.labels[basis]}."]
    if item.category == "multiple_choice" and item.labels:
        return ["Let me consider each option."], [f"Option {item.labels[basis]} is the best fit."]
    if item.value is not None or item.family == "user":
        shown = fmt(basis) if isinstance(basis, Fraction) else basis
        pre = [
            rng.choice(
                ["Let me read the question carefully.", "Let's think step by step.", "We need to work out the answer."]
            )
        ]
        return pre, [
            rng.choice(["This gives {b}.", "Putting it together, we get {b}.", "That leads to {b}."]).format(b=shown)
        ]
    pre = [
        rng.choice(
            [
                "The question asks about {a}.",
                "We need to find {a} in the text.",
                "Let me find the relevant part of the text.",
            ]
        ).format(a=item.asked)
    ]
    sentence = item.evidence.get(basis, "")
    if sentence:
        return pre, [f'The passage says: "{sentence}"']
    if item.category == "context_extraction" and not item.answerable and basis == UNANSWERABLE:
        return pre, [f"The passage never mentions {item.asked}, so it cannot be answered from the text."]
    return pre, [f"That points to {basis}."]


def answer_line(ans: str, rng: random.Random, formatted: bool) -> str:
    if formatted:
        return rng.choice(
            ["Final answer: {a}", "Final Answer: {a}", "**Final answer:** {a}", "FINAL ANSWER: {a}"]
        ).format(a=ans)
    return rng.choice(
        ["So the answer is {a}.", "Therefore, the answer is {a}.", "The answer is {a}.", "Hence {a}.", "So it is {a}."]
    ).format(a=ans)


def full_stop(text: str) -> str:
    return text if text.endswith((".", "!", "?", '"', ")")) else text + "."


def present(item: Item, ans: str, basis, style: str, rng: random.Random) -> str:
    """The short answer ``ans`` written in a presentation style (see ``STYLES``)."""
    if style == "bare":
        return rng.choice(["{a}", "{a}", "{a}.", " {a}\n"]).format(a=ans).replace("..", ".")
    if ans.endswith(".") and style in ("final_line", "boxed", "sentence"):
        ans = ans[:-1]
    if style == "final_line":
        return answer_line(ans, rng, True)
    if style == "boxed":
        return rng.choice(
            ["\\boxed{{{a}}}", "$\\boxed{{{a}}}$", "The answer is $\\boxed{{{a}}}$.", "\\[\\boxed{{{a}}}\\]"]
        ).format(a=ans)
    if style == "sentence":
        return rng.choice(
            [
                "The answer is {a}.",
                "The correct answer is {a}.",
                "I believe the answer is {a}.",
                "It's {a}.",
                "{a} is the answer.",
                "Answer: {a}",
            ]
        ).format(a=ans)
    if style == "markdown":
        return rng.choice(
            [
                "**{a}**",
                "## Answer\n\n{a}",
                "### Final Answer\n**{a}**",
                "- **Answer:** {a}",
                "> {a}",
                "**Answer**: {a}\n\n---",
            ]
        ).format(a=ans)
    pre, decisive = rationale(item, basis, rng)
    if style == "explained":
        return (
            f"{full_stop(ans)} {' '.join(decisive)}"
            if rng.random() < 0.6
            else f"{ans}\n\n{' '.join(pre[-1:] + decisive)}"
        )
    if style == "reasoning":
        return "\n".join(pre + decisive + ["", answer_line(ans, rng, rng.random() < 0.5)])
    raise KeyError(style)


# ----------------------------------------------------------------------------- right and wrong answers
def correct_answer(item: Item, rng: random.Random, alt: bool = False, short: bool = False) -> Correct:
    """(text, form, basis) of a correct answer; ``alt`` avoids the canonical form, ``short`` avoids
    whole sentences (to embed the answer in a hedge or a negation)."""
    if item.category == "multiple_choice" and item.labels:
        k = item.correct
        lab = item.labels[k]
        forms = [("label", lab), ("label_paren", f"({lab})"), ("option_word", f"Option {lab}")]
        if item.options:
            t = item.options[k]
            forms += [
                ("label_text", rng.choice(["{L}. {t}", "{L}) {t}", "({L}) {t}", "{L}: {t}"]).format(L=lab, t=t)),
                ("text", t),
            ]
        forms = forms[1:] if alt else forms
        form, text = rng.choice(forms)
        return Correct(text, form, k)
    if item.category == "open_math" and item.value is not None:
        forms = item.forms[1:] if alt and len(item.forms) > 1 else item.forms
        form, text = rng.choice(forms)
        return Correct(text, form, item.value)
    if item.category == "open_qa":  # any alias or equivalent; alt: not the first reference
        forms = item.forms or [("reference", r) for r in item.references]
        if alt:
            forms = [(name, text) for name, text in forms if text != item.references[0]] or forms
        form, text = rng.choice(forms)
        return Correct(text, form, item.references[0])
    forms = item.forms or [("reference", r) for r in item.references]
    if short:
        forms = [
            (name, text) for name, text in forms if name not in ("long_span", "paraphrase", "paraphrase_sentence")
        ] or forms[:1]
    if alt:
        forms = [(name, text) for name, text in forms if name != "span"] or forms
    form, text = rng.choice(forms)
    return Correct(text, form, item.references[0])


def wrong_answer(item: Item, error: str, rng: random.Random) -> Wrong | None:
    """(text, basis) of a wrong short answer of kind ``error``; None where it does not apply."""
    if item.category == "open_qa":  # wrong entities of the answer's type, or the item's wrong forms of that kind
        texts = item.spans if error == "other_span" else item.wrong_forms.get(error, [])
        if not texts:
            return None
        text = rng.choice(texts)
        return Wrong(text, text)
    if error in ("other_option", "letter_text_mismatch"):
        if item.category != "multiple_choice" or not item.labels:
            return None
        k = rng.choice([i for i in range(len(item.labels)) if i != item.correct])
        lab = item.labels[k]
        if error == "letter_text_mismatch":
            if not item.options:
                return None
            return Wrong(
                rng.choice(["{L}. {t}", "{L}) {t}", "({L}) {t}"]).format(
                    L=item.labels[item.correct], t=item.options[k]
                ),
                k,
            )
        forms = [lab, f"({lab})", f"Option {lab}"] + (
            [f"{lab}. {item.options[k]}", item.options[k]] if item.options else []
        )
        return Wrong(rng.choice(forms), k)
    if error in ("off_by_one", "sign_error", "intermediate", "decimal_shift", "rounding", "slip"):
        if item.value is None:
            return None
        x = math_wrong(item, error, rng)
        if x is None or x == item.value:
            return None
        _, text = rng.choice(number_forms(item, x, correct=False))
        return Wrong(text, x)
    if error == "wrong_unit":
        if not item.alt_units:
            return None
        unit = rng.choice(item.alt_units)
        if item.value is not None:
            return Wrong(f"{fmt(item.value)} {unit}", item.value)
        number = parse_number(item.references[0])
        return Wrong(f"{fmt(number)} {unit}", item.references[0]) if number is not None else None
    if error == "percent_misuse":
        return Wrong(f"{fmt(item.value)}%", item.value) if item.percent_ok and item.value else None
    if error == "other_span":
        if not item.spans:
            return None
        text = rng.choice(item.spans)
        return Wrong(text, text)
    if error == "false_unanswerable":
        if item.category != "context_extraction" or not item.answerable:
            return None
        return Wrong(
            rng.choice(["unanswerable", "The passage does not say.", "This is not mentioned in the text."]),
            UNANSWERABLE,
        )
    if error in QA_ERRORS:
        return None
    raise KeyError(error)
