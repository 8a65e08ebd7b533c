"""How a judge's decision transfers to a kind of output: accuracy against what its ranking allows, and what
label-free adaptation and few-label calibration recover (docs/real-outputs.md, leave one source out).

    python scripts/transfer.py --judge runs/loso-evouna/judge --data "data/real/real-test-v1.jsonl.gz" \
        --where task=evouna-tq --name "EVOUNA-TQ (held out)" --out runs/transfer/evouna.json

Prints, on the rows of ``--data`` (optionally only those whose field equals a value, ``--where``):
- as saved: accuracy, AUROC, ECE; the best threshold's accuracy (an oracle: what the ranking allows);
- label-free: the judge's bias moved by the EM prior shift estimated on these rows' scores alone
  (``calibration.prior_shift``; the labels only score it);
- few labels: a temperature and bias fitted on 50 / 100 / 200 labelled rows drawn by question, scored on
  the other rows (mean of 20 draws, ``calibration.few_label_calibration``).
Writes the figures as JSON with ``--out``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--judge", required=True, help="an exported judge folder")
    parser.add_argument("--data", nargs="+", required=True, help="labelled sources")
    parser.add_argument(
        "--where", help="FIELD=VALUE: keep the rows whose field (task, category, candidate_model, split) has this value"
    )
    parser.add_argument("--name", help="what the rows are, for the printout")
    parser.add_argument(
        "--prior",
        type=float,
        help="the share of correct answers the judge was calibrated on (default: recorded in its judge.json)",
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[50, 100, 200])
    parser.add_argument("--out", type=Path, help="write the figures as JSON")
    args = parser.parse_args(argv)

    from bertjudge.core.calibration import calibrated, few_label_calibration
    from bertjudge.core.metrics import binary_metrics
    from bertjudge.core.stats import best_threshold, expected_calibration_error, prior_shift
    from bertjudge.data.sources import load_source
    from bertjudge.judges.loading import Judge

    records = [r for spec in args.data for r in load_source(spec) if r.get("label") is not None]
    if args.where:
        field, value = args.where.split("=", 1)
        records = [r for r in records if str(r.get(field)) == value]
    if not records:
        print("transfer: no labelled rows", file=sys.stderr)
        return 2
    judge = Judge.load(args.judge)
    prior = args.prior if args.prior is not None else (judge.provenance.get("calibration") or {}).get("prior")
    y = np.array([int(r["label"]) for r in records])
    logits = judge.logits_records(records, progress=True)
    probs = calibrated(logits, judge.temperature, judge.bias)
    import torch

    saved = binary_metrics(torch.tensor(probs), torch.tensor(y), judge.threshold)
    threshold, oracle = best_threshold(probs, y)
    out = {
        "name": args.name or args.where or "rows",
        "judge": args.judge,
        "rows": len(y),
        "share_correct": y.mean(),
        "acc": saved["acc"],
        "auroc": saved.get("auroc"),
        "ece": saved["ece"],
        "oracle_acc": oracle,
        "oracle_threshold": threshold,
        "always_majority": max(y.mean(), 1 - y.mean()),
    }
    if prior is not None:
        new_prior, shift = prior_shift(probs, prior)
        adapted = calibrated(logits, judge.temperature, judge.bias + shift)
        out["label_free"] = {
            "prior_before": prior,
            "prior_estimated": new_prior,
            "shift": shift,
            "acc": float(((adapted >= judge.threshold) == y).mean()),
            "ece": expected_calibration_error(adapted, y),
        }
    groups = [" ".join((r.get("question") or r["id"]).lower().split()) for r in records]
    out["few_labels"] = {str(n): v for n, v in few_label_calibration(logits, y, groups, args.sizes).items()}
    print(f"{out['name']}: {len(y)} rows, {y.mean():.1%} correct; judge {args.judge}")
    print(
        f"  as saved        acc {out['acc']:.4f}  AUROC {out['auroc'] or float('nan'):.4f}  ECE {out['ece']:.4f}  "
        f"(best threshold {threshold:.3f}: acc {oracle:.4f}; majority class {out['always_majority']:.4f})"
    )
    if "label_free" in out:
        lf = out["label_free"]
        print(
            f"  label-free      acc {lf['acc']:.4f}  ECE {lf['ece']:.4f}  (share correct {prior:.3f} -> "
            f"{lf['prior_estimated']:.3f} estimated)"
        )
    for n, v in out["few_labels"].items():
        print(f"  {n:>4} labels      acc {v['acc']:.4f} ± {v['acc_sd']:.4f}  ECE {v['ece']:.4f}  ({v['draws']} draws)")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(out, indent=2, default=float) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
