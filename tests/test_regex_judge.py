import threading

import numpy as np
import pytest

from bertjudge.core.records import normalize
from bertjudge.judges.regex import RegexJudge, math_equal, question_options, rouge_l

MC_QUESTION = "What is the capital of France?\nA. London\nB. Paris\nC. Rome\nD. Berlin"


def rec(candidate, reference, category, question=None, label=None):
    return normalize(
        {
            "candidate": candidate,
            "references": reference,
            "category": category,
            "question": question,
            "label": label,
            "task": "t",
        }
    )


CASES = [
    # (candidate, reference, category, question, expected verdict, expected unparsed)
    ("Reasoning...\nFinal answer: (B)", "B", "multiple_choice", MC_QUESTION, 1, False),
    ("Final answer: B. Paris", "B", "multiple_choice", MC_QUESTION, 1, False),
    ("Final answer: Paris", "B", "multiple_choice", MC_QUESTION, 1, False),  # option text mapped
    ("Final answer: C", "B", "multiple_choice", MC_QUESTION, 0, False),
    ("I think it is Paris but unsure.", "B", "multiple_choice", MC_QUESTION, 0, True),
    ("Final answer: (B)", "Paris", "multiple_choice", MC_QUESTION, 1, False),  # text reference
    ("Final answer: B) Paris", "Paris", "multiple_choice", None, 1, False),
    ("Final answer: London", "Paris", "multiple_choice", MC_QUESTION, 0, False),
    ("B. Paris", "B", "multiple_choice", MC_QUESTION, 1, False),  # a listed label opens the answer
    ("A. Paris\n\nThe capital of France is Paris.", "B", "multiple_choice", MC_QUESTION, 0, False),  # A is London
    ("B. Paris", "B", "multiple_choice", None, 0, True),  # no listed options: not read as a label
    ("A) 28\nB) 25\nE) 22", "E", "multiple_choice", "Next after 10, 13, 16, 19?\nA) 28\nB) 25\nE) 22", 0, True),
    # the options listed again: the number of the last line is no choice; a concluding sentence's number is
    (
        "The sequence adds 3 each time.\nSo the next number is 22.",
        "E",
        "multiple_choice",
        "Next after 10, 13, 16, 19?\nA) 28\nB) 25\nE) 22",
        1,
        False,
    ),
    (
        "1. adds 3.\n2. 19+3=22.\nSo the next number is 22.",
        "C",
        "multiple_choice",  # numbered steps are no options
        "Next after 10, 13, 16, 19?\nA) 28\nB) 25\nC) 22",
        1,
        False,
    ),
    (
        "1) 28\n2) 25\n3) 22 (the sum of 19 and 3)",
        "3",
        "multiple_choice",  # found by the last-number rule
        "Next after 10, 13, 16, 19?\n1) 28\n2) 25\n3) 22",
        0,
        True,
    ),
    ("A: 24", "24", "context_extraction", None, 1, False),  # not a multiple-choice label
    ("So 1/2 of it.\nFinal answer: $\\frac{1}{2}$", "0.5", "open_math", None, 1, False),
    ("We get \\boxed{\\frac{\\sqrt{2}}{2}}", "\\sqrt{2}/2", "open_math", None, 1, False),
    ("Final answer: 1,234", "1234", "open_math", None, 1, False),
    ("Final answer: 13", "12", "open_math", None, 0, False),
    ("Final answer: \\frac{1", "12", "open_math", None, 0, True),
    # no marker: the concluding statement, not its stray last number ("1" of "1/n"), is the math answer
    (
        "Dividing by n, 1/n ≤ x_1^2 + ... + x_n^2.\nTherefore, the minimum of x_1^2 + ... + x_n^2 is 1/n.",
        "1/n",
        "open_math",
        None,
        1,
        False,
    ),
    ("Therefore, the minimum of x_1^2 + ... + x_n^2 is \\( \\frac{1}{n} \\).", "1/n", "open_math", None, 1, False),
    ("Therefore, the minimum of x_1^2 + ... + x_n^2 is 1/(2n).", "1/n", "open_math", None, 0, False),
    ("So the count is C(n, 4) = n(n-1)(n-2)(n-3)/24.", "n(n-1)(n-2)(n-3)/24", "open_math", None, 1, False),
    ("We multiply 3 by 4 to get twelve: 12", "12", "open_math", None, 1, False),  # no statement: the last number
    ("Thus there are no other solutions besides the ones with 2 or 3.", "3", "open_math", None, 0, True),  # words
    ("Final answer: the Treaty of Westphalia", "Treaty of Westphalia", "context_extraction", None, 1, False),
    ("Final answer: the Congress of Vienna", "Treaty of Westphalia", "context_extraction", None, 0, False),
    ("I cannot tell from the passage.", "Treaty of Westphalia", "context_extraction", None, 0, True),
    ("Final answer: **Blue**", "blue", "other", None, 1, False),
    # open QA: a reference (any alias, any case, accents and articles aside) named anywhere in the answer
    (
        'The Chipmunks were created by Ross Bagdasarian Sr., known as "David Seville".',
        ["David Seville"],
        "open_qa",
        None,
        1,
        False,
    ),
    (
        "Matthew Perry played Chandler Bing.",
        ["Perry, Matthew", "Matthew Perry (disambiguation)"],
        "open_qa",
        None,
        1,
        False,
    ),
    ("Upper Volta changed its name in 1984.", ["Republic of Upper Volta"], "open_qa", None, 1, False),  # 2 of 4 words
    ("It was created by Ross Bagdasarian Sr. in 1958.", ["David Seville"], "open_qa", None, 0, False),
    ("Reasoning about Seville...\nFinal answer: Madrid", ["Seville"], "open_qa", None, 0, False),  # the marked answer
    ("   ", ["Paris"], "open_qa", None, 0, True),
]


