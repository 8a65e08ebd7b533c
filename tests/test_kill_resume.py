"""``kill -9`` in the middle of every long command, then the same command again (issue 34): no row lost or
done twice, the result equal to an uninterrupted run's, and a resume refused after a change.

Each test runs the real command line in a subprocess and kills it with SIGKILL (no handler runs) once it
has written part of its work; ``fit`` is killed by a callback that sends itself SIGKILL at a chosen step,
so that the point of the kill is the same on a fast or a slow machine.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import load_file

from bertjudge.core.records import read_records, write_records
from bertjudge.core.resumable import partial_path

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}

pytestmark = pytest.mark.slow  # each runs the command line three times


def bertjudge(*args, env=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "bertjudge", *map(str, args)],
        cwd=ROOT,
        env=env or ENV,
        capture_output=True,
        text=True,
        timeout=600,
    )


def killed_when(args, done, env=None, timeout: float = 300) -> None:
    """Run the command and SIGKILL it as soon as ``done()`` holds; it must not have finished by then."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "bertjudge", *map(str, args)],
        cwd=ROOT,
        env=env or ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.time() + timeout
    while time.time() < deadline and proc.poll() is None and not done():
        time.sleep(0.02)
    proc.kill()
    _, err = proc.communicate()
    assert proc.returncode == -signal.SIGKILL, err.decode()[-2000:]


