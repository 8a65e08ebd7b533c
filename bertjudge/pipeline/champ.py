"""``python -m bertjudge champ``: real LLM solutions of competition math (CHAMP) as rule-labelled records.

CHAMP (Mao, Kim and Zhou, 2024; ``pip install champ-dataset``, MIT; ``pip install 'bertjudge[real]'``)
ships 270 competition math problems with reference answers and 19,440 conversations in which GPT-3.5,
GPT-4, GPT-4 Turbo and PaLM 2 Medium solve them under 18 prompt variants (0-shot, 5-shot, part of the
solution given, concepts and hints given…), without correctness labels. Each conversation becomes
one record (the schema of ``bertjudge.core.records``):

- ``question``: the problem text (the variant's extra context — concepts, hints, examples, part of
  the solution — is not repeated; ``meta.variant`` names it);
- ``candidate``: the model's solution: the model turn just before CHAMP's follow-up user turn "Now,
  summarize the answer above in one sentence…" (in the concept variants, earlier model turns explain
  concepts and are not the solution). The one-sentence summary the model wrote next is kept in
  ``meta.summary``, not in the candidate. A solution cut by the length limit (``LENGTH_CURRENT``) is
  kept and marked ``meta.truncated``; a turn with ``LENGTH_PREVIOUS`` (no text: the model was not
  called after a cut) is skipped. Without a summarizer turn, the last model turn is the solution;
- ``references``: [the problem's answer]; ``candidate_model``: the model; ``task`` ``champ``;
  ``category`` ``open_math``; ``split``: train/val/test by a hash of the problem (70/10/20), so that
  the splits share no problem; ``meta``: problem id, variant, CHAMP category, conversation key.

Labels come from rules, and only where rules are reliable (``label_source``
``rule:math-verify-confirmed``):

1. the reference must be an exact value — a number, a fraction or a closed expression without
   variables ("sqrt(3)/3", "2^997"; "C(10, 5), or equivalently 252" gives 252; "0 is the only
   possible value", "The limit exists and is equal to 2/3" and "2 inequalities" give their number).
   Text answers ("No"), expressions in n, relations, several values and other numbers with words
   ("100 (i.e., all values)": answers say "all", which rules cannot read) are left out;
2. the final answer is extracted (``bertjudge.core.extract.extract_answer``) from the solution and,
   independently, from the summary, and each is compared with Math-Verify: equal, different, or
   undecided (nothing extracted, only the weak last-number rule, unparsable, or a decimal within 1%
   of the reference that is not equal to it — "0.333" for 1/3);
3. label 1 when both say equal; label 0 when both say different and the summary does not mention
   the reference value as a number; anything else (the two disagree — models sometimes state another
   answer in the summary —, one is undecided, a truncated solution) is left out, counted by reason.
"""

from __future__ import annotations

import cmath
import hashlib
import importlib.util
import json
import re
import threading
from collections import Counter, defaultdict
from fractions import Fraction
from pathlib import Path

from bertjudge.core.extract import extract_answer
from bertjudge.core.hashing import file_sha256
from bertjudge.core.records import RecordError, normalize
from bertjudge.judges.regex import math_equal

TASK = "champ"
LABEL_SOURCE = "rule:math-verify-confirmed"
SPLITS = (("train", 70), ("val", 80), ("test", 100))  # cumulative percentages of problems
SUMMARIZER = "Now, summarize the answer above"
APPROX_REL = 0.01  # a decimal this close to the reference but not equal to it: undecided
WEAK_RULES = ("last-number",)
# references found wrong while reading solutions (data/real/LABELLING.md): CHAMP's own solution disagrees
WRONG_REFERENCES = {
    "P_Sequence_30": "reference (a+3b)/2; the invariant a_n + 2a_(n+1) gives the limit (a+2b)/3",
    "P_Sequence_33": "reference 8; CHAMP's own solution ends in 1/8",
    "P_Number-Theory_65": "reference p=3, q=2 and p=5, q=3; 5^2 - 2*3^2 = 7, so (3, 2) is the only solution",
    "P_Sequence_24": "reference 'does not exist'; a_n = ln n is one (the answer holds for integer sequences only)",
    "P_Sequence_10": "reference 3; from a_0 = a_1 = 1 the residues mod 4 repeat 2, 3, 3 from n = 2, so a_1964 = 2 mod 4",
}

