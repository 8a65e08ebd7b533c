"""``python -m bertjudge judge``: score a JSONL/Parquet file with a judge, resumably."""

from __future__ import annotations

import argparse
import sys

from bertjudge.cli.common import CommandError, add_trust_flag
from bertjudge.cli.precision import add_batch_size_flag, add_precision_flag, apply_precision
from bertjudge.evaluation.scoring import check_paths, score_file
from bertjudge.judges.loading import Judge
from bertjudge.judges.routing import SPEC_HELP, format_routing


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m bertjudge judge",
        description="Score (question, candidate, reference) rows with a judge. The input is JSONL or Parquet "
        "with at least 'candidate' and 'reference' (or 'references'); the output keeps every input "
        "field and adds score, verdict, judge and input_hash. A row the judge fails on is written "
        "with score and verdict null and an 'error', and the command exits 1. An interrupted run "
        "(Ctrl-C, kill) resumes from OUTPUT.partial.jsonl, unless the judge or a row changed since.",
        epilog="example: python -m bertjudge judge --judge runs/quickstart/judge --input answers.jsonl "
        "--output scored.jsonl",
    )
    p.add_argument(
        "--judge",
        required=True,
        help="'regex', 'contains', the folder of an exported judge, a zoo name, the URL of a judge server "
        f"(http://HOST:PORT, from `python -m bertjudge serve`; token in $BERTJUDGE_TOKEN), {SPEC_HELP}",
    )
    p.add_argument("--input", required=True, help="rows to score (.jsonl, .jsonl.gz or .parquet)")
    p.add_argument(
        "--output", required=True, help="the score file to write (.jsonl, .jsonl.gz, .parquet or .csv); not the input"
    )
    add_batch_size_flag(p)
    p.add_argument(
        "--strict",
        action="store_true",
        help="stop at the first row the judge fails on (exit 1; the rows scored so far are kept for a "
        "rerun), instead of writing it with an 'error' and going on",
    )
    p.add_argument(
        "--restart", action="store_true", help="delete the partial file of an interrupted run and score every row again"
    )
    add_precision_flag(p)
    add_trust_flag(p)
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    return p


def run(args: argparse.Namespace) -> int:
    if args.batch_size < 1:
        raise CommandError(f"--batch-size must be at least 1, got {args.batch_size}", usage=True)
    check_paths(args.input, args.output)  # before the judge is loaded or anything is written
    judge = Judge.load(args.judge, trust_remote_code=args.trust_remote_code)
    apply_precision(judge, args.precision)
    summary = score_file(
        judge,
        args.input,
        args.output,
        args.batch_size,
        progress=not args.no_progress,
        strict=args.strict,
        restart=args.restart,
    )
    if judge.routing is not None:  # a routing judge: how many rows each stage decided
        print(format_routing(judge.routing), file=sys.stderr)
    resumed = f", {summary.resumed} from the partial file of an earlier run" if summary.resumed else ""
    print(f"wrote {summary.output} ({summary.rows} rows{resumed}; {summary.failed} failed)")
    if summary.failed:
        print(
            f"bertjudge judge: {summary.failed} of {summary.rows} rows could not be scored (score null, with an "
            f"'error'); first: {summary.first_failure}",
            file=sys.stderr,
        )
        return 1
    return 0
