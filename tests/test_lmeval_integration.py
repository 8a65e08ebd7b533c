"""lm-evaluation-harness both ways, on output that `lm_eval` itself writes in the test (offline), and the task
YAMLs bertjudge ships (bertjudge/pipeline/lmeval_tasks: gsm8k, mmlu_pro, triviaqa) built by lm-eval's own loader.

One real `lm_eval` run of the example task (examples/lmeval: 8 local questions; the bertjudge filter and metric
beside lm-eval's exact_match) with a tiny random Llama (SmolLM2 tokenizer) rigged to answer " Paris" to everything:
half the references are Paris, so the judged accuracy is neither 0 nor 1, and lm-eval's exact_match (0 on
"Paris Paris …") disagrees with it on real rows. `lm_eval` runs with a spy on the judge that records each call:
one call, every document, the raw responses and the questions. Then (a) `lmeval-report` on that output and
(b) the figures lm-eval reported, each against the regex judge run here on the same samples.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import require

from bertjudge.cli.main import main
from bertjudge.core.records import normalize
from bertjudge.judges.regex import RegexJudge
from bertjudge.pipeline.lmeval import TASKS, read_samples

require("lm_eval")
from test_generative import make_tiny_causal_lm, smollm2_tokenizer  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TASK = "bertjudge_capitals"
pytestmark = pytest.mark.slow  # one lm_eval run (model load, 8 generations): about a minute on 2 busy cores
# `python -m lm_eval`, with every details() call of the regex judge recorded in $JUDGE_CALLS first
SPY = """
import json, os, runpy
from bertjudge.judges.regex import RegexJudge
original = RegexJudge.details
def details(self, records, batch_size=32, progress=False):
    with open(os.environ["JUDGE_CALLS"], "a", encoding="utf-8") as handle:
        handle.write(json.dumps({"batch_size": batch_size, "records": records}) + "\\n")
    return original(self, records, batch_size=batch_size, progress=progress)
