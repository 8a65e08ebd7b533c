"""lm-evaluation-harness per-sample files (its real format) imported as records."""

from __future__ import annotations

import json
import math
import pickle
import shutil
from pathlib import Path

import pytest
from conftest import require

from bertjudge.cli.main import main
from bertjudge.core.records import RecordError, read_records
from bertjudge.judges.regex import RegexJudge
from bertjudge.pipeline.lmeval import lmeval_category, read_samples, references
from bertjudge.pipeline.lmeval_report import lmeval_report

RUN = Path(__file__).parent / "fixtures" / "pipeline" / "lmeval"
MODEL_DIR = RUN / "meta-llama__Llama-3.2-1B-Instruct"
GSM8K = MODEL_DIR / "samples_gsm8k_2025-01-15T10-22-31.123456.jsonl"


def test_one_record_per_document_labelled_by_the_first_filter():
    records, skipped = read_samples(GSM8K)
    assert skipped == 0 and len(records) == 3
    first = records[0]
    assert first["task"] == "gsm8k" and first["category"] == "open_math"
    assert first["candidate_model"] == "meta-llama/Llama-3.2-1B-Instruct"
    assert first["candidate"].startswith("Ana buys 3 * 12 = 36 pencils") and first["references"] == ["31"]
    # the document's question, not the prompt with its few-shot example (no results file here: no doc_to_text)
    assert (
        first["question"]
        == "Ana buys 3 boxes of 12 pencils and gives away 5 pencils. How many pencils does she have left?"
    )
    assert "Lee has 2 cats" in json.loads(GSM8K.read_text().splitlines()[0])["arguments"]["gen_args_0"]["arg_0"]
    assert [r["references"] for r in records] == [["31"], ["25000"], ["20"]]
    assert [r["label"] for r in records] == [1, 0, 0]  # strict-match, listed first
    assert {r["label_source"] for r in records} == {"rule:lm-eval:exact_match"}
    info = records[1]["meta"]["lm_eval"]
    assert info["filter"] == "strict-match" and info["doc_id"] == 1 and info["question_from"] == "doc"
    assert (info["repeat"], info["repeats"], info["metric"], info["value"]) == (0, 1, "exact_match", 0)
    assert info["filters"]["flexible-extract"] == {"filtered_resp": ["25,000"], "exact_match": 1.0}
    assert len({r["id"] for r in records}) == 3


def test_filter_and_metric_choice():
    records, _ = read_samples(GSM8K, filter_name="flexible-extract")
    assert [r["label"] for r in records] == [1, 1, 0]
    records, _ = read_samples(GSM8K, model="my-model", metric="acc")
    assert {r["candidate_model"] for r in records} == {"my-model"}
    assert [r["label"] for r in records] == [None] * 3 and records[0]["label_source"] is None
    with pytest.raises(RecordError, match="no filter 'nope'"):
        read_samples(GSM8K, filter_name="nope")


def test_loglikelihood_tasks_are_skipped_and_old_argument_format(tmp_path):
    records, skipped = read_samples(MODEL_DIR / "samples_arc_easy_2025-01-15T10-22-31.123456.jsonl")
    assert records == [] and skipped == 1
    row = json.loads(GSM8K.read_text().splitlines()[0])
    row["arguments"] = [[row["arguments"]["gen_args_0"]["arg_0"], {"until": ["Question:"]}]]  # lm-eval < 0.4.3
    del row["filter"], row["metrics"]
    old = tmp_path / "samples_drop_2024-03-01T08-00-00.jsonl"
    old.write_text(json.dumps({**row, "target": ["31", "thirty-one"]}) + "\n")
    [rec], _ = read_samples(old, model="m")
    assert rec["category"] == "context_extraction" and rec["references"] == ["31", "thirty-one"]
    assert rec["question"] == row["doc"]["question"] and rec["label"] == 1
    del row["doc"]["question"]  # a document without a question field and no doc_to_text: the prompt, as before
    old.write_text(json.dumps(row) + "\n")
    [rec], _ = read_samples(old, model="m")
    assert rec["question"].endswith("How many pencils does she have left?\nAnswer:")
    assert rec["meta"]["lm_eval"]["question_from"] == "prompt"
    with pytest.raises(RecordError, match="not an lm-eval samples file"):
        read_samples(tmp_path / "results.jsonl")


