"""The frozen real-output test sets (real-test-v1, real-test-v2): their bytes are checksummed, and no question
of one is in any other real data file (all of which were trained on, chose something, or are the other test)."""

import hashlib
from pathlib import Path

import pytest

from bertjudge.core.records import read_records

REAL = Path("data/real")
TESTS = {
    "real-test-v1": (
        {"open_qa", "multiple_choice", "context_extraction", "open_math"},
        {("evouna", "human:evouna"), ("embedded", "read:llm-agent")},
    ),
    "real-test-v2": (
        {"multiple_choice", "context_extraction", "open_math"},
        {("embedded", "read:llm-agent")},
    ),
}


def _words(text):
    return " ".join((text or "").lower().split())


def _question(rec):
    return _words(rec["question"])


@pytest.mark.parametrize("name", TESTS)
def test_the_test_set_is_frozen(name):
    expected = (REAL / f"{name}.sha256").read_text().split()[0]
    assert hashlib.sha256((REAL / f"{name}.jsonl.gz").read_bytes()).hexdigest() == expected, (
        f"{name} changed: it is frozen; make a new version instead"
    )


@pytest.mark.parametrize("name", TESTS)
def test_the_test_set_holds_its_categories_and_says_who_labelled_it(name):
    categories, sources = TESTS[name]
    rows = list(read_records(REAL / f"{name}.jsonl.gz"))
    assert {r["split"] for r in rows} == {"test"}
    assert {r["category"] for r in rows} == categories
    assert {(r["task"].split("-")[0], r["label_source"]) for r in rows} == sources
    assert len({r["id"] for r in rows}) == len(rows)


@pytest.mark.parametrize("name", TESTS)
def test_no_question_of_the_test_set_is_anywhere_else(name):
    test = REAL / f"{name}.jsonl.gz"
    test_questions = {_question(r) for r in read_records(test)}
    test_ids = {r["id"] for r in read_records(test)}
    for path in sorted(REAL.glob("*.jsonl.gz")):
        if path == test:
            continue
        rows = list(read_records(path))
        if path.name.startswith("evouna"):  # the source of v1's open-QA part: only its test split may match
            rows = [r for r in rows if r["split"] != "test"]
        assert not test_questions & {_question(r) for r in rows}, path
        assert not test_ids & {r["id"] for r in rows}, path


def _body(rec):
    """The question a SmolLM2 row was asked, without the answer-format instruction its variant appended."""
    from bertjudge.pipeline.tasks import instruction

    text = instruction(rec["category"], rec["meta"]["variant"])
    return _words(rec["question"][: -len(text) - 2] if text else rec["question"])


def _asked(rec):
    """An embedded corpus question as the SmolLM2 task files ask it (a multiple-choice one without its format line)."""
    import re

    return _words(re.sub(MC_FORMAT_LINES, "", rec["question"].strip()))


MC_FORMAT_LINES = (
    r"\n+(Answer with the letter of the correct option\.|Choose the best answer\.|Respond with only the option "
    r"label\.|Think step by step, then write 'Final answer: <label>'\.|Explain your choice briefly\.|"
    r"Select one option\.)\s*$"
)


@pytest.mark.parametrize("name", TESTS)
def test_no_question_of_the_test_set_is_in_the_embedded_training_split(name):
    from bertjudge.data.sources import load_source

    train = {_asked(r) for r in load_source("embedded:train?n=5000")}
    test = {_asked(r) for r in load_source("embedded:test?n=6400")}
    embedded = {_body(r) for r in read_records(REAL / f"{name}.jsonl.gz") if r["task"].startswith("embedded")}
    assert embedded & test  # the check can match: these are embedded test questions
    assert not embedded & train
