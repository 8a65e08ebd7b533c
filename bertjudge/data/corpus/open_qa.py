"""Open QA (task ``embedded-openqa``): factual questions without a passage, as in TriviaQA or NQ-open.

Real facts (capitals, chemical symbols, rivers, a city's country) and fictional ones (founders, authors,
prize winners, years, dates, professions, birthplaces, heights, lengths, populations), whose references
are one to six aliases ("New York City" / "NYC", "July 4, 1976" / "1976-07-04", "the Seine" /
"Seine River"). Each item also carries what the candidate writers need: claims restating the answer,
side facts for paragraphs, wrong entities of the answer's type and wrong forms (near misses,
off-by-one, wrong units, the answer to a neighbouring question).
"""

from __future__ import annotations

import datetime
import re
from fractions import Fraction
from typing import NamedTuple

from bertjudge.core.extract import fmt
from bertjudge.data.corpus.base import (
    Ctx,
    Family,
    Item,
    cap_first,
    has_word,
    names_any,
    ordinal,
    ordinal_words,
    with_article,
    words,
    year_words,
)
from bertjudge.data.corpus.lexicon import (
    AWARDS,
    CAPITALS,
    CITIES,
    ELEMENTS,
    FIRST_NAMES,
    JOBS,
    MONTHS,
    ORG_HEADS,
    ORG_TAILS,
    SURNAMES,
    TITLE_ADJ,
    TITLE_NOUN,
    WEEKDAYS,
)


class BigCity(NamedTuple):
    name: str
    country: str
    aliases: list[str]


