"""Figures of a report: reliability diagrams and accuracy against the threshold (matplotlib, Agg)."""

from __future__ import annotations

from pathlib import Path


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