def test_targets_and_categories():
    assert references("so x = 4.\n#### 1,024") == ["1024"]
    assert references("$\\boxed{\\frac{1}{2}}$") == ["\\frac{1}{2}"]
    assert references(2) == ["2"]
    assert lmeval_category("minerva_math_algebra") == "open_math"
    assert lmeval_category("mmlu_flan_cot_zeroshot_anatomy") == "multiple_choice"
    assert lmeval_category("triviaqa") == "open_qa" and lmeval_category("nq_open") == "open_qa"
    assert lmeval_category("hellaswag_xyz") == "multiple_choice" and lmeval_category("wikitext") == "other"


def test_cli(tmp_path, capsys):
    shutil.copytree(RUN, tmp_path / "run")
    assert main(["import-lmeval", "--input", str(tmp_path / "run"), "--output", str(tmp_path / "out")]) == 0
    [written] = sorted((tmp_path / "out").iterdir())
    assert written.name == "gsm8k.meta-llama--Llama-3.2-1B-Instruct.2025-01-15T10-22-31.123456.jsonl"
    assert [r["label"] for r in read_records(written)] == [1, 0, 0]
    assert "skipped 1 documents" in capsys.readouterr().out
    assert main(["import-lmeval", "--input", str(tmp_path / "empty-dir-missing"), "--output", str(tmp_path / "o")]) == 2


# lmeval-report: the importer's records judged per task and model, beside lm-eval's metric


def test_report_per_task_and_model_beside_lmeval(tmp_path):
    run = tmp_path / "run"
    shutil.copytree(RUN, run)
    results = {
        "model_name": "Llama-3.2-1B-Instruct (local)",
        "results": {"gsm8k": {"exact_match,strict-match": 0.25, "exact_match,flexible-extract": 0.5}},
    }
    (run / MODEL_DIR.name / "results_2025-01-15T10-22-31.123456.json").write_text(json.dumps(results))
    report, apart = lmeval_report([str(run)], "regex")
    records, _ = read_samples(GSM8K)
    verdicts = [d["verdict"] is True for d in RegexJudge().details(records)]
    [group] = report["groups"]
    assert group["task"] == "gsm8k" and group["model"] == results["model_name"] and group["n"] == 3
    assert group["accuracy"] == pytest.approx(sum(verdicts) / 3)
    labels = [r["label"] for r in records]
    assert group["lmeval_metric"] == "exact_match" and group["filter"] == "strict-match"
    assert group["lmeval"] == pytest.approx(sum(labels) / 3) and group["lmeval_reported"] == 0.25
    assert [d["doc_id"] for d in apart] == [i for i, (v, y) in enumerate(zip(verdicts, labels)) if v != bool(y)]
    assert group["disagreements"] == len(apart) and group["agreement"] == pytest.approx(1 - len(apart) / 3)
    assert report["skipped"] == [
        {
            "task": "arc_easy",
            "model": results["model_name"],
            "run": "2025-01-15T10-22-31.123456",
            "file": str(run / MODEL_DIR.name / "samples_arc_easy_2025-01-15T10-22-31.123456.jsonl"),
            "skipped": 1,
        }
    ]
    flexible, _ = lmeval_report([str(run)], RegexJudge(), filter_name="flexible-extract", model="m")
    assert flexible["groups"][0]["lmeval_reported"] == 0.5 and flexible["groups"][0]["model"] == "m"


def test_report_cli_and_its_errors(tmp_path, capsys):
    assert (
        main(
            ["lmeval-report", "--input", str(RUN), "--judge", "regex", "--output", str(tmp_path / "r"), "--no-progress"]
        )
        == 0
    )
    assert {p.name for p in (tmp_path / "r").iterdir()} == {"report.json", "report.md", "disagreements.jsonl"}
    assert "gsm8k · meta-llama/Llama-3.2-1B-Instruct: n=3" in capsys.readouterr().out
    (tmp_path / "empty").mkdir()
    assert main(["lmeval-report", "--input", str(tmp_path / "empty"), "--judge", "regex", "--output", "x"]) == 2
    assert "no samples_*.jsonl files under this folder" in capsys.readouterr().err
    arc = tmp_path / "arc" / MODEL_DIR.name
    arc.mkdir(parents=True)
    shutil.copy(MODEL_DIR / "samples_arc_easy_2025-01-15T10-22-31.123456.jsonl", arc)
    assert main(["lmeval-report", "--input", str(arc), "--judge", "regex", "--output", "x"]) == 2
    assert "no generated answers to judge (only log-likelihood tasks: arc_easy)" in capsys.readouterr().err
    (arc / "results_2025-01-15T10-22-31.123456.json").write_text("{oops")
    assert main(["lmeval-report", "--input", str(arc), "--judge", "regex", "--output", "x"]) == 2
    err = capsys.readouterr().err
    assert (
        "results_2025-01-15T10-22-31.123456.json:1: not an lm-eval results file" in err and len(err.splitlines()) == 1
    )


