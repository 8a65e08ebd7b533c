"""Rule-based extraction of a candidate's final answer (pure string scanning, never raises).

``final_answer`` looks, in this order, for: the last "Final answer:" marker, the last
``\\boxed{…}`` / ``\\fbox{…}`` (nested braces kept), the last "the answer is X" (or an
"Answer: X" line), a trailing option letter, a listed option label that opens the answer with its
text (given the question's labels: "A. Hanoi", "* (E) February"), the value stated in the concluding sentence
("Therefore, there are 5,050 triples such that a + b + c = 99." → 5,050), and the last number.
A marker followed by a whole sentence ("Final Answer: The smallest value of x^2 + 1 is 1.")
gives the value that sentence states. ``extract_answer`` also says which rule found the answer.
``number_value`` reads an answer written only as a number ("1,875", "\\frac{57}{2}", "4 1/3",
"one hundred ninety-five") and ``fmt`` writes a number canonically.

Languages: the functions that read a candidate take an optional ``language`` (ISO 639-1, a record's
``meta.language``, ``language_of``). ``en``, None and any language without rules here read the text by the
English rules above, unchanged. French, German, Spanish and Korean (``LANGUAGE_RULES``) add their markers
("Réponse finale :", "Die Antwort ist", "La respuesta es", "정답:", "최종 답:") to the English ones, read
numbers in the language's notation (fr/de/es: "3,5" = 3.5, "1.000" and "1 000" = 1000, rewritten as "3.5" and
"1000" so that the comparison rules read them; multiple-choice answers, whose options are compared as
written, are left as they are), small number words ("sept", "zwölf", "veinte", "일곱", "삼") and, for Korean,
circled option numbers ("③" = the third option) and the copula or counter after an answer ("B입니다", "7개").
Their markers, number words and notation are in ``core.languages``; the category of a row is read by
``core.categories``.
"""

from __future__ import annotations

import re
import unicodedata
from fractions import Fraction

from bertjudge.core.languages import (
    CIRCLED,
    KO_COPULA,
    KO_COUNTER,
    LANGUAGE_EDGE,
    LANGUAGE_MARKERS,
    PICKED_NUMBER,
    PROSE_ANY,
    UNIT_WORDS,
    LanguageRules,
    as_written,
    circled_as_numbers,
    delocalize,
    fold,
    option_number,
    word_table,
)

