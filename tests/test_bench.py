"""bertjudge.evaluation.bench: FLOPs against hand computations, timing, results files, the Pareto front and plot."""

import csv
import hashlib
import json
import math
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli_run import benchmark_script
from transformers import BertConfig, Qwen3Config

from bertjudge.cli.main import main
from bertjudge.evaluation import bench, bench_flops, bench_results, bench_timing, publish

H, LAYERS, HEADS, INTER, VOCAB = 32, 2, 2, 64, 100
RECORDS = [{"question": "What is 2+3?", "candidate": "It is 5.", "references": ["5"], "label": 1}] * 3


def test_encoder_flops_match_a_hand_count():
    config = BertConfig(
        hidden_size=H, num_hidden_layers=LAYERS, num_attention_heads=HEADS, intermediate_size=INTER, vocab_size=VOCAB
    )
    L = 10
    per_layer = 2 * L * (4 * H * H + 2 * H * INTER) + 2 * (2 * L * L * H)  # q,k,v,o + FFN; QK^T and AV
    expected = LAYERS * per_layer + 2 * H * H + 2 * H * 1  # pooler on [CLS], one-logit classifier
    flops, params = bench_flops.judgment_flops(config, "encoder", L)
    assert flops == expected
    assert bench_flops.judgment_flops(config, "encoder", 2 * L)[0] > 2 * flops  # attention is quadratic


def tiny_qwen3():
    return Qwen3Config(
        vocab_size=VOCAB,
        hidden_size=H,
        intermediate_size=INTER,
        num_hidden_layers=LAYERS,
        num_attention_heads=HEADS,
        num_key_value_heads=1,
        head_dim=16,
    )


def test_direct_generative_flops_are_a_prefill_with_the_head_on_one_position():
    L, hd = 12, 16
    proj = 2 * L * H * (HEADS * hd) * 2 + 2 * L * H * hd * 2  # q and o; k and v (one kv head)
    attention = 2 * (2 * L * L * hd * HEADS)
    expected = LAYERS * (proj + attention + 3 * 2 * L * H * INTER) + 2 * H * VOCAB
    assert bench_flops.judgment_flops(tiny_qwen3(), "causal", L, "direct")[0] == expected


def test_reasoning_flops_equal_the_sum_of_counted_decode_steps():
    import torch

    L, k = 12, 5
    config = tiny_qwen3()
    model = bench_flops.build_model(config, "causal")
    prefill = bench_flops.count_flops(model, input_ids=bench_flops._ids(L), logits_to_keep=1)
    steps = 0
    with torch.no_grad():
        cache = model(input_ids=bench_flops._ids(L), use_cache=True, logits_to_keep=1).cache
        for _ in range(k):
            steps += bench_flops.count_flops(model, input_ids=bench_flops._ids(1), cache=cache, logits_to_keep=1)
    assert bench_flops.judgment_flops(config, "causal", L, "reasoning", k=k)[0] == prefill + steps


@pytest.mark.parametrize(
    "key,published",
    [
        ("qwen3-0.6b", 0.596e9),
        ("qwen3-4b", 4.02e9),
        ("qwen3-14b", 14.77e9),
        ("gemma3-1b", 1.0e9),
        ("eurobert-210m", 0.21e9),
        ("modernbert-base", 0.1496e9),
        ("minilm-l6", 22.7e6),
    ],
)
def test_architecture_configs_have_the_published_sizes(key, published):
    arch = bench_flops.ARCHITECTURES[key]
    model = bench_flops.build_model(arch.make_config(), arch.kind)
    assert sum(p.numel() for p in model.parameters()) == pytest.approx(published, rel=0.02)


def test_qwen3_14b_prefill_on_the_meta_device_matches_notes():
    flops, params = bench_flops.judgment_flops(
        bench_flops.ARCHITECTURES["qwen3-14b"].make_config(), "causal", 512, "direct"
    )
    assert flops == pytest.approx(13.7e12, rel=0.01) and params == pytest.approx(14.77e9, rel=0.001)


def test_measure_times_a_small_architecture(monkeypatch):
    arch = bench_flops.Arch(
        "test/tiny-bert",
        "encoder",
        "bert",
        dict(
            hidden_size=H, num_hidden_layers=LAYERS, num_attention_heads=HEADS, intermediate_size=INTER, vocab_size=1000
        ),
    )
    monkeypatch.setitem(bench_flops.ARCHITECTURES, "tiny", arch)
    row, accuracy = bench.measure(bench.Subject("tiny.arch", "encoder", "tiny"), RECORDS, min_run_time=0.3)
    assert accuracy == []  # an architecture has no trained judge to score with
    assert row["flops"] > 0 and row["tokens"] > 5 and row["params"] > 0
    assert 0 < row["latency_p50_ms"] <= row["latency_p95_ms"] and row["throughput_per_s"] > 0
    assert row["best_batch_size"] in (1, 4, 16)
    # torch.utils.benchmark's blocked_autorange: blocks of 1, 10, 100 ... calls, runs for min_run_time at least
    assert row["timing_runs"] >= bench_timing.MIN_RUNS and math.log10(row["calls_per_run"]).is_integer()
    # the spread (IQR / median of the runs) is how noisy the machine was: any finite value is right on a busy
    # machine; its formula is checked on a known sleep below
    assert 0 <= row["latency_spread"] and math.isfinite(row["latency_spread"])
    assert row["peak_mem_mb"] > 0 and row["loadavg_before"] != "" and 0 <= row["other_load"] <= 1.1
    assert row["machine_gflops"] > 0.1  # the machine's GEMM speed around the timing