# the question: the task's doc_to_text from lm-eval's results file, rendered without the few-shot examples


def test_question_from_the_tasks_doc_to_text(tmp_path):
    run = tmp_path / "run" / MODEL_DIR.name
    shutil.copytree(MODEL_DIR, run)
    results = run / "results_2025-01-15T10-22-31.123456.json"
    question = "Ana buys 3 boxes of 12 pencils and gives away 5 pencils. How many pencils does she have left?"
    for doc_to_text, expected, source in [
        ("Question: {{question}}\nAnswer:", f"Question: {question}\nAnswer:", "doc_to_text"),  # lm-eval's gsm8k
        ("question", question, "doc_to_text"),  # a field name
        ("def doc_to_text(doc):\n    return doc['question']\n", question, "doc"),  # a function, logged as source
        ("Q: {{problem}}", question, "doc"),  # a template this document does not fit
    ]:
        results.write_text(json.dumps({"configs": {"gsm8k": {"doc_to_text": doc_to_text}}}))
        report, _ = lmeval_report([str(run)], "regex")
        assert report["groups"][0]["question_from"] == [source]
        records, _ = read_samples(run / GSM8K.name, config={"doc_to_text": doc_to_text})
        assert records[0]["question"] == expected and records[0]["meta"]["lm_eval"]["question_from"] == source
    assert main(["import-lmeval", "--input", str(run), "--output", str(tmp_path / "out")]) == 0  # reads it too
    [written] = (tmp_path / "out").glob("gsm8k.*.jsonl")
    assert read_records(written)[0]["question"] == question


# repeats: every response of a document is a row


def samples_with_repeats(folder: Path) -> Path:
    """A samples file as lm-eval writes it for a task with ``repeats: 3`` and two filters (as
    gsm8k-cot-self-consistency: the first response's number, and the majority vote): per document and
    filter one line, ``resps`` [[r1, r2, r3]], ``filtered_resps`` what the filter made of them."""
    docs = [
        ("What is 6 times 7?", "6 * 7 = 42.\n#### 42", ["It is 41. #### 41", "6 * 7 = 42. #### 42", "42 #### 42"]),
        ("What is 10 minus 3?", "10 - 3 = 7.\n#### 7", ["The answer is 8. #### 8", "#### 7", "8 #### 8"]),
    ]
    lines = []
    for doc_id, (question, answer, responses) in enumerate(docs):
        numbers = [r.rsplit("#### ", 1)[1] for r in responses]
        target = answer.rsplit("#### ", 1)[1]
        for name, filtered in (("score-first", numbers[0]), ("maj@3", max(set(numbers), key=numbers.count))):
            lines.append(
                {
                    "doc_id": doc_id,
                    "doc": {"question": question, "answer": answer},
                    "target": answer,
                    "arguments": {
                        "gen_args_0": {
                            "arg_0": f"Q: What is 1 plus 1?\nA: 1 + 1 = 2. #### 2\n\nQ: {question}\nA:",
                            "arg_1": {"until": ["Q:"], "do_sample": True, "temperature": 0.2},
                        }
                    },
                    "resps": [responses],
                    "filtered_resps": [filtered],
                    "filter": name,
                    "metrics": ["exact_match"],
                    "doc_hash": "0" * 64,
                    "prompt_hash": "1" * 64,
                    "target_hash": "2" * 64,
                    "exact_match": float(filtered == target),
                }
            )
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "samples_gsm8k-cot-self-consistency_2025-02-01T09-00-00.000001.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_every_repeat_is_its_own_row(tmp_path):
    path = samples_with_repeats(tmp_path / "run" / "m")
    records, skipped = read_samples(path, filter_name="maj@3")
    assert skipped == 0 and len(records) == 6 and len({r["id"] for r in records}) == 6
    assert [(r["meta"]["lm_eval"]["doc_id"], r["meta"]["lm_eval"]["repeat"]) for r in records] == [
        (d, k) for d in (0, 1) for k in range(3)
    ]
    assert [r["candidate"] for r in records[:3]] == ["It is 41. #### 41", "6 * 7 = 42. #### 42", "42 #### 42"]
    assert {r["question"] for r in records[:3]} == {"What is 6 times 7?"}  # not the few-shot prompt
    assert {r["references"][0] for r in records} == {"42", "7"} and {r["meta"]["item"] for r in records[3:]} == {
        "doc:1"
    }
    # lm-eval's metric is a verdict on the majority vote, not on each response: kept per document, no row label
    assert {r["label"] for r in records} == {None} and {r["label_source"] for r in records} == {None}
    assert [r["meta"]["lm_eval"]["value"] for r in records] == [1, 1, 1, 0, 0, 0]  # maj@3: 42 right, 8 wrong
    first, _ = read_samples(path)  # score-first: both documents' first responses (41, 8) wrong
    assert [r["meta"]["lm_eval"]["value"] for r in first] == [0] * 6
    assert [r["id"] for r in first] == [r["id"] for r in records]  # the same responses, whatever the filter


