"""The Python API: ``Judge.load(spec)`` then ``judge.score(questions, candidates, references)``."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

from bertjudge.formats import JudgeFormat
from bertjudge.judges.base import JUDGE_FILE


class Judge:
    """Loads any judge; every judge answers ``score(questions, candidates, references)`` and
    ``score_records(records)`` with P(correct), batched and deterministic."""

    @staticmethod
    def load(spec: str, format: JudgeFormat | None = None):
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
        from bertjudge.judges.routing import from_spec, is_routed

        if is_routed(spec):
            return from_spec(spec, format)
        if spec == "regex":
            from bertjudge.judges.regex import RegexJudge

            return RegexJudge()
        if spec == "contains":
            from bertjudge.judges.regex import ContainsJudge

            return ContainsJudge()
        folder = Path(spec)
        if not folder.exists():
            from bertjudge import zoo

            if zoo.is_registered(spec):  # a zoo name: pulled and verified once, then from the cache
                folder = zoo.pull(spec)
        config_file = folder / JUDGE_FILE
        if not config_file.is_file():
            raise FileNotFoundError(f"{spec}: not a judge folder (no {JUDGE_FILE}); "
                                    "give 'regex', the folder that `fit` exported, a zoo name, "
                                    "'hybrid:<judge>' or 'cascade:<judge>[,<expensive judge>]'")
        class_path = json.loads(config_file.read_text())["class"]
        module, _, name = class_path.rpartition(".")
        cls = getattr(importlib.import_module(module), name)
        return cls.from_export(folder, format=format) if format is not None else cls.from_export(folder)