_FINAL = re.compile(r"final\s+answer\s*\**\s*(?::|\bis\b\s*:?)\s*\**", re.IGNORECASE)
_ANSWER_IS = re.compile(
    r"\bthe\s+(?:correct\s+|right\s+)?answer\s+(?:is|would\s+be|should\s+be)\s*:?"
    r"|^[ \t>#*_-]*answer[ \t*_]*:",
    re.IGNORECASE | re.MULTILINE,
)
_BOX = re.compile(r"\\(?:boxed|fbox)\s*\{")
_OPTION_LINE = re.compile(
    r"(?:^|\b(?:answer|option|choice)(?:\s+is)?\s*[:\-]?\s*)[(\[]?([A-J])[)\]]?[.:]?$", re.IGNORECASE
)
_OPTION = re.compile(r"^[(\[]?([A-Za-z])[)\]]?[.:]?$")
# a line that opens with an option label and text: "A. Hanoi", "(B) Paris", "- **C)** blue", "(4) Mg" (not "A leaf…")
_OPTION_FIRST = re.compile(r"^\s*(?:[-*][ \t]+)?(?:\*\*)?(?:[(\[]([A-J]|\d{1,2})[)\]]|([A-J])[).:])(?:\*\*)?[ \t]+\S")
_OPTION_PREFIX = re.compile(r"^[(\[]?([A-J])(?:[)\]]|[.:])?(?:\s|$)")
_NUMBER = re.compile(r"(?<![\w.,])[-+−]?(?:(?:\d{1,3}(?:,\d{3})+(?!\d)|\d+)(?:\.\d+)?|\.\d+)(?:/\d+)?")
_SENTENCE_END = re.compile(r"\.\s")
MAX_SENTENCE_CHARS = 400
# the value a concluding sentence states: "is 5", "are 2,001,000 terms", "= 89", "is congruent to 0",
# "is \\( \\frac{3}{2} \\)"; not "is 3 times …", "is 1 - 4ab/…", "is 2x + 1"
_COPULA = re.compile(
    r"(?:\b(?:is|are|be|was|were|equals?|(?:will|would)\s+have|gives?|yields?)\b"
    r"|\b(?:equal|congruent|equivalent|simplifies|evaluates|reduces|amounts|comes)\s+to\b|=|≡|≈|\\equiv\b|\\approx\b)"
    r"(?:\s+(?:only|exactly|just|simply|precisely|then|thus|therefore|also|still|indeed|actually|now|"
    r"approximately|about|around|roughly|nearly|"
    r"(?:equal|congruent|equivalent)\s+to|given\s+by|a\s+total\s+of)\b)*\s*",
    re.IGNORECASE,
)
_VALUE = re.compile(
    r"[-+−]?\d*\s*(?:√|sqrt)\s*\(?\d+\)?(?:\s*/\s*\d+)?"
    r"|[-+−]?(?:(?:\d{1,3}(?:,\d{3})+(?!\d)|\d+)(?:\.\d+)?|\.\d+)(?:\s*/\s*\d+)?(?:\s*%)?"
)
_VALUE_STOP = re.compile(
    r"\s*(?:[*/^×·=<>≤≥!_]|\\(?:cdot|times|div)\b|[-+−]\s*[\w(\\$])|\((?!\s*mod\b)|[A-Za-z\d]|\.\d"
    r"|\s+(?:times|more|less|fewer|greater|smaller|larger|than|plus|minus|over|divided|multiplied)\b"
    r"|\s+\d+\s*/\s*\d"  # a mixed number: "12 1/2"
    r"|\s+(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b",  # dates: "is 26 March 1950"
    re.IGNORECASE,
)
# a value that starts a list or a hedge: "are $0$ and $k$", "is 11, or possibly 51", "are 0, 7, 14"
_LIST = re.compile(
    r"(?:\s*\([^()]*\))?(?:\s*,?\s+or\b|\s*,\s*(?:and\s+|or\s+)?(?:[-+−]?\$?\d|\$|\\\()"
    r"|\s*,?\s+and\s+(?:[-+−]?\$?\d|\$|\\\(|\())",
    re.IGNORECASE,
)
_PREPOSITION = re.compile(r"\b(?:of|by|mod|modulo|than|from|to|under|over|between|within|with)\s*$", re.IGNORECASE)
_HEDGE = re.compile(r"\b(?:could|might|may|possibly|perhaps|either)\s*$", re.IGNORECASE)
_MATH_OPEN = (("$$", "$$"), ("$", "$"), ("\\(", "\\)"), ("\\[", "\\]"))
_LATEX_WORD = re.compile(r"\\(?:[dt]?frac|sqrt|cdot|times|left|right|infty|pi|dfrac|tfrac|,|!|;| )")
_LATEX_FRAC = re.compile(r"\\[dt]?frac\s*\{\s*([-+]?\d+(?:\.\d+)?)\s*\}\s*\{\s*(\d+(?:\.\d+)?)\s*\}")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(\\$*])|\n+")
_ASIDE = re.compile(
    r"^[\s*_#>(]*(?:note|n\.b\.|please|i hope|hope this|let me know|feel free|remember)\b", re.IGNORECASE
)
_PROSE = re.compile(r"\b[A-Za-z]{2,}(?:[ ,]+[A-Za-z]{2,}\b){2,}")
_CLAUSE_END = re.compile(r"[.,;!?]\s")
_EMPHASIS = "*_`"
_EDGE_PUNCT = " \t\n.,;:!?\"'“”‘’"
# answer options listed in a question: one per line ('A.', '(B)', '- **C**:', '(1)', '2)') or inline '(A) x (B) y'
_LISTED_OPTION = re.compile(
    r"^[ \t]*(?:[-*][ \t]+)?(?:\*\*)?(?:\(([A-J]|\d{1,2})\)|([A-J]|\d{1,2})(?:\*\*)?[.):])"
    r"(?:\*\*)?:?[ \t]+(\S.*?)[ \t]*$",
    re.MULTILINE,
)
_INLINE_OPTION = re.compile(r"\(([A-J])\)\s*(.+?)(?=\s*\([A-J]\)|\n|$)")


def boxed(text: str) -> str | None:
    """The content of the last balanced ``\\boxed{…}`` or ``\\fbox{…}``, nested braces kept."""
    if not isinstance(text, str):
        return None
    stop = len(text)
    for match in reversed(list(_BOX.finditer(text))):
        depth, start = 1, match.end()
        for i in range(start, stop):  # a box that is still open at the next box cannot close
            char = text[i]
            if char == "{":
                depth += 1
            elif char == "}":
                depth -= 1
                if depth == 0:
                    return text[start:i].strip()
        stop = match.start()
    return None


def _strip_math(s: str) -> str:
    """Remove one layer of ``$…$``, ``$$…$$``, ``\\(…\\)`` or ``\\[…\\]`` around the whole string."""
    for left, right in (("$$", "$$"), ("$", "$"), ("\\(", "\\)"), ("\\[", "\\]")):
        if len(s) > len(left) + len(right) and s.startswith(left) and s.endswith(right):
            return s[len(left) : -len(right)].strip()
    return s


def _clean(s: str) -> str:
    """Trim a marker's answer: markdown emphasis, edge punctuation, math delimiters, boxes."""
    inner = boxed(s)
    if inner is not None:
        return inner
    previous = None
    while s != previous:
        previous = s
        s = s.strip(_EDGE_PUNCT).strip(_EMPHASIS)
        s = _strip_math(s)
    return s


