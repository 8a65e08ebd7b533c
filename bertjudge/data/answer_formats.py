"""A taxonomy of final-answer formats, and a renderer that rewrites a candidate into any of them.

Benchmarks ask for the final answer in many shapes ("Answer with only the letter", "#### 42",
"\\boxed{}", a JSON object, an XML tag …) and models answer in others they were not asked for (a hedge,
a revision, a marker in another language). ``FORMATS`` names each shape once: an ``AnswerFormat`` with its
``family``, the ``categories`` it applies to, whether benchmarks ``prescribe`` it (False: what models
write unasked) and 1–3 ``instructions`` real prompts use to ask for it (``docs/formats.md`` is
``markdown_table()``).

``render`` rewrites a labelled record: the candidate's reasoning is kept, its final-answer statement is
replaced by an answer in the chosen format, the label is kept. The answer is honest by construction
(``answer_of``): a label-1 row states its first reference, a label-0 row a wrong answer (its own extracted
answer when that matches no reference, or another option), so a rendered copy is as right or wrong as its
original. ``content_error`` (right format, wrong answer: label 0) and ``format_only_error`` (malformed
format, right answer: label 1) make deliberate pairs; ``augment`` adds rendered copies to a record list.
"""

from __future__ import annotations

import copy
import json
import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import NamedTuple

from bertjudge.core.extract import (
    alias_forms,
    extract_answer,
    fmt,
    is_prose,
    language_of,
    normalize_answer,
    number_value,
    options_of,
    parse_options,
    qa_normalize,
)
from bertjudge.core.records import synthetic_label_source

MC = ("multiple_choice",)
MATH = ("open_math",)
MC_MATH = ("multiple_choice", "open_math")
ALL = ("multiple_choice", "context_extraction", "open_math", "open_qa", "other")
FAMILIES = ("letter", "option_text", "marker", "latex", "markup", "position", "unasked")
MAX_ANSWER_CHARS = 100  # a longer answer (extracted or a reference) is prose, not an answer to render
BARE_ANSWER_CHARS = 40  # a one-line candidate this short, and no prose, is its answer: no reasoning to keep
REASONING_MARK = "…"  # stands for the reasoning in the examples of ``markdown_table``


class Answer(NamedTuple):
    """What a format renders: ``value`` (the option label for multiple choice, a letter or a number, else the
    answer),
    the option's text and number (multiple choice), a wrong alternative of the same kind
    (``distractor``, for the formats that name two answers) and the record's category."""

    value: str
    option_text: str | None
    option_number: int | None
    distractor: str | None
    category: str


Renderer = Callable[[Answer, str, random.Random], "str | None"]


@dataclass(frozen=True)
class AnswerFormat:
    """One final-answer format. ``render(answer, reasoning, rng)`` gives the whole candidate (None when the
    answer lacks what the format needs: an option text, a distractor); ``malform`` the same with a broken
    format but the right content (None: no malformed variant)."""

    name: str
    family: str
    categories: tuple[str, ...]
    prescribed: bool
    instructions: tuple[str, ...]
    render: Renderer
    malform: Renderer | None = None


# ---- renderers -------------------------------------------------------------------------------------

_FIELD = re.compile(r"\{([A-Za-z])\}")


def _fields(answer: Answer) -> dict[str, str | None]:
    """What a template may name: ``{v}`` the value, ``{L}`` / ``{l}`` the option letter (upper / lower case;
    missing where options are numbered), ``{c}`` the value as cited ("(B)", "(2)" for an option), ``{t}`` /
    ``{T}`` the option text (as written / upper case), ``{n}`` the option number, ``{d}`` a wrong alternative,
    ``{j}`` the value as a JSON string."""
    option = answer.category == "multiple_choice"
    letter = answer.value if option and answer.value.isalpha() else None
    text = answer.option_text
    return {
        "v": answer.value,
        "L": letter,
        "l": letter.lower() if letter else None,
        "c": f"({answer.value})" if option else answer.value,
        "t": text,
        "T": text.upper() if text else None,
        "n": str(answer.option_number) if answer.option_number else None,
        "d": answer.distractor,
        "j": json.dumps(answer.value, ensure_ascii=False),
    }


def _fill(template: str, answer: Answer) -> str | None:
    """``template`` with its fields filled (``_fields``); None when one it names is missing."""
    fields = _fields(answer)
    if any(fields[name] is None for name in _FIELD.findall(template)):
        return None
    return _FIELD.sub(lambda m: fields[m.group(1)], template)


