"""Open-QA augmentation: wrong entities of the same type (label 0) and right answers written another way (label 1),
``augment_open_qa``, the ``qa_augment=SHARE`` source option and ``wrong_entity_mean_score``
(``bertjudge.data.open_qa_augment``)."""

from __future__ import annotations

import collections
import copy
import random
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bertjudge.core.extract import number_value, qa_normalize
from bertjudge.core.records import RecordError, normalize, write_records
from bertjudge.data.open_qa_augment import (
    ENTITY_TYPES,
    answer_noun,
    answer_span,
    augment_open_qa,
    entity_pool,
    entity_type,
    hard_negative,
    is_eligible,
    paraphrased_positive,
    parse_date,
    wrong_entity_mean_score,
)
from bertjudge.data.sources import load_source

EVOUNA_TRAIN = "data/real/evouna-tq-v1.jsonl.gz?split=train"


def qa(question: str, candidate: str, references: list[str], rid: str = "r", label: int = 1, **fields) -> dict:
    return normalize(
        {
            "id": rid,
            "task": "t",
            "category": fields.pop("category", "open_qa"),
            "question": question,
            "candidate": candidate,
            "references": references,
            "label": label,
            "label_source": "human:test",
            "split": "train",
            "meta": {"source": "test"},
            **fields,
        }
    )


POOL_RECORDS = [
    qa("Which city is the capital of Spain?", "Madrid", ["Madrid"], "p1"),
    qa("Which city hosts the Louvre?", "It is Paris.", ["Paris"], "p2"),
    qa("Which city is home to the Colosseum?", "Rome", ["Rome"], "p3"),
    qa("Which planet is red?", "Mars", ["Mars"], "p4"),
    qa("Who wrote Hamlet?", "William Shakespeare", ["William Shakespeare"], "p5"),
    qa("Who painted the Mona Lisa?", "Leonardo da Vinci painted it.", ["Leonardo da Vinci", "Leonardo"], "p6"),
    qa("Who discovered penicillin?", "Alexander Fleming", ["Alexander Fleming"], "p7"),
    qa("In which year did the war of 1812 end?", "1815", ["1815"], "p8"),
    qa("In which year did the Titanic sink?", "It sank in 1912.", ["1912"], "p9"),
    qa("When was the Bastille stormed?", "On 14 July 1789.", ["14 July 1789"], "p10"),
    qa("When did the Berlin Wall fall?", "9 November 1989", ["9 November 1989"], "p11"),
    qa("How many legs has a spider?", "eight", ["8", "eight"], "p12"),
    qa("How many players in a football team?", "11", ["11"], "p13"),
    qa("What sport uses a shuttlecock?", "badminton", ["badminton"], "p14"),
    qa("What sport is played at Wimbledon?", "tennis", ["tennis"], "p15"),
    qa("Which band sang Yesterday?", "The Beatles", ["The Beatles"], "p16"),
    qa("What is the lamb of a sheep called?", "a baby sheep", ["baby sheep"], "p17"),
    qa("What is mined at Kimberley?", "raw diamonds in rock", ["raw diamonds in rock"], "p18"),
]
POOL = entity_pool(POOL_RECORDS)


# ---- types ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, question, expected",
    [
        ("1776", None, "year"),
        ("4 July 1776", None, "date"),
        ("July 4, 1776", None, "date"),
        ("1776-07-04", None, "date"),
        ("the 4th of July", None, "date"),
        ("twelve", None, "number"),
        ("10,000", None, "number"),
        ("Isaac Newton", "Who discovered gravity?", "person"),
        ("Isaac Newton", "Which scientist discovered gravity?", "person"),
        ("New York City", "In which city is Broadway?", "name"),
        ("Paris", None, "capitalized"),
        ("The Beatles", None, "capitalized"),
        ("golf", None, "word"),
        ("a frog", None, "word"),
        ("bottle of poison", None, "other"),
        ("Apollo 17", None, "other"),
        ("Sven-Göran Eriksson", "Who managed the team?", "person"),
    ],
)
def test_entity_types(text, question, expected):
    assert entity_type(text, question) == expected


