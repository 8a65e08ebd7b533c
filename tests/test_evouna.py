"""The EVOUNA importer on a file in EVOUNA's layout, and the committed import."""

import gzip
import json

import pytest

from bertjudge.cli.main import main
from bertjudge.core.records import RecordError, read_records
from bertjudge.pipeline.evouna import aliases, question_split, read_evouna


def _item(question, golden, improper=False, **answers):
    item = {"question": question, "golden_answer": golden, "improper": improper}
    for system, (answer, judged) in answers.items():
        item[f"answer_{system}"], item[f"judge_{system}"] = answer, judged
    return item


def test_read_evouna_records(tmp_path):
    path = tmp_path / "TQ.json"
    path.write_text(
        json.dumps(
            [
                _item(
                    "Who was the man behind The Chipmunks?",
                    "David Seville/Ross Bagdasarian//David Seville",
                    fid=("David Seville", True),
                    chatgpt=("Created by Ross Bagdasarian Sr. in 1958.", False),
                    gpt4=("", True),
                ),
                _item("A rude question?", "x", improper=True, fid=("x", True)),
            ]
        )
    )
    records = read_evouna(path)
    assert [r["candidate_model"] for r in records] == ["FiD (DPR+FiD)", "ChatGPT-3.5"]  # empty answer, improper skipped
    first = records[0]
    assert first["references"] == ["David Seville", "Ross Bagdasarian"]
    assert (first["category"], first["task"], first["label_source"]) == ("open_qa", "evouna-tq", "human:evouna")
    assert [r["label"] for r in records] == [1, 0]
    assert records[0]["split"] == records[1]["split"]  # one question, one split


def test_read_evouna_refuses_bad_items(tmp_path):
    path = tmp_path / "NQ.json"
    path.write_text(json.dumps([{"question": "q", "golden_answer": 3}]))
    with pytest.raises(RecordError, match=r"NQ.json: item 0"):
        read_evouna(path)
    path.write_text("{not json")
    with pytest.raises(RecordError, match="not an EVOUNA JSON file"):
        read_evouna(path)


def test_question_split_shares():
    splits = [question_split(f"question {i}") for i in range(4000)]
    shares = {s: splits.count(s) / len(splits) for s in ("train", "val", "test")}
    assert abs(shares["train"] - 0.65) < 0.03 and abs(shares["val"] - 0.15) < 0.03 and abs(shares["test"] - 0.2) < 0.03
    assert question_split("Who  was HE?") == question_split("who was he?")
    assert aliases(" a / b /a/") == ["a", "b"]


def test_cli_writes_records(tmp_path, capsys):
    src = tmp_path / "TQ.json"
    src.write_text(json.dumps([_item("Q?", "A", gpt35=("A.", True))]))
    out = tmp_path / "tq.jsonl.gz"
    assert main(["import-evouna", "--input", str(src), "--output", str(out)]) == 0
    assert [r["candidate"] for r in read_records(out)] == ["A."]
    assert main(["import-evouna", "--input", str(tmp_path / "missing.json"), "--output", str(out)]) == 2
    assert "missing.json" in capsys.readouterr().err


def test_committed_import_is_question_disjoint():
    with gzip.open("data/real/evouna-tq-v1.jsonl.gz", "rt") as f:
        rows = [json.loads(line) for line in f]
    assert len(rows) == 9690 and all(r["label_source"] == "human:evouna" for r in rows)
    by_split = {}
    for r in rows:
        by_split.setdefault(r["split"], set()).add(r["question"])
    assert set(by_split) == {"train", "val", "test"}
    assert not (by_split["train"] & by_split["test"]) and not (by_split["val"] & by_split["test"])
    assert not (by_split["train"] & by_split["val"])
