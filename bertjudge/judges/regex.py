"""The lexical baseline: extract the final answer by rules, then compare it by record category.

- ``multiple_choice``: option letters compared after normalization; the option text is accepted
  (mapped through the options listed in the question when there are any); a candidate that lists the
  options again and names none by a marker is unparsed (the last listed option is no choice);
- ``context_extraction``: ROUGE-L F1 against the reference >= ``threshold`` (fit on labelled data);
- ``open_math``: Math-Verify equivalence (answers wrapped in ``$…$``); where only the last-number rule
  finds an answer, what the concluding sentence states is compared instead ("is 1/n." → ``1/n``), and
  there is none when that is words ("there are no such sequences");
- ``open_qa``: the share of a reference's words that the answer contains (``extract.reference_recall``:
  accents, case, punctuation and articles dropped; aliases without their parenthetical, "Perry,
  Matthew" read as "Matthew Perry") >= ``QA_RECALL``; the answer is what a "Final answer:" or
  ``\boxed{}`` marks, else the whole candidate (a sentence or a paragraph names its answer anywhere);
- ``other``: normalized exact match, else ROUGE-L F1 >= ``threshold``.

A row whose answer could not be extracted (or, for math, parsed) is flagged ``unparsed``. A record's
``meta.language`` (fr, de, es, ko; default en) picks the extraction rules of its language (``core.extract``).
"""

from __future__ import annotations

import os
import re
import threading
from pathlib import Path

import numpy as np

from bertjudge.core.extract import (
    concluding_statement,
    extract_answer,
    is_prose,
    language_of,
    normalize_answer,
    option_letter,
    options_of,
    parse_options,
    qa_normalize,
    reference_recall,
)
from bertjudge.core.judge_file import read_judge_config, write_judge_config
from bertjudge.core.stats import best_threshold
from bertjudge.judges.interface import BaseJudge, class_path

MATH_TIMEOUT_S = 5
MAX_MATH_CHARS = 500  # longer "answers" are not answers; they only slow sympy down
# open QA: half of a reference's words named. Chosen on EVOUNA-TQ's train and val answers (never its test):
# accuracy 0.939 at 0.3, 0.945 at 0.4, 0.944 at 0.5, 0.930 at 1.0 (every word), 0.923 for the reference
# contained as a substring; 0.5 is the round value on the plateau
QA_RECALL = 0.5
_OPTION_LINE = re.compile(r"^[ \t]*[(\[]?([A-J])[)\].:][ \t]+(\S.*?)[ \t]*$", re.MULTILINE)


def rouge_l(prediction: str, reference: str) -> float:
    """ROUGE-L F1 (torchmetrics' tokenizer: lower case, alphanumeric tokens)."""
    from torchmetrics.functional.text.rouge import rouge_score

    return float(rouge_score(prediction, reference, rouge_keys="rougeL")["rougeL_fmeasure"])


def question_options(question: str | None) -> dict[str, str]:
    """The options listed in a question ("A. Paris", "(B) London", …) as {letter: text}."""
    return {m.group(1): m.group(2) for m in _OPTION_LINE.finditer(question or "")}


def _as_math(s: str) -> str:
    return s if any(d in s for d in ("$", "\\(", "\\[", "\\boxed")) else f"${s}$"


