"""The onnx inference mode: the judge's forward exported to ONNX Runtime scores like fp32, in input order and with
the max over references, ``choose`` weighs it when asked (``auto`` does not try it: slower than torch's fp32 on a
CPU), and without the extra ``--precision onnx`` says what to install."""

from __future__ import annotations

import sys

import numpy as np
import pytest
import torch
from test_inference import one_at_a_time, rows

from bertjudge.cli.main import main
from bertjudge.core.formats import JudgeFormat
from bertjudge.core.records import write_records
from bertjudge.judges.encoder import EncoderJudge
from bertjudge.judges.inference import (
    ONNX_INSTALL,
    SCORE_TOLERANCE,
    InferenceEngine,
    OnnxError,
    available_precisions,
    choose,
    onnx_session,
)


def tiny_judge(backbone: str) -> EncoderJudge:
    return EncoderJudge(backbone=backbone, format=JudgeFormat(references="each", max_references=2)).eval()


@pytest.fixture(scope="module")
def judge(tiny_backbone):
    """A tiny random judge whose ONNX session is built once for the module (the export takes seconds)."""
    pytest.importorskip("onnxruntime")
    pytest.importorskip("onnxscript")
    return tiny_judge(tiny_backbone)


@pytest.mark.parametrize("budget", [64, 16_384])
def test_onnx_scores_like_fp32_in_input_order_with_the_max_over_references(judge, budget):
    records = rows()
    order = np.random.default_rng(1).permutation(len(records))
    shuffled = [records[i] for i in order]
    got = InferenceEngine(judge, "onnx", budget).logits(shuffled)
    np.testing.assert_allclose(got, one_at_a_time(judge, shuffled), atol=1e-5)
    np.testing.assert_allclose(got, InferenceEngine(judge, "fp32", budget).logits(records)[order], atol=1e-5)
    p_onnx = judge.probabilities(torch.from_numpy(got)).numpy()
    p_fp32 = judge.probabilities(torch.from_numpy(InferenceEngine(judge, "fp32", budget).logits(shuffled))).numpy()
    assert np.max(np.abs(p_onnx - p_fp32)) <= SCORE_TOLERANCE["onnx"]


def test_the_session_is_made_once_per_judge_and_choose_weighs_onnx(judge):
    assert onnx_session(judge) is onnx_session(judge)
    assert "onnx" in available_precisions()
    best, checks = choose(judge, rows(), candidates=("onnx",))
    onnx = next(c for c in checks if c.precision == "onnx")
    assert onnx.ok and onnx.agreement == 1.0 and onnx.max_score_diff <= SCORE_TOLERANCE["onnx"]
    assert best == "onnx" and [c.precision for c in checks] == ["fp32", "onnx"]
    judge.set_precision("onnx")
    try:
        scores = judge.score_records(rows())
    finally:
        judge.set_precision("fp32")
    np.testing.assert_allclose(scores, judge.score_records(rows()), atol=SCORE_TOLERANCE["onnx"])


@pytest.mark.slow
def test_a_judge_in_training_mode_or_with_new_weights_is_exported_again_in_eval_mode(tiny_backbone):
    pytest.importorskip("onnxruntime")
    pytest.importorskip("onnxscript")
    judge = tiny_judge(tiny_backbone).train()  # dropout on: the export must not keep it on, nor turn it off for good
    records = rows()
    first = InferenceEngine(judge, "onnx").logits(records)
    assert judge.training
    np.testing.assert_allclose(first, InferenceEngine(judge, "fp32").logits(records), atol=1e-5)
    session = onnx_session(judge)
    with torch.no_grad():
        judge.model.classifier.weight.mul_(3.0)  # in place, as an optimizer step would
    again = InferenceEngine(judge, "onnx").logits(records)
    assert onnx_session(judge) is not session
    np.testing.assert_allclose(again, InferenceEngine(judge, "fp32").logits(records), atol=1e-5)
    assert np.max(np.abs(again - first)) > 1e-4


class BranchingJudge(EncoderJudge):
    """A judge whose forward takes a Python branch on token counts: a graph ONNX cannot hold."""

    def forward(self, batch: dict) -> torch.Tensor:
        if int(batch["attention_mask"].sum()) % 2:
            return super().forward(batch)
        return super().forward(batch) + 0.0


def test_a_forward_that_does_not_export_is_named_in_one_line_and_refused_by_auto(tiny_backbone):
    pytest.importorskip("onnxruntime")
    pytest.importorskip("onnxscript")
    judge = BranchingJudge(backbone=tiny_backbone).eval()
    with pytest.raises(OnnxError, match="^encoder: its forward does not export to ONNX") as error:
        InferenceEngine(judge, "onnx").logits(rows(4))
    assert "\n" not in str(error.value) and "\x1b" not in str(error.value)
    best, checks = choose(judge, rows(8), candidates=("onnx",))
    onnx = next(c for c in checks if c.precision == "onnx")
    assert not onnx.ok and onnx.why_not == str(error.value)
    assert best == "fp32"


def test_without_onnxruntime_the_mode_is_left_out_and_asked_for_in_one_line(
    tiny_backbone, tmp_path, monkeypatch, capsys
):
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # what an installation without the extra looks like
    judge = tiny_judge(tiny_backbone)
    assert "onnx" not in available_precisions()
    assert "onnx" not in {c.precision for c in choose(judge, rows(8), candidates=available_precisions())[1]}
    with pytest.raises(OnnxError, match="pip install 'bertjudge\\[onnx\\]'"):
        InferenceEngine(judge, "onnx")
    judge.export(tmp_path / "j")
    data = write_records(tmp_path / "in.jsonl", rows(4))
    out = tmp_path / "o.jsonl"
    call = ["judge", "--judge", str(tmp_path / "j"), "--input", str(data), "--output", str(out), "--precision", "onnx"]
    capsys.readouterr()
    assert main([*call, "--no-progress"]) == 1
    said = [line for line in capsys.readouterr().err.splitlines() if line.startswith("bertjudge judge:")]
    assert len(said) == 1 and ONNX_INSTALL in said[0] and "onnxruntime" in said[0], said
    assert not out.exists()
