"""``JudgeModule``: the LightningModule base shared by every trainable judge.

A subclass provides ``encoder`` (records -> token ids, see ``formats.Encoder``), ``forward(batch)``
returning one logit per example, and ``save_weights(folder)`` / ``from_export(folder)``. The base
gives one loss, one metrics path (per stage, task, category and attack), one ``predict_step``, the
optimizer recipe, batched scoring for the API, and export to a folder with ``judge.json``.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

import lightning as L
import numpy as np
import torch
import torch.nn.functional as F
from safetensors import SafetensorError, safe_open

from bertjudge.core.formats import JudgeFormat
from bertjudge.core.hashing import folder_files, hash_folder
from bertjudge.core.judge_file import (
    MODEL_CARD,
    MODEL_CONFIG,
    TOKENIZER_VOCABULARIES,
    WEIGHTS,
    WEIGHTS_INDEX,
    JudgeFileError,
    read_json_object,
    read_model_config,
    write_judge_config,
)
from bertjudge.core.metrics import GroupedBinaryMetrics
from bertjudge.core.records import CATEGORIES
from bertjudge.core.version import __version__
from bertjudge.judges.inference import InferenceEngine, auto_line, check_set, default_token_budget, tensor_state
from bertjudge.judges.inference import choose as choose_precision
from bertjudge.judges.interface import BaseJudge, class_path, verdict_fields
from bertjudge.judges.model_card import model_card
from bertjudge.zoo.registry import UNSAFE_SUFFIXES

NOT_FINGERPRINTED = (MODEL_CARD,)  # the model card: words about the judge, not the judge
_CHOOSING = threading.Lock()  # one auto check at a time (a server's threads may score the same new judge at once)
_CHOSEN: dict[tuple, tuple[str, list]] = {}  # JudgeModule._content_key() -> auto's choice and checks, once a process


def check_safetensors(path: Path) -> list[str]:
    """The tensor names of a safetensors file, after safetensors' own header check (a missing, truncated
    or damaged file is a ``JudgeFileError`` naming it)."""
    if not path.is_file():
        raise JudgeFileError(f"{path}: missing (the judge's weights)")
    try:
        with safe_open(str(path), framework="pt") as weights:
            return list(weights.keys())
    except (SafetensorError, OSError) as err:
        raise JudgeFileError(f"{path}: not a complete safetensors file ({err}); it is truncated or damaged") from None


def check_export_folder(
    folder: str | os.PathLike,
    allow_pickle: bool = False,
    tokenizer_files: tuple[str, ...] = ("tokenizer_config.json",),
    vocabularies: tuple[str, ...] = TOKENIZER_VOCABULARIES,
) -> dict:
    """Refuse a judge folder that is incomplete or unsafe before anything is built from it: pickle files
    (``*.bin``, ``*.pt``, ``*.ckpt``, ``*.pkl``…, which can run code when loaded) unless ``allow_pickle``;
    a missing or unreadable ``config.json``; a missing tokenizer file (``tokenizer_files``, and one of
    ``vocabularies``: without them transformers silently builds a tokenizer of a few special tokens); a
    missing, truncated or damaged ``model.safetensors`` (or a shard of a sharded one). Every error is a
    ``JudgeFileError`` naming the file. Returns the parsed config.json."""
    folder = Path(folder)
    if not folder.is_dir():
        raise JudgeFileError(f"{folder}: not a folder")
    pickles = [rel for rel in folder_files(folder) if rel.endswith(UNSAFE_SUFFIXES)]
    if pickles and not allow_pickle:
        raise JudgeFileError(
            f"{folder / pickles[0]}: a pickle file (loading it can run code); refusing the folder: "
            f"keep the weights as {WEIGHTS} only, or pass allow_pickle=True if you trust it"
        )
    config = read_json_object(folder / MODEL_CONFIG, "the model's configuration")
    for name in tokenizer_files:
        if not (folder / name).is_file():
            raise JudgeFileError(f"{folder / name}: missing (a tokenizer file); the judge's tokenizer cannot be built")
    present = [name for name in vocabularies if (folder / name).is_file()]
    if not present:
        raise JudgeFileError(
            f"{folder / vocabularies[0]}: missing (no tokenizer vocabulary: none of "
            f"{', '.join(vocabularies)}); refusing to build a tokenizer without one"
        )
    if present == ["vocab.json"] and not (folder / "merges.txt").is_file():
        raise JudgeFileError(f"{folder / 'merges.txt'}: missing (vocab.json needs it); the tokenizer cannot be built")
    if "tokenizer.json" in present:
        read_json_object(folder / "tokenizer.json", "the tokenizer")
    if (folder / WEIGHTS_INDEX).is_file():
        index = read_json_object(folder / WEIGHTS_INDEX, "the index of the weight shards")
        shards = index.get("weight_map")
        if not isinstance(shards, dict) or not shards:
            raise JudgeFileError(f"{folder / WEIGHTS_INDEX}: no 'weight_map' of tensor names to shard files")
        for shard in sorted(set(shards.values())):
            if Path(shard).is_absolute() or ".." in Path(shard).parts:
                raise JudgeFileError(f"{folder / WEIGHTS_INDEX}: shard {shard!r} is outside the folder")
            check_safetensors(folder / shard)
    elif not (folder / WEIGHTS).is_file() and allow_pickle and pickles:
        pass  # pickled weights, allowed by the caller
    else:
        check_safetensors(folder / WEIGHTS)
    return config


def check_loaded(judge, folder: Path, config: dict, info: dict | None) -> None:
    """After a judge was built from ``folder``: its tokenizer and weights belong together (no token beyond
    the embeddings, no embeddings resized for new tokens, every weight of the model in the file)."""
    embeddings = judge.model.get_input_embeddings().num_embeddings
    vocab = config.get("vocab_size") or config.get("text_config", {}).get("vocab_size")
    if judge._resized or len(judge.tokenizer) > embeddings:
        raise JudgeFileError(
            f"{folder}: the tokenizer has {len(judge.tokenizer)} tokens, more than the "
            f"{vocab or embeddings} embeddings of {WEIGHTS}; the tokenizer files and the weights "
            "do not belong together"
        )
    if vocab and len(judge.tokenizer) < vocab // 2:
        raise JudgeFileError(
            f"{folder}: the tokenizer has {len(judge.tokenizer)} tokens for a model of {vocab} "
            "(config.json vocab_size); the tokenizer files do not belong to these weights"
        )
    missing = sorted((info or {}).get("missing_keys") or [])
    if missing:
        raise JudgeFileError(
            f"{folder / WEIGHTS}: lacks weights the model needs ({', '.join(missing[:3])}"
            f"{'…' if len(missing) > 3 else ''}); the judge would score with random weights"
        )


class JudgeModule(BaseJudge, L.LightningModule):
    """Base of the trainable judges.

    Args:
        format: the input format (saved in ``judge.json`` and checked at load).
        lr: peak learning rate of AdamW.
        warmup_ratio: fraction of optimizer steps of linear warm-up, then linear decay to 0.
        weight_decay: AdamW weight decay (not applied to biases and norms).
        effective_batch_size: examples per optimizer step; gradient accumulation makes up the
            difference with the device batch size (None leaves the trainer's setting alone).
        threshold: P(correct) at or above which the verdict is "correct".
        temperature: logits are divided by it before the sigmoid (calibration).
        bias: added to the scaled logit before the sigmoid, P = sigmoid(logit / T + bias): Platt
            scaling, for data whose share of correct answers the training data did not have.
    """

    judge_kind = "base"
    features = frozenset({"export", "calibration", "precision", "weights"})
    # the inference engine's mode (set_precision): fp32, bf16, int8, onnx, or auto: the mode inference.choose takes on
    # the built-in check set, once per judge and state of its weights and calibration (resolved_precision)
    precision = "auto"
    _auto: tuple | None = None  # (what auto's choice was made for: _precision_key(), the mode, the checks)
    token_budget: int | None = None  # rows x padded length per scoring batch; None: inference.default_token_budget

    def __init__(
        self,
        format: JudgeFormat | None = None,
        lr: float = 2e-5,
        warmup_ratio: float = 0.05,
        weight_decay: float = 0.01,
        effective_batch_size: int | None = 32,
        threshold: float = 0.5,
        temperature: float = 1.0,
        bias: float = 0.0,
    ):
        super().__init__()
        if format is None:
            format = JudgeFormat()
        elif isinstance(format, dict):  # from a checkpoint's hyperparameters
            format = JudgeFormat.from_dict(format)
        self.format = format
        self.lr, self.warmup_ratio, self.weight_decay = lr, warmup_ratio, weight_decay
        self.effective_batch_size = effective_batch_size
        self.threshold, self.temperature, self.bias = threshold, temperature, bias
        self.provenance: dict = {}
        self.stage_metrics = torch.nn.ModuleDict()

    # --- to implement ------------------------------------------------------------------------
    encoder = None
    _resized = False  # the embeddings were resized for tokens the saved weights lack (a kind that can, sets it)

    def forward(self, batch: dict) -> torch.Tensor:
        raise NotImplementedError

    def save_weights(self, folder: Path) -> None:
        raise NotImplementedError

    @classmethod
    def from_config(cls, folder: Path, config: dict, saved: JudgeFormat, model_config: dict) -> JudgeModule:
        """Build the judge saved in ``folder`` from its checked judge.json (``config``, ``saved`` format)
        and config.json (``model_config``); subclasses check their own judge.json keys here."""
        raise NotImplementedError

    folder_check: dict = {}  # check_export_folder's options for this kind of folder

    def check_built(self, folder: Path, model_config: dict) -> None:
        """After the judge was built from ``folder``: tokenizer and weights belong together."""
        check_loaded(self, folder, model_config, self._loading_info)

    @classmethod
    def from_export(
        cls, folder: str | os.PathLike, format: JudgeFormat | None = None, allow_pickle: bool = False
    ) -> JudgeModule:
        """Load an exported judge; refuse a format other than the one it was made with, and a folder that
        is incomplete or inconsistent (``check_export_folder``: judge.json, config, tokenizer files,
        ``model.safetensors``; pickle files unless ``allow_pickle``). No code from the folder is run."""
        folder = Path(folder)
        config, saved = read_model_config(folder)
        model_config = check_export_folder(folder, allow_pickle=allow_pickle, **cls.folder_check)
        if format is not None:
            format.check_matches(saved, str(folder))
        judge = cls.from_config(folder, config, saved, model_config)
        judge.check_built(folder, model_config)
        judge.provenance = config.get("provenance", {})
        judge.export_folder = folder
        return judge.eval()

    # --- training ----------------------------------------------------------------------------
    def setup(self, stage: str) -> None:
        dm = getattr(self.trainer, "datamodule", None)
        names = {
            "task": list(getattr(dm, "task_names", [])),
            "category": list(CATEGORIES),
            "attack": list(getattr(dm, "attack_names", [])),
        }
        for split in ("val", "test", "adversarial", "real_test"):
            self.stage_metrics[split] = GroupedBinaryMetrics(names, self.threshold)
        if stage == "fit" and self.effective_batch_size and dm is not None:
            per_step = dm.batch_size * self.trainer.world_size
            self.trainer.accumulate_grad_batches = max(1, round(self.effective_batch_size / per_step))

    def on_train_start(self) -> None:
        self.train()  # transformers 5 loads models in eval mode: make sure dropout is on

    def record_logits(self, batch: dict) -> torch.Tensor:
        """One logit per record: the forward pass's, or, where a record was read as several sequences
        (one per reference, ``owner``), the largest of its sequences' logits."""
        logits = self(batch)
        owner = batch.get("owner")
        if owner is None:
            return logits
        owner = owner.to(logits.device)
        empty = logits.new_full((len(batch["ids"]),), float("-inf"))
        return empty.scatter_reduce(0, owner, logits, reduce="amax", include_self=False)

    def training_step(self, batch: dict, batch_idx: int) -> torch.Tensor:
        loss = F.binary_cross_entropy_with_logits(self.record_logits(batch), batch["labels"])
        self.log("train/loss", loss, prog_bar=True, batch_size=len(batch["ids"]))
        return loss

    def _eval_step(self, batch: dict, split: str, logits: torch.Tensor | None = None) -> None:
        """Log a batch's loss and update the split's metrics (``logits``: the record logits, when the
        caller already ran the forward pass)."""
        logits = self.record_logits(batch) if logits is None else logits
        labels = batch["labels"]
        if (labels < 0).any():
            raise ValueError(f"{split} data has unlabelled rows (label null); label them or use predict")
        # a NaN logit is a judgment the judge could not give (an unparsed reasoning verdict):
        # counted and reported, never scored as wrong
        parsed, n = ~torch.isnan(logits), len(batch["ids"])
        # the split names the metrics, so several test suites (dataloaders) log apart without a suffix
        log = dict(sync_dist=True, add_dataloader_idx=False)
        self.log(f"{split}/unparsed", (~parsed).sum().float(), reduce_fx="sum", batch_size=n, **log)
        self.log(f"{split}/unparsed_rate", (~parsed).float().mean(), batch_size=n, **log)
        if parsed.any():
            loss = F.binary_cross_entropy_with_logits(logits[parsed], labels[parsed])
            self.log(f"{split}/loss", loss, batch_size=int(parsed.sum()), **log)
            groups = {key: batch[key][parsed] for key in ("task", "category", "attack")}
            self.stage_metrics[split].update(self.probabilities(logits[parsed]), labels[parsed], groups)

    def _eval_epoch_end(self, split: str) -> None:
        metric = self.stage_metrics[split]
        if not metric.probs:  # every row unparsed
            return
        values = metric.compute()
        metric.reset()
        for key, value in values.items():
            if key == "n" or key.startswith("n/"):
                continue
            # the values are already gathered over processes; sync_dist only keeps every rank's log alike
            self.log(f"{split}/{key}", value, prog_bar=key in ("acc", "auroc"), sync_dist=True)

    def validation_step(self, batch: dict, batch_idx: int) -> None:
        self._eval_step(batch, "val")

    def test_step(self, batch: dict, batch_idx: int, dataloader_idx: int = 0) -> None:
        self._eval_step(batch, self._test_suites()[dataloader_idx])

    def _test_suites(self) -> list[str]:
        """The test dataloaders' names: ``test``, then ``adversarial`` when the data has that suite."""
        dm = getattr(self.trainer, "datamodule", None)
        return list(getattr(dm, "test_suites", ["test"]))

    def on_validation_epoch_end(self) -> None:
        self._eval_epoch_end("val")

    def on_test_epoch_end(self) -> None:
        for suite in self._test_suites():
            self._eval_epoch_end(suite)

    def predict_step(self, batch: dict, batch_idx: int) -> dict:
        logits = self.record_logits(batch)
        return {"ids": batch["ids"], "logits": logits.float().cpu(), "scores": self.probabilities(logits).cpu()}

    def probabilities(self, logits: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(logits.float() / self.temperature + self.bias)

    def configure_optimizers(self):
        decay, no_decay = [], []
        for _name, param in self.named_parameters():
            if param.requires_grad:
                (no_decay if param.ndim < 2 else decay).append(param)
        optimizer = torch.optim.AdamW(
            [{"params": decay, "weight_decay": self.weight_decay}, {"params": no_decay, "weight_decay": 0.0}],
            lr=self.lr,
            fused=True,  # one fused kernel per step: ~2x faster optimizer steps on CPU
        )
        total = max(1, int(self.trainer.estimated_stepping_batches))
        warmup = max(1, math.ceil(self.warmup_ratio * total))

        def schedule(step: int) -> float:
            if step < warmup:
                return (step + 1) / warmup
            return max(0.0, (total - step) / max(1, total - warmup))

        scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, schedule)
        return {"optimizer": optimizer, "lr_scheduler": {"scheduler": scheduler, "interval": "step"}}

    # --- scoring (the Judge API) ---------------------------------------------------------------
    export_folder: Path | None = None  # the folder it was loaded from (``from_export``)
    _folder_hashes: dict[str, str] | None = None

    @property
    def name(self) -> str:
        return self.provenance.get("name", self.judge_kind)

    def fingerprint(self) -> dict[str, str]:
        """What its scores depend on, for resumable runs: class, name, the sha256 of ``config()``
        (format, threshold, calibration), the inference precision (auto's choice: a resumed run refuses rows scored
        in another mode) and, for a judge loaded from a folder, the sha256 of each file of
        it (judge.json, config, tokenizer, weights; hashed once), else of its weights in memory."""
        found = {
            "class": class_path(self),
            "name": self.name,
            "config": self._config_digest(),
            "precision": self.resolved_precision(),
        }
        if self.export_folder is not None:
            if self._folder_hashes is None:
                self._folder_hashes = {
                    rel: digest
                    for rel, digest in hash_folder(Path(self.export_folder)).items()
                    if rel not in NOT_FINGERPRINTED
                }
            return {**found, **self._folder_hashes}
        return {**found, "weights": self._weights_digest()}

    def _config_digest(self) -> str:
        """The sha256 of ``config()`` less the version and metrics (which do not change a score)."""
        config = {k: v for k, v in self.config().items() if k not in ("bertjudge_version", "metrics")}
        return hashlib.sha256(json.dumps(config, sort_keys=True, default=str).encode()).hexdigest()

    def _weights_digest(self) -> str:
        """The sha256 of the weights in memory (``state_dict``: names and bytes)."""
        digest = hashlib.sha256()
        for key, tensor in sorted(self.state_dict().items()):
            digest.update(key.encode())
            digest.update(tensor.detach().cpu().contiguous().reshape(-1).view(torch.uint8).numpy().tobytes())
        return digest.hexdigest()

    @torch.inference_mode()
    def logits_records(self, records: list[dict], batch_size: int = 32, progress: bool = False) -> np.ndarray:
        """Uncalibrated logits for records, in input order, through the inference engine
        (``bertjudge.judges.inference``) in the judge's precision (``resolved_precision``): batches filled to
        ``token_budget`` tokens (default: ``batch_size`` rows at the format's maximum length, at most
        ``inference.CPU_TOKEN_BUDGET`` on a CPU)."""
        budget = self.token_budget or self.default_token_budget(batch_size)
        return InferenceEngine(self, self.resolved_precision(), budget).logits(records, progress=progress)

    def default_token_budget(self, batch_size: int) -> int:
        """The token budget of a scoring batch when ``token_budget`` is not set: ``batch_size`` rows at the
        format's maximum length, capped on a CPU (``inference.default_token_budget``)."""
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be a whole number of at least 1, got {batch_size!r}")
        device = next(self.parameters()).device
        return default_token_budget(device, batch_size * self.format.max_length)

    def set_precision(self, precision: str, check_records: list[dict] | None = None) -> list:
        """Score in ``precision`` from now on (``bertjudge.judges.inference.PRECISIONS``; ``fp32``: the exact fp32
        scores), or ``auto``: the first mode of ``inference.auto_candidates`` whose verdicts agree with fp32 on the
        built-in check set (and whose scores stay within the stated tolerance), else fp32, chosen now and again
        whenever the weights or the calibration change (``resolved_precision``). ``check_records``: make auto's
        choice once on these rows instead, and keep the mode chosen. Returns the checks made (empty unless
        ``auto``); ``auto`` says what it chose on stderr, in one line."""
        if precision != "auto":
            InferenceEngine(self, precision)  # validates the name
            self.precision = precision
            return []
        if check_records is not None:
            if not check_records:
                raise ValueError("precision 'auto' needs records to check the modes against fp32 on")
            chosen, checks = self._choose(check_records)
            self.precision = chosen
            return checks
        self.precision = "auto"
        self.resolved_precision()
        return list(self._auto[2])

    def resolved_precision(self) -> str:
        """The mode the judge scores in: its ``precision``, or for ``auto`` the mode ``inference.choose`` takes on the
        built-in check set (``inference.check_set``), chosen on first use and kept until the weights, their device
        or dtype, the threshold or the calibration change, so that every entry point scoring with this judge
        (``score``, ``score_records``, ``details``, ``judge``, ``evaluate``, the server) scores in one mode. The
        choice depends on the judge and the machine only: loaded twice, the judge takes the same mode."""
        if self.precision != "auto":
            return self.precision
        key = self._precision_key()
        with _CHOOSING:
            if self._auto is None or self._auto[0] != key:
                content = self._content_key()
                if content not in _CHOSEN:
                    _CHOSEN[content] = self._choose(None)
                self._auto = (key, *_CHOSEN[content])
        return self._auto[1]

    def _precision_key(self) -> tuple:
        """What tells this judge object that auto's choice must be looked up again: its tensors (weights, device,
        dtype: ``inference.tensor_state``) and what turns a logit into a verdict (threshold, temperature, bias)."""
        return (tensor_state(self), float(self.threshold), float(self.temperature), float(self.bias))

    def _content_key(self) -> tuple:
        """What auto's choice depends on, alike for every judge object of the same content: class, configuration
        (format, threshold, calibration), weights, and the device and dtype they are on."""
        first = next(self.parameters())
        return (class_path(self), self._config_digest(), self._weights_digest(), str(first.device), str(first.dtype))

    def _choose(self, records: list[dict] | None) -> tuple[str, list]:
        """``inference.choose`` on ``records`` (None: the check set), said on stderr in one line."""
        start = time.perf_counter()
        records = check_set() if records is None else records
        chosen, checks = choose_precision(self, records)
        print(auto_line(self.name, chosen, checks, len(records), time.perf_counter() - start), file=sys.stderr)
        return chosen, checks

    def score_records(self, records: list[dict], batch_size: int = 32, progress: bool = False) -> np.ndarray:
        """Calibrated P(correct) for records, in input order."""
        logits = torch.from_numpy(self.logits_records(records, batch_size, progress))
        return self.probabilities(logits).numpy()

    def details(self, records: list[dict], batch_size: int = 32, progress: bool = False) -> list[dict]:
        """Per record: ``score`` (calibrated), ``verdict``, ``unparsed`` (False) and the raw ``logit``."""
        logits = self.logits_records(records, batch_size, progress)
        scores = self.probabilities(torch.from_numpy(logits)).numpy()
        return [
            {"unparsed": False, "logit": float(z), **verdict_fields(float(p), self.threshold)}
            for z, p in zip(logits, scores)
        ]

    def describe(self) -> dict:
        return {
            **super().describe(),
            "temperature": float(self.temperature),
            "bias": float(self.bias),
            "format": self.format.to_dict(),
        }

    def place(self, device=None, dtype=None) -> JudgeModule:
        """Move the weights to ``device`` and cast them to ``dtype`` (None: as they are)."""
        if device is not None or dtype is not None:
            self.to(device=device, dtype=dtype)
        return self

    # --- export -------------------------------------------------------------------------------
    def config(self) -> dict:
        """What judge.json holds: class, format, threshold, calibration, bertjudge version and provenance."""
        return {
            "class": class_path(self),
            "format": self.format.to_dict(),
            "threshold": self.threshold,
            "temperature": self.temperature,
            "bias": self.bias,
            "bertjudge_version": __version__,
            "provenance": self.provenance,
        }

    def export(self, folder: str | os.PathLike, metrics: dict | None = None) -> Path:
        """Write a plain Hugging Face folder plus ``judge.json`` and a model card, atomically."""
        folder = Path(folder)
        folder.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
        try:
            self.save_weights(tmp)
            config = self.config()
            if metrics:
                config["metrics"] = metrics
            write_judge_config(tmp, config)
            model_config = (
                read_json_object(tmp / MODEL_CONFIG, "config.json") if (tmp / MODEL_CONFIG).is_file() else None
            )
            (tmp / MODEL_CARD).write_text(model_card(config, model_config))
            if folder.exists():
                shutil.rmtree(folder)
            os.replace(tmp, folder)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        return folder