def _math_value(text: str, pos: int) -> tuple[str | None, int]:
    """A value-like math span (``$…$``, ``\\(…\\)``…) starting at ``pos`` and where it ends: its
    right-hand side after any ``=``, when that is a number-like expression without variables
    ("\\frac{3}{2}", "2^{1959}"); ``(None, pos)`` otherwise."""
    for left, right in _MATH_OPEN:
        if text.startswith(left, pos):
            end = text.find(right, pos + len(left))
            if end < 0 or end - pos > 400 or right == "$" and text[end + 1 : end + 2].isdigit():
                return None, pos  # not closed, too long, or two prices ("$50 − $32.00")
            inner = re.split(r"=|\\equiv\b|≡", text[pos + len(left) : end])[-1]
            inner = re.sub(r"\\pmod\s*\{[^{}]*\}|\\(?:bmod|mod)\b.*$|\(\s*mod\b[^)]*\)", "", inner)
            inner = (boxed(inner) or inner).strip().rstrip(".,;").strip()
            bare = _LATEX_WORD.sub("", inner)
            if inner and len(inner) <= 80 and not re.search(r"[A-Za-z]", bare) and re.search(r"\d|\\infty|\\pi", inner):
                return inner, end + len(right)
            return None, pos
    return None, pos


def _copula_value(sentence: str, copula: re.Pattern = _COPULA) -> tuple[str | None, bool]:
    """``(value, listed)``: the first value stated by a copula ("is", "are", "=", "equals"…; ``copula``: these and
    a language's) in ``sentence``, or ``(None, True)`` when that value starts a list or a hedge ("are 0 and 7")."""
    for match in copula.finditer(sentence):
        if _HEDGE.search(sentence, 0, match.start()):  # "it could be 26 weeks, or possibly 6"
            return None, True
        pos = match.end()
        value, end = _math_value(sentence, pos)
        if not value:
            number = _VALUE.match(sentence, pos + sentence.startswith("$", pos))  # a price: "is $17.00"
            if not number or _VALUE_STOP.match(sentence, number.end()):
                continue
            value, end = number.group().strip().replace("−", "-"), number.end()
        if _LIST.match(sentence, end):
            return None, True
        return value, False
    return None, False


def _standalone_numbers(sentence: str) -> list[str]:
    """Numbers of ``sentence`` that are not part of an expression (``\\frac{a}{b}`` read as a/b)
    nor the object of a preposition ("multiples of 120", "divisible by 7")."""
    sentence = _LATEX_FRAC.sub(r"\1/\2", sentence)
    found = []
    for match in _NUMBER.finditer(sentence):
        before = sentence[: match.start()].rstrip()
        if before[-1:] and before[-1:] in "*/^×·_=<>≤≥+-−{" or _PREPOSITION.search(before):
            continue
        if _VALUE_STOP.match(sentence, match.end()):
            continue
        found.append(match.group().replace("−", "-"))
    return found


def conclusion_value(text: str, max_sentences: int = 3, language: str | None = None) -> str | None:
    """The value the concluding sentence states: the last of the final ``max_sentences``
    sentences (asides such as "Note: …" skipped) that holds a number gives its first copula value
    ("there are 5,050 triples with a + b + c = 99" → "5,050") or the one number it holds;
    None when that sentence states no clean value, lists several ("are $0$ and $k$") or is longer
    than ``MAX_SENTENCE_CHARS``. ``language``: its copulas count too ("est", "ist", "es") and its numbers are
    read in its notation."""
    rules = _rules(language)
    if rules:
        return _conclusion_value(delocalize(text, rules), max_sentences, rules.copula)
    return _conclusion_value(text, max_sentences, _COPULA)


def _conclusion_value(text: str, max_sentences: int, copula: re.Pattern) -> str | None:
    """``conclusion_value`` with the copulas of a language, numbers as the text writes them."""
    sentence = _concluding_sentence(text, max_sentences)
    if sentence is None:
        return None
    value, listed = _copula_value(sentence, copula)
    if value or listed:
        return value
    numbers = _standalone_numbers(sentence)  # the sentence's one number, when it has no other
    every = {n.replace("−", "-") for n in _NUMBER.findall(_LATEX_FRAC.sub(r"\1/\2", sentence))}
    return numbers[-1] if numbers and every == {numbers[-1]} else None


def _concluding_sentence(text: str, max_sentences: int) -> str | None:
    """The last of the final ``max_sentences`` sentences (asides such as "Note: …" skipped) that
    holds a number, markdown emphasis removed; None when there is none or it is longer than
    ``MAX_SENTENCE_CHARS`` (run-on text, not a concluding sentence)."""
    if not isinstance(text, str):
        return None
    sentences = [s for s in _SENTENCE.split(text[-3000:]) if s.strip() and not _ASIDE.match(s)]
    for sentence in reversed(sentences[-max_sentences:]):
        sentence = re.sub(r"\*\*|__", "", sentence)  # markdown emphasis is not multiplication
        if re.search(r"\d|\\infty", sentence):
            return sentence if len(sentence) <= MAX_SENTENCE_CHARS else None
    return None


