"""synth --language: labelled rows in French, German, Spanish and Korean from a user's (question, reference) rows,
read back by the language's extraction rules and judged by the regex judge as labelled."""

from __future__ import annotations

import json
import re
from collections import Counter
from fractions import Fraction

import numpy as np
import pytest

from bertjudge.cli.main import main
from bertjudge.core import records
from bertjudge.core.extract import LANGUAGE_RULES, extract_answer, number_value
from bertjudge.data import synth
from bertjudge.data.corpus import multilingual
from bertjudge.judges.regex import RegexJudge

# per language: a math question with a decimal reference, a multiple-choice question with options (Korean: circled),
# an open-QA capital question; the value of the math reference
ROWS = {
    "fr": (
        [
            {
                "question": "On verse 7 litres de jus dans 2 bouteilles. Combien de litres par bouteille ?",
                "reference": "3,5",
            },
            {
                "question": "Quelle est la capitale de l'Allemagne ?\nA. Paris\nB. Berlin\nC. Rome\nD. Madrid",
                "reference": "B",
            },
            {"question": "Quelle est la capitale de l'Espagne ?", "reference": "Madrid"},
        ],
        Fraction(7, 2),
    ),
    "de": (
        [
            {
                "question": "5 Liter Saft werden auf 2 Flaschen verteilt. Wie viel Liter sind in einer?",
                "reference": "2,5 Liter",
            },
            {"question": "Welches chemische Symbol hat Eisen?\n(A) Au\n(B) Ag\n(C) Fe\n(D) Cu", "reference": "(C)"},
            {"question": "Was ist die Hauptstadt von Frankreich?", "reference": "Paris"},
        ],
        Fraction(5, 2),
    ),
    "es": (
        [
            {"question": "Se reparten 9 litros en 4 botellas. ¿Cuántos litros hay en cada una?", "reference": "2,25"},
            {"question": "¿Cuál es la capital de Italia?\nA) Lima\nB) Quito\nC) Oslo\nD) Roma", "reference": "D"},
            {"question": "¿Cuál es la capital de Francia?", "reference": "París"},
        ],
        Fraction(9, 4),
    ),
    "ko": (
        [
            {"question": "주스 7리터를 병 2개에 똑같이 나누었습니다. 병 하나에 몇 리터입니까?", "reference": "3.5"},
            {"question": "프랑스의 수도는?\n① 런던\n② 로마\n③ 파리\n④ 베를린", "reference": "3"},
            {"question": "독일의 수도는 어디입니까?", "reference": "베를린"},
        ],
        Fraction(7, 2),
    ),
}
# the wrong kinds that state the reference on purpose (negated, beside another answer, or named before another):
# a lexical reader finds it in them, which is what they test
STATES_THE_REFERENCE = {"negation", "between", "mention"}
# measured on this file's rows (24 a language: 8 candidates a question, seed 0): 0.958 fr, 0.958 de, 0.917 es,
# 0.958 ko; every disagreement is one of STATES_THE_REFERENCE (seeds 1 and 2: 0.875 to 1.0, the same kinds)
REGEX_FLOOR = 0.9


def write(path, rows):
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture(scope="module", params=multilingual.LANGUAGES)
def made(request, tmp_path_factory):
    """(language, rows) written by ``python -m bertjudge synth --language LANG``."""
    lang = request.param
    folder = tmp_path_factory.mktemp(f"synth-{lang}")
    src = write(folder / "qr.jsonl", ROWS[lang][0])
    args = ["synth", "--input", str(src), "--output", str(folder / "out"), "--val-fraction", "0"]
    assert main([*args, "--per-question", "8", "--language", lang]) == 0
    return lang, records.read_records(folder / "out" / "train.jsonl")


def test_rows_are_in_the_language_with_both_labels(made):
    lang, rows = made
    assert {r["meta"]["language"] for r in rows} == {lang}
    assert {r["label_source"] for r in rows} == {f"synthetic:synth-v1-{lang}"}
    assert Counter((r["category"], r["label"]) for r in rows).keys() == {
        (c, label) for c in multilingual.CATEGORIES for label in (0, 1)
    }
    assert all(r["meta"]["inferred_category"] for r in rows)
    final = LANGUAGE_RULES[lang].final
    assert any(final.search(r["candidate"]) and not re.search("final answer", r["candidate"], re.I) for r in rows)
    math = " ".join(r["candidate"] for r in rows if r["category"] == "open_math")
    if lang == "ko":  # Korean writes a decimal point; circled options are answered circled or as "3번"
        assert not re.search(r"\d,\d", math)
        assert any(re.search("[①-④]|\\d번", r["candidate"]) for r in rows if r["category"] == "multiple_choice")
    else:
        assert re.search(r"\d,\d", math)  # a decimal comma


def test_math_candidates_give_the_reference_value_only_when_correct(made):
    lang, rows = made
    value = ROWS[lang][1]
    math = [r for r in rows if r["category"] == "open_math"]
    assert fmt_in(value, math[0]["references"])  # the English notation joins the references: "3,5" -> "3.5"
    for r in math:
        answer, _ = extract_answer(r["candidate"], None, lang)
        read = number_value(re.sub(r"\s*(?:€|원)$", "", answer), lang) if answer else None
        if r["label"] == 1:
            assert read == value, r["candidate"]
        elif r["meta"]["kind"] not in STATES_THE_REFERENCE:
            assert read != value, r["candidate"]
    assert {r["meta"]["kind"] for r in math if r["label"] == 0} & {
        "off_by_one",
        "decimal_shift",
        "sign",
        "intermediate",
    }


