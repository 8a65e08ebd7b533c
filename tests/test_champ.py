"""CHAMP conversations as rule-labelled records: conversion, the rule labeller, splits, sampling.

The tests build a tiny file in CHAMP's v0.json format; the champ-dataset package is not needed.
"""

import json
from collections import defaultdict

import pytest

from bertjudge.cli.main import COMMANDS, main
from bertjudge.core.records import read_records
from bertjudge.data.sources import load_source
from bertjudge.pipeline import champ

SUMMARIZE = "Now, summarize the answer above in one sentence, without any intermediate steps or explanations."


def conversation(solution, summary, solution_error=None, concept_turns=0):
    """A CHAMP conversation: system, (concept question and answer)*, problem, solution, summarizer, summary."""
    messages = [{"role": "System", "text": "You are an expert on mathematics.", "error": None}]
    for i in range(concept_turns):
        messages += [
            {"role": "User", "text": f"Please explain concept {i}.", "error": None},
            {"role": "Model.GPT-4 Turbo", "text": f"Concept {i} says that 99 is odd.", "error": None},
        ]
    messages.append(
        {"role": "User", "text": "Solve the following problem. Make sure to show your work.", "error": None}
    )
    messages.append({"role": "Model.X", "text": solution, "error": solution_error})
    messages.append({"role": "User", "text": SUMMARIZE, "error": None})
    if solution_error:
        messages.append({"role": "Model.X", "text": None, "error": "LENGTH_PREVIOUS"})
    else:
        messages.append({"role": "Model.X", "text": summary, "error": None})
    return {"messages": messages}


def problem(pid, answer, conversations):
    return {
        "identifier": pid,
        "_raw_text": f"Problem {pid}?",
        "_text": f"Problem {pid}?",
        "category": "Combinatorics",
        "_raw_answer": answer,
        "_answer": answer,
        "fws_annotations": {},
        "conversations": conversations,
    }


@pytest.fixture
def v0(tmp_path):
    cut = {
        "messages": [
            {"role": "System", "text": "s", "error": None},
            {"role": "User", "text": "q", "error": None},
            {"role": "Model.GPT-4", "text": "Concept: a long explanation", "error": "LENGTH_CURRENT"},
            {"role": "User", "text": "Solve it.", "error": None},
            {"role": "Model.GPT-4", "text": None, "error": "LENGTH_PREVIOUS"},
            {"role": "User", "text": SUMMARIZE, "error": None},
            {"role": "Model.GPT-4", "text": None, "error": "LENGTH_PREVIOUS"},
        ]
    }
    problems = {
        "P_Combinatorics_1": problem(
            "P_Combinatorics_1",
            "12",
            {
                "GPT-4|0-Shot": conversation(
                    "The sides add up: 5 + 7 = 12.\n\nTherefore, the side is 12 cm.", "The side of the square is 12 cm."
                ),
                "GPT-3.5|0-Shot": conversation(
                    "We get 4 * 250 = 1,000.\n\nSo, there are 1,000 ways in total.", "There are 1,000 ways."
                ),
                "PaLM 2 Medium|0-Shot": conversation(
                    "Let us count the cases one by one: 1, 2, 3", None, solution_error="LENGTH_CURRENT"
                ),
                "GPT-4 Turbo|Name C w/o H": conversation(
                    "Thus the answer is $\\boxed{12}$.", "The answer is 12.", concept_turns=2
                ),
                "GPT-4|Name C w/ H": cut,
                "GPT-4|5-Shot": conversation("Therefore, the count is 12.", "There are 13 such squares."),
            },
        ),
        "P_Number-Theory_1": problem(
            "P_Number-Theory_1",
            "No",
            {
                "GPT-4|0-Shot": conversation("No, it is impossible.", "No, such a number does not exist."),
            },
        ),
        "P_Inequality_1": problem(
            "P_Inequality_1",
            "1/3",
            {
                "GPT-4|0-Shot": conversation(
                    "Hence the smallest value is approximately 0.333.", "The smallest value is approximately 0.333."
                ),
                "GPT-3.5|0-Shot": conversation(
                    "So the smallest value is \\( \\frac{1}{3} \\), reached at a = b.", "The smallest value is 1/3."
                ),
            },
        ),
        "P_Polynomial_1": problem(
            "P_Polynomial_1",
            "x=±1",
            {
                "GPT-4|0-Shot": conversation("So x = 1.", "The root is x = 1."),
            },
        ),
    }
    path = tmp_path / "v0.json"
    path.write_text(json.dumps({"problems": problems, "concepts": {}, "hints": {}}))
    return path


