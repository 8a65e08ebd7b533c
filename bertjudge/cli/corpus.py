"""``python -m bertjudge corpus``: write the embedded corpus's train/val/test/adversarial splits as JSONL."""

from __future__ import annotations

import argparse
from pathlib import Path

from bertjudge.cli.common import CommandError, check_output, check_writes
from bertjudge.core import records
from bertjudge.data import corpus


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m bertjudge corpus",
        description="Write the embedded corpus (synthetic, labelled, balanced) as train/val/test/adversarial "
        "JSONL files and print a summary per category x style x label.",
        epilog="Sizes: train = --size; val = test = max(300, size/10); adversarial = "
        f"max({20 * len(corpus.ATTACKS)}, size/10) rounded "
        f"up to whole rounds of its {len(corpus.ATTACKS)} attacks (a wrong row and a correct counterpart "
        f"each). Labels are '{corpus.LABEL_SOURCE}'. The same --size and --seed give the same bytes.",
    )
    p.add_argument("--output", required=True, type=Path, help="output folder (created if missing)")
    p.add_argument("--size", type=int, default=20000, help="number of train rows (default 20000)")
    p.add_argument("--seed", type=int, default=0, help="generator seed (default 0)")
    return p


def run(args: argparse.Namespace) -> int:
    if args.size < 2:
        raise CommandError("--size must be at least 2", usage=True)
    check_output(args.output, folder=True)
    check_writes([args.output / f"{name}.jsonl" for name in corpus.split_sizes(args.size)], [])
    splits = {name: corpus.generate(name, n, args.seed) for name, n in corpus.split_sizes(args.size).items()}
    for name, rows in splits.items():
        records.write_records(args.output / f"{name}.jsonl", rows)
    print(corpus.summary(splits))
    print(f"wrote {', '.join(f'{name}.jsonl ({len(rows)})' for name, rows in splits.items())} to {args.output}")
    return 0