def lines(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


def math_rows(n: int) -> list[dict]:
    return [
        {
            "id": f"m{i}",
            "task": "math",
            "category": "open_math",
            "question": f"What is {i}/7?",
            "candidate": f"We get $\\frac{{{i}}}{{7}}$, so the answer is \\boxed{{\\frac{{{i}}}{{7}}}}.",
            "references": [f"{i}/7" if i % 4 else f"{i + 1}/7"],
            "label": int(i % 4 != 0),
        }
        for i in range(n)
    ]


def test_label(tmp_path):
    write_records(tmp_path / "in" / "math.jsonl", math_rows(1500))
    args = ["label", "--teacher", "rule:math-verify", "--input", tmp_path / "in", "--chunk-size", "50"]
    out = tmp_path / "out"
    killed_when([*args, "--output", out], lambda: lines(partial_path(out / "math.jsonl")) >= 3)
    assert not (out / "math.jsonl").exists()
    resumed = bertjudge(*args, "--output", out)
    assert resumed.returncode == 0, resumed.stderr
    fresh = bertjudge(*args, "--output", tmp_path / "fresh")
    assert fresh.returncode == 0
    rows, expected = read_records(out / "math.jsonl"), read_records(tmp_path / "fresh" / "math.jsonl")
    assert [r["id"] for r in rows] == [f"m{i}" for i in range(1500)]  # none lost, none twice
    drop = lambda r: {**r, "meta": {**r["meta"], "labelling": {**r["meta"]["labelling"], "timestamp": None}}}  # noqa: E731
    assert [drop(r) for r in rows] == [drop(r) for r in expected]

    # a resume after an input row changed is refused, naming the partial file's line
    killed_when(
        [*args, "--output", tmp_path / "again"], lambda: lines(partial_path(tmp_path / "again" / "math.jsonl")) >= 3
    )
    edited = math_rows(1500)
    edited[1]["candidate"] = "I refuse."
    write_records(tmp_path / "in" / "math.jsonl", edited)
    refused = bertjudge(*args, "--output", tmp_path / "again")
    assert refused.returncode == 2
    assert "math.jsonl.partial.jsonl:3: m1 was labelled from another input row" in refused.stderr


def test_generate(tiny_llama, tmp_path):
    task = tmp_path / "sums.jsonl"
    task.write_text(
        "".join(json.dumps({"question": f"What is {i} + {i}?", "reference": str(2 * i)}) + "\n" for i in range(400))
    )
    common = ["generate", "--model", tiny_llama, "--tasks", task, "--variant", "free", "--max-new-tokens", "3"]
    args = [*common, "--batch-size", "4", "--chunk-size", "8", "--no-progress"]
    out = tmp_path / "out"

    def written() -> int:
        return sum(lines(p) for p in out.glob("*.partial.jsonl"))

    killed_when([*args, "--output", out], lambda: written() >= 3)
    resumed = bertjudge(*args, "--output", out)
    assert resumed.returncode == 0, resumed.stderr
    fresh = bertjudge(*args, "--output", tmp_path / "fresh")
    assert fresh.returncode == 0, fresh.stderr
    (made,) = out.glob("*.jsonl")
    rows, expected = read_records(made), read_records(tmp_path / "fresh" / made.name)
    assert len(rows) == 400 and len({r["id"] for r in rows}) == 400  # none lost, none twice
    key = lambda r: r["id"]  # noqa: E731
    assert sorted(rows, key=key) == sorted(expected, key=key)  # greedy: the same answers as one run


def test_evaluate(tmp_path):
    data = tmp_path / "labelled.jsonl"
    write_records(data, math_rows(3000))
    args = ["evaluate", "--data", data, "--judge", "regex", "contains", "--bootstrap", "50"]
    out = tmp_path / "report"
    killed_when([*args, "--output", out], lambda: lines(partial_path(out / "scores" / "regex.jsonl")) >= 2)
    assert not (out / "report.json").exists()
    resumed = bertjudge(*args, "--output", out)
    assert resumed.returncode == 0, resumed.stderr
    fresh = bertjudge(*args, "--output", tmp_path / "fresh")
    assert fresh.returncode == 0, fresh.stderr
    for judge in ("regex", "contains"):
        rows = [json.loads(line) for line in (out / "scores" / f"{judge}.jsonl").read_text().splitlines()]
        assert [r["id"] for r in rows] == [f"m{i}" for i in range(3000)]  # none lost, none twice
        assert (out / "scores" / f"{judge}.jsonl").read_bytes() == (
            tmp_path / "fresh" / "scores" / f"{judge}.jsonl"
        ).read_bytes()
    report, expected = (json.loads((d / "report.json").read_text()) for d in (out, tmp_path / "fresh"))
    assert report["judges"] == expected["judges"]

    # killed while the second judge scores: the first judge's rows are all kept, none scored again
    later = tmp_path / "later"
    killed_when([*args, "--output", later], lambda: lines(partial_path(later / "scores" / "contains.jsonl")) >= 2)
    assert (
        lines(partial_path(later / "scores" / "regex.jsonl")) == 1 + 3000
        and not (later / "scores" / "regex.jsonl").exists()
    )
    assert bertjudge(*args, "--output", later).returncode == 0
    assert (later / "scores" / "regex.jsonl").read_bytes() == (
        tmp_path / "fresh" / "scores" / "regex.jsonl"
    ).read_bytes()

    # a resume after a labelled row changed is refused
    killed_when(
        [*args, "--output", tmp_path / "again"],
        lambda: lines(partial_path(tmp_path / "again" / "scores" / "regex.jsonl")) >= 2,
    )
    edited = math_rows(3000)
    edited[0]["label"] = 1 - edited[0]["label"]
    write_records(data, edited)
    refused = bertjudge(*args, "--output", tmp_path / "again")
    assert refused.returncode == 2 and "regex.jsonl.partial.jsonl:2: row 'm0' is not the labelled row" in refused.stderr


KILLER = '''
import os, signal
from lightning.pytorch.callbacks import Callback


class KillAtStep(Callback):
    """SIGKILL this process after optimizer step $KILL_AT_STEP (when the variable is set)."""

    def on_train_batch_end(self, trainer, *args):
        step = os.environ.get("KILL_AT_STEP")
        if step and trainer.global_step == int(step):
            os.kill(os.getpid(), signal.SIGKILL)
'''


def test_fit(tiny_backbone, tmp_path):
    (tmp_path / "killer.py").write_text(KILLER)
    env = {**ENV, "PYTHONPATH": f"{ROOT}{os.pathsep}{tmp_path}"}

    def args(run: Path) -> list:
        checkpoint = {
            "class_path": "lightning.pytorch.callbacks.ModelCheckpoint",
            "init_args": {
                "dirpath": str(run / "checkpoints"),
                "filename": "best",
                "monitor": "val/acc",
                "mode": "max",
                "save_last": True,
            },
        }
        return [
            "fit",
            "--seed_everything=0",
            "--model=bertjudge.judges.encoder.EncoderJudge",
            f"--model.backbone={tiny_backbone}",
            "--model.dropout=0.0",
            "--model.lr=1e-3",
            "--model.effective_batch_size=4",
            "--data.train=[embedded:train?n=600]",
            "--data.val=[embedded:val?n=40]",
            "--data.batch_size=4",
            "--trainer.max_epochs=1",
            "--trainer.val_check_interval=50",
            "--trainer.precision=32-true",
            "--trainer.logger=false",
            "--trainer.enable_progress_bar=false",
            f"--trainer.default_root_dir={run}",
            f"--trainer.callbacks+={json.dumps(checkpoint)}",
            "--trainer.callbacks+=killer.KillAtStep",
            "--test_after_fit=false",
        ]

    run = tmp_path / "run"
    killed = subprocess.run(
        [sys.executable, "-m", "bertjudge", *args(run)],
        cwd=ROOT,
        env={**env, "KILL_AT_STEP": "70"},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
    assert (run / "checkpoints" / "last.ckpt").is_file() and not (run / "judge").exists()
    resumed = bertjudge(*args(run), env=env)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert f"resuming the interrupted run from {run / 'checkpoints' / 'last.ckpt'}" in resumed.stderr
    assert not (run / "checkpoints" / "last.ckpt").exists()  # a finished run leaves nothing to resume
    fresh = bertjudge(*args(tmp_path / "fresh"), env=env)
    assert fresh.returncode == 0, fresh.stderr[-3000:]
    steps = [
        json.loads((r / "judge" / "judge.json").read_text())["provenance"]["recipe"]["steps"]
        for r in (run, tmp_path / "fresh")
    ]
    assert steps == [150, 150]  # 600 rows / 4: every batch trained on once
    weights, expected = (load_file(r / "judge" / "model.safetensors") for r in (run, tmp_path / "fresh"))
    for name in expected:
        np.testing.assert_allclose(weights[name], expected[name], atol=1e-5, err_msg=name)

    # a resume with another configuration is refused
    killed = subprocess.run(
        [sys.executable, "-m", "bertjudge", *args(tmp_path / "third")],
        cwd=ROOT,
        env={**env, "KILL_AT_STEP": "70"},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert killed.returncode == -signal.SIGKILL
    refused = bertjudge(*args(tmp_path / "third"), "--model.lr=2e-3", env=env)
    assert refused.returncode == 2 and "the last checkpoint of a run with another configuration" in refused.stderr
    restarted = bertjudge(*args(tmp_path / "third"), "--model.lr=2e-3", "--restart=true", env=env)
    assert restarted.returncode == 0 and "starting over" in restarted.stderr
