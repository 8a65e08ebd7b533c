"""The judge ``fit`` exports, logged as a wandb artifact of type ``model`` by each ``WandbLogger`` of the trainer.

The artifact holds the judge folder's files (weights, tokenizer, ``judge.json``, the model card) and, as metadata,
the judge's input format, threshold, temperature and held-out metrics. Offline (``WANDB_MODE=offline``, the
default of ``fit``) it is recorded in the run's ``run-*.wandb`` file, its files staged under wandb's data folder,
and ``wandb sync <run folder>`` uploads it with the run; online it is uploaded as the run finishes.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from lightning.pytorch.loggers import WandbLogger

METADATA = ("format", "threshold", "temperature", "metrics")  # judge.json's keys the artifact's metadata holds


def artifact_name(run: str) -> str:
    """``judge-<run>``, in the characters wandb allows in an artifact's name (letters, digits, ``-``, ``_``, ``.``)."""
    return "judge-" + (re.sub(r"[^A-Za-z0-9._-]+", "-", run).strip("-.") or "run")


def log_judge_artifact(trainer, folder: str | Path, run: str) -> list[str]:
    """Log the judge folder ``folder`` to the run of every ``WandbLogger`` of ``trainer`` as the artifact
    ``judge-<run>`` (type ``model``, aliases ``latest`` and ``best``: the exported checkpoint is the best one);
    returns the runs' folders (none without a WandbLogger)."""
    import wandb

    folder = Path(folder)
    saved = json.loads((folder / "judge.json").read_text(encoding="utf-8"))
    metadata = {key: saved[key] for key in METADATA if key in saved}
    metadata["class"] = saved.get("class")
    logged = []
    for logger in trainer.loggers:
        if not isinstance(logger, WandbLogger):
            continue
        artifact = wandb.Artifact(
            artifact_name(run),
            type="model",
            description=f"the judge exported by `python -m bertjudge fit` ({run}): a bertjudge judge folder",
            metadata=metadata,
        )
        artifact.add_dir(str(folder))
        experiment = logger.experiment
        experiment.log_artifact(artifact, aliases=["latest", "best"])
        logged.append(str(Path(experiment.dir).parent))
    return logged
