"""``python -m bertjudge lmeval-report``: judge lm-eval ``--log_samples`` output beside lm-eval's own metric.

Every ``samples_<task>_<timestamp>.jsonl`` under the inputs is read as records (``lmeval.read_samples``:
one per response, every repeat of a document included; the document's question, not the few-shot
prompt; the target as reference) and judged in one pass. The ``results_<timestamp>.json`` lm-eval
wrote beside it gives the model's name, the task's ``doc_to_text`` (the question) and lm-eval's
reported values. Per task, model and run:

- ``n`` (responses), ``docs``, ``repeats``; ``accuracy``: the share of responses the judge finds correct
  (an answer it cannot read is not correct), with a bootstrap interval by document
  (``core.stats.accuracy_interval``);
- ``lmeval``: lm-eval's metric (e.g. ``exact_match``) of the chosen filter averaged over the same
  documents, and ``lmeval_reported``: the value in its results file;
- ``in_harness``: bertjudge's own metric where the run computed it inside lm-eval (``lmeval_metric``:
  the filter it ran in, its mean over the documents, lm-eval's reported value), else None;
- ``agreement`` (share of responses where the two verdicts agree) and Cohen's κ, over the responses
  lm-eval's metric is a verdict on (one response per document; with repeats, none);
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
from bertjudge.pipeline.lmeval import OWN_METRICS, SAMPLES, read_samples, results_of, sample_files, task_config

LEVEL = 0.95


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
        task, run = SAMPLES.match(path.name)["task"], SAMPLES.match(path.name)["time"]
        recs, skipped = read_samples(path, name, filter_name, metric, category, task_config(results, task))
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


def _in_harness(rows: list[tuple[dict, dict]], reported: dict) -> dict | None:
    """bertjudge's own metric as lm-eval computed it in the run (``lmeval_metric``): its filter (``bertjudge``;
    the metric is NaN in the task's other filters), its mean over the documents and lm-eval's reported value."""
    by_doc: dict = {}
    for rec, _ in rows:
        lm = rec["meta"]["lm_eval"]
        for name, values in lm["filters"].items():
            value = values.get(OWN_METRICS)
            if isinstance(value, (int, float)) and not math.isnan(value):
                by_doc.setdefault(name, {})[lm["doc_id"]] = float(value)
    if not by_doc:
        return None
    name = OWN_METRICS if OWN_METRICS in by_doc else max(by_doc, key=lambda f: len(by_doc[f]))
    return {
        "metric": OWN_METRICS,
        "filter": name,
        "docs": len(by_doc[name]),
        "value": float(np.mean(list(by_doc[name].values()))),
        "reported": _number(reported.get(f"{OWN_METRICS},{name}")),
    }


def _group(rows: list[tuple[dict, dict]], reported: dict, n_boot: int, seed: int) -> tuple[dict, list[dict]]:
    """The report entry of one task, model and run, and its disagreements; ``rows``: (record, details)."""
    first = rows[0][0]
    info = first["meta"]["lm_eval"]
    correct = np.array([d["verdict"] is True for _, d in rows], dtype=float)
    documents = [f"doc:{rec['meta']['lm_eval']['doc_id']}" for rec, _ in rows]  # a document's repeats: one cluster
    low, high = accuracy_interval(correct, n_boot=n_boot, seed=seed, level=LEVEL, clusters=documents)
    values = {rec["meta"]["lm_eval"]["doc_id"]: rec["meta"]["lm_eval"]["value"] for rec, _ in rows}
    values = [v for v in values.values() if v is not None]  # lm-eval's metric: one value per document
    labelled = [(i, rec["label"]) for i, (rec, _) in enumerate(rows) if rec["label"] is not None]
    metric = info["metric"]
    index, labels = (np.array(x) for x in zip(*labelled)) if labelled else (np.array([], int), np.array([]))
    agree = correct[index] == labels
    entry = {
        "task": first["task"],
        "model": first["candidate_model"],
        "run": info["run"],
        "file": info["path"],
        "n": len(rows),
        "docs": len(set(documents)),
        "repeats": max(rec["meta"]["lm_eval"]["repeats"] for rec, _ in rows),
        "question_from": sorted({rec["meta"]["lm_eval"]["question_from"] for rec, _ in rows}),
        "unparsed": sum(bool(d["unparsed"]) for _, d in rows),
        "accuracy": float(correct.mean()),
        "interval": [_number(low), _number(high)],
        "lmeval_metric": metric,
        "filter": info["filter"],
        "lmeval": float(np.mean(values)) if values else None,
        "lmeval_reported": _number(reported.get(f"{metric},{info['filter']}")) if metric else None,
        "in_harness": _in_harness(rows, reported),
        "labelled": len(labelled),
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
                "repeat": lm["repeat"],
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
        f"{report['n']} responses; bertjudge accuracy: share judged correct, {int(report['level'] * 100)}% "
        "bootstrap interval by document; lm-eval: its metric on the same documents (reported: its results "
        "file); in lm-eval: bertjudge's metric as the run computed it (its filter); agreement: share of "
        "responses where both verdicts agree (one response per document only).",
        "",
        "| task | model | run | n | bertjudge acc | interval | lm-eval metric | lm-eval | reported | in lm-eval "
        "| agreement | κ | disagree (bertjudge only / lm-eval only) |",
        "|---|---|---|---:|---:|---|---|---:|---:|---:|---:|---:|---|",
    ]
    for g in report["groups"]:
        low, high = g["interval"]
        kappa = "–" if g["kappa"] is None else f"{g['kappa']:.2f}"
        n = f"{g['n']}" if g["repeats"] == 1 else f"{g['n']} ({g['docs']} docs × ≤{g['repeats']})"
        harness = g["in_harness"]
        harness = "–" if harness is None else f"{_pct(harness['value'])} ({harness['filter']})"
        lines.append(
            f"| {g['task']} | {g['model']} | {g['run']} | {n} | {_pct(g['accuracy'])} "
            f"| {_pct(low)}–{_pct(high)} | {g['lmeval_metric'] or '–'} ({g['filter']}) | {_pct(g['lmeval'])} "
            f"| {_pct(g['lmeval_reported'])} | {harness} | {_pct(g['agreement'])} | {kappa} "
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