def test_report_judges_every_repeat(tmp_path):
    path = samples_with_repeats(tmp_path / "run" / "m")
    results = {
        "model_name": "m",
        "results": {"gsm8k-cot-self-consistency": {"exact_match,maj@3": 0.5, "exact_match,score-first": 0.0}},
    }
    path.with_name("results_2025-02-01T09-00-00.000001.json").write_text(json.dumps(results))
    report, apart = lmeval_report([str(tmp_path / "run")], "regex", filter_name="maj@3")
    [group] = report["groups"]
    records, _ = read_samples(path)
    verdicts = [d["verdict"] is True for d in RegexJudge().details(records)]
    assert verdicts == [False, True, True, False, True, False]  # every response judged, each on its own
    assert (group["n"], group["docs"], group["repeats"]) == (6, 2, 3) and report["n"] == 6
    assert group["accuracy"] == pytest.approx(3 / 6)
    assert group["lmeval"] == 0.5 and group["lmeval_reported"] == 0.5 and group["filter"] == "maj@3"
    assert group["labelled"] == 0 and group["agreement"] is None and apart == [] and group["in_harness"] is None
    assert group["question_from"] == ["doc"]
    out = tmp_path / "report"
    assert main(["lmeval-report", "--input", str(tmp_path / "run"), "--judge", "regex", "--output", str(out)]) == 0
    assert "| 6 (2 docs × ≤3) |" in (out / "report.md").read_text()


# inside lm-eval: the bertjudge filter judges the raw responses; the bertjudge metric reports its verdicts


@pytest.fixture()
def judge_calls(monkeypatch):
    """Every ``details`` call of a regex or contains judge: (batch size, records)."""
    require("lm_eval")
    from bertjudge.judges.regex import ContainsJudge

    calls = []
    for cls in (RegexJudge, ContainsJudge):
        original = cls.details

        def spy(self, records, batch_size=32, progress=False, _original=original):
            calls.append((batch_size, [dict(r) for r in records]))
            return _original(self, records, batch_size=batch_size, progress=progress)

        monkeypatch.setattr(cls, "details", spy)
    return calls


GSM8K_DOCS = [
    {"question": "What is 6 times 7?", "answer": "6 * 7 = 42.\n#### 42"},
    {"question": "What is 10 minus 3?", "answer": "10 - 3 = 7.\n#### 7"},
    {"question": "What is 1,000 plus 24?", "answer": "#### 1,024"},
]


def test_filter_judges_raw_responses_with_the_question_in_one_batched_call(judge_calls):
    from bertjudge.pipeline.lmeval_metric import BertJudgeFilter, Judged

    resps = [["6 * 7 = 42, so 42."], ["I think it is 8.", "a second repeat"], ["It is 1024."]]
    out = BertJudgeFilter(judge="regex", batch_size=2, category="open_math").apply(iter(resps), GSM8K_DOCS)
    [(batch_size, records)] = judge_calls  # one call for every document, batched by the judge
    assert batch_size == 2 and len(records) == 3
    assert [r["question"] for r in records] == [d["question"] for d in GSM8K_DOCS]
    assert [r["candidate"] for r in records] == [r[0] for r in resps]  # the raw first response of each
    assert [r["references"] for r in records] == [["42"], ["7"], ["1024"]] and {r["category"] for r in records} == {
        "open_math"
    }
    assert all(isinstance(x, Judged) for x in out) and list(out) == [r[0] for r in resps]
    expected = [d["verdict"] for d in RegexJudge().details(records)]
    assert [x.verdict for x in out] == expected == [True, False, True]
    assert all(isinstance(x.score, float) for x in out)
    # templates: Jinja over the document's fields; a rendered list is several references
    docs = [{"q": "Capital of France", "answer": {"aliases": ["Paris", "City of Light"]}}]
    BertJudgeFilter(question="{{q}}?", references="{{answer.aliases}}").apply([["Paris."]], docs)
    assert judge_calls[-1][1][0]["question"] == "Capital of France?"
    assert judge_calls[-1][1][0]["references"] == ["Paris", "City of Light"]
    BertJudgeFilter(question=None).apply([["Paris."]], [{"answer": "Paris"}])  # no question: the judge sees none
    assert judge_calls[-1][1][0]["question"] is None
    assert BertJudgeFilter().apply([], []) == []


