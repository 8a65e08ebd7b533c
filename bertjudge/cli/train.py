"""LightningCLI for judges: ``python -m bertjudge fit|validate|test|predict --config …``.

``class_path`` is the registry: any ``JudgeModule`` subclass is a model. After ``fit`` the best
checkpoint is tested on the test sources (when given) and exported as a judge folder.

An interrupted ``fit`` (Ctrl-C, ``kill -9``, a lost machine) resumes when the same command is run again:
where a ``ModelCheckpoint`` keeps ``last.ckpt`` (``save_last: true``), ``fit`` continues from it —
weights, optimizer, schedule, and the epoch's batches not yet trained on — provided the configuration
and the data are those of the interrupted run (``ResumeGuard``); ``--restart true`` starts over.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
from argparse import ArgumentError
from pathlib import Path

from lightning.pytorch.callbacks import Callback
from lightning.pytorch.cli import LightningCLI

from bertjudge.cli.common import CommandError
from bertjudge.core.records import RecordError, row_hash
from bertjudge.data.datamodule import JudgeDataModule
from bertjudge.judges.base import JudgeModule
from bertjudge.train.calibrate import calibrate
from bertjudge.train.wandb_artifact import artifact_name, log_judge_artifact


class ResumeGuard(Callback):
    """Keeps in every checkpoint what the run depends on (its configuration and the rows of its data), so
    that ``fit`` resumes only the run that wrote ``last.ckpt``; ``enforce`` is set when resuming."""

    def __init__(self, fingerprint: str, checkpoint: Path | None = None):
        self.fingerprint, self.checkpoint, self.enforce = fingerprint, checkpoint, False

    def state_dict(self) -> dict:
        return {"fingerprint": self.fingerprint}

    def load_state_dict(self, state_dict: dict) -> None:
        if self.enforce and state_dict.get("fingerprint") != self.fingerprint:
            raise CommandError(
                f"{self.checkpoint}: the last checkpoint of a run with another configuration or other data; "
                "rerun with --restart true to start over (or --ckpt_path to continue from it on purpose)",
                usage=True,
            )


NOT_THE_RUN = ("ckpt_path", "restart", "config", "export_dir", "test_after_fit")  # options a resume may change


def run_fingerprint(config, records: dict[str, list[dict]]) -> str:
    """sha256 of a ``fit``'s configuration (but ``NOT_THE_RUN``) and of every train and val row."""
    options = {k: v for k, v in config.as_dict().items() if k not in NOT_THE_RUN}
    digest = hashlib.sha256(json.dumps(options, sort_keys=True, default=str).encode())
    for split in ("train", "val"):
        for rec in records.get(split, []):
            digest.update(row_hash(rec).encode())
    return digest.hexdigest()


def last_checkpoint(trainer) -> Path | None:
    """The ``last.ckpt`` that a ``ModelCheckpoint`` with ``save_last`` and a ``dirpath`` keeps."""
    for callback in trainer.checkpoint_callbacks:
        if callback.save_last and callback.dirpath:
            return Path(callback.dirpath) / f"{callback.CHECKPOINT_NAME_LAST}{callback.FILE_EXTENSION}"
    return None


class JudgeCLI(LightningCLI):
    def parse_arguments(self, parser, args) -> None:
        """Parse, then check every data source the command will read (``fit``: train, val and the test suites
        it tests after training) and the data and export flags, before a seed is set, a model built or a step
        taken: a missing path or a bad row is one line naming ``data.<split>`` and the file and line."""
        super().parse_arguments(parser, args)
        subcommand = self.config.get("subcommand")
        if subcommand:
            self.data_read_ahead = _check_data(self.config[subcommand], subcommand)

    def after_instantiate_classes(self) -> None:
        super().after_instantiate_classes()
        if isinstance(self.datamodule, JudgeDataModule):
            self.datamodule.read_ahead.update(getattr(self, "data_read_ahead", {}))  # read once, in the check

    def add_arguments_to_parser(self, parser) -> None:
        parser.add_argument(
            "--export_dir",
            type=str | None,
            default=None,
            help="where fit exports the best checkpoint as a judge folder (default: <root dir>/judge)",
        )
        parser.add_argument(
            "--test_after_fit",
            type=bool,
            default=True,
            help="after fit, report the best checkpoint's metrics on data.test (and data.adversarial, data.real_test)",
        )
        parser.add_argument(
            "--calibrate",
            type=bool,
            default=True,
            help="after fit, fit the judge's temperature on data.val (saved in judge.json)",
        )
        parser.add_argument(
            "--restart",
            type=bool,
            default=False,
            help="fit: start over instead of resuming from the last.ckpt of an interrupted run (by default the "
            "same command resumes from it)",
        )

    def before_fit(self) -> None:
        """Resume an interrupted run of this command from its ``last.ckpt`` (or start over, ``--restart``)."""
        config = self.config_init[self.subcommand]
        last = last_checkpoint(self.trainer)
        guard = ResumeGuard(run_fingerprint(self.config[self.subcommand], getattr(self, "data_read_ahead", {})), last)
        self.trainer.callbacks.append(guard)
        if self.trainer.fast_dev_run or config.get("ckpt_path") is not None or last is None or not last.exists():
            return  # a smoke test (fast_dev_run) neither resumes nor saves
        if config.get("restart"):
            last.unlink()
            print(f"starting over: removed {last}", file=sys.stderr)
            return
        config["ckpt_path"] = str(last)
        guard.enforce = True
        print(f"resuming the interrupted run from {last} (--restart true starts over)", file=sys.stderr)

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
            name=Path(trainer.default_root_dir).name,
            train_data=data.sources["train"],
            mixture=data.mixture,
            best_checkpoint=best,
            recipe=_recipe(model, data, trainer),
            calibration=calibration,
        )
        # test/acc, adversarial/acc…, and the real-output test per category (the model card's eval results)
        overall = {k: v for k, v in metrics.items() if k.count("/") == 1 or k.startswith("real_test/acc/category=")}
        folder = Path(config.export_dir or Path(trainer.default_root_dir) / "judge")
        model.export(folder, metrics=overall)
        print(f"exported the judge to {folder}")
        name = Path(trainer.default_root_dir).name
        for run in log_judge_artifact(trainer, folder, name):  # each WandbLogger's run gets it as an artifact
            sync = f"; `wandb sync {run}` uploads it" if Path(run).name.startswith("offline-run-") else ""
            print(f"logged the judge to wandb as the model artifact {artifact_name(name)}{sync}")
        if calibration:
            print(
                f"temperature {calibration['temperature']:.3f} fitted on {calibration['rows']} val rows: "
                f"ECE {calibration['ece_before']:.4f} -> {calibration['ece_after']:.4f}"
            )
        if metrics:
            print(metrics_table(metrics))
        last = last_checkpoint(trainer)
        if last is not None and last.exists():
            last.unlink()  # the run is over: the same command trains anew rather than resuming it

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
        "lr": model.lr,
        "warmup_ratio": model.warmup_ratio,
        "weight_decay": model.weight_decay,
        "batch_size": data.batch_size,
        "accumulate_grad_batches": trainer.accumulate_grad_batches,
        "devices": trainer.world_size,
        "precision": str(trainer.precision),
        "steps": trainer.global_step,
    }