# ----------------------------------------------------------------------------- real facts
CITY_COUNTRY = {  # the cities of CITIES whose name is not also a well-known city elsewhere
    "Lyon": "France",
    "Porto": "Portugal",
    "Krakow": "Poland",
    "Osaka": "Japan",
    "Leeds": "United Kingdom",
    "Gdansk": "Poland",
    "Quito": "Ecuador",
    "Tampere": "Finland",
    "Brisbane": "Australia",
    "Bergen": "Norway",
    "Malmo": "Sweden",
    "Bologna": "Italy",
    "Cusco": "Peru",
    "Dresden": "Germany",
    "Accra": "Ghana",
    "Nagoya": "Japan",
    "Ghent": "Belgium",
    "Aarhus": "Denmark",
    "Seville": "Spain",
    "Cork": "Ireland",
    "Tartu": "Estonia",
    "Mombasa": "Kenya",
    "Salzburg": "Austria",
    "Austin": "United States",
    "Utrecht": "Netherlands",
    "Busan": "South Korea",
    "Lille": "France",
    "Graz": "Austria",
    "Turin": "Italy",
    "Basel": "Switzerland",
    "Riga": "Latvia",
    "Fresno": "United States",
}
BIG_CITIES = [
    BigCity(*row)
    for row in (
        ("New York City", "United States", ["NYC", "New York", "New York, NY"]),
        ("Los Angeles", "United States", ["LA", "L.A."]),
        ("Saint Petersburg", "Russia", ["St. Petersburg", "St Petersburg"]),
        ("Mexico City", "Mexico", ["Ciudad de México", "CDMX"]),
        ("Rio de Janeiro", "Brazil", ["Rio"]),
        ("Mumbai", "India", ["Bombay"]),
        ("Ho Chi Minh City", "Vietnam", ["Saigon", "HCMC"]),
        ("São Paulo", "Brazil", ["Sao Paulo"]),
        ("Munich", "Germany", ["München"]),
        ("Cologne", "Germany", ["Köln"]),
        ("Florence", "Italy", ["Firenze"]),
        ("Naples", "Italy", ["Napoli"]),
        ("Kolkata", "India", ["Calcutta"]),
        ("The Hague", "Netherlands", ["Den Haag"]),
        ("Washington, D.C.", "United States", ["Washington", "Washington DC", "DC"]),
    )
]
CITY_ALIASES = {
    "Krakow": ["Kraków", "Cracow"],
    "Gdansk": ["Gdańsk"],
    "Malmo": ["Malmö"],
    "Cusco": ["Cuzco"],
    "Turin": ["Torino"],
    "Seville": ["Sevilla"],
    "Lyon": ["Lyons"],
    "Porto": ["Oporto"],
    "Ghent": ["Gent"],
    "Basel": ["Basle"],
    "Aarhus": ["Århus"],
    "Busan": ["Pusan"],
    "Austin": ["Austin, Texas"],
    "Bogota": ["Bogotá"],
    "Reykjavik": ["Reykjavík"],
    "Santiago": ["Santiago de Chile"],
    "Rome": ["Roma"],
    "Lisbon": ["Lisboa"],
    "Prague": ["Praha"],
    "Warsaw": ["Warszawa"],
    "Vienna": ["Wien"],
    "Copenhagen": ["København"],
    "Brussels": ["Bruxelles"],
    "Moscow": ["Moskva"],
    "Beijing": ["Peking"],
    "Havana": ["La Habana"],
    **{city: aliases for city, _, aliases in BIG_CITIES},
}
COUNTRY_ALIASES = {
    "United States": ["USA", "US", "United States of America", "America", "the U.S."],
    "United Kingdom": ["UK", "Britain", "Great Britain", "the U.K."],
    "Netherlands": ["Holland"],
    "South Korea": ["Republic of Korea", "Korea"],
    "Czech Republic": ["Czechia"],
    "Ireland": ["Republic of Ireland", "Éire"],
    "Russia": ["Russian Federation"],
    "Germany": ["Deutschland"],
    "Spain": ["España"],
    "Italy": ["Italia"],
    "Brazil": ["Brasil"],
    "Mexico": ["México"],
}
THE_COUNTRIES = ("United States", "United Kingdom", "Netherlands", "Czech Republic")
CONTINENTS = {
    "France": "Europe",
    "Germany": "Europe",
    "Italy": "Europe",
    "Spain": "Europe",
    "Portugal": "Europe",
    "Japan": "Asia",
    "Canada": "North America",
    "Australia": "Oceania",
    "Egypt": "Africa",
    "Kenya": "Africa",
    "India": "Asia",
    "China": "Asia",
    "Russia": "Europe and Asia",
    "Argentina": "South America",
    "Peru": "South America",
    "Chile": "South America",
    "Norway": "Europe",
    "Sweden": "Europe",
    "Finland": "Europe",
    "Denmark": "Europe",
    "Poland": "Europe",
    "Greece": "Europe",
    "Turkey": "Europe and Asia",
    "Ireland": "Europe",
    "Austria": "Europe",
    "Hungary": "Europe",
    "Thailand": "Asia",
    "Vietnam": "Asia",
    "South Korea": "Asia",
    "Indonesia": "Asia",
    "Nigeria": "Africa",
    "Morocco": "Africa",
    "Colombia": "South America",
    "Cuba": "the Caribbean",
    "Iceland": "Europe",
    "Belgium": "Europe",
    "Czech Republic": "Europe",
    "New Zealand": "Oceania",
    "United Kingdom": "Europe",
    "Ecuador": "South America",
    "Ghana": "Africa",
    "Estonia": "Europe",
    "United States": "North America",
    "Netherlands": "Europe",
    "Switzerland": "Europe",
    "Latvia": "Europe",
    "Mexico": "North America",
    "Brazil": "South America",
    "Iraq": "Asia",
    "Ukraine": "Europe",
    "Slovakia": "Europe",
}
ATOMIC_NUMBERS = {
    "hydrogen": 1,
    "helium": 2,
    "carbon": 6,
    "nitrogen": 7,
    "oxygen": 8,
    "sodium": 11,
    "magnesium": 12,
    "aluminium": 13,
    "silicon": 14,
    "phosphorus": 15,
    "sulfur": 16,
    "chlorine": 17,
    "potassium": 19,
    "calcium": 20,
    "iron": 26,
    "copper": 29,
    "zinc": 30,
    "silver": 47,
    "tin": 50,
    "gold": 79,
    "mercury": 80,
    "lead": 82,
    "neon": 10,
    "argon": 18,
    "iodine": 53,
    "nickel": 28,
    "uranium": 92,
    "platinum": 78,
}
RIVERS = [  # (city, country, river); no city of the held-out fifth of CITIES
    ("Paris", "France", "Seine"),
    ("London", "United Kingdom", "Thames"),
    ("Cairo", "Egypt", "Nile"),
    ("Vienna", "Austria", "Danube"),
    ("Budapest", "Hungary", "Danube"),
    ("Rome", "Italy", "Tiber"),
    ("Dresden", "Germany", "Elbe"),
    ("Hamburg", "Germany", "Elbe"),
    ("Porto", "Portugal", "Douro"),
    ("Lisbon", "Portugal", "Tagus"),
    ("Warsaw", "Poland", "Vistula"),
    ("Krakow", "Poland", "Vistula"),
    ("Prague", "Czech Republic", "Vltava"),
    ("Cologne", "Germany", "Rhine"),
    ("Seville", "Spain", "Guadalquivir"),
    ("Florence", "Italy", "Arno"),
    ("Baghdad", "Iraq", "Tigris"),
    ("Kyiv", "Ukraine", "Dnieper"),
    ("Bordeaux", "France", "Garonne"),
    ("Bratislava", "Slovakia", "Danube"),
    ("Frankfurt", "Germany", "Main"),
    ("New Orleans", "United States", "Mississippi"),
    ("Bangkok", "Thailand", "Chao Phraya"),
    ("Pisa", "Italy", "Arno"),
    ("Dusseldorf", "Germany", "Rhine"),
]
RIVER_ALIASES = {
    "Vltava": ["Moldau"],
    "Tagus": ["Tejo", "Tajo"],
    "Dnieper": ["Dnipro"],
    "Vistula": ["Wisła"],
    "Danube": ["Donau"],
    "Rhine": ["Rhein"],
    "Tiber": ["Tevere"],
    "Elbe": ["Labe"],
}
NEAR_MISSES = {  # wrong answers that contain the right one (or one of its aliases)
    "Ireland": ["Northern Ireland"],
    "South Korea": ["North Korea"],
    "United States": ["United States Virgin Islands"],
    "Netherlands": ["Netherlands Antilles"],
    "Porto": ["Porto Alegre"],
    "Lille": ["Lillehammer"],
    "Bergen": ["Bergen op Zoom"],
    "Basel": ["Basel-Landschaft"],
    "Santiago": ["Santiago de Compostela"],
    "Nile": ["Blue Nile", "White Nile"],
    "Washington, D.C.": ["Washington State"],
    "New York City": ["New York State"],
    "Rio de Janeiro": ["Rio Grande"],
    "Saint Petersburg": ["St. Petersburg, Florida"],
    "Paris": ["Paris, Texas"],
    "Lima": ["Lima, Ohio"],
    "Vienna": ["Vienna, Virginia"],
    "Athens": ["Athens, Georgia"],
    "Moscow": ["Moscow, Idaho"],
    "Berlin": ["Berlin, New Hampshire"],
    "Dublin": ["Dublin, Ohio"],
    "Warsaw": ["Warsaw, Indiana"],
    "Cairo": ["Cairo, Illinois"],
    "Lisbon": ["Lisbon, Maine"],
    "Madrid": ["Madrid, Iowa"],
}


