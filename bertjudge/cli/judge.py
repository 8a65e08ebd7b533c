"""``python -m bertjudge judge``: score a JSONL/Parquet file with a judge, resumably."""

from __future__ import annotations

import argparse
import sys

from bertjudge.cli.common import CommandError
from bertjudge.evaluation.scoring import score_file
from bertjudge.judges.loading import Judge
from bertjudge.judges.routing import SPEC_HELP, format_routing


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m bertjudge judge",
        description="Score (question, candidate, reference) rows with a judge. The input is JSONL or Parquet "
                    "with at least 'candidate' and 'reference' (or 'references'); the output keeps every input "
                    "field and adds score, verdict, judge and input_hash. An interrupted run resumes.",
        epilog="example: python -m bertjudge judge --judge runs/quickstart/judge --input answers.jsonl "
               "--output scored.jsonl")
    p.add_argument("--judge", required=True, help=f"'regex', 'contains', the folder of an exported judge, a zoo "
                                                  f"name, {SPEC_HELP}")
    p.add_argument("--input", required=True, help="rows to score (.jsonl, .jsonl.gz or .parquet)")
    p.add_argument("--output", required=True, help="the score file to write (.jsonl or .parquet)")
    p.add_argument("--batch-size", type=int, default=32, help="rows per forward pass (default 32)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    return p


def run(args: argparse.Namespace) -> int:
    if args.batch_size < 1:
        raise CommandError("--batch-size must be at least 1", usage=True)
    judge = Judge.load(args.judge)
    out = score_file(judge, args.input, args.output, args.batch_size, progress=not args.no_progress)
    described = judge.describe()
    if "routing" in described:  # a routing judge: how many rows each stage decided
        print(format_routing(described["routing"]), file=sys.stderr)
    print(f"wrote {out}")
    return 0
