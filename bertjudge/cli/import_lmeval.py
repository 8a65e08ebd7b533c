"""``python -m bertjudge import-lmeval``: read lm-evaluation-harness samples files as records."""

from __future__ import annotations

import argparse
from pathlib import Path

from bertjudge.cli.common import CommandError, check_output, check_writes
from bertjudge.core.records import RecordError, write_records
from bertjudge.pipeline import lmeval


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m bertjudge import-lmeval",
        description=lmeval.__doc__.split("\n\n")[0],
        epilog=lmeval.__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--input",
        nargs="+",
        required=True,
        help="samples_<task>_<timestamp>.jsonl files or folders holding them (searched recursively)",
    )
    p.add_argument(
        "--output", required=True, help="output folder: one <task>.<model>.<timestamp>.jsonl per samples file"
    )
    p.add_argument("--model", help="the candidate model (default: from the folder lm-eval wrote into)")
    p.add_argument("--filter", help="which lm-eval filter's metric labels the row (default: the first listed)")
    p.add_argument("--metric", help="the 0/1 metric to label with (default: the first of the row's metrics)")
    p.add_argument("--category", help="the category of every task (default: from the task name)")
    return p


def run(args: argparse.Namespace) -> int:
    out = check_output(args.output, folder=True)
    try:  # every file is read (and checked) before any is written
        files = lmeval.sample_files(args.input)
        results = [(f, *_read(f, args)) for f in files]
    except (RecordError, FileNotFoundError) as err:
        raise CommandError(str(err), usage=True) from err
    names = {path: _name(path, records) for path, records, _ in results if records}
    check_writes([out / name for name in names.values()], files)
    for path, records, skipped in results:
        if skipped:
            print(f"{path.name}: skipped {skipped} documents without generated text (log-likelihood task)")
        if records:
            name = names[path]
            write_records(out / name, records)
            labelled = sum(r["label"] is not None for r in records)
            print(f"{path.name}: {len(records)} records ({labelled} labelled) → {out / name}")
    return 0


def _read(path: Path, args: argparse.Namespace) -> tuple[list[dict], int]:
    """The records of one samples file; lm-eval's results file beside it (if any) gives the task's question."""
    match = lmeval.SAMPLES.match(path.name)  # not a samples file: read_samples says so
    config = lmeval.task_config(lmeval.results_of(path)[1], match["task"]) if match else {}
    return lmeval.read_samples(path, args.model, args.filter, args.metric, args.category, config)


def _name(path: Path, records: list[dict]) -> str:
    """The output file of a samples file: ``<task>.<model>.<timestamp>.jsonl``."""
    model = records[0]["candidate_model"].replace("/", "--")
    return f"{records[0]['task']}.{model}.{lmeval.SAMPLES.match(path.name)['time']}.jsonl"
