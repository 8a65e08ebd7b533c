"""Routing judges: the rules decide where they can, a model where they cannot, an expensive judge
only where the model is unsure.

- ``HybridJudge(model)``: the regex judge decides every row where it extracts (and, for math,
  parses) an answer; ``model`` scores the others (the paper's cheap compromise).
- ``ByCategoryJudge(default, routes)``: each row to the judge chosen for its ``category`` (e.g. the
  rules for multiple choice and math, a trained judge for open QA and extraction), the ``default`` judge
  for the other categories; a choice made on development data, per category.
- ``CascadeJudge(model, expensive=None)``: stage 1, the rules, decide only the rows they are
  confident about (``rules_accept="match"``: an extracted answer that matches a reference — exact,
  option or Math-Verify matches are high-precision, while a parsed *mismatch* is often only a
  formatting difference; ``"parsed"``: every parsed row, as the hybrid); stage 2, ``model``,
  decides the rest whose score is outside the uncertainty band ``[low, high]``; stage 3,
  ``expensive`` (any judge, e.g. an exported generative judge), decides the rows inside the band.
  Without stage 3 the model decides all its rows; where stage 3 gives no verdict (NaN), the model's
  score stands.

Both return P(correct) from ``score_records`` and per-row ``details`` (the deciding ``stage``, the
``score``, each stage's ``scores``, ``unparsed`` when the final score is NaN), and keep a ``routing``
summary of every row they scored: per stage the rows seen and decided, the fraction decided and the
wall time, plus the compute saved — an *estimate*: the measured total wall time against the last
stage's measured seconds per row × all rows (as if that stage had judged every row).

``Judge.load`` builds them from a spec (``bertjudge.judges.loading.from_spec``)::

    hybrid:<judge>
    cascade:<judge>[,<expensive judge>][?band=LOW,HIGH][&rules=match|parsed]
    by-category:<default judge>?<category>=<judge>[&<category>=<judge>…]
"""

from __future__ import annotations

import math
import time
import warnings
from pathlib import Path

import numpy as np

from bertjudge.core.records import CATEGORIES
from bertjudge.judges.interface import BaseJudge, class_path
from bertjudge.judges.regex import RegexJudge

RULES_ACCEPT = ("match", "parsed")
KINDS = ("hybrid", "cascade", "by-category")
SPEC_HELP = (
    "'hybrid:<judge>' (regex where it parses, <judge> elsewhere), "
    "'cascade:<judge>[,<expensive judge>][?band=LOW,HIGH][&rules=match|parsed]' "
    "(regex matches, then <judge> outside the band [LOW, HIGH] (default 0.2,0.8), then the expensive judge) or "
    "'by-category:<judge>?<category>=<judge>&…' (each category's rows to its judge, <judge> for the rest)"
)


def checked_options(rules_accept: str, band) -> tuple[str, tuple[float, float]]:
    if rules_accept not in RULES_ACCEPT:
        raise ValueError(f"rules must be one of {RULES_ACCEPT}, got {rules_accept!r}")
    low, high = map(float, band)
    if not 0.0 <= low <= high <= 1.0:
        raise ValueError(f"the band needs 0 <= LOW <= HIGH <= 1, got {low:g},{high:g}")
    return rules_accept, (low, high)


class _RoutingJudge(BaseJudge):
    """What every routing judge shares: its judges, named (``stages``), are its parts and move with it."""

    def stages(self) -> dict[str, BaseJudge]:
        raise NotImplementedError

    def parts(self) -> list[BaseJudge]:
        return [part for judge in self.stages().values() for part in judge.parts()]

    def place(self, device=None, dtype=None) -> _RoutingJudge:
        for judge in self.stages().values():
            judge.place(device, dtype)
        return self