def by_key(records):
    return {(r["meta"]["problem"], r["meta"]["conversation"]): r for r in records}


def test_conversion_picks_the_solution_turn_and_keeps_provenance(v0):
    records, skipped = champ.convert(champ.load(v0))
    assert skipped == {"solution turn without text (LENGTH_PREVIOUS)": 1}  # GPT-4|Name C w/ H: cut before solving
    rows = by_key(records)
    assert len(records) == 9 and ("P_Combinatorics_1", "GPT-4|Name C w/ H") not in rows
    row = rows[("P_Combinatorics_1", "GPT-4 Turbo|Name C w/o H")]
    assert row["candidate"] == "Thus the answer is $\\boxed{12}$."  # not a concept turn, not the summary
    assert row["meta"]["summary"] == "The answer is 12."
    assert row["question"] == "Problem P_Combinatorics_1?" and row["references"] == ["12"]
    assert row["candidate_model"] == "GPT-4 Turbo" and row["task"] == "champ" and row["category"] == "open_math"
    assert row["meta"]["variant"] == "Name C w/o H" and row["meta"]["champ_category"] == "Combinatorics"
    assert row["id"] == "champ/P_Combinatorics_1/GPT-4 Turbo/Name C w/o H"
    truncated = rows[("P_Combinatorics_1", "PaLM 2 Medium|0-Shot")]
    assert truncated["meta"]["truncated"] is True and truncated["meta"]["summary"] is None
    assert truncated["candidate"].startswith("Let us count")
    only = champ.convert(champ.load(v0), models=["GPT-3.5"], variants=["0-Shot"])[0]
    assert {r["candidate_model"] for r in only} == {"GPT-3.5"} and len(only) == 2


def test_labels_and_reasons_for_leaving_rows_out(v0):
    rows = by_key(champ.label_records(champ.convert(champ.load(v0))[0]))
    expect = {
        ("P_Combinatorics_1", "GPT-4|0-Shot"): (1, None),  # "12 cm" is 12
        ("P_Combinatorics_1", "GPT-3.5|0-Shot"): (0, None),  # 1,000 ≠ 12
        ("P_Combinatorics_1", "GPT-4 Turbo|Name C w/o H"): (1, None),
        ("P_Combinatorics_1", "PaLM 2 Medium|0-Shot"): (None, "truncated solution"),
        ("P_Combinatorics_1", "GPT-4|5-Shot"): (None, "solution and summary disagree"),
        ("P_Number-Theory_1", "GPT-4|0-Shot"): (None, "reference not an exact value (text answer)"),
        ("P_Inequality_1", "GPT-4|0-Shot"): (None, "answer not extracted or undecided"),  # 0.333 for 1/3
        ("P_Inequality_1", "GPT-3.5|0-Shot"): (1, None),
        ("P_Polynomial_1", "GPT-4|0-Shot"): (None, "reference not an exact value (relation)"),
    }
    for key, (label, reason) in expect.items():
        assert (rows[key]["label"], rows[key]["meta"].get("left_out")) == (label, reason), key
        assert rows[key]["label_source"] == (champ.LABEL_SOURCE if label is not None else None)
    details = rows[("P_Combinatorics_1", "GPT-3.5|0-Shot")]["meta"]["labelling"]
    assert (
        details["answer"] == "1,000" and details["summary_answer"] == "1,000" and details["rule_references"] == ["12"]
    )