@pytest.mark.parametrize("candidate,reference,category,question,verdict,unparsed", CASES)
def test_regex_judge_cases(candidate, reference, category, question, verdict, unparsed):
    judge = RegexJudge()
    record = rec(candidate, reference, category, question)
    assert judge.score_records([record]).tolist() == [float(verdict)]
    assert judge.details([record])[0]["unparsed"] is unparsed


def test_multiple_references_any_match():
    judge = RegexJudge()
    records = [
        rec("Final answer: 0.25", ["1/3", "\\frac{1}{4}"], "open_math"),
        rec("Final answer: NYC", ["New York City", "NYC"], "other"),
        rec("Final answer: 0.2", ["1/3", "\\frac{1}{4}"], "open_math"),
    ]
    np.testing.assert_array_equal(judge.score_records(records), [1.0, 1.0, 0.0])


def test_details_fields():
    row = RegexJudge().details(
        [rec("Final answer: the Treaty of Westphalia", "Treaty of Westphalia", "context_extraction")]
    )[0]
    assert row["answer"] == "the Treaty of Westphalia"
    assert row["similarity"] == pytest.approx(2 * 0.75 * 1.0 / 1.75)
    assert row["match"] is True


def test_fit_threshold_separates_labelled_similarities():
    ref = "the quick brown fox jumps"
    records = [
        rec(f"Final answer: {text}", ref, "context_extraction", label=label)
        for text, label in [
            ("the quick brown fox jumps", 1),
            ("quick brown fox jumps", 1),
            ("the quick brown fox", 1),
            ("the quick fox", 0),
            ("a brown dog", 0),
            ("the slow cat", 0),
        ]
    ]
    judge = RegexJudge(threshold=0.99)
    threshold, accuracy = judge.fit_threshold(records)
    assert accuracy == 1.0
    sims = [row["similarity"] for row in judge.details(records)]
    assert max(sims[3:]) < threshold <= min(sims[:3])
    np.testing.assert_array_equal(judge.score_records(records), [1, 1, 1, 0, 0, 0])
    with pytest.raises(ValueError):
        judge.fit_threshold([rec("Final answer: 1", "1", "open_math", label=1)])


