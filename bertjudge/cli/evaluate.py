"""``python -m bertjudge evaluate``: compare judges against labels; write report.md, report.json, plots."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from bertjudge.cli.common import CommandError, add_trust_flag, check_output
from bertjudge.cli.precision import add_batch_size_flag, add_precision_flag, apply_precision
from bertjudge.evaluation.labelled import load_labelled, run_judges
from bertjudge.evaluation.report import build_report, write_report
from bertjudge.evaluation.wandb_log import log_report
from bertjudge.judges.loading import Judge
from bertjudge.judges.routing import SPEC_HELP, short_spec


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m bertjudge evaluate",
        description="Compare judges against labels: accuracy per task, category and candidate model with "
        "bootstrap intervals, Cohen's kappa, McNemar's exact test of every pair of judges, induced leaderboards, "
        "calibration, adversarial suites.",
        epilog="example: python -m bertjudge evaluate --data data/real/real-test-v1.jsonl.gz "
        "--judge regex runs/quickstart/judge --output runs/eval",
    )
    p.add_argument(
        "--data",
        nargs="+",
        required=True,
        help="labelled .jsonl/.parquet files, or source specs (FILE?split=val, embedded:test?n=500)",
    )
    p.add_argument(
        "--judge", nargs="+", required=True, help=f"'regex', 'contains', exported judge folders, zoo names, {SPEC_HELP}"
    )
    p.add_argument(
        "--output",
        required=True,
        help="folder for report.md, report.json, plots and scores/<judge>.jsonl (each judge's per-row scores, "
        "written as they are done: an interrupted run resumes)",
    )
    p.add_argument(
        "--against",
        metavar="JUDGE",
        help="compare every judge row by row with this one (e.g. regex): rescue (the share of its wrong rows the "
        "judge gets right), damage (the share of its right rows the judge gets wrong) and McNemar's exact test, "
        "overall and per category; added to --judge when it is not there",
    )
    p.add_argument("--rho", type=float, help="agreement rate of the labels with humans, in [0.5, 1]")
    add_batch_size_flag(p)
    p.add_argument(
        "--bootstrap",
        type=int,
        default=1000,
        help="bootstrap resamples of questions (a question's answers are drawn together; default 1000)",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the bootstrap")
    p.add_argument(
        "--restart",
        action="store_true",
        help="score every row again, dropping what an interrupted run left in OUTPUT/scores/ (by default a "
        "rerun resumes from it)",
    )
    add_precision_flag(p)
    add_trust_flag(p)
    p.add_argument(
        "--wandb",
        metavar="PROJECT",
        help="also log the report (tables, each judge's wrong rows, plots) to a wandb run of PROJECT, offline "
        "unless WANDB_MODE=online: written under OUTPUT/wandb/, `wandb sync` uploads it",
    )
    return p


def _key(spec: str, taken: set[str]) -> str:
    key = short_spec(spec)
    return spec if key in taken else key


def run(args: argparse.Namespace) -> int:
    if args.rho is not None and not 0.0 <= args.rho <= 1.0:
        raise CommandError("--rho must be in [0, 1]", usage=True)
    if args.batch_size < 1:
        raise CommandError("--batch-size must be at least 1", usage=True)
    if args.bootstrap < 1:
        raise CommandError("--bootstrap must be at least 1", usage=True)
    check_output(args.output, folder=True)  # before any judge scores a row
    records = load_labelled(args.data)
    specs = [*args.judge, *([args.against] if args.against and args.against not in args.judge else [])]
    judges, against = {}, None
    for spec in specs:
        key = _key(spec, set(judges))
        judges[key] = Judge.load(spec, trust_remote_code=args.trust_remote_code)
        if spec == args.against and against is None:
            against = key
        apply_precision(judges[key], args.precision)
    print(f"scoring {len(records)} records with {', '.join(judges)}", file=sys.stderr)
    scored = run_judges(
        judges,
        records,
        batch_size=args.batch_size,
        progress=True,
        scores_dir=Path(args.output) / "scores",
        restart=args.restart,
    )
    report = build_report(
        records,
        scored["scores"],
        scored["details"],
        scored["thresholds"],
        args.rho,
        args.bootstrap,
        args.seed,
        uncalibrated=scored["uncalibrated"],
        routing=scored["routing"],
        against=against,
    )
    paths = write_report(report, args.output)
    print(f"wrote {', '.join(str(p) for p in paths.values())}")
    if args.wandb:
        config = {
            "data": args.data,
            "judges": args.judge,
            "bootstrap": args.bootstrap,
            "seed": args.seed,
            "rho": args.rho,
            "against": args.against,
        }
        folder = log_report(
            report,
            paths,
            args.wandb,
            args.output,
            name=Path(args.output).name,
            config=config,
            records=records,  # each judge's wrong rows: a table per judge
            details=scored["details"],
        )
        mode = os.environ.get("WANDB_MODE") or "offline"
        sync = f"; `wandb sync {folder}` uploads it" if mode == "offline" else ""
        print(f"logged the report to wandb project {args.wandb} ({mode}): {folder}{sync}")
    return 0
