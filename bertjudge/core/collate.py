"""Records to padded token batches: the one place where a judge's input format meets its tokenizer."""

from __future__ import annotations

import random
import zlib

import torch

from bertjudge.core.formats import NO_ANSWER, expand_references
from bertjudge.core.records import CATEGORIES

ANSWER_NOISE_KINDS = ("absent", "last-line", "other-row")


def pad_batch(ids: list[list[int]], pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-padded ``input_ids`` and ``attention_mask`` of token id lists, as wide as the longest."""
    width = max(len(row) for row in ids)
    input_ids = torch.full((len(ids), width), pad_id, dtype=torch.long)
    attention_mask = torch.zeros((len(ids), width), dtype=torch.long)
    for i, row in enumerate(ids):
        input_ids[i, : len(row)] = torch.tensor(row, dtype=torch.long)
        attention_mask[i, : len(row)] = 1
    return input_ids, attention_mask


class Collator:
    """Pads a list of records into a batch (dynamic padding to the longest row).

    ``task`` and ``attack`` (``meta['attack']``, the adversarial suite's tag) are indices into
    ``task_names`` and ``attack_names``, -1 for a row outside them. A format that reads each reference
    apart (``references: each``) gives several sequences per record; ``owner`` then names each
    sequence's record (the fields other than the token tensors stay one per record). ``references``
    caps how many references are read (training reads 1: the one sharing most words with the answer,
    which a max over references would mostly pick, at one sequence per row). ``error_type``, a function of
    a record to its index in ``core.error_types.ERROR_TYPES`` (-1: unknown; ``data.error_types.row_error_index``),
    adds the ``error_type`` targets of an error-type head to each batch.

    ``answer_noise`` (training, formats with an answer segment ``A``): on that share of the rows the answer segment
    is not the extractor's reading but, in equal parts, absent ("none found"), the candidate's last line (another
    extractor's reading), or another row's answer — the label unchanged, so the judge learns to check the
    candidate itself rather than follow the extractor where it is wrong. Which rows, and how, is a function of the
    row's id and ``seed``: the same in every epoch and every process.
    """

    def __init__(
        self,
        encoder,
        task_names: list[str] | None = None,
        attack_names: list[str] | None = None,
        references: int | None = None,
        error_type=None,
        answer_noise: float = 0.0,
        seed: int = 0,
    ):
        if not 0.0 <= answer_noise <= 1.0:
            raise ValueError(f"answer_noise {answer_noise!r} must be in [0, 1]")
        self.encoder, self.references, self.error_type = encoder, references, error_type
        fmt = getattr(encoder, "format", None)
        self.answer_noise = answer_noise if fmt is not None and "A" in fmt.order else 0.0
        self.seed = seed
        self.task_index = {name: i for i, name in enumerate(task_names or [])}
        self.attack_index = {name: i for i, name in enumerate(attack_names or [])}

    def __call__(self, records: list[dict]) -> dict:
        fmt = getattr(self.encoder, "format", None)
        sequences, owner = expand_references(records, fmt, self.references) if fmt is not None else (records, None)
        ids = (
            self.encoder.encode_many(sequences, self.noisy_answers(sequences))
            if self.answer_noise
            else self.encoder.encode_many(sequences)
        )
        input_ids, attention_mask = pad_batch(ids, self.encoder.pad_id)
        labels = [-1 if r["label"] is None else r["label"] for r in records]
        extra = {"owner": torch.tensor(owner)} if owner is not None and len(sequences) != len(records) else {}
        if self.error_type is not None:
            extra["error_type"] = torch.tensor([self.error_type(r) for r in records], dtype=torch.long)
        return {
            **extra,
            "input_ids": input_ids,
            "attention_mask": attention_mask,
            "labels": torch.tensor(labels, dtype=torch.float),
            "task": torch.tensor([self.task_index.get(r["task"], -1) for r in records]),
            "category": torch.tensor([CATEGORIES.index(r["category"]) for r in records]),
            "attack": torch.tensor([self.attack_index.get((r.get("meta") or {}).get("attack"), -1) for r in records]),
            "ids": [r["id"] for r in records],
        }

    def noisy_answers(self, records: list[dict]) -> list[str | None]:
        """Per row, the answer segment to read instead of the extractor's (None: the extractor's); see the class."""
        answers = []
        for i, record in enumerate(records):
            rng = random.Random(zlib.crc32(f"{self.seed}:{record.get('id')}".encode()))
            if rng.random() >= self.answer_noise:
                answers.append(None)
                continue
            kind = rng.choice(ANSWER_NOISE_KINDS)
            if kind == "last-line":
                lines = [line.strip() for line in record["candidate"].splitlines() if line.strip()]
                answers.append(lines[-1] if lines else NO_ANSWER)
            elif kind == "other-row" and len(records) > 1:
                other = records[(i + 1 + rng.randrange(len(records) - 1)) % len(records)]
                answers.append(self.encoder.texts(other).get("answer") or NO_ANSWER)
            else:
                answers.append(NO_ANSWER)
        return answers
