import random

import pytest

from bertjudge.extract import boxed, final_answer, normalize_answer, option_letter

FINAL_ANSWER_CASES = [
    # (candidate, expected final answer)
    ("Final answer: 42", "42"),
    ("final answer: Paris.", "Paris"),
    ("**Final Answer:** $\\boxed{5}$", "5"),
    ("**Final Answer**: **Paris**", "Paris"),
    ("Final Answer: The final answer is $42$. I hope it is correct.", "42"),
    ("The final answer is \\frac{3}{4}.", "\\frac{3}{4}"),
    ("Step 1: ... Final answer: 3\nWait, I made a mistake.\nFinal answer: 7", "7"),
    ("Final answer:\n\n  **12**\n", "12"),
    ("Final answer: (B) Paris", "(B) Paris"),
    ("**Final Answer:** The correct answer is (C).", "(C)"),
    ("Final answer: $\\boxed{\\frac{1}{2}}$.", "\\frac{1}{2}"),
    ("the answer is 3, wait. Final answer: 7", "7"),
    # boxed, nested braces, last one wins
    ("so $\\boxed{\\frac{1}{2}}$ done", "\\frac{1}{2}"),
    ("first \\boxed{1} then \\boxed{\\sqrt{\\frac{a}{b}}}", "\\sqrt{\\frac{a}{b}}"),
    ("\\fbox{x^{2}+1}", "x^{2}+1"),
    ("a \\boxed{3} then a broken \\boxed{4", "3"),
    ("I guess the answer is 5. Then $\\boxed{6}$", "6"),
    # "the answer is" / "Answer:" lines
    ("So the answer is 17, as computed above.", "17"),
    ("I first thought the answer is 4. But then the correct answer is 9. Done.", "9"),
    ("Thus the answer is $x^2 + 1$.", "x^2 + 1"),
    ("Reasoning...\nAnswer: C", "C"),
    ("The answer is (B).", "(B)"),
    # trailing option letters
    ("The passage says Paris.\n(B)", "B"),
    ("Looking at the options...\nB.", "B"),
    ("Looking at the options...\n**D)**", "D"),
    ("Among the choices the correct option is C", "C"),
    # last number
    ("She has 3 apples, then buys 1,234 more, so 1,237 apples.", "1,237"),
    ("The result is x = -3/4.", "-3/4"),
    ("It costs 12.50 dollars and weighs .5 kg", ".5"),
    ("Temperature fell to −4 degrees", "-4"),
    ("total: 1,000,000", "1,000,000"),
    # nothing to find
    ("", None),
    ("   \n ", None),
    ("I do not know.", None),
]


@pytest.mark.parametrize("text,expected", FINAL_ANSWER_CASES)
def test_final_answer_table(text, expected):
    assert final_answer(text) == expected


def test_boxed_nested_and_missing():
    assert boxed("\\boxed{\\frac{1}{2}}") == "\\frac{1}{2}"
    assert boxed("\\boxed {a{b}c} and \\boxed{d") == "a{b}c"
    assert boxed("no box here") is None
    assert boxed("\\boxed{never closed") is None


@pytest.mark.parametrize("raw,expected", [
    ("(B)", "B"), ("B.", "B"), ("b)", "B"), ("**(c)**", "C"), ("[D]", "D"),
    (" Paris. ", "paris"), ("**Paris**", "paris"), ("The  Eiffel\nTower!", "the eiffel tower"),
    ("$42$", "42"), ("\"yes\"", "yes"), ("(a big cat)", "a big cat"), (None, ""), ("", ""),
])
def test_normalize_answer(raw, expected):
    assert normalize_answer(raw) == expected


@pytest.mark.parametrize("raw,expected", [
    ("(B) Paris", "B"), ("B. Paris", "B"), ("C)", "C"), ("d", "D"), ("**A**", "A"), ("B because x", "B"),
    ("Paris", None), ("Berlin is the capital", None), ("K) other", None), (None, None),
])
def test_option_letter(raw, expected):
    assert option_letter(raw) == expected


@pytest.mark.parametrize("bad", [None, 3, ["Final answer: 1"], "{" * 5000, "\\boxed{" * 700, "Final answer:" * 400])
def test_never_raises(bad):
    final_answer(bad)
    boxed(bad)
    normalize_answer(bad)


def test_long_and_pathological_texts():
    """Inputs that make backtracking regexes explode; speed itself is measured in benchmarks/."""
    rng = random.Random(0)
    words = "we compute the sum of 12 and 3,400 then divide by 7 so x = 5.5 and maybe 3 but".split()
    long_text = " ".join(rng.choice(words) for _ in range(1200))[:5000] + " so x = 5.5"
    assert final_answer(long_text) == "5.5"
    assert final_answer("\\boxed{" * 700) is None  # never closed
    assert final_answer("{" * 5000) is None
    assert final_answer("1," * 2500) == "1"
