"""BleurtJudge on tiny random checkpoints in the bleurt-pytorch format (with and without embedding projection)."""

import json
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml
from lightning.pytorch.callbacks import Callback
from safetensors.torch import save_file

from bertjudge.cli.train import run_lightning_cli
from bertjudge.core.collate import Collator
from bertjudge.core.records import normalize, write_records
from bertjudge.judges import backbones
from bertjudge.judges.bleurt import BleurtJudge, BleurtRegressor, load_checkpoint
from bertjudge.judges.loading import Judge

ROOT = Path(__file__).resolve().parents[1]
MINILM = "sentence-transformers/all-MiniLM-L6-v2"


def make_tiny_bleurt(folder: Path, embedding_size: int | None = 16) -> str:
    """A random BLEURT checkpoint as bleurt-pytorch writes it: bleurt.* and classifier.* weights."""
    vocab = (Path(backbones.resolve(MINILM)) / "vocab.txt").read_text()
    config = {
        "model_type": "bleurt",
        "architectures": ["BleurtForSequenceClassification"],
        "vocab_size": len(vocab.splitlines()),
        "embedding_size": embedding_size,
        "hidden_size": 32,
        "num_hidden_layers": 2,
        "num_attention_heads": 2,
        "intermediate_size": 64,
        "hidden_act": "gelu",
        "max_position_embeddings": 512,
        "type_vocab_size": 2,
        "layer_norm_eps": 1e-12,
        "pad_token_id": 0,
        "hidden_dropout_prob": 0.1,
        "attention_probs_dropout_prob": 0.1,
    }
    torch.manual_seed(0)
    state = BleurtRegressor(config).bleurt_state_dict()
    assert all(k.startswith(("bleurt.", "classifier.")) for k in state)
    if embedding_size:
        assert "bleurt.encoder.embedding_projection.weight" in state
        assert state["bleurt.embeddings.word_embeddings.weight"].shape[1] == embedding_size
    folder.mkdir(parents=True, exist_ok=True)
    save_file(state, folder / "model.safetensors")
    (folder / "config.json").write_text(json.dumps(config))
    (folder / "vocab.txt").write_text(vocab)
    (folder / "tokenizer_config.json").write_text(
        json.dumps({"do_lower_case": True, "tokenizer_class": "BleurtTokenizer"})
    )
    return str(folder)


@pytest.fixture(scope="module")
def tiny_bleurt(tmp_path_factory):
    return make_tiny_bleurt(tmp_path_factory.mktemp("tiny-bleurt"))


def rows(n=16):
    out = []
    for i in range(n):
        ok = i % 2 == 0
        out.append(
            normalize(
                {
                    "task": "toy",
                    "category": "other",
                    "question": f"Who wrote book {i}?",
                    "candidate": f"It was written by {'Ada' if ok else 'Bob'} number {i}.",
                    "reference": f"Ada number {i}",
                    "label": int(ok),
                }
            )
        )
    return out


def test_loader_maps_every_weight_of_the_checkpoint_format(tmp_path):
    """Without an embedding projection, BLEURT is BERT with another prefix: compare with transformers' BERT."""
    from transformers import BertConfig, BertForSequenceClassification

    folder = Path(make_tiny_bleurt(tmp_path / "plain", embedding_size=None))
    model, tokenizer = load_checkpoint(str(folder))
    from safetensors.torch import load_file

    state = {k.replace("bleurt.", "bert.", 1): v for k, v in load_file(folder / "model.safetensors").items()}
    config = json.loads((folder / "config.json").read_text())
    reference = BertForSequenceClassification(
        BertConfig(**{k: v for k, v in config.items() if k != "model_type"}, num_labels=1)
    )
    reference.load_state_dict(state, strict=False)
    batch = tokenizer(["ada lovelace"], ["it was ada"], return_tensors="pt")
    model.eval(), reference.eval()
    with torch.no_grad():
        expected = reference(**batch).logits[:, 0]
        assert torch.allclose(
            model(batch["input_ids"], batch["attention_mask"], batch["token_type_ids"]), expected, atol=1e-6
        )
    # a checkpoint missing a weight is refused
    broken = {k: v for k, v in load_file(folder / "model.safetensors").items() if "pooler" not in k}
    with pytest.raises(ValueError, match="missing"):
        BleurtRegressor(config).load_bleurt_state_dict(broken)


