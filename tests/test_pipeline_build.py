"""Mixture counts per category × task × model, and out-of-domain splits disjoint by construction."""

from __future__ import annotations

import json
from collections import Counter

import pytest
import yaml

from bertjudge.cli.main import main
from bertjudge.core.records import normalize, read_records, write_records
from bertjudge.pipeline.build import allocate, build, check_disjoint, held_out_model

MODELS = ("Qwen/Qwen3-8B", "meta-llama/Llama-3.1-8B-Instruct", "google/gemma-3-4b-it")
TASKS = {
    "gsm8k": "open_math",
    "math": "open_math",
    "arc_easy": "multiple_choice",
    "squad_v2": "context_extraction",
    "aime25": "open_math",
}


def records(items_per_task=20):
    rows = []
    for task, category in TASKS.items():
        for item in range(items_per_task):
            for m, model in enumerate(MODELS):
                rows.append(
                    normalize(
                        {
                            "task": task,
                            "category": category,
                            "question": f"{task} q{item}",
                            "candidate": f"answer {m}",
                            "references": ["x"],
                            "candidate_model": model,
                            "label": None if item == 0 else (item + m) % 2,
                            "meta": {"item": f"i{item}", "variant": "soft"},
                        }
                    )
                )
    return rows


MIX = {
    "seed": 3,
    "holdout": {"models": ["llama*"], "tasks": ["aime25"]},
    "val": 0.1,
    "test": 0.2,
    "train": {"size": 60, "weights": {"category": {"open_math": 2}}},
}


def test_splits_hold_out_models_and_tasks():
    splits, manifest = build(records(), MIX)
    assert {r["candidate_model"] for r in splits["ood_model"]} == {MODELS[1]}
    assert {r["task"] for r in splits["ood_model"]} == {"gsm8k", "math", "arc_easy", "squad_v2"}
    assert {r["task"] for r in splits["ood_task"]} == {"aime25"} and len(splits["ood_task"]) == 19 * 2
    assert {(r["task"], r["candidate_model"]) for r in splits["ood_both"]} == {("aime25", MODELS[1])}
    in_domain = splits["train"] + splits["val"] + splits["test"]
    assert not {r["candidate_model"] for r in in_domain} & {MODELS[1]}
    assert not {r["task"] for r in in_domain} & {"aime25"}
    by_item = {}
    for name in ("train", "val", "test"):
        for r in splits[name]:
            assert r["split"] == name and r["label"] is not None
            by_item.setdefault((r["task"], r["meta"]["item"]), set()).add(name)
    assert all(len(names) == 1 for names in by_item.values())  # a question never straddles splits
    assert manifest["dropped_unlabelled"] == 5 * 3
    assert manifest["held_out"]["models"] == [MODELS[1]]
    assert sum(s["rows"] for s in manifest["splits"].values()) + manifest["unused_in_domain"] == 5 * 19 * 3
    assert 0 < len(splits["val"]) < len(splits["test"])


def test_train_is_balanced_by_weight():
    splits, manifest = build(records(), MIX)
    train = splits["train"]
    assert len(train) == 60
    assert Counter(r["category"] for r in train) == {"open_math": 30, "multiple_choice": 15, "context_extraction": 15}
    assert Counter(r["task"] for r in train) == {"gsm8k": 15, "math": 15, "arc_easy": 15, "squad_v2": 15}
    for task in ("gsm8k", "math", "arc_easy", "squad_v2"):
        per_model = Counter(r["candidate_model"] for r in train if r["task"] == task)
        assert set(per_model) == {MODELS[0], MODELS[2]} and abs(per_model[MODELS[0]] - per_model[MODELS[2]]) <= 1
    assert manifest["splits"]["train"]["cells"]["open_math"]["gsm8k"][MODELS[0]] in (7, 8)
    assert build(records(), MIX)[0]["train"] == train  # seeded
    with pytest.raises(ValueError, match="asks for 1000"):
        build(records(), {**MIX, "train": {"size": 1000}})


def test_allocation_gives_short_cells_share_to_others():
    assert allocate(10, {"a": 2, "b": 20, "c": 20}, {}) == {"a": 2, "b": 4, "c": 4}
    assert allocate(9, {"a": 10, "b": 10}, {"a": 2}) == {"a": 6, "b": 3}
    assert allocate(4, {"a": 10, "b": 10}, {"b": 0}) == {"a": 4, "b": 0}


def test_counts_per_cell_and_checks():
    mix = {"holdout": {"models": ["gemma-3*"]}, "train": {"counts": {"gsm8k": {"*": 5}, "math": {MODELS[0]: 3}}}}
    splits, _ = build(records(), mix)
    train = splits["train"]
    assert Counter(r["task"] for r in train) == {"gsm8k": 5, "math": 3}
    assert {r["candidate_model"] for r in train if r["task"] == "math"} == {MODELS[0]}
    assert {r["candidate_model"] for r in train if r["task"] == "gsm8k"} <= {MODELS[0], MODELS[1]}
    assert len(splits["ood_model"]) == 5 * 19
    assert held_out_model("google/gemma-3-4b-it", ["gemma-3*"]) and not held_out_model("gemma-2", ["gemma-3*"])
    splits["train"].append(splits["ood_task"][0] if splits["ood_task"] else splits["ood_model"][0])
    with pytest.raises(AssertionError, match="held-out"):
        check_disjoint(splits, ["gemma-3*"], set())
    with pytest.raises(ValueError, match="unknown keys"):
        build(records(), {"trian": {}})


def test_cli_writes_splits_and_manifest(tmp_path, capsys):
    write_records(tmp_path / "labelled" / "a.jsonl", records(6))
    (tmp_path / "mix.yaml").write_text(yaml.safe_dump({**MIX, "train": {"size": 20}}))
    assert (
        main(
            [
                "build",
                "--input",
                str(tmp_path / "labelled"),
                "--mix",
                str(tmp_path / "mix.yaml"),
                "--output",
                str(tmp_path / "out"),
            ]
        )
        == 0
    )
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    for name, info in manifest["splits"].items():
        path = tmp_path / "out" / f"{name}.jsonl"
        rows = read_records(path) if info["rows"] else []
        assert path.exists() == bool(info["rows"]) and len(rows) == info["rows"]
    assert manifest["splits"]["train"]["rows"] == 20 and manifest["inputs"] == [str(tmp_path / "labelled")]
    assert "train: 20 rows" in capsys.readouterr().out
    assert main(["build", "--input", str(tmp_path / "labelled"), "--output", str(tmp_path / "all")]) == 0
    assert len(read_records(tmp_path / "all" / "train.jsonl")) == 5 * 5 * 3
