"""lm-evaluation-harness per-sample files (its real format) imported as records."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from bertjudge.cli.main import main
from bertjudge.core.records import RecordError, read_records
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
