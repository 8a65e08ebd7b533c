"""Model soups: one judge whose weights are the average of several judges fine-tuned from one start.

``python -m bertjudge soup A B [...] --out DIR --calibrate SOURCE [SOURCE ...]``

Runs of one recipe that differ only in their seed end in one basin of the loss, and the uniform
average of their weights scores about like their ensemble (Wortsman et al., 2022, "Model soups")
at the cost of a single judge. The ingredients must share class, input format and every weight's
shape; the soup's temperature is refitted on the labelled ``--calibrate`` sources, with bias 0
(without them, temperature and bias are the means of the ingredients', which were fitted for other weights).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

from bertjudge.judges.base import JudgeModule


class SoupError(ValueError):
    """Ingredients that cannot be averaged."""


def average_judges(judges: list[JudgeModule], names: list[str] | None = None) -> JudgeModule:
    """The first judge, with its weights replaced by the uniform average of every judge's weights."""
    if len(judges) < 2:
        raise SoupError("a soup needs at least two judges")
    names = names or [judge.name for judge in judges]
    first, states = judges[0], [judge.state_dict() for judge in judges]
    shapes = {key: value.shape for key, value in states[0].items()}
    for judge, state, name in zip(judges[1:], states[1:], names[1:]):
        if type(judge) is not type(first):
            raise SoupError(f"{name} is a {type(judge).__name__}, {names[0]} a {type(first).__name__}")
        if judge.format.to_dict() != first.format.to_dict():
            raise SoupError(f"{name} and {names[0]} were trained with different input formats")
        if {key: value.shape for key, value in state.items()} != shapes:
            raise SoupError(f"{name} and {names[0]} do not have the same weights (names or shapes differ): "
                            "a soup averages runs of one architecture fine-tuned from one start")
    averaged = {key: torch.stack([state[key].float() for state in states]).mean(0).to(value.dtype)
                if value.is_floating_point() else value for key, value in states[0].items()}
    first.load_state_dict(averaged)
    first.temperature = sum(judge.temperature for judge in judges) / len(judges)
    first.bias = sum(judge.bias for judge in judges) / len(judges)
    first.provenance = {**first.provenance, "soup": {"ingredients": names, "weights": "uniform average"}}
    return first


def cli(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bertjudge soup", description=__doc__.split("\n\n")[2],
        epilog="example: python -m bertjudge soup runs/a/judge runs/b/judge --out runs/soup/judge "
               "--calibrate data/real/champ-rule-v2.jsonl.gz?split=val")
    parser.add_argument("judges", nargs="+", help="exported judge folders (or zoo names), two or more")
    parser.add_argument("--out", required=True, help="the folder to write the soup judge to")
    parser.add_argument("--calibrate", nargs="*", default=[], metavar="SOURCE",
                        help="labelled sources (bertjudge.data.sources specs) to fit the soup's temperature on; "
                             "use the recipe's val sources")
    parser.add_argument("--name", default=None, help="the soup's name in judge.json (default: the --out folder's parent)")
    args = parser.parse_args(argv)

    from bertjudge.api import Judge
    from bertjudge.data.sources import load_source
    from bertjudge.training import calibrate

    try:
        judges = [Judge.load(spec) for spec in args.judges]
        if not all(isinstance(judge, JudgeModule) for judge in judges):
            raise SoupError("only trained judges (exported folders) can be averaged")
        soup = average_judges(judges, names=list(args.judges))
    except (SoupError, FileNotFoundError) as error:
        print(f"bertjudge soup: {error}", file=sys.stderr)
        return 2
    out = Path(args.out)
    soup.provenance["name"] = args.name or (out.parent.name if out.name == "judge" else out.name)
    records = [row for spec in args.calibrate for row in load_source(spec)]
    calibration = calibrate(soup, records) if records else {}
    soup.provenance["calibration"] = calibration or {"temperature": soup.temperature,
                                                     "fitted": "no: the mean of the ingredients' temperatures"}
    soup.export(out)
    print(f"averaged {len(judges)} judges into {out}")
    if calibration:
        print(f"temperature {calibration['temperature']:.3f} fitted on {calibration['rows']} rows: "
              f"ECE {calibration['ece_before']:.4f} -> {calibration['ece_after']:.4f}")
    else:
        print(f"temperature {soup.temperature:.3f}: the ingredients' mean (give --calibrate to fit it)")
    return 0