RegexJudge.details = details
runpy.run_module("lm_eval", run_name="__main__", alter_sys=True)
"""


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
        "JUDGE_CALLS": str(tmp / "judge-calls.jsonl"),
    }
    command = [
        sys.executable,
        "-c",
        SPY,
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
        "--num_fewshot",
        "2",  # the prompts carry two examples (from the test split): the judge's question must not
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


def judge_calls(output: Path) -> list[dict]:
    return [json.loads(line) for line in (output.parent / "judge-calls.jsonl").read_text().splitlines()]


def only(folder: Path, pattern: str) -> Path:
    [path] = folder.rglob(pattern)
    return path


def sample_rows(samples: Path, filter_name: str) -> list[dict]:
    rows = [json.loads(line) for line in samples.read_text().splitlines()]
    return [row for row in rows if row["filter"] == filter_name]


def regex_verdicts(rows: list[dict], question=lambda doc: doc["question"]) -> list[bool]:
    """The regex judge's verdicts on each sample's raw answer against its target, as open QA."""
    records = [
        normalize(
            {
                "question": question(row["doc"]),
                "candidate": row["resps"][0][0],
                "references": [row["target"]],
                "category": "open_qa",
            }
        )
        for row in rows
    ]
    return [d["verdict"] is True for d in RegexJudge().details(records)]


def test_in_harness_the_judge_reads_raw_responses_with_their_question_in_one_batched_call(lmeval_output):
    samples = only(lmeval_output, f"samples_{TASK}_*.jsonl")
    raw = sample_rows(samples, "remove_whitespace")  # the task's own pipeline: lm-eval's exact_match
    judged = sample_rows(samples, "bertjudge")  # the bertjudge filter's pipeline: the judge's verdicts
    assert len(raw) == len(judged) == 8 and [r["doc_id"] for r in raw] == [r["doc_id"] for r in judged]
    [call] = judge_calls(lmeval_output)  # one call for the whole run, batched by the judge (batch_size: 4)
    assert call["batch_size"] == 4 and len(call["records"]) == 8
    seen = call["records"]
    assert [r["candidate"] for r in seen] == [row["resps"][0][0] for row in raw]  # raw: " Paris Paris …"
    assert all(r["candidate"] != row["filtered_resps"][0] for r, row in zip(seen, raw))  # not remove_whitespace's
    assert [r["question"] for r in seen] == [row["doc"]["question"] for row in raw]  # the question, no few-shot
    assert all("Answer: " in row["arguments"]["gen_args_0"]["arg_0"] for row in raw)  # the prompts had examples
    assert [r["references"] for r in seen] == [[row["target"]] for row in raw]
    assert {r["category"] for r in seen} == {"open_qa"}
    verdicts = regex_verdicts(raw)
    assert 0 < sum(verdicts) < len(verdicts)  # the rigged model is right on some questions only
    assert [row["bertjudge"] for row in judged] == [float(v) for v in verdicts]  # per sample, in lm-eval's log
    assert [row["filtered_resps"][0] for row in judged] == [row["resps"][0][0] for row in judged]
    assert all(math.isnan(row["bertjudge"]) for row in raw)  # the metric judged nothing on the task's own pipeline
    # lm-eval's report: the judge's figure beside its own exact match, on the same 8 samples
    report = json.loads(only(lmeval_output, "results_*.json").read_text())
    results = report["results"][TASK]
    assert report["n-samples"][TASK]["effective"] == 8
    assert results["bertjudge,bertjudge"] == pytest.approx(sum(verdicts) / len(verdicts))
    exact = [row["exact_match"] for row in raw]
    assert results["exact_match,remove_whitespace"] == pytest.approx(sum(exact) / 8) == 0.0  # "Paris Paris …"
    assert results["bertjudge,bertjudge"] > results["exact_match,remove_whitespace"]
    assert report["higher_is_better"][TASK]["bertjudge"] is True


def test_report_on_lmeval_output(lmeval_output, tmp_path, capsys):
    samples = only(lmeval_output, f"samples_{TASK}_*.jsonl")
    rows = sample_rows(samples, "remove_whitespace")
    # the report's question: the task's doc_to_text (from lm-eval's results file) without the few-shot examples
    results = json.loads(only(lmeval_output, "results_*.json").read_text())
    assert results["configs"][TASK]["doc_to_text"] == "Question: {{question}}\nAnswer:"
    question = lambda doc: f"Question: {doc['question']}\nAnswer:"  # noqa: E731
    verdicts = regex_verdicts(rows, question)
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
    assert group["task"] == TASK and group["n"] == group["docs"] == len(rows) == 8 and group["repeats"] == 1
    assert group["model"] == results["model_name"] and group["question_from"] == ["doc_to_text"]
    assert group["accuracy"] == pytest.approx(sum(verdicts) / len(verdicts))
    low, high = group["interval"]
    assert low <= group["accuracy"] <= high and low < high
    exact = [row["exact_match"] for row in rows]
    assert group["lmeval_metric"] == "exact_match" and group["filter"] == "remove_whitespace"
    assert group["lmeval"] == pytest.approx(sum(exact) / len(exact)) == pytest.approx(group["lmeval_reported"])
    # the in-harness figure, beside: the same judge on the same raw responses
    assert group["in_harness"] == {
        "metric": "bertjudge",
        "filter": "bertjudge",
        "docs": 8,
        "value": pytest.approx(group["accuracy"]),
        "reported": pytest.approx(results["results"][TASK]["bertjudge,bertjudge"]),
    }
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
        row = by_doc[d["doc_id"]]
        assert d["answer"] == row["resps"][0][0] and d["references"] == [row["target"]] and d["repeat"] == 0
        assert d["question"] == question(row["doc"]) != row["arguments"]["gen_args_0"]["arg_0"]
    assert f"| {TASK} |" in (out / "report.md").read_text()
    printed = capsys.readouterr().out
    assert f"n=8, regex accuracy {group['accuracy']:.3f}" in printed and "bertjudge in lm-eval (bertjudge)" in printed
    # the importer reads the same output with lm-eval's metric as label, never bertjudge's own
    records, _ = read_samples(samples)
    assert [r["label"] for r in records] == [int(x) for x in exact]


# the shipped task YAMLs (bertjudge/pipeline/lmeval_tasks), built by lm-eval's own TaskManager and run by its own
# evaluator offline: the datasets are stand-ins with the real ones' fields (no hub here), the model a canned one

SUBJECTS = "biology business chemistry computer_science economics engineering health history law math other philosophy"
SUBJECTS = [s.replace("_", " ") for s in SUBJECTS.split()] + ["physics", "psychology"]


def gsm8k_doc(i: int) -> dict:
    return {
        "question": f"Ana has {i} apples and buys 3 more. How many now?",
        "answer": f"{i} + 3 = {i + 3}\n#### {i + 3}",
    }


def mmlu_pro_doc(i: int, subject: str) -> dict:
    return {
        "question_id": i,
        "question": f"Which word names the number {i % 3}? (stand-in {i})",
        "options": ["zero", "one", "two"],
        "answer": "ABC"[i % 3],
        "answer_index": i % 3,
        "cot_content": "A: Let's think step by step. The word names it. The answer is (A).",
        "category": subject,
        "src": "stand-in",
    }


def triviaqa_doc(i: int) -> dict:
    aliases = ["Paris", "City of Light"] if i % 2 else ["Rome", "Eternal City"]
    return {
        "question": f"Which capital is stand-in question {i} about",
        "question_id": f"q{i}",
        "question_source": "stand-in",
        "entity_pages": {"doc_source": [], "filename": [], "title": [], "wiki_context": []},
        "search_results": {"description": [], "filename": [], "rank": [], "title": [], "url": [], "search_context": []},
        "answer": {
            "aliases": aliases,
            "normalized_aliases": [a.lower() for a in aliases],
            "matched_wiki_entity_name": "",
            "normalized_matched_wiki_entity_name": "",
            "normalized_value": aliases[0].lower(),
            "type": "WikipediaEntity",
            "value": aliases[0],
        },
    }


def stand_in_splits(task: str) -> dict[str, list[dict]]:
    if task == "gsm8k":
        return {"train": [gsm8k_doc(i) for i in range(6)], "test": [gsm8k_doc(i) for i in range(10, 14)]}
    if task == "triviaqa":
        return {"train": [triviaqa_doc(i) for i in range(2)], "validation": [triviaqa_doc(i) for i in range(2, 6)]}
    assert task.startswith("mmlu_pro_"), task
    return {  # five few-shot examples and two test questions per subject
        "validation": [mmlu_pro_doc(i, SUBJECTS[i % 14]) for i in range(70)],
        "test": [mmlu_pro_doc(i, subject) for i, subject in enumerate(SUBJECTS * 2)],
    }


# (group, its tasks, a canned response per document, the question the judge must see, its references, category)
SHIPPED = {
    "bertjudge_gsm8k": (
        ["gsm8k"],
        lambda doc: (
            f"She buys 3, so she has {doc['answer'].rsplit(' ', 1)[1]} apples."
            if "10 apples" in doc["question"] or "11 apples" in doc["question"]
            else "3 + 3 = 7.\n#### 7"
        ),
        lambda doc: doc["question"],
        lambda doc: [doc["answer"].rsplit("#### ", 1)[1]],
        "open_math",
    ),
    "bertjudge_mmlu_pro": (
        [f"mmlu_pro_{s.replace(' ', '_')}" for s in SUBJECTS],
        lambda doc: (
            f" The word is {doc['options'][doc['answer_index']]}, so the answer is ({doc['answer']})."
            if doc["question_id"] % 2
            else f" The word is {doc['options'][doc['answer_index']]}.\n\nFinal answer: ({doc['answer']})"
        ),
        lambda doc: f"{doc['question']}\nOptions:\nA. zero\nB. one\nC. two",
        lambda doc: [doc["answer"]],
        "multiple_choice",
    ),
    "bertjudge_triviaqa": (
        ["triviaqa"],
        lambda doc: " It is Paris",
        lambda doc: doc["question"],
        lambda doc: doc["answer"]["aliases"],
        "open_qa",
    ),
}


@pytest.fixture(scope="module")
def shipped_tasks():
    """lm-eval's TaskManager over its own tasks and bertjudge's, with every dataset a stand-in (no download)."""
    import datasets
    from lm_eval.api.task import ConfigurableTask
    from lm_eval.tasks import TaskManager

    def download(self, dataset_kwargs=None, **kwargs):
        splits = stand_in_splits(self.config.task)
        self.dataset = datasets.DatasetDict({k: datasets.Dataset.from_list(v) for k, v in splits.items()})

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ConfigurableTask, "download", download)
        yield TaskManager(include_path=str(TASKS))


def canned_lm(answer):
    from lm_eval.api.model import LM

    class Canned(LM):
        def generate_until(self, requests, disable_tqdm=False):
            return [answer(request.doc) for request in requests]

        def loglikelihood(self, requests, disable_tqdm=False):
            raise NotImplementedError

        def loglikelihood_rolling(self, requests, disable_tqdm=False):
            raise NotImplementedError

    return Canned()


def test_the_shipped_yamls_ship_and_extend_real_tasks(shipped_tasks):
    assert sorted(p.name for p in TASKS.glob("*.yaml")) == [f"{name}.yaml" for name in sorted(SHIPPED)]
    for name, (tasks, *_) in SHIPPED.items():
        assert name in shipped_tasks.all_groups
        ours = shipped_tasks.load([name])["tasks"]
        theirs = shipped_tasks.load(tasks)["tasks"]  # lm-eval's own, as it ships them
        assert sorted(ours) == sorted(theirs) == sorted(tasks)
        for task in tasks:
            mine, base = ours[task].config, theirs[task].config
            # the task's own pipelines and metric restated as lm-eval has them, the judge's added after them
            assert [f["name"] for f in mine.filter_list] == [f["name"] for f in base.filter_list] + ["bertjudge"]
            assert mine.filter_list[:-1] == base.filter_list
            [step] = mine.filter_list[-1]["filter"]
            assert step["function"].__name__ == "BertJudgeFilter"
            assert mine.metric_list == base.metric_list + [
                {"metric": "bertjudge", "aggregation": "mean", "higher_is_better": True}
            ]
            # everything else (dataset, prompt, few-shot, generation) is lm-eval's own
            mine, base = (
                {k: v for k, v in c.to_dict().items() if k not in ("filter_list", "metric_list", "metadata")}
                for c in (mine, base)
            )
            assert json.dumps(mine, default=repr) == json.dumps(base, default=repr)  # functions: the same ones
            assert mine["dataset_path"] and mine["doc_to_text"]


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_a_shipped_yaml_run_by_lm_evals_evaluator(name, shipped_tasks, monkeypatch):
    from lm_eval import simple_evaluate

    tasks, answer, question, refs, category = SHIPPED[name]
    calls = []
    original = RegexJudge.details

    def spy(self, records, batch_size=32, progress=False):
        calls.append((batch_size, records))
        return original(self, records, batch_size=batch_size, progress=progress)

    monkeypatch.setattr(RegexJudge, "details", spy)
    monkeypatch.delenv("BERTJUDGE_JUDGE", raising=False)
    out = simple_evaluate(model=canned_lm(answer), tasks=[name], task_manager=shipped_tasks, bootstrap_iters=0)
    assert len(calls) == len(tasks)  # one call per task, for all its documents
    for task in tasks:
        samples = out["samples"][task]
        judged = [s for s in samples if s["filter"] == "bertjudge"]
        own = [s for s in samples if s["filter"] != "bertjudge"]
        docs = [s["doc"] for s in judged]
        [(batch_size, records)] = [c for c in calls if [r["question"] for r in c[1]] == [question(d) for d in docs]]
        assert batch_size == 32 and len(records) == len(docs) == (2 if task.startswith("mmlu") else 4)
        assert [r["candidate"] for r in records] == [answer(d) for d in docs]  # raw, not what the regexes kept
        assert [r["references"] for r in records] == [refs(d) for d in docs]
        assert {r["category"] for r in records} == {category}
        assert [s["filtered_resps"][0] for s in judged] == [s["resps"][0][0] for s in judged]  # the raw response
        verdicts = [float(d["verdict"] is True) for d in RegexJudge().details(records)]
        assert [s["bertjudge"] for s in judged] == verdicts
        results = out["results"][task]
        assert results["bertjudge,bertjudge"] == pytest.approx(sum(verdicts) / len(verdicts))
        for f in {s["filter"] for s in own}:  # lm-eval's own exact match beside it, on the same documents
            assert results[f"exact_match,{f}"] == pytest.approx(
                sum(s["exact_match"] for s in own if s["filter"] == f) / len(docs)
            )
    if name == "bertjudge_gsm8k":  # the judge reads the solution; the strict regex finds no "#### " in two of them
        assert out["results"]["gsm8k"]["bertjudge,bertjudge"] == 0.5
        assert out["results"]["gsm8k"]["exact_match,strict-match"] == 0.0
        assert math.isnan(out["results"]["gsm8k"]["bertjudge,strict-match"])
    if name == "bertjudge_mmlu_pro":  # the group: both figures over the 14 subjects, weighted by size
        group = out["results"]["bertjudge_mmlu_pro"]
        assert group["bertjudge,bertjudge"] == 1.0 and group["exact_match,custom-extract"] == 0.5
    if name == "bertjudge_triviaqa":  # several targets per document: lm-eval reads NaN as right on any of them
        assert out["results"]["triviaqa"]["bertjudge,bertjudge"] == 0.5
        assert out["results"]["triviaqa"]["bertjudge,remove_whitespace"] == 1.0