_WORD_COPULA = re.compile(
    r"\b(?:is|are|was|were|be|equals?|gives?|yields?|(?:equal|equivalent|congruent|simplifies|reduces)\s+to)\b"
    r"(?:\s+(?:only|exactly|simply|then|thus|therefore|given\s+by|as\s+follows))*(?:\s*:)?",
    re.IGNORECASE,
)
_MATH_SPAN = re.compile(r"\$\$.*?\$\$|\$[^$]*\$|\\\(.*?\\\)|\\\[.*?\\\]", re.DOTALL)
_MATH_DELIMITER = re.compile(r"\$+|\\[()\[\]]")
_TRAILING_CLAUSE = re.compile(r",\s*(?:which|where|since|because|as|so|but)\b", re.IGNORECASE)  # ", which occurs when…"
MAX_STATEMENT_CHARS = 160


def concluding_statement(text: str, max_sentences: int = 3, language: str | None = None) -> str | None:
    """What the concluding sentence states, whole, for answers that are an expression, a tuple or a
    set rather than one number: the rest of the sentence after its first copula outside math ("the
    minimum is 1/n." → "1/n"; "the values are a = 3, b = -7, and c = 4." → "a = 3, b = -7, and c = 4"),
    after its last "=" when it has no such copula ("x^2 + y^2 = (2b + a^3) / (3a)" → "(2b + a^3) / (3a)"),
    or the sentence itself when it is a bare formula ("2^(2n)"); a trailing ", which …" clause is cut.
    The concluding sentence is the last of the final ``max_sentences`` (asides skipped) that holds a
    digit; None when there is none, when it is run-on text, or prose that states nothing by a copula.
    ``language``: its copulas count too, its numbers are read in its notation and its words are prose."""
    rules = _rules(language)
    if rules:
        text = delocalize(text, rules)
    sentence = _concluding_sentence(text, max_sentences)
    if sentence is None:
        return None
    sentence = sentence.strip()
    masked = _MATH_SPAN.sub(lambda m: " " * len(m.group()), sentence)  # copulas outside math only
    copula = (rules.word_copula if rules else _WORD_COPULA).search(masked)
    if copula:
        statement = sentence[copula.end() :]
    elif "=" in sentence:
        statement = sentence[sentence.rindex("=") + 1 :]
    elif (PROSE_ANY if rules else _PROSE).search(masked):
        return None
    else:
        statement = sentence
    statement = _TRAILING_CLAUSE.split(_MATH_DELIMITER.sub("", statement), 1)[0]
    statement = " ".join(statement.split()).strip(_EDGE_PUNCT)
    return statement[:MAX_STATEMENT_CHARS] or None


def is_prose(text: str) -> bool:
    """Whether ``text`` holds three words in a row outside ``$…$`` and ``\\(…\\)``: words, not a formula."""
    return bool(_PROSE.search(re.sub(r"\$[^$]*\$|\\\(.*?\\\)", " ", text)))


def _refine(answer: str) -> str:
    """A marker's answer that is a whole sentence gives the value that sentence states."""
    if is_prose(answer):
        return _copula_value(answer)[0] or answer
    return answer


def _after(text: str, pos: int, end_pattern: re.Pattern) -> str:
    """The answer following a marker ending at ``pos``: the rest of that line (or the next
    non-empty line), up to the first ``end_pattern`` match outside math."""
    line = next((line for line in text[pos : pos + 2000].split("\n") if line.strip()), "")
    end = end_pattern.search(line, max(line.rfind("$"), line.rfind("}")) + 1)  # not inside math
    return _clean(line[: end.start()] if end else line)


def _last_answer_after(pattern: re.Pattern, text: str, end_pattern: re.Pattern) -> str | None:
    for match in reversed(list(pattern.finditer(text))):
        answer = _after(text, match.end(), end_pattern)
        if answer:
            return answer
    return None


def opening_option(text: str, labels, language: str | None = None) -> str | None:
    """The option label that opens ``text`` with its text ("A. Hanoi", "* (E) February", "(4) Mg"),
    when it is one of ``labels`` (those the question lists, ``parse_options``); None otherwise, and
    when a later line opens with a label too (the options listed again, no choice made). Korean
    (``language="ko"``): a circled number opens one too ("③ 파리": the third option)."""
    circled = bool(_rules(language) and _rules(language).circled)
    if circled:
        text = circled_as_numbers(text)
    first, *rest = text.strip().split("\n")
    match = _OPTION_FIRST.match(first)
    label = match and (match.group(1) or match.group(2))
    if circled and label and label.isdigit():  # "③ 파리" is the third option, "C" where they are lettered
        label = option_number(int(label), labels)
    if not label or label.upper() not in {str(x).upper() for x in labels} or any(map(_OPTION_FIRST.match, rest)):
        return None
    return label.upper()


