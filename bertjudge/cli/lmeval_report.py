"""``python -m bertjudge lmeval-report``: judge lm-eval ``--log_samples`` output beside lm-eval's own metric."""

from __future__ import annotations

import argparse

from bertjudge.cli.common import check_output
from bertjudge.judges.routing import SPEC_HELP
from bertjudge.pipeline import lmeval_report


def parser() -> argparse.ArgumentParser:
    doc = lmeval_report.__doc__
    p = argparse.ArgumentParser(
        prog="python -m bertjudge lmeval-report",
        description=doc.split("\n\n")[0],
        epilog=doc.split("\n\n", 1)[1] + "\nexample: python -m bertjudge lmeval-report "
        "--input runs/lmeval --judge regex --output runs/lmeval-report",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--input",
        nargs="+",
        required=True,
        help="lm-eval output folders (searched recursively for samples_*.jsonl) or samples files",
    )
    p.add_argument(
        "--judge", required=True, help=f"'regex', 'contains', the folder of an exported judge, a zoo name, {SPEC_HELP}"
    )
    p.add_argument("--output", required=True, help="folder for report.json, report.md and disagreements.jsonl")
    p.add_argument("--model", help="the model's name (default: from lm-eval's results file, else its folder)")
    p.add_argument("--filter", help="whose lm-eval filter's metric to compare with (default: the first listed)")
    p.add_argument("--metric", help="lm-eval's 0/1 metric to compare with (default: the first of the row's metrics)")
    p.add_argument("--category", help="the category of every task (default: from the task name; see import-lmeval)")
    p.add_argument("--batch-size", type=int, default=32, help="rows per forward pass (default 32)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    return p


def _num(x) -> str:
    return "nan" if x is None else f"{x:.3f}"


def run(args: argparse.Namespace) -> int:
    out = check_output(args.output, folder=True)
    report, disagreements = lmeval_report.lmeval_report(  # the files are read before the judge is loaded
        args.input,
        args.judge,
        model=args.model,
        filter_name=args.filter,
        metric=args.metric,
        category=args.category,
        batch_size=args.batch_size,
        progress=not args.no_progress,
    )
    paths = lmeval_report.write_report(report, disagreements, out)
    for g in report["groups"]:
        versus = "" if g["lmeval"] is None else f"; lm-eval {g['lmeval_metric']} {g['lmeval']:.3f}"
        if g["agreement"] is not None:
            versus += f", agreement {g['agreement']:.3f}, {g['disagreements']} disagreements"
        if g["in_harness"] is not None:
            versus += f"; bertjudge in lm-eval ({g['in_harness']['filter']}) {g['in_harness']['value']:.3f}"
        n = f"n={g['n']}" + ("" if g["repeats"] == 1 else f" ({g['docs']} documents × up to {g['repeats']} responses)")
        print(
            f"{g['task']} · {g['model']}: {n}, {report['judge']['name']} accuracy {g['accuracy']:.3f} "
            f"[{_num(g['interval'][0])}, {_num(g['interval'][1])}]{versus}"
        )
    for s in report["skipped"]:
        print(f"{s['task']} · {s['model']}: skipped {s['skipped']} documents without generated text (log-likelihood)")
    print(f"wrote {paths['json']}, {paths['md']}, {paths['disagreements']}")
    return 0
