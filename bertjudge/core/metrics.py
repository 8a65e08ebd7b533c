"""Judge metrics as a torchmetrics class: accuracy, AUROC and calibration error, overall and per group."""

from __future__ import annotations

import torch
from torchmetrics import Metric
from torchmetrics.functional.classification import (
    binary_accuracy,
    binary_auroc,
    binary_calibration_error,
)


def binary_metrics(probs: torch.Tensor, target: torch.Tensor, threshold: float = 0.5) -> dict[str, float]:
    """Accuracy, AUROC (when both classes are present) and expected calibration error (15 bins)."""
    target = target.long()
    out = {
        "acc": binary_accuracy(probs, target, threshold=threshold).item(),
        "ece": binary_calibration_error(probs, target, n_bins=15).item(),
        "n": float(len(target)),
    }
    if target.min() != target.max():
        out["auroc"] = binary_auroc(probs, target).item()
    return out


class GroupedBinaryMetrics(Metric):
    """Binary judge metrics overall and per value of each grouping (task, category, …).

    ``update(probs, target, groups)`` takes one integer tensor per grouping (-1: not in it); ``compute()`` returns
    ``{"acc": …, "auroc": …, "ece": …, "acc/task=gsm8k": …, …}`` using ``names[grouping][id]``.
    States are concatenated across processes, so the figures are exact under DDP.
    """

    full_state_update = False

    def __init__(self, names: dict[str, list[str]], threshold: float = 0.5):
        super().__init__()
        self.names, self.threshold = names, threshold
        self.add_state("probs", default=[], dist_reduce_fx="cat")
        self.add_state("target", default=[], dist_reduce_fx="cat")
        for grouping in names:
            self.add_state(f"group_{grouping}", default=[], dist_reduce_fx="cat")

    def update(self, probs: torch.Tensor, target: torch.Tensor, groups: dict[str, torch.Tensor]) -> None:
        self.probs.append(probs.detach().float())
        self.target.append(target.detach().long())
        for grouping in self.names:
            getattr(self, f"group_{grouping}").append(groups[grouping].detach().long())

    @staticmethod
    def _cat(state) -> torch.Tensor:
        return torch.cat(state) if isinstance(state, list) else state

    def compute(self) -> dict[str, float]:
        probs, target = self._cat(self.probs), self._cat(self.target)
        out = binary_metrics(probs, target, self.threshold)
        for grouping, names in self.names.items():
            ids = self._cat(getattr(self, f"group_{grouping}"))
            for gid in ids.unique().tolist():
                if gid < 0:  # a row outside this grouping (no attack tag, say)
                    continue
                mask = ids == gid
                for key, value in binary_metrics(probs[mask], target[mask], self.threshold).items():
                    out[f"{key}/{grouping}={names[gid]}"] = value
        return out