def _statement(template: str) -> Renderer:
    """A renderer that states the answer as ``template`` (``_fill``) after the reasoning."""

    def render(answer: Answer, reasoning: str, rng: random.Random) -> str | None:
        statement = _fill(template, answer)
        if statement is None:
            return None
        return f"{reasoning}\n\n{statement}" if reasoning else statement

    return render


def _answer_first(answer: Answer, reasoning: str, rng: random.Random) -> str:
    return f"{answer.value}\n\n{reasoning}" if reasoning else answer.value


def _last_line_only(answer: Answer, reasoning: str, rng: random.Random) -> str:
    return f"{reasoning}\n{answer.value}" if reasoning else answer.value


def _trailing_explanation(answer: Answer, reasoning: str, rng: random.Random) -> str:
    why = reasoning or rng.choice(("it is the only answer that fits the question.", "the others do not fit."))
    return f"{answer.value}. Here is why: {why}"


# ---- the taxonomy ----------------------------------------------------------------------------------

# name, family, categories, the statement after the reasoning, its malformed variant (for format-only errors)
_STATEMENTS = (
    ("letter_bare", "letter", MC, "{L}", "{l}"),
    ("letter_parens", "letter", MC, "({L})", "({L}"),
    ("letter_paren_right", "letter", MC, "{L})", "{l})"),
    ("letter_brackets", "letter", MC, "[{L}]", "[{L}"),
    ("letter_repeated", "letter", MC, "{L} {L} {L}", "{L} {L}"),
    ("letter_repeated_joined", "letter", MC, "{L}{L}{L}{L}{L}", "{L}{L}{L}"),
    ("letter_lower", "letter", MC, "{l}", "{L}"),
    ("option_text", "option_text", MC, "{t}", "{T}"),
    ("option_letter_text", "option_text", MC, "{v}) {t}", "{v} {t})"),
    ("option_number", "option_text", MC, "{n}", None),
    ("answer_colon", "marker", ALL, "Answer: {c}", "Answer {c}"),
    ("the_answer_is", "marker", ALL, "The answer is {c}.", "The answer is is {c}."),
    ("final_answer", "marker", ALL, "Final answer: {v}", "Final answer {v}"),
    ("gsm8k_hashes", "marker", MATH, "#### {v}", "###{v}"),
    ("answer_upper", "marker", ALL, "ANSWER: {v}", "ANSWER {v}"),
    ("boxed", "latex", ("open_math", "multiple_choice"), "\\boxed{{v}}", "\\boxed{{v}"),
    ("dollar_math", "latex", MATH, "${v}$", "${v}"),
    ("paren_math", "latex", MATH, "\\({v}\\)", "\\({v}"),
    ("bold", "markup", ALL, "**{v}**", "**{v}*"),
    ("json_object", "markup", ALL, '{"answer": {j}}', '{"answer": {j},}'),
    ("xml_tag", "markup", ALL, "<answer>{v}</answer>", "<answer>{v}"),
    ("html_bold", "markup", ALL, "<b>{v}</b>", "<b>{v}</b"),
    ("code_block", "markup", ALL, "```\n{v}\n```", "```\n{v}"),
    ("hedge", "unasked", ALL, "I think it is {v}, but I'm not sure.", None),
    ("either_then_commit", "unasked", MC_MATH, "It is either {d} or {v}; I would say {v}.", None),
    ("answer_then_revision", "unasked", MC_MATH, "{d}. Wait — no, it is {v}.", None),
    ("marker_spanish", "unasked", ALL, "Respuesta: {v}", None),
    ("marker_french", "unasked", ALL, "Réponse : {v}", None),
    ("marker_german", "unasked", ALL, "Antwort: {v}", None),
)
# formats that place the answer themselves
_PLACED = (
    ("last_line_only", "position", ALL, _last_line_only),
    ("answer_first", "position", ALL, _answer_first),
    ("trailing_explanation", "unasked", ALL, _trailing_explanation),
)
# how real prompts ask for each prescribed format (a mention of a letter or an option: multiple choice only)
INSTRUCTIONS: dict[str, tuple[str, ...]] = {
    "letter_bare": (
        "Answer with only the letter of the correct option.",
        "Answer with the option's letter from the given choices directly.",
    ),
    "letter_parens": ("Answer with the letter of the correct option in parentheses, e.g. (A).",),
    "letter_paren_right": ('Answer with the letter of the correct option followed by ")", e.g. "A)".',),
    "letter_brackets": ("Give the letter of the correct option in square brackets, e.g. [A].",),
    "letter_repeated": ('Answer with the letter of the correct option three times, separated by spaces: "C C C".',),
    "letter_repeated_joined": (
        "Once you have your answer, please duplicate that letter five times in a single string. "
        "For example, if the answer is C, then write CCCCC.",
    ),
    "letter_lower": ("Answer with the lower-case letter of the correct option (a, b, c, …).",),
    "option_text": (
        "Answer with the text of the correct option, not its letter.",
        "Write out the correct choice in full.",
    ),
    "option_letter_text": ('Answer with the letter and the text of the correct option, e.g. "B) Paris".',),
    "option_number": ("Answer with the number of the correct option (1 for the first option, 2 for the second, …).",),
    "answer_colon": (
        'End your response with a line of the form "Answer: X", where X is your answer.',
        "Give your final answer on a line that starts with 'Answer:'.",
    ),
    "the_answer_is": (
        'Finish your answer with "the answer is (X)" where X is the correct letter choice.',
        'Think step by step, then finish your response with "The answer is X."',
    ),
    "final_answer": (
        "Answer only with 'Final answer: X', where X is the answer. Write nothing else.",
        "You may reason step by step, but end your response with 'Final answer: X'.",
    ),
    "gsm8k_hashes": ('Solve the problem step by step, then write the final numeric answer after "####".',),
    "answer_upper": (
        "The last line of your response should be of the form 'ANSWER: $ANSWER' (without quotes), "
        "where $ANSWER is your answer.",
    ),
    "boxed": (
        "Put your final answer within \\boxed{}.",
        "Please reason step by step, and put your final answer within \\boxed{}.",
    ),
    "dollar_math": ("Write your final answer in LaTeX between dollar signs, e.g. $\\frac{1}{2}$.",),
    "paren_math": ("Write your final answer as inline LaTeX math, \\( … \\).",),
    "bold": ("Write your final answer in bold (**answer**).",),
    "json_object": (
        'Return your answer as a JSON object with the key "answer".',
        'Respond in JSON: {"answer": <your answer>}.',
    ),
    "xml_tag": (
        "Wrap your final answer in <answer></answer> tags.",
        "Put your final answer between <answer> and </answer>.",
    ),
    "html_bold": ("Format your final answer as HTML in bold: <b>answer</b>.",),
    "code_block": ("Put your final answer alone in a fenced code block (```).",),
    "last_line_only": ("Give your final answer on the last line, alone, with nothing else on that line.",),
    "answer_first": ("State your answer first, then explain your reasoning.",),
}


