"""The inference engine: token-budget batches, input order restored, the max over references, precision modes."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

from bertjudge.cli.main import main
from bertjudge.core.formats import JudgeFormat
from bertjudge.core.records import normalize, write_records
from bertjudge.judges import inference
from bertjudge.judges.encoder import EncoderJudge
from bertjudge.judges.inference import (
    CPU_TOKEN_BUDGET,
    GPU_TOKEN_BUDGET,
    InferenceEngine,
    available_precisions,
    default_token_budget,
    token_batches,
)


def rows(n=24):
    out = []
    for i in range(n):
        out.append(
            normalize(
                {
                    "question": f"What is {i} + {i}?",
                    "candidate": "Let me think. " * (i % 7) + f"Final answer: {2 * i + i % 2}",
                    "references": [str(2 * i), f"{2 * i}.0"],
                    "label": int(i % 2 == 0),
                    "category": "open_math",
                }
            )
        )
    return out


@pytest.mark.parametrize("budget", [1, 50, 300, 10_000])
def test_token_batches_cover_every_row_once_within_the_budget(budget):
    lengths = [int(x) for x in np.random.default_rng(0).integers(1, 100, 200)]
    batches = token_batches(lengths, budget, max_rows=64)
    assert sorted(i for batch in batches for i in batch) == list(range(200))
    for batch in batches:
        assert len(batch) <= 64
        assert len(batch) == 1 or len(batch) * max(lengths[i] for i in batch) <= budget


@pytest.fixture(scope="module")
def judge(tiny_backbone):
    fmt = JudgeFormat(references="each", max_references=2)
    return EncoderJudge(backbone=tiny_backbone, format=fmt).eval()


def one_at_a_time(judge, records):
    """Each sequence alone (no padding), the max over a record's references: what batching must reproduce."""
    out = []
    with torch.inference_mode():
        for rec in records:
            seqs = [{**rec, "references": [ref]} for ref in rec["references"][:2]]
            ids = judge.encoder.encode_many(seqs)
            logits = [
                float(
                    judge(
                        {"input_ids": torch.tensor([row]), "attention_mask": torch.ones(1, len(row), dtype=torch.long)}
                    )[0]
                )
                for row in ids
            ]
            out.append(max(logits))
    return np.array(out)


@pytest.mark.parametrize("budget", [64, 512, 16_384])
def test_the_engine_restores_input_order_and_takes_the_max_over_references(judge, budget):
    records = rows()
    got = InferenceEngine(judge, "fp32", budget).logits(records)
    np.testing.assert_allclose(got, one_at_a_time(judge, records), atol=1e-5)


def test_bf16_and_int8_stay_close_to_fp32_and_unknown_modes_are_refused(judge):
    records = rows()
    fp32 = InferenceEngine(judge, "fp32").logits(records)
    for mode in ("bf16", "int8"):
        other = InferenceEngine(judge, mode).logits(records)
        assert other.shape == fp32.shape and np.all(np.isfinite(other))
        assert np.max(np.abs(other - fp32)) < 0.5  # a tiny random model: close, not equal
    with pytest.raises(ValueError, match="precision"):
        InferenceEngine(judge, "fp8")


def test_bf16_scores_are_autocast_over_the_judge_and_follow_its_weights(tiny_backbone):
    """The bf16 mode runs a copy whose Linear weights are stored in bf16: the numbers of autocast over the judge
    itself (to bf16 kernels' rounding), and a new copy once the judge's weights change (a stale
    copy would be a whole logit off)."""
    judge = EncoderJudge(backbone=tiny_backbone, format=JudgeFormat(references="each", max_references=2)).eval()
    records = rows()

    class AutocastOverJudge(InferenceEngine):  # the same batches under autocast, on the judge's fp32 weights
        def network(self):
            return self.judge

    def autocast_over_judge():
        return AutocastOverJudge(judge, "bf16").logits(records)

    engine = InferenceEngine(judge, "bf16")
    fp32 = InferenceEngine(judge, "fp32").logits(records)
    assert np.max(np.abs(engine.logits(records) - fp32)) > 0  # bf16 kernels ran
    np.testing.assert_allclose(engine.logits(records), autocast_over_judge(), atol=1e-3)
    assert engine.network() is not judge and engine.network() is InferenceEngine(judge, "bf16").network()
    with torch.no_grad():
        judge.model.classifier.bias += 1.0  # in place: the copy must be made again
    np.testing.assert_allclose(engine.logits(records), autocast_over_judge(), atol=1e-3)
    assert all(p.dtype == torch.float32 for p in judge.parameters())  # the judge itself is left in fp32


def test_the_default_token_budget_is_capped_on_a_cpu_and_large_on_a_gpu(judge):
    assert default_token_budget("cpu") == CPU_TOKEN_BUDGET
    assert default_token_budget("cpu", 32 * 64) == 32 * 64
    assert default_token_budget("cpu", 32 * 512) == CPU_TOKEN_BUDGET
    assert default_token_budget("cuda") == GPU_TOKEN_BUDGET
    assert default_token_budget("cuda", 32 * 512) == 32 * 512
    assert InferenceEngine(judge).token_budget == CPU_TOKEN_BUDGET
    assert judge.default_token_budget(4) == 4 * judge.format.max_length
    with pytest.raises(ValueError, match="batch_size"):
        judge.default_token_budget(0)


def test_auto_on_given_rows_keeps_the_mode_and_the_judge_command_says_which(judge, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(inference, "auto_candidates", lambda device: ("bf16", "int8"))  # whatever this CPU has
    checks = judge.set_precision("auto", rows())
    assert [c.precision for c in checks][:2] == ["fp32", "bf16"] and set(available_precisions()) >= {
        c.precision for c in checks
    }
    taken = next((c.precision for c in checks[1:] if c.ok), "fp32")
    assert judge.precision == taken and judge.resolved_precision() == taken  # kept, not auto
    assert "bertjudge: precision auto -> " in capsys.readouterr().err
    judge.set_precision("fp32")
    judge.export(tmp_path / "j")
    data = write_records(tmp_path / "in.jsonl", rows())
    assert (
        main(
            [
                "judge",
                "--judge",
                str(tmp_path / "j"),
                "--input",
                str(data),
                "--output",
                str(tmp_path / "o.jsonl"),
                "--precision",
                "auto",
                "--no-progress",
            ]
        )
        == 0
    )
    said = [line for line in capsys.readouterr().err.splitlines() if line.startswith("bertjudge: precision auto")]
    assert len(said) == 1 and re.match(r"bertjudge: precision auto -> (fp32|bf16|int8) for encoder \(", said[0]), said


def test_progress_counts_each_record_once_when_it_has_several_sequences(judge, capsys):
    records = rows(24)  # two references each: two sequences per record, in different batches
    InferenceEngine(judge, "fp32", token_budget=64).logits(records, progress=True)
    shown = capsys.readouterr().err.replace("\r", "\n").splitlines()
    counts = [int(m[1]) for line in shown if (m := re.search(r"\| *(\d+)/24 ", line))]
    assert counts and counts[-1] == 24 and max(counts) == 24  # not 48 (sequences), not more than the rows
