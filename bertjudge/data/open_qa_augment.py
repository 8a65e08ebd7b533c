"""Open-QA augmentation that teaches meaning: right answers written another way, wrong answers of the same type.

A judge trained on real open-QA rows learns the surface of a reference: it rejects a right answer written another
way ("July 4, 1776" for "4 July 1776", "twelve" for "12", "Beatles" for "The Beatles", "NASA" for its full name,
another alias) and accepts a wrong entity that looks like the right one. From a label-1 ``open_qa`` record whose
candidate names one of its references verbatim (``answer_span``: case-insensitive, at word boundaries, not one the
question itself names) this module makes:

- ``hard_negative``: a label-0 copy whose answer span is replaced, everywhere in the candidate, by another
  question's answer of the same ``entity_type`` (``entity_pool``; one that answered the same kind of question,
  "which city", where there is one) that matches none of the record's references (``names_reference``); the rest
  of the candidate is kept. ``meta.augment = "wrong_entity"``, ``meta.entity_type``.
- ``paraphrased_positive``: a label-1 copy whose answer span is rewritten in a way that keeps it right
  (``paraphrase_options``): a date in another order, a number 0–99 in words or number words in digits, a leading
  article dropped or the reference's own article added, a title dropped from a name or the reference's own title
  added, an acronym (or its expansion) that is itself a reference, or an alias known to be right: another answer
  people accepted for the same question, or a reference that only spaces, punctuates or qualifies the span
  otherwise. TriviaQA alias lists hold redirects ("Miss Dior Cherie" for John Galliano), so no arbitrary alias
  is used. ``meta.augment = "paraphrase:<kind>"``.

Both keep the original's fields, say where they come from (``meta.augmented_from``, ``meta.replaced``,
``meta.replacement``), suffix the ``id`` (``~wrong-entity``, ``~paraphrase-<kind>``) and the ``label_source``
(``synthetic:wrong-entity(from …)``, ``synthetic:paraphrase(from …)``: a program made the label, never ``human:``).

``augment_open_qa`` adds both to a seeded share of a record list; every source takes it as ``qa_augment=SHARE``
(``bertjudge/data/sources.py``). ``wrong_entity_mean_score`` is the mean P(correct) a judge gives the wrong-entity
rows: high means it reads surface, not meaning. Only the standard library and ``bertjudge.core``.
"""

from __future__ import annotations

import calendar
import copy
import random
import re
import unicodedata
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import NamedTuple

from bertjudge.core.extract import ONES, TENS, alias_forms, fmt, number_value
from bertjudge.core.extract import qa_normalize as _qa_normalize
from bertjudge.core.records import SCORE_FIELDS, synthetic_label_source

ENTITY_TYPES = ("year", "date", "number", "person", "name", "capitalized", "word", "other")
PARAPHRASE_KINDS = ("date", "number", "acronym", "title", "article", "alias")
SPECIFIC_KINDS = ("date", "number", "acronym", "title")  # tried before article and alias when they apply
WRONG_ENTITY = "wrong_entity"
POOL_TRIES = 32  # pool entries tried for one hard negative
MAX_POOL_PER_QUESTION = 3  # entries one question gives the pool (alias-rich questions would swamp it)
MAX_ENTITY_CHARS = 60
MAX_ENTITY_WORDS = 6

