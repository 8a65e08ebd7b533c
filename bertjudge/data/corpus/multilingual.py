"""The embedded corpus in French, German, Spanish and Korean: labelled (question, candidate, reference) rows of
three categories, generated in-process like the English corpus and from the same structures (:class:`Item`,
one correct and one wrong candidate per question, the fictional ``MODELS`` and their taste in styles).

* ``open_math`` (task ``embedded-math-<lang>``): shopping, what is left, sharing a quantity, a population,
  a sum of fractions, a percentage. Numbers are written in the language's notation (fr/de/es: "3,5", "12,50 €",
  "45 312" or "45.312"; ko: "3.5", "12,500원"), as fractions ("7/2", ``\\frac{7}{2}``), as words for small
  counts ("sept", "sieben", "siete", "일곱 개") and with units; the references are the number in English
  notation ("3.5", what a reference in a benchmark holds) and, where it differs, in the language's.
* ``multiple_choice`` (``embedded-mc-<lang>``): capitals, chemical symbols, products, the largest decimal
  ("3,45"), weekdays; options lettered ``A.``, ``A)``, ``(A)`` or, in Korean, circled ("① 파리", whose
  reference is the option's number, "3", as ``extract.parse_options`` reads it). Answers are the label, the
  label with the option's text, the text alone, and in Korean "③", "3번" or "③ 파리".
* ``open_qa`` (``embedded-openqa-<lang>``): a small translated lexicon of capitals, chemical symbols, the
  years of events and the authors of books. Correct answers range from the bare entity to a paragraph that
  buries it beside true facts about other entities; wrong ones name another entity, or mention the reference
  but commit to another ("On pense souvent à Berlin, mais …").

Correct answers are marked in the language ("Réponse finale :", "Die Antwort ist", "Respuesta final:",
"정답:", "최종 답:"), in sentences, markdown, reasoning, ``\\boxed{}``; wrong ones are off by one, a decimal
place off, an intermediate result, reasoning that reaches the answer and then states another, another option,
another entity, a refusal. Every row carries ``meta.language`` and the label source
``synthetic:corpus-<lang>``.

User rows (``python -m bertjudge synth --language``): ``item_from_reference`` builds an :class:`Item` from a user's
question and references in one of these languages (``infer_category`` reads its category in the language's notation
and marks; context extraction is refused), and ``candidate_for`` writes right and wrong candidates for it with the
writers above, the sign flipped among math's wrong kinds, and wrong kinds any question has (``FREE_WRONG``). What
can be wrong is read off the row: another option, a moved number, another entity of the lexicon only when the
reference is one.

Splits: a fact (a capital, an element, an event, a book) belongs to one split in every language and category,
by a hash of its key; any other question by a hash of its text; the last phrasing of each question family is
held out of ``train``. So no question text, and no fact, is shared between ``train``, ``val`` and ``test``.
The same arguments give the same rows: the random stream is seeded by (version, language, split, seed).
"""

from __future__ import annotations

import functools
import hashlib
import random
import re
from collections.abc import Callable
from fractions import Fraction
from typing import NamedTuple

from bertjudge.core.extract import LANGUAGE_RULES, fmt, number_value, parse_options, terminating
from bertjudge.data.corpus.base import ANS, Item, make_record
from bertjudge.data.corpus.candidates import MODELS
from bertjudge.data.corpus.user import _bump
from bertjudge.data.corpus.user import infer_category as english_category

VERSION = "multilingual-v1"
LANGUAGES = ("fr", "de", "es", "ko")
SPLITS = ("train", "val", "test")
CATEGORIES = ("open_math", "multiple_choice", "open_qa")
_TASK = {"open_math": "embedded-math", "multiple_choice": "embedded-mc", "open_qa": "embedded-openqa"}
CIRCLED = "①②③④⑤⑥⑦⑧⑨⑩"  # Korean option labels: the n-th option


def label_source(language: str) -> str:
    """Who labelled a language's rows: ``synthetic:corpus-<lang>``."""
    return f"synthetic:corpus-{language}"


# ----------------------------------------------------------------------------- phrases of each language
PHRASES = {
    "fr": {
        "final": ["Réponse finale : {a}", "**Réponse finale :** {a}", "La réponse finale est {a}."],
        "answer_is": ["La réponse est {a}.", "Donc, la réponse est {a}.", "La bonne réponse est {a}."],
        "markdown": ["**Réponse :** {a}", "- **Réponse finale :** **{a}**"],
        "intro": ["Résolvons le problème étape par étape.", "Procédons par étapes."],
        "compute": "Calculons : {expr} = {ans}.",
        "think": ["Réfléchissons.", "Voyons cela."],
        "hedge": ["Je crois que c'est {a}.", "Il me semble que c'est {a}."],
        "fillers": ["C'est une question classique.", "Bonne question !", "J'espère que cela vous aide."],
        "refusals": ["Je ne sais pas.", "Je ne peux pas répondre à cette question."],
        "mentions": [
            "On pense souvent à {m}, mais la bonne réponse est {c}.",
            "Ce n'est pas {m} : c'est {c}.",
            "{m} est une erreur fréquente ; en réalité, c'est {c}.",
        ],
        "mention_final": "Ce n'est pas {m}.\nRéponse finale : {c}",
        "mc_sentence": ["La réponse est {a}.", "La bonne réponse est {a}.", "C'est la réponse {a}."],
        # for a user's rows (``candidate_for``): a result line without the computation, a sentence stating the
        # answer to any question, the reference negated, two answers without committing to one
        "result": "On obtient {ans}.",
        "claim": "La réponse est {t}.",
        "negation": ["Ce n'est pas {m}.", "La réponse n'est pas {m}."],
        "between": ["C'est soit {a}, soit {b}.", "Je dirais {a} ou {b}."],
    },
    "de": {
        "final": ["Endgültige Antwort: {a}", "**Endgültige Antwort:** {a}", "Die endgültige Antwort ist {a}."],
        "answer_is": ["Die Antwort ist {a}.", "Die richtige Antwort lautet {a}.", "Die Antwort ist also {a}."],
        "markdown": ["**Antwort:** {a}", "- **Endgültige Antwort:** **{a}**"],
        "intro": ["Lösen wir die Aufgabe Schritt für Schritt.", "Gehen wir schrittweise vor."],
        "compute": "Wir rechnen: {expr} = {ans}.",
        "think": ["Überlegen wir.", "Schauen wir mal."],
        "hedge": ["Ich glaube, es ist {a}.", "Soweit ich weiß, ist es {a}."],
        "fillers": ["Das ist eine klassische Frage.", "Gute Frage!", "Ich hoffe, das hilft."],
        "refusals": ["Das weiß ich nicht.", "Ich kann diese Frage nicht beantworten."],
        "mentions": [
            "Viele denken an {m}, aber die richtige Antwort ist {c}.",
            "Nicht {m}, sondern {c}.",
            "{m} ist ein häufiger Irrtum; tatsächlich ist es {c}.",
        ],
        "mention_final": "Es ist nicht {m}.\nEndgültige Antwort: {c}",
        "mc_sentence": ["Die Antwort ist {a}.", "Die richtige Antwort lautet {a}.", "Richtig ist Antwort {a}."],
        "result": "Das ergibt {ans}.",
        "claim": "Die Antwort ist {t}.",
        "negation": ["Es ist nicht {m}.", "Die Antwort ist nicht {m}."],
        "between": ["Entweder {a} oder {b}.", "Ich würde sagen: {a} oder {b}."],
    },
    "es": {
        "final": ["Respuesta final: {a}", "**Respuesta final:** {a}", "La respuesta final es {a}."],
        "answer_is": ["La respuesta es {a}.", "Entonces, la respuesta es {a}.", "La respuesta correcta es {a}."],
        "markdown": ["**Respuesta:** {a}", "- **Respuesta final:** **{a}**"],
        "intro": ["Resolvamos el problema paso a paso.", "Vamos por partes."],
        "compute": "Calculamos: {expr} = {ans}.",
        "think": ["Pensemos.", "Veamos."],
        "hedge": ["Creo que es {a}.", "Me parece que es {a}."],
        "fillers": ["Es una pregunta clásica.", "¡Buena pregunta!", "Espero que esto ayude."],
        "refusals": ["No lo sé.", "No puedo responder a esta pregunta."],
        "mentions": [
            "Mucha gente piensa en {m}, pero la respuesta correcta es {c}.",
            "No es {m}, sino {c}.",
            "{m} es un error frecuente; en realidad es {c}.",
        ],
        "mention_final": "No es {m}.\nRespuesta final: {c}",
        "mc_sentence": ["La respuesta es la {a}.", "La respuesta correcta es la {a}.", "Es la opción {a}."],
        "result": "Se obtiene {ans}.",
        "claim": "La respuesta es {t}.",
        "negation": ["No es {m}.", "La respuesta no es {m}."],
        "between": ["Es {a} o {b}.", "Diría que {a} o {b}."],
    },
    "ko": {
        "final": ["최종 답: {a}", "**최종 답:** {a}", "정답: {a}"],
        "answer_is": ["답은 {a}입니다.", "따라서 정답은 {a}입니다.", "정답은 {a}입니다."],
        "markdown": ["**정답:** {a}", "- **최종 답:** **{a}**"],
        "intro": ["단계별로 풀어 보겠습니다.", "차근차근 계산해 보겠습니다."],
        "compute": "계산하면 {expr} = {ans}.",
        "think": ["생각해 보겠습니다.", "살펴보겠습니다."],
        "hedge": ["{a}인 것 같습니다.", "제 기억으로는 {a}입니다."],
        "fillers": ["좋은 질문입니다.", "자주 나오는 질문입니다.", "도움이 되었으면 합니다."],
        "refusals": ["잘 모르겠습니다.", "이 질문에는 대답할 수 없습니다."],
        "mentions": [
            "{m_ira} 생각하기 쉽지만, 정답은 {c}입니다.",
            "{m_iga} 아니라 {c}입니다.",
            "흔히 {m_ira} 하지만 사실은 {c}입니다.",
        ],
        "mention_final": "{m_topic} 아닙니다.\n최종 답: {c}",
        "mc_sentence": ["정답은 {a}입니다.", "답은 {a}입니다."],
        "result": "따라서 값은 {ans}입니다.",
        "claim": "정답은 {t}입니다.",
        "negation": ["{m_iga} 아닙니다.", "정답은 {m_iga} 아닙니다."],
        "between": ["{a} 또는 {b}입니다.", "{a}일 수도 있고 {b}일 수도 있습니다."],
    },
}


