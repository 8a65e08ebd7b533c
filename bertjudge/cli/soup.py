"""``python -m bertjudge soup``: average the weights of judges fine-tuned from one start (a model soup)."""

from __future__ import annotations

import argparse
from pathlib import Path

from bertjudge.cli.common import CommandError, check_output, load_records
from bertjudge.judges.base import JudgeModule
from bertjudge.judges.loading import Judge
from bertjudge.train import soup as soups
from bertjudge.train.calibrate import calibrate


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m bertjudge soup",
        description=soups.__doc__.split("\n\n")[2],
        epilog="example: python -m bertjudge soup runs/a/judge runs/b/judge --output runs/soup/judge "
        "--calibrate data/real/champ-rule-v2.jsonl.gz?split=val",
    )
    p.add_argument("judges", nargs="+", help="exported judge folders (or zoo names), two or more")
    p.add_argument("--output", required=True, help="the folder to write the soup judge to")
    p.add_argument(
        "--calibrate",
        nargs="*",
        default=[],
        metavar="SOURCE",
        help="labelled sources (bertjudge.data.sources specs) to fit the soup's temperature on; "
        "use the recipe's val sources",
    )
    p.add_argument("--name", default=None, help="the soup's name in judge.json (default: the --output folder's parent)")
    return p


def run(args: argparse.Namespace) -> int:
    if len(args.judges) < 2:
        raise CommandError("a soup needs at least two judges", usage=True)
    check_output(args.output, folder=True)
    if Path(args.output).resolve() in {Path(spec).resolve() for spec in args.judges}:
        raise CommandError(f"--output {args.output} is one of the judges averaged; write to another folder", usage=True)
    for spec in args.judges:  # every ingredient checked before any is loaded
        if Path(spec).exists() and not (Path(spec) / "judge.json").is_file():
            raise CommandError(f"{spec}: not an exported judge folder (no judge.json)", usage=True)
    records = load_records(args.calibrate)  # bad sources are refused before any judge is loaded
    try:
        judges = [Judge.load(spec) for spec in args.judges]
        if not all(isinstance(judge, JudgeModule) for judge in judges):
            raise soups.SoupError("only trained judges (exported folders) can be averaged")
        soup = soups.average_judges(judges, names=list(args.judges))
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
        print(f"temperature {soup.temperature:.3f}: the ingredients' mean (give --calibrate to fit it)")
    return 0
