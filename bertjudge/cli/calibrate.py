"""``python -m bertjudge calibrate``: refit a judge's calibration on labelled data, or adapt it to a new
kind of output without labels, and write the recalibrated judge."""

from __future__ import annotations

import argparse
from pathlib import Path

from bertjudge.cli.common import CommandError, check_output, load_records
from bertjudge.core.stats import ece_if_calibrated, expected_calibration_error
from bertjudge.judges.base import JudgeModule
from bertjudge.judges.loading import Judge
from bertjudge.train.calibrate import CalibrationError, adapt_label_free, recalibrate


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m bertjudge calibrate",
        description="Refit a judge's calibration (temperature, and with --bias a bias: Platt scaling) on labelled "
        "data, e.g. outputs of the models it will judge labelled by reading them, and write the "
        "recalibrated judge. Prints ECE and accuracy as saved, refitted on the rows, and cross-fitted "
        "(each question's rows calibrated by a fit on the other questions: the honest estimate; "
        "evaluating the written judge on the same rows afterwards is in-sample).",
        epilog="example: python -m bertjudge calibrate --judge runs/quickstart/judge --data "
        "data/real/manual-v3.jsonl.gz --bias --output runs/quickstart/judge-manual",
    )
    p.add_argument("--judge", required=True, help="an exported judge folder or zoo name")
    p.add_argument(
        "--data",
        nargs="+",
        required=True,
        metavar="SOURCE",
        help="labelled files or bertjudge.data.sources specs (rows without a label are skipped)",
    )
    p.add_argument("--output", required=True, help="the folder to write the recalibrated judge to")
    p.add_argument(
        "--bias",
        action="store_true",
        help="fit a bias too: for data whose share of correct answers differs from the training "
        "data's (without it, the temperature alone is fitted and the bias set to 0)",
    )
    p.add_argument(
        "--cascade",
        action="store_true",
        help="calibrate the judge for 'cascade:OUTPUT' (its default rules=match): fit on the rows the "
        "cascade's rules leave to it (those without a rule match, which hold fewer correct "
        "answers than all rows) and report the whole cascade's figures (rule matches score 1)",
    )
    p.add_argument(
        "--label-free",
        action="store_true",
        help="adapt to a new kind of output without labels: re-estimate its share of correct answers "
        "from the judge's own scores on the --data rows (EM prior-shift correction) and move the "
        "judge's bias (its threshold) accordingly; labels, where present, are only used to report",
    )
    p.add_argument(
        "--prior",
        type=float,
        help="with --label-free: the share of correct answers of the data the judge was calibrated on "
        "(default: the one its judge.json records)",
    )
    p.add_argument("--folds", type=int, default=5, help="folds by question for the cross-fitted figures (0: none)")
    p.add_argument("--batch-size", type=int, default=32, help="rows per forward pass (default 32)")
    return p


def run(args: argparse.Namespace) -> int:
    if args.batch_size < 1:
        raise CommandError("--batch-size must be at least 1", usage=True)
    if args.folds < 0:
        raise CommandError("--folds must be 0 (none) or more", usage=True)
    if args.prior is not None and not 0.0 < args.prior < 1.0:
        raise CommandError("--prior must be in (0, 1)", usage=True)
    check_output(args.output, folder=True)
    if Path(args.output).resolve() == Path(args.judge).resolve():
        raise CommandError(
            f"--output {args.output} is the judge folder being calibrated; write to another folder", usage=True
        )
    records = load_records(args.data)
    judge = Judge.load(args.judge)
    if "calibration" not in judge.features:
        raise CommandError(f"{args.judge} is not a trained judge; only those have a calibration", usage=True)
    if "precision" in judge.features:  # fitted on fp32 logits: the calibration written does not depend on the CPU
        judge.set_precision("fp32")
    if args.label_free and args.prior is None and "prior" not in (judge.provenance.get("calibration") or {}):
        raise CommandError(
            "this judge's judge.json records no calibration prior; give --prior (the share of "
            "correct answers of the data it was calibrated on)",
            usage=True,
        )
    try:
        if args.label_free:
            return _label_free(judge, records, args)
        result = recalibrate(
            judge,
            records,
            fit_bias=args.bias,
            cascade=args.cascade,
            folds=args.folds,
            batch_size=args.batch_size,
            progress=True,
        )
    except CalibrationError as e:
        raise CommandError(str(e), usage=True) from e
    labels, ruled, scores = result["labels"], result["ruled"], result["scores"]
    if args.cascade:
        share = f"{labels[ruled].mean():.1%}" if ruled.any() else "–"
        print(
            f"the cascade's rules decide {ruled.sum()} of {len(labels)} rows ({share} of them correct); "
            f"the judge is calibrated on the other {(~ruled).sum()}"
        )
    refitted = [name for name in scores if name.startswith("refitted (")][0]
    what = "the cascade" if args.cascade else "the judge"
    print(
        f"{len(labels)} labelled rows ({labels.mean():.1%} correct); ECE of {what}, if calibrated, on them: "
        f"~{ece_if_calibrated(scores[refitted])['mean']:.3f}"
    )
    print(f"{'calibration' + (' (the whole cascade)' if args.cascade else ''):<72} {'ECE':>7} {'accuracy':>9}")
    for name, probs in scores.items():
        print(
            f"{name:<72} {expected_calibration_error(probs, labels):7.4f} "
            f"{((probs >= judge.threshold) == labels).mean():9.4f}"
        )
    return _write(judge, args)


def _write(judge: JudgeModule, args: argparse.Namespace) -> int:
    judge.provenance["calibration"]["data"] = args.data
    judge.export(args.output)
    print(f"wrote {args.output}")
    return 0


def _label_free(judge: JudgeModule, records: list[dict], args: argparse.Namespace) -> int:
    result = adapt_label_free(judge, records, prior=args.prior, batch_size=args.batch_size, progress=True)
    print(
        f"{result['rows']} rows; share of correct answers: {result['prior_before']:.3f} where calibrated, "
        f"{result['prior']:.3f} estimated here (EM on the judge's scores); bias {result['bias_before']:.3f} -> "
        f"{result['bias']:.3f}"
    )
    labels = result["labels"]
    if len(labels):
        print(f"on the {len(labels)} labelled rows (true share {labels.mean():.3f}; labels not used for the fit):")
        for name in ("before", "after"):
            probs = result[name]
            print(
                f"  {name:<7} accuracy {((probs >= judge.threshold) == labels).mean():.4f}  "
                f"ECE {expected_calibration_error(probs, labels):.4f}"
            )
    return _write(judge, args)
