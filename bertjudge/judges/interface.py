"""The judge interface: the whole contract every judge (trained, rule-based, prompted, routed or remote) answers.
Callers use it and never ask a judge's type; a part only some kinds have is declared in ``features``, never probed.

Scoring (one argument order: the records, then ``batch_size``, then ``progress``):

- ``score(questions, candidates, references)`` and ``score_records(records, batch_size, progress)``: P(correct)
  in input order, NaN where the judge could not give a verdict; ``ascore_records`` the same for an event loop;
- ``details(records, batch_size, progress)``: one dict per record with at least ``score``, ``verdict`` and
  ``unparsed`` (and what the judge can say about how it decided: the extracted answer, the generated text, the
  logit, the stage);
- ``error_types(records, batch_size, verdicts)``: the kind of error per record, or None (a judge without an
  error-type head: the default).

What it is:

- ``name``; ``describe()`` (name, kind, threshold, and what a report says about it); ``config()`` (its settings:
  for a kind that is saved, what its ``judge.json`` holds); ``fingerprint()`` (what its scores depend on, as
  ``{part: hash}``: a resumed run refuses rows scored by another); ``provenance`` (where it came from, or None);
- ``threshold`` (verdict: score >= threshold), ``temperature`` (None: no temperature) and
  ``fit_threshold(records, batch_size, scores)`` -> (the threshold fitted, accuracy on the rows it used);
- ``parts()``: the judges that score (itself, or a routing judge's stages), ``stages()`` (a routing judge's
  judges by the name its ``details`` rows give them, else none) and ``routing`` (a routing judge's rows per stage,
  else None); ``place(device, dtype)`` moves what it holds to a device.

Optional parts, declared in ``features`` (a kind without one raises ``UnsupportedFeature``, a
``NotImplementedError``, when asked for it): see ``FEATURES``.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import os
from abc import ABC, abstractmethod
from pathlib import Path

import numpy as np

from bertjudge.core.errors import BertJudgeError
from bertjudge.core.records import normalize
from bertjudge.core.stats import best_threshold

# the optional parts of the contract; a kind lists those it has in ``BaseJudge.features``
FEATURES = {
    "export": "export(folder, metrics) writes a judge folder that from_export(folder) and Judge.load load back",
    "calibration": "a temperature and bias on raw logits (logits_records) that `calibrate` refits",
    "precision": "set_precision(precision, check_records): the inference engine's modes (fp32, bf16, int8, onnx, "
    "int8-static, and auto, the default of encoder judges)",
    "weights": "trained weights (state_dict) of one architecture, which `soup` averages",
    "routing": "rows are routed to the judges parts() names (describe() says how many went where)",
}


class UnsupportedFeature(BertJudgeError, NotImplementedError):
    """A judge was asked for an optional part of the contract its kind does not declare in ``features``."""


def verdict_fields(score: float, threshold: float) -> dict:
    """``score`` and ``verdict``; a NaN score (a verdict the judge could not give) is null and ``unparsed``."""
    if math.isnan(score):
        return {"score": None, "verdict": None, "unparsed": True}
    return {"score": float(score), "verdict": bool(score >= threshold)}


def class_path(obj) -> str:
    """``module.QualifiedName`` of an object's class: what ``judge.json`` names a judge kind by."""
    return f"{type(obj).__module__}.{type(obj).__qualname__}"


