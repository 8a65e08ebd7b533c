"""The frozen real-output test sets (real-test-v1, v2, v3): their bytes are checksummed, and no question of v1 or v2
is in any other real data file (all of which were trained on, chose something, or are another test). v3's answers
are new; what it shares with other files is checked apart (``test_real_test_v3_…``)."""

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
    "real-test-v3": (
        {"open_qa", "multiple_choice", "context_extraction", "open_math"},
        {("v3", "read:llm-agent"), ("champ", "read:llm-agent")},
    ),
}
V1_V2 = ("real-test-v1", "real-test-v2")


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


@pytest.mark.parametrize("name", V1_V2)
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


@pytest.mark.parametrize("name", V1_V2)
def test_no_question_of_the_test_set_is_in_the_embedded_training_split(name):
    from bertjudge.data.sources import load_source

    train = {_asked(r) for r in load_source("embedded:train?n=5000")}
    test = {_asked(r) for r in load_source("embedded:test?n=6400")}
    embedded = {_body(r) for r in read_records(REAL / f"{name}.jsonl.gz") if r["task"].startswith("embedded")}
    assert embedded & test  # the check can match: these are embedded test questions
    assert not embedded & train


V3 = REAL / "real-test-v3.jsonl.gz"


def _v3_body(rec):
    """A v3 SmolLM2 question without the answer-format instruction it was asked with (``meta.instruction``)."""
    suffix = "\n\n" + rec["meta"]["instruction"]
    assert rec["question"].endswith(suffix)
    return _words(rec["question"][: -len(suffix)])


def test_real_test_v3_rows_are_new_and_its_questions_were_never_trained_on():
    """Every v3 answer is new (no id of it anywhere else). Its embedded questions are in no other file; its open-QA
    questions are EVOUNA-TQ test questions (real-test-v1's, never trained on); its CHAMP problems are test-split
    problems, in no file's train or val split (other solutions to them are in development sets)."""
    rows = list(read_records(V3))
    ids = {r["id"] for r in rows}
    smollm2 = [r for r in rows if r["task"].startswith("v3-")]
    champ = [r for r in rows if r["task"] == "champ"]
    assert len(smollm2) + len(champ) == len(rows) and smollm2 and champ
    embedded = {_v3_body(r) for r in smollm2 if r["category"] != "open_qa"}
    open_qa = {_v3_body(r) for r in smollm2 if r["category"] == "open_qa"}
    problems = {r["meta"]["problem"] for r in champ}
    for path in sorted(REAL.glob("*.jsonl.gz")):
        if path == V3:
            continue
        others = list(read_records(path))
        assert not ids & {r["id"] for r in others}, path
        assert not embedded & {_asked(r) for r in others if r.get("question")}, path
        assert not open_qa & {_question(r) for r in others if r.get("split") != "test"}, path
        trained = {r["meta"].get("problem") for r in others if r.get("split") in ("train", "val")}
        assert not problems & trained, path
    evouna_test = {_question(r) for r in read_records(REAL / "evouna-tq-v1.jsonl.gz") if r["split"] == "test"}
    assert open_qa and open_qa <= evouna_test


def test_real_test_v3_asks_for_its_answers_in_at_least_eight_prescribed_formats():
    from bertjudge.data.answer_formats import FORMATS

    rows = [r for r in read_records(V3) if r["task"].startswith("v3-")]
    formats = {r["meta"]["format"] for r in rows}
    assert len(formats) >= 8 and all(FORMATS[f].prescribed for f in formats)
    assert all(r["meta"]["instruction"] in r["question"] for r in rows)


def test_real_test_v3_embedded_questions_are_test_questions_never_in_the_training_split():
    from bertjudge.data.sources import load_source

    rows = [r for r in read_records(V3) if r["task"].startswith("v3-") and r["category"] != "open_qa"]
    asked = {_v3_body(r) for r in rows}
    train = {_asked(r) for r in load_source("embedded:train?n=5000")}
    test = {_asked(r) for r in load_source("embedded:test?n=12000")}
    assert asked <= test
    assert not asked & train
