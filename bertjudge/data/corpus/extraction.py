"""Context extraction (task ``embedded-extraction``): a passage about fictional people (births, moves,
companies, books, teams, farms, prizes) and a question whose answer is a span of it, or
``unanswerable`` when the passage does not say."""

from __future__ import annotations

from typing import NamedTuple

from bertjudge.data.corpus.base import Ctx, Item, ordinal, ordinal_words, with_article, words, year_words
from bertjudge.data.corpus.lexicon import (
    AWARDS,
    CITIES,
    FIRST_NAMES,
    JOBS,
    MONTHS,
    ORG_HEADS,
    ORG_TAILS,
    STAFF,
    SURNAMES,
    TITLE_ADJ,
    TITLE_NOUN,
)


class Org(NamedTuple):
    """A fictional company: 'Bluefield' 'Labs'; the head alone is its short alias."""

    head: str
    tail: str


class Stated(NamedTuple):
    """A fact the passage states: about whom, which fact, its slot values and the sentence."""

    person: str
    fact: str
    values: dict
    sentence: str


# ----------------------------------------------------------------------------- facts and phrasings
FACTS = {
    "born": {
        "say": [
            "{p} was born in {city} in {year}.",
            "{p} was born in {year} in the city of {city}.",
            "Born in {city} in {year}, {p} grew up near the river.",
        ],
        "ask": {
            "year": ["In what year was {p} born?", "When was {p} born?", "What is the birth year of {p}?"],
            "city": ["Where was {p} born?", "In which city was {p} born?", "What is {p}'s birthplace?"],
        },
    },
    "job": {
        "say": ["{p} works as {a_job}.", "By profession, {p} is {a_job}.", "{p} has worked as {a_job} for many years."],
        "ask": {"job": ["What is {p}'s profession?", "What does {p} do for a living?", "What job does {p} have?"]},
    },
    "founded": {
        "say": ["In {year}, {p} founded {org}.", "{p} started {org} in {year}.", "{org} was founded by {p} in {year}."],
        "ask": {
            "org": [
                "Which company did {p} found?",
                "What is the name of the company {p} started?",
                "What organization was founded by {p}?",
            ],
            "year": [
                "In what year did {p} found {org}?",
                "When was {org} founded?",
                "In which year was {org} established?",
            ],
            "person": ["Who founded {org}?", "Who started {org}?", "Which person established {org}?"],
        },
    },
    "moved": {
        "say": [
            "{p} moved to {city} in {year}.",
            "In {year}, {p} relocated to {city}.",
            "{p} settled in {city} in {year}.",
        ],
        "ask": {
            "city": [
                "Where did {p} move in {year}?",
                "To which city did {p} relocate?",
                "Which city did {p} settle in?",
            ],
            "year": [
                "When did {p} move to {city}?",
                "In what year did {p} relocate to {city}?",
                "What year did {p} settle in {city}?",
            ],
            "person": ["Who moved to {city} in {year}?", "Which person relocated to {city}?", "Who settled in {city}?"],
        },
    },
    "team": {
        "say": [
            "{p} leads a team of {count} {staff}.",
            "{p} supervises {count} {staff}.",
            "A group of {count} {staff} reports to {p}.",
        ],
        "ask": {
            "count": [
                "How many {staff} does {p} lead?",
                "How many {staff} report to {p}?",
                "What is the size of {p}'s team of {staff}?",
            ]
        },
    },
    "book": {
        "say": [
            'On {date}, {p} published the novel "{title}".',
            '{p}\'s novel "{title}" came out on {date}.',
            '{p} released "{title}", a novel, on {date}.',
        ],
        "ask": {
            "title": [
                "What novel did {p} publish?",
                "What is the title of {p}'s novel?",
                "Name the novel written by {p}.",
            ],
            "date": [
                'When was "{title}" published?',
                'On what date did {p} publish "{title}"?',
                'What is the publication date of "{title}"?',
            ],
        },
    },
    "farm": {
        "say": ["{p} owns a farm of {area}.", "{p}'s farm covers {area}.", "The farm that {p} runs spans {area}."],
        "ask": {
            "area": [
                "How large is {p}'s farm?",
                "How many hectares does {p}'s farm cover?",
                "What is the area of {p}'s farm?",
            ]
        },
    },
    "prize": {
        "say": [
            "{p} won the {award} in {year}.",
            "In {year}, {p} received the {award}.",
            "{p} was awarded the {award} in {year}.",
        ],
        "ask": {
            "award": ["Which award did {p} win?", "What prize did {p} receive?", "Name the award given to {p}."],
            "year": [
                "When did {p} win the {award}?",
                "In what year did {p} receive the {award}?",
                "What year was {p} awarded the {award}?",
            ],
            "person": ["Who won the {award}?", "Who received the {award}?", "Which person was awarded the {award}?"],
        },
    },
}
ASKED = {
    "year": "the year",
    "city": "the city",
    "job": "the profession",
    "org": "the company",
    "person": "who it was",
    "count": "the number",
    "title": "the title",
    "date": "the date",
    "area": "the size of the farm",
    "award": "the award",
}
FILLERS = [
    "The weather that year was unusually mild.",
    "Local newspapers covered the story at length.",
    "Few people expected this at the time.",
    "The region is known for its long winters.",
    "Many of these details come from a 2019 interview.",
]
PASSAGE_INTROS = ["Passage: ", "Context: ", "Read the text below.\n\n", "Text:\n", "", "Article: "]
QUESTION_INTROS = ["Question: ", "Q: ", "", "Answer the question: "]
EXTRACTION_INSTRUCTIONS = [
    "",
    "",
    "Answer with a short span from the passage.",
    "If the passage does not contain the answer, reply 'unanswerable'.",
    "Answer using only the passage; say 'unanswerable' if it is not there.",
]
UNANSWERABLE = "unanswerable"
HELDOUT_FACTS = ("prize",)  # facts never stated in a train passage

