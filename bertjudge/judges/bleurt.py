"""``BleurtJudge``: a BLEURT checkpoint scoring the candidate against the reference, thresholded.

Reads the PyTorch BLEURT checkpoints of the ``bleurt-pytorch`` package (``lucadiliello/BLEURT-20``,
``-D12``, ``bleurt-base-128``…) without that package, which does not import with transformers 5: a
BERT encoder (with an embedding projection when ``embedding_size`` is set, as in BLEURT-20), the
pooler, and a one-output regression head. Input: ``[CLS] reference [SEP] candidate [SEP]`` with
segment ids; the question is not read.

The raw BLEURT score ``s`` becomes P(correct) = sigmoid((s − bleurt_threshold) / temperature);
``bleurt_threshold`` is chosen on validation data (``fit_threshold``, or at each validation epoch)
and stored in ``judge.json``. It is part of the module's state (``get_extra_state``), so a checkpoint
carries the threshold fitted with its weights, and loading the best checkpoint after ``fit`` restores
that threshold, not the last validation's. Fine-tuning (BCE on that logit) is optional.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import torch
from torch import nn
from transformers import BertConfig, BertModel
from transformers.models.bert.modeling_bert import BertEmbeddings

from bertjudge.core.formats import Encoder, JudgeFormat
from bertjudge.core.judge_file import JudgeFileError
from bertjudge.core.stats import best_threshold
from bertjudge.judges.base import WEIGHTS, JudgeModule

BERT_KEYS = (
    "vocab_size",
    "hidden_size",
    "num_hidden_layers",
    "num_attention_heads",
    "intermediate_size",
    "hidden_act",
    "hidden_dropout_prob",
    "attention_probs_dropout_prob",
    "max_position_embeddings",
    "type_vocab_size",
    "layer_norm_eps",
    "pad_token_id",
)


class ProjectedEmbeddings(nn.Module):
    """BERT embeddings of width ``embedding_size``, projected to the encoder's width (BLEURT-20)."""

    def __init__(self, config: BertConfig, embedding_size: int):
        super().__init__()
        self.inner = BertEmbeddings(BertConfig(**{**config.to_dict(), "hidden_size": embedding_size}))
        self.projection = nn.Linear(embedding_size, config.hidden_size)

    def forward(self, **kwargs) -> torch.Tensor:
        return self.projection(self.inner(**kwargs))


class BleurtRegressor(nn.Module):
    """The BLEURT network: encoder, pooler, one regression output."""

    def __init__(self, bleurt_config: dict):
        super().__init__()
        self.bleurt_config = dict(bleurt_config)
        config = BertConfig(**{k: bleurt_config[k] for k in BERT_KEYS if k in bleurt_config})
        self.bert = BertModel(config)
        size = bleurt_config.get("embedding_size")
        if size and size != config.hidden_size:
            self.bert.embeddings = ProjectedEmbeddings(config, size)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)
        self.classifier = nn.Linear(config.hidden_size, 1)

    def forward(self, input_ids, attention_mask, token_type_ids) -> torch.Tensor:
        pooled = self.bert(
            input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
        ).pooler_output
        return self.classifier(self.dropout(pooled))[:, 0]

    # the checkpoint's names <-> ours
    def _renames(self) -> list[tuple[str, str]]:
        pairs = (
            [
                ("bleurt.encoder.embedding_projection.", "bert.embeddings.projection."),
                ("bleurt.embeddings.", "bert.embeddings.inner."),
            ]
            if isinstance(self.bert.embeddings, ProjectedEmbeddings)
            else []
        )
        return pairs + [("bleurt.", "bert.")]

    def load_bleurt_state_dict(self, state: dict) -> None:
        renamed = {}
        for key, value in state.items():
            if key.endswith(("position_ids", "token_type_ids")):
                continue  # buffers
            for theirs, ours in self._renames():
                if key.startswith(theirs):
                    key = ours + key[len(theirs) :]
                    break
            renamed[key] = value
        ours = {k for k in self.state_dict() if not k.endswith(("position_ids", "token_type_ids"))}
        missing, unexpected = ours - set(renamed), set(renamed) - ours
        if missing or unexpected:
            raise ValueError(
                f"not a BLEURT checkpoint of this shape: missing {sorted(missing)[:5]}, "
                f"unexpected {sorted(unexpected)[:5]}"
            )
        self.load_state_dict(renamed, strict=False)

    def bleurt_state_dict(self) -> dict:
        out = {}
        for key, value in self.state_dict().items():
            if key.endswith(("position_ids", "token_type_ids")):
                continue
            for theirs, ours in self._renames():
                if key.startswith(ours):
                    key = theirs + key[len(ours) :]
                    break
            out[key] = value.contiguous()
        return out