def _build_formats() -> dict[str, AnswerFormat]:
    """``FORMATS``, in family order: each format of ``_STATEMENTS`` and ``_PLACED`` with its instructions
    (prescribed: every family but ``unasked``)."""
    made = [
        AnswerFormat(
            name,
            family,
            categories,
            family != "unasked",
            INSTRUCTIONS.get(name, ()),
            _statement(template),
            _statement(malformed) if malformed else None,
        )
        for name, family, categories, template, malformed in _STATEMENTS
    ]
    made += [
        AnswerFormat(name, family, categories, family != "unasked", INSTRUCTIONS.get(name, ()), renderer)
        for name, family, categories, renderer in _PLACED
    ]
    made.sort(key=lambda f: FAMILIES.index(f.family))  # stable: the table's order within a family
    return {f.name: f for f in made}


FORMATS: dict[str, AnswerFormat] = _build_formats()


def formats_for(category: str, families: Sequence[str] | None = None, exclude: Sequence[str] = ()) -> list[str]:
    """The names of the formats that apply to ``category``, in ``families`` (all when None) and not in
    ``exclude``, in ``FORMATS`` order."""
    return [
        f.name
        for f in FORMATS.values()
        if category in f.categories and (families is None or f.family in families) and f.family not in exclude
    ]


def check_families(names: Sequence[str]) -> list[str]:
    """``names`` as a list when each is a known family; a ValueError naming the unknown ones otherwise."""
    names = [n.strip() for n in names]
    unknown = [n for n in names if n not in FAMILIES]
    if unknown or not names:
        raise ValueError(f"unknown format families {unknown or names}; choose from {', '.join(FAMILIES)}")
    return names