def test_export_load_roundtrip(tmp_path):
    judge = RegexJudge(threshold=0.37)
    judge.export(tmp_path / "j")
    loaded = RegexJudge.from_export(tmp_path / "j")
    assert loaded.threshold == 0.37 and RegexJudge.from_export(tmp_path / "j").threshold == 0.37
    config = (tmp_path / "j" / "judge.json").read_text()
    assert '"version"' in config and "RegexJudge" in config
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "judge.json").write_text(
        '{"class": "bertjudge.judges.encoder.EncoderJudge", "threshold": 0.5}'
    )
    with pytest.raises(ValueError, match="not a regex judge"):
        RegexJudge.from_export(tmp_path / "other")


def test_math_verify_outside_main_thread():
    results = []
    worker = threading.Thread(
        target=lambda: results.append((math_equal(["\\frac{1}{2}"], "0.5"), math_equal(["3"], "4")))
    )
    worker.start()
    worker.join(60)
    assert results == [((True, True), (False, True))]


def test_helpers():
    assert question_options(MC_QUESTION) == {"A": "London", "B": "Paris", "C": "Rome", "D": "Berlin"}
    assert question_options(None) == {}
    assert rouge_l("Hello, world!", "hello world") == 1.0 and rouge_l("", "x") == 0.0


def test_saved_judge_loads_through_the_api(tmp_path):
    from bertjudge.judges.loading import Judge

    RegexJudge(threshold=0.42).export(tmp_path / "regex")
    judge = Judge.load(str(tmp_path / "regex"))
    assert isinstance(judge, RegexJudge) and judge.threshold == 0.42
    assert isinstance(Judge.load("regex"), RegexJudge)


def test_score_takes_parallel_lists_like_every_judge():
    judge = RegexJudge()
    questions = ["What is 2 + 2?", "Capital of France?", "Pick one.\n\nA. red\nB. blue"]
    candidates = ["Final answer: 4", "Final answer: London", "Final answer: B"]
    references = ["4", ["Paris", "Paris, France"], "B"]
    assert judge.score(questions, candidates, references).tolist() == [1.0, 0.0, 1.0]
    with pytest.raises(ValueError, match="same length"):
        judge.score(questions, candidates[:2], references)


def test_contains_judge_is_the_normalized_substring_baseline():
    from bertjudge.judges.loading import Judge

    judge = Judge.load("contains")
    assert judge.score(
        ["q"] * 3,
        ["The Muppet Show, of course.", "Upper Volta", "Lyon"],
        [["muppet show"], ["Republic of Upper Volta"], ["Paris", "Lyons"]],
    ).tolist() == [1.0, 0.0, 0.0]


def test_ten_numbered_steps_then_options_do_not_crash_the_regex_judge():
    steps = "\n".join(f"{i}. step {i}" for i in range(1, 11))
    record = rec(f"{steps}\nA) 28\nB) 25\nFinal answer: B", "B", "multiple_choice", MC_QUESTION)
    assert RegexJudge().score_records([record]).tolist() == [1.0]


def test_a_math_verify_time_out_is_unparsed_not_incorrect(monkeypatch):
    """A comparison that runs out of time says nothing about the answer: the row is unparsed."""
    import math_verify
    from math_verify.errors import TimeoutException

    from bertjudge.judges.regex import math_equal

    assert math_equal(["12"], "12") == (True, True)

    def slow(*args, **kwargs):
        raise TimeoutException("timed out")

    monkeypatch.setattr(math_verify, "verify", slow)
    assert math_equal(["12"], "12") == (False, False)
    row = RegexJudge().details(
        [
            normalize(
                {
                    "question": "What is 3*4?",
                    "candidate": "Final answer: \\frac{24}{2}",
                    "reference": "12",
                    "category": "open_math",
                }
            )
        ]
    )[0]
    assert row["unparsed"] and row["score"] == 0.0
