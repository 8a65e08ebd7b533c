"""The judge input format: how (question, candidate, references) become one token sequence.

A format is data (``JudgeFormat``), saved in every checkpoint's ``judge.json`` and checked at
load. Parts are named by letters: Q question, C candidate, A the rule-extracted final answer of
the candidate, R references. Truncation is segment-aware: the reference is kept whole, a long
question keeps its end (where the question sentence is), a long candidate keeps some of its head
and its tail (where the final answer is).
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Literal

from bertjudge.core.errors import BertJudgeError
from bertjudge.core.extract import (
    concluding_statement,
    extract_answer,
    first_sentence,
    fmt,
    language_of,
    number_value,
    options_of,
    parse_options,
    qa_normalize,
    reference_recalls,
)
from bertjudge.core.records import normalize

PARTS = {"Q": "question", "C": "candidate", "A": "answer", "R": "reference"}  # A: for open_qa rows, a
# marked answer ("Final answer:", \\boxed{}) or else the candidate's first sentence
DEFAULT_MARKERS = {
    "question": "<|question|>",
    "candidate": "<|candidate|>",
    "answer": "<|answer|>",
    "reference": "<|reference|>",
}
NO_ANSWER = "none found"
REFERENCE_JOIN = " | "
_LABEL_REFERENCE = re.compile(r"\s*[(\[]?([A-Ja-j]|\d{1,2})[)\]]?[.:]?\s*")


class FormatError(BertJudgeError, ValueError):
    """A format that is invalid, or that does not match a checkpoint."""


@dataclass(frozen=True)
class JudgeFormat:
    """How a judge reads its input.

    Args:
        order: the parts in order, letters from Q (question), C (candidate), A (extracted
            answer), R (references); R and one of C, A are required. ``QCR`` is the paper's default.
        markers: ``separators`` puts the tokenizer's separator between parts; ``markers`` puts a
            marker token (added to the vocabulary) before each part, with no separators.
        max_length: the maximum sequence length in tokens, special tokens included.
        truncation: ``segment`` (ours, described above) or ``left`` (drop tokens from the
            left of the whole sequence, as the authors' published checkpoints expect).
        question_max_tokens: the budget of a long question (its end is kept).
        answer_max_tokens: the budget of the extracted answer segment.
        answer_last_number: when no answer pattern matches, give the candidate's last number as its
            answer (False: "none found"; a last number often cuts an expression answer to one of its
            numbers).
        answer_statement: when no answer pattern matches, give what the concluding sentence states
            whole ("a = 3, b = -7, and c = 4", "(2b + a^3) / (3a)", ``extract.concluding_statement``)
            before falling back to the last number, which cuts such answers to one of their numbers.
        candidate_head_tokens: how many tokens of a long candidate's head are kept before its tail.
        marker_tokens: the marker strings, by part name.
        reference_type: give the reference segment token type 1 (BERT's segment B), for encoders
            with token types; the other parts keep type 0.
        reference_options: a reference that is an option label of a multiple-choice (or uncategorized) question gets
            that option's text ("E" → "E) blue"), so the judge compares an answer's option text with
            the reference without finding the option in a question it may have truncated.
        answer_value: an extracted answer written as a number in another form than the canonical one
            gets its value ("1,875" → "1,875 = 1875", "\\frac{57}{2}" → "\\frac{57}{2} = 28.5", "one
            hundred twenty" → "one hundred twenty = 120"; ``extract.number_value``), so the judge
            compares the reference with digits it can read.
        references: how several references (aliases: "Cancer", "Malignant neoplasm", …) are read.
            ``join``: one sequence with all of them joined by " | " (cut when long). ``each``: one
            sequence per reference, and the record's logit is the largest of them (an answer is
            correct when it matches some reference). Training reads one: the reference sharing most
            words with the answer (``ranked_references``), the one the max mostly picks.
        max_references: with ``each``, how many references are read: those sharing the largest
            share of their words with the candidate (``extract.reference_recall``), ties in listed order.
    """

    order: str = "QCR"
    markers: Literal["separators", "markers"] = "separators"
    max_length: int = 384
    truncation: Literal["segment", "left"] = "segment"
    question_max_tokens: int = 96
    answer_max_tokens: int = 24
    answer_last_number: bool = True
    answer_statement: bool = False
    candidate_head_tokens: int = 32
    marker_tokens: dict = field(default_factory=lambda: dict(DEFAULT_MARKERS))
    reference_type: bool = False
    reference_options: bool = False
    answer_value: bool = False
    references: Literal["join", "each"] = "join"
    max_references: int = 4

    def __post_init__(self):
        if set(self.order) - set(PARTS) or len(set(self.order)) != len(self.order):
            raise FormatError(f"order {self.order!r}: use each of the letters {''.join(PARTS)} at most once")
        if "R" not in self.order or not {"C", "A"} & set(self.order):
            raise FormatError(f"order {self.order!r} must contain R (reference) and C (candidate) or A (its answer)")
        if self.markers not in ("separators", "markers"):
            raise FormatError(f"markers must be 'separators' or 'markers', got {self.markers!r}")
        if self.truncation not in ("segment", "left"):
            raise FormatError(f"truncation must be 'segment' or 'left', got {self.truncation!r}")
        if self.max_length < 16:
            raise FormatError(f"max_length {self.max_length} is too small")
        if self.references not in ("join", "each"):
            raise FormatError(f"references must be 'join' or 'each', got {self.references!r}")
        if self.max_references < 1:
            raise FormatError(f"max_references must be at least 1, got {self.max_references}")

    @property
    def parts(self) -> list[str]:
        return [PARTS[letter] for letter in self.order]

    @property
    def new_tokens(self) -> list[str]:
        """Tokens this format adds to the tokenizer's vocabulary."""
        return [self.marker_tokens[p] for p in self.parts] if self.markers == "markers" else []

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> JudgeFormat:
        unknown = set(data) - set(cls.__dataclass_fields__)
        if unknown:
            raise FormatError(f"unknown format fields: {sorted(unknown)}")
        return cls(**data)

    def check_matches(self, saved: JudgeFormat, where: str) -> None:
        """Refuse to use a checkpoint with another format than it was trained with."""
        if self != saved:
            diff = {k: (v, getattr(saved, k)) for k, v in self.to_dict().items() if v != getattr(saved, k)}
            raise FormatError(f"{where}: format mismatch (asked, saved): {diff}")


def with_option_texts(references: list[str], question: str | None) -> list[str]:
    """References that are option labels of the question's options, with the option's text:
    ["E"] → ["E) blue"]; a reference that repeats an expanded option's text is dropped."""
    options = dict(zip(*parse_options(question or "")))
    out, expanded = [], set()
    for ref in references:
        m = _LABEL_REFERENCE.fullmatch(ref)
        label = m[1].upper() if m else None
        if label in options:
            out.append(f"{label}) {options[label]}")
            expanded.add(options[label].strip().lower())
        else:
            out.append(ref)
    return [r for r in out if r.strip().lower() not in expanded]


def ranked_references(candidate: str, references: list[str], limit: int) -> list[str]:
    """The ``limit`` references sharing the largest share of their words with the candidate (ties in
    listed order), without repeats of one normal form."""
    unique = list({qa_normalize(r) or r: r for r in reversed(references)}.values())[::-1]
    recalls = reference_recalls(candidate, unique)
    ranked = sorted(range(len(unique)), key=lambda i: (-recalls[i], i))
    return [unique[i] for i in ranked[:limit]]


def expand_references(records: list[dict], fmt: JudgeFormat, limit: int | None = None) -> tuple[list[dict], list[int]]:
    """Records as the judge reads them, and the index of the record each one comes from: unchanged
    for ``references: join``; one per read reference for ``each`` (``ranked_references``, at most
    ``limit`` of them when given, else ``fmt.max_references``)."""
    if fmt.references == "join":
        return records, list(range(len(records)))
    flat, owner = [], []
    for i, rec in enumerate(records):
        refs = rec["references"]
        chosen = ranked_references(rec["candidate"], refs, limit or fmt.max_references) if len(refs) > 1 else refs
        flat.extend({**rec, "references": [ref]} for ref in chosen)
        owner.extend([i] * len(chosen))
    return flat, owner


def _special_wrapping(tokenizer) -> tuple[list[int], list[int]]:
    """The special tokens the tokenizer puts before and after a single sequence."""
    inner = tokenizer("x", add_special_tokens=False)["input_ids"]
    outer = tokenizer("x", add_special_tokens=True)["input_ids"]
    for start in range(len(outer) - len(inner) + 1):
        if outer[start : start + len(inner)] == inner:
            return outer[:start], outer[start + len(inner) :]
    return [], []


class Encoder:
    """Turns records into token ids for one tokenizer and one format (picklable, no model)."""

    def __init__(self, tokenizer, fmt: JudgeFormat):
        missing = [t for t in fmt.new_tokens if t not in tokenizer.get_vocab()]
        if missing:
            raise FormatError(f"the tokenizer lacks the format's marker tokens {missing}")
        self.tokenizer, self.format = tokenizer, fmt
        self.prefix, self.suffix = _special_wrapping(tokenizer)
        sep = tokenizer.sep_token_id if tokenizer.sep_token_id is not None else tokenizer.eos_token_id
        if fmt.markers == "separators" and sep is None:
            raise FormatError("the tokenizer has no separator (sep or eos) token: use markers='markers'")
        self.sep = sep
        self.marker_ids = (
            {p: tokenizer.convert_tokens_to_ids(fmt.marker_tokens[p]) for p in fmt.parts}
            if fmt.markers == "markers"
            else {}
        )
        pad = tokenizer.pad_token_id
        self.pad_id = pad if pad is not None else (sep if sep is not None else 0)

    def texts(self, record: dict, answer: str | None = None) -> dict[str, str]:
        """The text of each part of ``record``; ``answer`` given is the answer segment's text instead of what the
        extractor finds (training's answer noise: ``core.collate.Collator``)."""
        texts = {
            "question": record.get("question") or "",
            "candidate": record["candidate"],
            "reference": REFERENCE_JOIN.join(
                with_option_texts(record["references"], record.get("question"))
                if self.format.reference_options and record.get("category") in ("multiple_choice", "other")
                else record["references"]
            ),
        }
        language = language_of(record)  # English rules for English and for records without a language
        if "A" in self.format.order and answer is not None:
            texts["answer"] = answer or NO_ANSWER
        elif "A" in self.format.order and record.get("category") == "open_qa":
            answer, how = extract_answer(
                record["candidate"], language=language
            )  # a marked answer, else the opening sentence:
            texts["answer"] = answer if how in ("final-answer", "boxed") else first_sentence(record["candidate"])
            texts["answer"] = texts["answer"] or NO_ANSWER  # not a stray number ("1972") of a paragraph
        elif "A" in self.format.order:
            answer, how = extract_answer(record["candidate"], options_of(record), language=language)
            statement = (
                concluding_statement(record["candidate"])
                if how == "last-number" and self.format.answer_statement
                else None
            )
            if statement:
                answer = statement
            elif how == "last-number" and not self.format.answer_last_number:
                answer = None
            value = number_value(answer, language) if answer and self.format.answer_value else None
            if value is not None and fmt(value) != answer.strip():
                answer = f"{answer} = {fmt(value)}"
            texts["answer"] = answer or NO_ANSWER
        return texts

    def encode(self, record: dict) -> list[int]:
        return self.encode_many([record])[0]

    def encode_many(self, records: list[dict], answers: list[str | None] | None = None) -> list[list[int]]:
        """Token ids of each record (the tokenizer runs once per part over the whole list); ``answers[i]``, where
        not None, is record i's answer segment instead of the extractor's."""
        fmt = self.format
        texts = [self.texts(r, a) for r, a in zip(records, answers or [None] * len(records))]
        tokenized = {
            p: self.tokenizer([t[p] for t in texts], add_special_tokens=False, verbose=False)["input_ids"]
            for p in fmt.parts
        }
        # one marker or separator per part, plus the tokenizer's own wrapping
        glue = len(fmt.parts) if fmt.markers == "markers" else len(fmt.parts) - 1
        room = fmt.max_length - len(self.prefix) - len(self.suffix)
        out = []
        for i in range(len(records)):
            ids = {p: tokenized[p][i] for p in fmt.parts}
            if fmt.truncation == "segment":
                ids = self._truncate_segments(ids, room - glue)
            body = []
            for j, part in enumerate(fmt.parts):
                if fmt.markers == "markers":
                    body.append(self.marker_ids[part])
                elif j:
                    body.append(self.sep)
                body.extend(ids[part])
            if fmt.truncation == "left":
                body = body[-room:]
            out.append(self.prefix + body + self.suffix)
        return out

    def token_types(self, input_ids):
        """Token type ids of a batch (a tensor): 1 on the reference segment, 0 elsewhere."""
        import torch

        target = self.format.parts.index("reference")
        if self.format.markers == "markers":  # a part starts at its marker
            segment = torch.isin(input_ids, torch.tensor(list(self.marker_ids.values()))).cumsum(1) - 1
        else:  # a separator ends the part before it
            is_sep = input_ids == self.sep
            segment = is_sep.cumsum(1) - is_sep.long()
        return (segment == target).long()

    def _truncate_segments(self, ids: dict[str, list[int]], budget: int) -> dict[str, list[int]]:
        fmt = self.format
        ids = dict(ids)
        if "question" in ids:
            ids["question"] = ids["question"][-fmt.question_max_tokens :] if fmt.question_max_tokens else []
        if "answer" in ids:
            ids["answer"] = ids["answer"][: fmt.answer_max_tokens]
        # the reference is kept whole unless it alone would leave the candidate under 32 tokens
        others = sum(len(v) for k, v in ids.items() if k not in ("candidate", "reference"))
        ids["reference"] = ids["reference"][: max(budget - others - 32, 1)]
        room = max(budget - others - len(ids["reference"]), 0)
        cand = ids.get("candidate", [])
        if len(cand) > room:
            head = min(fmt.candidate_head_tokens, room // 4)
            ids["candidate"] = cand[:head] + cand[len(cand) - (room - head) :] if room > head else cand[:room]
        return ids


def judge_inputs(
    tokenizer,
    format: JudgeFormat | dict,
    question: str | None,
    candidate: str,
    references: str | list[str],
    category: str | None = None,
) -> list[list[int]]:
    """The token ids a judge reads for one answer: one sequence per reference it reads (``references:
    each``: up to ``max_references`` of them, ranked as in scoring), or one sequence (``join``).

    This is the input format that travels with the weights: with the judge folder's tokenizer
    (``AutoTokenizer.from_pretrained(folder)``, which has the format's marker tokens) and the ``format``
    saved in its ``judge.json``, ``model(input_ids=torch.tensor([ids]))`` for each sequence, the largest
    logit, then ``sigmoid(logit / temperature + bias)`` give the same P(correct) as ``Judge.score``
    (the model card of an exported judge shows the code). The parts are tokenized apart and glued with
    markers or separators and truncated per segment, so the ids are built here, not by tokenizing a text.

    A format with ``A`` in its order reads the candidate's final answer as bertjudge's extractor finds it
    (``bertjudge.core.extract``), and ``reference_options`` expands option-letter references with the
    option's text parsed from the question: such inputs need this function. ``category`` (one of
    ``records.CATEGORIES``; None: ``other``) changes how the answer is extracted (``open_qa``) and
    whether option letters are expanded (``multiple_choice``).
    """
    fmt = format if isinstance(format, JudgeFormat) else JudgeFormat.from_dict(format)
    record = normalize(
        {"question": question, "candidate": candidate, "references": references, "category": category}, "<judge_inputs>"
    )
    sequences, _ = expand_references([record], fmt)
    return Encoder(tokenizer, fmt).encode_many(sequences)


def judge_token_types(tokenizer, format: JudgeFormat | dict, ids: list[int]) -> list[int]:
    """Token type ids of one sequence from ``judge_inputs``: 1 on the reference segment, 0 elsewhere. Only
    a format with ``reference_type: true`` reads them (pass them as the model's ``token_type_ids``)."""
    import torch

    fmt = format if isinstance(format, JudgeFormat) else JudgeFormat.from_dict(format)
    return Encoder(tokenizer, fmt).token_types(torch.tensor([ids]))[0].tolist()
