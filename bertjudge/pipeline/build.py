"""``python -m bertjudge build``: a training mixture and in-domain / out-of-domain splits.

The mix file (YAML; every key optional)::

    seed: 0
    holdout:                 # out of domain: never in train, val or test
      models: ["llama*"]     # model families: case-insensitive globs on the candidate model
                             # (its full name or the part after the last '/')
      tasks: [aime25, gpqa]
    val: 0.05                # fractions of the in-domain questions for validation and test
    test: 0.1                # (a question's rows all go to one split)
    train:                   # the training mixture, drawn from the other in-domain rows; either
      size: 6000             # a total shared by weight over category, then task, then candidate
      weights:               # model (names not listed weigh 1, 0 drops them; a cell short of rows
        category: {open_math: 2}   # gives its share to the others)
      # or counts per cell as {task: {model: count}} ('*' a wildcard):
      # counts: {gsm8k: {"*": 500}}

Unlabelled rows are dropped. Written: ``train``, ``val``, ``test``, ``ood_task`` (held-out tasks),
``ood_model`` (held-out model families) and ``ood_both`` as JSONL (empty splits are not written),
and ``manifest.json`` with the rows per category → task → candidate model of every split.
"""

from __future__ import annotations

import fnmatch
import math
from collections import Counter

from bertjudge.data.datamodule import apply_mixture
from bertjudge.pipeline.tasks import digest

SPLITS = ("train", "val", "test", "ood_task", "ood_model", "ood_both")
LEVELS = ("category", "task", "candidate_model")
MIX_KEYS = {"seed", "holdout", "val", "test", "train"}
MANIFEST = "manifest.json"


def held_out_model(model: str | None, families: list[str]) -> bool:
    names = {(model or "").lower(), (model or "").rsplit("/", 1)[-1].lower()}
    return any(fnmatch.fnmatchcase(name, family.lower()) for family in families for name in names)


def item_key(rec: dict) -> str:
    """The question a row answers: rows of one item never straddle train and test."""
    return f"{rec['task']}/{rec['meta'].get('item') or digest(rec.get('question') or '')}"


def _fraction(key: str, seed: int) -> float:
    return int(digest(f"{seed}/{key}")[:15], 16) / 16**15


def _round(shares: dict, total: int) -> dict:
    """Integers summing to ``total``: floors, then the largest remainders (ties in key order)."""
    out = {k: math.floor(v) for k, v in shares.items()}
    for k in sorted(shares, key=lambda k: out[k] - shares[k])[: total - sum(out.values())]:
        out[k] += 1
    return out


def allocate(total: int, capacity: dict, weights: dict) -> dict:
    """Split ``total`` over keys by weight (1 when not given), none above its capacity."""
    alloc = dict.fromkeys(capacity, 0)
    active = [k for k in capacity if weights.get(k, 1) > 0 and capacity[k] > 0]
    while sum(alloc.values()) < total and active:
        left = total - sum(alloc.values())
        weight = sum(weights.get(k, 1) for k in active)
        for k, n in _round({k: left * weights.get(k, 1) / weight for k in active}, left).items():
            alloc[k] += min(n, capacity[k] - alloc[k])
        active = [k for k in active if alloc[k] < capacity[k]]
    if sum(alloc.values()) < total:
        raise ValueError(
            f"the mixture asks for {total} training rows; the data has {sum(alloc.values())} (with non-zero weight)"
        )
    return alloc


def weighted_counts(records: list[dict], size: int, weights: dict) -> dict[str, dict[str, int]]:
    """Rows per task × candidate model, balanced by weight over category, then task, then model."""
    unknown = set(weights) - set(LEVELS)
    if unknown:
        raise ValueError(f"unknown weight levels {sorted(unknown)}; use {', '.join(LEVELS)}")
    cells = Counter(tuple(rec[level] or "" for level in LEVELS) for rec in records)
    counts: dict[str, dict[str, int]] = {}

    def split(total: int, prefix: tuple) -> None:
        depth = len(prefix)
        children = Counter()
        for cell, n in cells.items():
            if cell[:depth] == prefix:
                children[cell[depth]] += n
        for child, n in allocate(total, children, weights.get(LEVELS[depth], {})).items():
            if depth + 1 < len(LEVELS):
                split(n, prefix + (child,))
            elif n:
                counts.setdefault(prefix[1], {})[child] = n

    split(size, ())
    return counts


