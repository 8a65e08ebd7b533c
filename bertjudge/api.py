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
        """``regex``, the path of an exported judge folder (with ``judge.json``) or a zoo name.

        ``format`` (optional) is checked against the format the judge was trained with.
        """
        if spec == "regex":
            from bertjudge.judges.regex import RegexJudge

            return RegexJudge()
        folder = Path(spec)
        if not folder.exists():
            from bertjudge import zoo

            if zoo.is_registered(spec):  # a zoo name: pulled and verified once, then from the cache
                folder = zoo.pull(spec)
        config_file = folder / JUDGE_FILE
        if not config_file.is_file():
            raise FileNotFoundError(f"{spec}: not a judge folder (no {JUDGE_FILE}); "
                                    "give 'regex' or the folder that `fit` exported")
        class_path = json.loads(config_file.read_text())["class"]
        module, _, name = class_path.rpartition(".")
        cls = getattr(importlib.import_module(module), name)
        return cls.from_export(folder, format=format) if format is not None else cls.from_export(folder)
