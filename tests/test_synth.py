"""synth: a labelled training set from (question, reference) rows, in the corpus's styles."""

from __future__ import annotations

import json
import re
from collections import Counter
from fractions import Fraction

import pytest

from bertjudge import records
from bertjudge.data import corpus, synth

ROWS = [
    {"question": "What is the capital of France?\n\nA. Lyon\nB. Paris\nC. Nice\nD. Lille\n\nAnswer with a letter.",
     "reference": "B"},
    {"question": "Pick the metal: (A) oak (B) iron (C) wool (D) glass", "references": ["(B)"], "task": "quiz"},
    {"question": "Sam has 3 apples and buys 5 more at $2 each. How many apples does Sam have?", "reference": "8"},
    {"question": "A rope is 120 cm long and is cut in half. How long is each piece?", "reference": "60 cm"},
    {"question": "Context: Marie Curie was born in Warsaw in 1867. She moved to Paris in 1891.\n"
                 "Where was Marie Curie born?", "reference": "Warsaw"},
    {"question": "Context: Marie Curie was born in Warsaw in 1867.\nWhen did she die?", "reference": "unanswerable"},
    {"question": "Who wrote the report?", "reference": "the committee", "category": "context_extraction"},
]


def write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    src = write(tmp_path_factory.mktemp("synth") / "qr.jsonl", ROWS)
    return synth.synthesize(synth.read_rows(src), per_question=8, seed=1, val_fraction=0.0)


def test_cli_writes_a_balanced_labelled_set(tmp_path, capsys):
    src = write(tmp_path / "qr.jsonl", ROWS)
    assert synth.cli(["--input", str(src), "--out", str(tmp_path / "out"), "--val-fraction", "0"]) == 0
    rows = records.read_records(tmp_path / "out" / "train.jsonl")
    assert len(rows) == 4 * len(ROWS) and Counter(r["label"] for r in rows) == {0: 14, 1: 14}
    assert {r["label_source"] for r in rows} == {"synthetic:synth-v1"}
    assert {r["task"] for r in rows} == {"synth", "quiz"}
    assert "wrote train.jsonl (28)" in capsys.readouterr().out
    again = tmp_path / "again"
    assert synth.cli(["--input", str(src), "--out", str(again), "--val-fraction", "0"]) == 0
    assert (again / "train.jsonl").read_bytes() == (tmp_path / "out" / "train.jsonl").read_bytes()


def test_category_is_inferred(made):
    by_question = {r["question"]: r["category"] for r in made}
    assert [by_question[r["question"]] for r in ROWS] == [
        "multiple_choice", "multiple_choice", "open_math", "open_math", "context_extraction", "context_extraction",
        "context_extraction"]


def test_labels_follow_the_reference(made):
    for r in made:
        q, cand, kind = r["question"], r["candidate"], r["meta"]["kind"]
        short = r["meta"]["style"] not in ("reasoning", "explained")
        if q.startswith("What is the capital") and kind == "other_option" and short:
            assert re.search(r"\b[ACD]\b|Lyon|Nice|Lille", cand) and not re.search(r"\bB\b|Paris", cand)
        if q.startswith("Sam") and kind in ("off_by_one", "sign_error", "intermediate", "decimal_shift", "slip"):
            numbers = re.findall(r"-?\d+(?:\.\d+)?", cand)
            assert Fraction(numbers[-1]) != 8 if numbers else "eight" not in cand
        if q.startswith("A rope") and kind == "wrong_unit":
            assert re.search(r"\b60 (m|mm)\b", cand)
        if "Where was Marie" in q and kind == "other_span":
            assert "Warsaw" not in cand and ("Paris" in cand or "Marie Curie" in cand)
        if r["label"] == 1 and kind == "plain" and r["meta"]["style"] in ("bare", "final_line"):
            assert any(x.lower() in cand.lower() for x in ("B", "Paris", "iron", "8", "eight", "60", "Warsaw",
                                                           "unanswerable", "does not say", "cannot be", "committee"))
    kinds = Counter(r["meta"]["kind"] for r in made)
    assert kinds["other_option"] and kinds["other_span"] and kinds["plain"]


def test_bad_input_is_refused_with_its_line(tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(ROWS[0]) + "\n" + json.dumps({"question": "x"}) + "\n", encoding="utf-8")
    assert synth.cli(["--input", str(bad), "--out", str(tmp_path / "o")]) == 2
    assert "bad.jsonl:2" in capsys.readouterr().err and not (tmp_path / "o").exists()
    not_label = write(tmp_path / "mc.jsonl", [{"question": "Q?", "reference": "Paris", "category": "multiple_choice"}])
    assert synth.cli(["--input", str(not_label), "--out", str(tmp_path / "o")]) == 2
    assert "mc.jsonl:1" in capsys.readouterr().err


def test_parse_options_and_item_from_reference():
    labels, options = corpus.parse_options("Q\n(1) red\n(2) blue\n(3) green")
    assert labels == ["1", "2", "3"] and options == ["red", "blue", "green"]
    item = corpus.item_from_reference("How far?", ["1,250 meters"])
    assert item.category == "open_math" and item.value == 1250 and item.unit == "meters"
    assert "kilometers" in item.alt_units
