"""A judge distilled from a trained judge's logits into fewer of its layers (EncoderJudge teacher/layers)."""

import json
import shutil

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from safetensors import safe_open
from transformers import AutoTokenizer

from bertjudge.cli.train import run_lightning_cli
from bertjudge.core.formats import JudgeFormat
from bertjudge.core.records import write_records
from bertjudge.data.datamodule import Collator
from bertjudge.judges.encoder import EncoderJudge, keep_layers
from bertjudge.judges.loading import Judge
from tests.test_training import toy_records

FORMAT = JudgeFormat(order="QCAR", max_length=64)


@pytest.fixture(scope="module")
def teacher(tiny_backbone, tmp_path_factory):
    """An exported 2-layer judge whose scores differ from row to row."""
    judge = EncoderJudge(backbone=tiny_backbone, format=FORMAT)
    torch.manual_seed(3)
    with torch.no_grad():
        for weight in judge.model.parameters():
            if weight.ndim == 2:
                weight.normal_(std=0.3)
    return judge.eval().export(tmp_path_factory.mktemp("teacher") / "judge")


def student(teacher, **kwargs) -> EncoderJudge:
    return EncoderJudge(backbone=str(teacher), teacher=str(teacher), format=FORMAT, **kwargs)


def fp32_scores(judge, rows) -> np.ndarray:
    judge.set_precision("fp32")
    return judge.score_records(rows)


def test_kept_layers_are_the_teachers_own(teacher):
    source = EncoderJudge.from_export(teacher)
    judge = student(teacher, layers=[1])
    assert judge.model.config.num_hidden_layers == 1 and len(judge.model.bert.encoder.layer) == 1
    for (name, kept), (_, original) in zip(
        judge.model.bert.encoder.layer[0].state_dict().items(), source.model.bert.encoder.layer[1].state_dict().items()
    ):
        assert torch.equal(kept, original), name
    assert judge.provenance["layers"] == [1] and judge.provenance["distilled_from"] == str(teacher)


@pytest.mark.parametrize("layers", [[], [0, 0], [2], [-1]])
def test_layers_must_be_distinct_indices_of_the_backbone(teacher, layers):
    with pytest.raises(ValueError, match="distinct indices"):
        keep_layers(EncoderJudge.from_export(teacher).model, layers)


def test_the_loss_is_bce_against_the_teachers_probability(teacher):
    judge = student(teacher, layers=[0])
    batch = Collator(judge.encoder)(toy_records(8))
    logits = judge.record_logits(batch)
    with torch.no_grad():
        target = torch.sigmoid(judge._teacher[0].record_logits(batch))
    expected = F.binary_cross_entropy_with_logits(logits, target)
    torch.testing.assert_close(judge.distillation_loss(logits, batch), expected)
    # the student is not its teacher: the targets are not the labels, and the loss is not the labels' loss
    assert not torch.equal((target >= 0.5).float(), batch["labels"])
    assert not torch.isclose(expected, F.binary_cross_entropy_with_logits(logits, batch["labels"]))


def test_weight_mixes_labels_in_and_temperature_scales(teacher):
    judge = student(teacher, layers=[0], distill_weight=0.25, distill_temperature=2.0)
    batch = Collator(judge.encoder)(toy_records(8))
    logits = judge.record_logits(batch)
    with torch.no_grad():
        target = torch.sigmoid(judge._teacher[0].record_logits(batch) / 2.0)
    soft = F.binary_cross_entropy_with_logits(logits / 2.0, target) * 4.0
    hard = F.binary_cross_entropy_with_logits(logits, batch["labels"])
    torch.testing.assert_close(judge.distillation_loss(logits, batch), 0.25 * soft + 0.75 * hard)


def test_a_full_depth_student_of_its_own_teacher_starts_at_the_teachers_scores(teacher):
    judge = student(teacher).eval()
    rows = toy_records(10)
    np.testing.assert_allclose(
        fp32_scores(judge, rows), fp32_scores(EncoderJudge.from_export(teacher), rows), rtol=1e-5, atol=1e-6
    )


def test_teacher_must_read_what_the_student_reads(teacher, tiny_backbone, tmp_path):
    with pytest.raises(ValueError, match="format"):
        EncoderJudge(backbone=str(teacher), teacher=str(teacher), format=JudgeFormat(order="QCR"))
    other = tmp_path / "other"  # the tiny backbone with one more word in its tokenizer
    shutil.copytree(tiny_backbone, other)
    tokenizer = AutoTokenizer.from_pretrained(other)
    tokenizer.add_tokens(["zzqxword"])
    tokenizer.save_pretrained(other)
    with pytest.raises(ValueError, match="tokenizer"):
        EncoderJudge(backbone=str(other), teacher=str(teacher), format=FORMAT)
    with pytest.raises(ValueError, match="error-type head"):
        student(teacher, error_head=True)
    with pytest.raises(ValueError, match="distill_weight"):
        student(teacher, distill_weight=1.5)


def test_fit_exports_a_shallower_judge_without_its_teacher(teacher, tmp_path):
    data = tmp_path / "toy.jsonl"
    write_records(data, toy_records())
    cli = run_lightning_cli(
        [
            "fit",
            "--model=bertjudge.judges.encoder.EncoderJudge",
            f"--model.backbone={teacher}",
            f"--model.teacher={teacher}",
            "--model.layers=[1]",
            "--model.format.order=QCAR",
            "--model.format.max_length=64",
            "--model.lr=1e-3",
            f"--data.train=[{data}]",
            f"--data.val=[{data}]",
            f"--data.test=[{data}]",
            "--data.batch_size=8",
            "--trainer.max_epochs=1",
            "--trainer.logger=false",
            "--trainer.enable_progress_bar=false",
            f"--trainer.default_root_dir={tmp_path / 'run'}",
        ]
    )
    assert cli.trainer.global_step > 0
    folder = tmp_path / "run" / "judge"
    config = json.loads((folder / "config.json").read_text())
    assert config["num_hidden_layers"] == 1
    with safe_open(folder / "model.safetensors", "pt") as weights:
        names = list(weights.keys())
    assert not any("layer.1." in name for name in names) and any("layer.0." in name for name in names)
    provenance = json.loads((folder / "judge.json").read_text())["provenance"]
    assert provenance["distilled_from"] == str(teacher) and provenance["layers"] == [1]
    loaded = Judge.load(str(folder))
    rows = toy_records(12, seed=1)
    np.testing.assert_allclose(fp32_scores(loaded, rows), fp32_scores(cli.model, rows), rtol=1e-5, atol=1e-6)
