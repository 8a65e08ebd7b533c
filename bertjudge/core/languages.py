"""The languages candidates answer in beyond English (fr, de, es, ko): what ``core.extract`` adds to its English
rules for each of them, and how their numbers are written.

``LANGUAGE_MARKERS`` holds each language's markers as pattern text ("Réponse finale :", "Die Antwort ist", "정답:"),
its option words, copulas, articles and number words; ``extract.LANGUAGE_RULES`` joins them to the English markers
(``LanguageRules``). ``delocalize`` writes the numbers of a comma language in English notation ("3,5" → "3.5",
"1 000" → "1000"), ``as_written`` writes them back as the candidate did, and ``circled_as_numbers`` reads Korean
circled option numbers ("③" → "(3)")."""

from __future__ import annotations

import re
import unicodedata
from typing import NamedTuple

CIRCLED = "①②③④⑤⑥⑦⑧⑨⑩⑪⑫⑬⑭⑮⑯⑰⑱⑲⑳"
_CIRCLED_ANY = re.compile(f"[{CIRCLED}]")
# numbers in a comma language: "1.234,5" / "1 234,5" (thousands groups, then a decimal comma), "3,5", "3{,}5"
_THOUSANDS = re.compile(r"(?<![\d.,])[1-9]\d{0,2}(?:(?:\.\d{3})+|(?:[ \u00a0\u202f]\d{3})+)(?:,\d+)?(?![\d]|[.,]\d)")
_DECIMAL_COMMA = re.compile(r"(?<![\d.,])\d+,\d+(?![\d]|[.,]\d)")
KO_COPULA = re.compile(r"\s*(?:이었습니다|였습니다|입니다|이에요|예요|이다|임)$")
KO_COUNTER = re.compile(r"(.+?)\s*(?:개|명|권|마리|살|대|장|원|시간|분|초|미터|리터|킬로그램|년)")
# "③", "③ 파리", "3번": the third option
PICKED_NUMBER = re.compile(f"[(\\[]?([{CIRCLED}])[)\\]]?\\.?(?:\\s+\\S.*)?|(\\d{{1,2}})\\s*번")
UNIT_WORDS = re.compile(r"([-+]?\d[\d.,]*(?:/\d+)?)\s+[^\W\d_]+(?:[ '’-][^\W\d_]+)?")  # "4 crayons", "3.5 Liter"
PROSE_ANY = re.compile(r"(?<!\w)[^\W\d_]{2,}(?:[ ,]+[^\W\d_]{2,}(?!\w)){2,}")  # three words in a row, any script
LANGUAGE_EDGE = " \u00a0\u202f«»‹›„"


class LanguageRules(NamedTuple):
    """How candidates in one language state their answer (added to the English rules, never instead of them)."""

    final: re.Pattern  # "Réponse finale :" (and the English "Final answer:")
    answer_is: re.Pattern  # "La réponse est", a "Réponse :" line
    option_line: re.Pattern  # a last line that is an option label
    copula: re.Pattern  # "est", "ist", "es", "=": the value a concluding sentence states
    word_copula: re.Pattern  # the same, for the statement of a concluding sentence
    option_prefix: re.Pattern  # "la B", "Option C": an article or the word "option" before a label
    numbers: dict[str, int]  # number words, folded (``fold``)
    minus: tuple[str, ...]
    articles: re.Pattern  # dropped for open-QA matching, with the English ones
    decimal_comma: bool  # "3,5" = 3.5, "1.000" = "1 000" = 1000
    circled: bool  # circled option numbers ("③")
    suffixed: bool  # particles and the copula follow a word ("서울입니다"): match word prefixes


def fold(word: str, keep_hangul: bool = False) -> str:
    """A number word's lookup form: lower case, accents and "ß" folded, hyphens as spaces ("Dix-Sept" → "dix sept")."""
    word = word.lower().replace("ß", "ss")
    if not keep_hangul:
        word = "".join(c for c in unicodedata.normalize("NFKD", word) if not unicodedata.combining(c))
    return " ".join(re.split(r"[\s\-]+", word.strip()))


def word_table(words: dict[int, str], keep_hangul: bool = False) -> dict[str, int]:
    """``{folded word: value}`` from ``{value: "word|variant|…"}``."""
    return {fold(w, keep_hangul): n for n, variants in words.items() for w in variants.split("|")}


