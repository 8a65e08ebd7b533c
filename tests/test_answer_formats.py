"""Answer formats: the taxonomy, the renderer that keeps labels honest, deliberate errors, augment and the
source options (``bertjudge.data.answer_formats``, ``docs/formats.md``)."""

from __future__ import annotations

import copy
import json
import random
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bertjudge.core.extract import boxed, extract_answer, normalize_answer, number_value
from bertjudge.core.records import CATEGORIES, RecordError, normalize, write_records
from bertjudge.data.answer_formats import (
    FAMILIES,
    FORMATS,
    answer_of,
    augment,
    content_error,
    format_only_error,
    formats_for,
    instructions_for,
    markdown_table,
    matches_reference,
    render,
    split_statement,
)
from bertjudge.data.sources import load_source

ROOT = Path(__file__).resolve().parents[1]
MC_QUESTION = "Which city is the capital of France?\nA. Lyon\nB. Paris\nC. Nice\nD. Lille"


def record(category: str, question: str, candidate: str, references: list[str], label: int, rid: str) -> dict:
    return normalize(
        {
            "id": rid,
            "task": "t",
            "category": category,
            "question": question,
            "candidate": candidate,
            "references": references,
            "label": label,
            "split": "train",
            "meta": {"source": "test"},
        }
    )


MC = record(
    "multiple_choice",
    MC_QUESTION,
    "Paris has been the capital of France for centuries.\nThe answer is (B).",
    ["B"],
    1,
    "mc",
)
MATH = record(
    "open_math", "What is 6 times 7?", "Six groups of seven make 6 * 7 = 42.\nFinal answer: 42", ["42"], 1, "m"
)
QA = record("open_qa", "What is the capital of France?", "The capital of France is Paris.", ["Paris"], 1, "qa")
CONTEXT = record(
    "context_extraction",
    "Leila was born in 1961 in Tampere. When was Leila born?",
    "Leila was born in Tampere.\nFinal answer: 1961",
    ["1961"],
    1,
    "ctx",
)
OTHER = record("other", "Is the sky blue on a clear day?", "On a clear day it is.\nFinal answer: yes", ["yes"], 1, "o")
LABEL_1 = {r["category"]: r for r in (MC, MATH, QA, CONTEXT, OTHER)}
REASONING = {
    "multiple_choice": "Paris has been the capital of France for centuries.",
    "open_math": "Six groups of seven make 6 * 7 = 42.",
    "open_qa": "The capital of France is Paris.",
    "context_extraction": "Leila was born in Tampere.",
    "other": "On a clear day it is.",
}
VALUE = {"multiple_choice": "B", "open_math": "42", "open_qa": "Paris", "context_extraction": "1961", "other": "yes"}


def last_line(text: str) -> str:
    return text.rstrip().rsplit("\n", 1)[-1]


def cited(category: str) -> str:
    return f"({VALUE[category]})" if category == "multiple_choice" else VALUE[category]


