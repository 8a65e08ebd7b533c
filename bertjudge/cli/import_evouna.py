"""``python -m bertjudge import-evouna``: EVOUNA's human-judged open-QA answers (NQ/TQ) as records."""

from __future__ import annotations

import argparse

from bertjudge.cli.common import CommandError, check_output
from bertjudge.core.records import RecordError, is_record_file, write_records
from bertjudge.pipeline import evouna


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m bertjudge import-evouna",
        description=evouna.__doc__.split("\n\n")[0],
        epilog="Example: python -m bertjudge import-evouna --input QA-Eval/EVOUNA/TQ.json "
        "--output data/real/evouna-tq-v1.jsonl.gz",
    )
    p.add_argument("--input", required=True, help="EVOUNA's TQ.json or NQ.json")
    p.add_argument("--output", required=True, help="the records file to write (.jsonl, .jsonl.gz or .parquet)")
    p.add_argument("--dataset", help="the task suffix: evouna-<dataset> (default: the file name, e.g. tq)")
    return p


def run(args: argparse.Namespace) -> int:
    if not is_record_file(args.output):
        raise CommandError(f"--output {args.output}: give a .jsonl, .jsonl.gz or .parquet file", usage=True)
    check_output(args.output, [args.input])
    try:
        records = evouna.read_evouna(args.input, args.dataset)
    except RecordError as err:
        raise CommandError(str(err), usage=True) from err
    write_records(args.output, records)
    by_split = {s: [r for r in records if r["split"] == s] for s in evouna.SPLIT_PERCENT}
    for split, rows in by_split.items():
        questions = len({r["question"] for r in rows})
        correct = sum(r["label"] for r in rows) / max(len(rows), 1)
        print(f"{split}: {len(rows)} answers to {questions} questions, {correct:.1%} correct")
    print(f"wrote {len(records)} records to {args.output}")
    return 0
