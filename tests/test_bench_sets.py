"""bench on several evaluation sets, judges given as a spec, why a judge has no accuracy, the normalized cost."""

import json
from pathlib import Path

import numpy as np
import pytest
import yaml

from bertjudge.cli.main import main
from bertjudge.evaluation import bench, bench_results
from bertjudge.judges.loading import Judge, set_precision
from bertjudge.judges.regex import RegexJudge

RECORDS = [{"question": "What is 2+3?", "candidate": "It is 5.", "references": ["5"], "label": 1}] * 3
ROWS = [  # two open QA and an extraction row (the quickstart judge's under by-category), one MC, one math
    {"category": "open_qa", "question": "Who wrote Hamlet?", "candidate": "William Shakespeare", "label": 1},
    {"category": "open_qa", "question": "What is the capital of France?", "candidate": "Lyon", "label": 0},
    {
        "category": "context_extraction",
        "question": "Passage: the sky is blue. Colour?",
        "candidate": "blue",
        "label": 1,
    },
    {
        "category": "multiple_choice",
        "question": "Pick one.\nA. red\nB. blue",
        "candidate": "The answer is B.",
        "label": 1,
    },
    {"category": "open_math", "question": "What is 2+3?", "candidate": "I am not sure.", "label": 0},
]
REFERENCES = ["Shakespeare", "Paris", "blue", "B", "5"]


def write_set(path: Path, rows=ROWS) -> Path:
    path.write_text("".join(json.dumps({**row, "reference": ref}) + "\n" for row, ref in zip(rows, REFERENCES)))
    return path


def accuracy_keys(results: Path) -> dict[tuple[str, str], str]:
    [path] = results.glob("accuracy-*.csv")
    return {(row["name"], row["eval_set"]): row["accuracy"] for row in bench_results.read_csv(path)}


def test_one_run_measures_every_set_and_keeps_the_rows_of_other_sets_and_judges(tmp_path):
    v2, v3 = write_set(tmp_path / "real-test-v2.jsonl", ROWS[:4]), write_set(tmp_path / "real-test-v3.jsonl")
    results, env = tmp_path / "results", bench.environment("cpu", "fp32")
    earlier = [
        {"name": "regex.v1", "accuracy": 0.5, "n": 9, "eval_set": "real-test-v1", **env},
        {"name": "other.x", "accuracy": 0.9, "n": 9, "eval_set": "real-test-v3", **env},
    ]
    bench_results.write_results(earlier, "accuracy", results)
    run = ["bench", "run", "--only", "regex.v1", "--n", "20", "--no-timing", "--results", str(results)]
    assert main([*run, "--data", str(v2), "--data", str(v3)]) == 0
    found = accuracy_keys(results)
    assert set(found) == {
        ("other.x", "real-test-v3"),
        ("regex.v1", "real-test-v1"),
        ("regex.v1", "real-test-v2"),
        ("regex.v1", "real-test-v3"),
    }
    assert found[("regex.v1", "real-test-v1")] == "0.5" and found[("other.x", "real-test-v3")] == "0.9"
    scores = RegexJudge().score_records(bench.load_eval_set(v3).records)
    assert float(found[("regex.v1", "real-test-v3")]) == pytest.approx(np.mean((scores >= 0.5) == [1, 0, 1, 1, 0]))
    # a later run on one set replaces that set's row only
    write_set(v3, [{**row, "label": 1 - row["label"]} for row in ROWS])
    assert main([*run, "--data", str(v3)]) == 0
    again = accuracy_keys(results)
    assert set(again) == set(found) and again[("regex.v1", "real-test-v2")] == found[("regex.v1", "real-test-v2")]
    assert float(again[("regex.v1", "real-test-v3")]) == pytest.approx(1 - float(found[("regex.v1", "real-test-v3")]))
    [table] = bench_results.result_tables(results, tmp_path / "no-quotes.csv").values()
    [row] = [r for r in table if r["name"] == "regex.v1"]
    assert row["accuracy"] == again[("regex.v1", "real-test-v3")]
    assert row["accuracy_real-test-v2"] == found[("regex.v1", "real-test-v2")]
    (tmp_path / "b").mkdir()
    twin = write_set(tmp_path / "b" / "real-test-v3.jsonl")
    assert main([*run, "--data", str(v3), "--data", str(twin)]) == 2  # two sets of one name: refused