# what each format promises: a check of the rendered candidate, given the record's category
SHAPES = {
    "letter_bare": lambda c, cat: last_line(c) == "B",
    "letter_parens": lambda c, cat: last_line(c) == "(B)",
    "letter_paren_right": lambda c, cat: last_line(c) == "B)",
    "letter_brackets": lambda c, cat: last_line(c) == "[B]",
    "letter_repeated": lambda c, cat: last_line(c) == "B B B",
    "letter_repeated_joined": lambda c, cat: last_line(c) == "BBBBB",
    "letter_lower": lambda c, cat: last_line(c) == "b",
    "option_text": lambda c, cat: last_line(c) == "Paris",
    "option_letter_text": lambda c, cat: last_line(c) == "B) Paris",
    "option_number": lambda c, cat: last_line(c) == "2",
    "answer_colon": lambda c, cat: last_line(c) == f"Answer: {cited(cat)}",
    "the_answer_is": lambda c, cat: last_line(c) == f"The answer is {cited(cat)}.",
    "final_answer": lambda c, cat: last_line(c) == f"Final answer: {VALUE[cat]}",
    "gsm8k_hashes": lambda c, cat: last_line(c) == f"#### {VALUE[cat]}",
    "answer_upper": lambda c, cat: last_line(c) == f"ANSWER: {VALUE[cat]}",
    "boxed": lambda c, cat: boxed(c) == VALUE[cat],
    "dollar_math": lambda c, cat: last_line(c) == f"${VALUE[cat]}$",
    "paren_math": lambda c, cat: last_line(c) == f"\\({VALUE[cat]}\\)",
    "bold": lambda c, cat: last_line(c) == f"**{VALUE[cat]}**",
    "json_object": lambda c, cat: json.loads(last_line(c)) == {"answer": VALUE[cat]},
    "xml_tag": lambda c, cat: re.search(r"<answer>(.*?)</answer>\s*$", c).group(1) == VALUE[cat],
    "html_bold": lambda c, cat: last_line(c) == f"<b>{VALUE[cat]}</b>",
    "code_block": lambda c, cat: c.endswith(f"\n```\n{VALUE[cat]}\n```"),
    "last_line_only": lambda c, cat: c == f"{REASONING[cat]}\n{VALUE[cat]}",
    "answer_first": lambda c, cat: c == f"{VALUE[cat]}\n\n{REASONING[cat]}",
    "trailing_explanation": lambda c, cat: c == f"{VALUE[cat]}. Here is why: {REASONING[cat]}",
    "hedge": lambda c, cat: last_line(c) == f"I think it is {VALUE[cat]}, but I'm not sure.",
    "either_then_commit": lambda c, cat: bool(
        (m := re.fullmatch(rf"It is either (\S+) or {VALUE[cat]}; I would say {VALUE[cat]}\.", last_line(c)))
        and m.group(1) != VALUE[cat]
    ),
    "answer_then_revision": lambda c, cat: bool(
        (m := re.fullmatch(rf"(\S+)\. Wait — no, it is {VALUE[cat]}\.", last_line(c))) and m.group(1) != VALUE[cat]
    ),
    "marker_spanish": lambda c, cat: last_line(c) == f"Respuesta: {VALUE[cat]}",
    "marker_french": lambda c, cat: last_line(c) == f"Réponse : {VALUE[cat]}",
    "marker_german": lambda c, cat: last_line(c) == f"Antwort: {VALUE[cat]}",
}
CASES = [(name, category) for name, f in FORMATS.items() for category in f.categories]


# ---- the taxonomy -----------------------------------------------------------------------------------


def test_taxonomy_has_enough_formats_in_every_family_and_category():
    assert len(FORMATS) >= 24
    assert {f.family for f in FORMATS.values()} == set(FAMILIES)
    for category in CATEGORIES:
        assert formats_for(category), category
    assert len(formats_for("multiple_choice", ["letter"])) >= 6
    assert all(f.name == name for name, f in FORMATS.items())


def test_prescribed_formats_have_instructions_and_unasked_ones_none():
    for f in FORMATS.values():
        assert f.prescribed == (f.family != "unasked"), f.name
        assert (1 <= len(f.instructions) <= 3) if f.prescribed else f.instructions == (), f.name
        for category in f.categories:  # each category it applies to gets an instruction that fits it
            assert not f.prescribed or instructions_for(f, category), (f.name, category)
    assert "letter" not in " ".join(instructions_for(FORMATS["the_answer_is"], "open_math"))


def test_every_format_has_a_shape_check():
    assert set(SHAPES) == set(FORMATS)


# ---- rendering --------------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "category"), CASES)
def test_each_format_renders_the_answer_in_the_shape_it_promises(name, category):
    original = LABEL_1[category]
    before = copy.deepcopy(original)
    out = render(original, name, random.Random(1), instruction=False)
    assert out is not None
    assert SHAPES[name](out["candidate"], category), out["candidate"]
    assert REASONING[category] in out["candidate"]  # the reasoning is kept
    assert out["label"] == 1 and out["question"] == original["question"]
    assert out["meta"]["answer_format"] == name and out["meta"]["format_family"] == FORMATS[name].family
    assert out["meta"]["instruction"] == "none" and out["meta"]["source"] == "test"
    assert out["id"] != original["id"] and out["id"].startswith(original["id"])
    assert original == before  # the input is not touched
    assert normalize(out) == out  # still a valid record


def test_render_drops_the_original_statement():
    out = render(MC, "xml_tag", random.Random(0), instruction=False)
    assert "The answer is (B)" not in out["candidate"]
    assert out["candidate"] == f"{REASONING['multiple_choice']}\n\n<answer>B</answer>"
    assert render(MATH, "bold", random.Random(0), False)["candidate"] == f"{REASONING['open_math']}\n\n**42**"


