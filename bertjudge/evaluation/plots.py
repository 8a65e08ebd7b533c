"""Figures of a report: reliability diagrams, accuracy against the threshold and confusion matrices
(matplotlib, Agg)."""

from __future__ import annotations

from pathlib import Path

import numpy as np


def _figure():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt, *plt.subplots(figsize=(4.5, 4), dpi=120)


def plot_reliability(curves: dict[str, dict], path: str | Path, title: str = "Reliability") -> Path:
    """Plot ``{judge name: reliability(...)}`` as reliability diagrams on one figure."""
    plt, fig, ax = _figure()
    ax.plot([0, 1], [0, 1], color="grey", linestyle="--", linewidth=1, label="perfect")
    for name, data in curves.items():
        points = [(p, f) for p, f in zip(data["mean_pred"], data["frequency"]) if p is not None]
        if points:
            ax.plot(*zip(*points), marker="o", markersize=3, label=name)
    ax.set(xlabel="predicted P(correct)", ylabel="fraction labelled correct", xlim=(0, 1), ylim=(0, 1), title=title)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return Path(path)


def plot_threshold_curves(curves: dict[str, tuple], path: str | Path, title: str = "Accuracy vs threshold") -> Path:
    """Plot ``{judge name: (thresholds, accuracies)}`` on one figure."""
    plt, fig, ax = _figure()
    for name, (thresholds, accuracy) in curves.items():
        ax.plot(thresholds, accuracy, label=name)
    ax.set(xlabel="threshold", ylabel="accuracy", xlim=(0, 1), title=title)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return Path(path)


def plot_confusion(
    confusion, names: list[str], path: str | Path, title: str = "Error types", xlabel: str = "predicted type"
) -> Path:
    """Plot a confusion matrix (rows: the labelled class, columns: the predicted one) with its counts;
    the colour is the share of the row, so a rare class's errors show as plainly as a common one's."""
    counts = np.asarray(confusion, dtype=float)
    shares = counts / np.maximum(counts.sum(axis=1, keepdims=True), 1)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    size = 2.5 + 0.45 * len(names)
    fig, ax = plt.subplots(figsize=(size, size), dpi=120)
    ax.imshow(shares, cmap="Blues", vmin=0, vmax=1)
    for i in range(len(names)):
        for j in range(len(names)):
            if counts[i, j]:
                ax.text(
                    j,
                    i,
                    f"{int(counts[i, j])}",
                    ha="center",
                    va="center",
                    fontsize=7,
                    color="white" if shares[i, j] > 0.5 else "black",
                )
    ax.set_xticks(range(len(names)), names, rotation=60, ha="right", fontsize=7)
    ax.set_yticks(range(len(names)), names, fontsize=7)
    ax.set(xlabel=xlabel, ylabel="labelled type", title=title)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return Path(path)