def instructions_for(answer_format: AnswerFormat, category: str, lettered: bool = True) -> tuple[str, ...]:
    """The format's instructions that fit ``category``: one that speaks of an option only for multiple choice,
    of a letter only for multiple choice with ``lettered`` options."""
    if category == "multiple_choice":
        unfit = None if lettered else r"\bletter\b"
    else:
        unfit = r"\b(?:letter|option)\b"
    return tuple(i for i in answer_format.instructions if unfit is None or not re.search(unfit, i))


# ---- honest answers --------------------------------------------------------------------------------


def matches_reference(answer: str, references: Sequence[str], language: str | None = None) -> bool:
    """Whether ``answer`` may name a reference, read generously (a wrong answer must be clearly wrong): the
    same ``normalize_answer`` form, the same number, or one's words all among the other's (``qa_normalize``,
    a reference's alias forms). An empty answer counts as matching (it is never rendered as wrong)."""
    norm = normalize_answer(answer)
    if not norm:
        return True
    value = number_value(answer, language)
    words = set(qa_normalize(answer, language).split())
    for reference in references:
        if normalize_answer(reference) == norm:
            return True
        if value is not None and number_value(reference, language) == value:
            return True
        for form in alias_forms(reference, language):
            form_words = set(form.split())
            if words and form_words and (form_words <= words or words <= form_words):
                return True
    return False


class _Options(NamedTuple):
    labels: list[str]  # "A", "B" … or "1", "2" …
    texts: list[str]
    right: set[str]  # the labels the references name
    text_references: list[str]  # the references that are not a label


def _as_label(text: str | None, labels: Sequence[str]) -> str | None:
    """The option label ``text`` is ("(b)", "B." → "B"; "2" where options are numbered), or None; any single
    letter where the question lists no options."""
    norm = normalize_answer(text).upper()
    if norm in labels or not labels and len(norm) == 1 and norm.isalpha():
        return norm
    return None


def _options(record: dict) -> _Options:
    """The options a multiple-choice question lists (lettered or numbered) and the labels its references name."""
    labels, texts = parse_options(record.get("question") or "", language_of(record))
    right, text_references = set(), []
    for reference in record["references"]:
        label = _as_label(reference, labels)
        if label:
            right.add(label)
            continue
        text_references.append(reference)
        right.update(lab for lab, text in zip(labels, texts) if normalize_answer(text) == normalize_answer(reference))
    return _Options(labels, texts, right, text_references)


def _label_of(answer: str | None, options: _Options) -> str | None:
    """The option an answer names: its label, or the option whose text it is."""
    if not answer:
        return None
    return _as_label(answer, options.labels) or next(
        (lab for lab, text in zip(options.labels, options.texts) if normalize_answer(text) == normalize_answer(answer)),
        None,
    )


def _wrong_labels(options: _Options, language: str | None) -> list[str]:
    """The options that are clearly wrong: a label no reference names, a text that matches no reference."""
    return [
        label
        for label, text in zip(options.labels, options.texts)
        if label not in options.right
        and not (options.text_references and matches_reference(text, options.text_references, language))
    ]


class _Choice(NamedTuple):
    value: str
    option_text: str | None
    own: bool  # the candidate's own answer: its reasoning leads to it and is kept


def _mc_choice(record: dict, rng: random.Random) -> _Choice | None:
    options, language = _options(record), language_of(record)
    text_of = dict(zip(options.labels, options.texts))
    if record["label"] == 1:
        label = _label_of(record["references"][0], options)
        return None if label is None else _Choice(label, text_of.get(label), True)
    if not options.labels or not options.right:
        return None  # no options to choose a wrong one from, or no way to tell the right one
    wrong = _wrong_labels(options, language)
    extracted = _label_of(extract_answer(record["candidate"], options.labels, language)[0], options)
    if extracted in wrong:
        return _Choice(extracted, text_of[extracted], True)
    if not wrong:
        return None
    letter = rng.choice(wrong)
    return _Choice(letter, text_of[letter], False)


# an answer that says there is none: right where the reference is "unanswerable", so never a wrong answer
_REFUSAL = re.compile(r"\b(?:not?|none|cannot|can't|unknown|unanswerable|impossible|n't)\b", re.IGNORECASE)


def _choice(record: dict, rng: random.Random) -> _Choice | None:
    """The answer to render (``answer_of``) and whether it is the candidate's own."""
    if record.get("label") not in (0, 1) or not record.get("references"):
        return None
    if record.get("category") == "multiple_choice":
        choice = _mc_choice(record, rng)
    elif record["label"] == 1:
        choice = _Choice(record["references"][0], None, True)
    else:
        choice = _wrong_own_answer(record)
    return None if choice is None or len(choice.value) > MAX_ANSWER_CHARS else choice