def test_dates_are_read_in_every_order_and_checked_against_the_calendar():
    day = (1776, 7, 4)
    for text, order in [
        ("4 July 1776", "dmy"),
        ("July 4th, 1776", "mdy"),
        ("1776-07-04", "iso"),
        ("4 Jul. 1776", "dmy"),
    ]:
        date = parse_date(text)
        assert (date.year, date.month, date.day, date.order) == (*day, order), text
    assert parse_date("July 1776")[:3] == (1776, 7, None)
    assert parse_date("31 February 1900") is None and parse_date("29 February 1900") is None
    assert parse_date("29 February 2000") is not None
    assert parse_date("Mayor 5") is None and parse_date("July") is None


def test_answer_nouns():
    assert answer_noun("Which Swedish actress won the Oscar?") == "actress"
    assert answer_noun("In which city is the Louvre?") == "city"
    assert answer_noun("What type of rock is formed from lava?") == "rock"
    assert answer_noun("What is the capital of France?") is None


def test_the_answer_span_is_the_longest_reference_named_verbatim():
    record = qa("Where is La Scala?", "La Scala is in MILAN, Italy.", ["Milan", "Milan, Italy", "Mil"])
    assert answer_span(record) == "MILAN, Italy"
    assert answer_span(qa("Where?", "A Parisian café.", ["Paris"])) is None  # word boundaries
    # a reference the question names is no answer: "typewriter" is asked about, not answered
    asked = qa("Which word is typed on a typewriter's top row?", "On a typewriter: typewriter.", ["typewriter"])
    assert answer_span(asked) is None
    assert is_eligible(qa("Where?", "Paris", ["Paris"]))
    assert not is_eligible(qa("Where?", "Paris", ["Paris"], label=0))
    assert not is_eligible(qa("Where?", "Paris", ["Paris"], category="context_extraction"))


# ---- hard negatives --------------------------------------------------------------------------------------------


def test_a_hard_negative_replaces_every_mention_by_an_entity_of_the_same_type():
    record = qa("Which city is the capital of France?", "The capital is Paris, and PARIS is lovely.", ["Paris"])
    wrong = hard_negative(record, POOL, random.Random(0))
    meta = wrong["meta"]
    assert wrong["label"] == 0 and record["label"] == 1
    assert meta["augment"] == "wrong_entity" and meta["entity_type"] == "capitalized"
    assert meta["replaced"] == "Paris" and meta["replacement"] in POOL["capitalized:city"]  # a city for a city
    replacement = meta["replacement"]
    assert wrong["candidate"] == f"The capital is {replacement}, and {replacement.upper()} is lovely."
    assert wrong["label_source"] == "synthetic:wrong-entity(from human:test)"
    assert wrong["id"] == "r~wrong-entity" and meta["augmented_from"] == "r" and meta["source"] == "test"
    assert {k: v for k, v in wrong.items() if k not in ("candidate", "label", "label_source", "id", "meta")} == {
        k: v for k, v in record.items() if k not in ("candidate", "label", "label_source", "id", "meta")
    }


@pytest.mark.parametrize(
    "question, candidate, references, kind",
    [
        ("In which year were X-rays found?", "Wilhelm Röntgen discovered X-rays in 1895.", ["1895"], "year"),
        ("When was it signed?", "It was signed on 4 July 1776 in Philadelphia.", ["4 July 1776"], "date"),
        ("How many legs?", "A spider has eight legs.", ["eight"], "number"),
        ("Who wrote Oliver Twist?", "It was written by Charles Dickens, I believe.", ["Charles Dickens"], "person"),
        ("Which city is the capital of Italy?", "The capital is Rome.", ["Rome"], "capitalized"),
        ("Which sport?", "The sport is golf.", ["golf"], "word"),
    ],
)
def test_hard_negatives_keep_the_type_and_the_rest_of_the_candidate(question, candidate, references, kind):
    wrong = hard_negative(qa(question, candidate, references), POOL, random.Random(3))
    span, replacement = wrong["meta"]["replaced"], wrong["meta"]["replacement"]
    assert wrong["meta"]["entity_type"] == kind == entity_type(replacement, question)
    assert replacement in POOL[kind] and replacement not in references
    before, after = candidate.split(span)
    assert wrong["candidate"] == f"{before}{replacement}{after}"