class CascadeJudge(_RoutingJudge):
    """Rules → ``model`` → optional ``expensive`` judge, by confidence (see the module docstring).

    Args:
        model: stage 2, any judge with ``score_records`` and ``threshold`` (an encoder judge).
        expensive: stage 3 for the rows whose model score is inside ``band`` (or NaN); None: no stage 3.
        rules: stage 1, a ``RegexJudge`` (default: a new one).
        rules_accept: ``match`` (the rules decide the rows they parse and find matching) or ``parsed``.
        band: the model scores ``low <= s <= high`` sent to stage 3.

    The verdict threshold is the model's (the rules' 0/1 scores fall on either side of any threshold).
    """

    temperature = 1.0  # scores are the stages' own calibrated probabilities
    features = frozenset({"routing"})

    def __init__(
        self,
        model,
        expensive=None,
        rules: RegexJudge | None = None,
        rules_accept: str = "match",
        band: tuple[float, float] = (0.2, 0.8),
    ):
        self.rules_accept, self.band = checked_options(rules_accept, band)
        self.model, self.expensive, self.rules = model, expensive, rules or RegexJudge()
        self.threshold = float(model.threshold)
        if expensive is not None and float(expensive.threshold) != self.threshold:
            warnings.warn(
                f"the expensive judge's threshold {expensive.threshold} differs from the model's "
                f"{self.threshold}; the cascade's verdicts use the model's",
                stacklevel=2,
            )
        self.reset_routing()

    @property
    def name(self) -> str:
        judges = ",".join(j.name for j in (self.model, self.expensive) if j is not None)
        return f"cascade({judges};rules={self.rules_accept};band={self.band[0]:g},{self.band[1]:g})"

    @property
    def last_stage(self) -> str:
        """The stage whose verdict is final: the expensive judge when there is one, else the model."""
        return "model" if self.expensive is None else "expensive"

    def reset_routing(self) -> None:
        """Forget the rows counted in ``routing`` so far."""
        self._counts = {s: {"seen": 0, "decided": 0, "seconds": 0.0} for s in self.stages()}

    def accepts(self, rule_row: dict) -> bool:
        """Whether the rules decide a row, from its ``RegexJudge.details`` row."""
        return not rule_row["unparsed"] and (rule_row["match"] or self.rules_accept == "parsed")

    def _stage(
        self, name: str, judge, records: list[dict], rows: list[dict], idx: list[int], batch_size: int, progress: bool
    ) -> list[int]:
        """Score rows ``idx`` with ``judge``; decide those it is sure of; return the others."""
        start = time.perf_counter()
        scores = judge.score_records([records[i] for i in idx], batch_size=batch_size, progress=progress) if idx else []
        self._counts[name]["seen"] += len(idx)
        self._counts[name]["seconds"] += time.perf_counter() - start
        last, (low, high), unsure = name == self.last_stage, self.band, []
        for i, score in zip(idx, map(float, scores)):
            row = rows[i]
            row["scores"][name] = score
            if name == "expensive" and math.isnan(score):  # no verdict from stage 3: the model's score stands
                row.update(stage="model", score=row["scores"]["model"])
            elif last or not (math.isnan(score) or low <= score <= high):
                row.update(stage=name, score=score)
            else:
                unsure.append(i)
        return unsure

    def details(self, records: list[dict], batch_size: int = 32, progress: bool = False) -> list[dict]:
        """Per row: the deciding ``stage``, its ``score`` and ``verdict``, every stage's ``scores`` (the rules' is None
        where they found no answer) and ``unparsed`` (the final score is NaN)."""
        rows = [{"stage": None, "score": math.nan, "scores": {}} for _ in records]
        start = time.perf_counter()
        rule_rows = self.rules.details(records, progress=progress)
        self._counts["rules"]["seconds"] += time.perf_counter() - start
        self._counts["rules"]["seen"] += len(records)
        for row, rule in zip(rows, rule_rows):
            row["scores"]["rules"] = None if rule["unparsed"] else rule["score"]
            if self.accepts(rule):
                row.update(stage="rules", score=rule["score"])
        todo = [i for i, row in enumerate(rows) if row["stage"] is None]
        todo = self._stage("model", self.model, records, rows, todo, batch_size, progress)
        if self.expensive is not None:
            self._stage("expensive", self.expensive, records, rows, todo, batch_size, progress)
        for row in rows:
            row["unparsed"] = math.isnan(row["score"])
            row["verdict"] = None if row["unparsed"] else bool(row["score"] >= self.threshold)
            self._counts[row["stage"]]["decided"] += 1
        return rows

    def score_records(self, records: list[dict], batch_size: int = 32, progress: bool = False) -> np.ndarray:
        """P(correct) per record, in input order (NaN where no stage could give a verdict)."""
        return np.array([row["score"] for row in self.details(records, batch_size, progress)], dtype=float)

    def stages(self) -> dict[str, BaseJudge]:
        """Its judges by stage, in order: the rules, the model and, when there is one, the expensive judge."""
        stages = {"rules": self.rules, "model": self.model}
        return stages if self.expensive is None else {**stages, "expensive": self.expensive}

    def config(self) -> dict:
        """Its options and each stage's ``config()``."""
        return {
            "class": class_path(self),
            "name": self.name,
            "rules_accept": self.rules_accept,
            "band": list(self.band),
            "threshold": self.threshold,
            "stages": {stage: judge.config() for stage, judge in self.stages().items()},
        }

    def fingerprint(self) -> dict[str, str]:
        """Its class, name and options, and each stage's fingerprint under the stage's name (``rules/…``,
        ``model/…``, ``expensive/…``)."""
        found = {
            "class": class_path(self),
            "name": self.name,
            "rules_accept": self.rules_accept,
            "band": ",".join(f"{x:g}" for x in self.band),
        }
        for stage, judge in self.stages().items():
            found.update({f"{stage}/{key}": str(value) for key, value in judge.fingerprint().items()})
        return found

    def describe(self) -> dict:
        """Name, kind, threshold and ``routing``: the rows each stage decided since the last reset."""
        return {**super().describe(), "routing": self.routing}

    @property
    def routing(self) -> dict:
        """Every row scored since the last ``reset_routing``: per stage ``seen``, ``decided``,
        ``fraction`` (of all rows, decided there; they sum to 1) and ``seconds`` (wall time); the total
        ``seconds``; and the estimated compute saved against running the last stage on every row."""
        n = self._counts["rules"]["seen"]
        stages = {s: {**c, "fraction": c["decided"] / n if n else math.nan} for s, c in self._counts.items()}
        total = sum(c["seconds"] for c in stages.values())
        last = stages[self.last_stage]
        reference = last["seconds"] / last["seen"] * n if last["seen"] else math.nan
        return {
            "n": n,
            "stages": stages,
            "seconds": total,
            "reference_stage": self.last_stage,
            "reference_seconds_estimate": reference,
            "compute_saved_estimate": 1 - total / reference if reference > 0 else math.nan,
            "note": f"compute saved is an estimate: the measured wall time against the {self.last_stage} "
            f"stage's measured seconds per row x all {n} rows",
        }


