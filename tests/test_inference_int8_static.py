"""The int8-static inference mode: the judge's ONNX export quantized statically (int8 weights per channel, activation
ranges calibrated on fixed rows that are not auto's check rows) scores through the engine and ``Judge.score`` in input
order, is quantized once per judge and again when its weights change, and without the onnx extra is asked for in one
line."""

from __future__ import annotations

import sys

import numpy as np
import pytest
import torch
from test_inference import rows
from test_onnx import tiny_judge  # the same tiny random judge as the onnx mode's tests

from bertjudge.judges.inference import (
    ONNX_INSTALL,
    PRECISIONS,
    SCORE_TOLERANCE,
    InferenceEngine,
    OnnxError,
    _export,
    available_precisions,
    calibration_batches,
    calibration_set,
    check_set,
    choose,
    int8_static_excluded,
    int8_static_session,
    onnx_session,
    quantize_int8_static,
)


@pytest.fixture(scope="module")
def judge(tiny_backbone):
    """A tiny random judge whose quantized session is built once for the module (export and calibration take
    seconds)."""
    pytest.importorskip("onnxruntime")
    pytest.importorskip("onnxscript")
    return tiny_judge(tiny_backbone)


def test_int8_static_scores_in_input_order_with_the_max_over_references(judge):
    assert "int8-static" in PRECISIONS and "int8-static" in available_precisions()
    records = rows()
    order = np.random.default_rng(1).permutation(len(records))
    shuffled = [records[i] for i in order]
    got = InferenceEngine(judge, "int8-static", 64).logits(shuffled)
    assert got.shape == (len(records),) and np.all(np.isfinite(got))
    # static ranges: a row's logit does not depend on the rows it is batched with (dynamic int8's does)
    np.testing.assert_allclose(got, InferenceEngine(judge, "int8-static", 16_384).logits(records)[order], atol=1e-4)
    fp32 = InferenceEngine(judge, "fp32", 64).logits(shuffled)
    assert 0 < np.max(np.abs(got - fp32)) < 0.1  # quantized (not fp32's numbers), and close to them
    # a record's logit is the max over its references', as in fp32: each reference alone is at or below it
    first = [{**r, "references": r["references"][:1]} for r in shuffled]
    assert np.all(InferenceEngine(judge, "int8-static", 64).logits(first) <= got + 1e-6)


def test_judge_score_runs_int8_static_and_choose_weighs_it(judge):
    judge.set_precision("int8-static")
    try:
        scores = judge.score_records(rows())
    finally:
        judge.set_precision("fp32")
    assert np.all(np.isfinite(scores)) and np.all((scores >= 0) & (scores <= 1))
    assert np.max(np.abs(scores - judge.score_records(rows()))) <= SCORE_TOLERANCE["int8-static"]
    best, checks = choose(judge, rows(), candidates=("int8-static",))
    assert [c.precision for c in checks] == ["fp32", "int8-static"]
    assert (best == "int8-static") == checks[-1].ok and checks[-1].max_score_diff <= SCORE_TOLERANCE["int8-static"]


def test_the_quantized_session_is_made_once_per_judge_apart_from_the_onnx_one(judge):
    session = int8_static_session(judge)
    assert int8_static_session(judge) is session
    assert onnx_session(judge) is not session


def test_the_matmuls_are_int8_per_channel_but_those_after_gelu(judge, tmp_path):
    import onnx

    _export(judge, str(tmp_path / "model.onnx"))
    quantize_int8_static(judge, str(tmp_path / "model.onnx"), str(tmp_path / "int8.onnx"))
    graph = onnx.load(str(tmp_path / "int8.onnx")).graph
    made_by = {out: node for node in graph.node for out in node.output}
    matmuls = [node for node in graph.node if node.op_type == "MatMul"]
    excluded = set(int8_static_excluded(onnx.load(str(tmp_path / "model.onnx"))))
    assert excluded and len(excluded) < len(matmuls)
    for node in matmuls:
        dequantized = [name in made_by and made_by[name].op_type == "DequantizeLinear" for name in node.input]
        assert dequantized == ([False, False] if node.name in excluded else [True, True]), node.name
    weights = {i.name: i for i in graph.initializer}
    scales = [weights[made_by[node.input[1]].input[1]] for node in matmuls if node.name not in excluded]
    assert all(len(scale.dims) == 1 and scale.dims[0] > 1 for scale in scales)  # one scale per output channel


def test_the_calibration_rows_are_not_the_check_rows_and_are_tokenized_as_the_engine_does(judge):
    calibration, check = calibration_set(), check_set()
    assert len(calibration) == 256
    assert not {r["id"] for r in calibration} & {r["id"] for r in check}
    assert not {(r["question"], r["candidate"]) for r in calibration} & {(r["question"], r["candidate"]) for r in check}
    assert {r["category"] for r in calibration} == {r["category"] for r in check}
    batches = calibration_batches(judge)
    ids, _ = InferenceEngine(judge, "fp32").encode(calibration_set())
    fed = sorted(
        tuple(int(t) for t, m in zip(row, mask) if m)
        for batch in batches
        for row, mask in zip(batch["input_ids"], batch["attention_mask"])
    )
    assert fed == sorted(tuple(row) for row in ids)  # every sequence once, unpadded as the engine encodes it
    assert all(b["input_ids"].size <= 2048 for b in batches)  # the engine's CPU batches


def test_new_weights_are_quantized_again(tiny_backbone):
    pytest.importorskip("onnxruntime")
    pytest.importorskip("onnxscript")
    judge = tiny_judge(tiny_backbone)
    records = rows(8)
    first = InferenceEngine(judge, "int8-static").logits(records)
    session = int8_static_session(judge)
    with torch.no_grad():
        judge.model.classifier.weight.mul_(3.0)  # in place, as an optimizer step would
    again = InferenceEngine(judge, "int8-static").logits(records)
    assert int8_static_session(judge) is not session
    assert np.max(np.abs(again - first)) > 1e-4
    np.testing.assert_allclose(again, InferenceEngine(judge, "fp32").logits(records), atol=0.1)


def test_without_onnxruntime_int8_static_is_left_out_and_asked_for_in_one_line(tiny_backbone, monkeypatch):
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # what an installation without the extra looks like
    judge = tiny_judge(tiny_backbone)
    assert "int8-static" not in available_precisions() and "int8-static" in PRECISIONS
    with pytest.raises(OnnxError, match="^precision 'int8-static' needs onnxruntime") as error:
        InferenceEngine(judge, "int8-static")
    assert ONNX_INSTALL in str(error.value) and "\n" not in str(error.value)