def test_hard_negatives_fit_the_article_before_them():
    frog = qa("What does a tadpole become?", "It becomes a frog.", ["A frog"])
    assert hard_negative(frog, {"word": ["owl"]}, random.Random(0))["candidate"] == "It becomes an owl."
    eyelids = qa("Where?", "In the human eyelids.", ["eyelids"])
    assert hard_negative(eyelids, {"word": ["a manticore"]}, random.Random(0))["candidate"] == "In the human manticore."
    hague = qa("Which city?", "It is the Paris of the north.", ["Paris"])
    assert hard_negative(hague, {"capitalized": ["The Hague"]}, random.Random(0))["candidate"] == (
        "It is the Hague of the north."
    )


def test_no_hard_negative_when_another_reference_stays_or_nothing_fits():
    both = qa("Which element is Cs?", "Caesium, also spelt Cesium.", ["Caesium", "Cesium"])
    assert hard_negative(both, POOL, random.Random(0)) is None
    only_same = {"capitalized": ["Paris", "PARIS", "Paris, France"]}
    assert hard_negative(qa("Which city?", "Paris", ["Paris"]), only_same, random.Random(0)) is None
    assert hard_negative(qa("Which city?", "Paris", ["Paris"], label=0), POOL, random.Random(0)) is None


def test_no_hard_negative_whose_replacement_completes_a_reference():
    # "Henry Tudor Rose" names no reference, but after "King" the candidate would name "King Henry Tudor"
    record = qa("Tell me.", "It was King Charles Stuart.", ["Charles Stuart", "King Henry Tudor"])
    assert hard_negative(record, {"name": ["Henry Tudor Rose"]}, random.Random(0)) is None
    assert hard_negative(record, {"name": ["Henry Tudor Rose", "Anne Boleyn"]}, random.Random(0)) is not None


def test_same_number_and_same_day_are_no_wrong_entity():
    pool = {"number": ["12", "twelve", "13"], "date": ["July 4, 1776", "1776-07-04", "5 July 1776"]}
    for seed in range(10):
        twelve = hard_negative(qa("How many?", "There are twelve.", ["twelve"]), pool, random.Random(seed))
        assert twelve["meta"]["replacement"] == "13"
        day = hard_negative(qa("When?", "On 4 July 1776.", ["4 July 1776"]), pool, random.Random(seed))
        assert day["meta"]["replacement"] == "5 July 1776"


NEAR_MISSES = {  # answer -> what means it, contains it or is contained in it: never a wrong entity for it
    "Paris": ["Paris", "paris", "PARIS", "Paris, France", "the Paris"],
    "Isaac Newton": ["Isaac Newton", "Newton", "Sir Isaac Newton", "Isaac"],
    "1776": ["1776", "4 July 1776", "July 1776"],
    "4 July 1776": ["4 July 1776", "July 4, 1776", "1776-07-04", "the 4th of July 1776"],
    "twelve": ["twelve", "12", "Twelve", "12.0"],
    "golf": ["golf", "Golf", "GOLF"],
    "bottle of poison": ["bottle of poison", "poison", "bottle", "a bottle of poison"],
    "The Beatles": ["The Beatles", "the Beatles", "Beatles"],
}
ANSWERS = list(NEAR_MISSES)
OTHERS = ["Madrid", "Rome", "Ada Lovelace", "Marie Curie", "1815", "14 July 1789", "eleven", "tennis", "raw diamonds"]
ENTRIES = sorted({e for near in NEAR_MISSES.values() for e in near} | set(OTHERS))
TEXT = st.text(alphabet="abcdefgh ABCD-'", min_size=1, max_size=16)