def test_calls_are_timed_in_blocked_autorange_runs_of_a_known_length():
    m = bench_timing.measure_calls(lambda: time.sleep(0.005), min_run_time=0.1, min_runs=7)
    assert type(m).__module__.startswith("torch.utils.benchmark") and len(m.times) >= 7
    assert 0.005 <= m.median < 0.05 and m.number_per_run >= 1  # a sleep of 5 ms takes at least 5 ms
    cells = bench_timing.latency_cells(m, per_call=5)  # a call that judges 5: latency per judgment
    assert cells["latency_p50_ms"] == pytest.approx(1000 * m.median / 5) and cells["timing_runs"] == len(m.times)
    assert cells["latency_spread"] == pytest.approx(m.iqr / m.median, abs=1e-4)


def test_large_models_are_costed_but_not_timed():
    row, _ = bench.measure(bench.Subject("qwen3-14b.direct", "direct", "qwen3-14b"), None)
    assert row["flops"] > 1e12 and "not timed" in row["notes"] and "latency_p50_ms" not in row


def test_results_are_replaced_by_name(tmp_path):
    env = {"device": "cpu", "dtype": "fp32", "torch": "9.9"}
    bench_results.write_results(
        [{"name": "a.x", "flops": 1, **env}, {"name": "b.x", "flops": 2, **env}], "cost", tmp_path
    )
    [path] = bench_results.write_results([{"name": "a.x", "flops": 3, **env}], "cost", tmp_path)
    assert path.name == "cost-cpu-fp32-torch9.9.csv"
    rows = list(csv.DictReader(path.open()))
    assert [(r["name"], r["flops"]) for r in rows] == [("a.x", "3"), ("b.x", "2")]
    assert not list(tmp_path.glob(".*"))  # no temporary file left


def test_pareto_front():
    points = [("regex", 0, 0.7), ("small", 1e9, 0.8), ("worse", 2e9, 0.75), ("big", 1e12, 0.9), ("tie", 2e12, 0.9)]
    assert bench_results.pareto_front(points) == {"regex", "small", "big"}


def test_pareto_plot_and_ratio(tmp_path):
    env = {"device": "cpu", "dtype": "fp32", "torch": "9.9"}
    bench_results.write_results(
        [
            {"name": "eurobert-210m.bertjudge", "judge_kind": "encoder", "flops": 2e10, **env},
            {"name": "qwen3-14b.direct", "judge_kind": "direct", "flops": 5e12, **env},
            {"name": "regex.v1", "judge_kind": "regex", "flops": 0, **env},
        ],
        "cost",
        tmp_path,
    )
    bench_results.write_results(
        [{"name": "regex.v1", "accuracy": 0.7, "n": 10, "eval_set": "x", **env}], "accuracy", tmp_path
    )
    [rows] = bench_results.result_tables(tmp_path, tmp_path / "no-quotes.csv").values()
    assert bench_results.flops_ratio(rows) == pytest.approx(250)
    out = bench_results.plot_pareto(rows, tmp_path / "pareto.png")
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# what the regex judge says of each (checked below): right, wrong, right; right; wrong (label 0, it says 1)
EVAL_ROWS = [
    {
        "category": "open_qa",
        "question": "Who wrote Hamlet?",
        "candidate": "William Shakespeare",
        "reference": "Shakespeare",
        "label": 1,
    },
    {
        "category": "open_qa",
        "question": "What is the capital of France?",
        "candidate": "Lyon",
        "reference": "Paris",
        "label": 1,
    },
    {
        "category": "open_qa",
        "question": "What is the capital of Italy?",
        "candidate": "Rome",
        "reference": "Rome",
        "label": 1,
    },
    {
        "category": "multiple_choice",
        "question": "Pick one.\nA. red\nB. blue",
        "candidate": "The answer is B.",
        "reference": "B",
        "label": 1,
    },
    {
        "category": "open_math",
        "question": "What is 2+3?",
        "candidate": "The answer is 5.",
        "reference": "5",
        "label": 0,
    },
]


def eval_file(folder, name="mini-set.jsonl"):
    path = folder / name
    path.write_text("".join(json.dumps(row) + "\n" for row in EVAL_ROWS))
    return path


