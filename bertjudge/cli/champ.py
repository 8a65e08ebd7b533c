"""``python -m bertjudge champ``: real GPT/PaLM math solutions (champ-dataset) as rule-labelled records."""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from bertjudge.cli.common import CommandError, check_output
from bertjudge.core.records import RecordError, is_record_file, write_records
from bertjudge.pipeline import champ


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m bertjudge champ",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=(
            "Real LLM solutions of competition math (CHAMP: 270 problems; GPT-3.5, GPT-4, GPT-4 Turbo and\n"
            "PaLM 2 Medium under 18 prompt variants) as records: the candidate is the model's solution turn,\n"
            "its one-sentence summary is kept in meta.summary. Labels (rule:math-verify-confirmed) only where\n"
            "the reference is an exact value and the final answers extracted from the solution and from the\n"
            "summary agree under Math-Verify; every other row is left out and counted by reason. Splits\n"
            "train/val/test (70/10/20) by problem. Needs champ-dataset (pip install 'bertjudge[real]') or --input."
        ),
        epilog="Example (the repository's data/real/champ-rule-v2.jsonl.gz): python -m bertjudge champ "
        "--output data/real/champ-rule-v2.jsonl.gz --balance --report data/real/champ-rule-v2.report.json. "
        "Read the rules in the module docstring (bertjudge/pipeline/champ.py).",
    )
    p.add_argument("--output", required=True, help="output record file (.jsonl, .jsonl.gz or .parquet)")
    p.add_argument("--input", help="a CHAMP v0.json-format file (default: the installed champ-dataset's)")
    p.add_argument("--models", nargs="+", help="only these models (GPT-3.5, GPT-4, 'GPT-4 Turbo', 'PaLM 2 Medium')")
    p.add_argument("--variants", nargs="+", help="only these prompt variants ('0-Shot', '5-Shot', …)")
    p.add_argument(
        "--keep-unlabelled",
        action="store_true",
        help="also write the rows left out, with a null label and the reason in meta.left_out "
        "(to label them with another teacher)",
    )
    p.add_argument(
        "--balance",
        action="store_true",
        help="keep as many correct as wrong solutions per model (round robin over problems)",
    )
    p.add_argument("--max-rows", type=int, help="with --balance: at most N labelled rows, shared equally by models")
    p.add_argument("--seed", type=int, default=0, help="with --balance: sampling seed (default 0)")
    p.add_argument("--report", help="write the counts as JSON here too")
    return p


def run(args: argparse.Namespace) -> int:
    if args.max_rows is not None and not args.balance:
        raise CommandError("--max-rows goes with --balance", usage=True)
    if args.max_rows is not None and args.max_rows < 2:
        raise CommandError("--max-rows must be at least 2 (as many correct as wrong rows)", usage=True)
    if not is_record_file(args.output):
        raise CommandError(f"--output {args.output}: give a .jsonl, .jsonl.gz or .parquet file", usage=True)
    check_output(args.output, [args.input] if args.input else [])
    if args.report:
        check_output(args.report, [args.input, args.output] if args.input else [args.output], flag="--report")
    if args.input and Path(args.input).is_dir():
        raise CommandError(f"--input {args.input}: is a folder; give a CHAMP v0.json-format file", usage=True)
    try:
        problems = champ.load(args.input)
        source = champ.source_info(args.input)
    except (RecordError, FileNotFoundError) as err:
        raise CommandError(str(err), usage=True) from err
    records, skipped = champ.convert(problems, args.models, args.variants, args.input or "champ-dataset")
    if not records:
        raise CommandError("no conversations matched (check --models and --variants)", usage=True)
    records = champ.label_records(records)
    summary = champ.report(records, skipped, source)
    rows = [r for r in records if r["label"] is not None]
    if args.balance:
        rows = champ.balanced_sample(rows, args.max_rows, args.seed)
    if args.keep_unlabelled:
        kept = {r["id"] for r in rows}
        rows = [r for r in records if r["id"] in kept or r["label"] is None]
    if not rows:
        raise CommandError("no rows to write: no conversation could be labelled by rules")
    write_records(args.output, rows)
    summary["written"] = champ.report(rows, Counter())
    del summary["written"]["skipped_conversations"], summary["written"]["source"], summary["written"]["label_source"]
    if args.report:
        Path(args.report).parent.mkdir(parents=True, exist_ok=True)
        Path(args.report).write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n")
    total = summary["total"]
    print(
        f"{total['rows']} solutions ({sum(skipped.values())} conversations skipped); {total['labelled']} labelled "
        f"({total['fraction_labelled']:.1%}), {total['fraction_correct']:.1%} correct"
    )
    for reason, n in summary["left_out"].items():
        print(f"  left out: {n:6d}  {reason}")
    for model, c in summary["models"].items():
        print(f"  {model:<14} {c['rows']:6d} rows, {c['labelled']:5d} labelled, {c['fraction_correct']:.1%} correct")
    written = summary["written"]["total"]
    print(
        f"wrote {written['rows']} rows ({written['labelled']} labelled, {written['fraction_correct']:.1%} correct) "
        f"to {args.output}"
    )
    return 0