_ALTERNATIVES = re.compile(r",\s*or\s+(?:equivalently|an\s+equivalent\s+form\s+such\s+as)\s+", re.IGNORECASE)
_APPROXIMATELY = re.compile(r",\s*or\s+approximately\b.*$", re.IGNORECASE | re.DOTALL)
# an exact value framed by words that add no condition: "0 is the only possible value", "The limit exists
# and is equal to 2/3", "2 inequalities"; not "100 (i.e., all values)" (answers say "all", which rules cannot read)
_WORDED = re.compile(
    r"^(?:(\S+) is the only possible value|the limit exists and is equal to (\S+)"
    r"|the only possible value for the limit is (\S+)|(\d+) (?:values|pairs|roots|inequalities))$",
    re.IGNORECASE,
)
_THOUSANDS = re.compile(r"^[-+]?\d{1,3}(?:,\d{3})+(?:\.\d+)?$")
_CLOSED = re.compile(r"^[\d\s+\-*/^().]*(?:sqrt[\d\s+\-*/^().]*)*$")  # digits, operators, sqrt
_NUMBER = re.compile(r"(?<![\w.,^_{/])[-+−]?(?:\d{1,3}(?:,\d{3})+(?!\d)|\d+)(?:\.\d+)?(?:/\d+)?(?![\w^])")
_FRAC = re.compile(r"\\[dt]?frac\s*\{\s*(-?\d+)\s*\}\s*\{\s*(\d+)\s*\}")


# ---------------------------------------------------------------- the rule labeller


def _parse(text: str):
    from math_verify import parse

    in_main = threading.current_thread() is threading.main_thread()  # math_verify's timeout uses signal.alarm
    parsed = parse(f"${text[:500]}$", parsing_timeout=5 if in_main else None)
    return parsed[0] if parsed and not isinstance(parsed[0], str) else None


def exact_values(reference: str) -> tuple[list[str], str | None]:
    """``(values, None)``: the exact values a reference states, for rules to compare with; or
    ``([], reason)`` when it states none that rules can compare safely."""
    parts = [_APPROXIMATELY.sub("", part).strip() for part in _ALTERNATIVES.split(reference.strip())]
    parts = [_WORDED.sub(lambda m: next(g for g in m.groups() if g is not None), part) for part in parts]
    parts = [part.replace(",", "") if _THOUSANDS.match(part) else part for part in parts]  # "1,000" is 1000
    values = []
    for part in parts:
        if _CLOSED.match(part) and re.search(r"\d", part) and not re.search(r"\d\s+\d", part):
            value = _parse(part)
            if value is not None and getattr(value, "is_number", False) and value.is_finite is not False:
                values.append(part)
    if values:
        return values, None
    first = parts[0]
    if not re.search(r"\d", first):
        return [], "text answer"
    if re.search(r"[<>≤≥=±]", first):
        return [], "relation"
    words = set(re.findall(r"[A-Za-z]{2,}", first)) - {"and", "sqrt"}
    if not words and re.search(r",|\band\b|\[|\]", first):
        return [], "several values or a set"
    if " " not in first.strip():
        return [], "expression with variables"
    return [], "number with words"


def _rational(text: str) -> Fraction | None:
    try:
        return Fraction(text.replace(",", "").replace("−", "-"))
    except (ValueError, ZeroDivisionError):
        return None


def _number(expr) -> complex | None:
    try:
        return complex(expr.evalf())
    except (TypeError, ValueError, AttributeError):
        return None