def extract_answer(text: str, options=None, language: str | None = None) -> tuple[str | None, str | None]:
    """``(answer, rule)``: the rule-extracted final answer of a candidate and the rule that found it
    (``final-answer``, ``boxed``, ``answer-is``, ``option``, ``option-first``, ``conclusion`` or ``last-number``;
    the last is the weakest), or ``(None, None)`` when nothing is found. ``options``: the option
    labels the question lists (``parse_options``), for ``option-first`` (``opening_option``).
    ``language``: the candidate's language (``LANGUAGE_RULES``; English rules for any other), see the module
    docstring: its markers and the English ones, numbers in its notation written back in English notation."""
    if not isinstance(text, str) or not text.strip():
        return None, None
    rules = _rules(language)
    if rules is None:
        return _extract(text, options, _FINAL, _ANSWER_IS, _OPTION_LINE, _refine, conclusion_value, None)
    written: dict[str, str] = {}
    text = delocalize(text, rules, written)
    answer, rule = _extract(
        text,
        options,
        rules.final,
        rules.answer_is,
        rules.option_line,
        lambda a: _refine_in(a, rules),
        lambda t: _conclusion_value(t, 3, rules.copula),
        language,
    )
    if answer is None:  # the whole answer is a number in words: "Sept.", "일곱 개"
        spelled = _localized_answer(text.strip(), options, rules)
        return (spelled, "last-number") if re.fullmatch(r"-?\d+", spelled) else (None, None)
    if options:  # multiple-choice answers are compared with the options as the question writes them: "3,45"
        answer = as_written(answer, written)
    return _localized_answer(answer, options, rules), rule


def _extract(
    text, options, final, answer_is, option_line, refine, conclusion, language
) -> tuple[str | None, str | None]:
    """``extract_answer``'s rules in order, with the markers (``final``, ``answer_is``, ``option_line``), the
    ``refine`` step and the ``conclusion`` rule of one language."""
    answer = _last_answer_after(final, text, _SENTENCE_END)
    if answer:  # "Final answer: the correct answer is (C)" → "(C)"
        return refine(_last_answer_after(answer_is, answer, _SENTENCE_END) or answer), "final-answer"
    answer = boxed(text)
    if answer:
        return answer, "boxed"
    answer = _last_answer_after(answer_is, text, _CLAUSE_END)
    if answer:
        return refine(answer), "answer-is"
    last_line = text.strip().rsplit("\n", 1)[-1].strip().strip(_EMPHASIS).strip()
    option = option_line.search(last_line)
    if option:
        return option.group(1).upper(), "option"
    option = opening_option(text, options, language) if options else None
    if option:
        return option, "option-first"
    answer = conclusion(text)
    if answer:
        return answer, "conclusion"
    numbers = _NUMBER.findall(_LATEX_FRAC.sub(r"\1/\2", text[-3000:]))
    return (numbers[-1].replace("−", "-"), "last-number") if numbers else (None, None)


def final_answer(text: str, options=None, language: str | None = None) -> str | None:
    """The rule-extracted final answer of a candidate, or None when nothing is found (``options``,
    ``language``: as for ``extract_answer``)."""
    return extract_answer(text, options, language)[0]


def option_letter(s: str | None) -> str | None:
    """The option letter an answer is or starts with ("(B) Paris", "B because…", "B.", "b)") or None."""
    if not isinstance(s, str):
        return None
    s = s.strip().strip(_EMPHASIS).strip()
    match = _OPTION.match(s) or _OPTION_PREFIX.match(s)
    return match.group(1).upper() if match else None


def normalize_answer(s: str | None) -> str:
    """Case-, whitespace-, emphasis- and edge-punctuation-insensitive form; "(b)", "B." → "B"; a circled
    option number is its number ("③" → "3", as ``extract_answer`` reads it in Korean)."""
    if not isinstance(s, str):
        return ""
    if len(s.strip()) == 1 and s.strip() in CIRCLED:
        return str(CIRCLED.index(s.strip()) + 1)
    previous = None
    while s != previous:
        previous = s
        s = _strip_math(s.strip(_EDGE_PUNCT).strip(_EMPHASIS))
    option = _OPTION.match(s)
    if option:
        return option.group(1).upper()
    if len(s) > 2 and s[0] + s[-1] in ("()", "[]") and s.count(s[0]) == 1:
        s = s[1:-1]
    return " ".join(s.lower().split())


