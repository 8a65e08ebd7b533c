"""Judging in French, German, Spanish and Korean: answer extraction in each language, the multilingual corpus
(deterministic, disjoint splits, labels the regex judge agrees with), its source spec, the per-language report
and the multilingual recipes."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import yaml

from bertjudge.core.extract import (
    extract_answer,
    language_of,
    normalize_answer,
    number_value,
    options_of,
    parse_options,
    qa_normalize,
    reference_recall,
)
from bertjudge.core.records import RecordError, normalize
from bertjudge.data.corpus import multilingual
from bertjudge.data.sources import load_source, load_sources
from bertjudge.evaluation.report import build_report, render_markdown
from bertjudge.judges.regex import RegexJudge

ROOT = Path(__file__).resolve().parents[1]
LETTERS = ["A", "B", "C", "D"]

# ----------------------------------------------------------------------------- extraction
EXTRACTION = [
    # (candidate, options, language, expected (answer, rule))
    # markers of each language, the English ones still read
    ("Calculons.\nRéponse finale : 42", None, "fr", ("42", "final-answer")),
    ("**Réponse finale :** 12", None, "fr", ("12", "final-answer")),
    ("Donc, la réponse est 17.", None, "fr", ("17", "answer-is")),
    ("La réponse finale est Paris.", None, "fr", ("Paris", "final-answer")),
    ("Die Antwort ist 8.", None, "de", ("8", "answer-is")),
    ("Endgültige Antwort: Berlin", None, "de", ("Berlin", "final-answer")),
    ("La respuesta es 9.", None, "es", ("9", "answer-is")),
    ("Respuesta final: Lima", None, "es", ("Lima", "final-answer")),
    ("정답: 5", None, "ko", ("5", "answer-is")),
    ("답: 서울", None, "ko", ("서울", "answer-is")),
    ("계산하면 6 × 7 = 42.\n최종 답: 42", None, "ko", ("42", "final-answer")),
    ("따라서 답은 42입니다.", None, "ko", ("42", "answer-is")),
    ("Final answer: 7", None, "fr", ("7", "final-answer")),
    # decimal commas and thousands separators (fr/de/es), written back in English notation
    ("Réponse finale : 3,5", None, "fr", ("3.5", "final-answer")),
    ("La réponse est 1 000.", None, "fr", ("1000", "answer-is")),
    ("Réponse finale : 12\u202f345,5 €", None, "fr", ("12345.5 €", "final-answer")),
    ("Die Antwort ist 1.000.", None, "de", ("1000", "answer-is")),
    ("Endgültige Antwort: 1.234,5", None, "de", ("1234.5", "final-answer")),
    ("Die Antwort ist 3.14.", None, "de", ("3.14", "answer-is")),  # a dot before other than 3 digits: a decimal
    ("La respuesta es 0,25.", None, "es", ("0.25", "answer-is")),
    ("Il reste donc 3,5 litres.", None, "fr", ("3.5", "conclusion")),
    ("Le total est de 12,50 €.", None, "fr", ("12.50", "conclusion")),
    ("Respuesta final: $\\boxed{2{,}5}$", None, "es", ("2.5", "final-answer")),
    ("정답: 12,500원", None, "ko", ("12,500", "answer-is")),  # Korean writes English notation
    ("Réponse finale : 4 crayons", None, "fr", ("4", "final-answer")),  # the unit word dropped
    # number words
    ("La réponse est sept.", None, "fr", ("7", "answer-is")),
    ("Réponse finale : dix-sept", None, "fr", ("17", "final-answer")),
    ("Endgültige Antwort: zwölf", None, "de", ("12", "final-answer")),
    ("Respuesta final: dieciséis", None, "es", ("16", "final-answer")),
    ("veinte", None, "es", ("20", "last-number")),
    ("최종 답: 일곱 개", None, "ko", ("7", "final-answer")),
    ("정답: 이십삼", None, "ko", ("23", "answer-is")),
    ("Réponse finale : moins trois", None, "fr", ("-3", "final-answer")),
    # options
    ("Réponse : B", LETTERS, "fr", ("B", "answer-is")),
    ("Antwort: (C)", LETTERS, "de", ("(C)", "answer-is")),
    ("La respuesta correcta es la B.", LETTERS, "es", ("B", "answer-is")),
    ("Es la opción (D).", LETTERS, "es", ("D", "option")),
    ("정답: ③", LETTERS, "ko", ("C", "answer-is")),
    ("정답: ③", ["1", "2", "3", "4"], "ko", ("3", "answer-is")),
    ("정답: ③", None, "ko", ("3", "answer-is")),
    ("③", LETTERS, "ko", ("C", "option")),
    ("③ 파리\n\n프랑스의 수도는 파리입니다.", ["1", "2", "3", "4"], "ko", ("3", "option-first")),
    ("정답은 3번입니다.", LETTERS, "ko", ("C", "answer-is")),
    ("정답은 ② 베를린입니다.", LETTERS, "ko", ("B", "answer-is")),
    # multiple-choice answers keep the options' notation: they are compared with the options as written
    ("La réponse est 3,45.", LETTERS, "fr", ("3,45", "answer-is")),
    ("3,45", LETTERS, "de", ("3,45", "conclusion")),
]


@pytest.mark.parametrize("text,options,language,expected", EXTRACTION)
def test_extraction_in_each_language(text, options, language, expected):
    assert extract_answer(text, options, language) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Réponse finale : 3,5",
        "La réponse est 1 000.",
        "Die Antwort ist sieben.",
        "정답: ③",
        "1,000",
        "Final answer: 2,5",
    ],
)
@pytest.mark.parametrize("language", ["en", None, "it", "xx", "", 3])
def test_english_and_unknown_languages_read_by_the_english_rules(text, language):
    assert extract_answer(text, None, language) == extract_answer(text)


def test_the_english_rules_do_not_read_french():
    assert extract_answer("Réponse finale : 3,5") == ("3", "conclusion")  # "3,5" is no number in English


@pytest.mark.parametrize(
    "answer,language,value",
    [
        ("3,5", "fr", Fraction(7, 2)),
        ("1,5", "de", Fraction(3, 2)),
        ("1.000", "de", 1000),
        ("1 000", "fr", 1000),
        ("12.345,67", "es", Fraction(1234567, 100)),
        ("1,000", "fr", 1),  # a comma is a decimal comma in French: one, not a thousand
        ("1,000", "en", 1000),
        ("1,000", "ko", 1000),  # Korean groups thousands with commas, like English
        ("3.5", "fr", Fraction(7, 2)),
        ("sept", "fr", 7),
        ("Dix-Neuf", "fr", 19),
        ("zwanzig", "de", 20),
        ("dreißig", "de", 30),
        ("cero", "es", 0),
        ("quince", "es", 15),
        ("영", "ko", 0),
        ("열둘", "ko", 12),
        ("하나", "ko", 1),
        ("삼", "ko", 3),
        ("구십구", "ko", 99),
        ("menos cuatro", "es", -4),
    ],
)
def test_number_value_in_a_language(answer, language, value):
    assert number_value(answer, language) == value


@pytest.mark.parametrize("answer", ["sept", "1,5", "zwölf", "일곱"])
def test_number_value_without_a_language_is_unchanged(answer):
    assert number_value(answer) is None


def test_parse_options_reads_circled_numbers_in_korean_only():
    question = "프랑스의 수도는?\n① 파리\n② 런던\n③ 로마"
    assert parse_options(question, "ko") == (["1", "2", "3"], ["파리", "런던", "로마"])
    assert parse_options(question) == ([], [])
    record = {"category": "multiple_choice", "question": question, "meta": {"language": "ko"}}
    assert options_of(record) == ["1", "2", "3"] and options_of({**record, "meta": {}}) is None
    assert normalize_answer("③") == "3" == normalize_answer("3")


def test_language_of_a_record():
    assert language_of({"meta": {"language": "fr"}}) == "fr"
    assert language_of({"meta": {"language": "fr-CA"}}) == "fr" and language_of({"meta": {"language": "DE"}}) == "de"
    assert language_of({"meta": {}}) == "en" == language_of({}) == language_of({"meta": None})


def test_open_qa_matching_in_a_language():
    assert qa_normalize("C'est l'Allemagne.", "fr") == "c est allemagne"
    assert reference_recall("수도는 서울입니다.", ["서울"], "ko") == 1.0  # particles follow the noun
    assert reference_recall("수도는 서울입니다.", ["서울"]) == 0.0
    assert reference_recall("수도는 부산입니다.", ["서울"], "ko") == 0.0
    assert reference_recall("Die Hauptstadt ist Bern.", ["die Schweiz"], "de") == 0.0
    assert reference_recall("Es la Ciudad de México.", ["Ciudad de México"], "es") == 1.0


def rec(candidate, reference, category, language=None, question=None):
    meta = {"language": language} if language else {}
    return normalize(
        {"candidate": candidate, "references": reference, "category": category, "question": question, "meta": meta}
    )


def test_regex_judge_reads_the_language_of_each_record():
    judge = RegexJudge()
    korean = "프랑스의 수도는?\n① 파리\n② 런던\n③ 로마"
    rows = [
        (rec("Réponse finale : 3,5", ["3.5"], "open_math", "fr"), 1),
        (rec("Réponse finale : 3,5", ["3.5"], "open_math"), 0),  # read as English: "3,5" is no 3.5
        (rec("Réponse finale : 1 250", ["1250"], "open_math", "fr"), 1),
        (rec("Die Antwort ist 1.250.", ["1250"], "open_math", "de"), 1),
        (rec("Die Antwort ist 1,25.", ["1250"], "open_math", "de"), 0),
        (rec("답은 7개입니다.", ["7"], "open_math", "ko"), 1),
        (rec("정답: ①", ["1"], "multiple_choice", "ko", korean), 1),
        (rec("정답: ②", ["1"], "multiple_choice", "ko", korean), 0),
        (rec("① 파리", ["1"], "multiple_choice", "ko", korean), 1),
        (rec("La respuesta correcta es la B.", ["B"], "multiple_choice", "es", "¿?\nA) Lima\nB) Quito"), 1),
        (rec("La capitale de l'Allemagne est Berlin.", ["Berlin"], "open_qa", "fr"), 1),
        (rec("독일의 수도는 베를린입니다.", ["베를린"], "open_qa", "ko"), 1),
        (rec("독일의 수도는 빈입니다.", ["베를린"], "open_qa", "ko"), 0),
    ]
    assert judge.score_records([r for r, _ in rows]).tolist() == [float(v) for _, v in rows]


# ----------------------------------------------------------------------------- the corpus
@pytest.fixture(scope="module")
def splits():
    return {split: multilingual.generate(split, 600, seed=1) for split in multilingual.SPLITS}


def test_generation_is_deterministic():
    first = multilingual.generate("val", 120, seed=3)
    assert first == multilingual.generate("val", 120, seed=3)
    assert first != multilingual.generate("val", 120, seed=4)
    assert multilingual.generate("val", 30, seed=3, languages=["de"]) == [
        r for r in first if r["meta"]["language"] == "de"
    ]


def test_every_language_and_category_is_present_and_labelled(splits):
    for split, rows in splits.items():
        assert len(rows) == 600 and len({r["id"] for r in rows}) == 600
        for lang in multilingual.LANGUAGES:
            mine = [r for r in rows if r["meta"]["language"] == lang]
            assert len(mine) == 150
            assert {r["label_source"] for r in mine} == {f"synthetic:corpus-{lang}"}
            assert {r["category"] for r in mine} == set(multilingual.CATEGORIES)
            assert {r["task"] for r in mine} == {f"embedded-{t}-{lang}" for t in ("math", "mc", "openqa")}
            assert Counter(r["label"] for r in mine) == {0: 75, 1: 75}
            assert all(r["split"] == split for r in mine)


def test_splits_share_no_question_and_no_fact(splits):
    questions = {split: {r["question"] for r in rows} for split, rows in splits.items()}
    facts = {split: {r["meta"]["fact"] for r in rows} - {None} for split, rows in splits.items()}
    for a, b in (("train", "val"), ("train", "test"), ("val", "test")):
        assert not questions[a] & questions[b] and not facts[a] & facts[b]
    assert all(facts.values())
    for split, rows in splits.items():
        assert all(multilingual.split_of(r["meta"]["fact"]) == split for r in rows if r["meta"]["fact"])
    assert not any(r["meta"]["heldout_template"] for r in splits["train"])
    assert any(r["meta"]["heldout_template"] for r in splits["test"])


def test_numbers_are_written_in_each_language(splits):
    rows = [r for rows in splits.values() for r in rows if r["category"] == "open_math"]
    text = defaultdict(str)
    for r in rows:
        text[r["meta"]["language"]] += r["question"] + "\n" + r["candidate"] + "\n"
    assert re.search(r"\d,\d", text["fr"]) and re.search(r"\d \d{3}\b", text["fr"])  # 3,5 and 45 312
    assert re.search(r"\d,\d", text["de"]) and re.search(r"\d\.\d{3}\b", text["de"])  # 3,5 and 45.312
    assert re.search(r"\d,\d{3}", text["ko"]) and not re.search(r"\d,\d{1,2}\b", text["ko"])  # 12,500; no 3,5
    spelled = [r for r in rows if r["meta"].get("form") == "words" and r["label"] == 1]
    assert {r["meta"]["language"] for r in spelled} == set(multilingual.LANGUAGES)
    for r in spelled:  # a count written in words: the word of its value, read back by the language's rules
        word = multilingual.SMALL_NUMBER_WORDS[r["meta"]["language"]][int(r["references"][0])]
        assert word in r["candidate"]
        assert extract_answer(r["candidate"], None, r["meta"]["language"])[0] == r["references"][0]
    for r in rows:  # references: the number in English notation first
        assert number_value(r["references"][0]) is not None


def test_korean_rows_use_circled_options(splits):
    korean = [r for rows in splits.values() for r in rows if r["meta"]["language"] == "ko"]
    circled = [r for r in korean if r["category"] == "multiple_choice" and "\n①" in r["question"]]
    assert circled and all(r["references"][0].isdigit() for r in circled)
    assert any(re.search("[①-⑩]|\\d번", r["candidate"]) for r in circled)


# measured with this test's rows (300 test rows per language, seed 0): 0.967 fr, 0.967 de, 0.960 es, 0.953 ko;
# every disagreement is an open-QA answer that names the reference and then commits to another entity ("mention",
# which the regex judge reads as correct by design) or a refusal holding the reference's letters ("ne" for Ne)
REGEX_FLOOR = 0.93


@pytest.mark.parametrize("language", multilingual.LANGUAGES)
def test_labels_agree_with_the_regex_judge(language):
    rows = multilingual.generate("test", 300, seed=0, languages=[language])
    verdicts = RegexJudge().score_records(rows)
    agree = verdicts == np.array([r["label"] for r in rows])
    assert agree.mean() >= REGEX_FLOOR
    kinds = {r["meta"]["kind"] for r, ok in zip(rows, agree) if not ok}
    assert kinds <= {"mention", "refusal"}, kinds
    assert all(agree[i] for i, r in enumerate(rows) if r["category"] != "open_qa")


def test_unknown_split_and_language_are_refused():
    with pytest.raises(ValueError, match="unknown split"):
        multilingual.generate("adversarial", 10)
    with pytest.raises(ValueError, match="unknown languages"):
        multilingual.generate("test", 10, languages=["it"])


# ----------------------------------------------------------------------------- the source spec
def test_embedded_source_takes_languages():
    rows = load_source("embedded:test?n=40&lang=fr")
    assert len(rows) == 40 and {r["meta"]["language"] for r in rows} == {"fr"}
    mixed = load_source("embedded:val?n=50&lang=en,ko&seed=2")
    assert Counter(r["meta"].get("language", "en") for r in mixed) == {"en": 25, "ko": 25}
    assert [r["id"] for r in mixed[:25]] == [r["id"] for r in load_source("embedded:val?n=25&seed=2")]
    assert len(load_sources(["embedded:train?n=30", "embedded:train?n=30&lang=fr,de,es,ko"])) == 60


@pytest.mark.parametrize(
    "spec,message",
    [
        ("embedded:test?lang=it", "lang='it' must list some of en, fr, de, es, ko"),
        ("embedded:test?lang=fr,fr", "each once"),
        ("embedded:adversarial?lang=fr", "English only"),
        ("embedded:train?attacks=hedge&lang=de", "English only"),
    ],
)
def test_bad_language_options_name_the_spec(spec, message):
    with pytest.raises(RecordError, match=re.escape(f"{spec}: ") + ".*" + re.escape(message)):
        load_source(spec)


# ----------------------------------------------------------------------------- the report
def test_report_has_a_per_language_table_only_for_several_languages():
    rows = multilingual.generate("test", 80, seed=0, languages=["fr", "ko"]) + load_source("embedded:test?n=40")
    labels = np.array([r["label"] for r in rows], dtype=float)
    scores = RegexJudge().score_records(rows)
    report = build_report(rows, {"regex": scores}, n_boot=20)
    by_language = report["judges"]["regex"]["by_language"]
    assert {k: v["n"] for k, v in by_language.items()} == {"en": 40, "fr": 40, "ko": 40}
    for lang, stats in by_language.items():
        mine = np.array([(r.get("meta") or {}).get("language", "en") == lang for r in rows])
        assert stats["accuracy"] == pytest.approx(float(((scores >= 0.5) == labels)[mine].mean()))
    markdown = render_markdown(report)
    assert "## Accuracy by language" in markdown
    assert re.search(r"^\| ko \| 40 \| ", markdown, re.MULTILINE)
    french = [r for r in rows if (r.get("meta") or {}).get("language") == "fr"]
    single = build_report(french, {"regex": RegexJudge().score_records(french)}, n_boot=20)
    assert "by_language" not in single["judges"]["regex"] and "by language" not in render_markdown(single)


# ----------------------------------------------------------------------------- the recipes
@pytest.mark.parametrize("name", ["eurobert-210m-multilingual", "minilm-l6-multilingual"])
def test_multilingual_recipes_read_every_language(name):
    config = yaml.safe_load((ROOT / "configs" / "encoder" / f"{name}.yaml").read_text())
    specs = [spec for key in ("train", "val", "test") for spec in config["data"][key]]
    assert any("lang=fr,de,es,ko" in spec for spec in config["data"]["train"])
    small = [re.sub(r"n=\d+", "n=24", spec) for spec in specs]  # the recipe's sources, with fewer rows
    rows = [row for spec in small for row in load_source(spec)]
    assert {(r.get("meta") or {}).get("language", "en") for r in rows} == {"en", *multilingual.LANGUAGES}