def test_filter_options_judge_device_and_errors(judge_calls, monkeypatch):
    from bertjudge.pipeline import lmeval_metric
    from bertjudge.pipeline.lmeval_metric import BertJudgeFilter, cached_judge

    doc = [{"question": "Capital of France?", "answer": "Paris"}]
    answer = [["The capital is Paris."]]
    monkeypatch.delenv("BERTJUDGE_JUDGE", raising=False)
    monkeypatch.delenv("BERTJUDGE_DEVICE", raising=False)
    BertJudgeFilter().apply(answer, doc)
    monkeypatch.setenv("BERTJUDGE_JUDGE", "contains")
    BertJudgeFilter().apply(answer, doc)
    BertJudgeFilter(judge="regex").apply(answer, doc)
    from bertjudge.judges.regex import ContainsJudge

    assert len(judge_calls) == 3
    assert cached_judge("contains") is cached_judge("contains") and isinstance(cached_judge("contains"), ContainsJudge)
    loaded = []
    monkeypatch.setattr(lmeval_metric.Judge, "load", lambda spec, **kw: loaded.append((spec, kw)) or RegexJudge())
    lmeval_metric.cached_judge.cache_clear()
    monkeypatch.setenv("BERTJUDGE_DEVICE", "cpu")
    BertJudgeFilter(judge="some/judge").apply(answer, doc)
    BertJudgeFilter(judge="other/judge", device="meta").apply(answer, doc)
    assert loaded == [("some/judge", {"device": "cpu"}), ("other/judge", {"device": "meta"})]
    lmeval_metric.cached_judge.cache_clear()
    with pytest.raises(ValueError, match="category 'maths' is not one of"):
        BertJudgeFilter(category="maths")
    with pytest.raises(ValueError, match=r"document 0: its question option '\{\{problem\}\}' does not fit"):
        BertJudgeFilter(question="{{problem}}").apply(answer, doc)
    with pytest.raises(ValueError, match="not text"):
        BertJudgeFilter().apply([[(-1.2, True)]], doc)  # a log-likelihood task's responses


def test_metric_reports_the_filters_verdicts_and_is_registered():
    require("lm_eval")
    from lm_eval.api import registry

    from bertjudge.pipeline.lmeval_metric import BertJudgeFilter, Judged, bertjudge

    assert bertjudge(references=["42"], predictions=[Judged("x #### 42", True, 0.9)]) == 1.0
    assert bertjudge(references=["42"], predictions=[Judged("x #### 41", False, 0.1)]) == 0.0
    assert bertjudge(references=["42"], predictions=[Judged("no number", None, None)]) == 0.0  # unreadable: wrong
    assert math.isnan(bertjudge(references=["42"], predictions=["42"]))  # another filter's output: not judged
    with pytest.raises(ValueError, match=r"unknown option\(s\) \['judge'\].*go on the bertjudge filter"):
        bertjudge(references=["42"], predictions=["42"], judge="regex")
    # registered as lm-eval registers its own: a YAML names them "bertjudge"
    assert registry.get_metric("bertjudge") is bertjudge and registry.get_filter("bertjudge") is BertJudgeFilter
    assert registry.get_metric_aggregation("bertjudge") is registry.get_aggregation("mean")
    assert registry.is_higher_better("bertjudge") is True
    judged = pickle.loads(pickle.dumps(Judged("x", True, 0.75)))
    assert (judged, judged.verdict, judged.score, type(judged)) == ("x", True, 0.75, Judged)
    assert Judged("Paris").verdict is None  # lm-eval casts the target to the response's type