def options_of(record: dict) -> list[str] | None:
    """The option labels a multiple-choice record's question lists (for ``extract_answer``), else None
    (read in the record's language, ``language_of``: Korean circled numbers are labels "1", "2" …)."""
    if record.get("category") != "multiple_choice" or not record.get("question"):
        return None
    return parse_options(record["question"], language_of(record))[0] or None


def parse_options(question: str, language: str | None = None) -> tuple[list[str], list[str]]:
    """(labels, texts) of the answer options listed in a question: one per line ('A.', '(B)', '- C:',
    '(1)', '2)') or inline '(A) x (B) y'; empty lists when none are found. Korean (``language="ko"``):
    lines that open with a circled number ('① 파리') too, labelled '1', '2' …"""
    if _rules(language) and _rules(language).circled:
        question = circled_as_numbers(question)
    found = [(m[1] or m[2], m[3]) for m in _LISTED_OPTION.finditer(question)]
    if len(found) < 2:
        found = [(m[1], m[2].strip()) for m in _INLINE_OPTION.finditer(question)]
    best: list[tuple[str, str]] = []
    run: list[tuple[str, str]] = []
    for label, text in found:  # the longest run of consecutive labels starting at A or 1
        label = label.upper()
        if run and run[-1][0].isalpha() == label.isalpha():  # a run of one kind: letters, or numbers
            last = run[-1][0]
            expected = chr(ord(last) + 1) if label.isalpha() else str(int(last) + 1)
        else:
            expected = None
        if label == expected:
            run.append((label, text))
        else:
            run = [(label, text)] if label in ("A", "1") else []
        if len(run) > len(best):
            best = list(run)
    if len(best) < 2:
        return [], []
    return [label for label, _ in best], [text for _, text in best]


# ----------------------------------------------------------------------------- numbers
ONES = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen"
).split()
TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()
_PLAIN_NUMBER = re.compile(r"([-+]?)\$?([1-9]\d{0,2}(?:,\d{3})+|[1-9]\d*|0)(\.\d+)?|([-+]?)\.(\d+)")
_FRACTION = re.compile(r"([-+]?)(?:(\d+)\s+)?(\d+)\s*/\s*(\d+)")
_SIGNED_LATEX_FRAC = re.compile(r"([-+]?)" + _LATEX_FRAC.pattern)
# an answer with more digits is no number to compare by value (and Python refuses int() past 4,300 digits)
MAX_NUMBER_DIGITS = 1000


def terminating(x: Fraction, places: int = 4) -> bool:
    """Whether x has a decimal expansion of at most ``places`` digits."""
    return (x * 10**places).denominator == 1


def decimal(x: Fraction) -> str:
    """A terminating fraction as a decimal without trailing zeros: 9/2 -> '4.5'."""
    sign, x = ("-" if x < 0 else ""), abs(x)
    whole, rest = divmod(x.numerator, x.denominator)
    digits = ""
    while rest:
        rest *= 10
        digit, rest = divmod(rest, x.denominator)
        digits += str(digit)
    return f"{sign}{whole}" + (f".{digits}" if digits else "")


def fmt(x: Fraction) -> str:
    """Canonical text of a number: integer, short decimal, else 'p/q'."""
    if x.denominator == 1:
        return str(x.numerator)
    if terminating(x):
        return decimal(x)
    return f"{x.numerator}/{x.denominator}"


def _words_value(text: str) -> int | None:
    """'one hundred ninety-five' -> 195, 'minus seven' -> -7 (below a million); None otherwise."""
    total = current = 0
    sign, seen = 1, False
    words = re.split(r"[\s-]+", text.lower())
    if words[-1] == "and":
        return None
    for word in words:
        if word in ("minus", "negative") and not seen:
            sign = -1
        elif word == "and" and seen:
            continue
        elif word in TENS[2:] and current % 100 == 0:
            current, seen = current + 10 * TENS.index(word), True
        elif word in ONES and (
            current % 100 == 0 or current % 100 >= 20 and current % 10 == 0 and ONES.index(word) < 10
        ):  # "ninety-five", not "twenty twelve"
            current, seen = current + ONES.index(word), True
        elif word == "hundred" and 0 < current < 10:
            current *= 100
        elif word == "thousand" and 0 < current < 1000 and not total:
            total, current = current * 1000, 0
        else:
            return None
    return sign * (total + current) if seen else None


