"""Every kind of judge through one interface: ``score``, ``details``, ``describe``, export -> load by
spec, and the ``judge`` and ``evaluate`` commands (the same code path for all of them)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from cli_run import evaluate
from test_bleurt import make_tiny_bleurt
from test_generative import make_tiny_causal_lm, smollm2_tokenizer, toy_records

from bertjudge.cli.main import main
from bertjudge.core.records import write_records
from bertjudge.judges.backends import PromptedJudge, TransformersBackend
from bertjudge.judges.bleurt import BleurtJudge
from bertjudge.judges.encoder import EncoderJudge
from bertjudge.judges.generative import GenerativeJudge
from bertjudge.judges.interface import BaseJudge
from bertjudge.judges.loading import Judge

KINDS = [
    "encoder",
    "generative-direct",
    "generative-reasoning",
    "bleurt",
    "prompted",
    "regex",
    "contains",
    "hybrid",
    "cascade",
    "by-category",
]


@pytest.fixture(scope="module")
def tiny_lm(tmp_path_factory):
    return make_tiny_causal_lm(tmp_path_factory.mktemp("iface-lm"), smollm2_tokenizer(), "llama")


@pytest.fixture(scope="module")
def specs(tiny_backbone, tiny_lm, tmp_path_factory):
    """kind -> the spec that loads an exported judge of that kind."""
    root = tmp_path_factory.mktemp("judges")
    EncoderJudge(backbone=tiny_backbone).export(root / "encoder")
    GenerativeJudge(backbone=tiny_lm, lora_r=0).export(root / "generative-direct")
    GenerativeJudge(backbone=tiny_lm, lora_r=0, mode="reasoning", max_new_tokens=4).export(
        root / "generative-reasoning"
    )
    BleurtJudge(checkpoint=make_tiny_bleurt(root / "bleurt-checkpoint")).export(root / "bleurt")
    PromptedJudge(TransformersBackend(tiny_lm, device="cpu", batch_size=2), mode="reasoning", max_new_tokens=4).export(
        root / "prompted"
    )
    return {
        **{kind: str(root / kind) for kind in KINDS[:5]},
        "regex": "regex",
        "contains": "contains",
        "hybrid": f"hybrid:{root / 'encoder'}",
        "cascade": f"cascade:{root / 'encoder'}?band=0.3,0.7",
        "by-category": f"by-category:{root / 'encoder'}?multiple_choice=regex&open_math=contains",
    }


@pytest.mark.parametrize("kind", KINDS)
def test_every_judge_kind_answers_the_interface(kind, specs, tmp_path):
    records = toy_records(8)
    judge = Judge.load(specs[kind])
    assert isinstance(judge, BaseJudge)
    scores = judge.score(
        [r["question"] for r in records],
        [r["candidate"] for r in records],
        [r["references"] for r in records],
        categories=[r["category"] for r in records],
    )
    assert scores.shape == (8,)
    assert all(math.isnan(s) or 0.0 <= s <= 1.0 for s in scores)
    details = judge.details(records, progress=False, batch_size=4)
    assert len(details) == 8
    for row, score in zip(details, scores):
        assert {"score", "verdict", "unparsed"} <= set(row)
        if row["score"] is None or math.isnan(row["score"]):
            assert row["unparsed"] and row["verdict"] is None
        else:
            assert row["score"] == pytest.approx(score, abs=1e-5)
            assert row["verdict"] == (row["score"] >= judge.threshold)
    described = judge.describe()
    assert described["name"] == judge.name and described["threshold"] == judge.threshold
    assert described["kind"] == type(judge).__name__


@pytest.mark.parametrize("kind", KINDS)
def test_every_judge_kind_runs_through_judge_and_evaluate(kind, specs, tmp_path):
    records = toy_records(6)
    data = write_records(tmp_path / "rows.jsonl", records)
    assert (
        main(
            [
                "judge",
                "--judge",
                specs[kind],
                "--input",
                str(data),
                "--output",
                str(tmp_path / "scored.jsonl"),
                "--no-progress",
            ]
        )
        == 0
    )
    scored = [json.loads(line) for line in (tmp_path / "scored.jsonl").read_text().splitlines()]
    assert [row["id"] for row in scored] == [r["id"] for r in records]
    evaluate(data, [specs[kind]], tmp_path / "report", "--bootstrap", "10")
    report = json.loads((tmp_path / "report" / "report.json").read_text())
    (only,) = report["judges"].values()
    accuracy = only["overall"]["accuracy"]
    verdicts = np.array([row["verdict"] for row in scored], dtype=object)
    labels = np.array([r["label"] for r in records])
    # evaluate and judge give the same verdicts; evaluate counts an unparsed row (verdict null) as "incorrect"
    # and reports the unparsed rate beside the accuracy
    agree = np.mean([int(bool(v)) == y for v, y in zip(verdicts, labels)])
    assert accuracy == pytest.approx(agree, abs=1e-9)