MONTHS = ("January February March April May June July August September October November December").split()
_MONTH = r"(?P<month>" + "|".join([*MONTHS, "Sept", *(m[:3] for m in MONTHS)]) + r")\.?"
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
_DATE_PATTERNS = {
    "dmy": re.compile(rf"(?:the\s+)?{_DAY}(?:\s+of)?\s+{_MONTH},?(?:\s+(?P<year>\d{{1,4}}))?", re.IGNORECASE),
    "mdy": re.compile(rf"{_MONTH}\s+{_DAY},?(?:\s+(?P<year>\d{{1,4}}))?", re.IGNORECASE),
    "iso": re.compile(r"(?P<year>\d{4})-(?P<month>[01]?\d)-(?P<day>[0-3]?\d)"),
    "my": re.compile(rf"{_MONTH},?\s+(?P<year>\d{{4}})", re.IGNORECASE),
}
_LEADING_ARTICLE = re.compile(r"^(?:the|an?)\s+", re.IGNORECASE)
_ENDS_WITH_ARTICLE = re.compile(r"(?<!\w)(?:the|an?)\s+$", re.IGNORECASE)
_TITLE = re.compile(r"(?:Sir|Dame|Dr\.?|Doctor|Professor|Prof\.|Lord|Lady|King|Queen|President|Mr\.?|Mrs\.?|Ms\.?)\s+")
_MINOR_WORDS = frozenset("a an the of and for in on at to de du la le von van & und y".split())
_NAME_WORD = re.compile(r"[^\W\d_][\w'’.\-]*")
_WHO = re.compile(
    r"^\W*who(?:m|se)?\b|\b(?:which|what|name the)\s+(?:\w+\s+)?(?:man|woman|person|actor|actress|singer|author|"
    r"writer|poet|novelist|playwright|composer|painter|artist|king|queen|president|prime minister|scientist|"
    r"inventor|explorer|footballer|player|golfer|boxer|driver|politician|philosopher)\b",
    re.IGNORECASE,
)
_WHICH_NOUN = re.compile(
    r"\b[Ww](?:hich|hat)\s+(?:(?:[A-Z][\w'’.-]*|\d+\w*)\s+)*"  # capitalized words before the noun: "Which US state"
    r"(?:(?:type|kind|sort|form|breed|species|make|brand|piece|style|variety)\s+of\s+(?:[A-Z][\w'’.-]*\s+)*)?"
    r"([a-z][a-z-]+)"
)
_NOT_NOUNS = frozenset(
    "is was are were did does do has had have can could would will should the a an of in on to name famous "
    "other common popular well-known".split()
) | frozenset(ONES)
_ACRONYM = re.compile(r"(?:[A-Z]\.){2,6}|[A-Z]{2,6}")
_UNSAFE_CHARS = re.compile(r"[()\[\]{}:;/\\<>|=#@_*\"“”]")
_REDIRECT_PREFIXES = (
    "the weather in",
    "list of",
    "history of",
    "culture of",
    "cultural depictions",
    "geography of",
    "economy of",
    "demographics of",
    "politics of",
)


@lru_cache(maxsize=1 << 17)
def qa_normalize(text: str) -> str:
    """``bertjudge.core.extract.qa_normalize``, remembered (a record list asks for the same texts many times)."""
    return _qa_normalize(text)


@lru_cache(maxsize=1 << 17)
def _alias_forms(reference: str) -> tuple[str, ...]:
    return tuple(alias_forms(reference))


# ---- reading an entity -----------------------------------------------------------------------------------


class DayDate(NamedTuple):
    """A date read from text: ``year`` and ``day`` may be missing; ``order`` is how it was written
    (``dmy`` "4 July 1776", ``mdy`` "July 4, 1776", ``iso`` "1776-07-04", ``my`` "July 1776")."""

    year: int | None
    month: int
    day: int | None
    order: str


def _month_number(text: str) -> int:
    return int(text) if text.isdigit() else [m[:3].lower() for m in MONTHS].index(text[:3].lower()) + 1


def parse_date(text: str) -> DayDate | None:
    """The date ``text`` is, written whole as one ("4th of July 1776", "July 4", "1776-07-04", "July 1776"),
    checked against the calendar; None for anything else."""
    for order, pattern in _DATE_PATTERNS.items():
        match = pattern.fullmatch(text.strip())
        if not match:
            continue
        fields = match.groupdict()
        month = _month_number(fields["month"])
        year = int(fields["year"]) if fields.get("year") else None
        day = int(fields["day"]) if fields.get("day") else None
        if not 1 <= month <= 12 or year == 0:
            return None
        if day is not None and not 1 <= day <= calendar.monthrange(year or 2000, month)[1]:
            return None
        return DayDate(year, month, day, order)
    return None


def _same_day(a: DayDate | None, b: DayDate | None) -> bool:
    return a is not None and b is not None and (a.year, a.month, a.day) == (b.year, b.month, b.day)


