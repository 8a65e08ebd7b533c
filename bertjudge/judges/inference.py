"""The inference engine of trained judges: every path that scores with a network goes through it
(``Judge.score``, ``judge``, ``evaluate``, ``predict``'s writer, the server).

Records are tokenized once, sorted by token length, cut into batches that fill a **token budget**
(rows × the batch's longest row ≤ ``token_budget``) rather than a fixed row count, padded to their own
longest row, scored, and put back in input order. A record read as several sequences (one per
reference) gets the largest of its sequences' logits.

Precision modes (``PRECISIONS``): ``fp32``; ``bf16`` (autocast: AMX / AVX512-bf16 CPUs and GPUs);
``int8`` (dynamic int8 quantization of the Linear layers, CPU); ``auto`` picks the fastest mode whose
verdicts agree with fp32 on a check set and whose scores stay within ``SCORE_TOLERANCE`` (``choose``).
"""

from __future__ import annotations

import copy
import time
import warnings
import weakref
from dataclasses import dataclass

import numpy as np
import torch

from bertjudge.core.collate import pad_batch
from bertjudge.core.formats import expand_references

PRECISIONS = ("fp32", "bf16", "int8")
SCORE_TOLERANCE = {"fp32": 0.0, "bf16": 0.1, "int8": 0.1}  # max |P(mode) - P(fp32)| allowed on the check set
AGREEMENT = 0.999  # share of verdicts that must agree with fp32 on the check set
DEFAULT_TOKEN_BUDGET = 16384
_INT8_COPIES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # judge -> its quantized copy


def token_batches(lengths: list[int], token_budget: int, max_rows: int = 512) -> list[list[int]]:
    """Indices of sequences grouped into batches, shortest first: each batch holds as many rows as fit
    ``rows × longest row ≤ token_budget`` (at least one row, at most ``max_rows``)."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    batches, current = [], []
    for i in order:
        width = max(lengths[i], 1)  # sorted ascending: this row is the batch's longest
        if current and ((len(current) + 1) * width > token_budget or len(current) >= max_rows):
            batches.append(current)
            current = []
        current.append(i)
    if current:
        batches.append(current)
    return batches


@dataclass
class Check:
    """How a precision mode compares with fp32 on the check set."""

    precision: str
    seconds: float
    agreement: float
    max_score_diff: float
    ok: bool


class InferenceEngine:
    """Scores records with a trained judge (a ``JudgeModule``) in one precision mode.

    Args:
        judge: the judge whose ``encoder`` (token ids) and ``forward`` (one logit per sequence) are used.
        precision: one of ``PRECISIONS``.
        token_budget: rows × padded length per batch.
    """

    def __init__(self, judge, precision: str = "fp32", token_budget: int = DEFAULT_TOKEN_BUDGET):
        if precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {PRECISIONS} (or 'auto'), got {precision!r}")
        if token_budget < 1:
            raise ValueError(f"token_budget must be at least 1, got {token_budget}")
        self.judge, self.precision, self.token_budget = judge, precision, token_budget

    def network(self):
        """The module that runs the forward pass: the judge itself, or its int8 copy (made once per judge)."""
        if self.precision != "int8":
            return self.judge
        if self.judge not in _INT8_COPIES:
            with warnings.catch_warnings():  # torch.ao's dynamic quantization warns that torchao replaces it
                warnings.simplefilter("ignore")
                _INT8_COPIES[self.judge] = torch.ao.quantization.quantize_dynamic(
                    copy.deepcopy(self.judge).float().cpu(), {torch.nn.Linear}, dtype=torch.qint8
                )
        return _INT8_COPIES[self.judge]

    def encode(self, records: list[dict]) -> tuple[list[list[int]], np.ndarray]:
        """Token ids of every sequence the judge reads, and the record each comes from."""
        fmt = self.judge.format
        sequences, owner = expand_references(records, fmt)
        return self.judge.encoder.encode_many(sequences), np.asarray(owner, dtype=np.int64)

    @torch.inference_mode()
    def logits(self, records: list[dict], progress: bool = False) -> np.ndarray:
        """Uncalibrated logit per record, in input order (the max over a record's sequences)."""
        if not records:
            return np.empty(0, dtype=np.float64)
        ids, owner = self.encode(records)
        network = self.network()
        was_training = network.training
        network.eval()
        device = next(network.parameters()).device if self.precision != "int8" else torch.device("cpu")
        sequence_logits = np.empty(len(ids), dtype=np.float64)
        batches = token_batches([len(row) for row in ids], self.token_budget)
        bar = None
        if progress:
            from tqdm.auto import tqdm

            bar = tqdm(total=len(records), desc=f"judging with {self.judge.name} ({self.precision})", unit="row")
        autocast = torch.autocast(device.type, dtype=torch.bfloat16, enabled=self.precision == "bf16")
        try:
            for idx in batches:
                input_ids, attention_mask = pad_batch([ids[i] for i in idx], self.judge.encoder.pad_id)
                batch = {"input_ids": input_ids.to(device), "attention_mask": attention_mask.to(device)}
                with autocast:
                    out = network(batch)
                sequence_logits[idx] = out.float().cpu().numpy()
                if bar is not None:
                    bar.update(len(set(owner[idx].tolist())) if len(owner) != len(records) else len(idx))
        finally:
            network.train(was_training)
            if bar is not None:
                bar.close()
        if len(owner) == len(records):
            return sequence_logits
        out = np.full(len(records), -np.inf)
        np.maximum.at(out, owner, sequence_logits)
        return out


def compare(
    judge,
    records: list[dict],
    precision: str,
    reference: np.ndarray | None = None,
    token_budget: int = DEFAULT_TOKEN_BUDGET,
) -> tuple[Check, np.ndarray]:
    """Time ``precision`` on ``records`` and compare its scores and verdicts with ``reference`` (the fp32
    probabilities; computed when None). Returns the check and this mode's probabilities."""
    engine = InferenceEngine(judge, precision, token_budget)
    engine.logits(records[:8])  # warm-up (and build the int8 copy) outside the timing
    start = time.perf_counter()
    logits = engine.logits(records)
    seconds = time.perf_counter() - start
    probs = judge.probabilities(torch.from_numpy(logits)).numpy()
    if reference is None:
        reference = probs
    agreement = float(np.mean((probs >= judge.threshold) == (reference >= judge.threshold)))
    diff = float(np.max(np.abs(probs - reference))) if len(probs) else 0.0
    ok = agreement >= AGREEMENT and diff <= SCORE_TOLERANCE[precision]
    return Check(precision, seconds, agreement, diff, ok), probs


def choose(
    judge, records: list[dict], candidates: tuple[str, ...] = PRECISIONS, token_budget: int = DEFAULT_TOKEN_BUDGET
) -> tuple[str, list[Check]]:
    """The fastest precision among ``candidates`` whose verdicts agree with fp32 on ``records`` (the
    check set) at ``AGREEMENT`` and whose scores stay within its ``SCORE_TOLERANCE``; every check."""
    fp32, reference = compare(judge, records, "fp32", token_budget=token_budget)
    checks = [fp32]
    for precision in candidates:
        if precision != "fp32":
            checks.append(compare(judge, records, precision, reference, token_budget)[0])
    best = min((c for c in checks if c.ok), key=lambda c: c.seconds)
    return best.precision, checks