def math_equal(references: list[str], answer: str) -> tuple[bool, bool]:
    """(equivalent to some reference, answer parsed) with Math-Verify, time-bounded in any thread. A
    comparison that runs out of time is not a mismatch: the row comes out unparsed, (False, False)."""
    from math_verify import parse, verify
    from math_verify.errors import TimeoutException

    in_main = threading.current_thread() is threading.main_thread()
    timeout = MATH_TIMEOUT_S if in_main else None  # math_verify's own timeout uses signal.alarm

    def equal(reference: str, predicted) -> bool:
        """Math-Verify's answer, with its errors as no match (as it gives them) but its time-outs raised."""
        try:
            gold = parse(_as_math(reference[:MAX_MATH_CHARS]), parsing_timeout=timeout, raise_on_error=True)
            return bool(gold) and verify(gold, predicted, timeout_seconds=timeout, raise_on_error=True)
        except TimeoutException:
            raise
        except Exception:  # noqa: BLE001 - sympy fails on some pairs: no match, as Math-Verify itself returns
            return False

    def work() -> tuple[bool, bool]:
        try:
            predicted = parse(_as_math(answer[:MAX_MATH_CHARS]), parsing_timeout=timeout, raise_on_error=True)
            if all(isinstance(x, str) for x in predicted):  # nothing, or only the raw-string fallback
                return False, False
            return any(equal(ref, predicted) for ref in references), True
        except TimeoutException:
            return False, False
        except Exception:  # noqa: BLE001 - an answer Math-Verify cannot parse
            return False, False

    if in_main:
        return work()
    result: list[tuple[bool, bool]] = []
    worker = threading.Thread(target=lambda: result.append(work()), daemon=True)
    worker.start()
    worker.join(MATH_TIMEOUT_S * (1 + len(references)))  # on time-out the daemon is abandoned
    return result[0] if result else (False, False)


class RegexJudge(BaseJudge):
    """Rule-based judge; ``score_records`` returns P(correct) in {0., 1.}."""

    name = "regex"
    version = "1"
    temperature = 1.0
    features = frozenset({"export"})

    def __init__(self, threshold: float = 0.5):
        self.threshold = float(threshold)

    def _row(self, rec: dict) -> dict:
        refs, category = rec["references"], rec.get("category", "other")
        labels, language = options_of(rec), language_of(rec)
        answer, how = extract_answer(rec["candidate"], labels, language)
        if category == "open_qa":
            answer = answer if how in ("final-answer", "boxed") else rec["candidate"].strip() or None
        row = {"answer": answer, "unparsed": answer is None, "similarity": None, "match": False}
        if answer is None:
            return row
        if labels and how in ("conclusion", "last-number"):  # only weak rules found it: are the options listed again?
            relisted = parse_options(rec["candidate"], language)[0]
            if relisted and set(relisted) <= set(labels):  # then the number of the last one is no choice
                return {**row, "unparsed": True}
        if category == "open_math":
            if how == "last-number":  # no marker: what the concluding sentence states ("the minimum is 1/n"),
                statement = concluding_statement(rec["candidate"], language=language)  # not a stray "1" of "1/n"
                if statement and is_prose(statement):  # "there are no such sequences": no math answer
                    return {**row, "answer": statement, "unparsed": True}
                answer = statement or answer
            row["match"], parsed = math_equal(refs, answer)
            row["answer"], row["unparsed"] = answer, not parsed
            row["match"] |= normalize_answer(answer) in {normalize_answer(r) for r in refs}
            return row
        if category == "open_qa":
            row["similarity"] = reference_recall(answer, refs, language)
            row["match"] = row["similarity"] >= QA_RECALL
            return row
        norm = normalize_answer(answer)
        if category == "multiple_choice":
            options = {letter: normalize_answer(text) for letter, text in question_options(rec.get("question")).items()}
            by_text = {text: letter for letter, text in options.items()}
            letter = by_text.get(norm) or option_letter(answer)
            for ref in refs:
                ref_letter = option_letter(ref) if len(normalize_answer(ref)) == 1 else None
                if ref_letter:
                    row["match"] |= letter == ref_letter
                    row["unparsed"] = letter is None
                else:
                    ref_norm = normalize_answer(ref)
                    stripped = normalize_answer(re.sub(r"^\s*[(\[]?[A-J][)\].:]\s+", "", answer))
                    row["match"] |= ref_norm in (norm, stripped, options.get(letter))
        else:
            if category == "other" and norm in {normalize_answer(r) for r in refs}:
                row["match"], row["similarity"] = True, 1.0
                return row
            row["similarity"] = max(rouge_l(answer, ref) for ref in refs)
            row["match"] = row["similarity"] >= self.threshold
        return row

    def details(self, records: list[dict], batch_size: int = 32, progress: bool = False) -> list[dict]:
        """Per row: the extracted ``answer``, the ``unparsed`` flag, the ROUGE-L ``similarity``
        (extraction and other rows, else None), ``match`` (the verdict, also as ``verdict``) and ``score`` (0. or 1.)."""
        if progress:
            from tqdm.auto import tqdm

            records = tqdm(records, desc="regex judge", unit="row")
        rows = [self._row(rec) for rec in records]
        for row in rows:
            row["score"], row["verdict"] = float(row["match"]), bool(row["match"])
        return rows

    def score_records(self, records: list[dict], batch_size: int = 32, progress: bool = False) -> np.ndarray:
        """P(correct) per record, 0. or 1. (``batch_size`` is accepted for the common interface)."""
        return np.array([row["score"] for row in self.details(records, progress=progress)], dtype=float)

    def fit_threshold(
        self, records: list[dict], batch_size: int = 32, scores: np.ndarray | None = None
    ) -> tuple[float, float]:
        """Choose the ROUGE-L similarity threshold maximizing accuracy on the labelled extraction and other rows (the
        only rows it decides), store it as ``threshold``; (threshold, accuracy on those rows). ``scores`` are not
        used: the rule's threshold is on similarity, not on P(correct)."""
        rows = [
            (row["similarity"], rec["label"])
            for rec, row in zip(records, self.details(records))
            if row["similarity"] is not None and rec.get("label") is not None and rec.get("category") != "open_qa"
        ]
        if not rows:
            raise ValueError("fit_threshold needs labelled context_extraction or other rows with an extracted answer")
        similarities, labels = zip(*rows)
        self.threshold, accuracy = best_threshold(similarities, labels)
        return self.threshold, accuracy

    def config(self) -> dict:
        return {
            "class": class_path(self),
            "name": self.name,
            "threshold": self.threshold,
            "temperature": self.temperature,
            "version": self.version,
        }

    def export(self, folder: str | os.PathLike, metrics: dict | None = None) -> Path:
        """Save the threshold (fitted by ``fit_threshold``) as a judge folder."""
        write_judge_config(folder, {**self.config(), **({"metrics": metrics} if metrics else {})})
        return Path(folder)

    @classmethod
    def from_export(cls, folder: str | os.PathLike, format=None) -> RegexJudge:
        config = read_judge_config(folder, required=("class", "threshold"))
        if not config["class"].endswith("RegexJudge") and config["class"] != "regex":
            raise ValueError(f"{folder}: judge.json describes a {config['class']!r} judge, not a regex judge")
        return cls(threshold=config["threshold"])