def _name_words(text: str) -> list[str] | None:
    """The words of ``text`` when each is a capitalized word that is no article or particle ("Isaac Newton",
    "George VI"), else None."""
    words = text.split()
    if all(_NAME_WORD.fullmatch(w) and w[0].isupper() and w.lower() not in _MINOR_WORDS for w in words):
        return words
    return None


def asks_for_person(question: str | None) -> bool:
    """Whether a question asks for a person: it opens with "who" ("Who wrote …?", "Whose …") or asks "which
    [English] actor / king / writer …"."""
    return bool(question and _WHO.search(question))


def answer_noun(question: str | None) -> str | None:
    """The noun a which- or what-question asks for, in lower case ("Which Swedish actress …?" → "actress", "What
    type of rock …?" → "rock", "In which city …?" → "city"); None when it asks for none ("What is …?")."""
    match = _WHICH_NOUN.search(question or "")
    return match.group(1) if match and match.group(1) not in _NOT_NOUNS else None


def entity_type(text: str, question: str | None = None) -> str:
    """The type of an answer, one of ``ENTITY_TYPES``: ``year`` (4 digits), ``date``, ``number`` (any other
    number, in digits or words), ``person`` (2–4 capitalized words answering a who-question), ``name`` (2–4
    capitalized words otherwise), ``capitalized`` (one capitalized word: a place, a thing), ``word`` (one word in
    lower case), ``other``. A leading article is not counted ("The Beatles": capitalized)."""
    text = text.strip()
    if re.fullmatch(r"\d{4}", text):
        return "year"
    if parse_date(text):
        return "date"
    if number_value(text) is not None:
        return "number"
    core = _LEADING_ARTICLE.sub("", text, count=1)
    words = _name_words(core)
    if words and 2 <= len(words) <= 4:
        return "person" if asks_for_person(question) else "name"
    if words and len(words) == 1:
        return "capitalized"
    if _NAME_WORD.fullmatch(core) and core.islower():
        return "word"
    return "other"


def _latin(text: str) -> bool:
    return all(not c.isalpha() or "LATIN" in unicodedata.name(c, "") for c in text)


def is_clean_entity(text: str) -> bool:
    """Whether a reference is fit to be written into a candidate: short, Latin script, no brackets, slashes or
    colons, not a redirect or disambiguation page ("Scorpio (disambiguation)", "The weather in Milan")."""
    lowered = text.lower()
    return (
        0 < len(text) <= MAX_ENTITY_CHARS
        and len(text.split()) <= MAX_ENTITY_WORDS
        and any(c.isalnum() for c in text)
        and not _UNSAFE_CHARS.search(text)
        and _latin(text)
        and text == text.strip()
        and not text.endswith((",", "-"))
        and not lowered.startswith(_REDIRECT_PREFIXES)
        and "disambiguation" not in lowered
    )


# ---- finding and replacing the answer --------------------------------------------------------------------


@lru_cache(maxsize=1 << 16)
def _mention(text: str) -> re.Pattern:
    """``text`` as a whole word sequence, in any case."""
    return re.compile(rf"(?<!\w){re.escape(text)}(?!\w)", re.IGNORECASE)


def answer_span(record: dict) -> str | None:
    """The longest text of the candidate that is one of the record's references verbatim (case-insensitive, at
    word boundaries), as the candidate writes it; None when it names none. A reference the question names is
    left out: a candidate that repeats the question names it without answering with it."""
    candidate, spans = record.get("candidate") or "", []
    asked = qa_normalize(record.get("question") or "")
    for reference in record.get("references") or []:
        reference = reference.strip().rstrip(".,;:!?")
        if any(c.isalnum() for c in reference) and not _contains_words(asked, qa_normalize(reference)):
            match = _mention(reference).search(candidate)
            if match:
                spans.append(match.group(0))
    return max(spans, key=len) if spans else None


def eligible_span(record: dict) -> str | None:
    """The ``answer_span`` of a label-1 ``open_qa`` record; None for other records."""
    return answer_span(record) if record.get("label") == 1 and record.get("category") == "open_qa" else None


def is_eligible(record: dict) -> bool:
    """A label-1 ``open_qa`` record whose candidate names one of its references verbatim."""
    return eligible_span(record) is not None


def _contains_words(text: str, part: str) -> bool:
    return f" {part} " in f" {text} "


