"""``python -m bertjudge lmeval-report``: judge lm-eval ``--log_samples`` output beside lm-eval's own metric.

Every ``samples_<task>_<timestamp>.jsonl`` under the inputs is read as records (``lmeval.read_samples``:
the prompt as question, the raw response as candidate, the target as reference, lm-eval's 0/1 metric
of the chosen filter as label) and judged in one pass. The ``results_<timestamp>.json`` lm-eval wrote
beside it gives the model's name and lm-eval's reported value. Per task, model and run:

- ``n``, ``accuracy``: the share of samples the judge finds correct (an answer it cannot read is not
  correct), with a bootstrap interval by question (``core.stats.accuracy_interval``);
- ``lmeval``: lm-eval's metric (e.g. ``exact_match``) averaged over the same samples, and
  ``lmeval_reported``: the value in its results file;
- ``agreement`` (share of samples where the two verdicts agree) and Cohen's κ;
- ``disagreements``: how many, and each in ``disagreements.jsonl``.

Written: ``report.json``, ``report.md``, ``disagreements.jsonl``.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from pathlib import Path

import numpy as np

from bertjudge.core.records import RecordError
from bertjudge.core.stats import accuracy_interval, cohen_kappa
from bertjudge.judges.interface import BaseJudge
from bertjudge.judges.kinds import is_judge
from bertjudge.judges.loading import Judge
from bertjudge.pipeline.lmeval import SAMPLES, read_samples, sample_files

LEVEL = 0.95


def results_of(samples: Path) -> tuple[Path | None, dict]:
    """The ``results_<timestamp>.json`` lm-eval wrote with a samples file (same folder and timestamp)."""
    path = samples.parent / f"results_{SAMPLES.match(samples.name)['time']}.json"
    if not path.is_file():
        return None, {}
    try:
        results = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise RecordError(f"{path}:{e.lineno}: not an lm-eval results file ({e.msg})") from None
    if not isinstance(results, dict):
        raise RecordError(f"{path}: not an lm-eval results file (a JSON object)")
    return path, results


def read_runs(
    paths: list[str],
    model: str | None = None,
    filter_name: str | None = None,
    metric: str | None = None,
    category: str | None = None,
) -> tuple[list[dict], list[dict]]:
    """The records of every samples file under ``paths`` and one entry per file (task, model, run,
    results file, records, skipped log-likelihood documents, lm-eval's reported values)."""
    records, runs = [], []
    for path in sample_files(paths):
        results_path, results = results_of(path)
        name = model or results.get("model_name")
        recs, skipped = read_samples(path, name, filter_name, metric, category)
        task, run = SAMPLES.match(path.name)["task"], SAMPLES.match(path.name)["time"]
        for rec in recs:
            rec["meta"]["lm_eval"].update(run=run, path=str(path))
        runs.append(
            {
                "file": str(path),
                "results_file": str(results_path) if results_path else None,
                "task": task,
                "model": recs[0]["candidate_model"] if recs else name or path.parent.name,
                "run": run,
                "records": len(recs),
                "skipped": skipped,
                "reported": (results.get("results") or {}).get(task) or {},
            }
        )
        records += recs
    return records, runs


def _number(x) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)


def _group(rows: list[tuple[dict, dict]], reported: dict, n_boot: int, seed: int) -> tuple[dict, list[dict]]:
    """The report entry of one task, model and run, and its disagreements; ``rows``: (record, details)."""
    first = rows[0][0]
    info = first["meta"]["lm_eval"]
    correct = np.array([d["verdict"] is True for _, d in rows], dtype=float)
    questions = [rec["question"] or f"doc:{rec['meta']['lm_eval']['doc_id']}" for rec, _ in rows]
    low, high = accuracy_interval(correct, n_boot=n_boot, seed=seed, level=LEVEL, clusters=questions)
    labelled = [(i, rec["label"]) for i, (rec, _) in enumerate(rows) if rec["label"] is not None]
    metric = first["label_source"].rsplit(":", 1)[1] if first["label_source"] else None
    index, labels = (np.array(x) for x in zip(*labelled)) if labelled else (np.array([], int), np.array([]))
    agree = correct[index] == labels
    entry = {
        "task": first["task"],
        "model": first["candidate_model"],
        "run": info["run"],
        "file": info["path"],
        "n": len(rows),
        "unparsed": sum(bool(d["unparsed"]) for _, d in rows),
        "accuracy": float(correct.mean()),
        "interval": [_number(low), _number(high)],
        "lmeval_metric": metric,
        "filter": info["filter"],
        "labelled": len(labelled),
        "lmeval": float(labels.mean()) if labelled else None,
        "lmeval_reported": _number(reported.get(f"{metric},{info['filter']}")) if metric else None,
        "agreement": float(agree.mean()) if labelled else None,
        "kappa": _number(cohen_kappa(correct[index], labels)) if labelled else None,
        "disagreements": int((~agree).sum()),
        "bertjudge_only": int(((correct[index] == 1) & (labels == 0)).sum()),
        "lmeval_only": int(((correct[index] == 0) & (labels == 1)).sum()),
    }
    disagreements = []
    for i in index[~agree]:
        rec, detail = rows[i]
        lm = rec["meta"]["lm_eval"]
        disagreements.append(
            {
                "task": rec["task"],
                "model": rec["candidate_model"],
                "run": lm["run"],
                "doc_id": lm["doc_id"],
                "question": rec["question"],
                "answer": rec["candidate"],
                "references": rec["references"],
                "filtered_answer": lm["filters"][lm["filter"]]["filtered_resp"],
                "lmeval_metric": metric,
                "lmeval": rec["label"],
                "bertjudge_score": detail["score"],
                "bertjudge_verdict": detail["verdict"],
            }
        )
    return entry, disagreements


