"""``EncoderJudge``: any Hugging Face encoder with a classification head, trained with BCE; optionally a
second, error-type head beside it (``error_head``) that names the kind of error of a wrong answer, and
optionally distilled from a trained judge's logits (``teacher``) into fewer of its layers (``layers``)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from safetensors.torch import load_file, save_file
from transformers import AutoModelForSequenceClassification, AutoTokenizer

from bertjudge.core.collate import pad_batch
from bertjudge.core.error_types import CORRECT_TYPES, ERROR_TYPES
from bertjudge.core.formats import Encoder, JudgeFormat, expand_references
from bertjudge.core.judge_file import ERROR_HEAD_WEIGHTS, JUDGE_FILE, JudgeFileError
from bertjudge.judges import backbones
from bertjudge.judges.base import JudgeModule, check_safetensors
from bertjudge.judges.inference import token_batches

# the classifier's labels in the exported config.json, by its number of logits (one logit: sigmoid(l0) is
# P(correct); two: softmax, l1 - l0); names only: the scores do not depend on them
LABELS = {1: {0: "correct"}, 2: {0: "incorrect", 1: "correct"}}


def score_layer_name(model) -> str:
    """The name of the classifier's last Linear layer, the one that maps the pooled representation to the
    labels (BERT's ``classifier``, RoBERTa's and MPNet's ``classifier.out_proj``): its input is the
    representation the error-type head reads, whatever pooling the architecture does before it."""
    names = [
        name
        for name, module in model.named_modules()
        if isinstance(module, torch.nn.Linear) and module.out_features == model.config.num_labels
    ]
    if not names:
        raise ValueError(f"{type(model).__name__}: no Linear layer with {model.config.num_labels} outputs")
    return names[-1]


def keep_layers(model, layers: list[int]) -> None:
    """Keep only ``layers`` (indices, in this order) of ``model``'s encoder stack — its module list of
    ``config.num_hidden_layers`` blocks — and say so in its config, so that it saves and loads as a shallower
    model of the same architecture."""
    total = model.config.num_hidden_layers
    stacks = [
        name
        for name, module in model.named_modules()
        if isinstance(module, torch.nn.ModuleList) and len(module) == total
    ]
    if len(stacks) != 1:
        raise ValueError(f"{type(model).__name__}: found {len(stacks)} stacks of {total} layers, not one")
    if not layers or len(set(layers)) != len(layers) or not all(isinstance(i, int) and 0 <= i < total for i in layers):
        raise ValueError(f"layers must be distinct indices of the backbone's {total} layers, got {layers!r}")
    parent, _, attribute = stacks[0].rpartition(".")
    stack = model.get_submodule(stacks[0])
    setattr(model.get_submodule(parent) if parent else model, attribute, torch.nn.ModuleList(stack[i] for i in layers))
    model.config.num_hidden_layers = len(layers)


def deciding_sequences(logits: torch.Tensor, owner: torch.Tensor, n: int) -> torch.Tensor:
    """For each of ``n`` records, the index of its sequence with the largest logit (the one that decided
    its verdict, as ``record_logits`` takes the max), given each sequence's record ``owner``."""
    best = logits.new_full((n,), float("-inf")).scatter_reduce(0, owner, logits, reduce="amax", include_self=False)
    positions = torch.arange(len(logits), device=logits.device)
    candidates = torch.where(logits == best[owner], positions, len(logits))
    first = torch.full((n,), len(logits), dtype=torch.long, device=logits.device)
    return first.scatter_reduce(0, owner, candidates, reduce="amin", include_self=True)


class EncoderJudge(JudgeModule):
    """A cross-encoder judge (the paper's BERT-as-a-Judge).

    Args:
        backbone: a hub id (resolved to an installed offline copy when one exists, see
            ``bertjudge.judges.backbones``) or a local folder with config, weights and tokenizer.
        num_labels: 1 (one logit, BCE; ours) or 2 (two logits, score = sigmoid(l1 - l0), as the
            authors' published checkpoints).
        dropout: overrides the backbone's hidden/attention dropout when given.
        pretrained: load the backbone's weights (False: random weights from its config, for
            cost measurements and tests).
        attn_implementation: the attention kernel (``eager``, ``sdpa``; None: transformers'
            default). Measured on 2 CPU cores (MiniLM-L6, bf16, batch 16): with ``dropout: 0.0``,
            ``eager`` trains 1.4x faster than the default, whose CPU flash-attention backward is slow.
        error_head: add a second head, a Linear layer on the representation the verdict's classifier
            reads, with one output per ``core.error_types.ERROR_TYPES``, trained with cross-entropy on
            the rows whose type is known (``data.error_types``; unknown rows are left out). The verdict
            and its loss are those of a judge without it. Saved in ``error_head.safetensors``, its
            names in judge.json's ``error_types``; ``error_types()`` and ``details()`` report it.
        error_head_weight: the error-type loss's weight in the training loss (binary loss + weight x
            error-type loss).
        layers: keep only these layers of the backbone's encoder (indices, in order; e.g. ``[0, 2, 4]`` of a
            6-layer judge: a student half as deep, started from its teacher's weights, as DistilBERT was).
        teacher: an exported encoder judge (a folder) to distil from: the training loss is the binary
            cross-entropy against the teacher's P(correct) (its raw logit over ``distill_temperature``),
            mixed with the labels' loss by ``distill_weight``. The teacher reads the same input: its format and
            tokenizer must be the student's (make the teacher's folder the backbone). It is not part of the
            student's weights, checkpoints or export.
        distill_weight: the teacher's share of the loss (1: the teacher's scores alone, the labels unread).
        distill_temperature: both logits are divided by it before the sigmoid, the loss multiplied by its square.
        **kwargs: the recipe and calibration arguments of ``JudgeModule``.
    """

    judge_kind = "encoder"

    def __init__(
        self,
        backbone: str = "sentence-transformers/all-MiniLM-L6-v2",
        format: JudgeFormat | None = None,
        num_labels: int = 1,
        dropout: float | None = None,
        pretrained: bool = True,
        attn_implementation: str | None = None,
        lr: float = 2e-5,
        warmup_ratio: float = 0.05,
        weight_decay: float = 0.01,
        effective_batch_size: int | None = 32,
        threshold: float = 0.5,
        temperature: float = 1.0,
        bias: float = 0.0,
        error_head: bool = False,
        error_head_weight: float = 0.5,
        layers: list[int] | None = None,
        teacher: str | None = None,
        distill_weight: float = 1.0,
        distill_temperature: float = 1.0,
    ):
        super().__init__(format, lr, warmup_ratio, weight_decay, effective_batch_size, threshold, temperature, bias)
        if num_labels not in (1, 2):
            raise ValueError(f"num_labels must be 1 or 2, got {num_labels}")
        if isinstance(error_head_weight, bool) or not (
            isinstance(error_head_weight, (int, float)) and math.isfinite(error_head_weight) and error_head_weight >= 0
        ):
            raise ValueError(f"error_head_weight must be a number of at least 0, got {error_head_weight!r}")
        if not 0.0 <= distill_weight <= 1.0 or distill_temperature <= 0:
            raise ValueError(
                f"distill_weight must be in [0, 1] and distill_temperature above 0, got {distill_weight!r} and "
                f"{distill_temperature!r}"
            )
        self.save_hyperparameters(ignore=["format"])
        self.hparams["format"] = self.format.to_dict()
        path = backbones.resolve(backbone)
        self.tokenizer = AutoTokenizer.from_pretrained(path, trust_remote_code=False)
        missing = [t for t in self.format.new_tokens if t not in self.tokenizer.get_vocab()]
        if missing:
            self.tokenizer.add_special_tokens({"additional_special_tokens": missing})
        overrides = {"num_labels": num_labels}
        if attn_implementation is not None:
            overrides["attn_implementation"] = attn_implementation
        if dropout is not None:
            overrides.update(hidden_dropout_prob=dropout, attention_probs_dropout_prob=dropout)
        self._loading_info, self._resized = None, False  # checked by from_export
        if pretrained:
            self.model, self._loading_info = AutoModelForSequenceClassification.from_pretrained(
                path, output_loading_info=True, trust_remote_code=False, **overrides
            )
        else:
            from transformers import AutoConfig

            config = AutoConfig.from_pretrained(path, trust_remote_code=False, **overrides)
            self.model = AutoModelForSequenceClassification.from_config(config)
        if layers is not None:
            keep_layers(self.model, layers)
        if self.model.config.pad_token_id is None and self.tokenizer.pad_token_id is not None:
            self.model.config.pad_token_id = self.tokenizer.pad_token_id
        if len(self.tokenizer) > self.model.get_input_embeddings().num_embeddings:
            self.model.resize_token_embeddings(len(self.tokenizer))
            self._resized = True
        self.model.train()  # transformers 5 returns models in eval mode
        self.encoder = Encoder(self.tokenizer, self.format)
        if self.format.reference_type and getattr(self.model.config, "type_vocab_size", 0) < 2:
            raise ValueError(f"{backbone} has no token types: set format.reference_type=false")
        self.provenance = {"backbone": backbone}
        if layers is not None:
            self.provenance["layers"] = list(layers)
        self._teacher: list[EncoderJudge] = []  # a list: not a submodule, so not in the student's state or export
        if teacher is not None:
            if error_head:
                raise ValueError("a judge distilled from a teacher has no error-type head: set error_head=false")
            self._teacher.append(self._load_teacher(teacher))
            self.provenance["distilled_from"] = teacher
        self.error_type_names: list[str] | None = None  # the head's output names; None: no error-type head
        self.error_classifier: torch.nn.Linear | None = None
        if error_head:
            self._build_error_head(list(ERROR_TYPES))

    def _load_teacher(self, folder: str) -> EncoderJudge:
        """The exported judge in ``folder``, frozen, after checking it reads what this judge reads."""
        teacher = EncoderJudge.from_export(folder)
        if teacher.format.to_dict() != self.format.to_dict():
            raise ValueError(
                f"teacher {folder}: its format {teacher.format.to_dict()} is not this judge's "
                f"{self.format.to_dict()}; a teacher must read the same input"
            )
        if teacher.tokenizer.get_vocab() != self.tokenizer.get_vocab():
            raise ValueError(f"teacher {folder}: its tokenizer is not this judge's (make its folder the backbone)")
        return teacher.requires_grad_(False).eval()

    def distillation_loss(self, logits: torch.Tensor, batch: dict) -> torch.Tensor:
        """Binary cross-entropy of the record ``logits`` against the teacher's P(correct) on the same batch
        (both over ``distill_temperature``, times its square), mixed with the labels' loss by ``distill_weight``."""
        teacher = self._teacher[0]
        if next(teacher.parameters()).device != logits.device:
            teacher.to(logits.device)
        with torch.no_grad():
            target = torch.sigmoid(teacher.record_logits(batch).float() / self.hparams.distill_temperature)
        t, w = self.hparams.distill_temperature, self.hparams.distill_weight
        soft = F.binary_cross_entropy_with_logits(logits.float() / t, target) * t * t
        if w == 1.0:
            return soft
        return w * soft + (1 - w) * F.binary_cross_entropy_with_logits(logits, batch["labels"])

    def _build_error_head(self, names: list[str]) -> None:
        """A Linear layer from the verdict classifier's input (``score_layer_name``) to one logit per name."""
        self._score_layer = score_layer_name(self.model)
        hidden = self.model.get_submodule(self._score_layer).in_features
        self.error_type_names = list(names)
        self.error_classifier = torch.nn.Linear(hidden, len(names))

    def _model_logits(self, batch: dict) -> torch.Tensor:
        extra = {"token_type_ids": self.encoder.token_types(batch["input_ids"])} if self.format.reference_type else {}
        return self.model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"], **extra).logits

    @staticmethod
    def _verdict_logit(logits: torch.Tensor) -> torch.Tensor:
        return logits[:, 0] if logits.shape[-1] == 1 else logits[:, 1] - logits[:, 0]

    def forward(self, batch: dict) -> torch.Tensor:
        return self._verdict_logit(self._model_logits(batch))

    def forward_heads(self, batch: dict) -> tuple[torch.Tensor, torch.Tensor]:
        """One forward pass, both heads: the verdict logit and the error-type logits of each sequence. The
        error-type head reads the input of the verdict's classifier layer, caught by a hook for this pass."""
        if self.error_classifier is None:
            raise ValueError("this judge has no error-type head (EncoderJudge(error_head=True))")
        pooled: list[torch.Tensor] = []
        layer = self.model.get_submodule(self._score_layer)
        handle = layer.register_forward_pre_hook(lambda module, args: pooled.append(args[0]))
        try:
            logits = self._model_logits(batch)
        finally:
            handle.remove()
        return self._verdict_logit(logits), self.error_classifier(pooled[0])

    def record_heads(self, batch: dict) -> tuple[torch.Tensor, torch.Tensor]:
        """``forward_heads`` per record: where a record was read as several sequences (``owner``), the
        largest verdict logit and the error-type logits of the sequence that gave it."""
        logits, error_logits = self.forward_heads(batch)
        owner = batch.get("owner")
        if owner is None:
            return logits, error_logits
        best = deciding_sequences(logits, owner.to(logits.device), len(batch["ids"]))
        return logits[best], error_logits[best]

    # --- the error-type head in training -------------------------------------------------------
    @staticmethod
    def error_loss(error_logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """Cross-entropy on the rows whose type is known (target >= 0); 0 (still a graph, so every
        parameter gets a gradient under DDP) when the batch has none."""
        known = targets >= 0
        if not known.any():
            return error_logits.sum() * 0.0
        return F.cross_entropy(error_logits[known].float(), targets[known])

    def _error_targets(self, batch: dict) -> torch.Tensor:
        if "error_type" not in batch:
            raise ValueError(
                "the error-type head needs error-type targets in each batch: train it with JudgeDataModule "
                "(its Collator gets data.error_types.row_error_index)"
            )
        return batch["error_type"]

    def training_step(self, batch: dict, batch_idx: int) -> torch.Tensor:
        if self._teacher:
            loss = self.distillation_loss(self.record_logits(batch), batch)
            self.log("train/loss", loss, prog_bar=True, batch_size=len(batch["ids"]))
            return loss
        if self.error_classifier is None:
            return super().training_step(batch, batch_idx)
        logits, error_logits = self.record_heads(batch)
        binary = F.binary_cross_entropy_with_logits(logits, batch["labels"])
        error = self.error_loss(error_logits, self._error_targets(batch))
        n = len(batch["ids"])
        # train/loss stays the verdict's loss, comparable with judges without the head
        self.log("train/loss", binary, prog_bar=True, batch_size=n)
        self.log("train/error_loss", error, batch_size=n)
        return binary + self.hparams.error_head_weight * error

    def _eval_heads(self, batch: dict, split: str) -> None:
        """The verdict's metrics (``_eval_step``) and, on the rows of a known type, the error-type head's
        loss and accuracy, from one forward pass."""
        logits, error_logits = self.record_heads(batch)
        self._eval_step(batch, split, logits)
        targets = batch.get("error_type")
        known = targets >= 0 if targets is not None else None
        if known is None or not known.any():
            return
        log = dict(sync_dist=True, add_dataloader_idx=False, batch_size=int(known.sum()))
        self.log(f"{split}/error_loss", self.error_loss(error_logits, targets), **log)
        accuracy = (error_logits[known].argmax(-1) == targets[known]).float().mean()
        self.log(f"{split}/error_acc", accuracy, **log)

    def validation_step(self, batch: dict, batch_idx: int) -> None:
        if self.error_classifier is None:
            return super().validation_step(batch, batch_idx)
        self._eval_heads(batch, "val")

    def test_step(self, batch: dict, batch_idx: int, dataloader_idx: int = 0) -> None:
        if self.error_classifier is None:
            return super().test_step(batch, batch_idx, dataloader_idx)
        self._eval_heads(batch, self._test_suites()[dataloader_idx])

    # --- the error-type head in scoring ----------------------------------------------------------
    @torch.inference_mode()
    def _head_outputs(self, records: list[dict], batch_size: int) -> tuple[np.ndarray, np.ndarray]:
        """Per record, the verdict logit and the error-type probabilities of the sequence that decided it,
        in fp32 on the judge's device. A pass of its own: the inference engine (``judges/inference.py``)
        returns one logit per sequence, so the head's outputs do not come through it; this pass batches
        the same way (``token_batches`` to a token budget)."""
        budget = self.token_budget or self.default_token_budget(batch_size)
        sequences, owner = expand_references(records, self.format)
        ids = self.encoder.encode_many(sequences)
        logits = np.empty(len(ids), dtype=np.float64)
        errors = np.empty((len(ids), len(self.error_type_names)), dtype=np.float64)
        device, was_training = next(self.parameters()).device, self.training
        self.eval()
        try:
            for idx in token_batches([len(row) for row in ids], budget):
                input_ids, attention_mask = pad_batch([ids[i] for i in idx], self.encoder.pad_id)
                verdict, error = self.forward_heads(
                    {"input_ids": input_ids.to(device), "attention_mask": attention_mask.to(device)}
                )
                logits[idx] = verdict.float().cpu().numpy()
                errors[idx] = error.float().softmax(-1).cpu().numpy()
        finally:
            self.train(was_training)
        owner = torch.as_tensor(owner, dtype=torch.long)
        best = deciding_sequences(torch.from_numpy(logits), owner, len(records)).numpy()
        return logits[best], errors[best]

    def error_types(self, records: list[dict], batch_size: int = 32, verdicts=None) -> list[dict] | None:
        """Per record ``{"error_type": name, "error_type_prob": p}``, or None when the judge has no head.

        The type agrees with the verdict: for a row judged correct it is the likelier of ``none`` and
        ``format_only``, for one judged wrong the likeliest of the other types, and ``p`` is the head's
        probability of it given that verdict (its softmax over the verdict's types). ``verdicts`` are the
        verdicts to agree with (those of a ``details`` or score-file pass); by default this pass's own
        (fp32: in another precision mode a verdict at the threshold may differ from the engine's)."""
        if self.error_classifier is None:
            return None
        if not records:
            return []
        logits, probs = self._head_outputs(records, batch_size)
        if verdicts is None:
            verdicts = self.probabilities(torch.from_numpy(logits)).numpy() >= self.threshold
        if len(verdicts) != len(records):
            raise ValueError(f"{len(verdicts)} verdicts for {len(records)} records")
        correct = np.array([name in CORRECT_TYPES for name in self.error_type_names])
        rows = []
        for p, verdict in zip(probs, verdicts):
            allowed = np.ones_like(correct) if verdict is None else correct if verdict else ~correct
            if not allowed.any():  # a saved head without types of this verdict
                allowed = np.ones_like(correct)
            k = int(np.argmax(np.where(allowed, p, -1.0)))
            rows.append({"error_type": self.error_type_names[k], "error_type_prob": float(p[k] / p[allowed].sum())})
        return rows

    def details(self, records: list[dict], batch_size: int = 32, progress: bool = False) -> list[dict]:
        """``JudgeModule.details``; with an error-type head, also ``error_type`` and ``error_type_prob``
        (``error_types``, agreeing with these rows' verdicts; a second forward pass)."""
        rows = super().details(records, batch_size=batch_size, progress=progress)
        if self.error_classifier is None:
            return rows
        types = self.error_types(records, batch_size, verdicts=[row["verdict"] for row in rows])
        return [{**row, **fields} for row, fields in zip(rows, types)]

    # --- export ----------------------------------------------------------------------------------
    def save_weights(self, folder: Path) -> None:
        """A plain ``AutoModelForSequenceClassification`` folder whose config names its labels (``LABELS``, not
        transformers' LABEL_0…), with the tokenizer and, beside it, the error-type head if there is one."""
        labels = LABELS.get(self.model.config.num_labels)
        if labels is not None:
            self.model.config.id2label = dict(labels)
            self.model.config.label2id = {name: i for i, name in labels.items()}
        self.model.save_pretrained(folder)
        self.tokenizer.save_pretrained(folder)
        if self.error_classifier is not None:
            state = {k: v.detach().float().cpu().contiguous() for k, v in self.error_classifier.state_dict().items()}
            save_file(state, str(Path(folder) / ERROR_HEAD_WEIGHTS))

    def _load_error_head(self, folder: Path, names) -> None:
        """Build the error-type head of the saved ``names`` (judge.json's ``error_types``) and load its weights;
        a bad list, a missing or damaged file or weights of another shape are a ``JudgeFileError``."""
        if (
            not isinstance(names, list)
            or not names
            or not all(isinstance(n, str) and n for n in names)
            or len(set(names)) != len(names)
        ):
            raise JudgeFileError(
                f"{folder / JUDGE_FILE}: 'error_types' must be a list of distinct names, got {names!r}"
            )
        path = folder / ERROR_HEAD_WEIGHTS
        check_safetensors(path)
        self._build_error_head(names)
        state = load_file(str(path))
        expected = {k: tuple(v.shape) for k, v in self.error_classifier.state_dict().items()}
        found = {k: tuple(v.shape) for k, v in state.items()}
        if found != expected:
            raise JudgeFileError(
                f"{path}: tensors {found} do not fit an error-type head of {len(names)} types on this model "
                f"(expected {expected})"
            )
        self.error_classifier.load_state_dict(state)

    @classmethod
    def from_config(cls, folder: Path, config: dict, saved: JudgeFormat, model_config: dict) -> EncoderJudge:
        names = config.get("error_types")  # only a judge with an error-type head says it
        judge = cls(
            backbone=str(folder),
            format=saved,
            num_labels=config.get("num_labels", 1),
            threshold=config["threshold"],
            temperature=config["temperature"],
            bias=config.get("bias", 0.0),
            error_head=names is not None,
        )
        if names is not None:
            judge._load_error_head(folder, names)
        return judge

    def config(self) -> dict:
        config = {**super().config(), "num_labels": self.hparams.num_labels}
        if self.error_type_names is not None:
            config["error_types"] = list(self.error_type_names)
        return config
