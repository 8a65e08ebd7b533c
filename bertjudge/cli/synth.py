"""``python -m bertjudge synth``: bootstrap a labelled training set from (question, reference) rows."""

from __future__ import annotations

import argparse
from pathlib import Path

from bertjudge.cli.common import CommandError, check_output, check_writes
from bertjudge.core import records
from bertjudge.data import corpus, synth


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m bertjudge synth",
        description=synth.__doc__.split("\n\n")[0],
        epilog=synth.__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--input", required=True, type=Path, help="JSONL of question/reference(s)[/category/task] rows")
    p.add_argument("--output", required=True, type=Path, help="output folder for train.jsonl and val.jsonl")
    p.add_argument("--per-question", type=int, default=4, help="candidates per question, half correct (default 4)")
    p.add_argument("--val-fraction", type=float, default=0.1, help="share of questions in val.jsonl (default 0.1)")
    p.add_argument("--seed", type=int, default=0, help="generator seed (default 0)")
    p.add_argument(
        "--language",
        default="en",
        choices=synth.LANGUAGES,
        help="language of the questions and of the candidates written (default en)",
    )
    return p


def run(args: argparse.Namespace) -> int:
    if args.per_question < 1 or not 0 <= args.val_fraction < 1:
        raise CommandError("--per-question must be >= 1 and --val-fraction in [0, 1)", usage=True)
    if args.input.is_dir():
        raise CommandError(f"--input {args.input}: is a folder; give a JSONL file", usage=True)
    if not args.input.is_file():
        raise CommandError(f"--input {args.input}: no such file", usage=True)
    check_output(args.output, folder=True)
    check_writes([args.output / "train.jsonl", args.output / "val.jsonl"], [args.input])
    try:
        rows = synth.read_rows(args.input)
        made = synth.synthesize(rows, args.per_question, args.seed, args.val_fraction, args.language)
    except records.RecordError as err:
        raise CommandError(str(err), usage=True) from err
    splits = {name: [r for r in made if r["split"] == name] for name in ("train", "val")}
    for name, part in splits.items():
        if part:
            records.write_records(args.output / f"{name}.jsonl", part)
    print(corpus.summary(splits))
    print(
        f"wrote {', '.join(f'{n}.jsonl ({len(p)})' for n, p in splits.items() if p)} to {args.output} "
        f"from {len(rows)} questions"
    )
    return 0
