"""The labelled rows of ``python -m bertjudge evaluate`` and every judge's scores on them.

``load_labelled`` reads the labelled rows (refusing a file with unlabelled ones); ``run_judges`` scores them
with each judge, one pass each, resumably into ``<output>/scores/<judge>.jsonl`` (``scores_file``) through
``core.resumable.PartialFile``, as ``evaluation.scoring`` scores the files of ``judge``. What it returns is
what ``evaluation.report.build_report`` takes.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from bertjudge.core.calibration import calibrated
from bertjudge.core.records import RecordError, row_hash
from bertjudge.core.resumable import PartialFile, changed_keys, shown_keys
from bertjudge.data.sources import load_source
from bertjudge.evaluation.scoring import judge_fingerprint, precision_change
from bertjudge.judges.interface import BaseJudge


def load_labelled(specs: list[str]) -> list[dict]:
    """Read data files (or source specs, ``FILE?split=val``); refuse, naming the file, any with unlabelled
    records. Each record gets ``data``: the name of the file it came from (a grouping of the report)."""
    records = []
    for spec in specs:
        recs = [{**r, "data": Path(spec).name} for r in load_source(spec)]
        missing = [r for r in recs if r["label"] is None]
        if missing:
            raise RecordError(
                f"{spec}: {len(missing)} of {len(recs)} records have no label (first id "
                f"{missing[0]['id']!r}); evaluate compares judges against labels — "
                "score unlabelled data with `python -m bertjudge judge` instead"
            )
        records += recs
    return records


def run_judges(
    judges: dict[str, BaseJudge],
    records: list[dict],
    batch_size: int = 32,
    progress: bool = False,
    scores_dir: str | Path | None = None,
    restart: bool = False,
    chunk_size: int = 1024,
) -> dict:
    """Score ``records`` with each judge, one pass each. Returns the keyword arguments of
    ``build_report`` besides the records: ``scores``, ``details``, ``thresholds``, ``uncalibrated``
    (the scores of trained judges before temperature and bias) and ``routing`` (routing judges).

    With ``scores_dir``, each judge's per-row details are written to ``scores_dir/<judge>.jsonl``,
    resumably (``core.resumable.PartialFile``, ``chunk_size`` rows at a time; the partial files become the
    scores files once every judge is done): a rerun after an interruption scores only the rows not done, and refuses rows scored by a judge that changed since
    or from a labelled row that changed (``restart`` starts over). A routing judge's routing counts then
    cover the rows scored in this run (the report says how many were resumed)."""
    out = {"scores": {}, "details": {}, "thresholds": {}, "uncalibrated": {}, "routing": {}}
    for key, judge in judges.items():
        if scores_dir is None:
            rows, resumed = judge.details(records, progress=progress, batch_size=batch_size), 0
        else:
            rows, resumed = _resumable_details(
                key, judge, records, batch_size, progress, scores_dir, restart, chunk_size
            )
        out["details"][key] = rows
        out["scores"][key] = np.array([np.nan if row["score"] is None else row["score"] for row in rows], dtype=float)
        if rows and all("logit" in row for row in rows):  # a trained judge (not one routed in part to rules)
            out["uncalibrated"][key] = calibrated(np.array([row["logit"] for row in rows]))
        if judge.routing is not None:
            out["routing"][key] = {**judge.routing, "resumed_rows_not_counted": resumed}
        out["thresholds"][key] = float(judge.threshold)
    if scores_dir is not None:  # every judge done: each partial file becomes its scores file
        for key, judge in judges.items():
            with PartialFile(scores_file(scores_dir, key), "evaluate", _settings(judge)) as partial:
                partial.commit()
    return out


def _settings(judge) -> dict:
    return {"judge": judge.name, "fingerprint": judge_fingerprint(judge)}


def scores_file(scores_dir: str | Path, key: str) -> Path:
    """Where ``evaluate`` writes a judge's per-row details: ``<dir>/<judge key, file-safe>.jsonl``."""
    return Path(scores_dir) / (re.sub(r"[^\w.-]+", "_", key).strip("_") + ".jsonl")


def _resumable_details(
    key: str, judge, records: list[dict], batch_size: int, progress: bool, scores_dir, restart: bool, chunk_size: int
) -> tuple[list[dict], int]:
    """A judge's details of ``records`` through its partial file; and how many rows were resumed."""
    settings = _settings(judge)
    hint = "rerun with --restart to score every row again"
    rows: list[dict] = []
    with PartialFile(scores_file(scores_dir, key), "evaluate", settings, restart, hint) as partial:
        if partial.stored_settings not in (None, settings):
            stored = partial.stored_settings.get("fingerprint") or {}
            changed = changed_keys(stored, settings["fingerprint"])
            raise partial.refuse(
                str(partial.path),
                f"the judge {key!r} changed since these rows were scored ({shown_keys(changed)} differ)"
                + precision_change(stored, settings["fingerprint"], changed),
            )
        for where, entry in partial.entries():
            rec = records[len(rows)] if len(rows) < len(records) else None
            if rec is None or entry["row"]["id"] != rec["id"] or entry["row_hash"] != row_hash(rec):
                raise partial.refuse(where, f"row {entry['row']['id']!r} is not the labelled row at its place any more")
            rows.append({k: v for k, v in entry["row"].items() if k != "id"})
        resumed = len(rows)
        bar = None
        if progress:
            from tqdm.auto import tqdm

            bar = tqdm(total=len(records), initial=resumed, desc=f"scoring with {key}", unit="row")
        try:
            for start in range(resumed, len(records), chunk_size):
                chunk = records[start : start + chunk_size]
                done = judge.details(chunk, batch_size=batch_size)
                partial.append((row_hash(rec), {"id": rec["id"], **row}) for rec, row in zip(chunk, done))
                rows += done
                if bar is not None:
                    bar.update(len(chunk))
        finally:
            if bar is not None:
                bar.close()
    return rows, resumed  # committed once every judge is done: a rerun after any failure reads it back
