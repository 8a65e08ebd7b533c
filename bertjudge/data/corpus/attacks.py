"""The adversarial attacks: each pairs a wrong candidate kind that fools lexical metrics or naive judges
with a correct counterpart kind, in the categories where it applies. ``adversarial`` is made of these
pairs only (``meta['attack']``); a main split takes them with ``generate(..., attacks=[...])``."""

from __future__ import annotations

from typing import NamedTuple

from bertjudge.data.corpus.base import CATEGORY_ORDER


class Attack(NamedTuple):
    wrong: str  # the wrong candidate's kind (``candidates.KINDS``)
    right: str  # the correct counterpart's kind
    categories: tuple[str, ...]  # where it applies, taken in turn


ATTACKS = {
    "other_option": Attack("other_option", "alt_form", ("multiple_choice",)),
    "letter_text_mismatch": Attack("letter_text_mismatch", "letter_text", ("multiple_choice",)),
    "list_all": Attack("list_all", "full_reasoning", CATEGORY_ORDER),
    "intermediate": Attack("intermediate", "full_reasoning", ("open_math",)),
    "off_by_one": Attack("off_by_one", "alt_form", ("open_math", "open_qa")),
    "sign_error": Attack("sign_error", "alt_form", ("open_math",)),
    "wrong_unit": Attack("wrong_unit", "converted_unit", ("open_math", "open_qa")),
    "other_span": Attack("other_span", "long_span", ("context_extraction",)),
    "negated": Attack("negated", "negated_other", ("context_extraction", "multiple_choice", "open_qa")),
    "hedge": Attack("hedge", "hedge_commit", CATEGORY_ORDER),
    "right_then_wrong": Attack("right_then_wrong", "self_correct", CATEGORY_ORDER),
    "truncated": Attack("truncated", "full_reasoning", CATEGORY_ORDER),
    "refusal": Attack("refusal", "caveat", CATEGORY_ORDER),
    "judge_injection": Attack("judge_injection", "injection_correct", CATEGORY_ORDER),
    "other_entity": Attack("other_entity", "alt_form", ("open_qa",)),
    "near_miss": Attack("near_miss", "restated", ("open_qa",)),
    "mentions_reference": Attack("mentions_reference", "contrast", ("open_qa",)),
    "paragraph": Attack("wrong_paragraph", "paragraph", ("open_qa",)),
}