@settings(max_examples=200, deadline=None)
@given(
    answer=st.sampled_from(ANSWERS),
    entries=st.lists(st.one_of(st.sampled_from(ENTRIES), TEXT), max_size=25),
    prefix=st.sampled_from(["", "I think it is ", "Answer: "]),
    suffix=st.sampled_from(["", ".", ", surely.", " (I am sure)."]),
    seed=st.integers(0, 10**6),
)
def test_hard_negatives_of_random_pools_name_no_reference(answer, entries, prefix, suffix, seed):
    references = [answer, answer.lower()]
    record = qa("Tell me?", f"{prefix}{answer}{suffix}", references)
    pool = collections.defaultdict(list)
    for entry in entries:
        pool[entity_type(entry, "Tell me?")].append(entry)
    wrong = hard_negative(record, pool, random.Random(seed))
    if wrong is None:
        return
    replacement = wrong["meta"]["replacement"]
    assert wrong["label"] == 0
    assert entity_type(replacement, "Tell me?") == entity_type(answer, "Tell me?") == wrong["meta"]["entity_type"]
    assert wrong["candidate"].startswith(prefix) and wrong["candidate"].endswith(suffix)
    norm = qa_normalize(replacement)
    assert norm and replacement not in NEAR_MISSES[answer]
    for reference in references:
        form = qa_normalize(reference)
        assert norm != form and f" {form} " not in f" {norm} " and f" {norm} " not in f" {form} "
        assert not re.search(rf"(?<!\w){re.escape(reference)}(?!\w)", wrong["candidate"], re.IGNORECASE)


# ---- paraphrased positives ---------------------------------------------------------------------------------------


def _same_day(a: str, b: str) -> bool:
    x, y = parse_date(a), parse_date(b)
    return (x.month, x.day) == (y.month, y.day) and (x.year == y.year or None in (x.year, y.year))


@pytest.mark.parametrize(
    "candidate, references, accepted, kind, expected",
    [
        ("It was signed on 4 July 1776.", ["4 July 1776"], (), "date", None),
        ("He landed on July 20, 1969.", ["July 20"], (), "date", None),
        ("There are twelve months.", ["twelve"], (), "number", "There are 12 months."),
        ("The band had 4 members.", ["4"], (), "number", "The band had four members."),
        ("The Beatles recorded it.", ["The Beatles"], (), "article", "Beatles recorded it."),
        ("Beatles.", ["Beatles", "The Beatles"], (), "article", "The Beatles."),
        ("It was Sir Isaac Newton.", ["Sir Isaac Newton"], (), "title", "It was Isaac Newton."),
        ("Isaac Newton", ["Isaac Newton", "Sir Isaac Newton"], (), "title", "Sir Isaac Newton"),
        ("NATO was founded in 1949.", ["North Atlantic Treaty Organization", "NATO"], (), "acronym", None),
        ("North Atlantic Treaty Organization.", ["North Atlantic Treaty Organization", "NATO"], (), "acronym", "NATO."),
        ("It is Caesium.", ["Caesium", "Cesium", "Element 55"], ["Cesium"], "alias", "It is Cesium."),
        ("Joseph Aloysius Hansom built it.", ["Joseph Aloysius Hansom", "Joseph Hansom"], (), "alias", None),
        ("It is in Milan, Italy.", ["Milan, Italy", "Milan"], (), "alias", "It is in Milan."),
        ("Doctor Who ran until 1989.", ["Doctor Who", "Doctorwho"], (), "alias", "Doctorwho ran until 1989."),
    ],
)
def test_paraphrases_keep_the_answer_right(candidate, references, accepted, kind, expected):
    record = qa("Tell me.", candidate, references)
    right = paraphrased_positive(record, random.Random(0), accepted)
    meta = right["meta"]
    assert right["label"] == 1 and meta["augment"] == f"paraphrase:{kind}" and right["candidate"] != candidate
    assert right["label_source"] == "synthetic:paraphrase(from human:test)" and right["id"] == f"r~paraphrase-{kind}"
    assert expected is None or right["candidate"] == expected
    new, old = meta["replacement"], meta["replaced"]
    assert new in right["candidate"] and (old in new or old not in right["candidate"])
    if kind == "date":
        assert any(_same_day(new, reference) for reference in references)
    elif kind == "number":
        assert number_value(new) == number_value(meta["replaced"])
    elif kind == "article":
        assert qa_normalize(new) == qa_normalize(meta["replaced"])
    elif kind == "title":
        assert new.split()[-2:] == meta["replaced"].split()[-2:]
    else:
        assert new in references


