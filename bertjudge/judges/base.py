"""``JudgeModule``: the LightningModule base shared by every trainable judge.

A subclass provides ``encoder`` (records -> token ids, see ``formats.Encoder``), ``forward(batch)``
returning one logit per example, and ``save_weights(folder)`` / ``from_export(folder)``. The base
gives one loss, one metrics path (per stage, task, category and attack), one ``predict_step``, the
optimizer recipe, batched scoring for the API, and export to a folder with ``judge.json``.
"""

from __future__ import annotations

import math
import os
import shutil
import tempfile
from pathlib import Path

import lightning as L
import numpy as np
import torch
import torch.nn.functional as F

from bertjudge.core.collate import Collator
from bertjudge.core.formats import JudgeFormat
from bertjudge.core.judge_file import write_judge_config
from bertjudge.core.metrics import GroupedBinaryMetrics
from bertjudge.core.records import CATEGORIES
from bertjudge.core.version import __version__
from bertjudge.judges.interface import BaseJudge, verdict_fields


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

    def __init__(self, format: JudgeFormat | None = None, lr: float = 2e-5, warmup_ratio: float = 0.05,
                 weight_decay: float = 0.01, effective_batch_size: int | None = 32,
                 threshold: float = 0.5, temperature: float = 1.0, bias: float = 0.0):
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

    def forward(self, batch: dict) -> torch.Tensor:
        raise NotImplementedError

    def save_weights(self, folder: Path) -> None:
        raise NotImplementedError

    @classmethod
    def from_export(cls, folder: str | os.PathLike, format: JudgeFormat | None = None) -> JudgeModule:
        raise NotImplementedError

    # --- training ----------------------------------------------------------------------------
    def setup(self, stage: str) -> None:
        dm = getattr(self.trainer, "datamodule", None)
        names = {"task": list(getattr(dm, "task_names", [])), "category": list(CATEGORIES),
                 "attack": list(getattr(dm, "attack_names", []))}
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

    def _eval_step(self, batch: dict, split: str) -> None:
        logits, labels = self.record_logits(batch), batch["labels"]
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
            lr=self.lr, fused=True,  # one fused kernel per step: ~2x faster optimizer steps on CPU
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
    @property
    def name(self) -> str:
        return self.provenance.get("name", self.judge_kind)

    @torch.inference_mode()
    def logits_records(self, records: list[dict], batch_size: int = 32, progress: bool = False) -> np.ndarray:
        """Uncalibrated logits for records, batched by length, returned in input order."""
        was_training = self.training
        self.eval()
        collate = Collator(self.encoder)
        order = sorted(range(len(records)), key=lambda i: len(records[i]["candidate"]))
        out = np.empty(len(records), dtype=np.float64)
        batches = range(0, len(order), batch_size)
        if progress:
            from tqdm.auto import tqdm

            batches = tqdm(batches, desc=f"judging with {self.name}", unit="batch")
        for start in batches:
            idx = order[start: start + batch_size]
            batch = collate([records[i] for i in idx])
            batch = {k: v.to(self.device) if torch.is_tensor(v) else v for k, v in batch.items()}
            out[idx] = self.record_logits(batch).float().cpu().numpy()
        self.train(was_training)
        return out

    def score_records(self, records: list[dict], batch_size: int = 32, progress: bool = False) -> np.ndarray:
        """Calibrated P(correct) for records, in input order."""
        logits = torch.from_numpy(self.logits_records(records, batch_size, progress))
        return self.probabilities(logits).numpy()

    def details(self, records: list[dict], progress: bool = False, batch_size: int = 32) -> list[dict]:
        """Per record: ``score`` (calibrated), ``verdict``, ``unparsed`` (False) and the raw ``logit``."""
        logits = self.logits_records(records, batch_size, progress)
        scores = self.probabilities(torch.from_numpy(logits)).numpy()
        return [{"unparsed": False, "logit": float(z), **verdict_fields(float(p), self.threshold)}
                for z, p in zip(logits, scores)]

    def describe(self) -> dict:
        return {**super().describe(), "temperature": float(self.temperature), "bias": float(self.bias),
                "format": self.format.to_dict()}

    # --- export -------------------------------------------------------------------------------
    def judge_config(self) -> dict:
        return {
            "class": f"{type(self).__module__}.{type(self).__qualname__}",
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
            config = self.judge_config()
            if metrics:
                config["metrics"] = metrics
            write_judge_config(tmp, config)
            (tmp / "README.md").write_text(model_card(config))
            if folder.exists():
                shutil.rmtree(folder)
            os.replace(tmp, folder)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        return folder


def model_card(config: dict) -> str:
    fmt = config["format"]
    prov = config.get("provenance", {})
    lines = [
        "---", "library_name: transformers", "tags: [bertjudge, llm-evaluation, judge]", "---", "",
        f"# {prov.get('name', 'bertjudge judge')}", "",
        "A judge of LLM answers: reads (question, candidate answer, reference answer) and returns "
        "P(candidate is correct). Made with [bertjudge](https://github.com/bertjudge/bertjudge).", "",
        "```python", "from bertjudge import Judge", "judge = Judge.load(\"path/to/this/folder\")",
        "judge.score([\"What is 2+3?\"], [\"2+3 = 5. Final answer: 5\"], [\"5\"])", "```", "",
        "## Input format", "",
        f"Order `{fmt['order']}`, {fmt['markers']}, max {fmt['max_length']} tokens, "
        f"{fmt['truncation']} truncation. Threshold {config['threshold']}, temperature {config['temperature']:.4g}"
        f"{', bias {:.4g}'.format(config['bias']) if config.get('bias') else ''}.",
        "", "## Provenance", "",
    ]
    lines += [f"- {key}: {value}" for key, value in prov.items()] or ["- unknown"]
    if config.get("metrics"):
        lines += ["", "## Held-out metrics", "", "| metric | value |", "|---|---|"]
        lines += [f"| {k} | {v:.4f} |" for k, v in config["metrics"].items() if isinstance(v, float)]
    return "\n".join(lines) + "\n"
