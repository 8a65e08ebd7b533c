"""The Python API: ``Judge.load(spec)`` then ``judge.score(questions, candidates, references)``.

One spec grammar for every command and for Python: ``regex``, ``contains``, an exported judge folder,
a zoo name, or a routing judge over such specs (``hybrid:<judge>``,
``cascade:<judge>[,<expensive judge>][?band=LOW,HIGH][&rules=match|parsed]``).
"""

from __future__ import annotations

import importlib
from pathlib import Path

from bertjudge.core.formats import JudgeFormat
from bertjudge.core.judge_file import JudgeFileError, has_judge_file, read_judge_config
from bertjudge.judges.interface import BaseJudge
from bertjudge.judges.regex import ContainsJudge, RegexJudge
from bertjudge.judges.routing import SPEC_HELP, CascadeJudge, HybridJudge, checked_options, is_routed, split_spec
from bertjudge.zoo import registry as zoo


class Judge:
    """Loads any judge; every judge answers ``score(questions, candidates, references)`` and
    ``score_records(records)`` with P(correct), batched and deterministic."""

    @staticmethod
    def load(spec: str, format: JudgeFormat | None = None) -> BaseJudge:
        """``regex``, ``contains`` (a reference contained in the answer), the path of an exported judge folder (with ``judge.json``), a zoo name, or a
        routing judge (``bertjudge.judges.routing``) over such specs:

        - ``hybrid:<judge>``: regex where it extracts an answer, ``<judge>`` on the other rows;
        - ``cascade:<judge>[,<expensive judge>][?band=LOW,HIGH][&rules=match|parsed]``: regex on the
          rows it parses and finds matching (``rules=parsed``: every row it parses), then ``<judge>``
          where its score is outside ``[LOW, HIGH]`` (default ``0.2,0.8``), then the expensive judge
          on the rest (without one, ``<judge>`` decides them), e.g.
          ``cascade:runs/quickstart/judge,runs/llm-judge?band=0.1,0.9``.

        ``format`` (optional) is checked against the format the judge (a routing judge's model) was
        trained with.
        """
        if is_routed(spec):
            return from_spec(spec, format)
        if spec == "regex":
            return RegexJudge()
        if spec == "contains":
            return ContainsJudge()
        folder = Path(spec)
        if not folder.exists() and zoo.is_registered(spec):  # a zoo name: pulled and verified once, then cached
            folder = zoo.pull(spec)
        if not has_judge_file(folder):
            raise FileNotFoundError(f"{spec}: not a judge folder (no judge.json); give 'regex', 'contains', the "
                                    f"folder that `fit` exported, a zoo name, {SPEC_HELP}")
        class_path = read_judge_config(folder)["class"]
        module, _, name = class_path.rpartition(".")
        try:
            cls = getattr(importlib.import_module(module), name)
        except (ImportError, AttributeError, ValueError):
            raise JudgeFileError(f"{folder / 'judge.json'}: unknown judge class {class_path!r}") from None
        if not (isinstance(cls, type) and issubclass(cls, BaseJudge)):
            raise JudgeFileError(f"{folder / 'judge.json'}: {class_path!r} is not a judge class")
        return cls.from_export(folder, format=format)


def from_spec(spec: str, format=None) -> CascadeJudge:
    """A ``HybridJudge`` from ``hybrid:<judge>``, a ``CascadeJudge`` from
    ``cascade:<judge>[,<expensive judge>][?band=LOW,HIGH][&rules=match|parsed]``; each ``<judge>`` is
    any ``Judge.load`` spec (an exported folder, a zoo name). ``format`` is checked against the model's."""
    kind, judges, options = split_spec(spec)
    allowed = {"hybrid": set(), "cascade": {"band", "rules"}}.get(kind)
    counts = {"hybrid": (1,), "cascade": (1, 2)}.get(kind, ())
    if allowed is None or len(judges) not in counts or not all(judges):
        raise ValueError(f"{spec!r}: expected {SPEC_HELP}")
    if set(options) - allowed:
        raise ValueError(f"{spec!r}: unknown option(s) {sorted(set(options) - allowed)}; "
                         f"{kind} accepts {sorted(allowed) or 'none'}")
    try:  # checked before any judge is loaded
        low, high = map(float, options.get("band", "0.2,0.8").split(","))
    except ValueError:
        raise ValueError(f"{spec!r}: band must be two numbers LOW,HIGH, got {options['band']!r}") from None
    try:
        rules_accept, band = checked_options(options.get("rules", "match"), (low, high))
    except ValueError as err:
        raise ValueError(f"{spec!r}: {err}") from None
    model = Judge.load(judges[0], format=format)
    if kind == "hybrid":
        return HybridJudge(model)
    expensive = Judge.load(judges[1]) if len(judges) == 2 else None
    return CascadeJudge(model, expensive, rules_accept=rules_accept, band=band)