def test_render_refuses_formats_of_other_categories_and_unlabelled_rows():
    assert render(MATH, "letter_bare", random.Random(0)) is None
    assert render(QA, "boxed", random.Random(0)) is None
    assert render({**MATH, "label": None}, "bold", random.Random(0)) is None
    with pytest.raises(ValueError, match="unknown answer format 'nope'; choose from letter_bare"):
        render(MATH, "nope", random.Random(0))


def test_render_is_deterministic_for_a_seed():
    for name in ("either_then_commit", "answer_then_revision", "trailing_explanation"):
        runs = [render(MC, name, random.Random(7), "mismatch") for _ in range(2)]
        assert runs[0] == runs[1]


def test_numbered_options_use_numbers_and_no_letter_formats():
    question = "Which is a metal?\n(1) wood\n(2) iron\n(3) glass"
    numbered = record("multiple_choice", question, "Iron conducts.\nFinal answer: 2", ["2"], 1, "num")
    assert answer_of(numbered) == ("2", "iron")
    assert render(numbered, "letter_bare", random.Random(0)) is None
    assert last_line(render(numbered, "the_answer_is", random.Random(0), False)["candidate"]) == "The answer is (2)."
    asked = render(numbered, "option_text", random.Random(0), "mismatch")
    assert "letter" not in asked["question"].rsplit("\n", 1)[-1]


# ---- honest answers ---------------------------------------------------------------------------------


def test_answer_of_label_1_is_the_first_reference():
    assert answer_of(MC) == ("B", "Paris")
    assert answer_of(MATH) == ("42", None)
    assert answer_of({**QA, "references": ["Paris", "Paris, France"]}) == ("Paris", None)
    by_text = {**MC, "references": ["Paris"]}
    assert answer_of(by_text) == ("B", "Paris")


def test_answer_of_label_0_keeps_the_candidates_own_wrong_answer():
    wrong_math = record("open_math", "What is 6 times 7?", "6 * 7 = 41.\nFinal answer: 41", ["42"], 0, "w")
    assert answer_of(wrong_math) == ("41", None)
    out = render(wrong_math, "boxed", random.Random(0), False)
    assert out["candidate"] == "6 * 7 = 41.\n\n\\boxed{41}" and out["label"] == 0
    wrong_mc = record("multiple_choice", MC_QUESTION, "Lyon is big.\nFinal answer: A", ["B"], 0, "wmc")
    assert answer_of(wrong_mc) == ("A", "Lyon")


def test_answer_of_label_0_never_states_a_reference():
    right_but_0 = record("open_math", "q", "So 42.\nFinal answer: 42", ["42"], 0, "r0")
    assert answer_of(right_but_0) is None
    spelled = record("open_math", "q", "Final answer: 42.0", ["42"], 0, "r1")
    assert answer_of(spelled) is None  # the same number
    longer = record("open_qa", "q", "Final answer: Paris, France", ["Paris"], 0, "r2")
    assert answer_of(longer) is None  # names the reference
    refusal = record("context_extraction", "q", "Final answer: not given", ["unanswerable"], 0, "r3")
    assert answer_of(refusal) is None
    # a label-0 multiple-choice row that picked the reference letter: another option, without its reasoning
    picked_right = record("multiple_choice", MC_QUESTION, "It is Paris.\nFinal answer: B", ["B"], 0, "r4")
    letter, text = answer_of(picked_right, random.Random(3))
    assert letter in "ACD" and text != "Paris"
    out = render(picked_right, "letter_bare", random.Random(3), False)
    assert out["candidate"] in ("A", "C", "D") and out["label"] == 0


WORDS = st.sampled_from(["Paris", "Lyon", "blue", "the blue whale", "Tampere", "1961", "42", "41", "7/2", "3.5"])