_FR_WORDS = {
    0: "zéro",
    1: "un|une",
    **dict(
        enumerate("deux trois quatre cinq six sept huit neuf dix onze douze treize quatorze quinze seize".split(), 2)
    ),
    17: "dix-sept",
    18: "dix-huit",
    19: "dix-neuf",
    20: "vingt",
    30: "trente",
    40: "quarante",
    50: "cinquante",
    60: "soixante",
    70: "soixante-dix",
    80: "quatre-vingts|quatre-vingt",
    90: "quatre-vingt-dix",
    100: "cent",
}
_DE_WORDS = {
    0: "null",
    1: "eins|ein|eine",
    **dict(
        enumerate(
            "zwei drei vier fünf sechs sieben acht neun zehn elf zwölf dreizehn vierzehn fünfzehn sechzehn "
            "siebzehn achtzehn neunzehn zwanzig".split(),
            2,
        )
    ),
    30: "dreißig",
    40: "vierzig",
    50: "fünfzig",
    60: "sechzig",
    70: "siebzig",
    80: "achtzig",
    90: "neunzig",
    100: "hundert|einhundert",
}
_ES_WORDS = {
    0: "cero",
    1: "uno|una|un",
    **dict(
        enumerate(
            "dos tres cuatro cinco seis siete ocho nueve diez once doce trece catorce quince dieciséis diecisiete "
            "dieciocho diecinueve veinte".split(),
            2,
        )
    ),
    30: "treinta",
    40: "cuarenta",
    50: "cincuenta",
    60: "sesenta",
    70: "setenta",
    80: "ochenta",
    90: "noventa",
    100: "cien|ciento",
}
_KO_SINO = "영 일 이 삼 사 오 육 칠 팔 구".split()  # Sino-Korean digits: 이십삼 = 23
_KO_NATIVE = [
    "",
    "하나|한",
    "둘|두",
    "셋|세|석",
    "넷|네",
    "다섯",
    "여섯",
    "일곱",
    "여덟",
    "아홉",
]  # native: 스물셋 = 23
_KO_NATIVE_TENS = ["", "열", "스물|스무", "서른", "마흔", "쉰", "예순", "일흔", "여든", "아흔"]


def _korean_words() -> dict[int, str]:
    """0-100 in Sino-Korean (영, 일 … 십, 이십삼, 백) and 1-99 in native Korean (하나 … 열, 스물셋; 한, 두 … before a counter)."""
    words = {0: "영|공", 100: "백"}
    for n in range(1, 100):
        tens, ones = divmod(n, 10)
        sino = ("" if tens < 2 else _KO_SINO[tens]) + ("십" if tens else "") + (_KO_SINO[ones] if ones else "")
        native = [t + o for t in _KO_NATIVE_TENS[tens].split("|") for o in (_KO_NATIVE[ones] or "").split("|")]
        words[n] = "|".join([sino, *native])
    return words