def test_accuracy_is_measured_overall_and_per_category_on_the_eval_file(tmp_path):
    from bertjudge.core.records import read_records
    from bertjudge.judges.regex import RegexJudge

    path = eval_file(tmp_path)
    assert list(RegexJudge().score_records(read_records(path))) == [1, 0, 1, 1, 1]
    eval_set = bench.load_eval_set(path)
    assert eval_set.name == "mini-set" and len(eval_set.records) == 5
    _, [accuracy] = bench.measure(bench.Subject("regex.v1", "regex"), None, eval_sets=[eval_set])
    assert accuracy["accuracy"] == 0.6 and accuracy["n"] == 5
    assert accuracy["acc_open_qa"] == pytest.approx(2 / 3, abs=1e-4)
    assert accuracy["acc_multiple_choice"] == 1.0 and accuracy["acc_open_math"] == 0.0
    assert accuracy["acc_context_extraction"] is None  # no row of that category
    assert accuracy["eval_set"] == "mini-set"
    assert accuracy["eval_sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()[:12]
    [written] = bench_results.write_results([accuracy], "accuracy", tmp_path / "results")
    [row] = bench_results.read_csv(written)
    assert list(row) == bench_results.ACCURACY_FIELDS and row["acc_context_extraction"] == ""
    assert row["acc_open_qa"] == "0.6667"


def test_the_default_eval_sets_are_real_test_v2_and_v3_and_v3_is_shown():
    assert [path.name for path in bench.EVAL_FILES] == ["real-test-v2.jsonl.gz", "real-test-v3.jsonl.gz"]
    assert bench_results.HEADLINE_SET == "real-test-v3" and bench_results.SHOWN_SETS == ("real-test-v3", "real-test-v2")
    assert bench_results.CATEGORIES == ("open_qa", "multiple_choice", "context_extraction", "open_math")


def test_cli_runs_the_regex_judge(tmp_path, capsys):
    path = eval_file(tmp_path, "real-test-v3.jsonl")  # named as the headline set: its rows reach the table
    results = tmp_path / "results"
    assert (
        main(
            [
                "bench",
                "run",
                "--only",
                "regex.v1",
                "--n",
                "20",
                "--results",
                str(results),
                "--device",
                "cpu",
                "--data",
                str(path),
                "--min-run-time",
                "0.2",
                "--max-load",
                "1",  # the CPU time of others, per core, is at most 1: never busy
            ]
        )
        == 0
    )
    [cost] = results.glob("cost-cpu-fp32-*.csv")
    [row] = list(csv.DictReader(cost.open()))
    assert row["name"] == "regex.v1" and row["flops"] == "0" and float(row["latency_p50_ms"]) > 0
    [accuracy] = results.glob("accuracy-cpu-fp32-*.csv")
    row = next(csv.DictReader(accuracy.open()))
    assert (row["accuracy"], row["n"], row["eval_set"], row["acc_multiple_choice"]) == ("0.6", "5", "real-test-v3", "1")
    [table] = bench_results.result_tables(results, tmp_path / "no-quotes.csv").values()
    assert table[0]["accuracy"] == "0.6" and table[0]["front"]
    missing = str(tmp_path / "none.jsonl")
    assert main(["bench", "run", "--only", "regex.v1", "--results", str(results), "--data", missing]) == 2
    assert main(["bench", "run", "--only", "regex.v1", "--results", str(results), "--eval", missing]) == 2  # renamed


def test_only_real_test_v3_accuracies_reach_the_table_the_front_and_the_plot(tmp_path, monkeypatch):
    import matplotlib.axes

    cpu, cuda = {"device": "cpu", "dtype": "fp32", "torch": "9.9"}, {"device": "cuda", "dtype": "fp32", "torch": "9.9"}
    bench_results.write_results(
        [
            {"name": name, "judge_kind": "encoder", "flops": flops, **cpu}
            for name, flops in [
                ("real.x", 2e9),
                ("embedded.x", 1e9),
                ("quoted.x", 1e10),
                ("none.x", 3e9),
                ("elsewhere.x", 4e9),
            ]
        ],
        "cost",
        tmp_path,
    )
    per_category = {"acc_open_qa": 0.8, "acc_multiple_choice": 0.9, "acc_context_extraction": 0.7, "acc_open_math": ""}
    bench_results.write_results(
        [
            {
                "name": "real.x",
                "accuracy": 0.81,
                **per_category,
                "n": 496,
                "eval_set": "real-test-v3",
                "eval_sha256": "f52bf775ace6",
                **cpu,
            },
            {"name": "real.x", "accuracy": 0.99, "n": 2615, "eval_set": "real-test-v1", **cpu},  # not shown
            {"name": "real.x", "accuracy": 0.77, "n": 660, "eval_set": "real-test-v2", **cpu},  # its own column
            {"name": "embedded.x", "accuracy": 0.95, "n": 2000, "eval_set": "embedded:test?n=2000&seed=0", **cpu},
            {"name": "elsewhere.x", "accuracy": 0.99, "n": 2000, "eval_set": "embedded:test?n=2000&seed=0", **cpu},
        ],
        "accuracy",
        tmp_path,
    )
    bench_results.write_results(
        [{"name": "elsewhere.x", "accuracy": 0.85, "n": 496, "eval_set": "real-test-v3", **cuda}], "accuracy", tmp_path
    )  # a real-test-v3 row from another device beats an embedded one here
    quoted = tmp_path / "quoted.csv"
    quoted.write_text("name,accuracy,eval_set,source\nquoted.x,0.97,authors' test,a paper (table 2)\n")
    [rows] = bench_results.result_tables(tmp_path, quoted).values()
    by_name = {r["name"]: r for r in rows}
    assert by_name["real.x"]["accuracy"] == "0.81" and by_name["real.x"]["acc_multiple_choice"] == "0.9"
    assert by_name["real.x"]["acc_open_math"] == "" and "sha256 f52bf775ace6" in by_name["real.x"]["accuracy_source"]
    assert by_name["embedded.x"]["accuracy"] == "" and by_name["embedded.x"]["acc_open_qa"] == ""
    assert by_name["embedded.x"]["accuracy_source"].startswith("not measured on real-test-v3 yet")
    assert by_name["real.x"]["accuracy_real-test-v2"] == "0.77" and by_name["embedded.x"]["accuracy_real-test-v2"] == ""
    assert by_name["quoted.x"]["accuracy"] == "" and by_name["quoted.x"]["quoted_accuracy"] == "0.97"
    assert "quoted on another test set" in by_name["quoted.x"]["accuracy_source"]
    assert by_name["elsewhere.x"]["accuracy"] == "0.85"
    assert by_name["none.x"]["accuracy"] == "" and by_name["none.x"]["accuracy_source"] == ""
    assert {r["name"] for r in rows if r["front"]} == {"real.x", "elsewhere.x"}  # 0.95 and 0.97 would beat both
    table = bench_results.markdown_table(rows)
    assert "| accuracy (real-test-v3) | open QA | MC | extraction | math | accuracy (real-test-v2) | front |" in table
    assert "| 0.810 | 0.8 | 0.9 | 0.7 |  | 0.770 | * |" in table
    line = {r.split("`")[1]: r for r in table.splitlines()[2:]}
    assert "0.95" not in line["embedded.x"] and "not measured on real-test-v3 yet" in line["embedded.x"]
    assert "(0.970: quoted on another test set" in line["quoted.x"] and line["quoted.x"].endswith("|  |")
    points = []
    scatter = matplotlib.axes.Axes.scatter
    monkeypatch.setattr(
        matplotlib.axes.Axes,
        "scatter",
        lambda self, x, y, **kw: points.append((x, y, kw.get("marker"))) or scatter(self, x, y, **kw),
    )
    bench_results.plot_pareto(rows, tmp_path / "pareto.png")
    assert sorted((x, y) for x, y, marker in points if marker != "|") == [(2e9, 0.81), (4e9, 0.85)]
    assert sorted(x for x, _, marker in points if marker == "|") == [1e9, 3e9, 1e10]  # cost only


def test_the_projects_own_judges_are_measured_from_their_built_folder(tiny_backbone, tmp_path):
    import yaml

    from bertjudge.judges.encoder import EncoderJudge

    EncoderJudge(backbone=tiny_backbone).export(tmp_path / "runs" / "own" / "judge")
    entry = {
        "class_path": "bertjudge.judges.encoder.EncoderJudge",
        "source": "file://../runs/own/judge",
        "build": "make own",
        "format": {"order": "QCR"},
        "architecture": "minilm-l6",
        "license": "MIT",
        "provenance": {"recipe": "configs/own.yaml"},
    }
    registry = tmp_path / "zoo" / "registry.yaml"
    registry.parent.mkdir()
    registry.write_text(
        yaml.safe_dump(
            {"minilm-l6.own": entry, "minilm-l6.missing": {**entry, "source": "file://../runs/missing/judge"}}
        )
    )
    subjects = {s.name: s for s in bench.default_subjects(registry)}
    assert subjects["minilm-l6.own"].folder == (tmp_path / "runs" / "own" / "judge").resolve()
    assert "minilm-l6.missing" not in subjects  # not built yet: nothing to measure, no random stand-in
    # its folder given again with --judge (by another path): measured once, under the registry's name
    again = bench.default_subjects(registry, [tmp_path / "runs" / "." / "own" / "judge"])
    assert [s.name for s in again if s.folder is not None and s.spec is None] == ["minilm-l6.own"]


def tiny_arch(monkeypatch, hidden: int = H, vocab: int = 1000) -> bench.Subject:
    config = dict(
        hidden_size=hidden,
        num_hidden_layers=LAYERS,
        num_attention_heads=HEADS,
        intermediate_size=INTER,
        vocab_size=vocab,
    )
    monkeypatch.setitem(
        bench_flops.ARCHITECTURES, f"tiny{hidden}", bench_flops.Arch("test/tiny", "encoder", "bert", config)
    )
    return bench.Subject(f"tiny{hidden}.arch", "encoder", f"tiny{hidden}")


def test_subjects_are_timed_in_rounds_taken_in_turns(monkeypatch, tmp_path):
    tiny = tiny_arch(monkeypatch)
    big = bench.Subject("qwen3-14b.direct", "direct", "qwen3-14b")  # costed, never timed: measured in round 1 only
    seen = []
    results = bench.measure_rounds(
        [bench.Subject("regex.v1", "regex"), tiny, big],
        RECORDS,
        rounds=3,
        eval_sets=[bench.load_eval_set(eval_file(tmp_path))],
        progress=lambda number, subject: seen.append((number, subject.name)),
        min_run_time=0.1,
    )
    # in turns: every timed subject once per round, round after round
    assert seen == [(1, "regex.v1"), (1, "tiny32.arch"), (1, "qwen3-14b.direct")] + [
        (n, name) for n in (2, 3) for name in ("regex.v1", "tiny32.arch")
    ]
    (regex, regex_accuracy), (tiny_row, tiny_accuracy), (big_row, _) = results
    assert regex["rounds"] == tiny_row["rounds"] == 3 and big_row["rounds"] == 0
    assert regex["machine_gflops"] > 0.1 and tiny_row["machine_gflops"] > 0.1  # the probe around every timing
    assert tiny_row["timing_runs"] >= 3 * bench_timing.MIN_RUNS and "medians of 3 rounds" in tiny_row["notes"]
    assert len(regex_accuracy) == 1 and tiny_accuracy == []  # accuracy measured once, in round 1
    with pytest.raises(ValueError, match="rounds"):
        bench.measure_rounds([tiny], RECORDS, rounds=0)


def test_rounds_are_merged_into_medians_the_largest_load_and_peak():
    def row(p50, p95, load, peak, throughput, batch, before, after, speed=300.0):
        return {
            "machine_gflops": speed,
            "name": "x.arch",
            "latency_p50_ms": p50,
            "latency_p95_ms": p95,
            "timing_runs": 10,
            "calls_per_run": 1,
            "throughput_per_s": throughput,
            "best_batch_size": batch,
            "peak_mem_mb": peak,
            "other_load": load,
            "busy": "yes" if load > 0.25 else "",
            "loadavg_before": before,
            "loadavg_after": after,
            "notes": "",
        }

    rounds = [row(10, 12, 0.01, 80, 100, 4, 0.1, 1.0), row(14, 15, 0.02, 85, 80, 16, 1.0, 1.5, speed=200.0)]
    rounds.append(row(12, 13, 0.03, 90, 90, 4, 1.5, 2.0, speed=290.0))
    merged = bench.merge_rounds(rounds, max_load=0.25)
    assert merged["latency_p50_ms"] == 12 and merged["latency_p95_ms"] == 13 and merged["throughput_per_s"] == 90
    assert merged["best_batch_size"] == 4 and merged["peak_mem_mb"] == 90 and merged["timing_runs"] == 30
    assert merged["machine_gflops"] == 290  # the machine's median speed over the rounds
    assert merged["other_load"] == 0.03 and merged["busy"] == ""  # the largest load of the rounds
    assert (merged["loadavg_before"], merged["loadavg_after"]) == (0.1, 2.0) and merged["rounds"] == 3
    assert merged["latency_spread"] == pytest.approx((13 - 11) / 12, abs=1e-4)  # IQR of the rounds' p50 / their median
    assert bench.merge_rounds(rounds[:1])["latency_p50_ms"] == 10 and bench.merge_rounds(rounds[:1])["rounds"] == 1


def test_busy_rounds_are_left_out_and_a_row_is_busy_only_when_every_round_was():
    def row(p50, load):
        return {"name": "x.arch", "latency_p50_ms": p50, "latency_p95_ms": p50, "timing_runs": 10, "calls_per_run": 1,
                "other_load": load, "busy": "yes" if load > 0.25 else "", "loadavg_before": load,
                "loadavg_after": load, "notes": ""}  # fmt: skip

    merged = bench.merge_rounds([row(30, 0.6), row(10, 0.01), row(12, 0.02)], max_load=0.25)
    assert merged["latency_p50_ms"] == 11 and merged["rounds"] == 2 and merged["busy"] == ""
    assert merged["other_load"] == 0.02 and merged["loadavg_before"] == 0.01  # the busy first round's cells too
    assert "medians of 2 rounds taken in turns (1 busy round(s) left out)" in merged["notes"]
    one = bench.merge_rounds([row(30, 0.6), row(10, 0.01)], max_load=0.25)
    assert one["latency_p50_ms"] == 10 and one["rounds"] == 1 and "1 busy round(s) left out" in one["notes"]
    busy = bench.merge_rounds([row(30, 0.6), row(20, 0.5)], max_load=0.25)
    assert busy["busy"] == "yes" and busy["rounds"] == 2 and busy["latency_p50_ms"] == 25  # every round was busy


def test_rounds_are_handed_over_as_they_end_and_a_failing_subject_leaves_the_others(monkeypatch):
    tiny = tiny_arch(monkeypatch)
    broken, late = bench.Subject("broken.arch", "encoder", "no-such-arch"), bench.Subject("late.v1", "regex")
    calls, measure = {"late.v1": 0}, bench.measure

    def failing_late(subject, records, **kwargs):  # late.v1 fails in its second round
        if subject.name == "late.v1":
            calls["late.v1"] += 1
            if calls["late.v1"] == 2:
                raise RuntimeError("out of memory")
        return measure(subject, records, **kwargs)

    monkeypatch.setattr(bench, "measure", failing_late)
    seen, errors = [], []
    results = bench.measure_rounds(
        [tiny, broken, late],
        RECORDS,
        rounds=3,
        on_round=lambda number, rows: seen.append((number, [None if c is None else c["rounds"] for c, _ in rows])),
        on_error=lambda subject, error: errors.append((subject.name, str(error))),
        min_run_time=0.1,
    )
    assert seen == [(1, [1, None, 1]), (2, [2, None, 1]), (3, [3, None, 1])]  # the results so far, round by round
    assert [name for name, _ in errors] == ["broken.arch", "late.v1"] and errors[1][1] == "out of memory"
    (tiny_row, _), (broken_row, broken_accuracy), (late_row, _) = results
    assert tiny_row["rounds"] == 3 and broken_row is None and broken_accuracy == [] and late_row["rounds"] == 1
    with pytest.raises(KeyError):  # without on_error, the error is raised
        bench.measure_rounds([broken], RECORDS, rounds=1)


def test_peak_memory_counts_the_weights_after_a_bigger_model_was_freed(monkeypatch):
    """The old 0 MB row: a model built after a bigger one reused resident pages, so the RSS did not grow."""
    import torch

    cells = {}
    for hidden in (256, 96):  # the bigger model first, freed before the smaller one is measured
        arch = bench_flops.ARCHITECTURES[tiny_arch(monkeypatch, hidden, vocab=30522).architecture]
        with bench_timing.PeakMemory("cpu") as peak:
            model = bench_flops.build_model(arch.make_config(), "encoder", device="cpu", attn=None)
            with torch.inference_mode():
                model(input_ids=bench_flops._ids(64, batch=4, device="cpu"))
        cells[hidden] = (
            bench_timing.peak_memory_cell(peak.mb, model),
            sum(p.numel() for p in model.parameters()) * 4 / 2**20,
        )
        del model
    (cell, note), weights_mb = cells[96]
    assert note == "" and cell >= weights_mb > 10  # 30522 x 96 embeddings alone are 11 MB
    assert cells[256][0][0] > cell
    assert bench_timing.peak_memory_cell(8.0, torch.nn.Linear(2048, 2048)) == (
        "",
        "peak memory not measured: grew 8 MB, less than the weights' 16 MB",
    )  # a growth below the weights measures nothing: an empty cell, never 0
    assert bench_timing.peak_memory_cell(None, torch.nn.Linear(2, 2))[0] == ""


class Spinner:
    """Another process that keeps one core busy: a real busy machine, for as long as the block runs."""

    def __enter__(self):
        code = "import sys; print('spinning', flush=True)\nwhile True: pass"
        self.proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout.readline().strip() == "spinning"
        return self

    def __exit__(self, *exc):
        self.proc.kill()
        self.proc.wait()


def test_in_tests_other_processes_never_make_the_machine_busy():
    """conftest's ``idle_machine``: a core kept busy by another process reads as no load, so no test's result
    depends on what runs beside the suite (the real reading: the ``real_load`` test below)."""
    with Spinner(), bench_timing.MachineLoad() as load:
        start = time.perf_counter()
        while time.perf_counter() - start < 0.5:  # work of its own, which is never counted as others'
            pass
    assert load.other_load is not None and load.other_load < 0.05 and not load.busy


def bench_run(results, *extra) -> list[str]:
    return [
        "bench",
        "run",
        "--only",
        "regex.v1",
        "--n",
        "20",
        "--results",
        str(results),
        "--min-run-time",
        "0.3",
        *extra,
    ]


def interrupt_at(monkeypatch, call: int, error: BaseException) -> None:
    """``bench.measure`` raises ``error`` at its ``call``-th call (counting from 1), and measures otherwise."""
    measure, calls = bench.measure, []

    def measure_until(subject, records, **kwargs):
        calls.append(subject.name)
        if len(calls) == call:
            raise error
        return measure(subject, records, **kwargs)

    monkeypatch.setattr(bench, "measure", measure_until)


def test_an_interrupted_run_keeps_the_rounds_it_finished(tmp_path, capsys, monkeypatch):
    eval_path, results = eval_file(tmp_path, "real-test-v1.jsonl"), tmp_path / "results"
    interrupt_at(monkeypatch, 3, KeyboardInterrupt())  # Ctrl-C in round 3 of 5
    assert main(bench_run(results, "--data", str(eval_path), "--rounds", "5")) == 130
    [row] = bench_results.read_csv(next(results.glob("cost-*.csv")))
    assert row["name"] == "regex.v1" and row["rounds"] == "2" and float(row["latency_p50_ms"]) > 0
    assert bench_results.read_csv(next(results.glob("accuracy-*.csv")))[0]["accuracy"] == "0.6"  # round 1's


def test_a_subject_that_fails_keeps_its_rounds_and_the_run_says_so_in_one_line(tmp_path, capsys, monkeypatch):
    eval_path, results = eval_file(tmp_path, "real-test-v1.jsonl"), tmp_path / "results"
    interrupt_at(monkeypatch, 2, RuntimeError("out of memory"))  # fails in round 2 of 3
    assert main(bench_run(results, "--data", str(eval_path), "--rounds", "3")) == 1
    err = capsys.readouterr().err
    assert "1 subject(s) failed: regex.v1 [cpu] (RuntimeError: out of memory); the others were written" in err
    [row] = bench_results.read_csv(next(results.glob("cost-*.csv")))
    assert row["rounds"] == "1"  # its first round, written as it ended


@pytest.mark.real_load
def test_a_busy_machine_is_refused_unless_allowed_and_busy_rows_stay_out_of_the_table(tmp_path, capsys):
    eval_path, results = eval_file(tmp_path, "real-test-v1.jsonl"), tmp_path / "results"
    with Spinner():
        assert main(bench_run(results, "--data", str(eval_path), "--max-load", "0")) == 1
    err = capsys.readouterr().err
    assert "refused 1 row(s) timed on a busy machine: regex.v1 [cpu]" in err and "--allow-busy" in err
    assert not list(results.glob("cost-*.csv"))  # nothing written for the busy row
    assert bench_results.read_csv(next(results.glob("accuracy-*.csv")))[0]["accuracy"] == "0.6"  # load does not bias it
    with Spinner():
        assert main(bench_run(results, "--data", str(eval_path), "--max-load", "0", "--allow-busy")) == 0
    [row] = bench_results.read_csv(next(results.glob("cost-*.csv")))
    assert row["busy"] == "yes" and float(row["other_load"]) > 0 and float(row["latency_p50_ms"]) > 0
    readme, plot = tmp_path / "README.md", tmp_path / "pareto.png"
    assert main(["bench", "publish", "--results", str(results), "--readme", str(readme), "--plot", str(plot)]) == 0
    text = readme.read_text()
    assert (
        "| `regex.v1`" not in text and "Left out, timed on a busy machine (measure again when idle): `regex.v1`" in text
    )
    assert bench_results.result_tables(results) == {"cost-cpu-fp32-torch" + row["torch"]: []}
    assert main(bench_run(results, "--data", str(eval_path), "--max-load", "x")) == 2
    assert main(bench_run(results, "--data", str(eval_path), "--max-load", "-1")) == 2


def write_published_results(results):
    env = {"device": "cpu", "dtype": "fp32", "torch": "9.9"}
    bench_results.write_results(
        [
            {"name": "regex.v1", "judge_kind": "regex", "flops": 0, "latency_p50_ms": 0.2, **env},
            {"name": "minilm-l6.x", "judge_kind": "encoder", "flops": 1.5e9, "latency_p50_ms": 11, **env},
            {
                "name": "minilm-l6.y",
                "judge_kind": "encoder",
                "flops": 1.6e9,
                "latency_p50_ms": 90,
                "busy": "yes",
                **env,
            },
            {"name": "qwen3-14b.direct", "judge_kind": "direct", "flops": 4.8e12, **env},
        ],
        "cost",
        results,
    )
    real = {"n": 496, "eval_set": "real-test-v3", "eval_sha256": "f52bf775ace6", **env}
    bench_results.write_results(
        [
            {"name": "regex.v1", "accuracy": 0.93, **real},
            {"name": "minilm-l6.x", "accuracy": 0.94, **real},
            {"name": "minilm-l6.y", "accuracy": 0.99, **real},
        ],
        "accuracy",
        results,
    )


def test_one_command_regenerates_the_readme_and_plot_from_the_csvs_alone_byte_for_byte(tmp_path, monkeypatch):
    import matplotlib.axes

    results = tmp_path / "results"
    write_published_results(results)
    outputs = []
    for run in ("a", "b"):
        readme, plot = tmp_path / run / "README.md", tmp_path / run / "pareto.png"
        readme.parent.mkdir()
        assert main(["bench", "publish", "--results", str(results), "--readme", str(readme), "--plot", str(plot)]) == 0
        outputs.append((readme.read_bytes(), plot.read_bytes()))
    assert outputs[0] == outputs[1]  # the same CSVs give the same bytes
    text = outputs[0][0].decode()
    assert text == publish.render_readme(results_dir=results)
    lines = {line.split("`")[1]: line for line in text.splitlines() if line.startswith("| `")}
    assert "| 0.940 |" in lines["minilm-l6.x"] and lines["minilm-l6.x"].endswith("| * |")
    assert "minilm-l6.y" not in lines  # busy: not in the table, nor on the front it would have topped
    assert "Left out, timed on a busy machine (measure again when idle): `minilm-l6.y`." in text
    points = []
    scatter = matplotlib.axes.Axes.scatter
    monkeypatch.setattr(
        matplotlib.axes.Axes, "scatter", lambda self, x, y, **kw: points.append(y) or scatter(self, x, y, **kw)
    )
    publish.regenerate(None, tmp_path / "again.png", results_dir=results)
    assert 0.99 not in points and 0.94 in points
    with pytest.raises(bench.BenchError, match="no results file starting with 'cost-cuda'"):
        publish.regenerate(None, tmp_path / "none.png", results_dir=results, table="cost-cuda")


def test_bench_run_writes_the_csvs_then_the_readme_and_plot_in_one_command(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a checkout of its own: benchmarks/results, zoo/README.md, benchmarks/pareto.png
    eval_path = eval_file(tmp_path, "real-test-v1.jsonl")
    run = ["bench", "run", "--only", "regex.v1", "--n", "20", "--data", str(eval_path), "--no-timing"]
    assert main([*run, "--results", "elsewhere"]) == 0  # a trial folder: the published files are left alone
    assert list(Path("elsewhere").glob("cost-*.csv")) and not Path("zoo").exists() and not Path("benchmarks").exists()
    assert main(run) == 0
    readme, plot = Path("zoo/README.md"), Path("benchmarks/pareto.png")
    assert readme.read_text() == publish.render_readme(results_dir="benchmarks/results")
    assert "| `regex.v1` | regex |" in readme.read_text() and plot.read_bytes()[:4] == b"\x89PNG"
    assert main([*run, "--results", "elsewhere", "--readme", str(tmp_path)]) == 2  # a folder is not a README


def test_accuracy_of_a_judge_folder_is_measured_without_timing(tiny_backbone, tmp_path):
    from bertjudge.judges.encoder import EncoderJudge

    EncoderJudge(backbone=tiny_backbone).export(tmp_path / "judge")
    subject = bench.folder_subject(tmp_path / "judge", "minilm-l6.tiny")
    row, [accuracy] = bench.measure(
        subject, RECORDS, timing=False, eval_sets=[bench.load_eval_set(eval_file(tmp_path))]
    )
    assert "latency_p50_ms" not in row and row["flops"] > 0
    assert accuracy["n"] == 5 and 0 <= accuracy["accuracy"] <= 1 and accuracy["eval_set"] == "mini-set"


def test_stability_times_every_subject_twice_afresh_and_compares(monkeypatch, capsys):
    stability = benchmark_script("stability")
    subjects = [bench.Subject("regex.v1", "regex"), tiny_arch(monkeypatch)]
    args = stability.parser().parse_args(["--min-run-time", "0.2", "--rounds", "2"])
    speeds = []
    first, second = stability.time_passes(subjects, RECORDS, args, speeds=speeds)
    assert len(speeds) == 2 and all(speed > 1e8 for speed in speeds)  # the machine's GEMM FLOP/s, once a pass
    for name in ("regex.v1", "tiny32.arch"):  # timed again, not the first pass's cached timing
        assert first[name]["latency_p50_ms"] != second[name]["latency_p50_ms"]
    rows = stability.compare(first, second, tolerance=0.15)
    by_name = {r["name"]: r for r in rows}
    tiny = by_name["tiny32.arch"]
    assert (
        tiny["latency_p50_ms_ratio"] == second["tiny32.arch"]["latency_p50_ms"] / first["tiny32.arch"]["latency_p50_ms"]
    )
    assert tiny["stable"] == all(
        max(r, 1 / r) <= 1.15 for r in (tiny["latency_p50_ms_ratio"], tiny["latency_p95_ms_ratio"])
    )
    assert stability.stable(1.1, 0.15) and stability.stable(1 / 1.1, 0.15) and not stability.stable(1.2, 0.15)
    table = stability.report(rows)
    assert "| `tiny32.arch` |" in table and "| `regex.v1` |" in table
