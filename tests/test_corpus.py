"""The embedded corpus: determinism, schema, balance, split disjointness, and label sanity."""

from __future__ import annotations

import datetime
import hashlib
import json
import random
import re
import time
from collections import Counter
from fractions import Fraction

import pytest

from bertjudge.cli.main import main
from bertjudge.core import records
from bertjudge.data import corpus
from bertjudge.data.corpus.base import Ctx
from bertjudge.data.corpus.templates import new_item
from bertjudge.data.sources import load_source

WORD_VALUES = {corpus.words(n): n for n in range(1000)}


@pytest.fixture(scope="module")
def splits():
    """Four categories in turn: the first three have the rows that 3000/900/900 gave them before open QA."""
    return {
        "train": corpus.generate("train", 4000, seed=3),
        "val": corpus.generate("val", 1200, seed=3),
        "test": corpus.generate("test", 1200, seed=3),
        "adversarial": corpus.generate("adversarial", 560, seed=3),
    }


@pytest.fixture(scope="module")
def items():
    """Items of every category drawn as the test split draws them (held-out families included)."""
    ctx, seen = Ctx("test", 11), set()
    return {cat: [new_item(ctx, cat, "test", seen) for _ in range(300)] for cat in corpus.CATEGORY_ORDER}


def value_of(text: str) -> tuple[Fraction, str]:
    """(value, unit) of a plain answer: '$1,250.50', '3/4', '\\frac{3}{4}', '4 1/2', 'forty-two', '45%' ..."""
    t = text.strip().rstrip(".").replace("$", "").replace(",", "")
    if t.endswith("%"):
        value, unit = value_of(t[:-1])
        return value / 100, unit
    m = re.fullmatch(r"(-?)\\frac\{(\d+)\}\{(\d+)\}", t)
    if m:
        return Fraction(int(m[2]), int(m[3])) * (-1 if m[1] else 1), ""
    m = re.fullmatch(r"(\d+) (\d+)/(\d+)", t)
    if m:
        return int(m[1]) + Fraction(int(m[2]), int(m[3])), ""
    m = re.fullmatch(r"(-?[\d./]+)(?: (.+))?", t)
    if m:
        return Fraction(m[1]), m[2] or ""
    if t.startswith("minus "):
        value, unit = value_of(t[6:])
        return -value, unit
    m = re.fullmatch(r"(.+?)(?: (dollars|hectares))?", t)
    return Fraction(WORD_VALUES[m[1]]), m[2] or ""


def check_steps(item: corpus.Item) -> None:
    """Every 'expression = number' in the item's reasoning (answer filled in) is arithmetically right."""
    allowed = set("0123456789 $.,/×÷*+−-()²")
    for line in item.steps:
        line = line.replace(corpus.ANS, corpus.fmt(item.value))
        for m in re.finditer(r"=\s*\$?(-?\d+(?:\.\d+)?(?:/\d+)?)", line):
            start = m.start()
            while start > 0 and line[start - 1] in allowed:
                start -= 1
            lhs = line[start : m.start()].strip()
            if not re.search(r"\d", lhs) or line[:start].endswith("of"):
                continue  # "3x = ..." or "20% of $70 = ..."
            expr = lhs.replace("×", "*").replace("÷", "/").replace("−", "-").replace("²", "**2").replace("$", "")
            expr = re.sub(r"\d+(?:\.\d+)?", lambda d: f"Fraction('{d[0]}')", expr)
            assert eval(expr, {"Fraction": Fraction}) == Fraction(m[1]), (line, item.question)


# ----------------------------------------------------------------------------- schema, determinism, speed
def test_records_pass_normalize_and_are_complete(splits):
    ids = set()
    for name, rows in splits.items():
        for rec in rows:
            assert records.normalize(rec) == rec
            assert rec["split"] == name and rec["label"] in (0, 1)
            assert rec["label_source"] == "synthetic:embedded-v1" and rec["task"] in corpus.TASKS.values()
            assert rec["meta"]["style"] and (rec["label"] == 1 or rec["meta"]["error"])
            assert rec["candidate"].strip() and rec["references"] and all(r.strip() for r in rec["references"])
            ids.add(rec["id"])
    assert len(ids) == sum(len(rows) for rows in splits.values())