@settings(max_examples=150, deadline=None)
@given(
    category=st.sampled_from(["open_math", "open_qa", "context_extraction", "other"]),
    references=st.lists(WORDS, min_size=1, max_size=3),
    said=WORDS,
    seed=st.integers(0, 1000),
)
def test_label_0_renders_never_state_a_reference(category, references, said, seed):
    row = record(category, "q?", f"Some work.\nFinal answer: {said}", references, 0, "h")
    found = answer_of(row, random.Random(seed))
    if found is not None:
        value = found[0]
        assert normalize_answer(value) not in {normalize_answer(r) for r in references}
        assert number_value(value) is None or number_value(value) not in {number_value(r) for r in references}
        assert not any(value.lower() in r.lower() or r.lower() in value.lower() for r in references)
    rng = random.Random(seed)
    out = render(row, rng.choice(formats_for(category)), rng, instruction=rng.choice([True, False, "mismatch"]))
    if out is not None:
        assert out["label"] == 0 and found is not None
        assert not any(re.search(rf"(?<!\w){re.escape(r)}(?!\w)", out["candidate"]) for r in references)


@settings(max_examples=100, deadline=None)
@given(n_options=st.integers(2, 8), data=st.data())
def test_label_0_multiple_choice_never_states_the_right_option(n_options, data):
    letters = "ABCDEFGH"[:n_options]
    right = data.draw(st.sampled_from(letters))
    picked = data.draw(st.sampled_from(letters))
    question = "Pick one.\n" + "\n".join(f"{x}. word{x}" for x in letters)
    row = record("multiple_choice", question, f"Final answer: {picked}", [right], 0, "mc-h")
    found = answer_of(row, random.Random(data.draw(st.integers(0, 99))))
    assert found is not None and found[0] != right and found[0] in letters and found[1] != f"word{right}"
    if picked != right:
        assert found[0] == picked


# ---- deliberate errors ------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "category"), [(n, c) for n, c in CASES if c in ("multiple_choice", "open_math")])
def test_content_errors_state_a_wrong_answer_with_label_0(name, category):
    original = LABEL_1[category]
    out = content_error(original, name, random.Random(2), instruction=False)
    assert out is not None
    assert out["label"] == 0 and out["meta"]["augment"] == "content_error" and out["id"].endswith("~content-error")
    statement = out["candidate"].replace(REASONING[category], "")
    if category == "open_math":
        assert not re.search(r"(?<!\d)42(?!\d)", statement), statement
    else:
        assert not re.search(r"(?<![A-Za-z])B(?![A-Za-z])|\bParis\b|(?<!\d)2(?!\d)", statement), statement
    assert original["label"] == 1


def test_content_errors_for_spans_take_another_records_answer():
    pool = [record("open_qa", "q", "x", ["Berlin"], 1, "p1"), record("open_qa", "q", "x", ["Paris"], 1, "p2")]
    out = content_error(QA, "final_answer", random.Random(0), False, pool=pool)
    assert out["label"] == 0 and last_line(out["candidate"]) == "Final answer: Berlin"
    assert "Paris" not in out["candidate"]  # the statement of the right answer was not found: no reasoning kept
    assert content_error(QA, "final_answer", random.Random(0)) is None  # no pool, no number to change
    assert content_error({**MATH, "label": 0}, "bold", random.Random(0)) is None


def test_format_only_errors_break_the_format_and_keep_the_content():
    rng = random.Random(0)
    broken_json = format_only_error(MATH, "json_object", rng, False)["candidate"]
    with pytest.raises(json.JSONDecodeError):
        json.loads(last_line(broken_json))
    assert '"42"' in broken_json
    box = format_only_error(MATH, "boxed", rng, False)
    assert box["candidate"].endswith("\\boxed{42") and boxed(box["candidate"]) is None
    assert box["label"] == 1 and box["meta"]["augment"] == "format_only"
    tag = format_only_error(QA, "xml_tag", rng, False)["candidate"]
    assert tag.endswith("<answer>Paris") and "</answer>" not in tag
    assert last_line(format_only_error(MC, "letter_bare", rng, False)["candidate"]) == "b"
    assert format_only_error(MC, "hedge", rng) is None  # no malformed variant
    assert format_only_error({**MC, "label": 0}, "letter_bare", rng) is None


# ---- instructions -----------------------------------------------------------------------------------


def test_instruction_is_appended_on_a_new_line():
    out = render(MATH, "gsm8k_hashes", random.Random(0), instruction=True)
    question, instruction = out["question"].rsplit("\n", 1)
    assert question == MATH["question"] and instruction in FORMATS["gsm8k_hashes"].instructions
    assert out["meta"]["instruction"] == "asked"
    unasked = render(MATH, "hedge", random.Random(0), instruction=True)
    assert unasked["question"] == MATH["question"] and unasked["meta"]["instruction"] == "none"
    no_question = render({**MATH, "question": None}, "bold", random.Random(0), instruction=True)
    assert no_question["question"] in FORMATS["bold"].instructions
    with pytest.raises(ValueError, match="instruction must be"):
        render(MATH, "bold", random.Random(0), instruction="yes")