def josa(word: str, pair: str) -> str:
    """A Korean particle after a word: ``pair`` is "은/는", "이/가", "을/를", "과/와" or "이라고/라고", its first
    form after a final consonant (batchim), the second after a vowel; digits as read in Sino-Korean."""
    with_final, without = pair.split("/")
    last = word.rstrip(" )》」\"'")[-1:] or " "
    if last in CIRCLED:  # "③" is read "삼"
        last = str(CIRCLED.index(last) + 1)[-1]
    if "가" <= last <= "힣":
        final = (ord(last) - 0xAC00) % 28 != 0
    else:
        final = last in "013678"  # 영 일 삼 육 칠 팔
    return word + (with_final if final else without)


def _mention(template: str, m: str, c: str) -> str:
    """A sentence that mentions ``m`` and commits to ``c`` (Korean: particles chosen for ``m``)."""
    particles = {"m_ira": josa(m, "이라고/라고"), "m_iga": josa(m, "이/가"), "m_topic": josa(m, "은/는")}
    return template.format(m=m, c=c, **particles)


# ----------------------------------------------------------------------------- numbers in each language
def local(x: Fraction, lang: str, group: str | None = None, places: int | None = None) -> str:
    """A terminating number in the language's notation: decimal comma in fr/de/es, thousands grouped from
    10,000 (fr with a space, de/es with a dot, ko with a comma; ``group`` overrides the separator, "" for none);
    ``places``: fixed decimals (money: "12,50")."""
    text = f"{float(x):.{places}f}" if places is not None else fmt(x)
    sign, text = ("-", text[1:]) if text.startswith("-") else ("", text)
    whole, _, frac = text.partition(".")
    sep = {"fr": " ", "de": ".", "es": ".", "ko": ","}[lang] if group is None else group
    if sep and len(whole) > 4:
        whole = f"{int(whole):,}".replace(",", sep)
    point = "." if lang == "ko" else ","
    return sign + whole + (point + frac if frac else "")


_FR_SMALL = (
    "zéro un deux trois quatre cinq six sept huit neuf dix onze douze treize quatorze quinze seize dix-sept "
    "dix-huit dix-neuf vingt"
).split()
_DE_SMALL = (
    "null eins zwei drei vier fünf sechs sieben acht neun zehn elf zwölf dreizehn vierzehn fünfzehn sechzehn "
    "siebzehn achtzehn neunzehn zwanzig"
).split()
_ES_SMALL = (
    "cero uno dos tres cuatro cinco seis siete ocho nueve diez once doce trece catorce quince dieciséis "
    "diecisiete dieciocho diecinueve veinte"
).split()
_KO_NATIVE = (
    "영 한 두 세 네 다섯 여섯 일곱 여덟 아홉 열 열한 열두 열세 열네 열다섯 열여섯 열일곱 열여덟 열아홉 스무".split()
)
SMALL_NUMBER_WORDS = {"fr": _FR_SMALL, "de": _DE_SMALL, "es": _ES_SMALL, "ko": _KO_NATIVE}


# ----------------------------------------------------------------------------- the lexicon: facts in 4 languages
class Fact(NamedTuple):
    """A fact asked in every language: its key (decides its split), per language what it is about and its answer
    and the answer's aliases."""

    key: str
    about: dict[str, str]  # fr "de l'Allemagne", de "von Deutschland", es "de Alemania", ko "독일"
    answer: dict[str, str]
    aliases: dict[str, list[str]]


def _facts(kind: str, rows: list[tuple[str, str, str]]) -> list[Fact]:
    """Facts from ``(key, "about fr|de|es|ko", "answer fr|de|es|ko")``; an answer "full~alias" lists an alias."""
    out = []
    for key, about, answer in rows:
        answers = dict(zip(LANGUAGES, answer.split("|"))) if "|" in answer else dict.fromkeys(LANGUAGES, answer)
        out.append(
            Fact(
                f"{kind}:{key}",
                dict(zip(LANGUAGES, about.split("|"))),
                {lang: a.split("~")[0] for lang, a in answers.items()},
                {lang: a.split("~")[1:] for lang, a in answers.items()},
            )
        )
    return out


