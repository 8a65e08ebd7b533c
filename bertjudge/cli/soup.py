"""``python -m bertjudge soup``: average the weights of judges fine-tuned from one start (a model soup)."""

from __future__ import annotations

import argparse
from pathlib import Path

from bertjudge.cli.common import CommandError, check_output, load_records
from bertjudge.judges.loading import Judge
from bertjudge.train import soup as soups
from bertjudge.train.calibrate import calibrate

DESCRIPTION = (
    "Average the weights of judges fine-tuned from one start (runs of one recipe that differ only in their seed) "
    "into one judge that scores about like their ensemble at the cost of one (a model soup: Wortsman et al., 2022). "
    "The ingredients must share class, input format and every weight's shape; the soup's temperature is refitted "
    "on the labelled --data sources (use the recipe's val sources), with bias 0; without them, temperature and "
    "bias are the means of the ingredients'."
)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m bertjudge soup",
        usage="%(prog)s --judge JUDGE JUDGE [JUDGE ...] --output DIR [--data SOURCE ...] [--name NAME]",
        description=DESCRIPTION,
        epilog="example: python -m bertjudge soup --judge runs/a/judge runs/b/judge --output runs/soup/judge "
        "--data data/real/champ-rule-v2.jsonl.gz?split=val",
    )
    p.add_argument(
        "--judge", nargs="+", default=[], metavar="JUDGE", help="exported judge folders (or zoo names), two or more"
    )
    p.add_argument(
        "--data",
        nargs="+",
        default=[],
        metavar="SOURCE",
        help="labelled sources (bertjudge.data.sources specs) to fit the soup's temperature on; "
        "use the recipe's val sources",
    )
    p.add_argument("--output", required=True, help="the folder to write the soup judge to")
    p.add_argument("--name", default=None, help="the soup's name in judge.json (default: the --output folder's parent)")
    # the command's earlier form (judges as positionals, --calibrate): parsed only to say what replaced it
    p.add_argument("positional_judges", nargs="*", help=argparse.SUPPRESS)
    p.add_argument("--calibrate", nargs="*", default=None, help=argparse.SUPPRESS)
    return p


def _check_renamed(args: argparse.Namespace) -> None:
    """The earlier form of the call gets a one-line pointer to the house flags (``--judge``, ``--data``)."""
    if args.calibrate is not None:
        sources = " ".join(args.calibrate) or "SOURCE [SOURCE ...]"
        raise CommandError(f"--calibrate is now --data: use --data {sources}", usage=True)
    if args.positional_judges:
        raise CommandError(f"judges are given with --judge: use --judge {' '.join(args.positional_judges)}", usage=True)


def run(args: argparse.Namespace) -> int:
    _check_renamed(args)
    if len(args.judge) < 2:
        raise CommandError("a soup needs at least two judges: --judge JUDGE JUDGE [JUDGE ...]", usage=True)
    check_output(args.output, folder=True)
    if Path(args.output).resolve() in {Path(spec).resolve() for spec in args.judge}:
        raise CommandError(f"--output {args.output} is one of the judges averaged; write to another folder", usage=True)
    for spec in args.judge:  # every ingredient checked before any is loaded
        if Path(spec).exists() and not (Path(spec) / "judge.json").is_file():
            raise CommandError(f"{spec}: not an exported judge folder (no judge.json)", usage=True)
    records = load_records(args.data)  # bad sources are refused before any judge is loaded
    try:
        judges = [Judge.load(spec) for spec in args.judge]
        if not all("weights" in judge.features for judge in judges):
            raise soups.SoupError("only trained judges (exported folders) can be averaged")
        soup = soups.average_judges(judges, names=list(args.judge))
    except (soups.SoupError, FileNotFoundError) as error:
        raise CommandError(str(error), usage=True) from error
    out = Path(args.output)
    soup.provenance["name"] = args.name or (out.parent.name if out.name == "judge" else out.name)
    calibration = calibrate(soup, records) if records else {}
    soup.provenance["calibration"] = calibration or {
        "temperature": soup.temperature,
        "fitted": "no: the mean of the ingredients' temperatures",
    }
    soup.export(out)
    print(f"averaged {len(judges)} judges into {out}")
    if calibration:
        print(
            f"temperature {calibration['temperature']:.3f} fitted on {calibration['rows']} rows: "
            f"ECE {calibration['ece_before']:.4f} -> {calibration['ece_after']:.4f}"
        )
    else:
        print(f"temperature {soup.temperature:.3f}: the ingredients' mean (give --data to fit it)")
    return 0
