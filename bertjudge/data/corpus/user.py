"""Items from user rows (``bertjudge.data.synth``): ``item_from_reference`` builds an :class:`Item` from a
question and its references with what can be read off them (options, a value and unit, other spans
of the passage, aliases and wrong entities of the answer's type), and ``infer_category`` guesses the
category of a row that does not name one."""

from __future__ import annotations

import datetime
import random
import re
from typing import NamedTuple

from bertjudge.core.extract import fmt, parse_options
from bertjudge.data.corpus.base import Item, cap_first, names_any, parse_number, with_article
from bertjudge.data.corpus.lexicon import CAPITALS, CITIES, ELEMENTS, FIRST_NAMES, JOBS, MONTHS, SURNAMES, WEEKDAYS
from bertjudge.data.corpus.open_math import number_forms
from bertjudge.data.corpus.open_qa import (
    BIG_CITIES,
    CITY_ALIASES,
    CITY_COUNTRY,
    NEAR_MISSES,
    RIVERS,
    country_forms,
    date_text,
    qa_wrongs,
    river_forms,
)


class Entity(NamedTuple):
    """An entity the corpus knows, by any of its names: its group ('city', 'river' ...) and canonical name."""

    group: str
    canonical: str


# ----------------------------------------------------------------------------- categories
_LABEL = re.compile(r"^\s*(?:option\s+|choice\s+)?\(?([A-J]|\d{1,2})\)?(?:[.):]|\s|$)", re.IGNORECASE)
_UNANSWERABLE = re.compile(
    r"^\s*(unanswerable|no answer|not answerable|cannot be (answered|determined)|n/?a|none)\W*$", re.I
)
UNIT_ALTERNATIVES = {
    "cm": ["m", "mm"],
    "m": ["cm", "km"],
    "km": ["m", "miles"],
    "mm": ["cm"],
    "kg": ["g", "pounds"],
    "g": ["kg", "mg"],
    "meters": ["centimeters", "kilometers"],
    "kilometers": ["meters", "miles"],
    "miles": ["kilometers"],
    "hours": ["minutes", "days"],
    "minutes": ["hours", "seconds"],
    "seconds": ["minutes"],
    "days": ["weeks", "hours"],
    "weeks": ["days", "months"],
    "years": ["months"],
    "liters": ["milliliters"],
    "dollars": ["cents"],
    "cents": ["dollars"],
    "percent": ["points"],
}


_PASSAGE_MARK = re.compile(
    r"^\s*(?:passage|context|text|article|document|paragraph|background|story|excerpt)\s*:"
    r"|\bread the (?:following|text|passage|article)\b|\baccording to the (?:passage|text|article|context|document)\b",
    re.IGNORECASE | re.MULTILINE,
)
PASSAGE_CHARS = 400  # a question longer than this holds a passage
SHORT_REFERENCE_WORDS = 8  # an open-QA reference is a name, date or number of at most this many words


def has_passage(question: str | None) -> bool:
    """Whether the question holds a passage: a 'Passage:', 'Context:', 'Text:' ... line, 'read the
    text' or 'according to the passage', or more than PASSAGE_CHARS characters."""
    return bool(question) and (len(question) > PASSAGE_CHARS or bool(_PASSAGE_MARK.search(question)))


def infer_category(question: str | None, reference: str) -> str:
    """open_math for a numeric reference; multiple_choice for an option label with options in the
    question; context_extraction for a question with a passage (``has_passage``), an 'unanswerable'
    reference, a long one (over SHORT_REFERENCE_WORDS words) or no question; else open_qa (a factual
    question without a passage and a short answer, as in TriviaQA)."""
    if parse_number(reference) is not None and re.fullmatch(r"[\s$€£\d.,/%+\-−]*[A-Za-z ]{0,12}", reference):
        return "open_math"
    labels, _ = parse_options(question or "")
    m = _LABEL.match(reference)
    if labels and m and re.fullmatch(r"\W*\w\W*", reference.split()[0]) and m[1].upper() in labels:
        return "multiple_choice"
    unanswerable = _UNANSWERABLE.match(reference) and reference.strip() != "Na"  # 'n/a' or 'NA', not sodium
    if not question or has_passage(question) or unanswerable or len(reference.split()) > SHORT_REFERENCE_WORDS:
        return "context_extraction"
    return "open_qa"