# ----------------------------------------------------------------------------- fictional events, phrasings
# fictional events: claims and questions with {slot} fields; "before"/"after": side facts for paragraphs
QA_EVENTS = {
    "founded": {
        "claims": [
            "{p} founded {org} in {year}.",
            "{org} was founded by {p} in {year}.",
            "In {year}, {p} started {org}.",
        ],
        "ask": {
            "p": [
                "Who founded {org}?",
                "Who was the founder of {org}?",
                "Which entrepreneur started the company {org}?",
            ],
            "year": [
                "In what year was {org} founded?",
                "When was {org} established?",
                "What year did {p} found {org}?",
            ],
        },
        "before": ["{org} began as a small workshop in {city}.", "Today {org} is headquartered in {city2}."],
        "after": [
            "By {year2}, the company employed about {count} people.",
            "{other} became its chief executive in {year2}.",
            "Before that, the founder had worked as {a_job}.",
        ],
        "other": {"p": ("year", "{org} was founded in {year}."), "year": ("p", "It was founded by {p}.")},
    },
    "wrote": {
        "claims": [
            '{p} wrote "{title}", which was first published in {year}.',
            '"{title}" is a novel by {p}, published in {year}.',
            'The novel "{title}" was written by {p} and came out in {year}.',
        ],
        "ask": {
            "p": [
                'Who wrote the novel "{title}"?',
                'Who is the author of "{title}"?',
                '"{title}" was written by which author?',
            ],
            "year": [
                'In what year was the novel "{title}" first published?',
                'When did "{title}" come out?',
                'What year was "{title}" by {p} published?',
            ],
        },
        "before": ['"{title}" is set in {city}.', "The novel follows three generations of a family of {jobs}."],
        "after": [
            "It was translated into {langs} languages.",
            "A film adaptation directed by {other} followed in {year2}.",
            "The book won the {award} in {year2}.",
        ],
        "other": {"p": ("year", '"{title}" was first published in {year}.'), "year": ("p", "It was written by {p}.")},
    },
    "won": {
        "claims": [
            "{p} won the {award} in {year}.",
            "The {award} for {year} went to {p}.",
            "In {year}, the {award} was awarded to {p}.",
        ],
        "ask": {
            "p": [
                "Who won the {award} in {year}?",
                "Who received the {award} in {year}?",
                "To whom was the {award} awarded in {year}?",
            ],
            "year": [
                "In what year did {p} win the {award}?",
                "When was {p} awarded the {award}?",
                "What year did {p} receive the {award}?",
            ],
        },
        "before": ["The {award} has been given every year since {year0}.", "That year's ceremony was held in {city}."],
        "after": [
            "{other} was the runner-up.",
            "The prize came with a medal and a cash award.",
            "It was the first major prize of that career.",
        ],
        "other": {
            "p": ("year", "The {award} has a long history; this one was awarded in {year}."),
            "year": ("p", "It went to {p}."),
        },
    },
    "published": {
        "claims": [
            '"{title}" by {p} was published on {date}.',
            '{p} published "{title}" on {date}.',
            'The novel "{title}" came out on {date}.',
        ],
        "ask": {
            "date": [
                'On what date was the novel "{title}" by {p} published?',
                'When exactly was {p}\'s novel "{title}" released?',
                'What is the publication date of "{title}"?',
            ]
        },
        "before": ['"{title}" is set in {city}.', "The novel follows three generations of a family of {jobs}."],
        "after": [
            "It was translated into {langs} languages.",
            "A film adaptation directed by {other} followed in {year2}.",
        ],
        "other": {"date": ("p", "It is a novel by {p}.")},
    },
    "born": {
        "claims": [
            "{p} was born on {date}.",
            "{p} was born in {city} on {date}.",
            "The date of birth of {p} is {date}.",
        ],
        "ask": {
            "date": [
                "When was {p}, the founder of {org}, born?",
                'What is the date of birth of {p}, the author of "{title}"?',
                "On what date was {p} born?",
            ]
        },
        "before": ["{p} grew up in {city2}.", "{p} is best known as the founder of {org}."],
        "after": ["{p} later studied in {city3}.", '{p} went on to publish the novel "{title}" in {year3}.'],
        "other": {"date": ("city", "{p} was born in {city}.")},
    },
}