class HybridJudge(CascadeJudge):
    """Regex where it parses an answer (its 0/1 verdict), ``model`` on the rows it cannot parse.

    ``routing["stages"]["model"]["fraction"]`` is the fraction sent to the model.
    """

    def __init__(self, model, rules: RegexJudge | None = None):
        super().__init__(model, rules=rules, rules_accept="parsed")

    @property
    def name(self) -> str:
        return f"hybrid({self.model.name})"


class ByCategoryJudge(_RoutingJudge):
    """Each row scored by the judge chosen for its ``category``; ``default`` scores the other categories.

    Args:
        default: the judge of every category without a route (a trained judge).
        routes: ``{category: judge}``, e.g. ``{"multiple_choice": RegexJudge()}``.

    The judges must share one verdict threshold (a row's verdict is its score against it). ``details``
    rows are the routed judge's, with ``route`` (the category's judge, or ``default``); ``describe()``
    has the routes and the rows each judge scored.
    """

    features = frozenset({"routing"})

    def __init__(self, default: BaseJudge, routes: dict[str, BaseJudge]):
        unknown = sorted(set(routes) - set(CATEGORIES))
        if unknown:
            raise ValueError(f"unknown categor{'ies' if len(unknown) > 1 else 'y'} {unknown}; expected {CATEGORIES}")
        if not routes:
            raise ValueError("by-category needs at least one route: <category>=<judge>")
        self.default, self.routes = default, dict(routes)
        self.threshold = float(default.threshold)
        for category, judge in self.routes.items():
            if float(judge.threshold) != self.threshold:
                raise ValueError(
                    f"the {category} judge's threshold {judge.threshold:g} differs from the default judge's "
                    f"{self.threshold:g}: their verdicts cannot be read against one threshold"
                )
        self.counts = {category: 0 for category in [*self.routes, "default"]}

    @property
    def name(self) -> str:
        routes = ",".join(f"{category}={judge.name}" for category, judge in self.routes.items())
        return f"by-category({self.default.name};{routes})"

    def details(self, records: list[dict], batch_size: int = 32, progress: bool = False) -> list[dict]:
        """The routed judge's row for each record, in input order, with its ``route``; the verdict is the score
        against this judge's threshold (its judges' own, until ``fit_threshold`` sets another)."""
        groups: dict[str, list[int]] = {}
        for i, rec in enumerate(records):
            groups.setdefault(rec.get("category") if rec.get("category") in self.routes else "default", []).append(i)
        rows: list[dict | None] = [None] * len(records)
        for route, idx in groups.items():
            judge = self.default if route == "default" else self.routes[route]
            done = judge.details([records[i] for i in idx], batch_size=batch_size, progress=progress)
            for i, row in zip(idx, done):
                score = row["score"]
                verdict = row["verdict"] if score is None or math.isnan(score) else bool(score >= self.threshold)
                rows[i] = {**row, "verdict": verdict, "route": route}
            self.counts[route] += len(idx)
        return rows

    def score_records(self, records: list[dict], batch_size: int = 32, progress: bool = False) -> np.ndarray:
        """P(correct) per record from its category's judge (NaN where that judge gave no verdict)."""
        rows = self.details(records, batch_size, progress)
        return np.array([math.nan if row["score"] is None else row["score"] for row in rows], dtype=float)

    def stages(self) -> dict[str, BaseJudge]:
        """Its judges by route: ``default`` and one per category routed elsewhere."""
        return {"default": self.default, **self.routes}

    def config(self) -> dict:
        """Its routes and each judge's ``config()``."""
        return {
            "class": class_path(self),
            "name": self.name,
            "threshold": self.threshold,
            "judges": {route: judge.config() for route, judge in self.stages().items()},
        }

    def fingerprint(self) -> dict[str, str]:
        """Its class and name, and each judge's fingerprint under its route (``default/…``, ``<category>/…``)."""
        found = {"class": class_path(self), "name": self.name}
        for route, judge in self.stages().items():
            found.update({f"{route}/{key}": str(value) for key, value in judge.fingerprint().items()})
        return found

    def describe(self) -> dict:
        routes = {category: judge.name for category, judge in self.routes.items()}
        return {**super().describe(), "routes": routes, "default": self.default.name, "rows_per_route": self.counts}


