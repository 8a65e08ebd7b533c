"""Calibration and thresholds: temperature and Platt scaling, ECE, reliability diagrams, accuracy vs
threshold; ``python -m bertjudge calibrate`` refits a judge's calibration on labelled data."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from torchmetrics.functional.classification import binary_calibration_error


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


def few_label_calibration(logits, labels, groups, sizes=(50, 100, 200), repeats: int = 20, fit_bias: bool = True,
                          seed: int = 0) -> dict[int, dict[str, float]]:
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
            out[n] = {"acc": float(np.mean(acc)), "acc_sd": float(np.std(acc)), "ece": float(np.mean(ece)),
                      "draws": len(acc)}
    return out


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
    simulated = np.concatenate([binned_ece((rng.random((min(chunk, n_samples - start), len(probs))) < probs).astype(float))
                                for start in range(0, n_samples, chunk)])
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
    return {"edges": edges.tolist(), "count": counts.tolist(),
            "mean_pred": nan_to_none(mean_pred), "frequency": nan_to_none(frequency)}


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
    candidates = np.concatenate([[np.nextafter(values[0], -np.inf)], (values[:-1] + values[1:]) / 2,
                                 [np.nextafter(values[-1], np.inf)]])
    accuracy = accuracy_at_thresholds(probs, labels, candidates)
    best = np.flatnonzero(accuracy == accuracy.max())
    pick = best[np.argmin(np.abs(candidates[best] - 0.5))]
    return float(candidates[pick]), float(accuracy[pick])


def best_thresholds_by(probs, labels, groups) -> dict[str, float]:
    """The best threshold per group (e.g. per category)."""
    probs, labels, groups = np.asarray(probs, dtype=float), np.asarray(labels), np.asarray(groups)
    return {str(g): best_threshold(probs[groups == g], labels[groups == g])[0] for g in np.unique(groups)}


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


def cli(argv: list[str]) -> int:
    import argparse
    import sys

    parser = argparse.ArgumentParser(
        prog="python -m bertjudge calibrate",
        description="Refit a judge's calibration (temperature, and with --bias a bias: Platt scaling) on labelled "
                    "data, e.g. outputs of the models it will judge labelled by reading them, and write the "
                    "recalibrated judge. Prints ECE and accuracy as saved, refitted on the rows, and cross-fitted "
                    "(each question's rows calibrated by a fit on the other questions: the honest estimate; "
                    "evaluating the written judge on the same rows afterwards is in-sample).",
        epilog="example: python -m bertjudge calibrate runs/minilm-l6-real-finetune/judge --data "
               "data/real/manual-v3.jsonl.gz --bias --out runs/minilm-l6-real-finetune/judge-manual")
    parser.add_argument("judge", help="an exported judge folder or zoo name")
    parser.add_argument("--data", nargs="+", required=True, metavar="SOURCE",
                        help="labelled files or bertjudge.data.sources specs (rows without a label are skipped)")
    parser.add_argument("--out", required=True, help="the folder to write the recalibrated judge to")
    parser.add_argument("--bias", action="store_true",
                        help="fit a bias too: for data whose share of correct answers differs from the training "
                             "data's (without it, the temperature alone is fitted and the bias set to 0)")
    parser.add_argument("--cascade", action="store_true",
                        help="calibrate the judge for 'cascade:OUT' (its default rules=match): fit on the rows the "
                             "cascade's rules leave to it (those without a rule match, which hold fewer correct "
                             "answers than all rows) and report the whole cascade's figures (rule matches score 1)")
    parser.add_argument("--label-free", action="store_true",
                        help="adapt to a new kind of output without labels: re-estimate its share of correct answers "
                             "from the judge's own scores on the --data rows (EM prior-shift correction) and move the "
                             "judge's bias (its threshold) accordingly; labels, where present, are only used to report")
    parser.add_argument("--prior", type=float,
                        help="with --label-free: the share of correct answers of the data the judge was calibrated on "
                             "(default: the one its judge.json records)")
    parser.add_argument("--folds", type=int, default=5, help="folds by question for the cross-fitted figures (0: none)")
    parser.add_argument("--batch-size", type=int, default=32)
    args = parser.parse_args(argv)

    from bertjudge.api import Judge
    from bertjudge.data.sources import load_source
    from bertjudge.judges.base import JudgeModule
    from bertjudge.training import calibrate

    judge = Judge.load(args.judge)
    if not isinstance(judge, JudgeModule):
        print(f"bertjudge calibrate: {args.judge} is not a trained judge; only those have a calibration",
              file=sys.stderr)
        return 2
    if args.label_free:
        return _label_free(judge, [r for spec in args.data for r in load_source(spec)], args)
    records = [r for spec in args.data for r in load_source(spec) if r.get("label") is not None]
    labels = np.array([int(r["label"]) for r in records])
    if len(set(labels.tolist())) < 2:
        print("bertjudge calibrate: the data needs labelled rows of both classes", file=sys.stderr)
        return 2
    logits = judge.logits_records(records, args.batch_size, progress=True)
    ruled = np.zeros(len(records), dtype=bool)  # rows the cascade's rules decide (score 1)
    if args.cascade:
        from bertjudge.judges.routing import CascadeJudge

        cascade = CascadeJudge(judge)
        ruled = np.array([cascade.accepts(row) for row in cascade.rules.details(records, progress=True)])
        if len(set(labels[~ruled].tolist())) < 2:
            print("bertjudge calibrate: the rows the rules leave to the judge need labels of both classes",
                  file=sys.stderr)
            return 2
        print(f"the cascade's rules decide {ruled.sum()} of {len(records)} rows "
              f"({labels[ruled].mean() if ruled.any() else float('nan'):.1%} of them correct); "
              f"the judge is calibrated on the other {(~ruled).sum()}")

    def scored(probs):  # the judge's (or, with --cascade, the whole cascade's) probabilities
        return np.where(ruled, 1.0, probs)

    saved = f"as saved (temperature {judge.temperature:.3f}, bias {judge.bias:.3f})"
    scores = {saved: scored(calibrated(logits, judge.temperature, judge.bias))}
    previous = judge.provenance.get("calibration")
    mine = [r for r, ruled_row in zip(records, ruled) if not ruled_row]
    calibration = calibrate(judge, mine, fit_bias=args.bias, logits=logits[~ruled])
    fitted = f"refitted (temperature {judge.temperature:.3f}, bias {judge.bias:.3f}), on these rows"
    scores[fitted] = scored(calibrated(logits, judge.temperature, judge.bias))
    if args.folds >= 2:
        metas = [r.get("meta") or {} for r in mine]
        groups = [m.get("problem") or m.get("item") or r["question"] for m, r in zip(metas, mine)]
        cross = np.ones(len(records))
        cross[~ruled] = cross_fitted(logits[~ruled], labels[~ruled], groups, fit_bias=args.bias, folds=args.folds)
        scores[f"refitted, cross-fitted ({args.folds} folds by question)"] = cross
    what = "the cascade" if args.cascade else "the judge"
    print(f"{len(records)} labelled rows ({labels.mean():.1%} correct); ECE of {what}, if calibrated, on them: "
          f"~{ece_if_calibrated(scores[fitted])['mean']:.3f}")
    print(f"{'calibration' + (' (the whole cascade)' if args.cascade else ''):<72} {'ECE':>7} {'accuracy':>9}")
    for name, probs in scores.items():
        print(f"{name:<72} {expected_calibration_error(probs, labels):7.4f} "
              f"{((probs >= judge.threshold) == labels).mean():9.4f}")
    judge.provenance["calibration"] = {
        **calibration, "data": args.data, **({"previous": previous} if previous else {}),
        **({"for": "cascade: fitted on the rows without a rule match; use as cascade:<this judge> "
                   "(the default rules=match)"} if args.cascade else {}),
        **({("cascade_cross_fitted_ece" if args.cascade else "cross_fitted_ece"):
            expected_calibration_error(cross, labels)} if args.folds >= 2 else {})}
    judge.export(args.out)
    print(f"wrote {args.out}")
    return 0


def _label_free(judge, records: list[dict], args) -> int:
    """``calibrate --label-free``: the EM prior shift of the judge's bias on unlabelled rows."""
    import sys

    prior = args.prior if args.prior is not None else (judge.provenance.get("calibration") or {}).get("prior")
    if prior is None:
        print("bertjudge calibrate: this judge's judge.json records no calibration prior; give --prior (the share of "
              "correct answers of the data it was calibrated on)", file=sys.stderr)
        return 2
    if not records:
        print("bertjudge calibrate: no rows in --data", file=sys.stderr)
        return 2
    logits = judge.logits_records(records, args.batch_size, progress=True)
    before = calibrated(logits, judge.temperature, judge.bias)
    new_prior, shift = prior_shift(before, prior)
    after = calibrated(logits, judge.temperature, judge.bias + shift)
    print(f"{len(records)} rows; share of correct answers: {prior:.3f} where calibrated, {new_prior:.3f} estimated "
          f"here (EM on the judge's scores); bias {judge.bias:.3f} -> {judge.bias + shift:.3f}")
    labelled = np.array([r.get("label") is not None for r in records])
    if labelled.any():
        y = np.array([int(r["label"]) for r in records if r.get("label") is not None])
        print(f"on the {labelled.sum()} labelled rows (true share {y.mean():.3f}; labels not used for the fit):")
        for name, probs in (("before", before[labelled]), ("after", after[labelled])):
            print(f"  {name:<7} accuracy {((probs >= judge.threshold) == y).mean():.4f}  "
                  f"ECE {expected_calibration_error(probs, y):.4f}")
    previous = judge.provenance.get("calibration")
    judge.bias += shift
    judge.provenance["calibration"] = {"label_free": True, "prior": new_prior, "prior_before": prior, "shift": shift,
                                       "data": args.data, **({"previous": previous} if previous else {})}
    judge.export(args.out)
    print(f"wrote {args.out}")
    return 0
