"""The question templates of every category (a family in one phrasing) and the drawing of a fresh item
of a category for a split: held-out templates and families only outside ``train``, and every question
in the one split its hash assigns it to."""

from __future__ import annotations

from typing import NamedTuple

from bertjudge.data.corpus.base import CATEGORY_ORDER, TASKS, Ctx, Item, question_split
from bertjudge.data.corpus.extraction import FACTS, extraction_item
from bertjudge.data.corpus.multiple_choice import MC_FAMILIES, mc_item
from bertjudge.data.corpus.open_math import MATH_FAMILIES, math_item
from bertjudge.data.corpus.open_qa import QA_FAMILIES, qa_item

HELDOUT_FAMILIES = ("math.interest", "math.rectangle", "mc.plural", "extract.prize", "qa.country")


class Template(NamedTuple):
    """One phrasing of a question family."""

    category: str
    family: str  # "math.shopping", "mc.capital", "extract.born", "qa.who" ...
    key: str  # the family's key in its category's registry (MATH_FAMILIES, MC_FAMILIES, FACTS, QA_FAMILIES)
    slot: str  # what is asked, for extraction (a slot of the fact) and open QA; "" for the others
    index: int  # the phrasing's index
    heldout: bool  # the family is held out, or this is its last phrasing: outside train only

    @property
    def id(self) -> str:
        """'math.shopping/0', 'extract.born.year/2' ...: ``meta['template']`` of its rows."""
        return f"{self.family}.{self.slot}/{self.index}" if self.slot else f"{self.family}/{self.index}"


def _templates() -> list[Template]:
    """Every (category, family, key, slot, phrasing index, held out) combination, in registry order."""
    out = []
    for fam, family in MATH_FAMILIES.items():
        n = len(family.phrasings)
        out += [
            Template("open_math", f"math.{fam}", fam, "", i, f"math.{fam}" in HELDOUT_FAMILIES or i == n - 1)
            for i in range(n)
        ]
    for fam, family in MC_FAMILIES.items():
        n = len(family.phrasings)
        out += [
            Template("multiple_choice", f"mc.{fam}", fam, "", i, f"mc.{fam}" in HELDOUT_FAMILIES or i == n - 1)
            for i in range(n)
        ]
    for fact, spec in FACTS.items():
        for slot, phrasings in spec["ask"].items():
            n = len(phrasings)
            out += [
                Template(
                    "context_extraction",
                    f"extract.{fact}",
                    fact,
                    slot,
                    i,
                    f"extract.{fact}" in HELDOUT_FAMILIES or i == n - 1,
                )
                for i in range(n)
            ]
    for fam, family in QA_FAMILIES.items():
        for slot, phrasings in family.phrasings.items():
            n = len(phrasings)
            out += [
                Template("open_qa", f"qa.{fam}", fam, slot, i, f"qa.{fam}" in HELDOUT_FAMILIES or i == n - 1)
                for i in range(n)
            ]
    return out


TEMPLATES = _templates()
# category -> (templates of every split, held-out templates)
_BY_CATEGORY = {
    cat: (
        [t for t in TEMPLATES if t.category == cat and not t.heldout],
        [t for t in TEMPLATES if t.category == cat and t.heldout],
    )
    for cat in CATEGORY_ORDER
}


def new_item(c: Ctx, category: str, split: str, seen: set) -> Item:
    """A fresh item of the category for the split: half of the eval splits' items from held-out templates,
    each question text (open QA: its ``split_key``) in the split its hash assigns and not in ``seen``."""
    shared, held = _BY_CATEGORY[category]
    for _ in range(1000):
        t = c.rng.choice(held if split != "train" and c.rng.random() < 0.5 else shared)
        if category == "open_math":
            item = math_item(c, t.key, t.index)
        elif category == "multiple_choice":
            item = mc_item(c, t.key, t.index)
        elif category == "open_qa":
            item = qa_item(c, t.key, t.slot, t.index)
        else:
            item = extraction_item(c, t.key, t.slot, t.index, c.rng.random() < 0.8)
        where = question_split(item.split_key, False) if item.split_key else question_split(item.question, t.heldout)
        if item.question in seen or where != split:
            continue
        seen.add(item.question)
        item.task, item.family, item.template, item.heldout = TASKS[category], t.family, t.id, t.heldout
        return item
    raise RuntimeError(f"could not draw a fresh {category} question for split {split!r}")
