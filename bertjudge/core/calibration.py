"""Calibration of logits: temperature and Platt scaling (fitted by L-BFGS), cross-fitted by question,
and what calibrating on a few labelled rows gives."""

from __future__ import annotations

import numpy as np
import torch

from bertjudge.core.stats import expected_calibration_error


def fit_calibration(logits, labels, fit_bias: bool = False, max_iter: int = 100) -> tuple[float, float]:
    """Temperature T (and, with ``fit_bias``, bias b; else 0) minimising the NLL of ``sigmoid(logits / T + b)``
    (LBFGS on log T and b)."""
    z = torch.as_tensor(np.asarray(logits, dtype=np.float64))
    y = torch.as_tensor(np.asarray(labels, dtype=np.float64))
    log_t = torch.zeros((), dtype=torch.float64, requires_grad=True)
    bias = torch.zeros((), dtype=torch.float64, requires_grad=fit_bias)
    params = [log_t, bias] if fit_bias else [log_t]
    optimizer = torch.optim.LBFGS(params, lr=1.0, max_iter=max_iter, line_search_fn="strong_wolfe")

    def closure():
        optimizer.zero_grad()
        loss = torch.nn.functional.binary_cross_entropy_with_logits(z / log_t.exp() + bias, y)
        loss.backward()
        return loss

    optimizer.step(closure)
    return float(log_t.detach().exp()), float(bias.detach())


def fit_temperature(logits, labels, max_iter: int = 100) -> float:
    """The temperature T minimising the NLL of ``sigmoid(logits / T)``."""
    return fit_calibration(logits, labels, max_iter=max_iter)[0]


def fit_platt(logits, labels, max_iter: int = 100) -> tuple[float, float]:
    """Temperature T and bias b minimising the NLL of ``sigmoid(logits / T + b)`` (Platt scaling)."""
    return fit_calibration(logits, labels, fit_bias=True, max_iter=max_iter)


def calibrated(logits, temperature: float = 1.0, bias: float = 0.0) -> np.ndarray:
    """P(correct) = sigmoid(logits / T + b), as ``JudgeModule.probabilities`` computes it, for numpy logits."""
    return 1 / (1 + np.exp(-(np.asarray(logits, dtype=np.float64) / temperature + bias)))


def cross_fitted(logits, labels, groups, fit_bias: bool = False, folds: int = 5, seed: int = 0) -> np.ndarray:
    """Out-of-fold P(correct): each fold of groups (e.g. one question's answers) is calibrated by a
    temperature (and bias) fitted on the other folds — what a calibration fitted on these rows would
    give on new questions, without reusing a row's own label."""
    z, y = np.asarray(logits, dtype=np.float64), np.asarray(labels)
    names = sorted(set(groups))
    order = np.random.default_rng(seed).permutation(len(names))
    fold_of = {name: int(order[i]) % folds for i, name in enumerate(names)}
    fold = np.array([fold_of[g] for g in groups])
    out = np.empty_like(z)
    for f in range(folds):
        train, held = fold != f, fold == f
        out[held] = calibrated(z[held], *fit_calibration(z[train], y[train], fit_bias))
    return out


def few_label_calibration(
    logits, labels, groups, sizes=(50, 100, 200), repeats: int = 20, fit_bias: bool = True, seed: int = 0
) -> dict[int, dict[str, float]]:
    """What calibrating on ``n`` labelled rows of a new kind of output gives on the rest of it: for each
    size, ``repeats`` draws of whole groups (questions) until ``n`` rows, a temperature and bias fitted
    on them, accuracy and ECE on the other rows; the mean and spread over the draws."""
    z, y, groups = np.asarray(logits, dtype=np.float64), np.asarray(labels), np.asarray(groups)
    names = np.unique(groups)
    rng = np.random.default_rng(seed)
    out = {}
    for n in sizes:
        acc, ece = [], []
        for _ in range(repeats):
            chosen, count = [], 0
            for g in rng.permutation(names):
                if count >= n:
                    break
                chosen.append(g)
                count += int((groups == g).sum())
            fit = np.isin(groups, chosen)
            if fit.all() or len(set(y[fit].tolist())) < 2:
                continue
            probs = calibrated(z[~fit], *fit_calibration(z[fit], y[fit], fit_bias))
            acc.append(float(((probs >= 0.5) == y[~fit]).mean()))
            ece.append(expected_calibration_error(probs, y[~fit]))
        if acc:
            out[n] = {
                "acc": float(np.mean(acc)),
                "acc_sd": float(np.std(acc)),
                "ece": float(np.mean(ece)),
                "draws": len(acc),
            }
    return out
