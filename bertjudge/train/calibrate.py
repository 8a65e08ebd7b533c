"""Refit a trained judge's calibration on labelled rows (temperature, and optionally a bias: Platt
scaling), for the judge alone or for its place in a cascade, and adapt it to a new kind of output
without labels (EM prior-shift correction of its bias)."""

from __future__ import annotations

import numpy as np

from bertjudge.core.calibration import calibrated, cross_fitted, fit_calibration
from bertjudge.core.errors import BertJudgeError
from bertjudge.core.stats import expected_calibration_error, prior_shift
from bertjudge.judges.base import JudgeModule
from bertjudge.judges.routing import CascadeJudge


def calibrate(
    model: JudgeModule, records: list[dict], fit_bias: bool = False, logits: np.ndarray | None = None
) -> dict:
    """Fit the judge's temperature (and, with ``fit_bias``, a bias: Platt scaling) on labelled records
    (LBFGS on NLL) and set it on the judge; ``logits``: the records' raw logits, if already computed."""
    labelled = [r for r in records if r["label"] is not None]
    if len({r["label"] for r in labelled}) < 2:
        return {}
    labels = np.array([r["label"] for r in labelled])
    if logits is None:
        logits = model.logits_records(labelled)
    temperature, bias = fit_calibration(logits, labels, fit_bias)
    before = expected_calibration_error(calibrated(logits), labels)
    after = expected_calibration_error(calibrated(logits, temperature, bias), labels)
    model.temperature, model.bias = temperature, bias
    fitted = {"temperature": temperature, **({"bias": bias} if fit_bias else {})}
    return {**fitted, "rows": len(labelled), "prior": float(labels.mean()), "ece_before": before, "ece_after": after}


class CalibrationError(BertJudgeError, ValueError):
    """Rows that cannot calibrate a judge (one class only, none at all, no recorded prior)."""


def question_groups(records: list[dict]) -> list[str]:
    """The question each row answers (its problem or item id where it has one): rows of one question
    are fitted and held out together."""
    metas = [r.get("meta") or {} for r in records]
    return [m.get("problem") or m.get("item") or r["question"] for m, r in zip(metas, records)]


def recalibrate(
    judge: JudgeModule,
    records: list[dict],
    fit_bias: bool = False,
    cascade: bool = False,
    folds: int = 5,
    batch_size: int = 32,
    progress: bool = False,
) -> dict:
    """Refit ``judge``'s calibration on the labelled ``records`` and set it on the judge.

    ``cascade``: fit on the rows that ``cascade:<judge>``'s rules leave to it (those without a rule
    match) and score the whole cascade (rule matches score 1). Returns ``labels``, ``ruled`` (the rows
    the rules decide), ``scores`` (P(correct) as saved, refitted, and cross-fitted by question when
    ``folds`` >= 2) and ``calibration`` (what judge.json records)."""
    records = [r for r in records if r.get("label") is not None]
    labels = np.array([int(r["label"]) for r in records])
    if len(set(labels.tolist())) < 2:
        raise CalibrationError("the data needs labelled rows of both classes")
    logits = judge.logits_records(records, batch_size, progress=progress)
    ruled = np.zeros(len(records), dtype=bool)
    if cascade:
        router = CascadeJudge(judge)
        ruled = np.array([router.accepts(row) for row in router.rules.details(records, progress=progress)])
        if len(set(labels[~ruled].tolist())) < 2:
            raise CalibrationError("the rows the rules leave to the judge need labels of both classes")

    def scored(probs):
        return np.where(ruled, 1.0, probs)

    scores = {
        f"as saved (temperature {judge.temperature:.3f}, bias {judge.bias:.3f})": scored(
            calibrated(logits, judge.temperature, judge.bias)
        )
    }
    previous = judge.provenance.get("calibration")
    mine = [r for r, ruled_row in zip(records, ruled) if not ruled_row]
    fitted = calibrate(judge, mine, fit_bias=fit_bias, logits=logits[~ruled])
    scores[f"refitted (temperature {judge.temperature:.3f}, bias {judge.bias:.3f}), on these rows"] = scored(
        calibrated(logits, judge.temperature, judge.bias)
    )
    extra = {}
    if folds >= 2:
        cross = np.ones(len(records))
        cross[~ruled] = cross_fitted(
            logits[~ruled], labels[~ruled], question_groups(mine), fit_bias=fit_bias, folds=folds
        )
        scores[f"refitted, cross-fitted ({folds} folds by question)"] = cross
        extra[("cascade_cross_fitted_ece" if cascade else "cross_fitted_ece")] = expected_calibration_error(
            cross, labels
        )
    calibration = {
        **fitted,
        **({"previous": previous} if previous else {}),
        **(
            {
                "for": "cascade: fitted on the rows without a rule match; use as cascade:<this judge> "
                "(the default rules=match)"
            }
            if cascade
            else {}
        ),
        **extra,
    }
    judge.provenance["calibration"] = calibration
    return {"labels": labels, "ruled": ruled, "scores": scores, "calibration": calibration}


def adapt_label_free(
    judge: JudgeModule, records: list[dict], prior: float | None = None, batch_size: int = 32, progress: bool = False
) -> dict:
    """Move ``judge``'s bias to the share of correct answers that EM estimates from its own scores on
    the (unlabelled) ``records``; ``prior``: the share where it was calibrated (default: the one its
    judge.json records). Labels, where present, only score the result (``before``/``after``)."""
    prior = prior if prior is not None else (judge.provenance.get("calibration") or {}).get("prior")
    if prior is None:
        raise CalibrationError(
            "this judge's judge.json records no calibration prior; give the share of correct "
            "answers of the data it was calibrated on"
        )
    if not records:
        raise CalibrationError("no rows to adapt to")
    logits = judge.logits_records(records, batch_size, progress=progress)
    before = calibrated(logits, judge.temperature, judge.bias)
    new_prior, shift = prior_shift(before, prior)
    after = calibrated(logits, judge.temperature, judge.bias + shift)
    labelled = np.array([r.get("label") is not None for r in records])
    labels = np.array([int(r["label"]) for r in records if r.get("label") is not None])
    previous = judge.provenance.get("calibration")
    bias_before = judge.bias
    judge.bias += shift
    judge.provenance["calibration"] = {
        "label_free": True,
        "prior": new_prior,
        "prior_before": prior,
        "shift": shift,
        **({"previous": previous} if previous else {}),
    }
    return {
        "rows": len(records),
        "prior_before": prior,
        "prior": new_prior,
        "bias_before": bias_before,
        "bias": judge.bias,
        "labels": labels,
        "before": before[labelled],
        "after": after[labelled],
    }
