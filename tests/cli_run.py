"""Running commands in tests as a user does, through ``bertjudge.cli.main.main`` (in this process)."""

from __future__ import annotations

import importlib.util
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


def benchmark_script(name: str):
    """``benchmarks/<name>.py`` loaded as a module, so a test calls its ``main(argv)`` as its command line does."""
    path = Path(__file__).resolve().parents[1] / "benchmarks" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