def test_cli_writes_a_gzip_training_source_and_a_report(v0, tmp_path, capsys):
    assert "champ" in COMMANDS
    out, report = tmp_path / "out" / "champ.jsonl.gz", tmp_path / "report.json"
    assert main(["champ", "--output", str(out), "--input", str(v0), "--report", str(report)]) == 0
    rows = read_records(out)
    assert [r["label"] for r in rows] and all(r["label"] is not None for r in rows)
    assert {r["split"] for r in rows} <= {"train", "val", "test"}
    for split in {r["split"] for r in rows}:
        assert {r["id"] for r in load_source(f"{out}?split={split}")} == {r["id"] for r in rows if r["split"] == split}
    summary = json.loads(report.read_text())
    assert summary["total"]["rows"] == 9 and summary["total"]["labelled"] == 4
    assert summary["left_out"]["truncated solution"] == 1
    assert summary["skipped_conversations"] == {"solution turn without text (LENGTH_PREVIOUS)": 1}
    assert summary["models"]["GPT-4"]["labelled"] == 1 and summary["written"]["total"]["rows"] == 4
    assert "4 labelled" in capsys.readouterr().out
    assert main(["champ", "--output", str(out), "--input", str(v0), "--keep-unlabelled"]) == 0
    assert len(read_records(out)) == 9
    assert main(["champ", "--output", str(out), "--input", str(tmp_path / "missing.json")]) == 2
    assert main(["champ", "--output", str(out), "--input", str(v0), "--models", "Claude"]) == 2
    assert "no conversations matched" in capsys.readouterr().err


@pytest.mark.parametrize(
    "reference,values,reason",
    [
        ("239", ["239"], None),
        ("1,000", ["1000"], None),  # thousands separator
        ("-1/2", ["-1/2"], None),
        ("sqrt(3)/3, or equivalently 1/sqrt(3)", ["sqrt(3)/3", "1/sqrt(3)"], None),
        ("C(10, 5), or equivalently 252", ["252"], None),
        ("5/14, or approximately 35.7%", ["5/14"], None),  # the approximation is not a reference
        ("0 is the only possible value", ["0"], None),
        ("The limit exists and is equal to 2/3", ["2/3"], None),
        ("2 inequalities", ["2"], None),
        ("x > 3", [], "relation"),  # the direction of an inequality: left to other teachers
        ("x=6, y=5", [], "relation"),
        ("No", [], "text answer"),
        ("12 cm", [], "number with words"),
        ("100 (i.e., all values)", [], "number with words"),  # answers say "all", which rules cannot read
        ("2^(n-1)", [], "expression with variables"),
        ("376 and 625", [], "several values or a set"),
        ("[-1, 1]", [], "several values or a set"),
        ("1 000", [], "number with words"),
    ],
)
def test_exact_references(reference, values, reason):
    assert champ.exact_values(reference) == (values, reason)


@pytest.mark.parametrize(
    "values,answer,verdict",
    [
        (["3"], "x > 3", 0),  # an inequality is not the value
        (["3"], "x < 3", 0),
        (["3"], "x = 3", 1),
        (["1/3"], "0.333", None),  # rounding: an approximation rules do not decide
        (["1/3"], "0.33", None),
        (["1/3"], "0.3", 0),  # too far to be a rounding of 1/3
        (["1000"], "999", 0),  # a whole number is not a rounding
        (["1/3"], "\\frac{1}{3}", 1),
        (["12"], "12 cm", 1),  # units
        (["12"], "12 m", 1),
        (["1000"], "1,000", 1),  # thousands separators
        (["2001000"], "2,001,000", 1),
        (["3"], "three", None),  # text answers: not read as a product of symbols
        (["0"], "no solution", None),
        (["3"], "\\infty", 0),
        (["sqrt(3)/3", "1/sqrt(3)"], "\\frac{\\sqrt{3}}{3}", 1),
        (["2"], "2.0", 1),
        (["0"], None, None),
    ],
)
def test_rule_verdicts_on_tricky_equivalences(values, answer, verdict):
    assert champ.rule_verdict(values, answer) == verdict


@pytest.mark.parametrize(
    "solution,summary,label,reason",
    [
        ("Therefore, there are 1,000 ways.", "There are 1000 ways in all.", 1, None),
        ("So the length is 12 cm.", "The length is 12 centimetres.", 0, None),  # reference 1000
        ("So the value is 1000.", "The value is 999.", None, "solution and summary disagree"),
        ("So the value is 999.", "The value is 999, or 1000 if n is even.", None, "answer not extracted or undecided"),
        (
            "The possible values are 7 and 1000.",
            "The possible values are $7$ and $1000$.",
            None,
            "answer not extracted or undecided",
        ),  # several values: not one answer
        ("There are no such numbers.", "There are no such numbers.", None, "answer not extracted or undecided"),
        ("It is 999.", "The value is 999; 1000 would need n = 3.", None, "summary mentions the reference value"),
    ],
)
def test_label_conversation(solution, summary, label, reason):
    got, details = champ.label_conversation(["1000"], solution, summary)
    assert (got, details.get("left_out")) == (label, reason)