def test_segments_and_projection(tiny_bleurt):
    judge = BleurtJudge(checkpoint=tiny_bleurt).eval()
    batch = Collator(judge.encoder)(rows(2))
    ids = batch["input_ids"][0].tolist()
    text = judge.tokenizer.decode(ids[: batch["attention_mask"][0].sum()])
    assert text.startswith("[CLS] ada number 0 [SEP] it was written by ada")  # reference first, no question
    raw = judge.raw(batch)
    with torch.no_grad():  # the same rows scored with explicit segment ids
        first_sep = ids.index(judge.encoder.sep)
        segments = torch.zeros_like(batch["input_ids"])
        segments[0, first_sep + 1 :] = 1
        segments *= batch["attention_mask"]
        segments[1] = (torch.cumsum(batch["input_ids"][1] == judge.encoder.sep, 0) > 0).long()
        segments[1, batch["input_ids"][1].tolist().index(judge.encoder.sep)] = 0
        segments[1] *= batch["attention_mask"][1]
        assert torch.allclose(raw, judge.model(batch["input_ids"], batch["attention_mask"], segments))
        judge.model.bert.embeddings.projection.weight.zero_()
        assert not torch.allclose(raw, judge.raw(batch))  # the projection is used


def test_threshold_is_chosen_on_validation_data_and_exported(tiny_bleurt, tmp_path):
    judge = BleurtJudge(checkpoint=tiny_bleurt).eval()
    data = rows(16)
    raw = judge.raw_scores(data)
    threshold, fitted_accuracy = judge.fit_threshold(data)
    labels = np.array([r["label"] for r in data])
    accuracy = ((raw >= threshold) == labels).mean()
    assert fitted_accuracy == pytest.approx(accuracy)
    assert accuracy >= max(((raw >= t) == labels).mean() for t in raw)  # no observed cut does better
    scores = judge.score_records(data)
    assert ((scores >= 0.5) == (raw >= threshold)).all()
    folder = judge.export(tmp_path / "judge")
    assert json.loads((folder / "judge.json").read_text())["bleurt_threshold"] == threshold
    assert json.loads((folder / "config.json").read_text())["model_type"] == "bleurt"
    loaded = Judge.load(str(folder))
    np.testing.assert_allclose(loaded.score_records(data), scores, rtol=1e-5, atol=1e-7)


@pytest.mark.usefixtures("run_folder")
def test_validate_stores_the_threshold_and_fit_trains(tiny_bleurt, tmp_path):
    data = tmp_path / "toy.jsonl"
    write_records(data, rows(16))
    common = [
        f"--data.val=[{data}]",
        "--trainer.logger=false",
        "--trainer.enable_progress_bar=false",
        "--trainer.accelerator=cpu",
        "--trainer.devices=1",
        "--trainer.precision=32-true",
        "--data.eval_batch_size=8",
        "--data.batch_size=8",
    ]
    cli = run_lightning_cli(
        [
            "validate",
            "--config=configs/bleurt/bleurt-20-d12.yaml",
            f"--model.init_args.checkpoint={tiny_bleurt}",
            f"--trainer.default_root_dir={tmp_path}",
            *common,
        ]
    )
    assert cli.model.bleurt_threshold == pytest.approx(float(cli.trainer.callback_metrics["val/bleurt_threshold"]))
    assert cli.model.bleurt_threshold != 0.5
    cli = run_lightning_cli(
        [
            "fit",
            "--config=configs/bleurt/bleurt-20-d12.yaml",
            "--trainer.fast_dev_run=true",
            f"--model.init_args.checkpoint={tiny_bleurt}",
            f"--data.train=[{data}]",
            f"--trainer.default_root_dir={tmp_path}",
            *common,
        ]
    )
    assert cli.trainer.global_step == 1 and isinstance(cli.model, BleurtJudge)