CAPITALS = _facts(
    "capital",
    [
        ("France", "de la France|von Frankreich|de Francia|프랑스", "Paris|Paris|París|파리"),
        ("Germany", "de l'Allemagne|von Deutschland|de Alemania|독일", "Berlin|Berlin|Berlín|베를린"),
        ("Italy", "de l'Italie|von Italien|de Italia|이탈리아", "Rome|Rom|Roma|로마"),
        ("Spain", "de l'Espagne|von Spanien|de España|스페인", "Madrid|Madrid|Madrid|마드리드"),
        ("Portugal", "du Portugal|von Portugal|de Portugal|포르투갈", "Lisbonne|Lissabon|Lisboa|리스본"),
        ("Japan", "du Japon|von Japan|de Japón|일본", "Tokyo|Tokio|Tokio|도쿄"),
        ("Canada", "du Canada|von Kanada|de Canadá|캐나다", "Ottawa|Ottawa|Ottawa|오타와"),
        ("Australia", "de l'Australie|von Australien|de Australia|호주", "Canberra|Canberra|Canberra|캔버라"),
        ("Egypt", "de l'Égypte|von Ägypten|de Egipto|이집트", "Le Caire|Kairo|El Cairo|카이로"),
        ("Kenya", "du Kenya|von Kenia|de Kenia|케냐", "Nairobi|Nairobi|Nairobi|나이로비"),
        ("India", "de l'Inde|von Indien|de la India|인도", "New Delhi|Neu-Delhi|Nueva Delhi|뉴델리"),
        ("China", "de la Chine|von China|de China|중국", "Pékin|Peking|Pekín|베이징"),
        ("Russia", "de la Russie|von Russland|de Rusia|러시아", "Moscou|Moskau|Moscú|모스크바"),
        ("Brazil", "du Brésil|von Brasilien|de Brasil|브라질", "Brasília|Brasília|Brasilia|브라질리아"),
        (
            "Argentina",
            "de l'Argentine|von Argentinien|de Argentina|아르헨티나",
            "Buenos Aires|Buenos Aires|Buenos Aires|부에노스아이레스",
        ),
        ("Peru", "du Pérou|von Peru|de Perú|페루", "Lima|Lima|Lima|리마"),
        ("Norway", "de la Norvège|von Norwegen|de Noruega|노르웨이", "Oslo|Oslo|Oslo|오슬로"),
        ("Sweden", "de la Suède|von Schweden|de Suecia|스웨덴", "Stockholm|Stockholm|Estocolmo|스톡홀름"),
        ("Finland", "de la Finlande|von Finnland|de Finlandia|핀란드", "Helsinki|Helsinki|Helsinki|헬싱키"),
        ("Poland", "de la Pologne|von Polen|de Polonia|폴란드", "Varsovie|Warschau|Varsovia|바르샤바"),
        ("Austria", "de l'Autriche|von Österreich|de Austria|오스트리아", "Vienne|Wien|Viena|빈"),
        ("Greece", "de la Grèce|von Griechenland|de Grecia|그리스", "Athènes|Athen|Atenas|아테네"),
        ("Ireland", "de l'Irlande|von Irland|de Irlanda|아일랜드", "Dublin|Dublin|Dublín|더블린"),
        (
            "Netherlands",
            "des Pays-Bas|der Niederlande|de los Países Bajos|네덜란드",
            "Amsterdam|Amsterdam|Ámsterdam|암스테르담",
        ),
        ("Belgium", "de la Belgique|von Belgien|de Bélgica|벨기에", "Bruxelles|Brüssel|Bruselas|브뤼셀"),
        ("Switzerland", "de la Suisse|der Schweiz|de Suiza|스위스", "Berne|Bern|Berna|베른"),
        ("Denmark", "du Danemark|von Dänemark|de Dinamarca|덴마크", "Copenhague|Kopenhagen|Copenhague|코펜하겐"),
        ("Hungary", "de la Hongrie|von Ungarn|de Hungría|헝가리", "Budapest|Budapest|Budapest|부다페스트"),
        ("Thailand", "de la Thaïlande|von Thailand|de Tailandia|태국", "Bangkok|Bangkok|Bangkok|방콕"),
        ("Vietnam", "du Viêt Nam|von Vietnam|de Vietnam|베트남", "Hanoï|Hanoi|Hanói|하노이"),
        ("South Korea", "de la Corée du Sud|von Südkorea|de Corea del Sur|대한민국", "Séoul|Seoul|Seúl|서울"),
        ("Morocco", "du Maroc|von Marokko|de Marruecos|모로코", "Rabat|Rabat|Rabat|라바트"),
        ("Chile", "du Chili|von Chile|de Chile|칠레", "Santiago|Santiago|Santiago|산티아고"),
        ("Colombia", "de la Colombie|von Kolumbien|de Colombia|콜롬비아", "Bogota|Bogotá|Bogotá|보고타"),
        ("Cuba", "de Cuba|von Kuba|de Cuba|쿠바", "La Havane|Havanna|La Habana|아바나"),
        ("Indonesia", "de l'Indonésie|von Indonesien|de Indonesia|인도네시아", "Jakarta|Jakarta|Yakarta|자카르타"),
        (
            "United Kingdom",
            "du Royaume-Uni|des Vereinigten Königreichs|del Reino Unido|영국",
            "Londres|London|Londres|런던",
        ),
    ],
)
# "about": fr "du fer" (after "symbole chimique"), de "Eisen" (after "für"), es "del hierro", ko "철"
ELEMENTS = _facts(
    "symbol",
    [
        ("H", "de l'hydrogène|Wasserstoff|del hidrógeno|수소", "H"),
        ("He", "de l'hélium|Helium|del helio|헬륨", "He"),
        ("C", "du carbone|Kohlenstoff|del carbono|탄소", "C"),
        ("N", "de l'azote|Stickstoff|del nitrógeno|질소", "N"),
        ("O", "de l'oxygène|Sauerstoff|del oxígeno|산소", "O"),
        ("Ne", "du néon|Neon|del neón|네온", "Ne"),
        ("Na", "du sodium|Natrium|del sodio|나트륨", "Na"),
        ("Mg", "du magnésium|Magnesium|del magnesio|마그네슘", "Mg"),
        ("Al", "de l'aluminium|Aluminium|del aluminio|알루미늄", "Al"),
        ("Si", "du silicium|Silicium|del silicio|규소", "Si"),
        ("S", "du soufre|Schwefel|del azufre|황", "S"),
        ("Cl", "du chlore|Chlor|del cloro|염소", "Cl"),
        ("K", "du potassium|Kalium|del potasio|칼륨", "K"),
        ("Ca", "du calcium|Calcium|del calcio|칼슘", "Ca"),
        ("Fe", "du fer|Eisen|del hierro|철", "Fe"),
        ("Ni", "du nickel|Nickel|del níquel|니켈", "Ni"),
        ("Cu", "du cuivre|Kupfer|del cobre|구리", "Cu"),
        ("Zn", "du zinc|Zink|del zinc|아연", "Zn"),
        ("Ag", "de l'argent|Silber|de la plata|은", "Ag"),
        ("Sn", "de l'étain|Zinn|del estaño|주석", "Sn"),
        ("Pt", "du platine|Platin|del platino|백금", "Pt"),
        ("Au", "de l'or|Gold|del oro|금", "Au"),
        ("Hg", "du mercure|Quecksilber|del mercurio|수은", "Hg"),
        ("Pb", "du plomb|Blei|del plomo|납", "Pb"),
        ("U", "de l'uranium|Uran|del uranio|우라늄", "U"),
    ],
)
# "about": the event as the subject of "a eu lieu" / "fand … statt" / "tuvo lugar" / "일어났습니다"
EVENTS = _facts(
    "year",
    [
        (
            "moon",
            "le premier pas sur la Lune|die erste bemannte Mondlandung|el primer alunizaje tripulado|인류의 첫 달 착륙",
            "1969",
        ),
        (
            "wall",
            "la chute du mur de Berlin|der Fall der Berliner Mauer|la caída del Muro de Berlín|베를린 장벽 붕괴",
            "1989",
        ),
        ("bastille", "la prise de la Bastille|der Sturm auf die Bastille|la toma de la Bastilla|바스티유 습격", "1789"),
        (
            "ww2",
            "la fin de la Seconde Guerre mondiale|das Ende des Zweiten Weltkriegs|el fin de la Segunda Guerra Mundial"
            "|제2차 세계 대전 종전",
            "1945",
        ),
        (
            "ww1",
            "le début de la Première Guerre mondiale|der Beginn des Ersten Weltkriegs"
            "|el comienzo de la Primera Guerra Mundial|제1차 세계 대전 발발",
            "1914",
        ),
        (
            "titanic",
            "le naufrage du Titanic|der Untergang der Titanic|el hundimiento del Titanic|타이타닉호 침몰",
            "1912",
        ),
        (
            "reunification",
            "la réunification allemande|die deutsche Wiedervereinigung|la reunificación alemana|독일 통일",
            "1990",
        ),
        (
            "columbus",
            "l'arrivée de Christophe Colomb en Amérique|die Ankunft von Kolumbus in Amerika"
            "|la llegada de Colón a América|콜럼버스의 아메리카 도착",
            "1492",
        ),
        (
            "independence",
            "la déclaration d'indépendance des États-Unis|die Unabhängigkeitserklärung der Vereinigten Staaten"
            "|la declaración de independencia de los Estados Unidos|미국 독립 선언",
            "1776",
        ),
        ("waterloo", "la bataille de Waterloo|die Schlacht bei Waterloo|la batalla de Waterloo|워털루 전투", "1815"),
        (
            "euro",
            "l'introduction des billets en euros|die Einführung der Euro-Banknoten"
            "|la introducción de los billetes de euro|유로 지폐 도입",
            "2002",
        ),
        (
            "olympics",
            "l'ouverture des premiers Jeux olympiques modernes|die Eröffnung der ersten modernen Olympischen Spiele"
            "|la inauguración de los primeros Juegos Olímpicos modernos|첫 근대 올림픽 개최",
            "1896",
        ),
        (
            "hangul",
            "la promulgation du hangeul|die Verkündung des Hangeul|la promulgación del hangul|훈민정음 반포",
            "1446",
        ),
    ],
)
# "about": the title; the answer "Full Name~Surname"
BOOKS = _facts(
    "author",
    [
        (
            "miserables",
            "Les Misérables|Die Elenden|Los miserables|레 미제라블",
            "Victor Hugo~Hugo|Victor Hugo~Hugo|Victor Hugo~Hugo|빅토르 위고~위고",
        ),
        (
            "quixote",
            "Don Quichotte|Don Quijote|Don Quijote|돈키호테",
            "Miguel de Cervantes~Cervantes|Miguel de Cervantes~Cervantes|Miguel de Cervantes~Cervantes"
            "|미겔 데 세르반테스~세르반테스",
        ),
        (
            "faust",
            "Faust|Faust|Fausto|파우스트",
            "Johann Wolfgang von Goethe~Goethe|Johann Wolfgang von Goethe~Goethe|Johann Wolfgang von Goethe~Goethe"
            "|요한 볼프강 폰 괴테~괴테",
        ),
        (
            "hamlet",
            "Hamlet|Hamlet|Hamlet|햄릿",
            "William Shakespeare~Shakespeare|William Shakespeare~Shakespeare|William Shakespeare~Shakespeare"
            "|윌리엄 셰익스피어~셰익스피어",
        ),
        (
            "war-and-peace",
            "Guerre et Paix|Krieg und Frieden|Guerra y paz|전쟁과 평화",
            "Léon Tolstoï~Tolstoï|Leo Tolstoi~Tolstoi|León Tolstói~Tolstói|레프 톨스토이~톨스토이",
        ),
        (
            "little-prince",
            "Le Petit Prince|Der kleine Prinz|El principito|어린 왕자",
            "Antoine de Saint-Exupéry~Saint-Exupéry|Antoine de Saint-Exupéry~Saint-Exupéry"
            "|Antoine de Saint-Exupéry~Saint-Exupéry|앙투안 드 생텍쥐페리~생텍쥐페리",
        ),
        (
            "solitude",
            "Cent ans de solitude|Hundert Jahre Einsamkeit|Cien años de soledad|백년의 고독",
            "Gabriel García Márquez~García Márquez|Gabriel García Márquez~García Márquez"
            "|Gabriel García Márquez~García Márquez|가브리엘 가르시아 마르케스~마르케스",
        ),
        (
            "metamorphosis",
            "La Métamorphose|Die Verwandlung|La metamorfosis|변신",
            "Franz Kafka~Kafka|Franz Kafka~Kafka|Franz Kafka~Kafka|프란츠 카프카~카프카",
        ),
        (
            "crime",
            "Crime et Châtiment|Schuld und Sühne|Crimen y castigo|죄와 벌",
            "Fiodor Dostoïevski~Dostoïevski|Fjodor Dostojewski~Dostojewski|Fiódor Dostoyevski~Dostoyevski"
            "|표도르 도스토옙스키~도스토옙스키",
        ),
        (
            "divine-comedy",
            "La Divine Comédie|Die Göttliche Komödie|La Divina Comedia|신곡",
            "Dante Alighieri~Dante|Dante Alighieri~Dante|Dante Alighieri~Dante|단테 알리기에리~단테",
        ),
        (
            "bovary",
            "Madame Bovary|Madame Bovary|Madame Bovary|보바리 부인",
            "Gustave Flaubert~Flaubert|Gustave Flaubert~Flaubert|Gustave Flaubert~Flaubert|귀스타브 플로베르~플로베르",
        ),
        (
            "old-man",
            "Le Vieil Homme et la Mer|Der alte Mann und das Meer|El viejo y el mar|노인과 바다",
            "Ernest Hemingway~Hemingway|Ernest Hemingway~Hemingway|Ernest Hemingway~Hemingway|어니스트 헤밍웨이~헤밍웨이",
        ),
    ],
)
FACTS = {"capital": CAPITALS, "symbol": ELEMENTS, "year": EVENTS, "author": BOOKS}

NAMES = {
    "fr": "Léa Hugo Chloé Louis Camille Jules Inès Nathan Manon Théo".split(),
    "de": "Lena Jonas Mia Felix Lukas Hannah Paul Emma Leon Marie".split(),
    "es": "Lucía Mateo Sofía Hugo Martina Pablo Elena Diego Valeria Daniel".split(),
    "ko": "민준 서연 지호 하은 도윤 지우 서준 수아 예준 지민".split(),
}
# plural nouns counted in word problems (es: with their gender, for "cuántos/cuántas")
OBJECTS = {
    "fr": "pommes cahiers crayons billes bonbons".split(),
    "de": "Äpfel Hefte Stifte Murmeln Bonbons".split(),
    "es": "manzanas:f cuadernos:m lápices:m canicas:f caramelos:m".split(),
    "ko": "사과 귤 구슬 사탕 쿠키".split(),
}
WEEKDAYS = {
    "fr": "lundi mardi mercredi jeudi vendredi samedi dimanche".split(),
    "de": "Montag Dienstag Mittwoch Donnerstag Freitag Samstag Sonntag".split(),
    "es": "lunes martes miércoles jueves viernes sábado domingo".split(),
    "ko": "월요일 화요일 수요일 목요일 금요일 토요일 일요일".split(),
}


# ----------------------------------------------------------------------------- drawing items
class Draft(NamedTuple):
    """What a family draws for one question before its phrasing: the format fields, the split key (None: the
    question text) and the category's data."""

    fields: dict
    key: str | None
    data: dict


class Family(NamedTuple):
    """A question family: its category, how to draw one question and its phrasings per language."""

    category: str
    draw: Callable[[random.Random, str], Draft]
    phrasings: dict[str, list[str]]


def _noun(lang: str, rng: random.Random) -> tuple[str, str]:
    """A counted noun and, in Spanish, its gender ("m"/"f")."""
    noun, _, gender = rng.choice(OBJECTS[lang]).partition(":")
    return noun, gender


# open math: every draw gives the value, the computation shown, the intermediate results and the unit
def _m_shopping(rng, lang):
    n, (obj, _) = rng.randint(2, 9), _noun(lang, rng)
    if lang == "ko":
        price = Fraction(rng.randrange(300, 5000, 100))
        shown, unit = local(price, lang), "원"
    else:
        price = Fraction(rng.randint(2, 24), 4)
        shown, unit = local(price, lang, places=2), "€"
    total = n * price
    name = rng.choice(NAMES[lang])
    fields = {"name": name, "name_topic": josa(name, "은/는"), "n": n, "obj": obj, "p": shown}
    return Draft(fields, None, _math(total, f"{n} × {shown}", [total + price, total - price, price], unit, lang))


def _m_left(rng, lang):
    a = rng.randint(6, 20)
    b = rng.randint(1, a - 1)
    obj, gender = _noun(lang, rng)
    name = rng.choice(NAMES[lang])
    cuantos = "cuántas" if gender == "f" else "cuántos"
    fields = {"name": name, "a": a, "b": b, "obj": obj, "cuantos": cuantos, "Cuantos": cuantos.capitalize()}
    if lang == "ko":
        fields["obj_topic"] = josa(obj, "은/는")
    unit = "개" if lang == "ko" else obj
    return Draft(fields, None, _math(Fraction(a - b), f"{a} − {b}", [Fraction(a + b), Fraction(a)], unit, lang))