def _wrong_own_answer(record: dict) -> _Choice | None:
    """The extracted answer of a label-0 candidate when it is clearly wrong: no refusal, matching no reference."""
    answer = extract_answer(record["candidate"], None, language_of(record))[0]
    if not answer or _REFUSAL.search(answer) or matches_reference(answer, record["references"], language_of(record)):
        return None
    return _Choice(answer, None, True)


def answer_of(record: dict, rng: random.Random | None = None) -> tuple[str, str | None] | None:
    """``(answer, option text)`` to render for a labelled record, or None (the row is not rendered).

    Label 1: the first reference (multiple choice: its option letter and that option's text). Label 0: a
    wrong answer: for multiple choice the candidate's extracted option when it is clearly wrong, else another
    clearly wrong option chosen by ``rng`` (the question must list lettered options); for other categories the
    candidate's extracted answer when it matches no reference (``matches_reference``) and is short. A label-0
    answer never matches a reference."""
    choice = _choice(record, rng or random.Random(str(record.get("id"))))
    return None if choice is None else (choice.value, choice.option_text)


# ---- the candidate's reasoning ---------------------------------------------------------------------

_SENTENCE_BREAK = re.compile(r"[.!?]\s+")
_DANGLING_MARKER = re.compile(r"^[\s*_#>-]*[^\n]{0,40}:[\s*_]*$")


def _mention(answer: str) -> re.Pattern:
    """Where a candidate states ``answer``: a letter as a letter (upper case, alone), else the answer as
    written, not inside a word."""
    answer = answer.strip()
    if len(answer) == 1 and answer.isalpha():
        return re.compile(rf"(?<![A-Za-z0-9]){re.escape(answer.upper())}(?![A-Za-z0-9])")
    left = r"(?<!\w)" if answer[:1].isalnum() else ""
    right = r"(?!\w)" if answer[-1:].isalnum() else ""
    return re.compile(left + re.escape(answer) + right, re.IGNORECASE)


def _sentence_head(line: str, position: int) -> str:
    """The part of ``line`` before the sentence that holds ``position``."""
    ends = [m.end() for m in _SENTENCE_BREAK.finditer(line, 0, position)]
    return line[: ends[-1]].rstrip() if ends else ""


def split_statement(candidate: str, answer: str | None, rule: str | None = None) -> tuple[str, bool]:
    """``(reasoning, found)``: the candidate without its final-answer statement (the last line, or that
    line's last sentence, that states the extracted ``answer``, and what follows it; the first line when
    ``rule`` is ``option-first``) and whether the statement was found. Not found: the whole candidate is the
    reasoning, unless it is a bare short answer, one line and no sentence (then there is none, and ``found`` is
    True)."""
    text = candidate.strip()
    if answer and rule == "option-first":
        return (text.split("\n", 1)[1].strip() if "\n" in text else ""), True
    if answer and answer.strip():
        lines = text.split("\n")
        pattern = _mention(answer)
        for i in reversed(range(len(lines))):
            hits = list(pattern.finditer(lines[i]))
            if hits:
                kept = [*lines[:i], _sentence_head(lines[i], hits[-1].start())]
                while kept and (not kept[-1].strip() or _DANGLING_MARKER.match(kept[-1])):
                    kept.pop()  # "Final answer:" alone on the line before the answer
                return "\n".join(kept).strip(), True
    if "\n" not in text and len(text) <= BARE_ANSWER_CHARS and not is_prose(text):
        return "", True
    return text, False


def reasoning_of(record: dict) -> tuple[str, bool]:
    """``split_statement`` of a record's candidate, with the answer ``extract_answer`` reads."""
    answer, rule = extract_answer(record["candidate"], options_of(record), language_of(record))
    return split_statement(record["candidate"], answer, rule)


# ---- rendering -------------------------------------------------------------------------------------


def _perturbed_number(value: str, references: Sequence[str], rng: random.Random, language: str | None) -> str | None:
    """A different number near ``value`` that matches no reference, or None when ``value`` is no number."""
    number = number_value(value, language)
    if number is None:
        return None
    shifts = [number + 1, number - 1, number * 2, number + 10, number - 10, number * 10, number + Fraction(1, 2)]
    rng.shuffle(shifts)
    return next((fmt(x) for x in shifts if not matches_reference(fmt(x), references, language)), None)