QA_FAMILIES_OF_SLOT = {"who": "p", "year": "year", "date": "date"}
QA_INTROS = ["", "", "", "", "Question: ", "Q: ", "Trivia question: ", "Answer the following question. "]
QA_INSTRUCTIONS = [
    "",
    "",
    "",
    "",
    "Answer briefly.",
    "Give a short answer.",
    "Keep your answer short.",
    "Explain your answer.",
    "Answer in one sentence.",
]
# alias names that stay right when the references do not list them: a form anyone can derive
# from a listed one (a date's other spellings, a number's units, initials, articles), not an exonym
DERIVABLE = (
    "day_month",
    "iso",
    "ordinal",
    "abbrev",
    "spelling",
    "digits",
    "article",
    "river",
    "initials",
    "prep",
    "synonym",
)


# ----------------------------------------------------------------------------- items
def the_country(country: str) -> str:
    return f"the {country}" if country in THE_COUNTRIES else country


def _people(c, k: int) -> list[str]:
    """k fictional full names with distinct first names and surnames."""
    return [f"{a} {b}" for a, b in zip(c.sample(FIRST_NAMES, k), c.sample(SURNAMES, k))]


def _longer_surname(c, surname: str) -> str:
    """Another surname that contains this one ("Okafor" -> "Okaforson")."""
    return next(surname + s for s in c.rng.sample(["son", "sen", "er", "ley", "ton"], 5) if surname + s not in SURNAMES)


def _qa(
    c,
    question: str,
    aliases,
    equivalents=(),
    spans=(),
    wrong=None,
    claims=(),
    facts=(),
    after=(),
    mentions=(),
    alt_units=(),
    asked: str = "the answer",
    split_key: str = "",
) -> Item:
    """An open-QA item. ``aliases``: (name, text) forms that a reference list may hold, the canonical
    one first; the references are it and a random part of the others (1-6 in all). Correct forms are
    the listed ones, the unlisted derivable ones and ``equivalents`` (never listed). Wrong answers
    equal to a correct form are dropped; wrong entities and side facts that mention one are dropped
    too (a wrong entity holding a correct form is a near miss)."""
    canon = aliases[0]
    _, canon_text = canon
    rest = [(name, text) for name, text in dict.fromkeys(aliases[1:]) if text != canon_text]
    k = c.rng.randint(1, min(5, len(rest))) if rest and c.rng.random() < 0.6 else 0
    listed = [canon] + c.rng.sample(rest, k)
    forms, texts = [], set()
    derivable = [(name, text) for name, text in rest if (name, text) not in listed and name in DERIVABLE]
    for name, text in listed + derivable + list(equivalents):
        if text not in texts:
            forms.append((name, text))
            texts.add(text)
    item = Item(
        "open_qa",
        question,
        [t for _, t in listed],
        forms=forms,
        claims=list(claims),
        mentions=list(mentions),
        alt_units=list(alt_units),
        asked=asked,
        split_key=split_key,
    )
    return qa_wrongs(item, {t.lower() for _, t in list(aliases) + list(equivalents)}, spans, wrong, facts, after)


def qa_wrongs(item: Item, right: set[str], spans, wrong, facts=(), after=()) -> Item:
    """Set the item's wrong entities, wrong forms and side facts, given every right text (lowercase):
    none equal to a right text; entities, facts and wrong forms that mention one dropped (an entity
    doing so is a near miss; near misses and wrong units may)."""
    digits = {d for t in right if re.fullmatch(r"[\d,. ]+\D{0,12}", t) for d in [re.sub(r"\D", "", t)] if len(d) >= 3}
    wrong = {
        kind: [
            w
            for w in dict.fromkeys(texts)  # a near miss or a wrong unit holds the right text by design
            if w.lower() not in right and (kind in ("near_miss", "wrong_unit") or not names_any(w, right))
        ]
        for kind, texts in (wrong or {}).items()
    }
    near, clean = wrong.setdefault("near_miss", []), []
    for span in dict.fromkeys(spans):
        if span.lower() in right or any(has_word(r, span.lower()) for r in right):
            continue  # a correct form, or a part of one
        (near if names_any(span, right) else clean).append(span)

    def fine(fact):
        return not names_any(fact, right) and not any(d in re.sub(r"(?<=\d)[,.](?=\d)", "", fact) for d in digits)

    item.spans, item.wrong_forms = clean, {kind: texts for kind, texts in wrong.items() if texts}
    item.facts, item.after = [f for f in facts if fine(f)], [f for f in after if fine(f)]
    return item


