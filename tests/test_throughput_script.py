"""``benchmarks/throughput.py`` end to end on a tiny random judge: every mode timed in turns, one CSV row each."""

from __future__ import annotations

import csv
import statistics

import pytest
from cli_run import benchmark_script

from bertjudge.core.formats import JudgeFormat
from bertjudge.core.records import normalize, write_records
from bertjudge.judges.encoder import EncoderJudge


@pytest.mark.slow  # 12 s: the GEMM peaks are timed for a second each
def test_throughput_writes_one_row_per_mode_with_agreement_and_spread(tiny_backbone, tmp_path, capsys):
    EncoderJudge(backbone=tiny_backbone, format=JudgeFormat(max_length=64)).export(tmp_path / "judge")
    rows = [
        normalize(
            {
                "question": f"What is {i} + 1?",
                "candidate": "Let me see. " * (i % 5) + str(i + 1),
                "references": [str(i + 1)],
                "label": 1,
            }
        )
        for i in range(40)
    ]
    data = write_records(tmp_path / "rows.jsonl", rows)
    out = tmp_path / "throughput.csv"
    script = benchmark_script("throughput")
    assert (
        script.main(
            [
                "--judge",
                str(tmp_path / "judge"),
                "--data",
                str(data),
                "--modes",
                "fp32",
                "bf16",
                "--repeats",
                "2",
                "--profile",
                "bf16",
                "--output",
                str(out),
            ]
        )
        == 0
    )
    table = list(csv.DictReader(out.open()))
    assert [r["mode"] for r in table] == ["naive", "fp32", "bf16"]
    by_mode = {r["mode"]: r for r in table}
    assert float(by_mode["fp32"]["verdict_agreement_fp32"]) == 1.0  # fp32 is the reference
    assert float(by_mode["fp32"]["max_score_diff_fp32"]) == 0.0
    assert float(by_mode["naive"]["max_score_diff_fp32"]) < 1e-5  # the same network and text, other batches
    for r in table:
        assert int(r["rows"]) == 40 and float(r["samples_per_s"]) > 0 and float(r["spread"]) >= 0
        naive, mine = (list(map(float, row["round_seconds"].split())) for row in (by_mode["naive"], r))
        assert len(mine) == 2 and float(r["seconds"]) == pytest.approx(statistics.median(mine), abs=1e-3)
        paired = statistics.median(n / t for n, t in zip(naive, mine))  # the naive pass over this one, round by round
        assert float(r["vs_naive"]) == pytest.approx(paired, rel=0.05, abs=0.01)  # seconds are rounded to 1 ms
    assert all(r["busy"] in ("", "yes") and float(r["other_load"]) >= 0 for r in table)
    assert all(float(r["machine_gflops"]) > 0.1 for r in table)  # the machine's speed around the passes
    printed = capsys.readouterr().out
    ceilings = {r["ceiling_vs_naive"] for r in table}  # one run, one ceiling: the naive loop at the bf16 peak
    assert len(ceilings) == 1 and float(next(iter(ceilings))) > 0
    assert f"ceiling: {float(next(iter(ceilings))):.2f}x naive" in printed
    profiled = printed.split("bf16: share of the pass's operator time")[1]
    assert "aten::" in profiled and "%" in profiled  # where the bf16 pass's time went, by operator
    assert by_mode["naive"]["token_budget"] == "" and int(by_mode["fp32"]["token_budget"]) == 2048

    # several budgets: every mode at each, timed in turns, a row each
    budgets = tmp_path / "budgets.csv"
    args = ["--judge", str(tmp_path / "judge"), "--data", str(data), "--modes", "fp32", "--repeats", "1"]
    assert script.main([*args, "--token-budget", "256", "1024", "--output", str(budgets)]) == 0
    table = list(csv.DictReader(budgets.open()))
    assert [(r["mode"], r["token_budget"]) for r in table] == [("naive", ""), ("fp32", "256"), ("fp32", "1024")]
    assert all(float(r["max_score_diff_fp32"]) < 1e-5 for r in table)  # other batches, the same scores