# sha256 of the JSON (sorted keys) of the rows of ``embedded:<split>?n=200``, computed with the corpus as it was
# when the judges were trained on it (before it was split into a package).
PINNED_SHA256 = {
    "train": "61e811bd814947cacca5dd3f73a90879046c143e44cbd6f0e6ee3c0c058239a9",
    "val": "68a41579278a5bfa16ec4220db6a579768da156629673b409f40ba32afc58c17",
    "test": "961a74601d9ae3b1c31ca873405871a7da75a0c02fcad429467ea6f9adf35781",
    "adversarial": "1e49cdb81228fac456c158aedabc32debca00255ac87afbc892b4b4c748c9b7c",
}


@pytest.mark.parametrize("split", corpus.SPLITS)
def test_rows_are_pinned(split):
    """The corpus is what every trained judge was trained on: a refactor must not change a single row
    (nor the order of its random draws). A deliberate change of the corpus bumps CORPUS_VERSION and
    these constants together."""
    rows = load_source(f"embedded:{split}?n=200")
    digest = hashlib.sha256(json.dumps(rows, sort_keys=True).encode()).hexdigest()
    assert (corpus.CORPUS_VERSION, digest) == ("embedded-v1", PINNED_SHA256[split])


def test_generate_is_deterministic_and_seeded():
    assert corpus.generate("val", 200, seed=5) == corpus.generate("val", 200, seed=5)
    assert corpus.generate("val", 200, seed=5) != corpus.generate("val", 200, seed=6)


def test_cli_writes_identical_bytes(tmp_path, capsys):
    for out in ("a", "b"):
        assert main(["corpus", "--output", str(tmp_path / out), "--size", "300", "--seed", "1"]) == 0
    printed = capsys.readouterr().out
    assert "open_math" in printed and "reasoning" in printed and "adversarial 0/1" in printed
    for name in corpus.SPLITS:
        first, second = (tmp_path / out / f"{name}.jsonl" for out in ("a", "b"))
        assert first.read_bytes() == second.read_bytes()
        assert len(records.read_records(first)) == corpus.split_sizes(300)[name]


def test_generation_is_fast():
    start = time.perf_counter()
    rows = corpus.generate("train", 30000, seed=2)
    assert len(rows) == 30000 and time.perf_counter() - start < 10


def test_unknown_split_is_refused():
    with pytest.raises(ValueError, match="unknown split"):
        corpus.generate("dev", 10)