def cell_counts(records: list[dict]) -> dict[str, dict[str, dict[str, int]]]:
    """Rows per cell as ``{category: {task: {candidate model: n}}}``."""
    out: dict = {}
    for (category, task, model), n in sorted(Counter(tuple(r[k] or "" for k in LEVELS) for r in records).items()):
        out.setdefault(category, {}).setdefault(task, {})[model] = n
    return out


def build(records: list[dict], mix: dict) -> tuple[dict[str, list[dict]], dict]:
    """The splits and the manifest (without inputs) for labelled records and a mix."""
    unknown = set(mix) - MIX_KEYS
    if unknown:
        raise ValueError(f"unknown keys in the mix: {sorted(unknown)}; use {', '.join(sorted(MIX_KEYS))}")
    seed = int(mix.get("seed", 0))
    holdout = mix.get("holdout") or {}
    families, tasks = list(holdout.get("models") or []), set(holdout.get("tasks") or [])
    val, test = float(mix.get("val", 0.0)), float(mix.get("test", 0.0))
    if val < 0 or test < 0 or val + test >= 1:
        raise ValueError(f"val ({val}) and test ({test}) must be fractions summing below 1")

    labelled = [rec for rec in records if rec["label"] is not None]
    splits = {name: [] for name in SPLITS}
    pool = []
    for rec in labelled:
        ood_model, ood_task = held_out_model(rec["candidate_model"], families), rec["task"] in tasks
        if ood_model or ood_task:
            splits["ood_both" if ood_model and ood_task else "ood_model" if ood_model else "ood_task"].append(rec)
            continue
        u = _fraction(item_key(rec), seed)
        (splits["val"] if u < val else splits["test"] if u < val + test else pool).append(rec)

    train_mix = mix.get("train") or {}
    if "counts" in train_mix and "size" in train_mix:
        raise ValueError("give the training mixture as counts or as size (with weights), not both")
    if "counts" in train_mix:
        splits["train"] = apply_mixture(pool, train_mix["counts"], seed)
    elif "size" in train_mix:
        counts = weighted_counts(pool, int(train_mix["size"]), train_mix.get("weights") or {})
        splits["train"] = apply_mixture(pool, counts, seed)
    else:
        splits["train"] = pool
    splits = {name: [{**rec, "split": name} for rec in rows] for name, rows in splits.items()}
    check_disjoint(splits, families, tasks)
    manifest = {
        "mix": mix,
        "seed": seed,
        "rows_in": len(records),
        "dropped_unlabelled": len(records) - len(labelled),
        "unused_in_domain": len(pool) - len(splits["train"]),
        "held_out": {
            "model_families": families,
            "tasks": sorted(tasks),
            "models": sorted({r["candidate_model"] or "" for r in splits["ood_model"] + splits["ood_both"]}),
            "tasks_found": sorted({r["task"] for r in splits["ood_task"] + splits["ood_both"]}),
        },
        "splits": {
            name: {"rows": len(rows), "positive": sum(r["label"] for r in rows), "cells": cell_counts(rows)}
            for name, rows in splits.items()
        },
    }
    return splits, manifest


def check_disjoint(splits: dict[str, list[dict]], families: list[str], tasks: set[str]) -> None:
    """Raise AssertionError unless held-out models and tasks stay out of domain and no question or id
    is in two splits."""
    in_domain = splits["train"] + splits["val"] + splits["test"]
    if any(held_out_model(r["candidate_model"], families) or r["task"] in tasks for r in in_domain):
        raise AssertionError("a held-out model or task reached an in-domain split")
    if any(r["task"] in tasks for r in splits["ood_model"]) or any(r["task"] not in tasks for r in splits["ood_task"]):
        raise AssertionError("ood_model and ood_task overlap")
    items = {name: {item_key(r) for r in splits[name]} for name in ("train", "val", "test")}
    if items["train"] & items["val"] or items["train"] & items["test"] or items["val"] & items["test"]:
        raise AssertionError("a question is in two in-domain splits")
    ids = [r["id"] for rows in splits.values() for r in rows]
    if len(ids) != len(set(ids)):
        raise AssertionError("a row is in two splits")