@pytest.mark.parametrize("name", ["letter_bare", "json_object", "boxed", "hedge", "final_answer"])
def test_a_mismatched_instruction_asks_for_another_format(name):
    for seed in range(20):
        out = render(MC, name, random.Random(seed), instruction="mismatch")
        instruction = out["question"].rsplit("\n", 1)[1]
        other = FORMATS[out["meta"]["instruction_format"]]
        assert out["meta"]["instruction"] == "mismatch" and out["label"] == 1
        assert instruction not in FORMATS[name].instructions and instruction in other.instructions
        assert other.name != name and other.prescribed and "multiple_choice" in other.categories


# ---- augment ----------------------------------------------------------------------------------------


WRONG = {"multiple_choice": "A", "open_math": "41", "open_qa": "Lyon", "context_extraction": "1962", "other": "purple"}


def corpus_rows() -> list[dict]:
    """200 rows: the five label-1 records, and label-0 ones whose candidate states a wrong answer."""
    rows = []
    for i in range(40):
        for base in (MC, MATH, QA, CONTEXT, OTHER):
            row = {**copy.deepcopy(base), "id": f"{base['id']}-{i}", "label": i % 2}
            if not row["label"]:
                row["candidate"] = f"{REASONING[row['category']]}\nFinal answer: {WRONG[row['category']]}"
            rows.append(row)
    return rows


def test_augment_adds_copies_and_never_changes_the_records():
    rows = corpus_rows()
    before = copy.deepcopy(rows)
    out = augment(rows, 0.5, seed=3)
    assert out[: len(rows)] == before and rows == before
    copies = out[len(rows) :]
    assert len(copies) == 0.5 * len(rows)  # every row renders
    assert len({r["id"] for r in out}) == len(out)
    assert {r["meta"]["rendered_from"] for r in copies} <= {r["id"] for r in rows}
    assert augment(rows, 0.5, seed=3) == out
    assert augment(rows, 0.5, seed=4) != out
    assert augment(rows, 0.0, seed=3) == rows


def test_augment_rates_and_families():
    rows = corpus_rows()
    markup = augment(rows, 1.0, 0, families=["markup"])[len(rows) :]
    assert markup and {r["meta"]["format_family"] for r in markup} == {"markup"}
    rest = augment(rows, 1.0, 0, exclude_families=["markup", "unasked"])[len(rows) :]
    assert rest and not {r["meta"]["format_family"] for r in rest} & {"markup", "unasked"}
    errors = augment(rows, 1.0, 0, content_errors=1.0)[len(rows) :]
    from_label_1 = [r for r in errors if r["meta"]["rendered_from"].endswith(("1", "3", "5", "7", "9"))]
    assert len(from_label_1) == 100
    for copied in from_label_1:
        if copied["category"] in ("open_qa", "other"):  # every row says "Paris" / "yes": no wrong answer to take
            assert "augment" not in copied["meta"] and copied["label"] == 1
        else:
            assert copied["meta"]["augment"] == "content_error" and copied["label"] == 0
    plain = augment(rows, 1.0, 0, content_errors=0, format_only=0, instruction_rate=0, mismatch_rate=0)
    assert all(r["meta"]["instruction"] == "none" and "augment" not in r["meta"] for r in plain[len(rows) :])
    asked = augment(rows, 1.0, 0, instruction_rate=0, mismatch_rate=1)[len(rows) :]
    assert {r["meta"]["instruction"] for r in asked} == {"mismatch"}


def test_augment_refuses_bad_shares_and_unknown_families():
    with pytest.raises(ValueError, match="share=1.5 must be between 0 and 1"):
        augment([MC], 1.5, 0)
    with pytest.raises(ValueError, match=r"unknown format families \['nope'\]; choose from letter, option_text"):
        augment([MC], 1.0, 0, families=["nope"])
    with pytest.raises(ValueError, match="at most 1"):
        augment([MC], 1.0, 0, instruction_rate=0.9, mismatch_rate=0.2)


# ---- the reasoning ----------------------------------------------------------------------------------


