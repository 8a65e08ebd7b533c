"""lm-evaluation-harness per-sample files (its real format) imported as records."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from bertjudge.cli.main import main
from bertjudge.core.records import RecordError, read_records
from bertjudge.judges.regex import RegexJudge
from bertjudge.pipeline.lmeval import lmeval_category, read_samples, references

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
    assert first["question"].endswith("How many pencils does she have left?\nAnswer:")
    assert [r["references"] for r in records] == [["31"], ["25000"], ["20"]]
    assert [r["label"] for r in records] == [1, 0, 0]  # strict-match, listed first
    assert {r["label_source"] for r in records} == {"rule:lm-eval:exact_match"}
    info = records[1]["meta"]["lm_eval"]
    assert info["filter"] == "strict-match" and info["doc_id"] == 1
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
    assert rec["question"].endswith("\nAnswer:") and rec["label"] == 1
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
    from bertjudge.pipeline.lmeval_report import lmeval_report

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


# the in-harness metric (what a task YAML's metric_list names)


def test_metric_judge_from_yaml_then_environment_then_regex(monkeypatch):
    from bertjudge.judges.loading import Judge
    from bertjudge.pipeline.lmeval_metric import bertjudge_acc, cached_judge

    answer, target = "The capital is Paris.", "Paris"
    record = [{"question": None, "candidate": answer, "references": [target], "category": "other"}]
    expected = {spec: float(Judge.load(spec).details(record)[0]["verdict"] is True) for spec in ("regex", "contains")}
    assert expected["regex"] != expected["contains"]  # so which judge ran is visible
    monkeypatch.delenv("BERTJUDGE_JUDGE", raising=False)
    assert bertjudge_acc(references=[target], predictions=[answer]) == expected["regex"]
    monkeypatch.setenv("BERTJUDGE_JUDGE", "contains")
    assert bertjudge_acc(references=[target], predictions=[answer]) == expected["contains"]
    assert bertjudge_acc(references=[target], predictions=[answer], judge="regex") == expected["regex"]
    assert cached_judge("contains") is cached_judge("contains")


def test_metric_reads_targets_like_the_importer_and_rejects_unknown_options():
    from bertjudge.pipeline.lmeval_metric import bertjudge_acc

    target = "12 * 2 = 24.\n#### 1,024"
    answers = ["So the total is 1024.", "So the total is 1023."]
    records = [
        {"question": None, "candidate": a, "references": references(target), "category": "open_math"} for a in answers
    ]
    expected = [float(d["verdict"] is True) for d in RegexJudge().details(records)]
    assert [bertjudge_acc([target], [a], category="open_math", judge="regex") for a in answers] == expected
    assert sorted(expected) == [0.0, 1.0]
    assert bertjudge_acc([target, target], ["1024", "7"], category="open_math") == pytest.approx(0.5)
    with pytest.raises(ValueError, match=r"unknown option\(s\) \['treshold'\]"):
        bertjudge_acc([target], ["1024"], treshold=0.3)
    with pytest.raises(RecordError, match="bertjudge_acc, item 0: 'category' must be one of"):
        bertjudge_acc([target], ["1024"], category="maths")
