"""Numbers about scores and labels, without a model: ECE and reliability (together with the oracle thresholds, a
report's calibration summary), thresholds, the share of correct answers under a prior shift, bootstrap intervals of an accuracy, Cohen's κ, confusion matrices,
rankings (Borda, Kendall τ), McNemar's exact test between two judges, rescue and damage against a reference judge.

Where torchmetrics or scipy has the statistic, it computes it (κ, confusion matrix, ECE, Kendall τ, ranks,
the binomial test); what is here besides is what they lack."""

from __future__ import annotations

import math
from collections import defaultdict

import numpy as np
import torch
from scipy.stats import binomtest, kendalltau, rankdata
from torchmetrics.functional.classification import (
    binary_calibration_error,
    binary_cohen_kappa,
    multiclass_confusion_matrix,
)


def prior_shift(probs, prior: float, max_iter: int = 1000, tol: float = 1e-8) -> tuple[float, float]:
    """Label-free adaptation to a new share of correct answers (Saerens, Latinne & Decaestecker 2002).

    ``probs`` are a judge's P(correct) on unlabelled rows of a new kind of output, calibrated where
    the share of correct answers was ``prior`` (its calibration data). EM re-estimates the new share
    from the judge's own scores. Returns ``(new_prior, shift)``: adding ``shift`` to the judge's bias
    (its logit) gives the posteriors under the new share, i.e. moves the decision threshold."""
    p = np.clip(np.asarray(probs, dtype=np.float64), 1e-6, 1 - 1e-6)
    prior = float(np.clip(prior, 1e-4, 1 - 1e-4))
    base = np.log(prior / (1 - prior))
    logit = np.log(p / (1 - p))
    new = prior
    for _ in range(max_iter):
        shift = np.log(new / (1 - new)) - base
        updated = float(np.clip(np.mean(1 / (1 + np.exp(-(logit + shift)))), 1e-4, 1 - 1e-4))
        if abs(updated - new) < tol:
            new = updated
            break
        new = updated
    return new, float(np.log(new / (1 - new)) - base)


def expected_calibration_error(probs, labels, n_bins: int = 15) -> float:
    """ECE of P(correct): bin-weighted |mean predicted P − observed frequency of label 1|, equal-width bins."""
    probs = torch.as_tensor(np.asarray(probs, dtype=np.float32))
    labels = torch.as_tensor(np.asarray(labels, dtype=np.int64))
    return float(binary_calibration_error(probs, labels, n_bins=n_bins, norm="l1"))


def _bin_index(probs: np.ndarray, n_bins: int) -> np.ndarray:
    """The equal-width bin of each score, [lo, hi) with 1.0 in the last bin, as torchmetrics bins them."""
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    return np.clip(np.searchsorted(edges, probs, side="right") - 1, 0, n_bins - 1)


