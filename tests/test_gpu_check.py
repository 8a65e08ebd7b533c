"""scripts/gpu_check.sh: its CPU dry run (every step named, every LightningCLI call validated, nothing trained), its
helpers on a tiny judge on the CPU, and, marked ``gpu`` (skipped without a CUDA GPU), the paths it runs: a bf16
fit step on cuda and an InferenceEngine bf16 pass on cuda."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from bertjudge.cli.train import run_lightning_cli
from bertjudge.core.records import normalize, write_records
from bertjudge.judges.encoder import EncoderJudge
from bertjudge.judges.inference import InferenceEngine, compare

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "gpu_check.sh"
STEPS = ("prepare", "fit-1gpu", "fit-ddp2", "predict", "inference", "bench", "vllm")
gpu = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


def run_script(*args, timeout=300) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", str(SCRIPT), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "PYTHON": sys.executable},
    )


@pytest.fixture(scope="module")
def dry_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("gpu-check")
    return out, run_script("--dry-run", "--steps", "50", "--out", str(out))


def test_the_dry_run_names_every_step_validates_the_configs_and_trains_nothing(dry_run):
    out, result = dry_run
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    for step in STEPS:
        assert f"== step {step} (limit " in result.stdout
        assert f"| {step} | dry-run |" in result.stdout
    for call in ("fit-1gpu", "fit-ddp2", "predict"):
        assert f"config ok: {call} (bertjudge.judges.encoder.EncoderJudge" in result.stdout
    assert "devices 2, strategy ddp, precision bf16-mixed" in result.stdout
    assert "configs/paper/eurobert-210m.yaml" in result.stdout and "embedded:train\\?n=1600" in result.stdout
    assert "bench run --device cuda --dtype bf16" in result.stdout
    assert not list(out.rglob("*.ckpt")) and not (out / "eurobert-210m").exists()
    assert (out / "summary.md").read_text().count("dry-run") == len(STEPS)


def test_wrong_calls_are_refused():
    for args, message in (
        (["--steps", "abc"], "--steps must be a positive whole number"),
        (["--frobnicate"], "unknown argument --frobnicate"),
    ):
        result = run_script(*args, timeout=60)
        assert result.returncode == 2 and message in result.stderr


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the refusal without a GPU")
def test_without_a_gpu_the_run_says_to_use_the_dry_run(tmp_path):
    result = run_script("--out", str(tmp_path / "gc"), timeout=120)
    assert result.returncode == 2 and "no CUDA GPU is visible" in result.stderr
    assert not (tmp_path / "gc" / "eurobert-210m").exists()


def rows(n: int = 16) -> list[dict]:
    out = []
    for i in range(n):
        ok = i % 2 == 0
        out.append(
            normalize(
                {
                    "task": "toy",
                    "category": "open_math",
                    "question": f"What is {i} + 1?",
                    "candidate": f"Final answer: {i + 1 if ok else i + 2}",
                    "reference": str(i + 1),
                    "label": int(ok),
                }
            )
        )
    return out


@pytest.mark.slow
def test_the_inference_helper_and_the_summary_on_the_cpu(dry_run, tiny_backbone, tmp_path):
    out, result = dry_run
    assert result.returncode == 0
    folder = EncoderJudge(backbone=tiny_backbone).export(tmp_path / "judge")
    data = write_records(tmp_path / "rows.jsonl", rows())
    run = subprocess.run(
        [
            sys.executable,
            str(out / "helpers" / "inference.py"),
            str(folder),
            str(data),
            str(tmp_path / "no-predict.jsonl"),
            str(out / "inference.json"),
            "cpu",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode in (0, 1), run.stderr[-2000:]  # 1: bf16 out of tolerance on this CPU
    result = json.loads((out / "inference.json").read_text())
    assert result["rows"] == 16 and result["fp32"]["agreement"] == 1.0 and result["fp32"]["max_score_diff"] == 0.0
    assert 0 <= result["bf16"]["max_score_diff"] < 0.5 and result["bf16"]["rows_per_s"] > 0
    (out / "steps.tsv").write_text("inference\tok\t1.0\t\nfit-ddp2\tskipped\t\t1 GPU visible; DDP needs 2\n")
    summary = subprocess.run(
        [sys.executable, str(out / "helpers" / "summary.py"), str(out), "50"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert summary.returncode == 0, summary.stderr[-2000:]
    assert f"| inference | ok | 1.0 | fp32 {result['fp32']['rows_per_s']:,.0f} rows/s" in summary.stdout
    assert "| fit-ddp2 | skipped |  | 1 GPU visible; DDP needs 2 |" in summary.stdout


# --- on a GPU ----------------------------------------------------------------------------------------------
@pytest.mark.gpu
@gpu
def test_a_bf16_fit_step_on_cuda(tiny_backbones, tmp_path):
    data = write_records(tmp_path / "rows.jsonl", rows(32))
    cli = run_lightning_cli(
        [
            "fit",
            "--model=bertjudge.judges.encoder.EncoderJudge",
            f"--model.backbone={tiny_backbones['eurobert']}",
            f"--data.train=[{data}]",
            f"--data.val=[{data}]",
            "--data.batch_size=8",
            "--data.eval_batch_size=8",
            "--trainer.accelerator=gpu",
            "--trainer.devices=1",
            "--trainer.precision=bf16-mixed",
            "--trainer.fast_dev_run=2",
            "--trainer.logger=false",
            f"--trainer.default_root_dir={tmp_path}",
        ]
    )
    assert cli.trainer.global_step == 2 and str(cli.trainer.precision) == "bf16-mixed"
    assert next(cli.model.parameters()).is_cuda
    assert torch.isfinite(cli.trainer.callback_metrics["train/loss"])


@pytest.mark.gpu
@gpu
def test_an_inference_engine_bf16_pass_on_cuda(tiny_backbones):
    judge = EncoderJudge(backbone=tiny_backbones["eurobert"]).to("cuda").eval()
    records = rows(64)
    dtypes = []
    hook = next(m for m in judge.modules() if isinstance(m, torch.nn.Linear)).register_forward_hook(
        lambda _m, _args, output: dtypes.append((output.dtype, output.device.type))
    )
    logits = InferenceEngine(judge, "bf16").logits(records)
    hook.remove()
    assert logits.shape == (64,) and np.isfinite(logits).all()
    assert dtypes and set(dtypes) == {(torch.bfloat16, "cuda")}  # autocast to bf16, on the GPU
    fp32, reference = compare(judge, records, "fp32")
    bf16, probs = compare(judge, records, "bf16", reference)
    assert fp32.agreement == 1.0 and bf16.agreement >= 0.95 and bf16.max_score_diff < 0.05