# ----------------------------------------------------------------------------- spans and entities
_STOPWORDS = set(
    (
        "the a an in on at of and or but to for with by from as she he it they we i you this that these those there her his "
        "their its our my your what which who whom whose when where why how is was were are be been has have had do does did "
        "not no yes question passage context answer text article according based read following after before during then also "
        "than so if into about over under one two"
    ).split()
)


def _question_spans(question: str, references: list[str]) -> list[str]:
    """Spans of the question's passage of the reference's kind (numbers, names, words) that are
    none of the references; the best a generator without domain knowledge can offer as wrong answers."""
    body = question.strip().rsplit("\n", 1)[0] if "\n" in question.strip() else question
    ref = references[0]
    value = parse_number(ref)
    if value is not None:
        found = [n for n in re.findall(r"\b\d[\d,]*(?:\.\d+)?\b", body) if parse_number(n) != value]
    elif ref[:1].isupper() or _UNANSWERABLE.match(ref):
        found = re.findall(r"\b[A-Z][\w'-]*(?:\s+(?:of\s+|de\s+)?[A-Z][\w'-]*)*", body)
        found = [" ".join(w for i, w in enumerate(f.split()) if i or w.lower() not in _STOPWORDS) for f in found]
        found += re.findall(r"\b\d[\d,]*(?:\.\d+)?\b", body) if _UNANSWERABLE.match(ref) else []
    else:
        tokens, n = re.findall(r"[\w'-]+", body), len(ref.split())
        found = [
            " ".join(tokens[i : i + n])
            for i in range(len(tokens) - n + 1)
            if tokens[i].lower() not in _STOPWORDS and tokens[i + n - 1].lower() not in _STOPWORDS
        ]
        found += [t for t in tokens if len(t) > 3 and t.lower() not in _STOPWORDS]
    lowered = [r.lower() for r in references]
    ref_words = {w for r in lowered for w in re.findall(r"[\w'-]+", r) if w not in _STOPWORDS}
    keep = []
    for span in dict.fromkeys(f.strip() for f in found):
        low = span.lower()
        if (
            len(low) < 2
            or low in _STOPWORDS
            or ref_words & set(re.findall(r"[\w'-]+", low))
            or any(re.search(rf"\b{re.escape(r)}\b", low) or re.search(rf"\b{re.escape(low)}\b", r) for r in lowered)
        ):
            continue
        keep.append(span)
    return keep[:12]


def _known_entities() -> dict[str, Entity]:
    """lowercase name -> (group, canonical name) of the entities the corpus knows, with their aliases."""
    table = {}

    def add(group, canonical, names=()):
        for name in (canonical, *names):
            table.setdefault(name.lower(), Entity(group, canonical))

    for city in list(dict.fromkeys([c for _, c in CAPITALS] + CITIES + [b.name for b in BIG_CITIES])):
        add("city", city, CITY_ALIASES.get(city, ()))
    for country in dict.fromkeys(
        [k for k, _ in CAPITALS] + list(CITY_COUNTRY.values()) + [b.country for b in BIG_CITIES]
    ):
        add("country", country, [t for _, t in country_forms(country)])
    for river in dict.fromkeys(r for _, _, r in RIVERS):
        add("river", river, [t for _, t in river_forms(river)])
    for element, _ in ELEMENTS:
        add("element", element, {"aluminium": ["aluminum"], "sulfur": ["sulphur"]}.get(element, ()))
    for job, synonym in JOBS:
        add("job", job, [synonym, with_article(job), with_article(synonym)])
    for group, names in (
        ("planet", "Mercury Venus Earth Mars Jupiter Saturn Uranus Neptune".split()),
        ("month", MONTHS),
        ("weekday", WEEKDAYS),
    ):
        for name in names:
            add(group, name)
    return table


KNOWN_ENTITIES = _known_entities()
_DATE_RE = [
    (re.compile(rf"({'|'.join(MONTHS)}) (\d{{1,2}})(?:st|nd|rd|th)?, (\d{{4}})"), (3, 1, 2)),
    (re.compile(rf"(\d{{1,2}}) ({'|'.join(MONTHS)}) (\d{{4}})"), (3, 2, 1)),
    (re.compile(r"(\d{4})-(\d{2})-(\d{2})"), (1, 2, 3)),
]
_PERSON = re.compile(r"[A-Z][\w'’-]+(?: [A-Z]\.)?(?: [A-Z][\w'’-]+){1,2}")
_RESTATE = [  # (question pattern, claim template with {t})
    (re.compile(r"(?:what|which|who)\s+(is|was|are|were)\s+(the\s.+?)\s*\?", re.I), "{2} {1} {{t}}."),
    (
        re.compile(
            r"who\s+((?:\w+ed|wrote|won|built|sang|made|led|ran|drew|took|gave|became|held|sold|bought|began|"
            r"beat|wrote|composed|founded|played)\s.+?)\s*\?",
            re.I,
        ),
        "{{t}} {1}.",
    ),
]
_DANGLING = {
    "of",
    "in",
    "on",
    "at",
    "for",
    "from",
    "to",
    "by",
    "with",
    "about",
    "called",
    "named",
    "known",
    "made",
    "used",
    "located",
    "born",
    "founded",
    "like",
}


