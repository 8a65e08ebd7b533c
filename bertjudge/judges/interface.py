"""The judge interface: what every judge (trained, rule-based, prompted or routed) answers.

- ``score(questions, candidates, references)`` and ``score_records(records)``: P(correct), in input order;
- ``details(records)``: one dict per record with at least ``score`` and ``verdict`` (and what the judge
  can say about how it decided: the extracted answer, the generated text, the logit, the stage);
- ``describe()``: name, kind and threshold (and a routing judge's counts of rows per stage);
- ``from_export(folder)`` for the judges that are saved as a folder with ``judge.json``.
"""

from __future__ import annotations

import math
import os
from abc import ABC, abstractmethod

import numpy as np

from bertjudge.core.records import normalize


def verdict_fields(score: float, threshold: float) -> dict:
    """``score`` and ``verdict``; a NaN score (a verdict the judge could not give) is null and ``unparsed``."""
    if math.isnan(score):
        return {"score": None, "verdict": None, "unparsed": True}
    return {"score": float(score), "verdict": bool(score >= threshold)}


class BaseJudge(ABC):
    """Base of every judge. Subclasses implement ``score_records`` and ``name``; the rest has defaults."""

    threshold: float = 0.5

    @property
    @abstractmethod
    def name(self) -> str:
        """The judge's name in score files and reports."""

    @abstractmethod
    def score_records(self, records: list[dict], batch_size: int = 32, progress: bool = False) -> np.ndarray:
        """P(correct) per record (NaN where the judge could not give a verdict), in input order."""

    def score(self, questions, candidates, references, batch_size: int = 32, categories=None) -> np.ndarray:
        """P(correct) for parallel lists; a reference may be a string or a list of acceptable answers.
        ``categories`` (one per row, or one for all: ``multiple_choice``, ``open_math``…) reads each row as
        ``judge`` and ``evaluate`` read a record of that category; without it each row's category is inferred from
        its question and references (``core.categories.infer_category``), as every entry point does for a row without
        one."""
        if not len(questions) == len(candidates) == len(references):
            raise ValueError("questions, candidates and references must have the same length")
        if categories is None or isinstance(categories, str):
            categories = [categories] * len(questions)
        if len(categories) != len(questions):
            raise ValueError(f"{len(categories)} categories for {len(questions)} rows")
        records = [
            normalize({"question": q, "candidate": c, "references": r, "category": k}, f"<item {i}>")
            for i, (q, c, r, k) in enumerate(zip(questions, candidates, references, categories))
        ]
        return self.score_records(records, batch_size)

    def details(self, records: list[dict], progress: bool = False, batch_size: int = 32) -> list[dict]:
        """Per record: ``score`` (None where unparsed), ``verdict`` and ``unparsed``."""
        scores = self.score_records(records, batch_size=batch_size, progress=progress)
        return [{"unparsed": False, **verdict_fields(float(s), self.threshold)} for s in scores]

    def parts(self) -> list[BaseJudge]:
        """The judges that score: itself, or a routing judge's stages."""
        return [self]

    def describe(self) -> dict:
        """Name, kind (class) and threshold: what a report says about the judge."""
        return {"name": self.name, "kind": type(self).__name__, "threshold": float(self.threshold)}

    @classmethod
    def from_export(cls, folder: str | os.PathLike, format=None) -> BaseJudge:
        """Load the judge saved in ``folder`` (its ``judge.json`` names the class)."""
        raise NotImplementedError(f"{cls.__name__} is not saved as a folder")
