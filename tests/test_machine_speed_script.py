"""``benchmarks/machine_speed.py``: GEMM speed samples in fp32 and bf16, one thread and all of them, to a CSV."""

from __future__ import annotations

import csv

import pytest
import torch
from cli_run import benchmark_script


def test_samples_every_series_until_the_time_is_up(tmp_path, capsys):
    out = tmp_path / "speed.csv"
    script = benchmark_script("machine_speed")
    assert script.main(["--seconds", "0.3", "--sample-time", "0.02", "--n", "64", "--output", str(out)]) == 0
    rows = list(csv.DictReader(out.open()))
    threads = sorted({1, torch.get_num_threads()})
    assert rows and list(rows[0]) == ["t_s"] + [f"{d}_x{t}" for t in threads for d in ("fp32", "bf16")]
    assert all(float(row[key]) > 0 for row in rows for key in row if key != "t_s")
    assert [float(r["t_s"]) for r in rows] == sorted(float(r["t_s"]) for r in rows)
    assert f"{len(rows)} samples" in capsys.readouterr().out


def test_nonsense_arguments_are_refused():
    with pytest.raises(SystemExit) as exit_:
        benchmark_script("machine_speed").main(["--seconds", "0"])
    assert exit_.value.code == 2