@pytest.mark.parametrize(
    "candidate, references",
    [
        ("Paris", ["Paris"]),  # nothing to rewrite
        ("Highway 61 Revisited.", ["61"]),  # a number inside a name stays in digits
        ("John Galliano", ["John Galliano", "Miss Dior Cherie"]),  # an alias-list redirect is no paraphrase
        ("Jack Nicholson", ["Jack Nicholson", "I warned him"]),
        ("Georgia", ["Georgia", "Western Georgia"]),  # a wider alias is another thing
        ("It is IS.", ["IS", "I S"]),  # single letters are no acronym
        ("Dr. Seuss", ["Dr. Seuss"]),  # a title whose name would be one word
    ],
)
def test_no_paraphrase_without_a_clearly_equivalent_rewrite(candidate, references):
    assert paraphrased_positive(qa("Tell me.", candidate, references), random.Random(0)) is None


def test_a_day_and_month_is_rewritten_with_the_year_that_follows_it():
    right = paraphrased_positive(qa("When?", "He landed on July 20, 1969, at night.", ["July 20"]), random.Random(0))
    assert right["meta"]["replaced"] == "July 20, 1969"
    assert right["candidate"] in ("He landed on 20 July 1969, at night.", "He landed on 1969-07-20, at night.")


def test_acronym_expansions_are_written_as_the_reference_writes_them():
    record = qa("Which alliance?", "NATO.", ["North Atlantic Treaty Organization", "NATO"])
    assert paraphrased_positive(record, random.Random(0))["candidate"] == "North Atlantic Treaty Organization."


# ---- augmenting a record list ----------------------------------------------------------------------------------


def _records() -> list[dict]:
    rows = [copy.deepcopy(r) for r in POOL_RECORDS]
    rows += [
        qa("Which city is the capital of France?", "The capital of France is Paris.", ["Paris"], "f"),
        qa("Which city is the capital of France?", "Lyon", ["Paris"], "g", label=0),
        qa("What is 2+2?", "4", ["4"], "m", category="open_math"),
        qa("When was it signed?", "On 4 July 1776.", ["4 July 1776"], "d"),
    ]
    return rows


def test_augment_adds_both_kinds_keeps_the_records_and_is_deterministic():
    records = _records()
    before = copy.deepcopy(records)
    out = augment_open_qa(records, 1.0, seed=1)
    assert records == before  # nothing changed
    assert out[: len(records)] == records and all(a is b for a, b in zip(out, records))
    added = out[len(records) :]
    kinds = collections.Counter(r["meta"]["augment"] for r in added)
    assert kinds["wrong_entity"] >= 10 and sum(v for k, v in kinds.items() if k.startswith("paraphrase:")) >= 4
    assert {r["meta"]["augmented_from"] for r in added} <= {r["id"] for r in records if is_eligible(r)}
    assert all(r["category"] == "open_qa" for r in added)
    assert len({r["id"] for r in out}) == len(out)
    assert out == augment_open_qa(records, 1.0, seed=1)
    assert augment_open_qa(records, 0.5, seed=1) != augment_open_qa(records, 0.5, seed=2)
    assert augment_open_qa(records, 0.0, seed=1) == records


def test_augment_draws_the_share_of_eligible_rows():
    records = _records()
    eligible = sum(map(is_eligible, records))
    added = augment_open_qa(records, 0.5, seed=4)[len(records) :]
    sources = collections.Counter(r["meta"]["augment"] == "wrong_entity" for r in added)
    assert sources[True] <= round(0.5 * eligible) and sources[False] <= round(0.5 * eligible)
    assert sources[True] >= 1