SLOT_KINDS = ("year", "city", "job", "org", "count", "title", "date", "area", "award")


# ----------------------------------------------------------------------------- passages and questions
def _value(c, kind, used):
    """A fresh value of a slot kind, not yet used in the passage."""
    while True:
        if kind == "year":
            v = c.rng.randint(1950, 2022)
        elif kind == "city":
            v = c.pick(CITIES)
        elif kind == "job":
            v = c.pick(JOBS)
        elif kind == "org":
            v = Org(c.pick(ORG_HEADS), c.pick(ORG_TAILS))
        elif kind == "count":
            v = c.rng.randint(3, 60)
        elif kind == "title":
            v = f"The {c.pick(TITLE_ADJ)} {c.pick(TITLE_NOUN)}"
        elif kind == "date":
            v = (c.rng.randint(1950, 2022), c.rng.randint(1, 12), c.rng.randint(1, 28))
        elif kind == "area":
            v = c.rng.randint(5, 900)
        else:  # award
            v = c.pick(AWARDS)
        key = v.head if kind == "org" else v  # orgs differ in their first word (the short alias)
        if key not in used[kind]:
            used[kind].append(key)
            return v


def _text(kind, v):
    if kind == "job":
        return v.title
    if kind == "org":
        return f"{v.head} {v.tail}"
    if kind == "date":
        y, m, d = v
        return f"{MONTHS[m - 1]} {d}, {y}"
    if kind == "area":
        return f"{v} hectares"
    return str(v)


def _span_forms(kind, v, person):
    """(form name, equivalent text) of a slot value; the first is the canonical span."""
    forms = [("span", _text(kind, v))]
    if kind == "year":
        forms += [("in_year", f"in {v}"), ("paraphrase", f"the year {year_words(v)}"), ("words", year_words(v))]
    elif kind == "city":
        forms += [("paraphrase", f"the city of {v}"), ("in_place", f"in {v}")]
    elif kind == "job":
        forms += [
            ("article", with_article(v.title)),
            ("paraphrase", v.synonym),
            ("paraphrase_sentence", f"{person} is {with_article(v.synonym)}"),
        ]
    elif kind == "org":
        forms += [("alias", v.head), ("paraphrase", f"the company called {v.head} {v.tail}")]
    elif kind == "count":
        forms += [("words", words(v))]
    elif kind == "title":
        forms += [("quoted", f'"{v}"'), ("paraphrase", f"the novel titled {v}")]
    elif kind == "date":
        y, m, d = v
        forms += [
            ("day_month", f"{d} {MONTHS[m - 1]} {y}"),
            ("ordinal", f"{MONTHS[m - 1]} {ordinal(d)}, {y}"),
            ("iso", f"{y}-{m:02d}-{d:02d}"),
            ("paraphrase", f"the {ordinal_words(d)} of {MONTHS[m - 1]}, {y}"),
        ]
    elif kind == "area":
        forms += [("abbrev", f"{v} ha"), ("words", f"{words(v)} hectares"), ("number", str(v))]
    elif kind == "award":
        forms += [("article", f"the {v}")]
    return forms