def _m_share(rng, lang):
    b = rng.choice([2, 4, 5, 8, 3, 6])
    a = rng.choice([x for x in range(3, 41) if x % b])
    value = Fraction(a, b)
    unit = {"fr": "litres", "de": "Liter", "es": "litros", "ko": "리터"}[lang]
    wrong = [Fraction(a // b), Fraction(a, b + 1), Fraction(b, a)]
    return Draft({"a": a, "b": b}, None, _math(value, f"{a} ÷ {b}", wrong, unit, lang))


def _m_population(rng, lang):
    a, b = rng.randint(12000, 98000), rng.randint(1100, 9800)
    value = Fraction(a + b)
    unit = {"fr": "", "de": "", "es": "", "ko": "명"}[lang]
    fields = {"a": local(Fraction(a), lang), "b": local(Fraction(b), lang)}
    wrong = [value + 1000, value - 1000, value + 100, Fraction(a - b)]
    return Draft(fields, None, _math(value, f"{fields['a']} + {fields['b']}", wrong, unit, lang))


def _m_fractions(rng, lang):
    b, d = rng.sample(range(2, 10), 2)
    a, c = rng.randint(1, b - 1), rng.randint(1, d - 1)
    value = Fraction(a, b) + Fraction(c, d)
    f1, f2 = f"{a}/{b}", f"{c}/{d}"
    fields = {"f1": f1, "f2": f2, "f1_and": josa(f1, "과/와")}
    wrong = [Fraction(a + c, b + d), Fraction(a * c, b * d), value + 1]
    return Draft(fields, None, _math(value, f"{f1} + {f2}", wrong, "", lang))


def _m_percent(rng, lang):
    p = rng.choice([5, 10, 15, 20, 25, 30, 40, 50, 75])
    x = rng.randrange(1000, 50000, 100) if lang == "ko" else rng.randint(4, 80) * 5
    value = Fraction(p * x, 100)
    fields = {"p": p, "x": local(Fraction(x), lang)}
    wrong = [Fraction(x) - value, value * 10, Fraction(p)]  # the sale price, a place off, the rate itself
    unit = "원" if lang == "ko" else "€"
    return Draft(fields, None, _math(value, f"{fields['x']} × {p} %", wrong, unit, lang))


def _math(value: Fraction, expr: str, wrong: list[Fraction], unit: str, lang: str) -> dict:
    """An open-math draw: the value, the computation shown, the wrong values a slip gives, the unit."""
    wrong = [w for w in dict.fromkeys(wrong) if w != value and w >= 0]
    return {"value": value, "expr": expr, "intermediates": wrong, "unit": unit}


# multiple choice: the stem's fields, the right option, wrong ones, the sentence that says why ("{t}": the option)
def _mc_capital(rng, lang):
    return _mc_fact(*rng.sample(CAPITALS, 6), lang=lang)


def _mc_symbol(rng, lang):  # symbols of two letters: an option "C" would read as the label C
    return _mc_fact(*rng.sample(_askable("symbol"), 6), lang=lang)


def _mc_fact(fact: Fact, *others: Fact, lang: str) -> Draft:
    """A question about a fact whose wrong options are the answers of other facts of its kind."""
    wrong = [o.answer[lang] for o in others if o.answer[lang] != fact.answer[lang]]
    fields = {"a": fact.about[lang], "a_topic": josa(fact.about[lang], "은/는")}
    return Draft(fields, fact.key, {"right": fact.answer[lang], "wrong": wrong, "numeric": False})


def _mc_product(rng, lang):
    a, b = rng.randint(6, 29), rng.randint(3, 19)
    right = a * b
    wrong = [right + d for d in (-b, b, -a, a, 10, -10, 1, -1, 2 * a)]
    wrong = [str(w) for w in dict.fromkeys(wrong) if w != right and w > 0]
    return Draft({"a": a, "b": b}, None, {"right": str(right), "wrong": wrong, "numeric": True})


def _mc_largest(rng, lang):
    values = list(dict.fromkeys(Fraction(rng.randint(1, 999), rng.choice([10, 100, 1000])) for _ in range(8)))
    right = max(values)
    wrong = [local(v, lang) for v in values if v != right]
    return Draft({}, None, {"right": local(right, lang), "wrong": wrong, "numeric": True, "key": "largest"})


def _mc_weekday(rng, lang):
    day, k = rng.randrange(7), rng.randint(2, 40)
    days = WEEKDAYS[lang]
    right = days[(day + k) % 7]
    return Draft(
        {"day": days[day], "k": k}, None, {"right": right, "wrong": [d for d in days if d != right], "numeric": False}
    )


# open QA: the fact, and other facts of its kind for wrong answers and side sentences
def _qa(kind: str) -> Callable[[random.Random, str], Draft]:
    def draw(rng, lang, fact: Fact):
        others = [f for f in FACTS[kind] if f.answer[lang] != fact.answer[lang]]
        fields = {"a": fact.about[lang], "a_topic": josa(fact.about[lang], "은/는")}
        fields["a_eul"] = josa(fact.about[lang], "을/를")[len(fact.about[lang]) :]  # the particle alone, after "》"
        fields["a_cap"] = fields["a"][:1].upper() + fields["a"][1:]
        return Draft(fields, fact.key, {"fact": fact, "others": rng.sample(others, 3)})

    return draw


FAMILIES: dict[str, Family] = {
    "math.shopping": Family(
        "open_math",
        _m_shopping,
        {
            "fr": [
                "{name} achète {n} {obj} à {p} € l'unité. Quel est le montant total, en euros ?",
                "Au marché, {name} prend {n} {obj}. Le prix unitaire est de {p} €. Combien cela coûte-t-il en tout ?",
            ],
            "de": [
                "{name} kauft {n} {obj} zu je {p} €. Wie viel kostet das insgesamt in Euro?",
                "Auf dem Markt nimmt {name} {n} {obj}. Ein Stück kostet {p} €. Wie hoch ist der Gesamtpreis?",
            ],
            "es": [
                "{name} compra {n} {obj} a {p} € la unidad. ¿Cuánto paga en total, en euros?",
                "En el mercado, {name} toma {n} {obj}. El precio por unidad es de {p} €. ¿Cuánto cuesta todo?",
            ],
            "ko": [
                "{name_topic} {obj} {n}개를 개당 {p}원에 샀습니다. 모두 얼마를 냈습니까?",
                "시장에서 {obj} {n}개를 샀습니다. 한 개의 가격은 {p}원입니다. 전체 가격은 얼마입니까?",
            ],
        },
    ),
    "math.left": Family(
        "open_math",
        _m_left,
        {
            "fr": [
                "{name} a {a} {obj}. {name} en donne {b} à un ami. Combien de {obj} reste-t-il à {name} ?",
                "Dans un panier, il y a {a} {obj}. On en retire {b}. Combien en reste-t-il ?",
            ],
            "de": [
                "{name} hat {a} {obj} und verschenkt {b} davon. Wie viele {obj} hat {name} noch?",
                "In einem Korb liegen {a} {obj}. Man nimmt {b} heraus. Wie viele bleiben übrig?",
            ],
            "es": [
                "{name} tiene {a} {obj} y regala {b}. ¿Con {cuantos} {obj} se queda?",
                "En una cesta hay {a} {obj}. Se sacan {b}. ¿{Cuantos} quedan?",
            ],
            "ko": [
                "{name}에게 {obj} {a}개가 있습니다. 친구에게 {b}개를 주었습니다. 남은 {obj_topic} 몇 개입니까?",
                "바구니에 {obj} {a}개가 있습니다. 그중 {b}개를 꺼냈습니다. 몇 개가 남았습니까?",
            ],
        },
    ),
    "math.share": Family(
        "open_math",
        _m_share,
        {
            "fr": [
                "On répartit {a} litres de jus équitablement dans {b} bouteilles. Combien de litres y a-t-il dans "
                "chaque bouteille ?",
                "{a} litres d'eau sont versés à parts égales dans {b} seaux. Quelle quantité, en litres, contient "
                "chaque seau ?",
            ],
            "de": [
                "{a} Liter Saft werden gleichmäßig auf {b} Flaschen verteilt. Wie viele Liter sind in jeder Flasche?",
                "{a} Liter Wasser werden zu gleichen Teilen in {b} Eimer gefüllt. Wie viel Liter enthält jeder Eimer?",
            ],
            "es": [
                "Se reparten {a} litros de zumo a partes iguales en {b} botellas. ¿Cuántos litros hay en cada botella?",
                "Se vierten {a} litros de agua por igual en {b} cubos. ¿Cuántos litros contiene cada cubo?",
            ],
            "ko": [
                "주스 {a}리터를 병 {b}개에 똑같이 나누어 담았습니다. 병 하나에 몇 리터가 들어 있습니까?",
                "물 {a}리터를 양동이 {b}개에 똑같이 나누었습니다. 양동이 하나에 들어 있는 물은 몇 리터입니까?",
            ],
        },
    ),
    "math.population": Family(
        "open_math",
        _m_population,
        {
            "fr": [
                "Une ville compte {a} habitants. L'année suivante, elle en gagne {b}. Combien d'habitants "
                "compte-t-elle alors ?",
                "Un stade contient {a} places et on en ajoute {b}. Combien de places y a-t-il désormais ?",
            ],
            "de": [
                "Eine Stadt hat {a} Einwohner. Im nächsten Jahr kommen {b} hinzu. Wie viele Einwohner hat sie dann?",
                "Ein Stadion hat {a} Plätze, und es werden {b} Plätze angebaut. Wie viele Plätze hat es jetzt?",
            ],
            "es": [
                "Una ciudad tiene {a} habitantes. Al año siguiente gana {b}. ¿Cuántos habitantes tiene entonces?",
                "Un estadio tiene {a} asientos y se añaden {b}. ¿Cuántos asientos tiene ahora?",
            ],
            "ko": [
                "어느 도시의 인구는 {a}명입니다. 다음 해에 {b}명이 늘었습니다. 인구는 모두 몇 명입니까?",
                "경기장의 좌석 {a}개에 {b}개를 더 설치했습니다. 좌석은 모두 몇 개입니까?",
            ],
        },
    ),
    "math.fractions": Family(
        "open_math",
        _m_fractions,
        {
            "fr": ["Calculez {f1} + {f2}.", "Quelle est la somme de {f1} et de {f2} ?"],
            "de": ["Berechne {f1} + {f2}.", "Wie groß ist die Summe von {f1} und {f2}?"],
            "es": ["Calcula {f1} + {f2}.", "¿Cuál es la suma de {f1} y {f2}?"],
            "ko": ["{f1} + {f2}의 값을 구하시오.", "{f1_and} {f2}의 합은 얼마입니까?"],
        },
    ),
    "math.percent": Family(
        "open_math",
        _m_percent,
        {
            "fr": [
                "Combien font {p} % de {x} € ?",
                "Un article coûte {x} €. À combien s'élève une remise de {p} % ?",
            ],
            "de": ["Wie viel sind {p} % von {x} €?", "Ein Artikel kostet {x} €. Wie hoch ist ein Rabatt von {p} %?"],
            "es": [
                "¿Cuánto es el {p} % de {x} €?",
                "Un artículo cuesta {x} €. ¿A cuánto asciende un descuento del {p} %?",
            ],
            "ko": ["{x}원의 {p}%는 얼마입니까?", "{x}원짜리 물건을 {p}% 할인하면 할인 금액은 얼마입니까?"],
        },
    ),
    "mc.capital": Family(
        "multiple_choice",
        _mc_capital,
        {
            "fr": ["Quelle est la capitale {a} ?", "Laquelle de ces villes est la capitale {a} ?"],
            "de": ["Was ist die Hauptstadt {a}?", "Welche dieser Städte ist die Hauptstadt {a}?"],
            "es": ["¿Cuál es la capital {a}?", "¿Cuál de estas ciudades es la capital {a}?"],
            "ko": ["{a}의 수도는 어디입니까?", "다음 중 {a}의 수도는?"],
        },
    ),
    "mc.symbol": Family(
        "multiple_choice",
        _mc_symbol,
        {
            "fr": ["Quel est le symbole chimique {a} ?", "Parmi ces symboles, lequel est celui {a} ?"],
            "de": ["Welches chemische Symbol hat {a}?", "Welches dieser Symbole steht für {a}?"],
            "es": ["¿Cuál es el símbolo químico {a}?", "¿Cuál de estos es el símbolo químico {a}?"],
            "ko": ["{a}의 원소 기호는 무엇입니까?", "다음 중 {a}의 원소 기호는?"],
        },
    ),
    "mc.product": Family(
        "multiple_choice",
        _mc_product,
        {
            "fr": ["Combien font {a} × {b} ?", "Quel est le résultat de {a} × {b} ?"],
            "de": ["Was ergibt {a} × {b}?", "Wie viel ist {a} × {b}?"],
            "es": ["¿Cuánto es {a} × {b}?", "¿Cuál es el resultado de {a} × {b}?"],
            "ko": ["{a} × {b}의 값은 얼마입니까?", "다음 중 {a} × {b}의 값은?"],
        },
    ),
    "mc.largest": Family(
        "multiple_choice",
        _mc_largest,
        {
            "fr": ["Quel est le plus grand de ces nombres ?", "Lequel de ces nombres est le plus grand ?"],
            "de": ["Welche dieser Zahlen ist die größte?", "Welche Zahl ist am größten?"],
            "es": ["¿Cuál de estos números es el mayor?", "¿Qué número es el más grande?"],
            "ko": ["다음 중 가장 큰 수는 무엇입니까?", "다음 수 중에서 가장 큰 것은?"],
        },
    ),
    "mc.weekday": Family(
        "multiple_choice",
        _mc_weekday,
        {
            "fr": [
                "Si nous sommes {day} aujourd'hui, quel jour serons-nous dans {k} jours ?",
                "Aujourd'hui, c'est {day}. Quel jour de la semaine sera-t-on dans {k} jours ?",
            ],
            "de": [
                "Heute ist {day}. Welcher Wochentag ist in {k} Tagen?",
                "Wenn heute {day} ist, welcher Tag ist in {k} Tagen?",
            ],
            "es": [
                "Si hoy es {day}, ¿qué día será dentro de {k} días?",
                "Hoy es {day}. ¿Qué día de la semana será en {k} días?",
            ],
            "ko": ["오늘이 {day}이면 {k}일 후는 무슨 요일입니까?", "오늘은 {day}입니다. {k}일 뒤는 무슨 요일입니까?"],
        },
    ),
    "qa.capital": Family(
        "open_qa",
        _qa("capital"),
        {
            "fr": ["Quelle est la capitale {a} ?", "Quelle ville est la capitale {a} ?", "Capitale {a} ?"],
            "de": ["Was ist die Hauptstadt {a}?", "Welche Stadt ist die Hauptstadt {a}?", "Hauptstadt {a}?"],
            "es": ["¿Cuál es la capital {a}?", "¿Qué ciudad es la capital {a}?", "¿Capital {a}?"],
            "ko": ["{a}의 수도는 어디입니까?", "{a}의 수도는 어느 도시입니까?", "{a}의 수도는?"],
        },
    ),
    "qa.symbol": Family(
        "open_qa",
        _qa("symbol"),
        {
            "fr": ["Quel est le symbole chimique {a} ?", "Comment note-t-on le symbole chimique {a} ?"],
            "de": ["Was ist das chemische Symbol für {a}?", "Wie lautet das Elementsymbol für {a}?"],
            "es": ["¿Cuál es el símbolo químico {a}?", "¿Cómo se escribe el símbolo químico {a}?"],
            "ko": ["{a}의 원소 기호는 무엇입니까?", "{a}의 화학 기호는?"],
        },
    ),
    "qa.year": Family(
        "open_qa",
        _qa("year"),
        {
            "fr": ["En quelle année a eu lieu {a} ?", "{a_cap} : en quelle année ?"],
            "de": ["In welchem Jahr fand {a} statt?", "Wann fand {a} statt? Nenne das Jahr."],
            "es": ["¿En qué año tuvo lugar {a}?", "¿En qué año fue {a}?"],
            "ko": ["{a_topic} 몇 년에 일어났습니까?", "{a_topic} 언제 일어났습니까? 연도를 답하시오."],
        },
    ),
    "qa.author": Family(
        "open_qa",
        _qa("author"),
        {
            "fr": ["Qui a écrit « {a} » ?", "Quel écrivain est l'auteur de « {a} » ?"],
            "de": ["Wer schrieb „{a}“?", "Von wem stammt das Werk „{a}“?"],
            "es": ["¿Quién escribió «{a}»?", "¿Quién es el autor de «{a}»?"],
            "ko": ["《{a}》의 작가는 누구입니까?", "《{a}》{a_eul} 쓴 사람은 누구입니까?"],
        },
    ),
}
# what a sentence says about a fact or an option: "{t}" is the answer (right or wrong), "{a}" what is asked about
CLAIMS = {
    "capital": {
        "fr": "La capitale {a} est {t}.",
        "de": "Die Hauptstadt {a} ist {t}.",
        "es": "La capital {a} es {t}.",
        "ko": "{a}의 수도는 {t}입니다.",
    },
    "symbol": {
        "fr": "Le symbole chimique {a} est {t}.",
        "de": "Das chemische Symbol für {a} ist {t}.",
        "es": "El símbolo químico {a} es {t}.",
        "ko": "{a}의 원소 기호는 {t}입니다.",
    },
    "year": {
        "fr": "{a_cap} a eu lieu en {t}.",
        "de": "{a_cap} fand {t} statt.",
        "es": "{a_cap} tuvo lugar en {t}.",
        "ko": "{a_topic} {t}년에 일어났습니다.",
    },
    "author": {
        "fr": "« {a} » est une œuvre de {t}.",
        "de": "„{a}“ stammt von {t}.",
        "es": "«{a}» es obra de {t}.",
        "ko": "《{a}》의 작가는 {t}입니다.",
    },
    "product": {"fr": "{a} × {b} = {t}.", "de": "{a} × {b} = {t}.", "es": "{a} × {b} = {t}.", "ko": "{a} × {b} = {t}."},
    "largest": {
        "fr": "{t} est le plus grand nombre de la liste.",
        "de": "{t} ist die größte Zahl der Liste.",
        "es": "{t} es el número más grande de la lista.",
        "ko": "목록에서 가장 큰 수는 {t}입니다.",
    },
    "weekday": {
        "fr": "Dans {k} jours, nous serons {t}.",
        "de": "In {k} Tagen ist {t}.",
        "es": "Dentro de {k} días será {t}.",
        "ko": "{k}일 후는 {t}입니다.",
    },
}


def _claim(kind: str, lang: str, fields: dict, t: str) -> str:
    """The sentence that states ``t`` as the answer of a question of ``kind``."""
    fields = {**fields, "a_cap": str(fields.get("a", ""))[:1].upper() + str(fields.get("a", ""))[1:]}
    if lang == "ko" and "a" in fields:
        fields["a_topic"] = josa(str(fields["a"]), "은/는")
    return CLAIMS[kind][lang].format(**fields, t=t)


def _side(kind: str, lang: str, other: Fact) -> str:
    """A true sentence about another fact of the same kind: a distractor beside the answer."""
    fields = {"a": other.about[lang]}
    return _claim(kind, lang, fields, other.answer[lang])


# ----------------------------------------------------------------------------- splits
def split_of(key: str, heldout: bool = False) -> str:
    """The one split of a key (a fact's, "capital:France", in every language and category, or "question:<text>",
    a multiple-choice question's stem without its options): by hash, 70/15/15 (a held-out phrasing: val or test)."""
    h = int(hashlib.md5(f"{VERSION}/{key}".encode()).hexdigest()[:8], 16)
    if heldout:
        return ("val", "test")[h % 2]
    return "train" if h % 20 < 14 else "val" if h % 20 < 17 else "test"


def _family_kind(name: str) -> str:
    """ "capital" of "mc.capital": the kind of fact or claim of a family."""
    return name.split(".", 1)[1]


def _askable(kind: str) -> list[Fact]:
    """The facts of a kind asked in open QA: chemical symbols of two letters only (a judge that finds "C" in an
    answer naming "Ca" is not what the rows should test)."""
    return [f for f in FACTS[kind] if kind != "symbol" or len(f.answer["fr"]) == 2]


def new_item(rng: random.Random, category: str, lang: str, split: str) -> Item:
    """A fresh item of the category in the language that belongs to ``split`` (its fact or question text)."""
    names = [n for n, f in FAMILIES.items() if f.category == category]
    for _ in range(1000):
        name = rng.choice(names)
        family = FAMILIES[name]
        phrasings = family.phrasings[lang]
        index = rng.randrange(len(phrasings) - 1 if split == "train" and len(phrasings) > 1 else len(phrasings))
        heldout = index == len(phrasings) - 1 and len(phrasings) > 1
        if category == "open_qa":  # draw among the facts of this split only
            pool = [f for f in _askable(_family_kind(name)) if split_of(f.key) == split]
            if not pool:
                continue
            draft = family.draw(rng, lang, rng.choice(pool))
        else:
            draft = family.draw(rng, lang)
        question = phrasings[index].format(**draft.fields)
        if category == "multiple_choice":
            question, references, labels, options, correct = _options(rng, lang, question, draft.data)
        key = draft.key or "question:" + (question.split("\n", 1)[0] if category == "multiple_choice" else question)
        if split_of(key, heldout and draft.key is None) != split:
            continue
        item = Item(
            category,
            question,
            [],
            task=f"{_TASK[category]}-{lang}",
            family=name,
            template=f"{name}/{index}",
            heldout=heldout,
            split_key=key,
        )
        if category == "open_math":
            _fill_math(item, draft, lang)
        elif category == "multiple_choice":
            item.references, item.labels, item.options, item.correct = references, labels, options, correct
            item.claim = _claim(_family_kind(name), lang, draft.fields, "{t}")
        else:
            _fill_qa(item, draft, lang, _family_kind(name))
        return item
    raise RuntimeError(f"no {category} item of {lang} found for split {split!r}")


def _options(rng, lang, stem, data):
    """The question with its options listed, the reference, the labels, the options and the right index."""
    k = rng.choice([4, 4, 5])
    options = [data["right"], *rng.sample(data["wrong"], min(k - 1, len(data["wrong"])))]
    rng.shuffle(options)
    correct = options.index(data["right"])
    style = rng.choice(["A.", "A)", "(A)"] + (["circled"] * 3 if lang == "ko" else []))
    letters = "ABCDEFGHIJ"[: len(options)]
    if style == "circled":
        shown = list(CIRCLED[: len(options)])
        labels, reference = [str(i + 1) for i in range(len(options))], str(correct + 1)
    else:
        shown = [style.replace("A", x) for x in letters]
        labels, reference = list(letters), letters[correct]
    lines = [f"{label} {text}" for label, text in zip(shown, options)]
    return "\n".join([stem, *lines]), [reference], labels, options, correct


def _fill_math(item: Item, draft: Draft, lang: str) -> None:
    data = draft.data
    value = data["value"]
    item.value, item.unit, item.intermediates = value, data["unit"], data["intermediates"]
    references = [fmt(value)]
    if terminating(value) and local(value, lang) != fmt(value):
        references.append(local(value, lang))
    item.references = references
    item.steps = [PHRASES[lang]["compute"].format(expr=data["expr"], ans=ANS)]
    item.forms = _number_forms(value, item.unit, lang)


def _fill_qa(item: Item, draft: Draft, lang: str, kind: str) -> None:
    fact, others = draft.data["fact"], draft.data["others"]
    item.references = [fact.answer[lang], *fact.aliases[lang]]
    item.claim = _claim(kind, lang, draft.fields, "{t}")
    item.spans = [o.answer[lang] for o in others]
    item.facts = [_side(kind, lang, o) for o in others]
    item.forms = [("alias", a) for a in fact.aliases[lang]]
    if kind == "year":
        item.forms.append(("phrase", {"fr": "en {t}", "de": "im Jahr {t}", "es": "en {t}", "ko": "{t}년"}[lang]))
        item.spans = [str(int(fact.answer[lang]) + d) for d in (-1, 1, -10, 10)]


# ----------------------------------------------------------------------------- answers
def _number_forms(value: Fraction, unit: str, lang: str) -> list[tuple[str, str]]:
    """Equivalent correct texts of a number: the language's notation, without grouping, as a fraction, in words,
    with its unit."""
    forms = []
    if terminating(value):
        text = local(value, lang)
        forms += [("local", text), ("local", text)]
        if value.denominator == 1 and value >= 1000:
            forms.append(("plain", local(value, lang, group="")))
            if lang == "fr":
                forms.append(("narrow", local(value, lang, group="\u202f")))
        if unit and (value > 1 or unit in ("€", "원", "개", "명")):  # "1 crayon": no plural unit for one
            money = unit in ("€", "원")
            shown = local(value, lang, places=2) if money and lang != "ko" and value.denominator != 1 else text
            forms.append(("unit", f"{shown}{unit}" if unit in ("원", "개", "명") else f"{shown} {unit}"))
    if value.denominator != 1:
        forms += [("fraction", f"{value.numerator}/{value.denominator}")]
        forms += [("latex", f"\\frac{{{value.numerator}}}{{{value.denominator}}}")]
    if value.denominator == 1 and 0 <= value <= 20:
        word = SMALL_NUMBER_WORDS[lang][int(value)]
        forms.append(("words", f"{word} 개" if lang == "ko" else word))
    return forms


def _wrong_number(item: Item, kind: str, rng: random.Random, lang: str) -> str | None:
    """A wrong value of the kind (off by one, a decimal place off, an intermediate result, the sign flipped), in
    the language."""
    value = item.value
    if kind == "sign":
        candidates = [-value]
    elif kind == "off_by_one":
        candidates = [value + 1, value - 1] if value.denominator == 1 else [value + Fraction(1, 2), value - 1]
    elif kind == "decimal_shift":
        candidates = [value * 10, value / 10] if value.denominator != 1 or value % 10 else [value * 10]
    else:
        candidates = list(item.intermediates)
    candidates = [c for c in candidates if c != value and (c >= 0 or kind == "sign")]
    if not candidates:
        return None
    wrong = rng.choice(candidates)
    if terminating(wrong):
        return local(wrong, lang)
    return f"{wrong.numerator}/{wrong.denominator}"


def _present(
    text: str, style: str, item: Item, lang: str, rng: random.Random, step: str = "", is_label: bool = False
) -> str:
    """An answer text in a presentation style: bare, a final marker, a sentence, markdown, ``\\boxed{}``, reasoning
    (the computation, then a final marker) or the answer with an explanation (``step``: the computation or the
    explanation; ``is_label``: the answer is an option's label)."""
    p = PHRASES[lang]
    if style == "final_line":
        return rng.choice(p["final"]).format(a=text)
    if style == "sentence":  # a multiple-choice label in the words that name one ("es la B", "Antwort B")
        return rng.choice(p["mc_sentence" if is_label else "answer_is"]).format(a=text)
    if style == "markdown":
        return rng.choice(p["markdown"]).format(a=text)
    if style == "boxed":
        return f"{step}\n\n$\\boxed{{{text}}}$" if step else f"$\\boxed{{{text}}}$"
    if style == "reasoning":
        lead = rng.choice(p["intro"] if item.category == "open_math" else p["think"])
        return (
            f"{lead}\n{step}\n{rng.choice(p['final']).format(a=text)}"
            if step
            else rng.choice(p["final"]).format(a=text)
        )
    if style == "explained":
        return f"{text}\n\n{step}" if step else text
    return text


def _style(rng: random.Random, model: str, allowed: tuple[str, ...]) -> str:
    weights = {s: w for s, w in MODELS[model].items() if s in allowed}
    return rng.choices(list(weights), weights=list(weights.values()))[0]


MATH_STYLES = ("bare", "final_line", "sentence", "markdown", "boxed", "reasoning", "explained")
MC_STYLES = ("bare", "final_line", "sentence", "markdown", "reasoning", "explained")
QA_STYLES = ("bare", "final_line", "sentence", "markdown", "reasoning", "explained")


# wrong kinds of open math and their weights: the corpus's, and those of a user's row (``candidate_for``), which
# adds the sign flipped; "right_then_wrong" states an intermediate result, or a number off by one without any
MATH_WRONG = {"off_by_one": 3, "decimal_shift": 2, "intermediate": 3, "right_then_wrong": 2}
USER_MATH_WRONG = {"off_by_one": 3, "decimal_shift": 2, "sign": 1, "intermediate": 2, "right_then_wrong": 2}


def _math_candidate(
    item: Item, label: int, rng: random.Random, model: str, lang: str, wrong_kinds: dict[str, int] = MATH_WRONG
):
    """(text, meta) of a right or wrong answer to an open-math item (``wrong_kinds``: kind -> weight)."""
    right = rng.choice([t for form, t in item.forms if form in ("local", "plain", "narrow")] or [item.forms[0][1]])
    right_step = item.steps[0].replace(ANS, right)
    if label:
        kind = rng.choices(["number", "reasoning"], weights=[5, 2])[0]
        form, text = rng.choice(item.forms)
        style = "reasoning" if kind == "reasoning" else _style(rng, model, MATH_STYLES)
        if style == "boxed" and form in ("unit", "words"):
            style = "final_line"
        step = item.steps[0].replace(ANS, right)
        return _present(text, style, item, lang, rng, step), {"kind": kind, "style": style, "form": form}
    for _ in range(20):
        kind = rng.choices(list(wrong_kinds), weights=list(wrong_kinds.values()))[0]
        source = kind if kind != "right_then_wrong" else "intermediate" if item.intermediates else "off_by_one"
        wrong = _wrong_number(item, source, rng, lang)
        if wrong:
            break
    else:
        raise ValueError("no wrong number applies")
    if kind == "right_then_wrong":  # the computation reaches the answer, the final line states another
        style = "reasoning"
        text = (
            f"{rng.choice(PHRASES[lang]['intro'])}\n{right_step}\n{rng.choice(PHRASES[lang]['final']).format(a=wrong)}"
        )
        return text, {"kind": kind, "style": style, "error": kind}
    style = _style(rng, model, MATH_STYLES)
    step = item.steps[0].replace(ANS, wrong)
    return _present(wrong, style, item, lang, rng, step), {"kind": kind, "style": style, "error": kind}


def _mc_token(item: Item, index: int, rng: random.Random, lang: str, style: str, with_text: bool) -> str:
    """How a candidate names option ``index``: its label ("B", "(B)", "③", "3번"), with its text or not (a user's
    row may list no option texts: then its label only)."""
    text, letter = (item.options[index] if item.options else ""), item.labels[index]
    if _circled(item):
        if with_text:
            return f"{CIRCLED[index]} {text}"
        in_words = style in ("sentence", "final_line") and rng.random() < 0.4
        return f"{index + 1}번" if in_words else CIRCLED[index]
    if with_text:
        return rng.choice([f"{letter}. {text}", f"({letter}) {text}", f"{letter}) {text}"])
    if lang == "ko" and style in ("sentence", "final_line") and rng.random() < 0.3:
        return CIRCLED[index]  # a circled number picks the n-th of lettered options too
    return rng.choice([letter, f"({letter})"] + ([f"{letter}."] if style in ("bare", "markdown") else []))


def _circled(item: Item) -> bool:
    """Whether the question lists circled options ("① 파리"; labels "1", "2" …): the answer names one as "③"."""
    return item.labels[:1] == ["1"] and any(c in item.question for c in CIRCLED)


def _mc_candidate(item: Item, label: int, rng: random.Random, model: str, lang: str):
    """(text, meta) of a right or wrong answer to a multiple-choice item (without option texts: its label only)."""
    numbered = item.labels[0] == "1"  # the regex judge maps an option's text to a letter only
    index = item.correct if label else rng.choice([i for i in range(len(item.labels)) if i != item.correct])
    kinds = ["letter"] + (["letter_text"] + ([] if numbered else ["text"]) if item.options else [])
    kind = rng.choices(kinds, weights=[4, 2, 1][: len(kinds)])[0]
    style = _style(rng, model, MC_STYLES if kind != "text" else ("final_line", "sentence", "reasoning"))
    if style == "explained" and kind != "letter_text" and item.options:
        kind = "letter_text"  # an explained answer opens with its option: "B. Berlin" then why
    if kind == "text":
        answer = item.options[index]
    else:
        answer = _mc_token(item, index, rng, lang, style, with_text=kind == "letter_text")
    why = item.claim.format(t=item.options[index]) if item.claim else ""
    text = _present(answer, style, item, lang, rng, why, is_label=kind == "letter")
    name = kind if label else f"other_{kind}"
    meta = {"kind": name, "style": style}
    return text, ({**meta, "error": name} if not label else meta)


def _qa_candidate(item: Item, label: int, rng: random.Random, model: str, lang: str):
    """(text, meta) of a right or wrong answer to an open-QA item."""
    p = PHRASES[lang]
    right = item.references[0]
    if label:
        # a paragraph needs two side facts, an alias a form (a zero weight draws as if the kind were not listed)
        kinds = {"entity": 4, "buried": 2 if len(item.facts) >= 2 else 0, "hedged": 1, "alias": 2 if item.forms else 0}
        kind = rng.choices(list(kinds), weights=list(kinds.values()))[0]
        if kind == "buried":  # a paragraph: a filler, true facts about other entities, the answer, more of them
            facts = rng.sample(item.facts, 2)
            parts = [rng.choice(p["fillers"]), facts[0], item.claim.format(t=right), facts[1]]
            return " ".join(parts), {"kind": kind, "style": "paragraph"}
        if kind == "hedged":
            return rng.choice(p["hedge"]).format(a=right), {"kind": kind, "style": "sentence"}
        answer, form = right, "entity"
        if kind == "alias":  # a listed alias ("Hugo"), or a year as a phrase ("en 1969", the claim then says it whole)
            form, shape = rng.choice(item.forms)
            answer = shape.format(t=right) if "{t}" in shape else shape
        style = _style(rng, model, QA_STYLES)
        meta = {"kind": kind, "style": style, "form": form}
        if style == "sentence":
            return item.claim.format(t=right if form == "phrase" else answer), meta
        return _present(answer, style, item, lang, rng, _side_fact(item, rng)), meta
    kind = rng.choices(["other_entity", "mention", "mention_final", "refusal"], weights=[5, 2, 1, 1])[0]
    other = rng.choice(item.spans)
    meta = {"kind": kind, "style": "sentence", "error": kind}
    if kind == "refusal":
        return rng.choice(p["refusals"]), meta
    if kind in ("mention", "mention_final"):
        template = rng.choice(p["mentions"]) if kind == "mention" else p["mention_final"]
        return _mention(template, right, other), meta
    style = _style(rng, model, QA_STYLES)
    if style == "sentence":
        return item.claim.format(t=other), {**meta, "style": style}
    return _present(other, style, item, lang, rng, _side_fact(item, rng)), {**meta, "style": style}


def _side_fact(item: Item, rng: random.Random) -> str:
    """A true sentence about another entity to explain an answer with; none for a user's item without them."""
    return rng.choice(item.facts) if item.facts else ""


_WRITERS = {"open_math": _math_candidate, "multiple_choice": _mc_candidate, "open_qa": _qa_candidate}


# ----------------------------------------------------------------------------- rows
def generate(split: str, n: int, seed: int = 0, languages: list[str] | tuple[str, ...] = LANGUAGES) -> list[dict]:
    """n labelled rows of the split, shared evenly between ``languages`` (in that order), deterministic for the
    arguments. Each question yields one correct and one wrong candidate; categories rotate."""
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r} of the multilingual corpus; expected one of {', '.join(SPLITS)}")
    unknown = [lang for lang in languages if lang not in LANGUAGES]
    if unknown or not languages:
        raise ValueError(f"unknown languages {unknown}; expected some of {', '.join(LANGUAGES)}")
    sizes = [n // len(languages) + (i < n % len(languages)) for i in range(len(languages))]
    return [row for lang, size in zip(languages, sizes) for row in _generate_language(split, size, seed, lang)]


def _generate_language(split: str, n: int, seed: int, lang: str) -> list[dict]:
    """n rows of one language; a candidate already written for the same question is drawn again (ids are unique)."""
    rng = random.Random(f"{VERSION}/{lang}/{split}/{seed}")
    models, out, ids, i = list(MODELS), [], set(), 0
    final = LANGUAGE_RULES[lang].final
    while len(out) < n:
        if i > 10 * n + 100:
            raise RuntimeError(f"the {lang} {split} split has too few distinct questions for {n} rows")
        category = CATEGORIES[i % len(CATEGORIES)]
        i += 1
        item = new_item(rng, category, lang, split)
        pair = [_fresh(item, label, rng, models, lang, split, ids) for label in (1, 0)]
        if None in pair:
            continue
        rng.shuffle(pair)
        for row in pair:
            row["label_source"] = label_source(lang)
            row["meta"]["formatted"] = bool(final.search(row["candidate"]))
            ids.add(row["id"])
            out.append(row)
    return out[:n]


def _fresh(
    item: Item, label: int, rng: random.Random, models: list[str], lang: str, split: str, ids: set
) -> dict | None:
    """A row of the given label whose candidate this split does not hold yet for the question; None if none comes."""
    for _ in range(30):
        model = rng.choice(models)
        text, meta = _WRITERS[item.category](item, label, rng, model, lang)
        fact = None if item.split_key.startswith("question:") else item.split_key  # "capital:France"
        row = make_record(item, text, label, model, split, {**meta, "language": lang, "fact": fact})
        if row["id"] not in ids:
            return row
    return None


# ----------------------------------------------------------------------------- user rows (``synth --language``)
# what a question holding a passage says in each language (besides the English marks of ``user.has_passage``)
_PASSAGE = {
    "fr": r"^\s*(?:texte|contexte|passage|article|document|extrait)\s*:|\b(?:selon|d'après) le (?:texte|passage|"
    r"document|article)\b|\blisez le texte\b",
    "de": r"^\s*(?:text|kontext|passage|artikel|dokument|auszug|abschnitt)\s*:|\b(?:laut|gemäß|nach) dem (?:text|"
    r"artikel|abschnitt|dokument)\b|\blies den text\b",
    "es": r"^\s*(?:texto|contexto|pasaje|artículo|documento|fragmento)\s*:|\b(?:según|de acuerdo con) el (?:texto|"
    r"pasaje|artículo|documento)\b|\blee el texto\b",
    "ko": r"^\s*(?:지문|본문|문맥|글|기사|자료)\s*[:：]|(?:지문|본문|글|기사|자료)에\s*(?:따르면|의하면)|다음 글을 읽고",
}
_PASSAGE = {lang: re.compile(pattern, re.IGNORECASE | re.MULTILINE) for lang, pattern in _PASSAGE.items()}
# a reference saying that the passage has no answer
_UNANSWERABLE = {
    "fr": r"sans réponse|pas de réponse|impossible à (?:dire|déterminer)|inconnue?|aucune?",
    "de": r"keine antwort|nicht beantwortbar|unbeantwortbar|unbekannt|nicht bestimmbar",
    "es": r"sin respuesta|no hay respuesta|no se puede (?:responder|determinar)|desconocid[oa]|ningun[oa]",
    "ko": r"답\s*없음|알 수 없음|답할 수 없음|정답 없음|해당 없음",
}
_UNANSWERABLE = {lang: re.compile(rf"\s*(?:{pattern})\W*", re.IGNORECASE) for lang, pattern in _UNANSWERABLE.items()}
# a number and its unit: "3,5 litres", "12,50 €", "€12.50", "45 312 habitants", "12,500원", "7개"
_QUANTITY = re.compile(
    r"\s*(?P<pre>[€$£₩])?\s*(?P<number>[-+−]?\d(?:[\d.,]|[ \u00a0\u202f](?=\d{3}(?!\d)))*)\s*"
    r"(?P<unit>[^\W\d_]+(?:[ '’-][^\W\d_]+)?|[€%$£₩])?\s*"
)
_NUMBER_IN_TEXT = re.compile(r"\d{1,3}(?:[ \u00a0\u202f]\d{3})+(?![\d,.]\d)|\d[\d.,]*\d|\d")
_OPTION_WORD = re.compile(r"^(?:option|choix|réponse|antwort|auswahl|opción|respuesta|alternativa|보기)\s+", re.I)
_LABEL_ONLY = re.compile(r"[(\[]?([A-Ja-j]|\d{1,2})[)\].:]?")
MAX_UNIT_CHARS = 15  # a reference "3,5 litres": a longer tail is prose, not a unit


def reference_value(reference: str, lang: str) -> tuple[Fraction, str] | None:
    """(value, unit) of a numeric reference read in the language's notation ("3,5 litres" -> (7/2, "litres"),
    "12,500원" in Korean -> (12500, "원"), "1.000" in German -> 1000; "3.5" is 3.5 in every language: a dot
    before other than three digits is a decimal point); None when it holds no digit or is no single number."""
    if not any(c.isdigit() for c in reference):
        return None
    value = number_value(reference, lang)
    if value is not None:
        return value, ""
    m = _QUANTITY.fullmatch(reference)
    if not m or len(m["unit"] or "") > MAX_UNIT_CHARS or (m["pre"] and m["unit"]):
        return None
    value = number_value(m["number"], lang)
    return None if value is None else (value, m["pre"] or m["unit"] or "")


def _option_key(reference: str, labels: list[str], options: list[str]) -> str | None:
    """The option label a reference names: "B", "(b)", "Option C", "③" or "3번" (the third), or an option's text;
    None if it names none (a label the question does not list is returned as it is)."""
    ref = reference.strip()
    if len(ref) == 1 and ref in CIRCLED:
        return str(CIRCLED.index(ref) + 1)
    bare = re.sub(r"\s*번$", "", _OPTION_WORD.sub("", ref))
    if m := _LABEL_ONLY.fullmatch(bare):
        return m[1].upper()
    return labels[options.index(ref)] if ref in options else None


def infer_category(question: str | None, reference: str, lang: str) -> str:
    """The category of a user's row in ``lang``, as ``user.infer_category`` reads English rows: multiple_choice for
    an option label with options listed (circled ones in Korean: a reference "3" is the third), open_math for a
    number in the language's notation (with a unit), context_extraction for a passage (the language's marks: "Texte :", "laut dem Text",
    "según el texto", "지문에 따르면", or the English ones, or over 400 characters), an "unanswerable" reference
    ("sans réponse", "keine Antwort", "sin respuesta", "답 없음"), a long one or no question; else open_qa."""
    question = question or ""
    labels, _ = parse_options(question, lang)
    if labels and _option_key(reference, labels, []) in labels:  # before numbers: "3" picks the third of "① …"
        return "multiple_choice"
    if reference_value(reference, lang) is not None:
        return "open_math"
    if not question.strip() or _PASSAGE[lang].search(question) or _UNANSWERABLE[lang].fullmatch(reference):
        return "context_extraction"
    category = english_category(question, reference)
    return "open_qa" if category in ("open_math", "multiple_choice") else category  # not a number or label here


class Known(NamedTuple):
    """An entity of the lexicon in one language: its group, its names (the first the usual one) and a true
    sentence about it ("La capitale de l'Italie est Rome."; "" for a weekday)."""

    group: str
    names: tuple[str, ...]
    side: str


@functools.cache
def lexicon(lang: str) -> dict[str, list[Known]]:
    """The entities the corpus knows in ``lang``, by group: capitals, chemical symbols, authors, weekdays."""
    groups = {
        kind: [Known(kind, (f.answer[lang], *f.aliases[lang]), _side(kind, lang, f)) for f in FACTS[kind]]
        for kind in ("capital", "symbol", "author")
    }
    groups["weekday"] = [Known("weekday", (day,), "") for day in WEEKDAYS[lang]]
    return groups


def _known(references: list[str], lang: str) -> Known | None:
    """The lexicon entity a reference names (any of its names, any case), if one does."""
    wanted = {r.strip().lower() for r in references}
    for members in lexicon(lang).values():
        for known in members:
            if wanted & {n.lower() for n in known.names}:
                return known
    return None


def _phrasing_pattern(phrasing: str) -> re.Pattern:
    """A regex reading a corpus phrasing back: "{a}" (and its Korean forms with particles) captured as ``a``."""
    pattern = re.escape(phrasing).replace(r"\ ", r"\s*")
    for field, regex in (
        (r"\{a\}", "(?P<a>.+?)"),
        (r"\{a_cap\}", "(?P<a>.+?)"),
        (r"\{a_topic\}", "(?P<a>.+?)(?:은|는)"),
        (r"\{a_eul\}", "(?:을|를)"),
    ):
        pattern = pattern.replace(field, regex, 1)
    return re.compile(pattern, re.IGNORECASE)


def _restated(question: str, lang: str) -> str | None:
    """The claim template ("La capitale de la France est {t}.") of a question asked as one of the corpus's open-QA
    phrasings ("Quelle est la capitale de la France ?"); None for any other question."""
    text = " ".join(question.replace("\u202f", " ").split())
    for name, family in FAMILIES.items():
        if family.category != "open_qa":
            continue
        for phrasing in family.phrasings[lang]:
            if m := _phrasing_pattern(phrasing).fullmatch(text):
                about = m["a"][:1].lower() + m["a"][1:] if "{a_cap}" in phrasing else m["a"]
                return _claim(_family_kind(name), lang, {"a": about}, "{t}")
    return None


def _user_math(item: Item, lang: str) -> Item:
    """An open-math item from a numeric reference: its value and unit, the numbers of the question (wrong answers
    copied from it), the equivalent forms of ``_number_forms``; the reference in English notation is added where
    none is ("3,5" -> "3.5": what Math-Verify and a benchmark read)."""
    ref = item.references[0]
    read = reference_value(ref, lang)
    if read is None:
        raise ValueError(f"open_math reference {ref!r} is no number in {lang}")
    value, unit = read
    item.value = value
    item.unit = unit if unit.isalpha() or unit in ("€", "원") else ""  # "%", "$": the bare number only
    numbers = (number_value(n.rstrip(".,"), lang) for n in _NUMBER_IN_TEXT.findall(item.question))
    item.intermediates = [n for n in dict.fromkeys(numbers) if n is not None and n != value]
    item.steps = [PHRASES[lang]["result"].format(ans=ANS)]
    item.forms = _number_forms(value, item.unit, lang) or [("fraction", f"{value.numerator}/{value.denominator}")]
    if not any(number_value(r) == value for r in item.references):
        item.references.append(fmt(value) if terminating(value) else f"{value.numerator}/{value.denominator}")
    return item


def _user_mc(item: Item, lang: str) -> Item:
    """A multiple-choice item: the options the question lists (Korean: circled ones too) and the one the
    reference names; a label without options listed gives labels only (A-D, or as many as the label needs)."""
    labels, options = parse_options(item.question, lang)
    ref = item.references[0]
    key = _option_key(ref, labels, options)
    if key is None:
        raise ValueError(f"multiple-choice reference {ref!r} is not an option label")
    if key not in labels:  # options not found in the question: labels only
        count = max(4, int(key) if key.isdigit() else ord(key) - ord("A") + 1)
        labels = [str(i + 1) if key.isdigit() else chr(ord("A") + i) for i in range(count)]
        options = []
    item.labels, item.options, item.correct = labels, options, labels.index(key)
    return item


def _user_qa(item: Item, lang: str) -> Item:
    """An open-QA item: the references' other names as aliases; wrong entities of the reference's group and true
    side sentences about them when the lexicon knows it (a capital, a chemical symbol, an author, a weekday),
    moved numbers for a number ("1969" -> 1968, 1979; "Apollo 11" -> "Apollo 12"), else none (only the
    domain-free wrong kinds of ``candidate_for``); the question restated when asked as the corpus asks it."""
    refs = item.references
    rng = random.Random(f"{VERSION}/{lang}/{item.question}\x00{refs}")
    item.claim = _restated(item.question, lang) or PHRASES[lang]["claim"]
    names = list(refs[1:])
    known = _known(refs, lang)
    if known:
        right = {n.lower() for n in (*refs, *known.names)}
        names += [n for n in known.names if n.lower() not in {r.lower() for r in refs}]
        others = [k for k in lexicon(lang)[known.group] if not right & {n.lower() for n in k.names}]
        if known.group == "symbol":  # one letter is no answer to offer ("C" read inside "Ca")
            others = [k for k in others if len(k.names[0]) == 2]
        chosen = rng.sample(others, min(6, len(others)))
        item.spans = [k.names[0] for k in chosen]
        item.facts = [k.side for k in chosen[:3] if k.side]
    elif refs[0].strip().isdigit():
        n = int(refs[0])
        item.spans = [str(n + d) for d in (-1, 1, -10, 10) if n + d >= 0]
    else:
        item.spans = [b for b in (_bump(refs[0], -1), _bump(refs[0], 1)) if b]
    item.forms = [("alias", n) for n in dict.fromkeys(names)]
    return item


def item_from_reference(
    question: str | None, references: list[str], category: str | None = None, task: str = "user", lang: str = "fr"
) -> Item:
    """An :class:`Item` the writers of ``lang`` can answer, from a user's question and references (the
    multilingual ``user.item_from_reference``): the value and unit (math), the options (multiple choice), aliases
    and wrong entities (open QA). ``category`` None: ``infer_category``. Context extraction (and ``other``) is
    refused with a ValueError: no writer of these languages answers from a passage."""
    if lang not in LANGUAGES:
        raise ValueError(f"unknown language {lang!r}; expected one of {', '.join(LANGUAGES)}")
    ref = references[0]
    inferred = category is None
    category = category or infer_category(question, ref, lang)
    if category not in CATEGORIES:
        why = " (inferred: a passage, an 'unanswerable' or long reference, or no question)" if inferred else ""
        raise ValueError(
            f"category {category}{why} is English only; --language {lang} writes {', '.join(CATEGORIES)}: "
            "give the row one of these or use --language en"
        )
    item = Item(category, question or "", list(references), task=task)
    return {"open_math": _user_math, "multiple_choice": _user_mc, "open_qa": _user_qa}[category](item, lang)


# wrong kinds any question has, for a user's row: the reference refused or negated, two answers without choosing,
# the reference named then another answer stated ("Ce n'est pas 3,5.\nRéponse finale : 4,5")
FREE_WRONG = {"refusal": 2, "negation": 2, "between": 1, "mention_final": 1}
FREE_SHARE = 0.25  # of a user's wrong candidates, where the category's own wrong kinds apply


def _answers(item: Item, rng: random.Random, lang: str) -> tuple[str, str | None]:
    """The right answer as a short text and a wrong one (None if none is known): the number and another
    (math), the right option's label and another's (multiple choice), the reference and another entity (QA)."""
    if item.category == "open_math":
        right = [t for form, t in item.forms if form in ("local", "plain", "fraction")] or [item.forms[0][1]]
        return right[0], _wrong_number(item, "off_by_one", rng, lang)
    if item.category == "multiple_choice":
        name = (lambda i: CIRCLED[i]) if _circled(item) else (lambda i: item.labels[i])
        other = rng.choice([i for i in range(len(item.labels)) if i != item.correct])
        return name(item.correct), name(other)
    return item.references[0], rng.choice(item.spans) if item.spans else None


def _free_wrong(item: Item, rng: random.Random, lang: str) -> tuple[str, dict]:
    """(text, meta) of a wrong answer of a kind any question has (``FREE_WRONG``)."""
    p = PHRASES[lang]
    right, other = _answers(item, rng, lang)
    kinds = {k: w for k, w in FREE_WRONG.items() if other or k in ("refusal", "negation")}
    kind = rng.choices(list(kinds), weights=list(kinds.values()))[0]
    meta = {"kind": kind, "style": "sentence", "error": kind}
    if kind == "refusal":
        return rng.choice(p["refusals"]), meta
    if kind == "negation":
        return _mention(rng.choice(p["negation"]), right, ""), meta
    if kind == "between":
        first, second = rng.sample([right, other], 2)
        return rng.choice(p["between"]).format(a=first, b=second), meta
    return _mention(p["mention_final"], right, other), {**meta, "style": "reasoning"}


def candidate_for(item: Item, label: int, rng: random.Random, model: str, lang: str) -> tuple[str, dict]:
    """(text, meta) of a right (``label`` 1) or wrong answer in ``lang`` to an item of ``item_from_reference``:
    the corpus's writers (markers, notation, words, units, circled options, paragraphs, reasoning), with the sign
    flipped among math's wrong kinds, and the domain-free kinds of ``FREE_WRONG`` for a share of the wrong ones
    (all of them for an open-QA reference the lexicon does not know and that holds no number)."""
    if label == 0 and ((item.category == "open_qa" and not item.spans) or rng.random() < FREE_SHARE):
        return _free_wrong(item, rng, lang)
    if item.category == "open_math":
        return _math_candidate(item, label, rng, model, lang, USER_MATH_WRONG)
    return _WRITERS[item.category](item, label, rng, model, lang)
