"""``benchmarks/throughput.py`` end to end on a tiny random judge: every mode timed in turns, one CSV row each."""

from __future__ import annotations

import csv
import statistics

import pytest
from cli_run import benchmark_script

from bertjudge.core.formats import JudgeFormat
from bertjudge.core.records import normalize, write_records
from bertjudge.data.sources import load_source
from bertjudge.judges.encoder import EncoderJudge
from bertjudge.judges.inference import PRECISIONS, auto_candidates


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


@pytest.mark.slow  # 10 s: the GEMM peaks, and auto's check made again before every timed pass
def test_default_mode_times_judge_score_with_autos_check_in_every_pass(tiny_backbone, tmp_path, capsys):
    EncoderJudge(backbone=tiny_backbone, format=JudgeFormat(max_length=64)).export(tmp_path / "judge")
    rows = [
        normalize(
            {"question": f"What is {i} * 2?", "candidate": "So " * (i % 7) + str(2 * i), "references": [str(2 * i)]}
        )
        for i in range(40)
    ]
    data = write_records(tmp_path / "rows.jsonl", rows)
    out = tmp_path / "throughput.csv"
    script = benchmark_script("throughput")
    args = ["--judge", str(tmp_path / "judge"), "--data", str(data), "--repeats", "2", "--output", str(out)]
    assert script.main([*args, "--modes", "naive", "fp32", "default"]) == 0
    table = list(csv.DictReader(out.open()))
    assert [r["mode"] for r in table] == ["naive", "fp32", "default"]  # naive listed or not, timed once, first
    default = table[-1]
    chosen = auto_candidates("cpu")  # bf16 where this CPU has it, else none: fp32
    assert default["auto_mode"] in (*chosen, "fp32") and float(default["auto_seconds"]) > 0
    assert int(default["token_budget"]) == 2048  # judge.score's: 32 rows x 64 tokens
    # verdicts against the engine's fp32 mode, over every row
    assert default["fp32_reference"] == "fp32" and int(default["rows"]) == 40
    differing = int(default["verdicts_differing_fp32"])
    assert float(default["verdict_agreement_fp32"]) == pytest.approx(1 - differing / 40, abs=1e-4)
    if default["auto_mode"] == "fp32":  # the engine's fp32 mode in the same batches: the same scores
        assert float(default["max_score_diff_fp32"]) == 0.0
    captured = capsys.readouterr()
    # auto said what it chose at the warm-up, in each of the 2 rounds' 3 passes (Timer.timeit(1): 2 warm-up calls,
    # then the timed one) and once more for auto_seconds: every pass made the check afresh, as a fresh process does
    assert captured.err.count("bertjudge: precision auto -> ") == 1 + 2 * 3 + 1
    assert f"default: judge.score with auto -> {default['auto_mode']}" in captured.out
    assert "the naive loop, paired (target 2.5x)" in captured.out and "of 40 rows" in captured.out


def test_modes_are_every_precision_and_default_and_the_real2000_preset_is_2000_development_rows():
    script = benchmark_script("throughput")
    args = script.parser().parse_args(["--modes", "naive", *PRECISIONS, "default", "--preset", "real2000"])
    assert args.modes == ["naive", *PRECISIONS, "default"]  # whatever PRECISIONS holds, no list of its own
    with pytest.raises(SystemExit):
        script.parser().parse_args(["--preset", "real2000", "--data", "embedded:val"])  # one or the other
    specs, expected = script.PRESETS["real2000"]
    assert specs == script.REAL2000 and expected == 2000
    assert not any("real-test-v3" in spec for spec in specs)  # the test set is never benchmarked on
    records = [r for spec in specs for r in load_source(spec)]
    assert len(records) == 2000 and len({r["id"] for r in records}) == 2000
    assert {r["category"] for r in records} == {"open_qa", "open_math", "multiple_choice", "context_extraction"}
