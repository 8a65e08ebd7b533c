"""Running commands in tests as a user does, through ``bertjudge.cli.main.main`` (in this process)."""

from __future__ import annotations

import json
from pathlib import Path

from bertjudge.cli.main import main


def evaluate(data, judges, out, *extra: str) -> dict:
    """``python -m bertjudge evaluate --data DATA… --judge JUDGES… --output OUT EXTRA…``, which must
    succeed; the ``report.json`` it wrote."""
    data = [data] if isinstance(data, (str, Path)) else data
    args = ["evaluate", "--data", *map(str, data), "--judge", *map(str, judges), "--output", str(out), *extra]
    assert main(args) == 0
    return json.loads((Path(out) / "report.json").read_text())