def test_truncated_or_unsummarized_solutions_are_left_out():
    assert (
        champ.label_conversation(["12"], "So it is 12.", "It is 12.", truncated=True)[1]["left_out"]
        == "truncated solution"
    )
    assert champ.label_conversation(["12"], "So it is 12.", None)[1]["left_out"] == "no summary to confirm"


def test_splits_are_disjoint_by_problem_and_near_70_10_20():
    ids = [f"P_Sequence_{i}" for i in range(2000)]
    splits = [champ.split_of(pid) for pid in ids]
    assert splits == [champ.split_of(pid) for pid in ids]  # deterministic
    share = {s: splits.count(s) / len(ids) for s in ("train", "val", "test")}
    assert share["train"] == pytest.approx(0.7, abs=0.04) and share["val"] == pytest.approx(0.1, abs=0.03)
    problems = {
        pid: problem(
            pid,
            "1",
            {f"{m}|0-Shot": conversation("It is 1.", "It is 1.") for m in ("GPT-4", "GPT-3.5", "PaLM 2 Medium")},
        )
        for pid in ids[:60]
    }
    seen = defaultdict(set)
    for rec in champ.convert(problems)[0]:
        seen[rec["meta"]["problem"]].add(rec["split"])
    assert len(seen) == 60 and all(len(s) == 1 for s in seen.values())


def test_balanced_sample_is_deterministic_and_balanced_per_model():
    records = []
    for i in range(40):
        for model, p_correct in (("A", 3), ("B", 5)):
            label = int(i % 10 < p_correct)
            records.append(
                {"id": f"{model}{i}", "candidate_model": model, "label": label, "meta": {"problem": f"P{i % 7}"}}
            )
    sample = champ.balanced_sample(records)
    assert sample == champ.balanced_sample(records) and sample != champ.balanced_sample(records, seed=1)
    for model, positives in (("A", 12), ("B", 20)):
        rows = [r for r in sample if r["candidate_model"] == model]
        assert sum(r["label"] for r in rows) == positives and len(rows) == 2 * positives
    assert {r["meta"]["problem"] for r in sample} == {f"P{i}" for i in range(7)}
    capped = champ.balanced_sample(records, max_rows=40)
    assert len(capped) == 40 and sum(r["label"] for r in capped) == 20
    assert [r["id"] for r in capped] == [r["id"] for r in records if r in capped]  # input order kept


def test_the_repository_data_file_is_a_training_source():
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "data" / "real" / "champ-rule-v2.jsonl.gz"
    rows = load_source(str(path))
    assert len(rows) > 3000 and all(r["label"] in (0, 1) and r["label_source"] == champ.LABEL_SOURCE for r in rows)
    problems = defaultdict(set)
    for rec in rows:
        problems[rec["meta"]["problem"]].add(rec["split"])
    assert all(len(s) == 1 for s in problems.values())  # no problem in two splits
    for model in {r["candidate_model"] for r in rows}:
        labels = [r["label"] for r in rows if r["candidate_model"] == model]
        assert sum(labels) * 2 == len(labels)  # as many correct as wrong per model
    train = load_source(f"{path}?split=train")
    assert {r["split"] for r in train} == {"train"} and len(train) > len(rows) / 2


def test_problems_with_a_wrong_reference_are_left_out(v0):
    records = champ.convert(champ.load(v0))[0]
    moved = [{**r, "meta": {**r["meta"], "problem": "P_Sequence_33"}} for r in records]
    assert "P_Sequence_33" in champ.WRONG_REFERENCES
    labelled = champ.label_records(moved)
    assert all(r["label"] is None and r["meta"]["left_out"] == "reference wrong" for r in labelled)
    assert any(r["label"] is not None for r in champ.label_records(records))  # the same rows label otherwise
