"""``predict`` with ``ScoreFileWriter`` on several processes: every process writes its own shard as it goes and
the first merges them in the split's order. Two CPU processes (DDP, gloo, launched as subprocesses the way
Lightning launches GPUs) give the file one process gives; the merge writes a repeated row once and refuses
shards that miss a row."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from bertjudge.core.records import RecordError, read_records
from bertjudge.evaluation.predict_writer import merge_shards
from bertjudge.judges.encoder import EncoderJudge
from bertjudge.judges.loading import Judge

ROOT = Path(__file__).resolve().parents[1]
WRITER = "bertjudge.evaluation.predict_writer.ScoreFileWriter"


@pytest.fixture(scope="module")
def judge_folder(tiny_backbone, tmp_path_factory):
    """A tiny random judge exported to a folder: its classification head is saved, so every run scores alike."""
    return EncoderJudge(backbone=tiny_backbone).export(tmp_path_factory.mktemp("judge") / "tiny")


def write_rows(path: Path, n: int) -> Path:
    with open(path, "w") as handle:
        for i in range(n):
            row = {"question": f"What is {i}*3?", "candidate": "Final answer: " + "x" * (i % 5) + str(3 * i)}
            handle.write(json.dumps({**row, "reference": str(3 * i), "note": i}) + "\n")
    return path


def predict(
    folder: Path, rows: Path, out: Path, devices: int, root: Path, *extra: str
) -> tuple[subprocess.CompletedProcess, float]:
    """``python -m bertjudge predict --config …`` on ``devices`` CPU processes; (the run, its seconds)."""
    root.mkdir(parents=True, exist_ok=True)
    config = root / "predict.yaml"
    config.write_text(
        "model:\n"
        "  class_path: bertjudge.judges.encoder.EncoderJudge\n"
        f"  init_args: {{backbone: {folder}}}\n"
        f"data: {{predict: [{rows}], eval_batch_size: 3}}\n"
        f"trainer: {{logger: false, enable_progress_bar: false, default_root_dir: {root}}}\n"
    )
    strategy = ["--trainer.strategy", "ddp"] if devices > 1 else []
    command = [sys.executable, "-m", "bertjudge", "predict", "--config", str(config)]
    command += ["--trainer.accelerator", "cpu", "--trainer.devices", str(devices), *strategy]
    command += [f"--trainer.callbacks+={WRITER}", "--trainer.callbacks.output", str(out), *extra]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}  # two processes on a small CPU: one thread each
    start = time.perf_counter()
    run = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600, env=env)
    return run, time.perf_counter() - start


@pytest.mark.slow
def test_two_processes_write_the_file_one_process_writes(judge_folder, tmp_path):
    rows = write_rows(tmp_path / "in.jsonl", 11)  # 11 rows in batches of 3: 6 and 5 rows, an uneven last batch
    files = {}
    for devices, suffix in ((1, ".jsonl"), (2, ".parquet")):  # the two formats write_records writes
        out = tmp_path / f"out-{devices}{suffix}"
        shards = ["--trainer.callbacks.shards", str(tmp_path / "shards")] if devices == 1 else []  # the option
        run, seconds = predict(judge_folder, rows, out, devices, tmp_path / f"run-{devices}", *shards)
        assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-3000:]
        assert f"wrote 11 scores to {out}" in run.stdout
        if devices == 2:  # really two processes, joined by gloo
            assert "distributed_backend=gloo" in run.stderr and "Starting with 2 processes" in run.stderr
        assert not Path(f"{out}.shards").exists() and not (tmp_path / "shards").exists()  # merged and removed
        print(f"predict on {devices} process(es): {seconds:.1f} s")
        files[devices] = read_records(out)
    one, two = files[1], files[2]
    assert [r["id"] for r in two] == [r["id"] for r in one] and len({r["id"] for r in two}) == 11
    np.testing.assert_allclose([r["score"] for r in two], [r["score"] for r in one], atol=1e-6, rtol=0)
    assert sorted(r["note"] for r in two) == list(range(11))  # each input row once, its own fields kept
    judge = Judge.load(str(judge_folder))
    expected = dict(zip([r["id"] for r in one], judge.score_records(one)))
    for row in two:  # the scores and fields the judge command writes
        assert row["score"] == pytest.approx(expected[row["id"]], abs=1e-5)
        assert row["verdict"] == (row["score"] >= judge.threshold) and row["judge"] == judge.name
        assert {"id", "question", "candidate", "references", "input_hash"} <= set(row)


@pytest.mark.slow
def test_fewer_rows_than_processes_is_one_line(judge_folder, tmp_path):
    rows = write_rows(tmp_path / "in.jsonl", 1)  # Lightning would give the second process no row (and assert)
    run, _ = predict(judge_folder, rows, tmp_path / "out.jsonl", 2, tmp_path / "run")
    assert run.returncode == 2 and "data.predict: 1 rows for 2 processes; predict on 1 devices or fewer" in run.stderr
    assert not (tmp_path / "out.jsonl").exists() and not (tmp_path / "out.jsonl.shards").exists()


def write_shard(path: Path, indices: list[int]) -> Path:
    path.write_text("".join(json.dumps([i, {"id": f"r{i}"}]) + "\n" for i in indices))
    return path


def test_the_merge_interleaves_shards_and_writes_a_repeated_row_once(tmp_path):
    # row 4 scored by both processes (each shard in increasing order) is written once
    shards = [write_shard(tmp_path / "rank-0.jsonl", [0, 2, 4]), write_shard(tmp_path / "rank-1.jsonl", [1, 3, 4])]
    assert [row["id"] for row in merge_shards(shards, 5)] == ["r0", "r1", "r2", "r3", "r4"]


@pytest.mark.parametrize(
    ("indices", "total", "message"),
    [
        (([0, 2], [3]), 4, r"miss row 1 \(4 rows\)"),
        (([0, 2], [1]), 4, r"hold 3 of 4 rows"),
        (([0, 2], [1, 3]), 3, r"miss index 3 past the 3 rows"),
    ],
)
def test_the_merge_refuses_shards_that_miss_a_row(tmp_path, indices, total, message):
    shards = [write_shard(tmp_path / f"rank-{r}.jsonl", rows) for r, rows in enumerate(indices)]
    with pytest.raises(RecordError, match=message + r".*no shuffling sampler"):
        list(merge_shards(shards, total))