def names_reference(answer: str, references: Sequence[str]) -> bool:
    """Whether ``answer`` may mean one of ``references``: the same ``qa_normalize`` form (of an alias form), one
    contained in the other word for word, the same number or the same day. An answer with no words counts."""
    norm = qa_normalize(answer)
    if not norm:
        return True
    value, day = number_value(answer), parse_date(answer)
    for reference in references:
        for form in _alias_forms(reference):
            if _contains_words(norm, form) or _contains_words(form, norm):
                return True
        if value is not None and number_value(reference) == value or _same_day(day, parse_date(reference)):
            return True
    return False


def mentions_reference(text: str, references: Sequence[str]) -> bool:
    """Whether ``text`` names one of ``references`` anywhere (an alias form, word for word, after ``qa_normalize``)."""
    norm = qa_normalize(text)
    return any(_contains_words(norm, form) for reference in references for form in _alias_forms(reference))


def _fit_case(new: str, old: str, sentence_start: bool) -> str:
    """``new`` in the case of the text it replaces: upper case for an upper-case word; a capital first letter for
    a capitalized one, unless ``new`` opens with an article in the middle of a sentence ("was the Beatles"); a
    small first letter for a word in lower case in the middle of a sentence, when only its first letter is one."""
    if old.isupper() and sum(c.isalpha() for c in old) > 1:
        return new.upper()
    if old[:1].isupper() and new[:1].islower() and (sentence_start or not _LEADING_ARTICLE.match(new)):
        return new[0].upper() + new[1:]
    if old.islower() and new[:1].isupper() and new[1:].islower() and not sentence_start:
        return new[0].lower() + new[1:]  # "using a mirror" → "using mirrors", not "using Mirrors"
    return new


def rewrite_mentions(candidate: str, span: str, new: str, fit_case: bool = True) -> str:
    """``candidate`` with every mention of ``span`` (any case, whole words) replaced by ``new`` (in its case,
    unless not ``fit_case``: "NATO" is expanded as written, not in capitals); an article that ``new`` opens with
    is dropped after an article ("the The Hague"), and a full stop it ends with before a full stop ("U.S..")."""
    pieces, last = [], 0
    for match in _mention(span).finditer(candidate):
        before = candidate[last : match.start()]
        sentence_start = not candidate[: match.start()].strip() or candidate[: match.start()].rstrip()[-1] in ".!?:"
        text = _fit_case(new, match.group(0), sentence_start) if fit_case else new
        if _ENDS_WITH_ARTICLE.search(before) and _LEADING_ARTICLE.match(text):
            text = _LEADING_ARTICLE.sub("", text, count=1)
        if text.endswith(".") and candidate[match.end() : match.end() + 1] == ".":
            text = text[:-1]  # "U.S." before a full stop
        pieces += [before, text]
        last = match.end()
    return "".join(pieces) + candidate[last:]


def _augmented(record: dict, candidate: str, label: int, augment: str, tag: str, extra: dict) -> dict:
    """A deep copy of ``record`` with ``candidate`` and ``label``, ``meta`` saying how it was made, a suffixed
    ``id`` and ``label_source``; no score fields."""
    new = copy.deepcopy(record)
    for key in SCORE_FIELDS:
        new.pop(key, None)
    new.update(candidate=candidate, label=label)
    new["meta"] = {**(new.get("meta") or {}), "augment": augment, "augmented_from": record.get("id"), **extra}
    how = "synthetic:paraphrase" if augment.startswith("paraphrase:") else "synthetic:wrong-entity"
    new["label_source"] = synthetic_label_source(how, record.get("label_source"))
    new["id"] = f"{record.get('id')}~{tag}"
    return new


# ---- hard negatives --------------------------------------------------------------------------------------


def _pool_entries(records: Sequence[dict]) -> list[tuple[dict, str]]:
    """(record, entry) for the pool: the answers of the eligible rows as their candidates write them, then the
    clean references (capitalized ones first) of the questions none of whose rows names one."""
    open_qa = [record for record in records if record.get("category") == "open_qa"]
    spans = [(record, eligible_span(record)) for record in open_qa]
    answered = {record.get("question") for record, _ in spans}
    references = [
        (record, reference)
        for record in open_qa
        if record.get("question") not in answered
        for reference in sorted(record.get("references") or [], key=lambda r: (r.islower(), r.isupper()))
    ]
    return [(record, entry) for record, entry in [*spans, *references] if entry and is_clean_entity(entry)]