def load_checkpoint(path: str) -> tuple[BleurtRegressor, object]:
    """The network and tokenizer of a BLEURT checkpoint folder (or hub id) in the bleurt-pytorch format."""
    folder = Path(path)
    if not folder.is_dir():
        from huggingface_hub import snapshot_download

        folder = Path(snapshot_download(path))
    config = json.loads((folder / "config.json").read_text())
    if config.get("model_type") != "bleurt":
        raise ValueError(f"{folder}: config.json has model_type {config.get('model_type')!r}, not 'bleurt'")
    model = BleurtRegressor(config)
    if (folder / "model.safetensors").is_file():
        from safetensors.torch import load_file

        state = load_file(folder / "model.safetensors")
    else:
        state = torch.load(folder / "pytorch_model.bin", map_location="cpu", weights_only=True)
    model.load_bleurt_state_dict(state)
    return model, load_tokenizer(folder)


def load_tokenizer(folder: Path):
    """WordPiece (``vocab.txt``: BLEURT, bleurt-base…) or SentencePiece (``spm.model``: BLEURT-20)."""
    settings = (
        json.loads((folder / "tokenizer_config.json").read_text())
        if (folder / "tokenizer_config.json").is_file()
        else {}
    )
    lower = settings.get("do_lower_case", (folder / "vocab.txt").is_file())  # BLEURT-20 (spm) is cased
    if (folder / "vocab.txt").is_file():
        from transformers import BertTokenizer

        words = (folder / "vocab.txt").read_text(encoding="utf-8").splitlines()
        tokenizer = BertTokenizer(vocab={w: i for i, w in enumerate(words)}, do_lower_case=lower)
        tokenizer.source_files = [folder / "vocab.txt"]
        return tokenizer
    if (folder / "spm.model").is_file():  # BleurtSPTokenizer is a DebertaV2Tokenizer with BERT's specials
        from transformers import DebertaV2Tokenizer

        tokenizer = DebertaV2Tokenizer(
            vocab_file=str(folder / "spm.model"),
            do_lower_case=lower,
            bos_token="[CLS]",
            eos_token="[SEP]",
            unk_token="[UNK]",
            sep_token="[SEP]",
            pad_token="[PAD]",
            cls_token="[CLS]",
            mask_token="[MASK]",
        )
        tokenizer.source_files = [folder / "spm.model"]
        return tokenizer
    raise FileNotFoundError(f"{folder}: no vocab.txt or spm.model for the BLEURT tokenizer")