def ece_if_calibrated(probs, labels=None, n_bins: int = 15, n_samples: int = 1000, seed: int = 0) -> dict[str, float]:
    """How large the binned ECE of these scores is when they *are* calibrated (consistency resampling,
    Bröcker & Smith 2007): labels drawn from the judge's own P(correct), ``n_samples`` times.

    Binned ECE is biased upward on small sets (on 360 rows a calibrated judge scores ~0.05 with 15
    bins), so an observed ECE inside this band cannot tell calibration from noise. Returns the mean
    and 95th percentile of the simulated ECEs and, given ``labels``, the observed ECE's p-value (the
    fraction of simulated ECEs at least as large, with the +1 correction)."""
    probs = np.clip(np.asarray(probs, dtype=np.float64), 0.0, 1.0)
    one_hot = np.eye(n_bins)[_bin_index(probs, n_bins)]  # (rows, bins)

    def binned_ece(label_rows: np.ndarray) -> np.ndarray:  # (samples, rows) -> (samples,)
        return np.abs((probs - label_rows) @ one_hot).sum(axis=1) / len(probs)

    rng = np.random.default_rng(seed)
    chunk = max(1, 2_000_000 // max(len(probs), 1))  # bound memory on large sets
    simulated = np.concatenate(
        [
            binned_ece((rng.random((min(chunk, n_samples - start), len(probs))) < probs).astype(float))
            for start in range(0, n_samples, chunk)
        ]
    )
    result = {"mean": float(simulated.mean()), "q95": float(np.quantile(simulated, 0.95))}
    if labels is not None:
        observed = binned_ece(np.asarray(labels, dtype=np.float64)[None, :])[0]
        result["p_value"] = float((1 + (simulated >= observed - 1e-12).sum()) / (1 + n_samples))
    return result


def reliability(probs, labels, n_bins: int = 15) -> dict[str, list]:
    """Reliability-diagram data per equal-width bin: edges, count, mean predicted P, frequency of label 1."""
    probs, labels = np.asarray(probs, dtype=float), np.asarray(labels, dtype=float)
    edges, index = np.linspace(0.0, 1.0, n_bins + 1), _bin_index(probs, n_bins)
    counts = np.bincount(index, minlength=n_bins)
    with np.errstate(invalid="ignore"):
        mean_pred = np.bincount(index, probs, n_bins) / counts
        frequency = np.bincount(index, labels, n_bins) / counts
    nan_to_none = lambda a: [None if np.isnan(v) else float(v) for v in a]  # noqa: E731
    return {
        "edges": edges.tolist(),
        "count": counts.tolist(),
        "mean_pred": nan_to_none(mean_pred),
        "frequency": nan_to_none(frequency),
    }


def accuracy_at_thresholds(probs, labels, thresholds) -> np.ndarray:
    """Accuracy of the verdict ``prob >= t`` for every t in ``thresholds`` (vectorised)."""
    probs, labels = np.asarray(probs, dtype=float), np.asarray(labels).astype(bool)
    thresholds = np.asarray(thresholds, dtype=float)
    positives, negatives = np.sort(probs[labels]), np.sort(probs[~labels])
    true_pos = len(positives) - np.searchsorted(positives, thresholds, side="left")
    true_neg = np.searchsorted(negatives, thresholds, side="left")
    return (true_pos + true_neg) / max(len(probs), 1)


def best_threshold(probs, labels) -> tuple[float, float]:
    """(threshold, accuracy) maximising accuracy; candidates are midpoints between observed scores
    (and just below the lowest / above the highest); ties go to the threshold closest to 0.5."""
    values = np.unique(np.asarray(probs, dtype=float))
    if len(values) == 0:
        return 0.5, float("nan")
    candidates = np.concatenate(
        [[np.nextafter(values[0], -np.inf)], (values[:-1] + values[1:]) / 2, [np.nextafter(values[-1], np.inf)]]
    )
    accuracy = accuracy_at_thresholds(probs, labels, candidates)
    best = np.flatnonzero(accuracy == accuracy.max())
    pick = best[np.argmin(np.abs(candidates[best] - 0.5))]
    return float(candidates[pick]), float(accuracy[pick])


def best_thresholds_by(probs, labels, groups) -> dict[str, float]:
    """The best threshold per group (e.g. per category)."""
    probs, labels, groups = np.asarray(probs, dtype=float), np.asarray(labels), np.asarray(groups)
    return {str(g): best_threshold(probs[groups == g], labels[groups == g])[0] for g in np.unique(groups)}


def calibration_summary(probs, labels, categories, files, n_bins: int = 15, seed: int = 0) -> dict:
    """How calibrated a judge's P(correct) is on labelled rows (a report's ``calibration``): ECE and, for comparison,
    the ECE of calibrated scores (``ece_if_calibrated``), overall and per data file (``files``, one per row); the
    reliability diagram; accuracy against the threshold (0 to 1 by 0.01); the oracle threshold, overall and per
    category (``categories``, one per row)."""
    probs, labels = np.asarray(probs, dtype=float), np.asarray(labels)
    categories, files = np.asarray(categories), np.asarray(files)
    grid = np.linspace(0, 1, 101)
    best, best_acc = best_threshold(probs, labels)
    return {
        "ece": expected_calibration_error(probs, labels, n_bins),
        "reliability": reliability(probs, labels, n_bins),
        "threshold_curve": {
            "threshold": grid.tolist(),
            "accuracy": accuracy_at_thresholds(probs, labels, grid).tolist(),
        },
        "oracle_threshold": best,
        "oracle_accuracy": best_acc,
        "oracle_threshold_by_category": best_thresholds_by(probs, labels, categories),
        "ece_if_calibrated": ece_if_calibrated(probs, labels, n_bins, seed=seed),
        "ece_by_data": {
            str(g): expected_calibration_error(probs[files == g], labels[files == g], n_bins)
            for g in sorted(set(files))
        },
        "ece_if_calibrated_by_data": {
            str(g): ece_if_calibrated(probs[files == g], labels[files == g], n_bins, seed=seed)
            for g in sorted(set(files))
        },
    }


def accuracy_interval(
    correct, n_boot: int = 1000, seed: int = 0, level: float = 0.95, clusters=None
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of 0/1 values (seeded).

    Without ``clusters``, rows are resampled with replacement; the number of ones is then
    Binomial(n, mean), so that is sampled directly. With ``clusters`` (one key per row, compared as
    strings, e.g. its question), whole clusters are resampled (a cluster bootstrap of the pooled
    accuracy): rows that share a question are not independent (a judge that misreads a problem
    misreads its many answers), and the row bootstrap then gives too narrow an interval. Fewer than
    two clusters give no interval (NaN); a handful give a rough one."""
    correct = np.asarray(correct, dtype=float)
    if len(correct) == 0:
        return math.nan, math.nan
    rng = np.random.default_rng(seed)
    index = None if clusters is None else np.unique(np.asarray(clusters, dtype=str), return_inverse=True)[1]
    if index is None or index.max() + 1 == len(correct):  # one row per cluster: resampling rows
        means = rng.binomial(len(correct), correct.mean(), n_boot) / len(correct)
    elif index.max() == 0:
        return math.nan, math.nan
    else:
        ones, sizes = np.bincount(index, weights=correct), np.bincount(index).astype(float)
        k, means = len(sizes), []
        for start in range(0, n_boot, 100):  # 100 resamples at a time: memory stays bounded
            drawn = rng.integers(0, k, (min(100, n_boot - start), k))  # k clusters drawn with replacement
            means.append(ones[drawn].sum(axis=1) / sizes[drawn].sum(axis=1))
        means = np.concatenate(means)
    low, high = np.quantile(means, [(1 - level) / 2, (1 + level) / 2])
    return float(low), float(high)


def cohen_kappa(a, b) -> float:
    """Cohen's κ between two binary raters (torchmetrics' ``binary_cohen_kappa``, in float32; NaN when chance
    agreement is 1)."""
    a, b = (torch.as_tensor(np.asarray(x, dtype=np.int64)) for x in (a, b))
    return float(binary_cohen_kappa(b, a))


def confusion_matrix(target, preds, num_classes: int) -> np.ndarray:
    """Counts of (target class, predicted class) pairs, classes as indices in ``range(num_classes)``: rows the
    target class, columns the predicted one (torchmetrics' ``multiclass_confusion_matrix``)."""
    target, preds = (torch.as_tensor(np.asarray(x, dtype=np.int64)) for x in (target, preds))
    return multiclass_confusion_matrix(preds, target, num_classes).numpy()


def human_accuracy(accuracy: float, rho: float) -> float:
    """Estimated accuracy against humans of a judge with accuracy A against labels that agree with
    humans at rate ρ (binary labels, independent errors): (2ρ − 1)·A + 1 − ρ."""
    return (2 * rho - 1) * accuracy + 1 - rho


def borda(accuracy_by_task: dict[str, dict[str, float]]) -> dict[str, float]:
    """Borda count: in each task a model gets one point per model it beats there (half per tie)."""
    points: dict[str, float] = defaultdict(float)
    for accuracies in accuracy_by_task.values():
        for model, acc in accuracies.items():
            points[model] += sum(
                float(acc > other) + 0.5 * (acc == other) for name, other in accuracies.items() if name != model
            )
    return dict(points)


def ranks(values: dict[str, float]) -> dict[str, float]:
    """The rank of each value, 1 = the highest; ties share the best rank."""
    names = list(values)
    ranked = rankdata([-values[n] for n in names], method="min")
    return {n: float(r) for n, r in zip(names, ranked)}


def kendall_tau(x: list[float], y: list[float]) -> float:
    """Kendall's τ (scipy's τ-b) of two rankings; NaN with fewer than two items or a constant side."""
    if len(x) < 2 or len(set(x)) < 2 or len(set(y)) < 2:
        return math.nan
    return float(kendalltau(x, y).statistic)


def mcnemar(a_correct, b_correct) -> dict:
    """McNemar's exact test of two judges' accuracies on the same rows: a two-sided binomial test (p = 1/2) on the
    rows where exactly one of them is right (equal accuracies give as many of one kind as of the other).

    Returns ``n`` (rows), ``a_right_b_wrong``, ``a_wrong_b_right`` and ``p`` (1.0 where they never disagree)."""
    a, b = np.asarray(a_correct, dtype=bool), np.asarray(b_correct, dtype=bool)
    if a.shape != b.shape:
        raise ValueError(f"{b.shape[0]} rows of one judge against {a.shape[0]} of the other")
    a_only, b_only = int((a & ~b).sum()), int((~a & b).sum())
    p = float(binomtest(b_only, a_only + b_only, 0.5).pvalue) if a_only + b_only else 1.0
    return {"n": int(a.size), "a_right_b_wrong": a_only, "a_wrong_b_right": b_only, "p": p}


def rescue_damage(reference_correct, judge_correct) -> dict:
    """How a judge differs from a reference judge (the rules) row by row, on the same labelled rows.

    ``rescue``: the share of the rows the reference gets wrong that this judge gets right; ``damage``: the share of
    the rows the reference gets right that this judge gets wrong (None where the reference has no such rows);
    ``mcnemar_p``: McNemar's exact test of the two judges' accuracies (two-sided binomial test on the rows where
    they disagree: equal accuracies give as many rescued rows as damaged ones)."""
    ref, judge = np.asarray(reference_correct, dtype=bool), np.asarray(judge_correct, dtype=bool)
    if ref.shape != judge.shape:
        raise ValueError(f"{judge.shape[0]} rows of the judge against {ref.shape[0]} of the reference")
    test = mcnemar(ref, judge)
    rescued, damaged = test["a_wrong_b_right"], test["a_right_b_wrong"]
    n_wrong, n_right = int((~ref).sum()), int(ref.sum())
    return {
        "n": test["n"],
        "reference_wrong": n_wrong,
        "reference_right": n_right,
        "rescued": rescued,
        "damaged": damaged,
        "rescue": rescued / n_wrong if n_wrong else None,
        "damage": damaged / n_right if n_right else None,
        "mcnemar_p": test["p"],
    }
