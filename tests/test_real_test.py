"""real-test-v1: the frozen real-output test set. Its bytes are checksummed, and no question of it is in
any other real data file (all of which were trained on, or chose something)."""

import hashlib
from pathlib import Path

from bertjudge.core.records import read_records

REAL = Path("data/real")
TEST = REAL / "real-test-v1.jsonl.gz"


def _question(rec):
    return " ".join((rec["question"] or "").lower().split())


def test_real_test_v1_is_frozen():
    expected = (REAL / "real-test-v1.sha256").read_text().split()[0]
    assert hashlib.sha256(TEST.read_bytes()).hexdigest() == expected, (
        "real-test-v1 changed: it is frozen; make a new version (real-test-v2) instead"
    )


def test_real_test_v1_holds_every_category_and_says_who_labelled_it():
    rows = list(read_records(TEST))
    assert {r["split"] for r in rows} == {"test"}
    categories = {r["category"] for r in rows}
    assert categories == {"open_qa", "multiple_choice", "context_extraction", "open_math"}
    sources = {(r["task"].split("-")[0], r["label_source"]) for r in rows}
    assert sources == {("evouna", "human:evouna"), ("embedded", "read:llm-agent")}
    assert len({r["id"] for r in rows}) == len(rows)


def test_no_question_of_real_test_v1_is_anywhere_else():
    test_questions = {_question(r) for r in read_records(TEST)}
    test_ids = {r["id"] for r in read_records(TEST)}
    for path in sorted(REAL.glob("*.jsonl.gz")):
        if path == TEST:
            continue
        rows = list(read_records(path))
        if path.name.startswith("evouna"):  # the source of its open-QA part: only its test split may match
            rows = [r for r in rows if r["split"] != "test"]
        assert not test_questions & {_question(r) for r in rows}, path
        assert not test_ids & {r["id"] for r in rows}, path


def test_no_question_of_real_test_v1_is_in_the_embedded_training_split():
    from bertjudge.data.sources import load_source

    def opening(rec):  # the question's first words: the answer-format lines of the variants differ
        return _question(rec)[:80]

    train = {opening(r) for r in load_source("embedded:train?n=5000")}
    val_and_test = {opening(r) for split in ("val", "test") for r in load_source(f"embedded:{split}?n=2000")}
    embedded = {opening(r) for r in read_records(TEST) if r["task"].startswith("embedded")}
    assert embedded & val_and_test  # the check can match: these are embedded test questions
    assert not embedded & train