def lmeval_report(
    paths: list[str],
    judge: BaseJudge | str,
    model: str | None = None,
    filter_name: str | None = None,
    metric: str | None = None,
    category: str | None = None,
    batch_size: int = 32,
    n_boot: int = 1000,
    seed: int = 0,
    progress: bool = False,
) -> tuple[dict, list[dict]]:
    """Judge every sample under ``paths`` (samples files or folders of lm-eval output) with ``judge``
    (a judge or a ``Judge.load`` spec): the report and the rows where the judge and lm-eval disagree."""
    records, runs = read_runs(paths, model, filter_name, metric, category)
    if not records:
        raise RecordError(
            f"{', '.join(paths)}: no generated answers to judge (only log-likelihood tasks: "
            f"{', '.join(sorted({r['task'] for r in runs}))})"
        )
    judge = judge if is_judge(judge) else Judge.load(judge)
    details = judge.details(records, progress=progress, batch_size=batch_size)
    groups: dict = defaultdict(list)
    for rec, detail in zip(records, details):
        groups[rec["meta"]["lm_eval"]["path"]].append((rec, detail))  # one samples file: one task, model, run
    reported = {r["file"]: r["reported"] for r in runs}
    entries, disagreements = [], []
    for path, rows in groups.items():
        entry, rows_apart = _group(rows, reported[path], n_boot, seed)
        entries.append(entry)
        disagreements += rows_apart
    entries.sort(key=lambda e: (e["task"], e["model"], e["run"]))
    report = {
        "judge": judge.describe(),
        "level": LEVEL,
        "n": len(records),
        "accuracy": float(np.mean([d["verdict"] is True for d in details])),
        "groups": entries,
        "skipped": [{k: r[k] for k in ("task", "model", "run", "file", "skipped")} for r in runs if r["skipped"]],
        "inputs": [r["file"] for r in runs],
    }
    return report, disagreements


def _pct(x) -> str:
    return "–" if x is None else f"{100 * x:.1f}"


def markdown(report: dict) -> str:
    """``report.md``: one row per task, model and run."""
    judge = report["judge"]
    lines = [
        f"# lm-eval samples judged by {judge['name']} ({judge['kind']})",
        "",
        f"{report['n']} samples; bertjudge accuracy: share judged correct, {int(report['level'] * 100)}% "
        "bootstrap interval by question; lm-eval: its metric on the same samples (reported: its results "
        "file); agreement: share of samples where both verdicts agree.",
        "",
        "| task | model | run | n | bertjudge acc | interval | lm-eval metric | lm-eval | reported | agreement "
        "| κ | disagree (bertjudge only / lm-eval only) |",
        "|---|---|---|---:|---:|---|---|---:|---:|---:|---:|---|",
    ]
    for g in report["groups"]:
        low, high = g["interval"]
        kappa = "–" if g["kappa"] is None else f"{g['kappa']:.2f}"
        lines.append(
            f"| {g['task']} | {g['model']} | {g['run']} | {g['n']} | {_pct(g['accuracy'])} "
            f"| {_pct(low)}–{_pct(high)} | {g['lmeval_metric'] or '–'} ({g['filter']}) | {_pct(g['lmeval'])} "
            f"| {_pct(g['lmeval_reported'])} | {_pct(g['agreement'])} | {kappa} "
            f"| {g['disagreements']} ({g['bertjudge_only']} / {g['lmeval_only']}) |"
        )
    for s in report["skipped"]:
        lines.append(
            f"\n{s['task']} ({s['model']}, {s['run']}): {s['skipped']} documents without generated text "
            "(log-likelihood) skipped."
        )
    return "\n".join(lines) + "\n"


def write_report(report: dict, disagreements: list[dict], folder: str | Path) -> dict[str, Path]:
    """Write ``report.json``, ``report.md`` and ``disagreements.jsonl`` into ``folder``."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    paths = {
        "json": folder / "report.json",
        "md": folder / "report.md",
        "disagreements": folder / "disagreements.jsonl",
    }
    paths["json"].write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    paths["md"].write_text(markdown(report), encoding="utf-8")
    paths["disagreements"].write_text(
        "".join(json.dumps(d, ensure_ascii=False) + "\n" for d in disagreements), encoding="utf-8"
    )
    return paths