def number_value(answer: str | None, language: str | None = None) -> Fraction | None:
    """The value of an answer written only as a number: '1,875', '$1,875.00', '-3.50', '.5', '13/3',
    '4 1/3', '\\frac{57}{2}' (math delimiters and emphasis around it are ignored), or in words
    ('one hundred ninety-five'); None for anything else (units, percents, several numbers, prose) and for
    more than ``MAX_NUMBER_DIGITS`` digits. ``language``: in its notation ("3,5", "1.000", "1 000" in fr/de/es)
    and its number words ("sept", "zwölf", "일곱") too."""
    if not isinstance(answer, str) or sum(c.isdigit() for c in answer) > MAX_NUMBER_DIGITS:
        return None
    rules = _rules(language)
    if rules:
        word = _word_number(answer, rules)
        return Fraction(word) if word is not None else number_value(delocalize(answer, rules))
    s, previous = answer.replace("−", "-"), None
    while s != previous:
        previous = s
        s = _strip_math(s.strip().strip(_EMPHASIS).rstrip(".,;:!").strip())
    if m := _PLAIN_NUMBER.fullmatch(s):
        if m[5] is not None:
            return Fraction(f"{m[4]}0.{m[5]}")
        return Fraction(m[1] + m[2].replace(",", "") + (m[3] or ""))
    if m := _FRACTION.fullmatch(s) or _SIGNED_LATEX_FRAC.fullmatch(s):
        whole, num, den = (m[2] or 0, m[3], m[4]) if m.re is _FRACTION else (0, m[2], m[3])
        if not Fraction(den):
            return None
        value = Fraction(whole) + Fraction(num) / Fraction(den)
        return -value if m[1] == "-" else value
    value = _words_value(s)
    return Fraction(value) if value is not None else None


# ---- open QA: does the answer name a reference? ----------------------------------------------
_QA_ARTICLES = re.compile(r"\b(?:a|an|the)\b")
_QA_PARENTHETICAL = re.compile(r"\s*\([^()]*\)\s*")
_QA_INVERTED = re.compile(r"([^,]+),\s*([^,]+)")


def qa_normalize(text: str, language: str | None = None) -> str:
    """SQuAD-style normal form for open-QA matching: accents and case dropped, punctuation as
    spaces, articles removed ("The Muppet Show." → "muppet show"); ``language``: its articles too
    ("l'Allemagne" → "allemagne"), and Hangul kept whole."""
    text = unicodedata.normalize("NFKD", text)
    text = "".join(c for c in text if not unicodedata.combining(c)).lower()
    text = "".join(" " if unicodedata.category(c).startswith(("P", "S")) else c for c in text)
    rules = _rules(language)
    if rules:
        text = rules.articles.sub(" ", unicodedata.normalize("NFC", text))
    return " ".join(_QA_ARTICLES.sub(" ", text).split())


def alias_forms(reference: str, language: str | None = None) -> list[str]:
    """A reference's normal forms: as written, without a parenthetical ("Matthew Perry
    (disambiguation)" → "matthew perry") and un-inverted ("Perry, Matthew" → "matthew perry")."""
    forms = {reference}
    bare = _QA_PARENTHETICAL.sub(" ", reference).strip()
    if bare:
        forms.add(bare)
        inverted = _QA_INVERTED.fullmatch(bare)
        if inverted:
            forms.add(f"{inverted[2]} {inverted[1]}")
    return sorted(f for f in dict.fromkeys(qa_normalize(form, language) for form in forms) if f)


_QA_BREAK = re.compile(r"([.!?])\s+(?=[A-Z0-9\"“(])|\n+")
_ABBREVIATION = re.compile(r"(?:^|\s)(?:[A-Z][a-z]{0,2}|[A-Z](?:\.[A-Z])+|e\.g|i\.e|vs|approx|c)$")  # Sr. U.S. e.g.


def first_sentence(text: str, max_chars: int = 300) -> str:
    """The first sentence of a text (where an assistant states the answer to a factual question);
    a period after an abbreviation or an initial ("Ross Bagdasarian Sr. (1919–1972)") ends none."""
    text = text.strip()
    for match in _QA_BREAK.finditer(text):
        if match.group(1) and _ABBREVIATION.search(text[: match.start()]):
            continue
        return text[: match.start() + (1 if match.group(1) else 0)][:max_chars]
    return text[:max_chars]


def reference_recall(candidate: str, references: list[str], language: str | None = None) -> float:
    """The largest share of one reference form's words that the candidate contains (1.0: some
    reference appears word for word, in any order; 0.0: none of their words does)."""
    return max(reference_recalls(candidate, references, language), default=0.0)


def reference_recalls(candidate: str, references: list[str], language: str | None = None) -> list[float]:
    """``reference_recall`` of each reference apart (the candidate is normalized once). ``language``: its
    articles are dropped too; in Korean a word counts when a candidate word starts with it (particles and
    the copula follow the noun: "서울입니다" names "서울")."""
    words = set(qa_normalize(candidate, language).split())
    rules = _rules(language)

    def named(token: str) -> bool:
        return token in words or bool(rules and rules.suffixed and any(w.startswith(token) for w in words))

    return [
        max(
            (sum(map(named, form.split())) / len(form.split()) for form in alias_forms(ref, language)),
            default=0.0,
        )
        for ref in references
    ]