def split_spec(spec: str) -> tuple[str, list[str], dict[str, str]]:
    """``kind:a,b?key=value&…`` -> (kind, [a, b], {key: value})."""
    kind, _, rest = spec.partition(":")
    body, _, query = rest.partition("?")
    options = dict(item.partition("=")[::2] for item in query.split("&") if item)
    return kind, [s.strip() for s in body.split(",")], options


def is_routed(spec: str) -> bool:
    return spec.partition(":")[0] in KINDS and ":" in spec


def short_spec(spec: str) -> str:
    """A short display name: each judge folder by its last path part (``cascade:judge,gen?band=…``)."""
    if not is_routed(spec):
        return Path(spec).name or spec
    kind, judges, _ = split_spec(spec)
    query = spec.partition("?")[2]
    return f"{kind}:{','.join(Path(j).name or j for j in judges)}" + (f"?{query}" if query else "")


def format_routing(routing: dict) -> str:
    """One line: the fraction and wall time of each stage, and the estimated compute saved."""
    stages = ", ".join(f"{name} {s['fraction']:.1%} ({s['seconds']:.1f} s)" for name, s in routing["stages"].items())
    saved = routing["compute_saved_estimate"]
    saved = "–" if math.isnan(saved) else f"{saved:.0%}"
    return (
        f"routing of {routing['n']} rows: {stages}; compute saved vs the {routing['reference_stage']} stage "
        f"on every row (estimate from measured per-row times): {saved}"
    )