def _qa_capital(c, fam, slot, phr):
    (country, city), *others = c.sample(CAPITALS, 7)
    same = [x for x in c.pool(CITIES) if CITY_COUNTRY.get(x) == country]
    the = the_country(country)
    return _qa(
        c,
        phr.format(x=the),
        [("reference", city)] + [("alias", a) for a in CITY_ALIASES.get(city, ())],
        [("with_country", f"{city}, {country}"), ("paraphrase", f"the city of {city}")],
        spans=same + [o.city for o in others],
        wrong={
            "near_miss": NEAR_MISSES.get(city, []),
            "other_question": [CONTINENTS[country], f"{cap_first(the)} is in {CONTINENTS[country]}."],
        },
        claims=[
            f"The capital of {the} is {{t}}.",
            f"{{t}} is the capital of {the}.",
            f"{cap_first(the)}'s capital city is {{t}}.",
        ],
        facts=[
            f"{cap_first(the)} is a country in {CONTINENTS[country]}.",
            f"{cap_first(the)} has a long and varied history.",
        ],
        after=[
            "The city is home to many museums, parks and government buildings.",
            "It is the seat of the national government.",
            "It is also an important centre of culture and trade.",
        ],
        asked=f"the capital of {the}",
        split_key=f"capital:{country}",
    )


def _qa_symbol(c, fam, slot, phr):
    element, sym = c.pick(ELEMENTS)
    others = [s for _, s in c.pool(ELEMENTS) if s != sym]
    return _qa(
        c,
        phr.format(x=element),
        [("reference", sym)],
        [("with_name", f"{sym} ({element})"), ("paraphrase", f"the symbol {sym}")],
        spans=c.rng.sample(others, 6),
        wrong={
            "near_miss": [s for s in others if s.startswith(sym)],  # C -> Ca, Cl, Cu
            "other_question": [
                str(ATOMIC_NUMBERS[element]),
                f"The atomic number of {element} is {ATOMIC_NUMBERS[element]}.",
            ],
        },
        claims=[
            f"The chemical symbol for {element} is {{t}}.",
            f"{cap_first(element)} is written {{t}} in the periodic table.",
            f"{{t}} is the symbol of {element}.",
        ],
        facts=[
            f"{cap_first(element)} has the atomic number {ATOMIC_NUMBERS[element]}.",
            "Every chemical element has a symbol of one or two letters.",
        ],
        after=["Chemists around the world use the same symbols.", "The periodic table lists 118 known elements."],
        asked=f"the chemical symbol for {element}",
        split_key=f"symbol:{element}",
    )


def river_forms(river: str) -> list[tuple[str, str]]:
    return (
        [("reference", river)]
        + [("alias", a) for a in RIVER_ALIASES.get(river, ())]
        + [
            ("article", f"the {river}"),
            ("river", f"{river} River"),
            ("river", f"River {river}"),
            ("river", f"the {river} River"),
        ]
    )


def _qa_river(c, fam, slot, phr):
    city, country, river = c.pick(RIVERS)
    others = list(dict.fromkeys(r for _, _, r in c.pool(RIVERS) if r != river))
    spans = [c.rng.choice([r, f"the {r}", f"{r} River"]) for r in c.rng.sample(others, min(6, len(others)))]
    return _qa(
        c,
        phr.format(x=city),
        river_forms(river),
        spans=spans,
        wrong={
            "near_miss": NEAR_MISSES.get(river, []),
            "other_question": [country, f"{city} is in {the_country(country)}."],
        },
        claims=[
            f"The river that flows through {city} is {{the_t}}.",
            f"{city} lies on {{the_t}}.",
            f"{{the_t}} flows through {city}.",
        ],
        facts=[f"{city} is a city in {the_country(country)}.", f"{city} has many bridges."],
        after=[
            "The river has long been important for trade and transport.",
            "Its banks are lined with parks and promenades.",
        ],
        asked=f"the river of {city}",
        split_key=f"river:{city}",
    )


def country_forms(country: str, city: str = "") -> list[tuple[str, str]]:
    forms = [("reference", country)] + [("alias", a) for a in COUNTRY_ALIASES.get(country, ())]
    forms += [("alias", "England")] if city == "Leeds" else []
    return forms + ([("article", f"the {country}")] if country in THE_COUNTRIES else [])


def _qa_country(c, fam, slot, phr):
    if c.rng.random() < 0.3:
        city, country, _ = c.pick(BIG_CITIES)
    else:
        city = c.pick(CITIES)
        while city not in CITY_COUNTRY:
            city = c.pick(CITIES)
        country = CITY_COUNTRY[city]
    countries = list(dict.fromkeys([k for k, _ in c.pool(CAPITALS)] + list(CITY_COUNTRY.values())))
    spans = c.rng.sample([k for k in countries if k != country], 6)
    return _qa(
        c,
        phr.format(x=city),
        country_forms(country, city),
        spans=spans,
        wrong={
            "near_miss": NEAR_MISSES.get(country, []),
            "other_question": [CONTINENTS[country], f"{city} is in {CONTINENTS[country]}."],
        },
        claims=[f"{city} is in {{t}}.", f"{city} is a city in {{t}}.", f"The city of {city} is located in {{t}}."],
        facts=[f"{city} is one of the larger cities of its region.", f"{city} has a historic centre and a university."],
        after=[f"The country lies in {CONTINENTS[country]}.", "The country is a member of the United Nations."],
        asked=f"the country of {city}",
        split_key=f"country:{city}",
    )