def test_the_threshold_is_part_of_the_state_and_keeps_its_precision(tiny_bleurt):
    judge = BleurtJudge(checkpoint=tiny_bleurt, bleurt_threshold=0.123456789)
    state = judge.state_dict()
    assert state["_extra_state"].item() == 0.123456789
    other = BleurtJudge(checkpoint=tiny_bleurt)
    other.load_state_dict(state)
    assert other.bleurt_threshold == 0.123456789
    judge.to(torch.bfloat16)  # weights cast, the threshold not
    assert judge.state_dict()["_extra_state"].dtype == torch.float64 and judge.bleurt_threshold == 0.123456789


class FirstValidationIsBest(Callback):
    """Logs ``val/rank`` (1 at the first validation, 0 after: a checkpoint callback monitoring it in mode max
    keeps the first) and records the BLEURT threshold each validation left on the model."""

    def __init__(self):
        self.validations, self.thresholds = 0, []

    def on_validation_epoch_end(self, trainer, pl_module):
        if not trainer.sanity_checking:
            pl_module.log("val/rank", 1.0 if self.validations == 0 else 0.0)
            self.validations += 1

    def on_validation_end(self, trainer, pl_module):
        if not trainer.sanity_checking:
            self.thresholds.append(pl_module.bleurt_threshold)


@pytest.mark.usefixtures("run_folder")
def test_fit_exports_the_threshold_of_the_best_checkpoint_not_the_last(tiny_bleurt, tmp_path):
    data = tmp_path / "toy.jsonl"
    write_records(data, rows(16))
    checkpoints = tmp_path / "checkpoints"
    override = tmp_path / "two-validations.yaml"
    override.write_text(
        yaml.safe_dump(
            {
                "trainer": {
                    "max_epochs": 2,
                    "callbacks": [
                        {"class_path": "test_bleurt.FirstValidationIsBest"},
                        {
                            "class_path": "lightning.pytorch.callbacks.ModelCheckpoint",
                            "init_args": {
                                "dirpath": str(checkpoints),
                                "filename": "best",
                                "monitor": "val/rank",
                                "mode": "max",
                                "save_top_k": 1,
                            },
                        },
                    ],
                }
            }
        )
    )
    common = [
        f"--model.init_args.checkpoint={tiny_bleurt}",
        f"--data.val=[{data}]",
        f"--data.test=[{data}]",
        "--trainer.logger=false",
        "--trainer.enable_progress_bar=false",
        "--trainer.accelerator=cpu",
        "--trainer.devices=1",
        "--trainer.precision=32-true",
        "--data.eval_batch_size=8",
        "--data.batch_size=8",
        f"--trainer.default_root_dir={tmp_path}",
    ]
    cli = run_lightning_cli(
        [
            "fit",
            "--config=configs/bleurt/bleurt-20-d12.yaml",
            f"--config={override}",
            *common,
            f"--data.train=[{data}]",
            "--model.init_args.lr=1e-3",
            "--test_after_fit=false",
            f"--export_dir={tmp_path / 'judge'}",
        ]
    )
    [recorder] = [cb for cb in cli.trainer.callbacks if isinstance(cb, FirstValidationIsBest)]
    first, last = recorder.thresholds
    assert first != last  # the construction: two validations that chose different thresholds
    best = cli.trainer.checkpoint_callback.best_model_path
    assert Path(best).name == "best.ckpt"
    exported = json.loads((tmp_path / "judge" / "judge.json").read_text())
    assert exported["bleurt_threshold"] == first and cli.model.bleurt_threshold == first
    assert torch.load(best, map_location="cpu", weights_only=False)["state_dict"]["_extra_state"].item() == first
    assert Judge.load(str(tmp_path / "judge")).bleurt_threshold == first
    # validate on the best checkpoint, without refitting: the checkpoint's threshold is the one used
    cli = run_lightning_cli(
        [
            "validate",
            "--config=configs/bleurt/bleurt-20-d12.yaml",
            *common,
            "--model.init_args.fit_threshold_on_val=false",
            f"--ckpt_path={best}",
        ]
    )
    assert cli.model.bleurt_threshold == first
