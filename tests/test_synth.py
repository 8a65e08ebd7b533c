"""synth: a labelled training set from (question, reference) rows, in the corpus's styles."""

from __future__ import annotations

import json
import re
from collections import Counter
from fractions import Fraction

import pytest

from bertjudge.cli.main import main
from bertjudge.core import records
from bertjudge.data import corpus, synth

ROWS = [
    {
        "question": "What is the capital of France?\n\nA. Lyon\nB. Paris\nC. Nice\nD. Lille\n\nAnswer with a letter.",
        "reference": "B",
    },
    {"question": "Pick the metal: (A) oak (B) iron (C) wool (D) glass", "references": ["(B)"], "task": "quiz"},
    {"question": "Sam has 3 apples and buys 5 more at $2 each. How many apples does Sam have?", "reference": "8"},
    {"question": "A rope is 120 cm long and is cut in half. How long is each piece?", "reference": "60 cm"},
    {
        "question": "Context: Marie Curie was born in Warsaw in 1867. She moved to Paris in 1891.\n"
        "Where was Marie Curie born?",
        "reference": "Warsaw",
    },
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
    assert main(["synth", "--input", str(src), "--output", str(tmp_path / "out"), "--val-fraction", "0"]) == 0
    rows = records.read_records(tmp_path / "out" / "train.jsonl")
    assert len(rows) == 4 * len(ROWS) and Counter(r["label"] for r in rows) == {0: 14, 1: 14}
    assert {r["label_source"] for r in rows} == {"synthetic:synth-v1"}
    assert {r["task"] for r in rows} == {"synth", "quiz"}
    assert "wrote train.jsonl (28)" in capsys.readouterr().out
    again = tmp_path / "again"
    assert main(["synth", "--input", str(src), "--output", str(again), "--val-fraction", "0"]) == 0
    assert (again / "train.jsonl").read_bytes() == (tmp_path / "out" / "train.jsonl").read_bytes()


def test_category_is_inferred(made):
    by_question = {r["question"]: r["category"] for r in made}
    assert [by_question[r["question"]] for r in ROWS] == [
        "multiple_choice",
        "multiple_choice",
        "open_math",
        "open_math",
        "context_extraction",
        "context_extraction",
        "context_extraction",
    ]


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
            assert any(
                x.lower() in cand.lower()
                for x in (
                    "B",
                    "Paris",
                    "iron",
                    "8",
                    "eight",
                    "60",
                    "Warsaw",
                    "unanswerable",
                    "does not say",
                    "cannot be",
                    "committee",
                )
            )
    kinds = Counter(r["meta"]["kind"] for r in made)
    assert kinds["other_option"] and kinds["other_span"] and kinds["plain"]


def test_bad_input_is_refused_with_its_line(tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(ROWS[0]) + "\n" + json.dumps({"question": "x"}) + "\n", encoding="utf-8")
    assert main(["synth", "--input", str(bad), "--output", str(tmp_path / "o")]) == 2
    assert "bad.jsonl:2" in capsys.readouterr().err and not (tmp_path / "o").exists()
    not_label = write(tmp_path / "mc.jsonl", [{"question": "Q?", "reference": "Paris", "category": "multiple_choice"}])
    assert main(["synth", "--input", str(not_label), "--output", str(tmp_path / "o")]) == 2
    assert "mc.jsonl:1" in capsys.readouterr().err


def test_parse_options_and_item_from_reference():
    labels, options = corpus.parse_options("Q\n(1) red\n(2) blue\n(3) green")
    assert labels == ["1", "2", "3"] and options == ["red", "blue", "green"]
    item = corpus.item_from_reference("How far?", ["1,250 meters"])
    assert item.category == "open_math" and item.value == 1250 and item.unit == "meters"
    assert "kilometers" in item.alt_units


QA_ROWS = [
    {"question": "Who created the Chipmunks?", "references": ["Ross Bagdasarian", "David Seville"]},
    {"question": "Q: What is the capital of France?", "reference": "Paris"},
    {"question": "When was the Declaration of Independence signed?", "reference": "July 4, 1776"},
    {
        "question": "What is the most common cause of death worldwide?",
        "references": ["Cancer", "Malignant neoplasm", "Cancers"],
    },
    {
        "question": "Passage: The Chipmunks were created by Ross Bagdasarian in 1958.\nWho created the Chipmunks?",
        "reference": "Ross Bagdasarian",
    },
]


def test_open_qa_is_inferred_for_trivia_and_extraction_for_passages():
    cases = [
        ("Who created the Chipmunks?", "Ross Bagdasarian", "open_qa"),
        ("Question: What is the chemical symbol for sodium?", "Na", "open_qa"),  # 'Na' is sodium, not 'n/a'
        ("Which river flows through Cairo?", "the Nile", "open_qa"),
        (
            "Context: Ross Bagdasarian created the Chipmunks.\nWho created them?",
            "Ross Bagdasarian",
            "context_extraction",
        ),
        ("Passage: ...\n\nQ: Who won?", "Ava", "context_extraction"),
        ("According to the text, who created the band?", "Ross Bagdasarian", "context_extraction"),
        ("Read the text below.\n\nAva was born in Lyon. Where was Ava born?", "Lyon", "context_extraction"),
        (
            "Who created the Chipmunks? " + "The band had a long history. " * 15,
            "Ross Bagdasarian",
            "context_extraction",
        ),
        ("Who created the Chipmunks?", "unanswerable", "context_extraction"),
        (
            "Why is the sky blue?",
            "because air scatters short wavelengths of sunlight more than long ones",
            "context_extraction",
        ),
        ("In what year did the Berlin Wall fall?", "1989", "open_math"),
        (None, "Paris", "context_extraction"),
    ]
    assert [corpus.infer_category(q, r) for q, r, _ in cases] == [want for _, _, want in cases]


def test_open_qa_items_read_aliases_and_wrong_entities_off_the_row():
    item = corpus.item_from_reference("What is the capital of France?", ["Paris"])
    assert item.category == "open_qa" and item.claims == ["The capital of France is {t}."]
    capitals = {c for _, c in corpus.CAPITALS} | set(corpus.CITIES) | {b[0] for b in corpus.BIG_CITIES}
    assert item.spans and set(item.spans) <= capitals and "Paris" not in item.spans
    assert item.wrong_forms["near_miss"] == ["Paris, Texas"] and "France" in item.wrong_forms["other_question"]
    item = corpus.item_from_reference("When was the Declaration of Independence signed?", ["July 4, 1776"])
    forms = dict(item.forms)
    assert (
        forms["iso"] == "1776-07-04" and forms["day_month"] == "4 July 1776" and forms["weekday"].startswith("Thursday")
    )
    assert all(corpus._date_of(w) != (1776, 7, 4) for w in item.wrong_forms["off_by_one"] + item.spans)
    item = corpus.item_from_reference("Who created the Chipmunks?", ["Ross Bagdasarian", "David Seville"])
    assert ("alias", "David Seville") in item.forms and ("initials", "R. Bagdasarian") in item.forms
    assert item.claims == ["{t} created the Chipmunks."] and item.wrong_forms["other_question"] == ["Chipmunks"]
    assert all("Bagdasarian" in w and w != "Ross Bagdasarian" for w in item.wrong_forms["near_miss"])
    assert not any(w.split()[-1] in ("Bagdasarian", "Seville") for w in item.spans)
    item = corpus.item_from_reference("Which river flows through Cairo?", ["the Nile"])
    assert {"Nile", "Nile River"} <= {t for _, t in item.forms} and "Blue Nile" in item.wrong_forms["near_miss"]
    item = corpus.item_from_reference("Which mission first landed people on the Moon?", ["Apollo 11"])
    assert item.category == "open_qa" and set(item.wrong_forms["off_by_one"]) == {"Apollo 10", "Apollo 12"}
    assert item.spans == ["Moon"]  # nothing of its type is known: the question's own name is the wrong answer


def test_open_qa_candidates_are_labelled_by_the_references(tmp_path):
    made = synth.synthesize(
        synth.read_rows(write(tmp_path / "qa.jsonl", QA_ROWS)), per_question=16, seed=2, val_fraction=0.0
    )
    assert Counter(r["category"] for r in made) == {"open_qa": 64, "context_extraction": 16}
    right_forms = {  # what a correct candidate may say: the references and the forms derived from them
        "Who created the Chipmunks?": ["Ross Bagdasarian", "David Seville", "R. Bagdasarian"],
        "Q: What is the capital of France?": ["Paris"],
        "When was the Declaration of Independence signed?": [
            "July 4",
            "4 July 1776",
            "1776-07-04",
            "July 4th",
            "Jul 4",
            "fourth of July",
        ],
        "What is the most common cause of death worldwide?": ["Cancer", "Malignant neoplasm", "Cancers"],
    }
    kinds = Counter()
    for r in (r for r in made if r["category"] == "open_qa"):
        cand, kind = r["candidate"].lower(), r["meta"]["kind"]
        kinds[kind, r["label"]] += 1
        if r["label"] == 1:
            assert any(f.lower() in cand for f in right_forms[r["question"]]), (kind, cand)
        if r["label"] == 0 and kind in ("other_entity", "near_miss", "wrong_paragraph", "mentions_reference"):
            assert cand.strip(" .*") not in {x.lower() for x in r["references"]}
            if r["question"] == "Q: What is the capital of France?" and kind == "other_entity":
                assert "paris" not in cand
    assert kinds["paragraph", 1] + kinds["restated", 1] + kinds["decorated", 1] >= 3, kinds
    assert (
        sum(n for (k, lab), n in kinds.items() if lab == 0 and k in ("other_entity", "near_miss", "mentions_reference"))
        >= 4
    )