class ContainsJudge(BaseJudge):
    """The plainest lexical baseline: correct when some reference, normalized (``extract.qa_normalize``:
    case, accents, punctuation and articles dropped), appears in the normalized candidate. Common for
    open QA ("reference contained in the answer"); ``Judge.load("contains")``."""

    name = "contains"
    threshold = 0.5
    temperature = 1.0
    features = frozenset({"export"})

    def details(self, records: list[dict], batch_size: int = 32, progress: bool = False) -> list[dict]:
        """Per row: ``match`` and ``score`` (0. or 1.)."""
        rows = []
        for rec in records:
            text = qa_normalize(rec["candidate"])
            match = any(ref and ref in text for ref in map(qa_normalize, rec["references"]))
            rows.append({"match": match, "unparsed": False, "score": float(match), "verdict": match})
        return rows

    def score_records(self, records: list[dict], batch_size: int = 32, progress: bool = False) -> np.ndarray:
        return np.array([row["score"] for row in self.details(records)], dtype=float)

    def export(self, folder: str | os.PathLike, metrics: dict | None = None) -> Path:
        """A judge folder that names this kind (it has no settings beyond ``config()``'s)."""
        config = {"class": class_path(self), "name": self.name, **self.config()}
        write_judge_config(folder, {**config, **({"metrics": metrics} if metrics else {})})
        return Path(folder)

    @classmethod
    def from_export(cls, folder: str | os.PathLike, format=None) -> ContainsJudge:
        config = read_judge_config(folder)
        if not config["class"].endswith("ContainsJudge"):
            raise ValueError(f"{folder}: judge.json describes a {config['class']!r} judge, not a contains judge")
        return cls()