def _distractor(record: dict, value: str, rng: random.Random) -> str | None:
    """A wrong alternative to name beside ``value``: another clearly wrong option, or a different number."""
    language = language_of(record)
    if record["category"] == "multiple_choice":
        wrong = [x for x in _wrong_labels(_options(record), language) if x != value]
        return rng.choice(wrong) if wrong else None
    return _perturbed_number(value, [*record["references"], value], rng, language)


def _answer(record: dict, value: str, option_text: str | None, rng: random.Random) -> Answer:
    number = None
    if record["category"] == "multiple_choice" and len(value) == 1 and "A" <= value <= "Z":
        number = ord(value) - ord("A") + 1
    elif record["category"] == "multiple_choice" and value.isdigit():
        number = int(value)
    return Answer(value, option_text, number, _distractor(record, value, rng), record["category"])


def _instruction(
    record: dict, answer_format: AnswerFormat, rng: random.Random, instruction
) -> tuple[str | None, str, str | None]:
    """``(instruction text, meta.instruction, the format it asks for)`` for ``instruction`` True, False or
    "mismatch" (another prescribed format of the category, whose instructions differ from this one's)."""
    if instruction not in (True, False, "mismatch"):
        raise ValueError(f"instruction must be True, False or 'mismatch', got {instruction!r}")
    category = record["category"]
    lettered = all(label.isalpha() for label in _options(record).labels) if category == "multiple_choice" else True
    own = instructions_for(answer_format, category, lettered)
    if instruction == "mismatch":
        others = [
            f
            for f in FORMATS.values()
            if f.name != answer_format.name
            and category in f.categories
            and f.prescribed
            and instructions_for(f, category, lettered)
            and not set(own) & set(instructions_for(f, category, lettered))
        ]
        if others:
            other = rng.choice(others)
            return rng.choice(instructions_for(other, category, lettered)), "mismatch", other.name
    elif instruction is True and own:
        return rng.choice(own), "asked", answer_format.name
    return None, "none", None


def _rewritten(
    record: dict, answer_format: AnswerFormat, candidate: str, rng, instruction, augment: str | None
) -> dict:
    """A deep copy of ``record`` with ``candidate``, the instruction appended to its question, its
    ``meta`` saying how it was made, ``label_source`` ``synthetic:answer-format(from <the row's>)`` and a suffixed ``id``."""
    text, asked, asked_format = _instruction(record, answer_format, rng, instruction)
    new = copy.deepcopy(record)
    new["candidate"] = candidate
    if text:
        new["question"] = f"{record['question']}\n{text}" if record.get("question") else text
    meta = dict(new.get("meta") or {})
    meta.update(answer_format=answer_format.name, format_family=answer_format.family, instruction=asked)
    meta["rendered_from"] = record.get("id")
    if asked == "mismatch":
        meta["instruction_format"] = asked_format
    if augment:
        meta["augment"] = augment
    new["meta"] = meta
    # the label is the original row's, carried over by a program: the source says both
    new["label_source"] = synthetic_label_source("synthetic:answer-format", record.get("label_source"))
    new["id"] = f"{record.get('id')}~{answer_format.name}" + (f"~{augment.replace('_', '-')}" if augment else "")
    return new


def _format(format_name: str) -> AnswerFormat:
    if format_name not in FORMATS:
        raise ValueError(f"unknown answer format {format_name!r}; choose from {', '.join(FORMATS)}")
    return FORMATS[format_name]


def render(record: dict, format_name: str, rng: random.Random, instruction=True) -> dict | None:
    """A new record whose candidate states ``answer_of``'s answer in format ``format_name`` after the
    candidate's reasoning (``reasoning_of``; none when the answer is another option than the candidate's
    own), the label kept. ``instruction``: True appends the format's instruction to the question, False
    none, "mismatch" another prescribed format's (asked for X, answered in Y: the label is kept, the judge
    reads content). None when the format does not apply to the category or the row has no honest answer."""
    answer_format = _format(format_name)
    if record.get("category") not in answer_format.categories:
        return None
    choice = _choice(record, rng)
    if choice is None:
        return None
    reasoning = reasoning_of(record)[0] if choice.own else ""
    candidate = answer_format.render(_answer(record, choice.value, choice.option_text, rng), reasoning, rng)
    return None if candidate is None else _rewritten(record, answer_format, candidate, rng, instruction, None)


POOL_TRIES = 64  # records of the pool tried for another record's answer


