"""lm-evaluation-harness both ways, on output that `lm_eval` itself writes in the test (offline).

One real `lm_eval` run of the example task (examples/lmeval: 8 local questions, bertjudge's metric in
its metric_list) with a tiny random Llama (SmolLM2 tokenizer) rigged to answer " Paris" to everything:
half the references are Paris, so the judged accuracy is neither 0 nor 1, and lm-eval's exact_match
(0 on "Paris Paris …") disagrees with it on real rows. Then (a) `lmeval-report` on that output and
(b) the metric lm-eval reported, each against the regex judge run here on the same samples.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import require

from bertjudge.cli.main import main
from bertjudge.core.records import normalize
from bertjudge.judges.regex import RegexJudge
from bertjudge.pipeline.lmeval import read_samples

require("lm_eval")
from test_generative import make_tiny_causal_lm, smollm2_tokenizer  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TASK = "bertjudge_capitals"
pytestmark = pytest.mark.slow  # one lm_eval run (model load, 8 generations): about a minute on 2 busy cores


def rigged_lm(folder: Path, word: str = " Paris") -> str:
    """A tiny random Llama that answers ``word`` to everything: every token embeds alike, so every
    position carries the same hidden state, and the head's row for ``word`` points along it."""
    import torch
    from transformers import AutoModelForCausalLM

    tokenizer = smollm2_tokenizer()
    make_tiny_causal_lm(folder, tokenizer)
    [token] = tokenizer(word, add_special_tokens=False).input_ids
    model = AutoModelForCausalLM.from_pretrained(folder)
    with torch.no_grad():
        model.model.embed_tokens.weight[:] = model.model.embed_tokens.weight[0].clone()
        state = model(torch.tensor([[1, 2, 3]]), output_hidden_states=True).hidden_states[-1][0, -1]
        model.lm_head.weight[token] = 100 * state / state.norm()
    model.save_pretrained(folder)
    return str(folder)


@pytest.fixture(scope="module")
def lmeval_output(tmp_path_factory):
    """The folder `lm_eval --log_samples` wrote (one model folder with a samples and a results file)."""
    tmp = tmp_path_factory.mktemp("lmeval")
    model = rigged_lm(tmp / "tiny-llama")
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "HF_DATASETS_CACHE": str(tmp / "datasets-cache"),
        "TOKENIZERS_PARALLELISM": "false",
        "BERTJUDGE_JUDGE": "regex",
    }
    command = [
        sys.executable,
        "-m",
        "lm_eval",
        "--model",
        "hf",
        "--model_args",
        f"pretrained={model}",
        "--tasks",
        TASK,
        "--include_path",
        "examples/lmeval",
        "--limit",
        "8",
        "--gen_kwargs",
        "max_gen_toks=8",
        "--device",
        "cpu",
        "--batch_size",
        "8",
        "--log_samples",
        "--output_path",
        str(tmp / "out"),
    ]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return tmp / "out"


def only(folder: Path, pattern: str) -> Path:
    [path] = folder.rglob(pattern)
    return path


def regex_verdicts(samples: Path) -> list[bool]:
    """The regex judge's verdicts on each sample's raw answer against its target, as open QA."""
    rows = [json.loads(line) for line in samples.read_text().splitlines()]
    records = [
        normalize(
            {
                "question": row["arguments"]["gen_args_0"]["arg_0"],
                "candidate": row["resps"][0][0],
                "references": [row["target"]],
                "category": "open_qa",
            }
        )
        for row in rows
    ]
    return [d["verdict"] is True for d in RegexJudge().details(records)]


def test_report_on_lmeval_output(lmeval_output, tmp_path, capsys):
    samples = only(lmeval_output, f"samples_{TASK}_*.jsonl")
    rows = [json.loads(line) for line in samples.read_text().splitlines()]
    verdicts = regex_verdicts(samples)
    assert 0 < sum(verdicts) < len(verdicts)  # the rigged model is right on some questions only
    out = tmp_path / "report"
    assert (
        main(
            [
                "lmeval-report",
                "--input",
                str(lmeval_output),
                "--judge",
                "regex",
                "--category",
                "open_qa",
                "--output",
                str(out),
                "--no-progress",
            ]
        )
        == 0
    )
    report = json.loads((out / "report.json").read_text())
    [group] = report["groups"]
    assert group["task"] == TASK and group["n"] == len(rows) == 8
    assert group["model"] == json.loads(only(lmeval_output, "results_*.json").read_text())["model_name"]
    assert group["accuracy"] == pytest.approx(sum(verdicts) / len(verdicts))
    low, high = group["interval"]
    assert low <= group["accuracy"] <= high and low < high
    exact = [row["exact_match"] for row in rows]
    assert group["lmeval_metric"] == "exact_match" and group["lmeval"] == pytest.approx(sum(exact) / len(exact))
    assert group["lmeval_reported"] == pytest.approx(group["lmeval"])
    apart = [row["doc_id"] for row, v in zip(rows, verdicts) if v != bool(row["exact_match"])]
    assert apart and group["agreement"] == pytest.approx(1 - len(apart) / len(rows))
    written = [json.loads(line) for line in (out / "disagreements.jsonl").read_text().splitlines()]
    assert (
        [d["doc_id"] for d in written]
        == apart
        == [d["doc_id"] for d in written if d["lmeval"] != d["bertjudge_verdict"]]
    )
    by_doc = {row["doc_id"]: row for row in rows}
    for d in written:
        assert d["answer"] == by_doc[d["doc_id"]]["resps"][0][0] and d["references"] == [by_doc[d["doc_id"]]["target"]]
        assert d["question"] == by_doc[d["doc_id"]]["arguments"]["gen_args_0"]["arg_0"]
    assert f"| {TASK} |" in (out / "report.md").read_text()
    assert f"n=8, regex accuracy {group['accuracy']:.3f}" in capsys.readouterr().out
    # the importer reads the same output with lm-eval's metric as label, never bertjudge's own
    records, _ = read_samples(samples)
    assert [r["label"] for r in records] == [int(x) for x in exact]


def test_in_harness_metric(lmeval_output):
    samples = only(lmeval_output, f"samples_{TASK}_*.jsonl")
    rows = [json.loads(line) for line in samples.read_text().splitlines()]
    verdicts = regex_verdicts(samples)
    results = json.loads(only(lmeval_output, "results_*.json").read_text())["results"][TASK]
    assert results["bertjudge_acc,none"] == pytest.approx(sum(verdicts) / len(verdicts))
    assert [row["bertjudge_acc"] for row in rows] == [float(v) for v in verdicts]  # per sample, in lm-eval's log
    assert results["exact_match,none"] != results["bertjudge_acc,none"]  # lm-eval's own metric, computed beside it