def approximately(values: list[str], answer: str, rel: float = APPROX_REL) -> bool:
    """Whether ``answer`` is a decimal (not a whole number: 999 is not a rounding of 1000) within
    ``rel`` (relative) of some reference value."""
    got = _parse(answer)
    got = _number(got) if got is not None else None
    if got is None or not cmath.isfinite(got) or got.imag == 0 and got.real == round(got.real):
        return False
    for value in values:
        ref = _parse(value)
        ref = _number(ref) if ref is not None else None
        if ref is not None and abs(got - ref) <= rel * max(abs(ref), 1e-12):
            return True
    return False


def rule_verdict(values: list[str], answer: str | None) -> int | None:
    """1 (Math-Verify-equal to a value), 0 (different) or None (no answer, words without a number,
    unparsable, or a close approximation that rules do not decide: "0.333" for 1/3)."""
    if not answer:
        return None
    if not re.search(r"\d|\\infty|\\pi|∞", answer) and re.search(r"[A-Za-z]{2,}", re.sub(r"\\[A-Za-z]+", "", answer)):
        return None  # words ("three", "no solution"): not for Math-Verify to read as a product of symbols
    equal, parsed = math_equal(values, answer)
    if equal:
        return 1
    if not parsed or approximately(values, answer):
        return None
    return 0


def mentions(values: list[str], text: str | None) -> bool:
    """Whether ``text`` states one of the rational ``values`` as a standalone number ("\\frac{3}{2}" read as 3/2)."""
    wanted = {v for v in (_rational(value.replace(" ", "")) for value in values) if v is not None}
    if not wanted or not text:
        return False
    found = {_rational(m.group()) for m in _NUMBER.finditer(_FRAC.sub(r"\1/\2", text))}
    return bool(wanted & found)


def label_conversation(
    values: list[str], solution: str, summary: str | None, truncated: bool = False
) -> tuple[int | None, dict]:
    """``(label, details)`` of one solution; ``details["left_out"]`` says why the label is None."""
    answer, rule = extract_answer(solution)
    summary_answer, summary_rule = extract_answer(summary) if summary else (None, None)
    details = {
        "answer": answer,
        "answer_rule": rule,
        "summary_answer": summary_answer,
        "summary_answer_rule": summary_rule,
    }
    if truncated:
        return None, {**details, "left_out": "truncated solution"}
    if not summary:
        return None, {**details, "left_out": "no summary to confirm"}
    verdicts = [
        None if r in WEAK_RULES else rule_verdict(values, a)
        for a, r in ((answer, rule), (summary_answer, summary_rule))
    ]
    details["verdicts"] = verdicts
    if verdicts == [1, 1]:
        return 1, details
    if verdicts == [0, 0]:
        if mentions(values, summary):
            return None, {**details, "left_out": "summary mentions the reference value"}
        return 0, details
    if None in verdicts:
        return None, {**details, "left_out": "answer not extracted or undecided"}
    return None, {**details, "left_out": "solution and summary disagree"}


# ---------------------------------------------------------------- conversion


def split_of(problem: str) -> str:
    """train / val / test (70/10/20) by a hash of the problem id: no problem in two splits."""
    return next(name for name, upper in SPLITS if bucket(problem) < upper)


def bucket(key: str) -> int:
    """A stable 0–99 bucket of a problem (or question) id, for splits that keep it in one split."""
    return int(hashlib.sha256(key.encode("utf-8")).hexdigest(), 16) % 100


def default_source() -> Path:
    spec = importlib.util.find_spec("champ_dataset")  # located without importing it
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(
            "champ-dataset is not installed: pip install 'bertjudge[real]' "
            "(or champ-dataset==1.0.0), or pass --input v0.json"
        )
    return Path(next(iter(spec.submodule_search_locations))) / "dataset_files" / "v0.json"