def fmt_in(value: Fraction, references: list[str]) -> bool:
    return any(number_value(ref) == value for ref in references)


def test_the_regex_judge_agrees_with_the_labels(made):
    lang, rows = made
    verdicts = RegexJudge().score_records(rows)
    agree = verdicts == np.array([r["label"] for r in rows])
    assert agree.mean() >= REGEX_FLOOR, agree.mean()
    assert {r["meta"]["kind"] for r, ok in zip(rows, agree) if not ok} <= STATES_THE_REFERENCE


def test_user_items_in_each_language():
    item = multilingual.item_from_reference("Combien ?", ["3,5 litres"], lang="fr")
    assert (item.category, item.value, item.unit, item.references) == (
        "open_math",
        Fraction(7, 2),
        "litres",
        ["3,5 litres", "3.5"],
    )
    assert ("unit", "3,5 litres") in item.forms and ("fraction", "7/2") in item.forms
    assert multilingual.item_from_reference("Wie viele?", ["1.000"], lang="de").value == 1000
    assert multilingual.item_from_reference("얼마?", ["12,500원"], lang="ko").references == ["12,500원", "12500"]
    korean = multilingual.item_from_reference("수도는?\n① 런던\n② 파리", ["②"], lang="ko")
    assert (korean.category, korean.labels, korean.correct) == ("multiple_choice", ["1", "2"], 1)
    assert multilingual.infer_category("수도는?\n① 런던\n② 파리", "2", "ko") == "multiple_choice"
    capital = multilingual.item_from_reference("¿Cuál es la capital de Francia?", ["París"], lang="es")
    assert capital.claim == "La capital de Francia es {t}." and "París" not in capital.spans
    assert set(capital.spans) <= {f.answer["es"] for f in multilingual.CAPITALS} and len(capital.facts) == 3
    unknown = multilingual.item_from_reference("Qui a écrit « Le Horla » ?", ["Guy de Maupassant"], lang="fr")
    assert unknown.claim == "« Le Horla » est une œuvre de {t}." and not unknown.spans  # no wrong author is known
    assert multilingual.item_from_reference("En quelle année ?", ["1969"], "open_qa", lang="fr").spans == [
        "1968",
        "1970",
        "1959",
        "1979",
    ]


def test_an_unknown_entity_gets_domain_free_wrong_answers(tmp_path):
    rows = [{"question": "Qui a écrit « Le Horla » ?", "reference": "Guy de Maupassant"}]
    made = synth.synthesize(synth.read_rows(write(tmp_path / "qa.jsonl", rows)), 8, 0, 0.0, "fr")
    assert {r["meta"]["kind"] for r in made if r["label"] == 0} <= {"refusal", "negation"}
    assert made == synth.synthesize(synth.read_rows(tmp_path / "qa.jsonl"), 8, 0, 0.0, "fr")  # deterministic


def test_context_extraction_is_refused_with_its_line(tmp_path, capsys):
    rows = [ROWS["fr"][0][0], {"question": "Texte : Léa est née à Lyon.\nOù est née Léa ?", "reference": "Lyon"}]
    src = write(tmp_path / "qr.jsonl", rows)
    assert main(["synth", "--input", str(src), "--output", str(tmp_path / "o"), "--language", "fr"]) == 2
    err = capsys.readouterr().err.strip()
    assert "qr.jsonl:2" in err and "context_extraction" in err and "\n" not in err and not (tmp_path / "o").exists()


def test_an_unknown_language_is_refused(tmp_path, capsys):
    src = write(tmp_path / "qr.jsonl", ROWS["fr"][0])
    assert main(["synth", "--input", str(src), "--output", str(tmp_path / "o"), "--language", "it"]) == 2
    err = capsys.readouterr().err.strip()
    assert "--language" in err and "'it'" in err and "\n" not in err and not (tmp_path / "o").exists()


def test_english_is_the_default_byte_for_byte(tmp_path):
    rows = [
        {"question": "What is the capital of France?\nA. Lyon\nB. Paris\nC. Nice", "reference": "B"},
        {"question": "A rope is 120 cm long and is cut in half. How long is each piece?", "reference": "60 cm"},
        {"question": "Who created the Chipmunks?", "references": ["Ross Bagdasarian", "David Seville"]},
    ]
    src = write(tmp_path / "qr.jsonl", rows)
    args = ["synth", "--input", str(src), "--val-fraction", "0.5", "--seed", "3"]
    assert main([*args, "--output", str(tmp_path / "plain")]) == 0
    assert main([*args, "--output", str(tmp_path / "en"), "--language", "en"]) == 0
    written = sorted(f.name for f in (tmp_path / "plain").iterdir())
    assert written and written == sorted(f.name for f in (tmp_path / "en").iterdir())
    for name in written:
        assert (tmp_path / "plain" / name).read_bytes() == (tmp_path / "en" / name).read_bytes()
    assert b'"language"' not in (tmp_path / "plain" / written[0]).read_bytes()