def _date_of(text: str) -> tuple[int, int, int] | None:
    for pattern, (yi, mi, di) in _DATE_RE:
        m = pattern.fullmatch(text.strip())
        if m:
            y, mo, d = int(m[yi]), m[mi], int(m[di])
            mo = MONTHS.index(mo) + 1 if mo in MONTHS else int(mo)
            try:
                datetime.date(y, mo, d)
            except ValueError:
                return None
            return y, mo, d
    return None


def _bump(text: str, delta: int) -> str | None:
    """The text with its last number moved by delta ('Apollo 11' -> 'Apollo 12'); None if it holds none."""
    found = list(re.finditer(r"\d+(?![\d.,]*\d)(?!st|nd|rd|th)", text))
    if not found:
        return None
    m = found[-1]
    value = int(m[0]) + delta
    return None if value < 0 else f"{text[: m.start()]}{value}{text[m.end() :]}"


def _restate(question: str) -> list[str]:
    """Claim templates that restate a plain question with the answer ('What is the capital of France?'
    -> 'The capital of France is {t}.'); empty when the question has no shape it knows."""
    lines = [x.strip() for x in question.strip().splitlines() if x.strip().endswith("?")]
    line = re.sub(r"^(?:question|q|trivia(?: question)?)\s*:\s*", "", lines[-1] if lines else "", flags=re.I)
    for pattern, template in _RESTATE:
        m = pattern.fullmatch(line)
        if m and m.groups()[-1].split()[-1].lower() not in _DANGLING:
            return [cap_first(template.format(None, *m.groups()))]
    return []


def _question_entities(question: str, references: list[str]) -> list[str]:
    """Capitalized names in the question that are none of the references: answers to another question."""
    found = re.findall(r"\b[A-Z][\w'-]*(?:\s+(?:of\s+|de\s+|the\s+)?[A-Z][\w'-]*)*", question)
    found = [" ".join(w for i, w in enumerate(f.split()) if i or w.lower() not in _STOPWORDS) for f in found]
    right = {r.lower() for r in references}
    return [
        f
        for f in dict.fromkeys(x.strip() for x in found)
        if len(f) > 1
        and f.lower() not in _STOPWORDS | {"trivia", "q"}
        and not names_any(f, right)
        and not any(f.lower() in r for r in right)
    ][:6]