class BleurtJudge(JudgeModule):
    """BLEURT as a judge (the paper's learned-metric baseline).

    Args:
        checkpoint: a folder (or hub id) in the bleurt-pytorch format, e.g. ``lucadiliello/BLEURT-20-D12``.
        format: order ``RC`` (reference, then candidate; the question is not read) and truncation.
        bleurt_threshold: the raw BLEURT score at which P(correct) = 0.5.
        fit_threshold_on_val: at the end of each validation epoch, set ``bleurt_threshold`` to the
            value that maximizes validation accuracy (logged as ``val/bleurt_threshold``).
        temperature: the scale of raw scores in the sigmoid (raw BLEURT scores span about one unit).
        **kwargs: the recipe arguments of ``JudgeModule`` (for optional fine-tuning).
    """

    judge_kind = "bleurt"

    def __init__(
        self,
        checkpoint: str = "lucadiliello/BLEURT-20-D12",
        format: JudgeFormat | None = None,
        bleurt_threshold: float = 0.5,
        fit_threshold_on_val: bool = True,
        lr: float = 2e-5,
        warmup_ratio: float = 0.05,
        weight_decay: float = 0.01,
        effective_batch_size: int | None = 32,
        temperature: float = 0.1,
        bias: float = 0.0,
    ):
        format = format or JudgeFormat(order="RC", max_length=512)
        super().__init__(format, lr, warmup_ratio, weight_decay, effective_batch_size, 0.5, temperature, bias)
        if "Q" in self.format.order or self.format.markers != "separators":
            raise ValueError("BLEURT reads reference and candidate with separators: use order RC (or CR)")
        self.save_hyperparameters(ignore=["format"])
        self.hparams["format"] = self.format.to_dict()
        self.model, self.tokenizer = load_checkpoint(checkpoint)
        self.model.train()
        self.encoder = Encoder(self.tokenizer, self.format)
        self.bleurt_threshold = bleurt_threshold
        self.provenance = {"checkpoint": checkpoint}
        self._val_raw: list[torch.Tensor] = []
        self._val_labels: list[torch.Tensor] = []

    def raw(self, batch: dict) -> torch.Tensor:
        """The BLEURT score of each row."""
        ids = batch["input_ids"]
        is_sep = (ids == self.encoder.sep).long()
        segment = ((is_sep.cumsum(1) - is_sep) > 0).long()  # 1 after the first [SEP]
        return self.model(ids, batch["attention_mask"], segment * batch["attention_mask"])

    def forward(self, batch: dict) -> torch.Tensor:
        return self.raw(batch) - self.bleurt_threshold

    def _precision_key(self) -> tuple:
        """``JudgeModule._precision_key`` and ``bleurt_threshold``, which the logits are read against."""
        return (*super()._precision_key(), float(self.bleurt_threshold))

    def raw_scores(self, records: list[dict], batch_size: int = 32) -> np.ndarray:
        return self.logits_records(records, batch_size) + self.bleurt_threshold

    def fit_threshold(
        self, records: list[dict], batch_size: int = 32, scores: np.ndarray | None = None
    ) -> tuple[float, float]:
        """Set ``bleurt_threshold`` (the raw BLEURT score read as P(correct) = 0.5; the verdict ``threshold`` stays
        0.5) to the raw score that maximizes accuracy on labelled ``records``; (that raw score, the accuracy).
        ``scores`` are not used: the fit is on raw scores, not on P(correct)."""
        raw = self.raw_scores(records, batch_size)
        self.bleurt_threshold, accuracy = best_threshold(raw, [r["label"] for r in records])
        return self.bleurt_threshold, accuracy

    def get_extra_state(self) -> torch.Tensor:
        """The threshold, saved in ``state_dict`` (float64, not cast with the weights' dtype)."""
        return torch.tensor(float(self.bleurt_threshold), dtype=torch.float64)

    def set_extra_state(self, state) -> None:
        self.bleurt_threshold = float(state)

    def validation_step(self, batch: dict, batch_idx: int) -> None:
        super().validation_step(batch, batch_idx)
        if self.hparams.fit_threshold_on_val:
            self._val_raw.append(self.raw(batch).detach().float())
            self._val_labels.append(batch["labels"])

    def on_validation_epoch_end(self) -> None:
        super().on_validation_epoch_end()
        if self._val_raw and not self.trainer.sanity_checking:
            raw = self.all_gather(torch.cat(self._val_raw)).flatten().cpu().numpy()
            labels = self.all_gather(torch.cat(self._val_labels)).flatten().cpu().numpy()
            self.bleurt_threshold = best_threshold(raw, labels)[0]
            self.log("val/bleurt_threshold", self.bleurt_threshold, rank_zero_only=True)
        self._val_raw, self._val_labels = [], []

    # --- export ----------------------------------------------------------------------------------
    def save_weights(self, folder: Path) -> None:
        """The bleurt-pytorch format: ``config.json`` (model_type bleurt), safetensors, tokenizer files."""
        from safetensors.torch import save_file

        save_file(self.model.bleurt_state_dict(), folder / "model.safetensors")
        (folder / "config.json").write_text(json.dumps(self.model.bleurt_config, indent=2) + "\n")
        for source in self.tokenizer.source_files:  # the checkpoint's own tokenizer files, as it shipped them
            shutil.copyfile(source, folder / source.name)
        (folder / "tokenizer_config.json").write_text(
            json.dumps({"do_lower_case": getattr(self.tokenizer, "do_lower_case", False)}) + "\n"
        )

    def config(self) -> dict:
        return {**super().config(), "bleurt_threshold": self.bleurt_threshold}

    folder_check = {"tokenizer_files": (), "vocabularies": ("vocab.txt", "spm.model")}

    @classmethod
    def from_config(cls, folder: Path, config: dict, saved: JudgeFormat, model_config: dict) -> BleurtJudge:
        """A BLEURT folder: judge.json with ``bleurt_threshold``, config.json of model_type bleurt."""
        threshold = config.get("bleurt_threshold")
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float)):
            raise JudgeFileError(f"{folder / 'judge.json'}: 'bleurt_threshold' must be a number, got {threshold!r}")
        if model_config.get("model_type") != "bleurt":
            raise JudgeFileError(
                f"{folder / 'config.json'}: model_type {model_config.get('model_type')!r}, not 'bleurt'"
            )
        try:
            return cls(
                checkpoint=str(folder),
                format=saved,
                bleurt_threshold=threshold,
                temperature=config["temperature"],
                bias=config.get("bias", 0.0),
            )
        except ValueError as err:
            if "not a BLEURT checkpoint" not in str(err):
                raise
            raise JudgeFileError(f"{folder / WEIGHTS}: {err}") from None

    def check_built(self, folder: Path, model_config: dict) -> None:
        vocab = model_config.get("vocab_size")
        if isinstance(vocab, int) and len(self.tokenizer) > vocab:
            raise JudgeFileError(
                f"{folder}: the tokenizer has {len(self.tokenizer)} tokens, more than the {vocab} "
                f"embeddings of {WEIGHTS}; the tokenizer files and the weights do not belong together"
            )
