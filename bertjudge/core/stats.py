"""Numbers about scores and labels, without a model: ECE and reliability, thresholds, the share of
correct answers under a prior shift, rescue and damage against a reference judge."""

from __future__ import annotations

import numpy as np
import torch
from scipy.stats import binomtest
from torchmetrics.functional.classification import binary_calibration_error


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


def rescue_damage(reference_correct, judge_correct) -> dict:
    """How a judge differs from a reference judge (the rules) row by row, on the same labelled rows.

    ``rescue``: the share of the rows the reference gets wrong that this judge gets right; ``damage``: the share of
    the rows the reference gets right that this judge gets wrong (None where the reference has no such rows);
    ``mcnemar_p``: McNemar's exact test of the two judges' accuracies (two-sided binomial test on the rows where
    they disagree: equal accuracies give as many rescued rows as damaged ones)."""
    ref, judge = np.asarray(reference_correct, dtype=bool), np.asarray(judge_correct, dtype=bool)
    if ref.shape != judge.shape:
        raise ValueError(f"{judge.shape[0]} rows of the judge against {ref.shape[0]} of the reference")
    rescued, damaged = int((~ref & judge).sum()), int((ref & ~judge).sum())
    n_wrong, n_right = int((~ref).sum()), int(ref.sum())
    return {
        "n": int(ref.size),
        "reference_wrong": n_wrong,
        "reference_right": n_right,
        "rescued": rescued,
        "damaged": damaged,
        "rescue": rescued / n_wrong if n_wrong else None,
        "damage": damaged / n_right if n_right else None,
        "mcnemar_p": float(binomtest(rescued, rescued + damaged, 0.5).pvalue) if rescued + damaged else 1.0,
    }