# ---- languages: the markers of fr, de, es, ko (``core.languages``) joined to the English ones -----------
def _language(
    final: str, answer_is: str, option_words: str, copula: str, word_copula: str, articles: str, **rest
) -> LanguageRules:
    """A language's rules, its markers joined to the English ones."""
    label = r"[A-J]|[" + CIRCLED + "]" if rest.get("circled") else r"[A-J]"
    return LanguageRules(
        final=re.compile(f"{_FINAL.pattern}|{final}", re.IGNORECASE),
        answer_is=re.compile(f"{_ANSWER_IS.pattern}|{answer_is}", re.IGNORECASE | re.MULTILINE),
        option_line=re.compile(
            rf"(?:^|\b(?:answer|option|choice)(?:\s+is)?\s*[:\-]?\s*|(?:{option_words})\s*[:\-]?\s*)"
            rf"[(\[]?({label})[)\]]?(?:번)?[.:]?$",
            re.IGNORECASE,
        ),
        copula=re.compile(f"{_COPULA.pattern}|{copula}", re.IGNORECASE),
        word_copula=re.compile(f"{_WORD_COPULA.pattern}|{word_copula}", re.IGNORECASE),
        option_prefix=re.compile(rf"(?i:(?:{articles})\s+)?(?i:(?:option|{option_words})\s+)?"),
        numbers=word_table(rest.pop("words"), keep_hangul=rest.get("suffixed", False)),
        minus=rest.pop("minus"),
        articles=re.compile(rf"\b(?:{articles})\b") if articles else re.compile(r"(?!)"),
        decimal_comma=rest.get("decimal_comma", False),
        circled=rest.get("circled", False),
        suffixed=rest.get("suffixed", False),
    )


LANGUAGE_RULES: dict[str, LanguageRules] = {code: _language(**markers) for code, markers in LANGUAGE_MARKERS.items()}


def language_code(language) -> str:
    """A language tag as its lower-case ISO 639-1 code ("fr-CA" → "fr", "DE" → "de"); "en" when missing."""
    if not isinstance(language, str) or not language.strip():
        return "en"
    return re.split(r"[-_]", language.strip().lower(), maxsplit=1)[0]


def language_of(record: dict) -> str:
    """A record's language: ``meta.language`` (``language_code``), "en" when it has none."""
    meta = record.get("meta") if isinstance(record, dict) else None
    return language_code(meta.get("language") if isinstance(meta, dict) else None)


def _rules(language) -> LanguageRules | None:
    """The rules of a language; None for English and for languages without rules (the English rules read them)."""
    return LANGUAGE_RULES.get(language_code(language)) if language is not None else None


def _refine_in(answer: str, rules: LanguageRules) -> str:
    """A marker's answer that is a whole sentence, in any script, gives the value its copula states."""
    if PROSE_ANY.search(re.sub(r"\$[^$]*\$|\\\(.*?\\\)", " ", answer)):
        return _copula_value(answer, rules.copula)[0] or answer
    return answer


def _word_number(answer: str, rules: LanguageRules) -> int | None:
    """The value of an answer that is one number word of the language ("sept", "moins trois", "열둘"), else None."""
    s = fold(answer.strip(_EDGE_PUNCT + LANGUAGE_EDGE).strip(_EMPHASIS), keep_hangul=rules.suffixed)
    sign = 1
    for minus in rules.minus:
        if s.startswith(minus + " "):
            sign, s = -1, s[len(minus) + 1 :]
    value = rules.numbers.get(s)
    return None if value is None else sign * value


def _localized_answer(answer: str, options, rules: LanguageRules) -> str:
    """An extracted answer as the comparison rules read it: guillemets dropped, the Korean copula and counter
    dropped ("7개입니다" → "7"), a number's unit word dropped outside multiple choice ("4 crayons" → "4"), a picked
    option as its label ("③", "③ 파리", "3번" → "C" or "3"; "la B" → "B") and a number word as its digits
    ("sept" → "7")."""
    found = answer
    answer = answer.strip(LANGUAGE_EDGE) or answer
    if rules.suffixed:
        answer = KO_COPULA.sub("", answer).strip() or answer
    if rules.circled and (picked := PICKED_NUMBER.fullmatch(answer)):
        circled, number = picked.groups()
        return option_number(CIRCLED.index(circled) + 1 if circled else int(number), options)
    if rules.suffixed and (counted := KO_COUNTER.fullmatch(answer)):
        stem = counted.group(1).strip()
        if _word_number(stem, rules) is not None or number_value(stem) is not None:
            answer = stem
    if not options and (unit := UNIT_WORDS.fullmatch(answer)) and number_value(unit.group(1)) is not None:
        return unit.group(1)  # the number without its unit word: "4 crayons" → "4" (Math-Verify reads words as symbols)
    label = rules.option_prefix.sub("", answer, count=1)
    if label != answer and option_letter(label) and _OPTION.match(label.strip().strip(_EMPHASIS)):
        return label.strip()  # "la B" → "B"; not "la Bretagne"
    word = _word_number(answer, rules)
    if word is not None:
        return str(word)
    return answer or found
