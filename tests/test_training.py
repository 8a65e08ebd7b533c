"""The trainer end to end with tiny random backbones: datamodule, every config, export, DDP."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml

from bertjudge.cli.train import run_lightning_cli
from bertjudge.core.formats import FormatError, JudgeFormat
from bertjudge.core.records import normalize, write_records
from bertjudge.data.datamodule import LengthGroupedSampler, apply_mixture, approximate_length
from bertjudge.judges.encoder import EncoderJudge
from bertjudge.judges.loading import Judge

ROOT = Path(__file__).resolve().parents[1]
# every config of an encoder judge (other judges' configs are dev-run in their own test files)
CONFIGS = sorted(
    p.relative_to(ROOT).as_posix() for p in (ROOT / "configs").rglob("*.yaml") if "EncoderJudge" in p.read_text()
)
SMALL_DATA = [
    "--data.train=[embedded:train?n=48]",
    "--data.val=[embedded:val?n=16]",
    "--data.test=[embedded:test?n=16]",
]


def toy_records(n=40, seed=0):
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        a, b = map(int, rng.integers(1, 50, 2))
        ok = i % 2 == 0
        rows.append(
            normalize(
                {
                    "task": ["t1", "t2"][i % 3 == 0],
                    "category": "open_math",
                    "question": f"What is {a}+{b}?",
                    "candidate": f"{'so ' * (i % 7)}Final answer: {a + b if ok else a + b + 1}",
                    "reference": str(a + b),
                    "label": int(ok),
                    "candidate_model": ["m1", "m2"][i % 4 == 0],
                }
            )
        )
    return rows


def backbone_for(config_path, tiny_backbones):
    backbone = yaml.safe_load((ROOT / config_path).read_text())["model"]["init_args"]["backbone"].lower()
    return tiny_backbones[next((kind for kind in ("eurobert", "modernbert", "mpnet") if kind in backbone), "bert")]


def teacher_arguments(config_path, backbone: str, folder: Path) -> list[str]:
    """For a config that distils from a teacher (a trained judge's folder, not in a fresh checkout): a tiny judge
    of the config's format exported to ``folder``, made the backbone and the teacher, and one layer kept."""
    init_args = yaml.safe_load((ROOT / config_path).read_text())["model"]["init_args"]
    if "teacher" not in init_args:
        return []
    teacher = EncoderJudge(backbone=backbone, format=JudgeFormat(**init_args["format"])).export(folder)
    return [
        f"--model.init_args.backbone={teacher}",
        f"--model.init_args.teacher={teacher}",
        "--model.init_args.layers=[1]",
    ]


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.usefixtures("run_folder")
def test_fast_dev_run_of_every_config(config, tiny_backbones, tmp_path):
    backbone = backbone_for(config, tiny_backbones)
    cli = run_lightning_cli(
        [
            "fit",
            f"--config={config}",
            "--trainer.fast_dev_run=true",
            "--trainer.accelerator=cpu",
            "--trainer.devices=1",
            "--trainer.strategy=auto",
            "--trainer.precision=32-true",
            f"--trainer.default_root_dir={tmp_path}",
            f"--model.init_args.backbone={backbone}",
            *teacher_arguments(config, backbone, tmp_path / "teacher"),
            *SMALL_DATA,
        ]
    )
    assert cli.trainer.global_step == 1
    assert isinstance(cli.model, EncoderJudge)
    for callback in cli.trainer.checkpoint_callbacks:  # the config's runs/… folder, inside the test's own folder
        assert Path(callback.dirpath).resolve().is_relative_to(tmp_path.resolve())


def test_test_reports_the_adversarial_suite_apart_and_per_attack(tiny_backbone, tmp_path, capsys):
    from bertjudge.data import corpus

    suite = "embedded:adversarial?n=56"
    cli = run_lightning_cli(
        [
            "test",
            "--model=bertjudge.judges.encoder.EncoderJudge",
            f"--model.backbone={tiny_backbone}",
            "--data.test=[embedded:test?n=16]",
            f"--data.adversarial=[{suite}]",
            "--trainer.logger=false",
            "--trainer.enable_progress_bar=false",
            f"--trainer.default_root_dir={tmp_path}",
        ]
    )
    logged = {k: float(v) for k, v in cli.trainer.callback_metrics.items()}
    assert "test/acc" in logged and not any("dataloader_idx" in k for k in logged)
    assert not any(k.startswith("test/") and "attack=" in k for k in logged)  # the held-out split has none
    # every attack's pass rate, recomputed from the judge's own scores on the suite's rows
    rows = corpus.generate("adversarial", 56)
    correct = (cli.model.score_records(rows) >= 0.5) == np.array([r["label"] for r in rows])
    attacks = sorted({r["meta"]["attack"] for r in rows})
    assert attacks == sorted(corpus.ATTACKS)
    for attack in attacks:
        mine = [ok for ok, r in zip(correct, rows) if r["meta"]["attack"] == attack]
        assert logged[f"adversarial/acc/attack={attack}"] == pytest.approx(np.mean(mine), abs=1e-6)
    assert logged["adversarial/acc"] == pytest.approx(correct.mean(), abs=1e-6)
    # and a table of them is printed: one row per suite and group
    printed = [line.split() for line in capsys.readouterr().out.splitlines()]
    row = next(cells for cells in printed if cells[:2] == ["adversarial", "attack=wrong_unit"])
    assert float(row[2]) == pytest.approx(logged["adversarial/acc/attack=wrong_unit"], abs=1e-4)
    assert ["test", "all"] in [cells[:2] for cells in printed]


def test_trainer_configs_parse():
    for name in ("cpu", "ddp"):
        config = yaml.safe_load((ROOT / f"configs/trainer/{name}.yaml").read_text())
        assert set(config) == {"trainer"} and config["trainer"]["max_epochs"] == 1
    assert yaml.safe_load((ROOT / "configs/trainer/ddp.yaml").read_text())["trainer"]["strategy"] == "ddp"


def test_fit_exports_a_judge_that_scores_like_the_trained_module(tiny_backbone, tmp_path):
    data = tmp_path / "toy.jsonl"
    write_records(data, toy_records())
    cli = run_lightning_cli(
        [
            "fit",
            "--model=bertjudge.judges.encoder.EncoderJudge",
            f"--model.backbone={tiny_backbone}",
            "--model.format.order=QCAR",
            "--model.lr=1e-3",
            "--model.effective_batch_size=16",
            f"--data.train=[{data}]",
            f"--data.val=[{data}]",
            f"--data.test=[{data}]",
            "--data.batch_size=8",
            "--data.adversarial=[embedded:adversarial?n=28]",
            "--trainer.max_epochs=2",
            "--trainer.logger=false",
            "--trainer.enable_progress_bar=false",
            f"--trainer.default_root_dir={tmp_path / 'run'}",
        ]
    )
    assert cli.trainer.accumulate_grad_batches == 2  # effective batch 16 from device batch 8
    folder = tmp_path / "run" / "judge"
    config = json.loads((folder / "judge.json").read_text())
    assert config["format"]["order"] == "QCAR" and 0 <= config["metrics"]["test/acc"] <= 1
    metrics = config["metrics"]
    assert 0 <= metrics["adversarial/acc"] <= 1 and "adversarial/acc/attack=hedge" not in metrics
    calibration = config["provenance"]["calibration"]
    assert calibration["rows"] == 40 and config["temperature"] == calibration["temperature"] != 1.0
    assert (folder / "model.safetensors").is_file() and (folder / "README.md").is_file()

    rows = toy_records(12, seed=1)
    judge = Judge.load(str(folder))
    expected = cli.model.score_records(rows)
    np.testing.assert_allclose(judge.score_records(rows), expected, rtol=1e-5, atol=1e-6)
    # the same rows through the list API, and batch size does not change scores
    by_lists = judge.score(
        [r["question"] for r in rows], [r["candidate"] for r in rows], [r["references"] for r in rows], batch_size=5
    )
    np.testing.assert_allclose(by_lists, expected, rtol=1e-5, atol=1e-6)
    with pytest.raises(FormatError, match="format mismatch"):
        Judge.load(str(folder), format=JudgeFormat(order="QCR"))
    # the export is a plain Hugging Face folder
    from transformers import AutoModelForSequenceClassification

    assert AutoModelForSequenceClassification.from_pretrained(folder).config.num_labels == 1


def test_dropout_is_active_in_training(tiny_backbone):
    judge = EncoderJudge(backbone=tiny_backbone)
    dropouts = [m for m in judge.model.modules() if isinstance(m, torch.nn.Dropout)]
    assert dropouts and all(m.training for m in dropouts)
    judge.eval()
    judge.on_train_start()
    assert all(m.training for m in dropouts)


def test_attention_kernel_and_dropout_reach_the_backbone(tiny_backbone):
    # the quickstart trains with eager attention and no dropout; the same weights score the same either way
    fast = EncoderJudge(backbone=tiny_backbone, attn_implementation="eager", dropout=0.0)
    assert fast.model.config._attn_implementation == "eager"
    assert fast.model.config.hidden_dropout_prob == fast.model.config.attention_probs_dropout_prob == 0.0
    default = EncoderJudge(backbone=tiny_backbone).eval()
    default.model.load_state_dict(fast.model.state_dict())
    batch = {"input_ids": torch.tensor([[101, 2000, 2001, 102, 0]]), "attention_mask": torch.tensor([[1, 1, 1, 1, 0]])}
    assert default.model.config._attn_implementation != "eager"
    torch.testing.assert_close(fast.eval()(batch), default(batch), rtol=1e-4, atol=1e-5)


def test_two_logit_checkpoints_score_the_logit_difference(tiny_backbone):
    judge = EncoderJudge(backbone=tiny_backbone, num_labels=2).eval()
    batch = {"input_ids": torch.tensor([[101, 2000, 102]]), "attention_mask": torch.ones(1, 3, dtype=torch.long)}
    raw = judge.model(**batch).logits
    assert torch.allclose(judge(batch), raw[:, 1] - raw[:, 0])


def test_mixture_counts_per_cell_and_refuses_too_many():
    rows = toy_records(80)
    mixed = apply_mixture(rows, {"t1": {"m1": 10, "m2": 5}, "t2": {"*": 7}}, seed=0)
    cells = [(r["task"], r["candidate_model"]) for r in mixed]
    assert cells.count(("t1", "m1")) == 10 and cells.count(("t1", "m2")) == 5
    assert sum(t == "t2" for t, _ in cells) == 7
    assert apply_mixture(rows, {"*": {"*": 20}}, seed=3) == apply_mixture(rows, {"*": {"*": 20}}, seed=3)
    with pytest.raises(ValueError, match="asks 999 rows"):
        apply_mixture(rows, {"t1": {"m1": 999}})
    with pytest.raises(ValueError, match="overlap"):
        apply_mixture(rows, {"*": {"*": 5}, "t1": {"*": 5}}, seed=1)


def test_datamodule_buckets_eval_rows_by_length_and_pads_dynamically(tiny_backbone, tmp_path):
    from bertjudge.core.collate import Collator
    from bertjudge.data.datamodule import JudgeDataModule

    data = tmp_path / "toy.jsonl"
    write_records(data, toy_records(30))
    dm = JudgeDataModule(train=[str(data)], val=[str(data)], eval_batch_size=8)
    dm.setup("fit")
    lengths = [approximate_length(r) for r in dm.records["val"]]
    assert lengths == sorted(lengths) and dm.task_names == ["t1", "t2"]
    judge = EncoderJudge(backbone=tiny_backbone)
    batch = Collator(judge.encoder, dm.task_names)(dm.records["val"][:8])
    assert batch["input_ids"].shape[1] == batch["attention_mask"].sum(1).max()  # padded to the longest row
    assert set(batch["task"].tolist()) <= {0, 1}


def test_unlabelled_training_rows_are_refused(tmp_path):
    from bertjudge.data.datamodule import JudgeDataModule

    data = tmp_path / "u.jsonl"
    write_records(data, [normalize({"candidate": "a", "reference": "a"})])
    with pytest.raises(ValueError, match="have no label"):
        JudgeDataModule(train=[str(data)]).setup("fit")


@pytest.mark.slow
def test_two_process_ddp_on_cpu(tiny_backbone, tmp_path, run_folder):
    """Two processes with the gloo backend, through the real command line (as a user runs it)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [
        sys.executable,
        "-m",
        "bertjudge",
        "fit",
        "--config=configs/trainer/ddp.yaml",
        "--config=configs/encoder/minilm-l6.yaml",
        "--trainer.accelerator=cpu",
        "--trainer.devices=2",
        "--trainer.precision=32-true",
        "--trainer.logger=false",
        "--trainer.max_steps=3",
        "--trainer.enable_progress_bar=false",
        f"--trainer.default_root_dir={tmp_path}",
        f"--model.init_args.backbone={tiny_backbone}",
        "--data.batch_size=4",
        *SMALL_DATA,
    ]
    done = subprocess.run(cmd, cwd=run_folder, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "world_size=2" in done.stderr or "distributed_backend=gloo" in done.stderr
    assert (tmp_path / "judge" / "judge.json").is_file()


def test_length_grouped_sampler_is_a_shuffle_with_little_padding():
    lengths = np.random.default_rng(0).integers(10, 500, 1000).tolist()
    sampler = LengthGroupedSampler(lengths, batch_size=10, seed=0, group=20)
    first, second = list(sampler), list(sampler)
    assert sorted(first) == list(range(1000)) and first != second  # every row once, a new order each pass
    assert list(LengthGroupedSampler(lengths, 10, seed=0, group=20)) == first  # seeded

    def width(order):
        return np.mean([max(lengths[i] for i in order[k : k + 10]) for k in range(0, 1000, 10)])

    random_order = np.random.default_rng(1).permutation(1000).tolist()
    assert width(first) < 0.8 * width(random_order)


def test_length_curriculum_serves_the_shortest_rows_first_once():
    lengths = np.random.default_rng(0).integers(10, 500, 1000).tolist()
    sampler = LengthGroupedSampler(lengths, batch_size=10, seed=0, easy_first=0.2)
    first, second = list(sampler), list(sampler)
    assert sorted(first) == list(range(1000))
    shortest = set(np.argsort(lengths, kind="stable")[:200].tolist())
    assert set(first[:200]) == shortest  # the curriculum, in the first pass
    assert len(set(second[:200]) & shortest) < 100  # later passes are plain shuffles