def _fact_values(c, fact, person, used):
    vals = {"p": person, "staff": c.pick(STAFF)}
    for slot in FACTS[fact]["ask"]:
        if slot != "person":
            vals[slot] = _value(c, slot, used)
    return vals


def _fill(vals):
    out = {k: _text(k, v) if k in SLOT_KINDS else v for k, v in vals.items()}
    if "job" in vals:
        out["a_job"] = with_article(vals["job"].title)
    return out


def extraction_item(c: Ctx, fact: str, slot: str, idx: int, answerable: bool) -> Item:
    """A passage of 2-3 people's facts (the asked fact also about others, as distractors) and a question
    about the first person's ``slot`` of ``fact`` in phrasing ``idx``; unanswerable ones ask about a
    fact the passage does not state."""
    used = {k: [] for k in SLOT_KINDS}
    facts = [f for f in FACTS if not (c.train and f in HELDOUT_FACTS)]
    n_people = c.rng.randint(2, 3)
    people = [f"{a} {b}" for a, b in zip(c.sample(FIRST_NAMES, n_people), c.sample(SURNAMES, n_people))]
    target = people[0]
    stated: list[Stated] = []
    for person in people:
        mine = c.rng.sample([f for f in facts if f != fact], c.rng.randint(1, 2))
        if (person == target and answerable) or (person != target and c.rng.random() < 0.7):
            mine.append(fact)  # the same fact about other people gives natural distractors
        for f in mine:
            vals = _fact_values(c, f, person, used)
            stated.append(Stated(person, f, vals, c.rng.choice(FACTS[f]["say"]).format(**_fill(vals))))
    sentences = [s.sentence for s in stated]
    c.rng.shuffle(sentences)
    for _ in range(c.rng.randint(0, 2)):
        sentences.insert(c.rng.randrange(len(sentences) + 1), c.rng.choice(FILLERS))

    if answerable:
        asked = next(s for s in stated if s.person == target and s.fact == fact)
        vals, sentence = asked.values, asked.sentence
    else:  # ask about a fact the passage does not state, with fresh values in the question
        vals, sentence = _fact_values(c, fact, target, used), ""
    question_text = FACTS[fact]["ask"][slot][idx].format(**_fill(vals))
    if slot == "person":
        spans = [
            (p, next((s.sentence for s in stated if s.person == p and s.fact == fact), ""))
            for p in people
            if p != target
        ]
        forms = [("span", target), ("alias", target.split()[1]), ("paraphrase", f"it was {target}")]
    else:
        spans = [
            (_text(slot, s.values[slot]), s.sentence)
            for s in stated
            if slot in s.values and (s.person, s.fact) != (target, fact)
        ]
        forms = _span_forms(slot, vals[slot], target)
        if not spans:  # a plausible value the passage never states
            spans = [(_text(slot, _value(c, slot, used)), "")]

    intro, qintro = c.rng.choice(PASSAGE_INTROS), c.rng.choice(QUESTION_INTROS)
    instr = c.rng.choice(EXTRACTION_INSTRUCTIONS)
    question = f"{intro}{' '.join(sentences)}\n\n{qintro}{question_text}" + (f"\n{instr}" if instr else "")
    if answerable:
        (_, canonical), (second_form, second) = forms[:2]
        refs = [canonical]
        if second_form in ("alias", "day_month", "abbrev") and c.rng.random() < 0.3:
            refs.append(second)
        forms = [("long_span", sentence)] + forms
        evidence = {refs[0]: sentence}
    else:
        refs = [UNANSWERABLE] + (["The passage does not say."] if c.rng.random() < 0.2 else [])
        forms = [
            ("span", UNANSWERABLE),
            ("paraphrase", f"The passage does not mention {ASKED[slot]}."),
            ("paraphrase", "This cannot be determined from the text."),
            ("paraphrase", "There is not enough information in the passage to answer."),
        ]
        evidence = {}
    evidence.update({t: s for t, s in spans if s})
    return Item(
        "context_extraction",
        question,
        refs,
        forms=forms,
        spans=[t for t, _ in spans],
        evidence=evidence,
        answerable=answerable,
        asked=ASKED[slot],
        alt_units=["acres", "square meters"] if slot == "area" and answerable else [],
    )