def entity_pool(records: Sequence[dict]) -> dict[str, list[str]]:
    """Wrong answers to draw from, by ``entity_type`` (read with the question they answer), and by
    ``"<type>:<noun>"`` where that question asks for a noun (``answer_noun``: ``"capitalized:city"``). Up to
    ``MAX_POOL_PER_QUESTION`` entries of distinct normal forms for each distinct ``open_qa`` question: its answers
    as the candidates of its eligible rows write them, or else its clean references (``is_clean_entity``); each
    entry once per key, in the order met."""
    pool: dict[str, list[str]] = {kind: [] for kind in ENTITY_TYPES}
    forms_by_question: dict[str, set[str]] = {}
    for record, entry in _pool_entries(records):
        question = record.get("question")
        forms = forms_by_question.setdefault(question or str(record.get("id")), set())
        norm = qa_normalize(entry)
        if not norm or norm in forms or len(forms) >= MAX_POOL_PER_QUESTION:
            continue
        forms.add(norm)
        kind, noun = entity_type(entry, question), answer_noun(question)
        for key in [kind, f"{kind}:{noun}"] if noun else [kind]:
            if entry not in pool.setdefault(key, []):
                pool[key].append(entry)
    return pool


def _replacement_text(span: str, replacement: str, kind: str) -> str:
    """``replacement`` as the span's stand-in: after the span's own "a"/"an" (fitted to its first letter), or
    its "the" for a common noun ("a frog" → "an owl", "the femur" → "the tibia"); a common noun without its own
    article where the span has none ("in the human eyelids" → "in the human tibia", not "… human a tibia")."""
    article, common = _LEADING_ARTICLE.match(span), kind in ("word", "other")
    core = _LEADING_ARTICLE.sub("", replacement, count=1)
    if not article or article.group(0).strip().lower() == "the" and not common:
        return core if common and not article else replacement
    word = article.group(0).strip()
    if word.lower() in ("a", "an"):
        word = "an" if core[:1].lower() in tuple("aeiou") else "a"
        word = word.capitalize() if article.group(0)[0].isupper() else word
    return f"{word} {core}"