def load(source: str | Path | None = None) -> dict:
    """The problems of a CHAMP ``v0.json``-format file (default: the installed package's)."""
    path = Path(source) if source else default_source()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FileNotFoundError(f"{path}: no such file") from None
    except json.JSONDecodeError as err:
        raise RecordError(f"{path}: invalid JSON ({err.msg} at line {err.lineno})") from None
    if not isinstance(data, dict) or not isinstance(data.get("problems"), dict):
        raise RecordError(f"{path}: not a CHAMP dataset file (expected an object with 'problems')")
    return data["problems"]


def _solution_turns(messages: list[dict]) -> tuple[dict | None, dict | None]:
    """(solution message, summary message) of one conversation."""
    model = [i for i, m in enumerate(messages) if str(m.get("role", "")).startswith("Model.")]
    summarizer = [
        i for i, m in enumerate(messages) if m.get("role") == "User" and str(m.get("text") or "").startswith(SUMMARIZER)
    ]
    if summarizer:
        before = [i for i in model if i < summarizer[-1]]
        after = [i for i in model if i > summarizer[-1]]
        return (messages[before[-1]] if before else None), (messages[after[0]] if after else None)
    return (messages[model[-1]] if model else None), None


def convert(
    problems: dict, models: list[str] | None = None, variants: list[str] | None = None, where: str = "v0.json"
) -> tuple[list[dict], Counter]:
    """Unlabelled records of every conversation, and counts of what was skipped."""
    records, skipped = [], Counter()
    for pid in sorted(problems):
        problem = problems[pid]
        for key in sorted(problem.get("conversations") or {}):
            model, _, variant = key.partition("|")
            if models and model not in models or variants and variant not in variants:
                continue
            solution, summary = _solution_turns(problem["conversations"][key].get("messages") or [])
            if solution is None:
                skipped["no model turn"] += 1
                continue
            if solution.get("error") == "LENGTH_PREVIOUS" or not isinstance(solution.get("text"), str):
                skipped["solution turn without text (LENGTH_PREVIOUS)"] += 1
                continue
            summary_text = summary.get("text") if summary and summary.get("error") != "LENGTH_PREVIOUS" else None
            rec = {
                "id": f"{TASK}/{pid}/{model}/{variant}",
                "task": TASK,
                "category": "open_math",
                "question": problem.get("_text"),
                "candidate": solution["text"],
                "references": [problem.get("_answer")],
                "label": None,
                "label_source": None,
                "candidate_model": model,
                "split": split_of(pid),
                "meta": {
                    "problem": pid,
                    "variant": variant,
                    "champ_category": problem.get("category"),
                    "conversation": key,
                    "truncated": solution.get("error") == "LENGTH_CURRENT",
                    "summary": summary_text,
                },
            }
            records.append(normalize(rec, f"{where}: problem {pid}, conversation {key}"))
    return records, skipped


def label_records(records: list[dict]) -> list[dict]:
    """Records with ``label``/``label_source`` set where rules are reliable; the others keep a null
    label and say why in ``meta.left_out``. Details in ``meta.labelling``."""
    values_of: dict[str, tuple[list[str], str | None]] = {}
    out = []
    for rec in records:
        reference = rec["references"][0]
        if reference not in values_of:
            values_of[reference] = exact_values(reference)
        values, why = values_of[reference]
        meta = dict(rec["meta"])
        if meta.get("problem") in WRONG_REFERENCES:
            meta["left_out"] = "reference wrong"
            out.append({**rec, "meta": meta})
            continue
        if not values:
            meta["left_out"] = f"reference not an exact value ({why})"
            out.append({**rec, "meta": meta})
            continue
        label, details = label_conversation(values, rec["candidate"], meta.get("summary"), meta.get("truncated", False))
        left_out = details.pop("left_out", None)
        meta["labelling"] = {"teacher": LABEL_SOURCE, "rule_references": values, **details}
        if left_out:
            meta["left_out"] = left_out
            out.append({**rec, "meta": meta})
        else:
            out.append({**rec, "label": label, "label_source": LABEL_SOURCE, "meta": meta})
    return out