@pytest.fixture
def quickstart(tiny_backbone, tmp_path, monkeypatch):
    """A checkout whose runs/quickstart/judge is a tiny exported judge."""
    from bertjudge.judges.encoder import EncoderJudge

    monkeypatch.chdir(tmp_path)
    EncoderJudge(backbone=tiny_backbone).export(tmp_path / bench.QUICKSTART)
    return tmp_path / bench.QUICKSTART


def test_spec_judges_are_subjects_only_when_the_quickstart_judge_is_built(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert [(s.name, s.kind, s.spec) for s in bench.spec_subjects()] == [("contains.v1", "rule", "contains")]
    assert [s.name for s in bench.default_subjects()][:2] == ["regex.v1", "contains.v1"]


def test_spec_judges_are_measured_whole_with_the_share_routed_to_their_learned_part(quickstart, tmp_path):
    subjects = {s.name: s for s in bench.spec_subjects()}
    assert list(subjects) == ["contains.v1", "hybrid.quickstart", "cascade.quickstart", "by-category.quickstart"]
    assert subjects["by-category.quickstart"].spec == (
        "by-category:runs/quickstart/judge?multiple_choice=regex&open_math=regex"
    )  # as docs/usage.md spells it
    assert {"hybrid.quickstart", "by-category.quickstart"} <= {s.name for s in bench.default_subjects()}
    v2, v3 = (bench.load_eval_set(write_set(tmp_path / f"real-test-{v}.jsonl")) for v in ("v2", "v3"))
    folder_row, _ = bench.measure(bench.folder_subject(quickstart, "minilm-l6.q"), RECORDS, timing=False)
    rules = RegexJudge().details(v3.records)
    expected = {
        "by-category.quickstart": 3 / 5,  # open QA and extraction
        "hybrid.quickstart": np.mean([r["unparsed"] for r in rules]),  # where the rules find no answer
        "cascade.quickstart": np.mean([r["unparsed"] or not r["match"] for r in rules]),  # where they find no match
    }
    assert 0 < expected["hybrid.quickstart"] < 1 and 0 < expected["cascade.quickstart"] < 1
    labels = np.array([row["label"] for row in v3.records])
    for name, share in expected.items():
        timed = name == "by-category.quickstart"
        row, accuracies = bench.measure(subjects[name], RECORDS, eval_sets=[v2, v3], timing=timed, min_run_time=0.05)
        assert row["judge_kind"] == "routing" and row["config_source"] == subjects[name].spec
        assert row["params"] == folder_row["params"] and row["tokens"] == folder_row["tokens"]
        assert row["flops"] == round(folder_row["flops"] * share)
        assert f"scored {share:.1%} of the 5 rows of real-test-v3 (real-test-v2 {share:.1%})" in row["notes"]
        judge = Judge.load(subjects[name].spec)
        set_precision(judge, "fp32")  # as bench scores an fp32 row
        correct = (judge.score_records(v3.records) >= judge.threshold) == labels
        assert [a["eval_set"] for a in accuracies] == ["real-test-v2", "real-test-v3"]
        assert accuracies[1]["accuracy"] == round(float(correct.mean()), 4) and accuracies[1]["n"] == 5
        again, none = bench.measure(subjects[name], RECORDS, eval_sets=[v2, v3], timing=False, with_accuracy=False)
        assert none == [] and again["flops"] == row["flops"]  # later rounds: the share remembered
        if timed:
            timed_row = row
    # the timed one: whole-judge latency and throughput on the headline set's rows, the machine around it
    row = timed_row
    assert row["latency_p50_ms"] > 0 and row["throughput_per_s"] > 0 and row["machine_gflops"] > 0.1
    assert "timed whole (score_records): latency = a run over 5 rows of real-test-v3" in row["notes"]
    row, [acc2, acc3] = bench.measure(subjects["contains.v1"], RECORDS, eval_sets=[v2, v3], min_run_time=0.05)
    assert (row["judge_kind"], row["flops"], row["weights"]) == ("rule", 0, "none") and row["latency_p50_ms"] > 0
    assert acc3["eval_set"] == "real-test-v3" and 0 <= acc3["accuracy"] <= 1


def test_learned_share_counts_the_rows_a_learned_part_scored():
    class Learned:
        features = frozenset({"weights"})

        def parts(self):
            return [self]

    class Routed:
        features = frozenset({"routing"})

        def stages(self):
            return {"rules": RegexJudge(), "model": Learned()}

    rows = [{"scores": {"rules": 1.0}}, {"scores": {"rules": None, "model": 0.3}}, {"route": "model"}, {"route": "x"}]
    assert bench.learned_share(Routed(), rows) == 0.5
    assert bench.learned_share(Learned(), rows) == 1.0 and bench.learned_share(RegexJudge(), rows) == 0.0


def test_a_judge_without_accuracy_says_why_and_every_timed_row_has_a_normalized_cost(tmp_path):
    (tmp_path / "runs" / "own" / "judge").mkdir(parents=True)
    (tmp_path / "runs" / "own" / "judge" / "judge.json").write_text("{}")
    entry = {
        "class_path": "bertjudge.judges.encoder.EncoderJudge",
        "format": {"order": "QCR"},
        "license": "MIT",
        "provenance": {},
    }
    registry = tmp_path / "zoo" / "registry.yaml"
    registry.parent.mkdir()
    registry.write_text(
        yaml.safe_dump(
            {
                "eurobert-210m.hub": {**entry, "source": "hf://acme/judge@main", "architecture": "eurobert-210m"},
                "minilm-l6.unbuilt": {**entry, "source": "file://../runs/none/judge", "build": "make unbuilt"},
                "minilm-l6.own": {**entry, "source": "file://../runs/own/judge", "build": "make own"},
            }
        )
    )
    env = {"device": "cpu", "dtype": "fp32", "torch": "9.9"}
    random = "random (exact architecture)"
    bench_results.write_results(
        [
            {"name": "eurobert-210m.hub", "flops": 2e10, "weights": random, "latency_p50_ms": 50, **env},
            {"name": "minilm-l6.unbuilt", "flops": 1.5e9, **env},
            {
                "name": "minilm-l6.own",
                "flops": 1.6e9,
                "latency_p50_ms": 10,
                "latency_p95_ms": 10,
                "machine_gflops": 250,
                **env,
            },
            {
                "name": "qwen3-14b.direct",
                "judge_kind": "direct",
                "flops": 4.5e12,
                "params": 1.48e10,
                "weights": random,
                "config_source": "Qwen/Qwen3-14B (config written in bertjudge.evaluation.bench)",
                **env,
            },
            {"name": "mpnet-base.arch", "flops": 1e10, "params": 1e8, "weights": random, "latency_p50_ms": 80, **env},
        ],
        "cost",
        tmp_path,
    )
    bench_results.write_results(
        [{"name": "minilm-l6.own", "accuracy": 0.9, "n": 9, "eval_set": "real-test-v1", **env}], "accuracy", tmp_path
    )
    [rows] = bench_results.result_tables(tmp_path, tmp_path / "no-quotes.csv", registry).values()
    why = {r["name"]: r["accuracy_source"] for r in rows}
    assert why["eurobert-210m.hub"].startswith("cannot run here: its weights (hf://acme/judge@main) are not available")
    assert why["minilm-l6.unbuilt"] == "not built yet: `make unbuilt`"
    assert why["minilm-l6.own"] == "not measured on real-test-v3 yet; only on real-test-v1"  # built: it can run
    assert why["qwen3-14b.direct"] == (
        "cannot run here: Qwen/Qwen3-14B's weights are not available offline; cost of its architecture with random "
        "weights; too large for this CPU (14.8B parameters; timed below 3B): FLOPs only, needs a GPU"
    )
    assert why["mpnet-base.arch"] == "an architecture, no trained judge: cost only, with random weights"
    line = {r.split("`")[1]: r for r in bench_results.markdown_table(rows).splitlines()[2:]}
    assert "| n/a (not built yet: `make unbuilt`) |" in line["minilm-l6.unbuilt"]
    # the normalized cost: latency p50 (ms) x the machine's GEMM speed around it (GFLOP/s) / 1000
    norm = {r["name"]: r["norm_cost"] for r in rows}
    assert norm["minilm-l6.own"] == 2.5 and norm["eurobert-210m.hub"] == "" and norm["qwen3-14b.direct"] == ""
    assert "| norm. cost (ms × GFLOP/s / 1000) |" in bench_results.markdown_table(rows).splitlines()[0]
    assert "| 10 / 10 | 2.5 |" in line["minilm-l6.own"]