def _other_span(record: dict, rng: random.Random, pool: Sequence[dict]) -> str | None:
    """The first reference of a random record of ``pool`` in the same category that matches none of ``record``'s
    references (``POOL_TRIES`` tries)."""
    language = language_of(record)
    for _ in range(POOL_TRIES if pool else 0):
        other = rng.choice(pool)
        span = (other.get("references") or [""])[0]
        if other.get("category") != record["category"] or not span or len(span) > MAX_ANSWER_CHARS:
            continue
        if not matches_reference(span, record["references"], language):
            return span
    return None


def _wrong_answer(record: dict, rng: random.Random, pool: Sequence[dict]) -> _Choice | None:
    """A clearly wrong answer for a label-1 row: another option; a different number; another record's answer."""
    language, references = language_of(record), record["references"]
    if record["category"] == "multiple_choice":
        options = _options(record)
        wrong = _wrong_labels(options, language) if options.right else []
        letter = rng.choice(wrong) if wrong else None
        return None if letter is None else _Choice(letter, dict(zip(options.labels, options.texts))[letter], True)
    if record["category"] != "open_math":
        span = _other_span(record, rng, pool)
        if span:
            return _Choice(span, None, True)
    number = _perturbed_number(references[0], references, rng, language)
    return None if number is None else _Choice(number, None, True)


ANSWER_FIRST_FORMATS = ("answer_first", "trailing_explanation")  # the reasoning follows the answer


def content_error(
    record: dict, format_name: str, rng: random.Random, instruction=True, pool: Sequence[dict] = ()
) -> dict | None:
    """A label-1 row re-rendered in format ``format_name`` with a clearly wrong answer, label 0,
    ``meta.augment = "content_error"``: another option (multiple choice), a different number, or for spans
    another record's reference from ``pool`` (same category); None for other rows and when no wrong answer is
    found. The reasoning is kept without its statement of the right answer; none is kept when that statement
    was not found, or when the format puts the answer before the reasoning (the last committed answer counts)."""
    answer_format = _format(format_name)
    if (
        record.get("label") != 1
        or record.get("category") not in answer_format.categories
        or not record.get("references")
    ):
        return None
    reasoning, found = reasoning_of(record)
    wrong = _wrong_answer(record, rng, pool)
    if wrong is None:
        return None
    if not found or format_name in ANSWER_FIRST_FORMATS:
        reasoning = ""
    candidate = answer_format.render(_answer(record, wrong.value, wrong.option_text, rng), reasoning, rng)
    if candidate is None:
        return None
    new = _rewritten(record, answer_format, candidate, rng, instruction, "content_error")
    new["label"] = 0
    return new


def format_only_error(record: dict, format_name: str, rng: random.Random, instruction=True) -> dict | None:
    """A label-1 row rendered in a malformed ``format_name`` (an unclosed tag or brace, a JSON typo, the
    letter in the wrong case) whose content is right: label 1 kept, ``meta.augment = "format_only"``. None
    for other rows and for formats without a malformed variant."""
    answer_format = _format(format_name)
    if (
        record.get("label") != 1
        or answer_format.malform is None
        or record.get("category") not in answer_format.categories
    ):
        return None
    choice = _choice(record, rng)
    if choice is None:
        return None
    answer, reasoning = _answer(record, choice.value, choice.option_text, rng), reasoning_of(record)[0]
    candidate = answer_format.malform(answer, reasoning, rng)
    if candidate is None or candidate == answer_format.render(answer, reasoning, rng):
        return None  # nothing to break: an option text in upper case that has no letters
    return _rewritten(record, answer_format, candidate, rng, instruction, "format_only")


# ---- augmenting a record list ----------------------------------------------------------------------


def _check_rates(share: float, **rates: float) -> None:
    for name, value in {"share": share, **rates}.items():
        if not 0 <= value <= 1:
            raise ValueError(f"{name}={value!r} must be between 0 and 1")
    if rates["instruction_rate"] + rates["mismatch_rate"] > 1:
        raise ValueError("instruction_rate + mismatch_rate must be at most 1")


def _instruction_mode(rng: random.Random, instruction_rate: float, mismatch_rate: float):
    draw = rng.random()
    return "mismatch" if draw < mismatch_rate else draw < mismatch_rate + instruction_rate