# ----------------------------------------------------------------------------- balance and splits
def test_labels_and_categories_are_balanced(splits):
    for name in ("train", "val", "test"):
        rows = splits[name]
        assert Counter(r["label"] for r in rows) == {0: len(rows) // 2, 1: len(rows) // 2}
        per = Counter(r["category"] for r in rows)  # categories rotate pair by pair: shares differ by one pair at most
        assert set(per) == set(corpus.CATEGORY_ORDER) and max(per.values()) - min(per.values()) <= 2, per
    train = splits["train"]
    assert len({r["candidate_model"] for r in train}) == 3 and len({r["task"] for r in train}) < 15
    kinds = Counter(r["meta"]["kind"] for r in train)
    assert set(kinds) == set(corpus.KINDS), set(corpus.KINDS) - set(kinds)
    styles = Counter(r["meta"]["style"] for r in train)
    assert set(corpus.STYLES) <= set(styles)


def test_splits_share_no_question(splits):
    questions = {name: {r["question"] for r in rows} for name, rows in splits.items()}
    names = list(questions)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            assert not questions[a] & questions[b], (a, b)


def test_heldout_templates_and_words_only_outside_train(splits):
    train, evaluation = splits["train"], splits["val"] + splits["test"]
    assert not any(r["meta"]["heldout_template"] for r in train)
    held = {r["meta"]["template"] for r in evaluation if r["meta"]["heldout_template"]}
    assert held and not held & {r["meta"]["template"] for r in train}
    families = {r["meta"]["family"] for r in evaluation}
    assert set(corpus.HELDOUT_FAMILIES) <= families
    assert not set(corpus.HELDOUT_FAMILIES) & {r["meta"]["family"] for r in train}
    for words in (corpus.FIRST_NAMES, corpus.CITIES, corpus.ORG_HEADS):
        heldout = set(words[len(words) - len(words) // 5 :])
        train_words = {w for r in train for w in re.findall(r"\w+", r["question"])}
        eval_words = {w for r in evaluation for w in re.findall(r"\w+", r["question"])}
        assert not heldout & train_words and heldout & eval_words


def test_adversarial_suite_has_every_attack_balanced(splits):
    rows = splits["adversarial"]
    per = Counter((r["meta"]["attack"], r["label"]) for r in rows)
    for attack in corpus.ATTACKS:
        assert per[attack, 0] == per[attack, 1] >= 10, attack
    assert {r["meta"]["attack"] for r in rows} == set(corpus.ATTACKS)
    for r in rows:
        wrong_kind, right_kind, cats = corpus.ATTACKS[r["meta"]["attack"]]
        assert r["meta"]["kind"] == (right_kind if r["label"] else wrong_kind) and r["category"] in cats


def test_chosen_attacks_make_every_pair_of_a_main_split():
    rows = corpus.generate("train", 120, seed=3, attacks=["wrong_unit", "off_by_one"])
    per = Counter((r["meta"]["attack"], r["meta"]["kind"], r["label"]) for r in rows)
    assert per == {
        ("wrong_unit", "wrong_unit", 0): 30,
        ("wrong_unit", "converted_unit", 1): 30,
        ("off_by_one", "off_by_one", 0): 30,
        ("off_by_one", "alt_form", 1): 30,
    }
    assert {r["split"] for r in rows} == {"train"} and not any(r["meta"]["heldout_template"] for r in rows)
    assert rows == corpus.generate("train", 120, seed=3, attacks=["wrong_unit", "off_by_one"])
    with pytest.raises(ValueError, match="unknown attacks \\['typo'\\]"):
        corpus.generate("train", 10, attacks=["typo"])


# ----------------------------------------------------------------------------- labels: open math
def test_math_answers_recompute_independently(items):
    checked = Counter()
    for item in items["open_math"]:
        check_steps(item)
        q = item.question.split("\n")[0]
        if item.family == "math.expression":
            expr = re.search(r"(?:Evaluate|value of|Compute:) (.+?)\??\.?$", q)[1]
            expr = expr.replace("×", "*").replace("−", "-").replace("²", "**2").replace("^", "**")
            assert eval(re.sub(r"\d+", lambda d: f"Fraction({d[0]})", expr), {"Fraction": Fraction}) == item.value
        elif item.family == "math.equation":
            num = r"(-?\d+(?:\.\d+)?(?:/\d+)?)"
            m = re.search(rf"(\d)x ([+−]) (\d+) = {num}|by (\d) and then (adds|subtracts) (\d+), getting {num}", q)
            a, sign, b, rhs = m.groups()[:4] if m[1] else m.groups()[4:]
            b = int(b) if sign in ("+", "adds") else -int(b)
            assert int(a) * item.value + b == Fraction(rhs)
        elif item.family == "math.pieces":
            meters = re.search(r"([\d.]+) (?:m|meters)\b", q)[1]
            cm = re.search(r"(\d+) (?:cm|centimeters)\b", q)[1]
            assert Fraction(meters) * 100 / int(cm) == item.value
        elif item.family == "math.group":
            total, pct = re.search(r"(\d+) (?:people|members)", q)[1], re.search(r"(\d+)(?:%| percent)", q)[1]
            assert int(total) * (100 - int(pct)) / Fraction(100) == item.value
        else:
            continue
        checked[item.family] += 1
    assert len(checked) == 4 and min(checked.values()) >= 5, checked


def test_math_correct_forms_equal_the_value(items):
    seen = set()
    for item in items["open_math"]:
        assert value_of(item.references[0])[0] == item.value
        for form, text in item.forms:
            value, unit = value_of(text)
            if form == "percent":
                assert value == item.value and text.endswith("%")
            elif form == "converted":
                factor = dict((u, v / item.value) for v, u in item.conversions)[unit]
                assert factor in (60, 100, 1000, 7) and value == item.value * factor
            else:
                assert value == item.value, (form, text)
                assert unit in ("", item.unit, "dollars"), (form, text)
            seen.add(form)
    assert {
        "canonical",
        "words",
        "fraction",
        "latex_frac",
        "mixed",
        "percent",
        "money",
        "unit",
        "converted",
        "thousands",
        "trailing_zero",
    } <= seen


def test_math_wrong_answers_are_wrong(items):
    rng, seen = random.Random(0), Counter()
    for item in items["open_math"]:
        for error in ("off_by_one", "sign_error", "intermediate", "decimal_shift", "rounding", "slip", "wrong_unit"):
            got = corpus.wrong_answer(item, error, rng)
            if got is None:
                continue
            text, basis = got
            value, unit = value_of(text)
            seen[error] += 1
            if error == "wrong_unit":  # the right number, another unit
                assert value == item.value and unit in item.alt_units and unit != item.unit
                continue
            assert value != item.value and basis != item.value
            if error == "off_by_one":
                assert abs(basis - item.value) == 1
            if error == "sign_error":
                assert basis == -item.value
            if error == "intermediate":
                assert basis in item.intermediates
    assert len(seen) == 7 and min(seen.values()) >= 5, seen


def test_percent_misuse_is_off_by_a_factor_100(items):
    rng = random.Random(1)
    probability = [i for i in items["open_math"] if i.percent_ok]
    assert probability
    for item in probability:
        text, _ = corpus.wrong_answer(item, "percent_misuse", rng)
        assert value_of(text)[0] * 100 == item.value


# ----------------------------------------------------------------------------- labels: multiple choice
def test_multiple_choice_options_and_answers(items):
    rng = random.Random(2)
    for item in items["multiple_choice"]:
        n = len(item.options)
        assert 4 <= n <= 10 and len(set(item.options)) == n and item.references[0] == item.labels[item.correct]
        right = item.options[item.correct]
        for label, option in zip(item.labels, item.options):
            assert re.search(rf"(^|\s|\(|\*){re.escape(label)}\W.*{re.escape(option)}", item.question, re.M)
            assert option not in item.labels  # an option text never reads as a label
        text, k = corpus.wrong_answer(item, "other_option", rng)
        assert k != item.correct and item.options[k] != right and right not in text.split()
        text, k = corpus.wrong_answer(item, "letter_text_mismatch", rng)
        assert text.startswith((item.labels[item.correct], f"({item.labels[item.correct]})"))
        assert item.options[k] in text and item.options[k] != right
        for _ in range(3):
            text, form, _ = corpus.correct_answer(item, rng)
            assert (item.labels[item.correct] in re.findall(r"\w+", text)) or text == right


def test_multiple_choice_facts_are_right(items):
    capitals, plurals = dict(corpus.CAPITALS), dict(corpus.PLURALS)
    checked = Counter()
    for item in items["multiple_choice"]:
        right, stem = item.options[item.correct], item.question.split("\n")[0]
        m = re.search(r"capital (?:of|city is)|'s capital", stem) and re.search(
            r"of ([A-Z][\w ]+)\?|^([A-Z][\w ]+)'s", stem
        )
        if m:
            assert capitals[m[1] or m[2]] == right
            checked["capital"] += 1
        m = re.search(r"(\d+) × (\d+)", stem)
        if m:
            assert int(m[1]) * int(m[2]) == int(right)
            checked["arith"] += 1
        m = re.search(r"plural (?:of|form of) (?:the noun )?['\"](\w+)['\"]", stem)
        if m:
            assert plurals[m[1]] == right
            checked["plural"] += 1
        if item.family == "mc.largest":
            assert float(right) == max(map(float, item.options))
            checked["largest"] += 1
    assert len(checked) == 4, checked


# ----------------------------------------------------------------------------- labels: extraction
def test_extraction_spans(items):
    rng = random.Random(3)
    answerable = [i for i in items["context_extraction"] if i.answerable]
    unanswerable = [i for i in items["context_extraction"] if not i.answerable]
    assert len(answerable) > 150 and len(unanswerable) > 20
    for item in answerable:
        ref = item.references[0]
        passage = item.question.rsplit("\n\n", 1)[0]
        long_span = item.forms[0][1]
        assert item.forms[0][0] == "long_span" and ref in long_span and long_span in passage
        for span in item.spans:
            for r in item.references:
                assert not re.search(rf"\b{re.escape(r)}\b", span, re.I), (r, span)
                assert not re.search(rf"\b{re.escape(span)}\b", r, re.I), (r, span)
        text, _ = corpus.wrong_answer(item, "other_span", rng)
        assert text in item.spans
    for item in unanswerable:
        assert item.references[0] == "unanswerable" and item.forms[0] == ("span", "unanswerable")
        assert corpus.wrong_answer(item, "false_unanswerable", rng) is None


def test_extraction_paraphrases_mean_the_same(items):
    seen = Counter()
    for item in items["context_extraction"]:
        forms = dict(item.forms)
        ref = item.references[0]
        if "iso" in forms:  # dates: every form names the same day
            y, m, d = map(int, forms["iso"].split("-"))
            assert ref == f"{corpus.MONTHS[m - 1]} {d}, {y}" and forms["day_month"] == f"{d} {corpus.MONTHS[m - 1]} {y}"
            seen["date"] += 1
        if "words" in forms and ref.isdigit() and len(ref) < 4:
            assert WORD_VALUES[forms["words"]] == int(ref)
            seen["count"] += 1
        if "words" in forms and ref.isdigit() and len(ref) == 4:  # 'nineteen oh-five', 'two thousand nine'
            spoken = forms["words"]
            if spoken.startswith("two thousand"):
                year = 2000 + WORD_VALUES.get(spoken[len("two thousand ") :], 0)
            else:
                high, low = spoken.split(" ", 1)
                year = 100 * WORD_VALUES[high] + (0 if low == "hundred" else WORD_VALUES[low.replace("oh-", "")])
            assert year == int(ref)
            seen["year"] += 1
        if "abbrev" in forms:
            assert forms["abbrev"] == ref.replace("hectares", "ha")
            seen["area"] += 1
    assert len(seen) == 4, seen


# ----------------------------------------------------------------------------- whole-candidate kinds
def test_special_candidates(items):
    rng = random.Random(4)
    for _cat, pool in items.items():
        for item in pool[:60]:
            text, meta = corpus.candidate(item, 0, rng, kind="truncated")
            assert "final answer" not in text.lower() and meta["style"] == "truncated"
            answer = (
                item.options[item.correct]
                if item.options
                else corpus.fmt(item.value)
                if item.value
                else item.references[0]
            )
            assert not re.search(rf"(?<![\w.]){re.escape(answer)}(?![\w])", text.rsplit("\n", 1)[-1]), (answer, text)
            text, _ = corpus.candidate(item, 0, rng, kind="refusal")
            assert text in corpus.REFUSALS
            text, _ = corpus.candidate(item, 0, rng, kind="judge_injection")
            assert any(s in text for s in corpus.INJECTIONS)
            text, _ = corpus.candidate(item, 1, rng, kind="injection_correct")
            assert any(s in text for s in corpus.INJECTIONS)
            text, meta = corpus.candidate(item, 0, rng, kind="hedge")
            assert meta["style"] == "hedge" and re.search(r"\bor\b|\band\b", text)
            text, _ = corpus.candidate(item, 1, rng, kind="hedge_commit")
            assert re.search(r"I would say|On reflection|final answer is", text)


def test_right_then_wrong_states_a_wrong_final_answer(items):
    rng = random.Random(5)
    for item in items["open_math"][:80]:
        text, _ = corpus.candidate(item, 0, rng, kind="right_then_wrong")
        reasoning, final = text.rsplit("\n", 1)
        stated = re.sub(
            r"^(Final answer:|Final Answer:|\*\*Final answer:\*\*|FINAL ANSWER:|So the answer is|"
            r"Therefore, the answer is|The answer is|Hence|So it is)\s*",
            "",
            final,
        ).rstrip(".")
        assert corpus.fmt(item.value) in reasoning or corpus.money(item.value) in reasoning
        assert value_of(stated)[0] != item.value


def test_correct_and_wrong_candidates_differ(splits):
    by_question = {}
    for r in splits["train"]:
        by_question.setdefault(r["question"], []).append(r)
    for pair in by_question.values():
        assert sorted(r["label"] for r in pair) == [0, 1]
        assert pair[0]["candidate"].strip() != pair[1]["candidate"].strip()


# ----------------------------------------------------------------------------- open QA
SCALES = {"km": 1000, "kilometers": 1000, "kilometres": 1000, "thousand": 1000, "million": 10**6}


def measure(text: str) -> tuple[Fraction, str]:
    """(value in meters or people, unit word) of an open-QA number: '2,350 m', '2.35 km', '2.4 million people',
    'two thousand three hundred fifty meters', '48.2 thousand' ..."""
    m = re.fullmatch(r"([\d,.]+)(?: (thousand|million|billion))?(?: (\w+))?", text)
    if m:
        value = Fraction(m[1].replace(",", "")) * SCALES.get(m[2], 1)
        return value * SCALES.get(m[3], 1), m[2] if m[2] == "billion" else m[3] or ""
    spoken, unit = re.fullmatch(r"([a-z -]+?)(?: (meters|kilometers))?", text).groups()
    high, _, low = spoken.partition(" thousand")
    value = WORD_VALUES[high] * 1000 + WORD_VALUES.get(low.strip(), 0) if _ else WORD_VALUES[spoken]
    return Fraction(value * SCALES.get(unit, 1)), unit or ""


def says(text: str, ref: str) -> bool:
    return bool(re.search(rf"(?<!\w){re.escape(ref.lower())}(?!\w)", text.lower()))


def bare_question(question: str) -> str:
    """An open-QA question without its intro ('Q: ') and instruction line."""
    line = question.split("\n")[0]
    intro = max((i for i in corpus.QA_INTROS if line.startswith(i)), key=len)
    return line[len(intro) :]


def test_open_qa_rows_in_every_split(splits):
    for name, rows in splits.items():
        qa = [r for r in rows if r["category"] == "open_qa"]
        assert len(qa) >= len(rows) / 6, name
        assert {r["task"] for r in qa} == {"embedded-openqa"} and all(r["meta"]["family"].startswith("qa.") for r in qa)
        assert not any(corpus.has_passage(r["question"]) for r in qa)  # no passage: what synth calls open_qa
        assert all(corpus.infer_category(r["question"], r["references"][0]) in ("open_qa", "open_math") for r in qa)
    train_families = {r["meta"]["family"] for r in splits["train"] if r["category"] == "open_qa"}
    assert train_families == {f"qa.{f}" for f in corpus.QA_FAMILIES} - set(corpus.HELDOUT_FAMILIES)
    adversarial = {r["meta"]["attack"] for r in splits["adversarial"] if r["category"] == "open_qa"}
    assert {
        "mentions_reference",
        "near_miss",
        "other_entity",
        "paragraph",
        "off_by_one",
        "wrong_unit",
        "negated",
        "hedge",
        "refusal",
        "list_all",
    } <= adversarial


def test_open_qa_questions_stay_in_their_split(splits):
    bare = {
        name: {bare_question(r["question"]) for r in rows if r["category"] == "open_qa"}
        for name, rows in splits.items()
        if name != "adversarial"
    }
    assert not bare["train"] & (bare["val"] | bare["test"]) and not bare["val"] & bare["test"]
    keys = {}
    for split in ("train", "val", "test"):  # a real fact (the capital of France) is asked in one split only
        ctx, seen = Ctx(split, 7, "open_qa"), set()
        keys[split] = {new_item(ctx, "open_qa", split, seen).split_key for _ in range(600)}
    assert not keys["train"] & keys["val"] and not keys["train"] & keys["test"] and not keys["val"] & keys["test"]
    assert any(k.startswith("capital:") for k in keys["val"] | keys["test"])


def test_open_qa_references_are_alias_lists(splits):
    qa = [r for r in splits["train"] if r["category"] == "open_qa"]
    sizes = Counter(len(r["references"]) for r in qa)
    assert sizes[1] > len(qa) / 5 and len(qa) - sizes[1] > len(qa) / 5 and max(sizes) == 6, sizes
    refs = [r["references"] for r in qa]
    assert any(re.fullmatch(r"\d{4}-\d{2}-\d{2}", x) for rs in refs for x in rs[1:])  # a date, also in ISO form
    assert any(rs[0].split()[-1] in rs[1:] for rs in refs if " " in rs[0])  # a full name and the surname
    assert any(f"the {rs[0]}" in rs or f"{rs[0]} River" in rs for rs in refs)  # 'Seine', 'the Seine', 'Seine River'
    assert any(re.fullmatch(r"[\d,]+ \w+", rs[0]) and len(rs) > 2 for rs in refs)  # '2,350 meters', '2350 m' ...


def test_open_qa_correct_forms_agree_and_wrong_ones_differ(items):
    seen = Counter()
    for item in items["open_qa"]:
        texts = [t for _, t in item.forms]
        right = {t.lower() for t in texts}
        assert texts[0] == item.references[0] and set(item.references) <= set(texts) and 1 <= len(item.references) <= 6
        assert item.spans and item.claims and all("{" in c for c in item.claims)
        wrong = item.spans + [w for kind, ws in item.wrong_forms.items() for w in ws]
        assert not right & {w.lower() for w in wrong}, item.question
        assert not any(says(w, r) for w in item.spans for r in right)  # another entity never names the answer
        assert not any(says(f, r) for f in item.facts + item.after for r in right)  # side facts never do either
        if item.family == "qa.date":
            days = {corpus._date_of(t) for t in texts} - {None}
            assert len(days) == 1, texts
            day = days.pop()
            assert dict(item.forms)["weekday"].startswith(corpus.WEEKDAYS[datetime.date(*day).weekday()])
            assert all(corpus._date_of(w) not in (day, None) for w in item.wrong_forms["off_by_one"] + item.spans)
            seen["date"] += 1
        if item.family == "qa.measure":
            values = {measure(t)[0] for t in texts}
            assert len(values) == 1, texts
            value = values.pop()
            for kind in ("off_by_one", "slip", "decimal_shift", "near_miss"):
                assert all(measure(w)[0] != value for w in item.wrong_forms[kind]), kind
            assert all(measure(w)[0] != value for w in item.spans)
            units = {measure(t)[1] for t in texts}
            for w in item.wrong_forms[
                "wrong_unit"
            ]:  # the same number in another unit ('412 miles', '412 meters' for 412 km)
                number, unit = re.fullmatch(r"([\d,.]+) (\w+)", w).groups()
                assert any(t.startswith(number + " ") for t in texts) and (
                    unit not in units or measure(w)[0] != value
                ), w
            seen["measure"] += 1
        if item.family == "qa.who":
            first, last = item.references[0].split()
            assert all(last in w and w != item.references[0] for w in item.wrong_forms["near_miss"])
            assert not any({first, last} & set(w.split()) for w in item.spans)
            seen["who"] += 1
        if item.family == "qa.capital":
            assert item.references[0] in dict(corpus.CAPITALS).values()
            seen["capital"] += 1
    assert len(seen) == 4, seen


def test_open_qa_long_correct_answers_bury_the_reference(splits):
    buried = 0
    for r in splits["train"]:
        if r["category"] != "open_qa" or r["label"] != 1 or r["meta"]["kind"] != "paragraph":
            continue
        sentences = [s for s in re.split(r"\n+|(?<=[.!?\]])\s+(?=[A-Z\"*])", r["candidate"]) if s.strip()]
        hits = [i for i, s in enumerate(sentences) if any(says(s, ref) for ref in r["references"])]
        assert 2 <= len(sentences) <= 9, r["candidate"]
        buried += bool(hits) and len(sentences) >= 3 and 0 not in hits and len(sentences) - 1 not in hits
    assert buried >= 15, buried


def test_open_qa_wrong_answers_that_contain_a_reference(splits):
    rows = [
        r
        for r in splits["train"]
        if r["category"] == "open_qa"
        and r["label"] == 0
        and any(ref.lower() in r["candidate"].lower() for ref in r["references"])
    ]
    kinds = Counter(r["meta"]["kind"] for r in rows)
    assert kinds["mentions_reference"] >= 20 and kinds["near_miss"] >= 5 and kinds["wrong_paragraph"] >= 3, kinds
    for r in rows:
        assert r["candidate"].strip().lower() not in {ref.lower() for ref in r["references"]}


def test_open_qa_mentions_commit_to_the_other_answer(items):
    rng = random.Random(6)
    for item in items["open_qa"][:120]:
        right = {t.lower() for _, t in item.forms}
        wrong_text, _ = corpus.candidate(item, 0, rng, kind="mentions_reference")
        right_text, _ = corpus.candidate(item, 1, rng, kind="contrast")
        assert any(says(wrong_text, r) for r in item.references)  # it names the reference ...
        claimed = [
            w
            for w in item.spans + item.wrong_forms.get("near_miss", []) + item.wrong_forms.get("off_by_one", [])
            if w in wrong_text
        ]
        assert claimed, wrong_text  # ... and states a wrong answer of the item
        assert any(t in right_text for t in (t for _, t in item.forms)), right_text
        assert right  # the contrast names a wrong answer and states a right one