def test_split_statement_removes_the_final_statement_only():
    assert split_statement("Work.\nFinal answer: 42", "42") == ("Work.", True)
    assert split_statement("So 6 * 7 is 42. That is 42. Thanks!", "42") == ("So 6 * 7 is 42.", True)
    assert split_statement("Work.\n\nFinal answer:\n**42**", "42") == ("Work.", True)
    assert split_statement("B", "B") == ("", True)
    assert split_statement("A. Lyon\nIt is big.", "A", "option-first") == ("It is big.", True)
    prose = "The capital of France is Paris, of course."
    assert split_statement(prose, None) == (prose, False)


def test_matches_reference_reads_generously():
    assert matches_reference("42.0", ["42"]) and matches_reference("(b)", ["B"])
    assert matches_reference("the Eiffel Tower", ["Eiffel Tower"]) and matches_reference("", ["x"])
    assert not matches_reference("41", ["42"]) and not matches_reference("Lyon", ["Paris"])


# ---- sources and docs -------------------------------------------------------------------------------


def test_sources_take_format_options(tmp_path):
    path = tmp_path / "rows.jsonl"
    rows = corpus_rows()
    write_records(path, rows)
    plain = load_source(str(path))
    assert len(plain) == len(rows)
    mixed = load_source(f"{path}?split=train&formats=0.5&seed=2")
    assert mixed[: len(rows)] == plain and len(mixed) > len(rows)
    assert mixed == load_source(f"{path}?split=train&formats=0.5&seed=2")
    assert mixed != load_source(f"{path}?split=train&formats=0.5&seed=3")
    sampled = load_source(f"{path}?n=50&seed=1&formats=1")
    assert len([r for r in sampled if "answer_format" not in r["meta"]]) == 50
    only = load_source(f"{path}?format_families=markup,latex&format_only=1")
    assert only and all(r["meta"]["format_family"] in ("markup", "latex") for r in only)
    excluded = load_source(f"{path}?formats=1&format_exclude=markup")
    assert all(r["meta"].get("format_family") != "markup" for r in excluded)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ("formats=1.5", "formats='1.5' must be a share between 0 and 1"),
        ("formats=half", "formats='half' must be a share between 0 and 1"),
        (
            "formats=0.5&format_families=markup,nope",
            r"format_families='markup,nope': unknown format families \['nope'\]",
        ),
        (
            "formats=0.5&format_exclude=nope",
            "choose from letter, option_text, marker, latex, markup, position, unasked",
        ),
        ("format_only=2", "format_only='2' must be 0 or 1"),
        ("format_families=markup", "need formats=SHARE or format_only=1"),
        ("formats=0.5&rows=3", r"unknown options \['rows'\]"),
    ],
)
def test_sources_refuse_bad_format_options(tmp_path, options, message):
    path = tmp_path / "rows.jsonl"
    write_records(path, corpus_rows())
    with pytest.raises(RecordError, match=message) as refused:
        load_source(f"{path}?{options}")
    assert str(refused.value).startswith(f"{path}?{options}: ") and "\n" not in str(refused.value)


def test_the_embedded_corpus_takes_format_options_too():
    rows = load_source("embedded:val?n=30&seed=1&formats=1&format_families=marker")
    rendered = [r for r in rows if "answer_format" in r["meta"]]
    assert len(rows) - len(rendered) == 30 and rendered
    assert {r["meta"]["format_family"] for r in rendered} == {"marker"}


def test_docs_hold_the_generated_table():
    doc = (ROOT / "docs" / "formats.md").read_text(encoding="utf-8")
    assert markdown_table() in doc
    for name in FORMATS:
        assert f"| `{name}` |" in doc
    assert "format_exclude=markup" in doc and "format_families=markup&format_only=1" in doc


def test_extracted_answers_of_marker_renders_are_the_answer():
    # the project's own extractor reads the rendered statement back (a check that the shapes are readable)
    for name in ("final_answer", "the_answer_is", "boxed", "answer_colon"):
        out = render(MATH, name, random.Random(0), False)
        assert extract_answer(out["candidate"])[0] == "42", name


def test_a_rendered_row_says_its_label_was_carried_over_by_a_program():
    from bertjudge.data.sources import load_source

    rows = load_source("data/real/smollm2-read-v2.jsonl.gz?split=train&n=40&format_only=1")
    assert rows and all(r["label_source"] == "synthetic:answer-format(from read:llm-agent)" for r in rows)