def _user_qa(item: Item) -> Item:
    """Fill an open-QA item from its question and references alone: its aliases are the references
    (and the derivable forms of a date, a river, a person's initials); wrong entities come from the
    corpus's own lists when a reference is an entity it knows (a city, country, river, element, job,
    planet, month), from made-up names when the question asks 'who' of a person, from moved numbers
    and dates; the question's own names are answers to another question."""
    question, refs = item.question, item.references
    rng = random.Random(f"{question}\x00{refs}")
    right = {r.lower() for r in refs}
    forms = [("reference", refs[0])] + [("alias", r) for r in refs[1:]]
    spans, wrong = [], {"near_miss": [], "off_by_one": [], "other_question": _question_entities(question, refs)}
    known = [KNOWN_ENTITIES[r.strip().lower()] for r in refs if r.strip().lower() in KNOWN_ENTITIES]
    if known:
        group = known[0].group
        mine = {name for name, (g, canonical) in KNOWN_ENTITIES.items() if (g, canonical) in known}
        right |= mine
        others = sorted(
            {canonical for g, canonical in KNOWN_ENTITIES.values() if g == group and (g, canonical) not in known}
        )
        spans += rng.sample(others, min(6, len(others)))
        if group == "river":
            forms += [(name, text) for name, text in river_forms(known[0].canonical) if name in ("article", "river")]
        wrong["near_miss"] += [n for _, canonical in known for n in NEAR_MISSES.get(canonical, [])]
    date = next((d for d in map(_date_of, refs) if d), None)
    if date:
        y, m, d = date
        forms += [
            (s, date_text(y, m, d, s))
            for s in ("reference", "day_month", "iso", "ordinal", "abbrev", "paraphrase", "weekday")
        ]
        shifted = [
            (y, m, d + 1) if d < 28 else (y, m, d - 2),
            (y, m, d - 1) if d > 1 else (y, m, d + 2),
            (y - 1, m, d),
            (y + 1, m, d),
        ]
        wrong["off_by_one"] += [date_text(*v, rng.choice(["reference", "day_month", "iso"])) for v in shifted]
        spans += [
            date_text(y + rng.randint(-30, 30), rng.randint(1, 12), rng.randint(1, 28), "reference") for _ in range(3)
        ]
    elif not known:
        wrong["off_by_one"] += [b for b in (_bump(refs[0], -1), _bump(refs[0], 1)) if b]
    asks_who = re.search(r"(?:^|\n|:\s*)who\b", question.strip(), re.I)
    if not known and not date and asks_who and _PERSON.fullmatch(refs[0].strip()):
        first, last = refs[0].split()[0], refs[0].split()[-1]
        people = [
            f"{a} {b}" for a, b in zip(rng.sample(FIRST_NAMES, 4), rng.sample(SURNAMES, 4)) if a != first and b != last
        ]
        spans += people
        wrong["near_miss"] += [f"{rng.choice([n for n in FIRST_NAMES if n != first])} {last}", f"{first} {last}son"]
        forms.append(("initials", f"{first[0]}. {last}"))
    if refs[0].lower().startswith("the ") and len(refs[0]) > 4:
        forms.append(("article", refs[0][4:]))
    seen, item.forms = set(), []
    for name, text in forms:
        if text.lower() not in seen:
            item.forms.append((name, text))
            seen.add(text.lower())
    item.claims = _restate(question)
    return qa_wrongs(item, right | {t.lower() for _, t in item.forms}, spans or wrong["other_question"], wrong)


# ----------------------------------------------------------------------------- items
def item_from_reference(
    question: str | None, references: list[str], category: str | None = None, task: str = "user"
) -> Item:
    """An :class:`Item` from a user's question and references, with what can be read off them: options
    (multiple choice), the value and unit (math), other spans of the passage (extraction), aliases and
    wrong entities of the answer's type (open QA, see ``_user_qa``)."""
    question = question or ""
    ref = references[0]
    category = category or infer_category(question, ref)
    item = Item(category, question, list(references), task=task, asked="the answer")
    if category == "multiple_choice":
        labels, options = parse_options(question)
        m = _LABEL.match(ref)
        key = m[1].upper() if m and re.fullmatch(r"\W*\w\W*", ref.split()[0]) else None
        if options and key not in labels and ref.strip() in options:
            key = labels[options.index(ref.strip())]
        if key is None:
            raise ValueError(f"multiple-choice reference {ref!r} is not an option label")
        if key not in labels:  # options not found in the question: letters only
            labels = (
                [chr(ord("A") + i) for i in range(max(4, ord(key) - ord("A") + 1))]
                if key.isalpha()
                else [str(i + 1) for i in range(max(4, int(key)))]
            )
            options = []
        item.labels, item.options, item.correct = labels, options, labels.index(key)
        return item
    if category == "open_math":
        value = parse_number(ref)
        if value is not None:
            unit = re.sub(r"^[\s$€£\d.,/+\-−]*", "", ref).strip()
            item.is_money = "$" in ref or unit in ("dollars", "USD")
            item.unit = "percent" if unit == "%" else "" if item.is_money else unit
            item.alt_units = list(UNIT_ALTERNATIVES.get(item.unit, []))
            item.value = value
            numbers = [parse_number(n) for n in re.findall(r"\d[\d,]*(?:\.\d+)?", question)]
            item.intermediates = [n for n in dict.fromkeys(numbers) if n is not None and n != value]
            item.forms = [("reference", r) for r in references] + number_forms(item, value, correct=True)[1:]
            if item.unit == "percent":
                item.forms.append(("percent_sign", f"{fmt(value)}%"))
            return item
    if category == "open_qa":
        return _user_qa(item)
    if _UNANSWERABLE.match(ref):
        item.answerable = False
        item.forms = [("reference", r) for r in references] + [
            ("paraphrase", "The passage does not say."),
            ("paraphrase", "This cannot be determined from the text."),
        ]
    item.spans = _question_spans(question, references)
    return item
