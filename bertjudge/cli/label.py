"""``python -m bertjudge label``: label candidates with a teacher (LLM judge, rules or humans)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from bertjudge.cli.common import CommandError, check_output, check_writes
from bertjudge.core.records import RecordError, read_records
from bertjudge.pipeline import label


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m bertjudge label",
        description=label.__doc__.split("\n\n")[0],
        epilog=label.__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--teacher", required=True, help="rule:math-verify | rule:exact-match | rule:regex | human | llm:<model>"
    )
    p.add_argument("--input", nargs="+", required=True, help="record files or folders")
    p.add_argument("--output", required=True, help="output folder (one file per input, same name)")
    p.add_argument("--labels", help="human teacher: file of id → label")
    p.add_argument("--threshold", type=float, default=0.5, help="rule:regex ROUGE-L threshold (default 0.5)")
    p.add_argument("--server", help="llm teacher: OpenAI-compatible API root, e.g. http://localhost:8000/v1")
    p.add_argument("--mode", choices=("reasoning", "direct"), default="reasoning", help="llm teacher mode")
    p.add_argument("--max-new-tokens", type=int, default=512, help="llm teacher: generation bound")
    p.add_argument("--batch-size", type=int, default=8, help="llm teacher: local batch size")
    p.add_argument("--revision", help="llm teacher: model revision, recorded as provenance")
    p.add_argument("--chunk-size", type=int, default=256, help="rows per partial-file flush (resuming)")
    return p


def run(args: argparse.Namespace) -> int:
    for flag, value in (
        ("--max-new-tokens", args.max_new_tokens),
        ("--batch-size", args.batch_size),
        ("--chunk-size", args.chunk_size),
    ):
        if value < 1:
            raise CommandError(f"{flag} must be at least 1", usage=True)
    check_output(args.output, folder=True)
    try:
        files = label.input_files(args.input)
        check_writes(
            [Path(args.output) / f.name for f in files] + [Path(args.output) / label.REPORT_FILE],
            [*files, *([args.labels] if args.labels else [])],
        )
        inputs = {f: read_records(f) for f in files}  # validate everything before labelling anything
        llm = (
            {
                "server": args.server,
                "mode": args.mode,
                "max_new_tokens": args.max_new_tokens,
                "batch_size": args.batch_size,
                "revision": args.revision,
            }
            if args.teacher.startswith("llm:")
            else {}
        )
        teacher = label.make_teacher(args.teacher, args.labels, args.threshold, **llm)
    except (RecordError, ValueError, FileNotFoundError) as err:
        raise CommandError(str(err), usage=True) from err
    out, labelled = Path(args.output), []
    for path, records in inputs.items():
        labelled += label.label_file(teacher, records, out / path.name, args.chunk_size)
    summary = label.report(labelled)
    out.mkdir(parents=True, exist_ok=True)
    (out / label.REPORT_FILE).write_text(json.dumps(summary, indent=2) + "\n")
    for task, counts in sorted(summary["tasks"].items()):
        print(
            f"{task}: {counts['rows']} rows, {counts['labelled']} labelled, {counts['positive']} correct, "
            f"{counts['invalid']} invalid"
        )
    print(
        f"invalid-output rate {summary['invalid_rate']:.1%}; wrote {len(inputs)} files and {label.REPORT_FILE} to {out}"
    )
    return 0