def _rank(key: str, seed: int) -> str:
    return hashlib.sha256(f"{seed}:{key}".encode()).hexdigest()


def balanced_sample(records: list[dict], max_rows: int | None = None, seed: int = 0) -> list[dict]:
    """A deterministic sample of labelled records with as many correct as wrong solutions per
    model (the smaller of the two counts), at most ``max_rows`` in all (models share it equally;
    what a small model leaves goes to the others), taken round robin over problems so that every
    problem keeps some rows; the order is the input's."""
    cells: dict[tuple, list[dict]] = defaultdict(list)
    for rec in records:
        cells[(rec["candidate_model"], rec["label"])].append(rec)
    ordered = {}
    for cell, rows in cells.items():
        by_problem: dict[str, list[dict]] = defaultdict(list)
        for rec in sorted(rows, key=lambda r: _rank(r["id"], seed)):
            by_problem[rec["meta"]["problem"]].append(rec)
        turns = sorted(
            ((i, _rank(p, seed), rec) for p, recs in by_problem.items() for i, rec in enumerate(recs)),
            key=lambda t: t[:2],
        )
        ordered[cell] = [rec for _, _, rec in turns]
    models = sorted({model for model, _ in cells})
    room = {m: min(len(ordered.get((m, 1), [])), len(ordered.get((m, 0), []))) for m in models}
    pairs = dict.fromkeys(models, 0)
    left = room_total = sum(room.values())
    if max_rows is not None:
        left = min(room_total, max_rows // 2)
    open_models = {m for m in models if room[m]}
    while left > 0 and open_models:  # water-filling: equal shares, capped by each model's room
        share = max(left // len(open_models), 1)
        for m in sorted(open_models):
            take = min(share, room[m] - pairs[m], left)
            pairs[m] += take
            left -= take
            if pairs[m] == room[m]:
                open_models.discard(m)
    chosen = {rec["id"] for (m, _), rows in ordered.items() for rec in rows[: pairs[m]]}
    return [rec for rec in records if rec["id"] in chosen]


# ---------------------------------------------------------------- report


def source_info(source: str | Path | None) -> dict:
    """Where the conversations came from: the file, its sha256 and, by default, the package version."""
    path = Path(source) if source else default_source()
    info = {
        "file": str(path) if source else "champ_dataset/dataset_files/v0.json",
        "sha256": file_sha256(path),
    }
    if not source:
        from importlib.metadata import version

        info["package"] = f"champ-dataset {version('champ-dataset')} (MIT, Yujun Mao, Yoon Kim, Yilun Zhou)"
    return info


def report(records: list[dict], skipped: Counter, source: dict | None = None) -> dict:
    """Counts per model and variant, left-out reasons, label balance per model."""

    def counts(rows):
        labelled = [r for r in rows if r["label"] is not None]
        return {
            "rows": len(rows),
            "labelled": len(labelled),
            "correct": sum(r["label"] for r in labelled),
            "fraction_labelled": round(len(labelled) / max(len(rows), 1), 4),
            "fraction_correct": round(sum(r["label"] for r in labelled) / max(len(labelled), 1), 4),
        }

    by_model, by_variant, by_split = defaultdict(list), defaultdict(list), defaultdict(list)
    for rec in records:
        by_model[rec["candidate_model"]].append(rec)
        by_variant[rec["meta"]["variant"]].append(rec)
        by_split[rec["split"]].append(rec)
    reasons = Counter(rec["meta"]["left_out"] for rec in records if rec["label"] is None)
    return {
        "source": source,
        "label_source": LABEL_SOURCE,
        "skipped_conversations": dict(skipped),
        "total": counts(records),
        "left_out": dict(reasons.most_common()),
        "models": {m: counts(r) for m, r in sorted(by_model.items())},
        "variants": {v: counts(r) for v, r in sorted(by_variant.items())},
        "splits": {
            s: {**counts(r), "problems": len({x["meta"]["problem"] for x in r})} for s, r in sorted(by_split.items())
        },
    }
