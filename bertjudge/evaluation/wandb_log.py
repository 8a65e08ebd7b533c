"""Log an evaluation report to a Weights & Biases run (``python -m bertjudge evaluate --wandb PROJECT``).

Offline by default: unless ``WANDB_MODE`` says otherwise (``online``), the run is written under
``<directory>/wandb/offline-run-*`` and nothing leaves the machine; ``wandb sync <that folder>`` uploads
it later. The run holds the overall table (one row per judge), the per-category table (one row per judge
and category) and one table per other grouping of the report (task, data file, candidate model), each
judge's overall figures in its summary (``<judge>/accuracy``…), the report's plots as images, and
``report.json`` and ``report.md`` as run files.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

OVERALL_COLUMNS = ["judge", "n", "threshold", "accuracy", "ci95_low", "ci95_high", "kappa", "unparsed_rate", "ece"]
GROUP_COLUMNS = ["judge", "group", "n", "accuracy", "ci95_low", "ci95_high", "kappa"]


def _number(value):
    """A JSON-ready cell: None for a missing or NaN value."""
    if value is None:
        return None
    value = float(value)
    return None if math.isnan(value) else value


def overall_rows(report: dict) -> list[list]:
    """One row per judge, in ``OVERALL_COLUMNS`` order."""
    rows = []
    for name, result in report["judges"].items():
        overall = result["overall"]
        rows.append(
            [
                name,
                overall["n"],
                _number(result["threshold"]),
                _number(overall["accuracy"]),
                _number(overall["ci95"][0]),
                _number(overall["ci95"][1]),
                _number(overall["kappa"]),
                _number(overall.get("unparsed_rate")),
                _number(result.get("calibration", {}).get("ece")),
            ]
        )
    return rows


def grouping_rows(report: dict, grouping: str) -> list[list]:
    """One row per judge and group of ``grouping`` (``category``, ``task``…), in ``GROUP_COLUMNS`` order."""
    rows = []
    for name, result in report["judges"].items():
        for group, stats in result.get(f"by_{grouping}", {}).items():
            rows.append(
                [
                    name,
                    group,
                    stats["n"],
                    _number(stats["accuracy"]),
                    _number(stats["ci95"][0]),
                    _number(stats["ci95"][1]),
                    _number(stats["kappa"]),
                ]
            )
    return rows


def log_report(
    report: dict,
    paths: dict[str, Path],
    project: str,
    directory: str | os.PathLike,
    name: str | None = None,
    config: dict | None = None,
    mode: str | None = None,
) -> Path:
    """Log ``report`` (from ``build_report``) and the files ``write_report`` wrote (``paths``: the PNG plots,
    ``report.json``, ``report.md``) to a new run of ``project``; returns the run's local folder.

    ``mode``: ``offline`` (default, unless ``WANDB_MODE`` names another), ``online`` or ``disabled``;
    ``directory``: where the ``wandb`` folder is written (the report's folder, for ``evaluate``).
    """
    import wandb

    mode = mode or os.environ.get("WANDB_MODE") or "offline"
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    run = wandb.init(
        project=project,
        name=name,
        dir=str(directory),
        mode=mode,
        job_type="evaluate",
        config=config or {},
        settings=wandb.Settings(console="off", silent=True),
    )
    try:
        folder = Path(run.dir).parent
        groupings = [key[3:] for key in next(iter(report["judges"].values()), {}) if key.startswith("by_")]
        tables = {"overall": wandb.Table(columns=OVERALL_COLUMNS, data=overall_rows(report))}
        for grouping in sorted(groupings, key=lambda g: g != "category"):
            tables[f"by_{grouping}"] = wandb.Table(columns=GROUP_COLUMNS, data=grouping_rows(report, grouping))
        images = {
            f"plots/{title.replace(' ', '_')}": wandb.Image(str(path))
            for title, path in paths.items()
            if Path(path).suffix == ".png"
        }
        run.log({**tables, **images})
        for row in overall_rows(report):
            for column, value in zip(OVERALL_COLUMNS[1:], row[1:]):
                if value is not None:
                    run.summary[f"{row[0]}/{column}"] = value
        run.summary["n"] = report["n"]
        for key in ("report.json", "report.md"):
            if key in paths:
                run.save(
                    str(Path(paths[key]).resolve()), base_path=str(Path(paths[key]).resolve().parent), policy="now"
                )
    finally:
        run.finish()
    return folder