def _check_data(config, subcommand: str) -> dict[str, list[dict]]:
    """The records of every source ``subcommand`` reads, read now; CommandError (usage) on the first problem."""
    try:
        data = JudgeDataModule(**dict(config["data"]))
    except RecordError as err:
        raise CommandError(str(err), usage=True) from None
    if subcommand == "fit":
        splits = ["train", "val"] if data.sources["val"] else ["train"]
        if config.get("test_after_fit", True) and not config["trainer"].get("fast_dev_run"):
            splits += [split for split in ("test", "adversarial", "real_test") if data.sources[split]]
        export = config.get("export_dir")
        if export and Path(export).exists() and not Path(export).is_dir():
            raise CommandError(f"--export_dir {export}: exists and is not a folder", usage=True)
    else:
        splits = list(data.stage_splits(subcommand))
    try:
        data.read(splits)
    except RecordError as err:
        raise CommandError(str(err), usage=True) from None
    return data.read_ahead


CONFIG_FLAGS = ("--config", "-c")


_NOISE = (
    "Does not validate against any of the Union subtypes",
    "Subtypes:",
    "Errors:",
    "Given value",
    "Expected a <class 'NoneType'>",
)
_KEY = re.compile(r'Parser key "([^"]+)":?$')


def _one_line(message: str, configs: list[str]) -> str:
    """A jsonargparse error as one line: the key it is about (``model.lr``) and the reasons, without the
    type listings; a config file's problem names the file."""
    lines = [line.strip().lstrip("- ").strip() for line in str(message).splitlines()]
    lines = [line for line in lines if line and not line.startswith(_NOISE)]
    keys = [m[1] for line in lines if (m := _KEY.match(line))]
    text = ""
    for line in (line for line in lines if not _KEY.match(line)):
        text = f"{text}{' ' if text.endswith(':') else '; '}{line}" if text else line
    if len(configs) == 1:
        text = text.replace('"<unicode string>"', configs[0])
    text = text or "invalid arguments"
    return f"{'.'.join(keys)}: {text}" if keys else text


def run_lightning_cli(args: list[str]) -> JudgeCLI:
    """Run LightningCLI on ``args`` (``[subcommand, …]``). A wrong call (a missing ``--config`` file, an unknown
    key, a bad value, a missing data path) is a CommandError (usage), one line, before anything runs."""
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    # wandb runs offline (files under the run's folder, `wandb sync` uploads them) unless WANDB_MODE says otherwise:
    # the configs' WandbLoggers name no mode, so WANDB_MODE=online logs online
    os.environ.setdefault("WANDB_MODE", "offline")
    configs = []
    for i, arg in enumerate(args):
        flag, _, value = arg.partition("=")
        if flag in CONFIG_FLAGS and not value and i + 1 < len(args):
            value = args[i + 1]
        if flag in CONFIG_FLAGS and value:
            configs.append(value)
            if not Path(value).exists():
                raise CommandError(f"{flag} {value}: no such file", usage=True)
            if not Path(value).is_file():
                raise CommandError(f"{flag} {value}: not a file", usage=True)
    strict = {"exit_on_error": False}  # parse errors raise: one line here instead of argparse's usage text
    try:
        return JudgeCLI(
            JudgeModule,
            JudgeDataModule,
            subclass_mode_model=True,
            args=None if args == sys.argv[1:] else args,  # None: LightningCLI reads the real command line
            save_config_kwargs={"overwrite": True},
            auto_configure_optimizers=False,
            parser_kwargs={**strict, **{name: dict(strict) for name in ("fit", "validate", "test", "predict")}},
        )
    except ArgumentError as err:
        raise CommandError(_one_line(str(err), configs), usage=True) from err