_NEVER = r"(?!)"
# each language's markers, as pattern text joined to the English ones by ``extract.LANGUAGE_RULES``
LANGUAGE_MARKERS: dict[str, dict] = {
    "fr": dict(
        final=r"\br[ée]ponse\s+(?:finale|d[ée]finitive)\s*\**\s*(?::|\best\b\s*:?)\s*\**",
        answer_is=r"\b(?:la|ma)\s+(?:bonne\s+|vraie\s+)?r[ée]ponse\s+(?:correcte\s+|exacte\s+)?(?:est|serait|sera)"
        r"(?:\s+(?:donc|alors|bien))?\s*:?|^[ \t>#*_-]*r[ée]ponse[ \t\u00a0\u202f*_]*:",
        option_words=r"\br[ée]ponse(?:\s+est)?|\bchoix",
        copula=r"\b(?:est|sont|vaut|valent|[ée]gale?|font|fait|donne)\b(?:\s+(?:donc|alors|exactement|environ|de|"
        r"[ée]gale?\s+[àa]))*\s*",
        word_copula=r"\b(?:est|sont|vaut|valent|[ée]gale?|font|fait)\b(?:\s+(?:donc|alors|exactement|de))*(?:\s*:)?",
        articles="le|la|les|l|un|une|des|du",
        words=_FR_WORDS,
        minus=("moins",),
        decimal_comma=True,
    ),
    "de": dict(
        final=r"\b(?:endg[üu]ltige|finale)\s+antwort\s*\**\s*(?::|\b(?:ist|lautet)\b\s*:?)\s*\**",
        answer_is=r"\bdie\s+(?:richtige\s+|korrekte\s+)?antwort\s+(?:ist|lautet|w[äa]re)"
        r"(?:\s+(?:also|daher|somit|demnach))?\s*:?|^[ \t>#*_-]*antwort[ \t*_]*:",
        option_words=r"\bantwort(?:\s+ist)?|\bauswahl",
        copula=r"\b(?:ist|sind|betr[äa]gt|betragen|ergibt|ergeben|lautet|macht)\b(?:\s+(?:also|somit|daher|genau|"
        r"etwa|ungef[äa]hr|insgesamt|gleich))*\s*",
        word_copula=r"\b(?:ist|sind|betr[äa]gt|betragen|ergibt|ergeben|lautet)\b(?:\s+(?:also|somit|daher|genau))*"
        r"(?:\s*:)?",
        articles="der|die|das|den|dem|des|ein|eine|einen|einem|einer|eines",
        words=_DE_WORDS,
        minus=("minus",),
        decimal_comma=True,
    ),
    "es": dict(
        final=r"\brespuesta\s+(?:final|definitiva)\s*\**\s*(?::|\bes\b\s*:?)\s*\**",
        answer_is=r"\bla\s+respuesta\s+(?:correcta\s+)?(?:es|ser[íi]a)(?:\s+(?:entonces|pues|por\s+tanto))?\s*:?"
        r"|^[ \t>#*_¿-]*respuesta[ \t*_]*:",
        option_words=r"\brespuesta(?:\s+es)?|\bopci[óo]n|\balternativa",
        copula=r"\b(?:es|son|vale|valen|da|dan|equivale\s+a|resulta|queda|quedan)\b(?:\s+(?:entonces|exactamente|"
        r"aproximadamente|igual\s+a|de|en\s+total))*\s*",
        word_copula=r"\b(?:es|son|vale|valen|equivale\s+a|resulta)\b(?:\s+(?:entonces|exactamente|igual\s+a))*"
        r"(?:\s*:)?",
        articles="el|la|los|las|un|una|unos|unas|lo",
        words=_ES_WORDS,
        minus=("menos",),
        decimal_comma=True,
    ),
    "ko": dict(
        final=r"최종\s*(?:정답|답변|답|결과)(?:\s*[:：]|\s*(?:은|는)(?:\s*바로)?\s*[:：]?)",
        answer_is=r"(?<![가-힣])(?:정답|해답|답변|답)(?:\s*[:：]|\s*(?:은|는)(?:\s*바로)?\s*[:：]?)",
        option_words=r"(?<![가-힣])(?:정답|답|보기)\s*(?:은|는)?",
        copula=r"(?<=[가-힣])(?:은|는|이|가)\s+(?=[-+−]?\d)",  # "남은 사과는 7개입니다": the value after the subject
        word_copula=_NEVER,  # the copula ends a Korean sentence: no statement follows it
        articles="",
        words=_korean_words(),
        minus=("마이너스",),
        circled=True,
        suffixed=True,
    ),
}


def circled_as_numbers(text: str) -> str:
    """Circled option numbers as numbered labels: "③ 파리" → "(3) 파리"."""
    return _CIRCLED_ANY.sub(lambda m: f"({CIRCLED.index(m.group()) + 1})", text)


def option_number(n: int, labels) -> str:
    """The label of the n-th option: the n-th letter where the question letters them, else the number."""
    labels = [str(x) for x in labels or ()]
    if labels and all(x.isalpha() for x in labels) and 1 <= n <= len(labels):
        return labels[n - 1].upper()
    return str(n)


def delocalize(text: str, rules: LanguageRules, written: dict[str, str] | None = None) -> str:
    """Numbers of a comma language in English notation: "1.234,5" / "1 234,5" → "1234.5", "3,5" / "3{,}5" → "3.5"
    (a dot before other than three digits stays a decimal point: "3.14"; "1, 2, 3" stays a list). ``written``
    collects each rewritten number and how the text wrote it."""
    if not rules.decimal_comma or not any(c.isdigit() for c in text):
        return text

    def rewrite(match: re.Match) -> str:
        english = re.sub(r"[.\s]", "", match.group()).replace(",", ".")
        if written is not None:
            written.setdefault(english, match.group())
        return english

    text = text.replace("{,}", ",")
    text = _THOUSANDS.sub(rewrite, text)
    return _DECIMAL_COMMA.sub(rewrite, text)


def as_written(answer: str, written: dict[str, str]) -> str:
    """An answer read from rewritten numbers, in the notation the candidate wrote them ("3.45" → "3,45")."""
    if not written:
        return answer
    pattern = re.compile(
        r"(?<![\d.])(?:" + "|".join(map(re.escape, sorted(written, key=len, reverse=True))) + r")(?![\d])"
    )
    return pattern.sub(lambda m: written[m.group()], answer)
