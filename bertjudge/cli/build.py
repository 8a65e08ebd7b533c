"""``python -m bertjudge build``: a balanced training mixture with in- and out-of-domain splits."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import yaml

from bertjudge.cli.common import CommandError, check_output, check_writes
from bertjudge.core.records import RecordError, write_records
from bertjudge.data.sources import load_sources
from bertjudge.pipeline import build


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m bertjudge build",
        description=build.__doc__.split("\n\n")[0],
        epilog=build.__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--input", nargs="+", required=True, help="labelled record files or folders (or bertjudge.data.sources specs)"
    )
    p.add_argument("--mix", help="the mix file (YAML); default: everything to train")
    p.add_argument("--output", required=True, help="output folder")
    return p


def run(args: argparse.Namespace) -> int:
    out = check_output(args.output, folder=True)
    try:
        mix = (yaml.safe_load(Path(args.mix).read_text()) or {}) if args.mix else {}
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as err:
        reason = " ".join(str(err).split())  # YAML's errors span lines
        raise CommandError(f"{args.mix}: cannot read the mix file ({reason})", usage=True) from err
    if not isinstance(mix, dict):
        raise CommandError(f"{args.mix}: the mix file must be a YAML mapping", usage=True)
    try:
        splits, manifest = build.build(load_sources(args.input), mix)
    except (RecordError, ValueError, FileNotFoundError) as err:
        raise CommandError(str(err), usage=True) from err
    check_writes(
        [out / f"{name}.jsonl" for name, rows in splits.items() if rows] + [out / build.MANIFEST],
        [*args.input, *([args.mix] if args.mix else [])],
    )
    for name, rows in splits.items():
        if rows:
            write_records(out / f"{name}.jsonl", rows)
    manifest = {"inputs": args.input, **manifest}
    out.mkdir(parents=True, exist_ok=True)
    (out / build.MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
    for name, info in manifest["splits"].items():
        print(f"{name}: {info['rows']} rows ({info['positive']} correct)")
    print(f"wrote {out}")
    return 0