def hard_negative(record: dict, pool: Mapping[str, Sequence[str]], rng: random.Random) -> dict | None:
    """A label-0 copy of an eligible record (``is_eligible``) whose answer span is replaced everywhere by an entry
    of ``pool`` of its ``entity_type`` that names none of its references, is not named in the question, and leaves
    the candidate naming no reference: first of up to ``POOL_TRIES // 2`` distinct entries drawn from those that
    answered the same ``answer_noun`` (a city for a city), then of up to ``POOL_TRIES`` drawn from the whole type.
    None when the record is not eligible, the rest of its candidate names another reference, or no entry fits."""
    span = eligible_span(record)
    if span is None:
        return None
    references, candidate, question = record["references"], record["candidate"], record.get("question")
    if mentions_reference(rewrite_mentions(candidate, span, " "), references):
        return None  # another alias stays in the candidate: the copy would not be clearly wrong
    kind, asked, noun = entity_type(span, question), qa_normalize(question or ""), answer_noun(question)
    alike = list(pool.get(f"{kind}:{noun}") or []) if noun else []  # another city for a city
    entries = list(pool.get(kind) or [])
    tries = rng.sample(alike, min(POOL_TRIES // 2, len(alike))) + rng.sample(entries, min(POOL_TRIES, len(entries)))
    for replacement in tries:
        if names_reference(replacement, references) or _contains_words(asked, qa_normalize(replacement)):
            continue
        wrong = rewrite_mentions(candidate, span, _replacement_text(span, replacement, kind))
        if wrong != candidate and not mentions_reference(wrong, references):
            extra = {"entity_type": kind, "replaced": span, "replacement": replacement}
            return _augmented(record, wrong, 0, WRONG_ENTITY, "wrong-entity", extra)
    return None


# ---- paraphrased positives -------------------------------------------------------------------------------


def date_forms(date: DayDate) -> dict[str, str]:
    """The ways to write a date with a day, by order: ``dmy`` "4 July 1776", ``mdy`` "July 4, 1776" and, with a
    year of four digits, ``iso`` "1776-07-04" (without a year "4 July" and "July 4"); none without a day."""
    if date.day is None:
        return {}
    month = MONTHS[date.month - 1]
    if date.year is None:
        return {"dmy": f"{date.day} {month}", "mdy": f"{month} {date.day}"}
    forms = {"dmy": f"{date.day} {month} {date.year}", "mdy": f"{month} {date.day}, {date.year}"}
    if date.year >= 1000:
        forms["iso"] = f"{date.year:04d}-{date.month:02d}-{date.day:02d}"
    return forms


def _date_rewrites(span: str, references: Sequence[str]) -> list[str]:
    date = parse_date(span)
    return [text for order, text in date_forms(date).items() if order != date.order] if date else []


def number_in_words(n: int) -> str | None:
    """0 … 99 in English words ("twenty-one"); None for other numbers."""
    if not 0 <= n < 100:
        return None
    if n < 20:
        return ONES[n]
    tens, ones = divmod(n, 10)
    return TENS[tens] + (f"-{ONES[ones]}" if ones else "")


def _number_rewrites(span: str, references: Sequence[str]) -> list[str]:
    """Digits 0–99 in words, number words in digits, "10,000" without its separators (a year stays as it is)."""
    value, text = number_value(span), span.strip()
    if value is None or value.denominator != 1:
        return []
    if re.fullmatch(r"\d{1,2}", text):
        return [number_in_words(int(value))]
    if re.fullmatch(r"\d{1,3}(?:,\d{3})+", text):
        return [text.replace(",", "")]
    return [fmt(value)] if re.fullmatch(r"[A-Za-z\s-]+", text) else []


def acronym_of(name: str) -> str | None:
    """The upper-case initials of a name's significant words ("North Atlantic Treaty Organization" → "NATO");
    None for fewer than two, or for single letters ("I S")."""
    words = [w for w in re.findall(r"[^\W\d_][\w'’]*", name) if w.lower() not in _MINOR_WORDS]
    return "".join(w[0] for w in words).upper() if len(words) >= 2 and min(map(len, words)) > 1 else None


def _acronym_rewrites(span: str, references: Sequence[str]) -> list[str]:
    """A multi-word span's acronym when that acronym is a reference; an acronym span's expansion when a clean
    reference expands to it."""
    if _ACRONYM.fullmatch(span):
        letters = span.replace(".", "")
        return [r for r in references if is_clean_entity(r) and " " in r and acronym_of(r) == letters]
    acronym = acronym_of(span) if " " in span.strip() else None
    return [r for r in references if acronym and _ACRONYM.fullmatch(r) and r.replace(".", "") == acronym]


def _title_rewrites(span: str, references: Sequence[str]) -> list[str]:
    """A name without its title ("Sir Isaac Newton" → "Isaac Newton", when two or more capitalized words stay);
    a name with the title a reference gives it ("Isaac Newton" → "Sir Isaac Newton")."""
    title = _TITLE.match(span)
    if title:
        rest = span[title.end() :]
        words = _name_words(rest)
        return [rest] if words and 2 <= len(words) <= 4 else []
    if not _name_words(span):
        return []
    titled = (_TITLE.match(r) for r in references)
    return [f"{m.group(0)}{span}" for m in titled if m and m.string[m.end() :].lower() == span.lower()]


def _article_rewrites(span: str, references: Sequence[str]) -> list[str]:
    """The span without its leading article ("The Beatles" → "Beatles"), or a capitalized span with the article a
    reference gives it ("Beatles" → "The Beatles")."""
    article = _LEADING_ARTICLE.match(span)
    if article:
        return [span[article.end() :]] if span[article.end() :].strip() else []
    if not span[:1].isupper():
        return []  # "painting the circus scenes" is no place for "The circus"
    with_article = (_LEADING_ARTICLE.match(r) for r in references)
    return [f"{m.group(0)}{span}" for m in with_article if m and m.string[m.end() :].lower() == span.lower()]


def _same_letters(span: str, reference: str) -> bool:
    """Whether ``reference`` writes ``span``'s letters and digits with other spacing or punctuation, in no more
    words and not run together in camel case ("Doctor Who" → "Doctorwho", "sangfroid" → "sang-froid"; not "Poland"
    → "Po land")."""
    span_words, reference_words = qa_normalize(span).split(), qa_normalize(reference).split()
    if len(reference_words) > len(span_words) and not (len(span_words) == 1 and "-" in reference):
        return False
    if len(reference_words) > 1 and min(map(len, reference_words)) < 3 or re.search(r"[a-z][A-Z]", reference):
        return False
    return "".join(span_words) == "".join(reference_words)


def _same_name_fewer_middle(a: str, b: str) -> bool:
    """Whether one name is the other without some middle names, first and last kept ("Joseph Aloysius Hansom" /
    "Joseph Hansom")."""
    short, long = sorted((qa_normalize(a).split(), qa_normalize(b).split()), key=len)
    if not (_name_words(a) and _name_words(b)) or len(short) < 2 or len(short) == len(long):
        return False
    rest = iter(long)
    return short[0] == long[0] and short[-1] == long[-1] and all(word in rest for word in short)


def _without_qualifier(span: str, reference: str) -> bool:
    """Whether ``reference`` is ``span`` without the one-word qualifier after its comma ("Milan, Italy" → "Milan")."""
    head = span[: len(reference)]
    return head.lower() == reference.lower() and bool(re.fullmatch(r",\s*[A-Z]\w*", span[len(reference) :]))


def _alias_rewrites(span: str, references: Sequence[str], accepted: Sequence[str] = ()) -> list[str]:
    """Other ways to name the answer that keep it right: another answer people accepted for the same question
    (``accepted``), and the record's clean references that write the span with other spacing or punctuation,
    without (or with) middle names, or without its one-word qualifier after a comma ("Milan, Italy" → "Milan").
    Never an arbitrary alias: alias lists hold redirects ("Miss Dior Cherie" for John Galliano)."""
    norm = qa_normalize(span)
    aliases = [answer for answer in accepted if qa_normalize(answer) not in ("", norm)]
    for reference in references:
        if not is_clean_entity(reference) or qa_normalize(reference) in ("", norm) or reference.isupper():
            continue
        if reference.islower() and not span.islower():
            continue
        if any(same(span, reference) for same in (_same_letters, _same_name_fewer_middle, _without_qualifier)):
            aliases.append(reference)
    return aliases


_REWRITES = {
    "date": _date_rewrites,
    "number": _number_rewrites,
    "acronym": _acronym_rewrites,
    "title": _title_rewrites,
    "article": _article_rewrites,
}


def paraphrase_options(record: dict, span: str, accepted: Sequence[str] = ()) -> list[tuple[str, str]]:
    """(kind, text) for each meaning-preserving rewrite of ``span`` the record allows (``accepted``: other answers
    people accepted for its question, for ``alias``), kinds in ``PARAPHRASE_KINDS`` order, each text once."""
    seen, options = {span}, []
    rewrites = [(kind, rewrite(span, record["references"])) for kind, rewrite in _REWRITES.items()]
    for kind, texts in [*rewrites, ("alias", _alias_rewrites(span, record["references"], accepted))]:
        for text in texts:
            if text and text not in seen:
                seen.add(text)
                options.append((kind, text))
    return options


def _with_year(candidate: str, span: str) -> str:
    """A day-and-month span with the year that follows it in the candidate ("July 20" → "July 20, 1969")."""
    date = parse_date(span)
    if date is None or date.day is None or date.year is not None:
        return span
    match = re.search(rf"(?<!\w){re.escape(span)},?\s+\d{{3,4}}(?!\w)", candidate, re.IGNORECASE)
    return match.group(0) if match and parse_date(match.group(0)) else span


def _inside_name(candidate: str, span: str) -> bool:
    """Whether a mention of ``span`` follows a capitalized word or a hyphen ("Highway 61", "Catch-22", "Miss
    Cornelia Blimber"): a number there is part of a name, and a title there would be a second one."""
    before = (candidate[: m.start()] for m in _mention(span).finditer(candidate))
    return any(re.search(r"(?:[A-Z][\w'’]*\s+|[-–#])$", text) for text in before)


def paraphrased_positive(record: dict, rng: random.Random, accepted: Sequence[str] = ()) -> dict | None:
    """A label-1 copy of an eligible record (``is_eligible``) whose answer span (a day and month with the year
    that follows it) is rewritten everywhere in an equivalent way (``paraphrase_options``): one of the
    ``SPECIFIC_KINDS`` when any applies, else an article change or another alias, drawn by ``rng``. ``accepted``:
    the answers people accepted for the same question (``accepted_answers``), aliases known to be right. None when
    the record is not eligible or no rewrite applies."""
    span = eligible_span(record)
    if span is None:
        return None
    candidate = record["candidate"]
    span = _with_year(candidate, span)
    in_name = _inside_name(candidate, span)  # "Highway 61", "Miss Cornelia Blimber": no number words, no title
    options = [o for o in paraphrase_options(record, span, accepted) if o[0] not in ("number", "title") or not in_name]
    rng.shuffle(options)
    options.sort(key=lambda option: option[0] not in SPECIFIC_KINDS)  # stable: shuffled within each group
    for kind, text in options:
        rewritten = rewrite_mentions(candidate, span, text, fit_case=kind != "acronym")
        if rewritten != candidate:
            extra = {"replaced": span, "replacement": text}
            return _augmented(record, rewritten, 1, f"paraphrase:{kind}", f"paraphrase-{kind}", extra)
    return None


# ---- a record list ---------------------------------------------------------------------------------------


def accepted_answers(records: Sequence[dict]) -> dict[str, list[str]]:
    """For each question, the answers people accepted as its eligible rows' candidates give them bare (the whole
    candidate is the ``answer_span``, "Paddy McGuinness."), each once: aliases known to be right."""
    accepted: dict[str, list[str]] = {}
    for record in records:
        span = eligible_span(record)
        if not span or qa_normalize(span) != qa_normalize(record["candidate"]) or not is_clean_entity(span):
            continue
        answers = accepted.setdefault(record.get("question") or "", [])
        if span not in answers:
            answers.append(span)
    return accepted


def augment_open_qa(records: Sequence[dict], share: float, seed: int) -> list[dict]:
    """The records, unchanged and in order, then for a seeded ``share`` (0..1) of the eligible rows
    (``is_eligible``) a ``hard_negative`` (from the ``entity_pool`` of these records) and, drawn apart, for the
    same share a ``paraphrased_positive`` (with the ``accepted_answers`` of these records), in the order of the rows
    they come from. A row that gives none adds none; rows of other categories are untouched. Deterministic for a
    seed."""
    if not 0 <= share <= 1:
        raise ValueError(f"share={share!r} must be between 0 and 1")
    spans = [eligible_span(record) for record in records]
    eligible = [index for index, span in enumerate(spans) if span is not None]
    count = round(share * len(eligible))
    negatives = set(random.Random(f"{seed}/wrong-entity").sample(eligible, count))
    paraphrases = set(random.Random(f"{seed}/paraphrase").sample(eligible, count))
    pool = entity_pool(records) if negatives else {}
    accepted = accepted_answers(records) if paraphrases else {}
    added = []
    for index in eligible:
        record, stem = records[index], f"{seed}/{records[index].get('id')}/{index}"
        if index in negatives:
            added.append(hard_negative(record, pool, random.Random(f"{stem}/wrong-entity")))
        if index in paraphrases:
            others = accepted.get(record.get("question") or "", [])
            added.append(paraphrased_positive(record, random.Random(f"{stem}/paraphrase"), others))
    return [*records, *(row for row in added if row is not None)]


def wrong_entity_mean_score(records: Sequence[dict], scores: Sequence[float]) -> float | None:
    """The mean P(correct) ``scores`` (one per record, in order) give the rows with ``meta.augment ==
    "wrong_entity"``; None when there are none. A judge that reads meaning scores them near 0."""
    if len(records) != len(scores):
        raise ValueError(f"{len(records)} records but {len(scores)} scores")
    wrong = [float(s) for r, s in zip(records, scores) if (r.get("meta") or {}).get("augment") == WRONG_ENTITY]
    return sum(wrong) / len(wrong) if wrong else None