def _rendered_copy(
    record: dict, names: list[str], rng: random.Random, rates: dict, pool: Sequence[dict]
) -> dict | None:
    """One rendered copy of ``record`` in the first of the shuffled ``names`` that renders it: a content
    error or a format-only error at their rates (label-1 rows), else a plain rendering."""
    names = list(names)
    rng.shuffle(names)
    instruction = _instruction_mode(rng, rates["instruction_rate"], rates["mismatch_rate"])
    draw = rng.random()
    if record.get("label") == 1 and draw < rates["content_errors"]:
        made = (content_error(record, name, rng, instruction, pool) for name in names)
    elif record.get("label") == 1 and draw < rates["content_errors"] + rates["format_only"]:
        made = (format_only_error(record, name, rng, instruction) for name in names)
    else:
        made = iter(())
    deliberate = next((r for r in made if r is not None), None)
    if deliberate is not None:
        return deliberate
    return next((r for r in (render(record, name, rng, instruction) for name in names) if r is not None), None)


def rendered_copies(
    records: Sequence[dict],
    share: float,
    seed: int,
    families: Sequence[str] | None = None,
    exclude_families: Sequence[str] | None = None,
    content_errors: float = 0.1,
    format_only: float = 0.05,
    instruction_rate: float = 0.7,
    mismatch_rate: float = 0.15,
) -> list[dict]:
    """The rendered copies ``augment`` adds (see there), in the order of the records they come from."""
    rates = dict(
        content_errors=content_errors,
        format_only=format_only,
        instruction_rate=instruction_rate,
        mismatch_rate=mismatch_rate,
    )
    _check_rates(share, **rates)
    families = check_families(families) if families is not None else None
    exclude = check_families(exclude_families) if exclude_families else []
    chosen = sorted(random.Random(seed).sample(range(len(records)), round(share * len(records))))
    copies = []
    for index in chosen:
        record = records[index]
        names = formats_for(record.get("category"), families, exclude)
        rng = random.Random(f"{seed}/{record.get('id')}/{index}")
        made = _rendered_copy(record, names, rng, rates, records) if names else None
        if made is not None:
            copies.append(made)
    return copies


def augment(records: Sequence[dict], share: float, seed: int, **options) -> list[dict]:
    """The records, unchanged, then one rendered copy of a seeded random ``share`` (0..1) of them, each in a
    random applicable format (``options``, as ``rendered_copies`` takes them: of ``families``, not of
    ``exclude_families``). A label-1 copy is a ``content_error`` with probability ``content_errors`` and a
    ``format_only_error`` with probability ``format_only``; a copy's question carries its format's instruction with
    probability ``instruction_rate``, another format's (mismatch) with probability ``mismatch_rate``, none otherwise.
    A record that no format renders honestly gets no copy. Deterministic for a seed."""
    return [*records, *rendered_copies(records, share, seed, **options)]


# ---- the documented table --------------------------------------------------------------------------

EXAMPLE_ANSWERS = {
    "multiple_choice": Answer("B", "Paris", 2, "C", "multiple_choice"),
    "open_math": Answer("42", None, None, "24", "open_math"),
    "open_qa": Answer("Paris", None, None, None, "open_qa"),
    "context_extraction": Answer("1961", None, None, None, "context_extraction"),
    "other": Answer("yes", None, None, None, "other"),
}


def _code(text: str) -> str:
    """``text`` as one Markdown code span in a table cell: newlines as ↵, pipes escaped."""
    text = text.replace("\n\n", " ↵↵ ").replace("\n", " ↵ ").replace("|", "\\|")
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    return f"{fence} {text} {fence}" if fence != "`" else f"`{text}`"


def example_rendering(answer_format: AnswerFormat) -> str:
    """The format's rendering of an example answer of its first category, ``…`` standing for the reasoning."""
    answer = EXAMPLE_ANSWERS[answer_format.categories[0]]
    return answer_format.render(answer, REASONING_MARK, random.Random(0)) or ""


def markdown_table() -> str:
    """The table of every format in ``docs/formats.md``: name, family, categories, prescribed or unasked,
    an example rendering and an example instruction."""
    rows = [
        "| format | family | categories | kind | example | example instruction |",
        "|---|---|---|---|---|---|",
    ]
    for f in FORMATS.values():
        categories = "all" if f.categories == ALL else ", ".join(f.categories)
        kind = "prescribed" if f.prescribed else "unasked"
        instruction = _code(f.instructions[0]) if f.instructions else "—"
        rows.append(
            f"| `{f.name}` | {f.family} | {categories} | {kind} | {_code(example_rendering(f))} | {instruction} |"
        )
    return "\n".join(rows) + "\n"