def date_text(y: int, m: int, d: int, style: str) -> str:
    month = MONTHS[m - 1]
    return {
        "reference": f"{month} {d}, {y}",
        "day_month": f"{d} {month} {y}",
        "iso": f"{y}-{m:02d}-{d:02d}",
        "ordinal": f"{month} {ordinal(d)}, {y}",
        "abbrev": f"{month[:3]} {d}, {y}",
        "paraphrase": f"the {ordinal_words(d)} of {month}, {y}",
        "weekday": f"{WEEKDAYS[datetime.date(y, m, d).weekday()]}, {month} {d}, {y}",
    }[style]


def _qa_answer(c, slot, w):
    """(aliases, equivalents, wrong entities, wrong forms) of a fictional answer of a slot kind."""
    if slot == "p":
        first, last = w["p"].split()
        others = [n for n in c.pool(FIRST_NAMES) if n != first]
        return (
            [("reference", w["p"]), ("surname", last), ("initials", f"{first[0]}. {last}")],
            [],
            w["people"],
            {"near_miss": [f"{c.rng.choice(others)} {last}", f"{first} {_longer_surname(c, last)}"]},
        )
    if slot == "year":
        y = w["year"]
        spans = [str(v) for v in c.rng.sample([v for v in range(y - 40, y + 41) if abs(v - y) > 1 and v <= 2024], 4)]
        return (
            [("reference", str(y)), ("prep", f"in {y}")],
            [("paraphrase", f"the year {y}"), ("words", year_words(y))],
            spans,
            {
                "off_by_one": [str(y - 1), str(y + 1)],
                "slip": [str(y + d) for d in (-10, -5, -2, 2, 5, 10) if y + d <= 2024],
            },
        )
    y, m, d = w["date"]
    styles = ["reference", "day_month", "iso", "ordinal"]
    shifted = [(y, m, d + 1), (y, m, d - 1) if d > 1 else (y, m, d + 2), (y - 1, m, d), (y + 1, m, d)]
    other = [(c.rng.randint(y - 30, y + 5), c.rng.randint(1, 12), c.rng.randint(1, 28)) for _ in range(4)]
    near = (
        [f"{d + 10} {MONTHS[m - 1]} {y}", f"{MONTHS[m - 1]} {d + 10}, {y}"] if d <= 9 else []
    )  # "4 July" in "14 July"
    return (
        [(s, date_text(y, m, d, s)) for s in styles],
        [(s, date_text(y, m, d, s)) for s in ("abbrev", "paraphrase", "weekday")],
        [date_text(*v, c.rng.choice(styles)) for v in other if v[1:] != (m, d)],
        {"off_by_one": [date_text(*v, c.rng.choice(styles)) for v in shifted], "near_miss": near},
    )


def _qa_world(c) -> dict:
    """The fictional people, places, things and numbers of one open-QA question."""
    people = _people(c, 5)
    year = c.rng.randint(1900, 2012)
    cities = c.sample(CITIES, 4)
    job = c.pick(JOBS)
    return {
        "p": people[0],
        "people": people[1:4],
        "other": people[4],
        "org": f"{c.pick(ORG_HEADS)} {c.pick(ORG_TAILS)}",
        "title": f"The {c.pick(TITLE_ADJ)} {c.pick(TITLE_NOUN)}",
        "award": c.pick(AWARDS),
        "city": cities[0],
        "city2": cities[1],
        "city3": cities[2],
        "city4": cities[3],
        "year": year,
        "year0": year - c.rng.randint(5, 60),
        "born": year - c.rng.randint(25, 55),
        "year2": year + c.rng.randint(3, 12),
        "year3": year + c.rng.randint(20, 40),
        "count": c.rng.randint(12, 900),
        "langs": c.rng.randint(3, 40),
        "job": job,
        "a_job": with_article(job.title),
        "jobs": c.pick(JOBS).title + "s",
        "date": (year, c.rng.randint(1, 12), c.rng.randint(1, 27)),
    }


def _qa_event(c, fam, event, phr):
    spec, slot = QA_EVENTS[event], QA_FAMILIES_OF_SLOT[fam]
    w = _qa_world(c)
    shown = {**w, "date": date_text(*w["date"], "reference")}
    blank = {**shown, slot: "{t}"}
    aliases, equivalents, spans, wrong = _qa_answer(c, slot, w)
    other, sentence = spec["other"][slot]
    wrong["other_question"] = [str(shown[other]), sentence.format(**shown)]
    return _qa(
        c,
        phr.format(**shown),
        aliases,
        equivalents,
        spans,
        wrong,
        claims=[t.format(**blank) for t in spec["claims"] if "{" + slot + "}" in t],
        facts=[t.format(**shown) for t in spec["before"] if "{" + slot + "}" not in t],
        after=[t.format(**shown) for t in spec["after"] if "{" + slot + "}" not in t],
        mentions=["{m} is often credited, but it was {c}."] if slot == "p" else [],
        asked={"p": "the person", "year": "the year", "date": "the date"}[slot],
    )