def config_digest(config: dict) -> str:
    """The sha256 of a judge's ``config()`` (canonical JSON): the ``config`` part of its fingerprint."""
    blob = json.dumps(config, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class BaseJudge(ABC):
    """Base of every judge. Subclasses implement ``score_records`` and ``name``; the rest has defaults."""

    threshold: float = 0.5
    temperature: float | None = None
    provenance: dict | None = None
    features: frozenset[str] = frozenset()  # the optional parts it has, from FEATURES

    @property
    @abstractmethod
    def name(self) -> str:
        """The judge's name in score files and reports."""

    # --- scoring ----------------------------------------------------------------------------------
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

    async def ascore_records(self, records: list[dict], batch_size: int = 32) -> np.ndarray:
        """``score_records`` for an event loop: by default in a worker thread, so the loop goes on meanwhile."""
        return await asyncio.to_thread(self.score_records, records, batch_size=batch_size)

    def details(self, records: list[dict], batch_size: int = 32, progress: bool = False) -> list[dict]:
        """Per record: ``score`` (None where unparsed), ``verdict`` and ``unparsed``."""
        scores = self.score_records(records, batch_size=batch_size, progress=progress)
        return [{"unparsed": False, **verdict_fields(float(s), self.threshold)} for s in scores]

    def error_types(self, records: list[dict], batch_size: int = 32, verdicts=None) -> list[dict] | None:
        """Per record ``{"error_type": name, "error_type_prob": p}`` agreeing with ``verdicts`` (default: the
        judge's own), from a judge with an error-type head; None: this judge has none (the default)."""
        return None

    # --- what it is -------------------------------------------------------------------------------
    def describe(self) -> dict:
        """Name, kind (class) and threshold: what a report says about the judge."""
        return {"name": self.name, "kind": type(self).__name__, "threshold": float(self.threshold)}

    def config(self) -> dict:
        """The judge's settings (for a kind that exports, what its ``judge.json`` holds); by default its threshold
        and temperature."""
        return {"threshold": float(self.threshold), "temperature": self.temperature}

    def fingerprint(self) -> dict[str, str]:
        """What its scores depend on, as ``{part: hash}`` (a resumed ``judge`` or ``evaluate`` run compares it): by
        default its class, name and the sha256 of its ``config()``."""
        return {"class": class_path(self), "name": self.name, "config": config_digest(self.config())}

    def fit_threshold(
        self, records: list[dict], batch_size: int = 32, scores: np.ndarray | None = None
    ) -> tuple[float, float]:
        """Set the threshold that maximizes accuracy on the labelled ``records`` (validation rows) and return (the
        threshold fitted, the accuracy on the rows used). By default the verdict ``threshold`` on P(correct), rows
        without a verdict (NaN) left out; ``scores``: this judge's ``score_records(records)`` when already computed,
        so they are not scored twice. A kind whose rule has a threshold of its own fits that one instead (the regex
        judge its ROUGE-L similarity, BLEURT its raw score) and says so."""
        unlabelled = [r.get("id", i) for i, r in enumerate(records) if r.get("label") is None]
        if unlabelled:
            raise ValueError(
                f"fit_threshold needs labelled records; {len(unlabelled)} of {len(records)} have no "
                f"label (first {unlabelled[0]!r})"
            )
        scores = self.score_records(records, batch_size) if scores is None else np.asarray(scores, dtype=float)
        if scores.shape != (len(records),):
            raise ValueError(f"fit_threshold: {scores.shape} scores for {len(records)} records")
        labels = np.array([r["label"] for r in records], dtype=float)
        read = ~np.isnan(scores)
        if not read.any():
            raise ValueError(f"fit_threshold: none of the {len(records)} rows got a verdict; no threshold to fit")
        self.threshold, accuracy = best_threshold(scores[read], labels[read])
        return self.threshold, accuracy

    # --- routing and placing ----------------------------------------------------------------------
    def parts(self) -> list[BaseJudge]:
        """The judges that score: itself, or a routing judge's stages."""
        return [self]

    def stages(self) -> dict[str, BaseJudge]:
        """A routing judge's judges, by the name its ``details`` rows give them (a cascade's stage in ``scores``, a
        by-category judge's ``route``); a judge that does not route: none."""
        return {}

    @property
    def routing(self) -> dict | None:
        """A routing judge's rows per stage since it was made (``routing.CascadeJudge.routing``); None: not routed."""
        return None

    def place(self, device=None, dtype=None) -> BaseJudge:
        """Move what the judge computes with to ``device`` and cast its weights to ``dtype`` (a trained judge; a
        routing judge places its parts); a judge without weights has nothing to move. Returns the judge."""
        return self

    # --- optional parts (FEATURES) ----------------------------------------------------------------
    def _unsupported(self, feature: str) -> UnsupportedFeature:
        return UnsupportedFeature(
            f"{self.name}: a {type(self).__name__} has no {feature!r} ({FEATURES[feature]}); "
            f"it has {', '.join(sorted(self.features)) or 'none of the optional parts'}"
        )

    def export(self, folder: str | os.PathLike, metrics: dict | None = None) -> Path:
        """``features`` has ``export``: write the judge as a folder (``judge.json``, and its weights when it has some;
        ``metrics`` recorded in judge.json), which ``from_export`` and ``Judge.load`` load back."""
        raise self._unsupported("export")

    @classmethod
    def from_export(cls, folder: str | os.PathLike, format=None) -> BaseJudge:
        """Load the judge saved in ``folder`` (its ``judge.json`` names the class)."""
        raise UnsupportedFeature(f"{cls.__name__} is not saved as a folder")

    def logits_records(self, records: list[dict], batch_size: int = 32, progress: bool = False) -> np.ndarray:
        """``features`` has ``calibration``: the raw logits per record, before temperature and bias."""
        raise self._unsupported("calibration")

    def set_precision(self, precision: str, check_records: list[dict] | None = None) -> list:
        """``features`` has ``precision``: score in ``precision`` from now on (``auto``: checked on ``check_records``)."""
        raise self._unsupported("precision")