def test_augment_refuses_a_bad_share():
    for share in (-0.1, 1.5):
        with pytest.raises(ValueError, match="share"):
            augment_open_qa(_records(), share, seed=0)


def test_wrong_entity_mean_score():
    rows = [{"meta": {"augment": "wrong_entity"}}, {"meta": {}}, {"meta": {"augment": "wrong_entity"}}, {}]
    assert wrong_entity_mean_score(rows, [0.9, 0.1, 0.5, 1.0]) == pytest.approx(0.7)
    assert wrong_entity_mean_score(rows[1:2], [0.3]) is None
    with pytest.raises(ValueError):
        wrong_entity_mean_score(rows, [0.5])


# ---- the source option -------------------------------------------------------------------------------------------


def test_sources_take_qa_augment(tmp_path):
    path = write_records(tmp_path / "qa.jsonl", _records())
    plain = load_source(str(path))
    augmented = load_source(f"{path}?qa_augment=1&seed=3")
    assert augmented[: len(plain)] == plain and len(augmented) > len(plain)
    assert augmented == augment_open_qa(plain, 1.0, 3) == load_source(f"{path}?seed=3&qa_augment=1.0")
    assert load_source(f"{path}?qa_augment=0") == plain
    half = load_source(f"{path}?qa_augment=.5&seed=1")
    assert half != load_source(f"{path}?qa_augment=.5&seed=2")
    sampled = load_source(f"{path}?n=10&seed=2&qa_augment=1")
    assert sampled[:10] == load_source(f"{path}?n=10&seed=2")
    assert {r["meta"]["augmented_from"] for r in sampled[10:]} <= {r["id"] for r in sampled[:10]}
    embedded = load_source("embedded:val?n=60&seed=1&qa_augment=1")
    assert embedded[:60] == load_source("embedded:val?n=60&seed=1")


@pytest.mark.parametrize("value", ["2", "-0.1", "x", "", "nan", "0.5.1"])
def test_sources_refuse_a_bad_qa_augment_share(tmp_path, value):
    path = write_records(tmp_path / "qa.jsonl", _records())
    spec = f"{path}?qa_augment={value}"
    with pytest.raises(RecordError, match="qa_augment") as info:
        load_source(spec)
    assert str(info.value).startswith(f"{spec}:") and "\n" not in str(info.value)


def test_errors_of_the_rest_of_the_spec_name_the_whole_spec(tmp_path):
    path = write_records(tmp_path / "qa.jsonl", _records())
    spec = f"{path}?n=999&qa_augment=0.5"
    with pytest.raises(RecordError) as info:
        load_source(spec)
    assert str(info.value).startswith(f"{spec}:") and "n=999" in str(info.value)


# ---- the real EVOUNA training split ------------------------------------------------------------------------------


def test_evouna_train_gives_many_rows_of_both_kinds():
    records = load_source(EVOUNA_TRAIN)
    eligible = sum(map(is_eligible, records))
    augmented = load_source(f"{EVOUNA_TRAIN}&qa_augment=0.5")
    added = augmented[len(records) :]
    kinds = collections.Counter(r["meta"]["augment"] for r in added)
    types = collections.Counter(r["meta"]["entity_type"] for r in added if r["label"] == 0)
    print(f"EVOUNA train: {len(records)} rows, {eligible} eligible; added at share 0.5: {dict(kinds)}; {dict(types)}")
    assert augmented[: len(records)] == records
    assert eligible >= 4000
    assert kinds["wrong_entity"] >= 1500
    paraphrases = {k: v for k, v in kinds.items() if k.startswith("paraphrase:")}
    assert sum(paraphrases.values()) >= 500 and len(paraphrases) >= 5
    assert set(types) <= set(ENTITY_TYPES) and len(types) >= 6
    assert all(r["label"] == 0 for r in added if r["meta"]["augment"] == "wrong_entity")
    assert all(r["label"] == 1 for r in added if r["meta"]["augment"] != "wrong_entity")
