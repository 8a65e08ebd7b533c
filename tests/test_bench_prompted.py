"""bench on a prompted zoo entry (an off-the-shelf LLM behind the judging prompt, no training): costed with its own
model and scored like a trained judge, or, when scoring the sets would take longer than the budget, costed with the
reason it was not scored. Tiny random causal LMs with the real SmolLM2 tokenizer, as in test_generative."""

import shlex

import numpy as np
import pytest
import yaml
from test_bench import RECORDS, eval_file
from test_generative import make_tiny_causal_lm, smollm2_tokenizer

from bertjudge.cli import prompt_judge
from bertjudge.core.records import read_records
from bertjudge.evaluation import bench, bench_flops, bench_results
from bertjudge.judges.backends import PromptedJudge, TransformersBackend
from bertjudge.judges.loading import Judge
from bertjudge.zoo import registry as zoo


@pytest.fixture(scope="module")
def tiny_lm(tmp_path_factory):
    return make_tiny_causal_lm(tmp_path_factory.mktemp("tiny-llama"), smollm2_tokenizer(), "llama")


def prompted_entry(tmp_path, tiny_lm, mode: str) -> tuple:
    """A registry (in ``tmp_path/zoo``) with one prompted entry over ``tiny_lm``, built: (registry, name, folder)."""
    folder = tmp_path / "runs" / f"tiny-{mode}" / "judge"
    PromptedJudge(TransformersBackend(tiny_lm, device="cpu", batch_size=2), mode=mode, max_new_tokens=4).export(folder)
    name = f"smollm2-135m.tiny-{mode}"
    entry = {
        "class_path": "bertjudge.judges.backends.PromptedJudge",
        "source": f"file://../runs/tiny-{mode}/judge",
        "build": f"python -m bertjudge prompt-judge --model {tiny_lm} --mode {mode} --output runs/tiny-{mode}/judge",
        "files": {"judge.json": None},
        "format": {"order": "QRC"},
        "architecture": "smollm2-135m",
        "license": "Apache-2.0",
        "provenance": {"base_model": "a tiny random Llama"},
    }
    registry = tmp_path / "zoo" / "registry.yaml"
    registry.parent.mkdir(exist_ok=True)
    old = yaml.safe_load(registry.read_text()) if registry.is_file() else {}
    registry.write_text(yaml.safe_dump({**old, name: entry}))
    return registry, name, folder


def test_a_prompted_entry_is_costed_with_its_own_model_and_scored_on_the_sets(tiny_lm, tmp_path):
    registry, name, folder = prompted_entry(tmp_path, tiny_lm, "direct")
    subject = {s.name: s for s in bench.default_subjects(registry)}[name]
    assert (subject.kind, subject.architecture, subject.folder) == ("direct", "smollm2-135m", folder.resolve())
    path = eval_file(tmp_path, f"{bench_results.HEADLINE_SET}.jsonl")  # a set of five rows, named as the headline
    row, [accuracy] = bench.measure(subject, RECORDS, eval_sets=[bench.load_eval_set(path)], min_run_time=0.2)
    # costed with the judge's own model (not the architecture's random stand-in): its parameters, its prompt's length
    judge = Judge.load(str(folder))
    model, tokenizer = bench.network(judge)
    assert row["weights"] == "pretrained, prompted" and row["params"] == sum(p.numel() for p in model.parameters())
    assert row["tokens"] == bench.median_tokens(RECORDS, tokenizer, subject)
    assert row["flops"] == bench_flops.judgment_flops(model.config, "causal", row["tokens"], "direct")[0] > 0
    assert 0 < row["latency_p50_ms"] <= row["latency_p95_ms"] and row["throughput_per_s"] > 0
    assert bench_results.NOT_SCORED not in row["notes"]
    # scored on every row of the set: the accuracy of the judge's own verdicts
    records = read_records(path)
    verdicts = judge.score_records(records) >= judge.threshold
    expected = float(np.mean(verdicts == np.array([r["label"] for r in records], dtype=bool)))
    assert accuracy["name"] == name and accuracy["n"] == 5 and accuracy["accuracy"] == pytest.approx(expected, abs=1e-4)
    # the table shows that accuracy, not a reason
    results = tmp_path / "results"
    bench_results.write_results([row], "cost", results)
    bench_results.write_results([accuracy], "accuracy", results)
    [shown] = [r for rows in bench_results.result_tables(results, registry=registry).values() for r in rows]
    assert shown["accuracy"] == str(accuracy["accuracy"]) and shown["accuracy_source"].startswith("measured")


def test_a_judge_too_slow_to_score_the_sets_is_costed_and_says_why(tiny_lm, tmp_path):
    registry, name, folder = prompted_entry(tmp_path, tiny_lm, "reasoning")
    subject = {s.name: s for s in bench.default_subjects(registry)}[name]
    assert subject.kind == "reasoning"
    eval_set = bench.load_eval_set(eval_file(tmp_path, f"{bench_results.HEADLINE_SET}.jsonl"))
    measured = dict(eval_sets=[eval_set], min_run_time=0.2, k=4)
    row, accuracy = bench.measure(subject, RECORDS, max_accuracy_minutes=1e-9, **measured)
    assert accuracy == [] and row["flops"] > 0 and row["latency_p50_ms"] > 0  # costed (prefill + 4 decode steps)
    [note] = [n for n in row["notes"].split("; ") if n.startswith(bench_results.NOT_SCORED)]
    assert f"s per row (latency p50 at batch 1, on {row['hardware']})" in note
    assert f"for the 5 rows of {bench_results.HEADLINE_SET}, above the 1e-09-minute budget" in note
    results = tmp_path / "results"
    bench_results.write_results([row], "cost", results)
    [shown] = [r for rows in bench_results.result_tables(results, registry=registry).values() for r in rows]
    assert shown["accuracy"] == "" and shown["accuracy_source"] == note  # the table's reason
    # within the budget the same judge is scored (an unread verdict counts as a wrong one)
    _, [scored] = bench.measure(subject, RECORDS, **measured)
    assert scored["n"] == 5 and 0 <= scored["accuracy"] <= 1
    untimed, [_] = bench.measure(subject, RECORDS, timing=False, max_accuracy_minutes=1e-9, **measured)
    assert "latency_p50_ms" not in untimed  # not timed: no estimate, so it is scored


def test_the_shipped_prompted_entries_are_built_by_prompt_judge_and_costed_as_smollm2():
    prompted = {n: e for n, e in zoo.load_registry().items() if e.class_path.endswith(".PromptedJudge")}
    assert set(prompted) == {"smollm2-135m.prompted-direct", "smollm2-135m.prompted-reasoning"}
    for name, e in prompted.items():
        command = shlex.split(e.build)
        assert command[:4] == ["python", "-m", "bertjudge", "prompt-judge"]
        args = prompt_judge.parser().parse_args(command[4:])
        assert args.model == bench_flops.ARCHITECTURES[e.architecture].hub_id == "HuggingFaceTB/SmolLM2-135M-Instruct"
        assert name.endswith(f".prompted-{args.mode}") and e.source == f"file://{args.output}" and not args.fit
    arch = bench_flops.ARCHITECTURES["smollm2-135m"]
    model = bench_flops.build_model(arch.make_config(), arch.kind)
    assert sum(p.numel() for p in model.parameters()) == 134_515_008  # SmolLM2-135M's published size