def _qa_bio(c, fam, slot, phr):
    w = _qa_world(c)
    p, question = w["p"], phr.format(**w)
    if slot == "job":
        job, synonym = w["job"]
        others = [j for j in c.pool(JOBS) if j != w["job"]]
        return _qa(
            c,
            question,
            [("reference", job), ("synonym", synonym), ("article", with_article(job))],
            [("synonym", with_article(synonym))],
            spans=[c.rng.choice([j, s, with_article(j)]) for j, s in c.rng.sample(others, 5)],
            wrong={
                "near_miss": [f"{job}'s assistant", f"{with_article(job)}'s assistant"],
                "other_question": [w["city2"], f"{p} lives in {w['city2']}."],
            },
            claims=[f"{p}'s profession is {{a_t}}.", f"{p} works as {{a_t}}.", f"By profession, {p} is {{a_t}}."],
            facts=[
                f"{p} was born in {w['born']} and grew up in {w['city2']}.",
                f"{p} studied in {w['city3']} for several years.",
            ],
            after=["Colleagues describe the work as demanding but rewarding.", f"{p} has two children."],
            asked="the profession",
        )
    if c.rng.random() < 0.3:
        city, country, _ = c.pick(BIG_CITIES)
    else:
        city = c.pick(CITIES)
        country = CITY_COUNTRY.get(city)
    aliases = [("reference", city)] + [("alias", a) for a in CITY_ALIASES.get(city, ())]
    equivalents = [("prep", f"in {city}")] + ([("with_country", f"{city}, {country}")] if country else [])
    spans = [x for x in c.sample(CITIES, 4) + [c.pick(BIG_CITIES).name] if x != city]
    home = c.rng.choice([x for x in c.pool(CITIES) if x != city and x not in spans])
    return _qa(
        c,
        question,
        aliases,
        equivalents,
        spans,
        wrong={
            "near_miss": NEAR_MISSES.get(city, []),
            "other_question": [str(w["born"]), f"{p} was born in {w['born']}."],
        },
        claims=[f"{p} was born in {{t}}.", f"{p}'s birthplace is {{t}}.", f"{p} was born in {{t}} in {w['born']}."],
        facts=[f"{p} grew up in a family of {w['jobs']}.", f"{p} is best known as the founder of {w['org']}."],
        after=[f"The family moved to {home} when {p} was a child.", f"{p} still visits the city every summer."],
        mentions=[f"{p} grew up in {{m}}, but was born in {{c}}.", f"{p} lives in {{m}} today, but was born in {{c}}."],
        asked="the birthplace",
    )


def _number_aliases(n: int, units: list[str]) -> list[tuple[str, str]]:
    """'2,350 meters', '2350 m', ... : the number with and without a thousands comma, in each unit spelling."""
    nums = list(dict.fromkeys([f"{n:,}", str(n)]))
    out = [("reference", f"{nums[0]} {units[0]}")]
    return out + [
        ("digits" if num != nums[0] else "abbrev" if len(unit) < 3 else "spelling", f"{num} {unit}")
        for num in nums
        for unit in units
        if (num, unit) != (nums[0], units[0])
    ]


