"""Log an evaluation report to a Weights & Biases run (``python -m bertjudge evaluate --wandb PROJECT``).

Offline by default: unless ``WANDB_MODE`` says otherwise (``online``), the run is written under
``<directory>/wandb/offline-run-*`` and nothing leaves the machine; ``wandb sync <that folder>`` uploads
it later. The run holds the overall table (one row per judge), the per-category table (one row per judge
and category) and one table per other grouping of the report (task, data file, candidate model), each
judge's overall figures in its summary (``<judge>/accuracy``…), the report's plots as images, and
``report.json`` and ``report.md`` as run files. Given the labelled rows and the judges' per-row details, it also
holds, per judge, the table of the rows it got wrong (``errors/<judge>``: the row, its label, the judge's score,
verdict and details; the first ``wandb.Table.MAX_ROWS`` of them, the count in the summary's ``<judge>/wrong_rows``).
"""

from __future__ import annotations

import json
import math
import os
import re
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


ERROR_COLUMNS = [
    "judge",
    "id",
    "data",
    "task",
    "category",
    "candidate_model",
    "question",
    "candidate",
    "references",
    "label",
    "score",
    "threshold",
    "verdict",
    "error",
    "details",
]
NOT_DETAILS = ("score", "verdict")  # a details row's keys that have their own columns


def error_rows(report: dict, records: list[dict], details: dict[str, list[dict]]) -> dict[str, list[list]]:
    """Per judge, the rows it got wrong, in ``ERROR_COLUMNS`` order: its verdict (score at or above its
    threshold; an unparsed row's score is None, a verdict of incorrect) differs from the label, as the report
    counts them. ``error``: ``false positive`` (judged correct, labelled incorrect) or ``false negative``;
    ``references``: a JSON list; ``details``: the judge's other per-row fields (extracted answer…) as JSON."""
    tables = {}
    for name, result in report["judges"].items():
        if details.get(name) is None:
            continue
        threshold, wrong = float(result["threshold"]), []
        for rec, row in zip(records, details[name], strict=True):
            score = None if row.get("score") is None else float(row["score"])
            verdict = score is not None and not math.isnan(score) and score >= threshold
            if verdict == bool(rec["label"]):
                continue
            extra = {key: value for key, value in row.items() if key not in NOT_DETAILS}
            wrong.append(
                [
                    name,
                    rec.get("id"),
                    rec.get("data"),
                    rec.get("task"),
                    rec.get("category"),
                    rec.get("candidate_model"),
                    rec.get("question"),
                    rec.get("candidate"),
                    json.dumps(rec.get("references") or [], ensure_ascii=False),
                    bool(rec["label"]),
                    _number(score),
                    threshold,
                    verdict,
                    "false positive" if verdict else "false negative",
                    json.dumps(extra, ensure_ascii=False, sort_keys=True, default=str),
                ]
            )
        tables[name] = wrong
    return tables


def errors_key(judge: str) -> str:
    """The run's key of a judge's table of wrong rows: ``errors/<judge, in word characters, '.' and '-'>``."""
    return "errors/" + (re.sub(r"[^\w.-]+", "_", judge).strip("_") or "judge")


def log_report(
    report: dict,
    paths: dict[str, Path],
    project: str,
    directory: str | os.PathLike,
    name: str | None = None,
    config: dict | None = None,
    mode: str | None = None,
    records: list[dict] | None = None,
    details: dict[str, list[dict]] | None = None,
) -> Path:
    """Log ``report`` (from ``build_report``) and the files ``write_report`` wrote (``paths``: the PNG plots,
    ``report.json``, ``report.md``) to a new run of ``project``; returns the run's local folder. With ``records``
    (the labelled rows) and ``details`` (each judge's per-row details, as ``build_report`` took them), each judge's
    wrong rows too (``error_rows``).

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
        wrong = error_rows(report, records, details) if records is not None and details is not None else {}
        for judge, rows in wrong.items():
            tables[errors_key(judge)] = wandb.Table(columns=ERROR_COLUMNS, data=rows[: wandb.Table.MAX_ROWS])
            run.summary[f"{judge}/wrong_rows"] = len(rows)
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
