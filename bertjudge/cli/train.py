"""LightningCLI for judges: ``python -m bertjudge fit|validate|test|predict --config …``.

``class_path`` is the registry: any ``JudgeModule`` subclass is a model. After ``fit`` the best
checkpoint is tested on the test sources (when given) and exported as a judge folder.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from lightning.pytorch.cli import LightningCLI

from bertjudge.data.datamodule import JudgeDataModule
from bertjudge.judges.base import JudgeModule
from bertjudge.train.calibrate import calibrate


class JudgeCLI(LightningCLI):
    def add_arguments_to_parser(self, parser) -> None:
        parser.add_argument("--export_dir", type=str | None, default=None,
                            help="where fit exports the best checkpoint as a judge folder (default: <root dir>/judge)")
        parser.add_argument("--test_after_fit", type=bool, default=True,
                            help="after fit, report the best checkpoint's metrics on data.test (and data.adversarial, "
                                 "data.real_test)")
        parser.add_argument("--calibrate", type=bool, default=True,
                            help="after fit, fit the judge's temperature on data.val (saved in judge.json)")

    def after_fit(self) -> None:
        """Best checkpoint -> temperature on val -> test metrics -> export (rank 0)."""
        trainer, model, data = self.trainer, self.model, self.datamodule
        if trainer.fast_dev_run:
            return
        config = self.config[self.subcommand]
        best = trainer.checkpoint_callback.best_model_path if trainer.checkpoint_callback else ""
        if best:
            model.load_state_dict(_load_state_dict(best))
        calibration = calibrate(model, data.records.get("val", [])) if config.calibrate else {}
        metrics = {}
        if config.test_after_fit and data.sources["test"]:
            results = trainer.test(model, datamodule=data, verbose=False)  # metrics_table prints them
            metrics = {k: float(v) for suite in results for k, v in suite.items()}  # one dict per test suite
        if not trainer.is_global_zero:
            return
        model.provenance.update(
            name=Path(trainer.default_root_dir).name, train_data=data.sources["train"],
            mixture=data.mixture, best_checkpoint=best, recipe=_recipe(model, data, trainer),
            calibration=calibration,
        )
        overall = {k: v for k, v in metrics.items() if k.count("/") == 1}  # test/acc, adversarial/acc: not per group
        folder = Path(config.export_dir or Path(trainer.default_root_dir) / "judge")
        model.export(folder, metrics=overall)
        print(f"exported the judge to {folder}")
        if calibration:
            print(f"temperature {calibration['temperature']:.3f} fitted on {calibration['rows']} val rows: "
                  f"ECE {calibration['ece_before']:.4f} -> {calibration['ece_after']:.4f}")
        if metrics:
            print(metrics_table(metrics))

    def after_test(self) -> None:
        if self.trainer.is_global_zero:
            print(metrics_table({k: float(v) for k, v in self.trainer.callback_metrics.items()}))


def metrics_table(metrics: dict[str, float]) -> str:
    """Evaluation metrics as one row per suite and group (all, category=…, task=…, attack=…)."""
    rows: dict[tuple[str, str], dict[str, float]] = {}
    for key, value in metrics.items():
        suite, name, *group = key.split("/", 2)
        if name in ("acc", "auroc", "ece"):
            rows.setdefault((suite, group[0] if group else "all"), {})[name] = value
    width = max((len(group) for _, group in rows), default=5)
    lines = [f"{'suite':<12} {'group':<{width}}    acc  auroc    ece"]
    for suite, group in sorted(rows, key=lambda r: (r[0] != "test", r[0], r[1] != "all", r[1])):
        values = rows[suite, group]
        cells = [f"{values[m]:.4f}" if m in values else "     -" for m in ("acc", "auroc", "ece")]
        lines.append(f"{suite:<12} {group:<{width}} " + " ".join(cells))
    return "\n".join(lines)


def _load_state_dict(path: str) -> dict:
    import torch

    return torch.load(path, map_location="cpu", weights_only=False)["state_dict"]


def _recipe(model: JudgeModule, data: JudgeDataModule, trainer) -> dict:
    return {
        "lr": model.lr, "warmup_ratio": model.warmup_ratio, "weight_decay": model.weight_decay,
        "batch_size": data.batch_size, "accumulate_grad_batches": trainer.accumulate_grad_batches,
        "devices": trainer.world_size, "precision": str(trainer.precision), "steps": trainer.global_step,
    }


def run_lightning_cli(args: list[str]) -> JudgeCLI:
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    return JudgeCLI(
        JudgeModule, JudgeDataModule, subclass_mode_model=True,
        args=None if args == sys.argv[1:] else args,  # None: LightningCLI reads the real command line
        save_config_kwargs={"overwrite": True}, auto_configure_optimizers=False,
    )