def _qa_measure(c, fam, slot, phr):
    name, there = c.pick(ORG_HEADS), c.pick(ORG_HEADS)
    people, year, city = _people(c, 1), c.rng.randint(1820, 1990), c.pick(CITIES)
    if slot == "height":
        n = c.rng.randint(12, 480) * 10
        unit, what = ("meters", "m", "metres"), f"Mount {name}"
        equivalents = [("converted", f"{fmt(Fraction(n, 1000))} km"), ("words", f"{words(n)} meters")]
        wrong = {
            "wrong_unit": [f"{n:,} feet", f"{n:,} yards"],
            "other_question": [str(year), f"It was first climbed in {year}."],
        }
        claims = [f"{what} is {{t}} high.", f"The summit of {what} rises to {{t}}.", f"{what} has a height of {{t}}."]
        facts = [
            f"{what} lies in the {there} Range.",
            f"It was first climbed in {year} by an expedition led by {people[0]}.",
        ]
        after, alt = (
            ["Its summit is often covered in snow.", "The mountain is popular with hikers in summer."],
            ["feet"],
        )
    elif slot == "length":
        n = c.rng.randint(40, 2400)
        unit, what = ("km", "kilometers", "kilometres"), f"the {name} River"
        equivalents = [("converted", f"{n * 1000:,} meters"), ("words", f"{words(n)} kilometers")]
        wrong = {
            "wrong_unit": [f"{n:,} miles", f"{n:,} meters"],
            "other_question": [f"Lake {there}", f"It flows into Lake {there}."],
        }
        claims = [
            f"{cap_first(what)} is {{t}} long.",
            f"{cap_first(what)} runs for {{t}}.",
            f"The total length of {what} is {{t}}.",
        ]
        facts = [f"{cap_first(what)} rises near {city}.", f"It was first mapped by {people[0]} in {year}."]
        after, alt = [f"It flows into Lake {there}.", "Several dams along its course produce electricity."], ["miles"]
    else:
        big = c.rng.random() < 0.4
        n = c.rng.randint(11, 95) * 100_000 if big else c.rng.randint(12, 990) * 100
        what = f"the {'city' if big else 'town'} of {name}"
        unit, alt = ("",), ["households"]
        if big:
            short = f"{fmt(Fraction(n, 1_000_000))} million"
            aliases = [("reference", short), ("digits", f"{n:,}"), ("digits", str(n)), ("spelling", f"{short} people")]
            equivalents = [("converted", f"{n:,} inhabitants"), ("spelling", f"{short} residents")]
            wrong = {"wrong_unit": [f"{fmt(Fraction(n, 1_000_000))} billion"]}
        else:
            aliases = [
                ("reference", f"{n:,}"),
                ("digits", str(n)),
                ("spelling", f"{n:,} people"),
                ("spelling", f"{n:,} inhabitants"),
            ]
            equivalents = [
                ("words", words(n)),
                ("converted", f"{fmt(Fraction(n, 1000))} thousand"),
                ("spelling", f"{n:,} residents"),
            ]
            wrong = {"wrong_unit": [f"{n:,} households", f"{n:,} families"]}
        wrong["other_question"] = [str(year), f"{cap_first(what)} was founded in {year}."]
        claims = [
            f"{cap_first(what)} has a population of {{t}}.",
            f"The population of {what} is {{t}}.",
            f"{cap_first(what)} is home to {{t}}.",
        ]
        facts = [
            f"{cap_first(what)} was founded in {year}.",
            f"It lies about {c.rng.randint(20, 200)} kilometres from {city}.",
        ]
        after = [f"Its mayor is {people[0]}.", "Tourism and farming are its main industries."]
    if slot != "population":
        aliases = _number_aliases(n, list(unit))
    step = 100_000 if n >= 1_000_000 else 100 if slot == "population" else 1
    near = int("1" + str(n))  # 2350 -> 12350: the right digits inside a wrong number

    def show(v):
        if n >= 1_000_000:
            return f"{fmt(Fraction(v, 1_000_000))} million"
        return f"{v:,}" + (f" {unit[0]}" if unit[0] else "")

    wrong.update(
        off_by_one=[show(n - step), show(n + step)],
        slip=[show(n + d * step * c.rng.randint(3, 9)) for d in (-1, 1)],
        decimal_shift=[show(n * 10)] + ([show(n // 10)] if n % 10 == 0 and n // 10 else []),
        near_miss=[show(near)],
    )
    spans = [
        show(v)
        for v in sorted({round(n * f / step) * step for f in (0.5, 0.7, 1.3, 1.6, 2.2)} - {n, n - step, n + step})
    ]
    return _qa(
        c,
        phr.format(x=name, place=what),
        aliases,
        equivalents,
        spans,
        wrong,
        claims,
        facts,
        after,
        alt_units=alt,
        asked=f"the {slot}",
    )


QA_FAMILIES = {  # family -> Family(make(c, family, slot, phrasing) -> Item, {slot: phrasings})
    "capital": Family(
        _qa_capital,
        {"city": ["What is the capital of {x}?", "Which city is the capital of {x}?", "Name the capital city of {x}."]},
    ),
    "symbol": Family(
        _qa_symbol,
        {
            "symbol": [
                "What is the chemical symbol for {x}?",
                "Which symbol stands for {x} in the periodic table?",
                "How is the element {x} written in chemical notation?",
            ]
        },
    ),
    "river": Family(
        _qa_river,
        {
            "river": [
                "Which river flows through {x}?",
                "What river runs through the city of {x}?",
                "{x} lies on which river?",
            ]
        },
    ),
    "country": Family(
        _qa_country,
        {
            "country": [
                "In which country is {x}?",
                "Which country is the city of {x} in?",
                "{x} is a city in which country?",
            ]
        },
    ),
    **{
        fam: Family(_qa_event, {event: spec["ask"][slot] for event, spec in QA_EVENTS.items() if slot in spec["ask"]})
        for fam, slot in QA_FAMILIES_OF_SLOT.items()
    },
    "bio": Family(
        _qa_bio,
        {
            "job": [
                "What does {p} of {city} do for a living?",
                "What is the profession of {p}, born in {born}?",
                "{p}, who lives in {city}, works in which profession?",
            ],
            "city": [
                "In which city was {p}, the founder of {org}, born?",
                'Where was {p}, the author of "{title}", born?',
                "What is the birthplace of {p}, winner of the {award}?",
            ],
        },
    ),
    "measure": Family(
        _qa_measure,
        {
            "height": [
                "How high is Mount {x}?",
                "What is the height of Mount {x}?",
                "How tall is Mount {x}, in meters?",
            ],
            "length": [
                "How long is the {x} River?",
                "What is the length of the {x} River?",
                "How many kilometers long is the {x} River?",
            ],
            "population": [
                "What is the population of {place}?",
                "How many people live in {place}?",
                "How many inhabitants does {place} have?",
            ],
        },
    ),
}


def qa_item(c: Ctx, fam: str, slot: str, idx: int) -> Item:
    """A question of a family about ``slot`` in phrasing ``idx``, with an intro and an instruction line."""
    make, asks = QA_FAMILIES[fam]
    item = make(c, fam, slot, asks[slot][idx])
    item.split_key = item.split_key or item.question  # a real fact stays in one split whatever the phrasing
    intro, instr = c.rng.choice(QA_INTROS), c.rng.choice(QA_INSTRUCTIONS)
    item.question = f"{intro}{item.question}" + (f"\n{instr}" if instr else "")
    return item
