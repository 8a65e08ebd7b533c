"""``python -m bertjudge zoo list|show|pull|publish|verify|readme``: list, show, pull, publish and verify
published judges, and regenerate ``zoo/README.md``."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import yaml

from bertjudge.cli.common import CommandError, check_output
from bertjudge.evaluation import bench_results
from bertjudge.evaluation.publish import publish, render_readme
from bertjudge.zoo import registry as zoo
from bertjudge.zoo.uri import NAME, URIError, parse_target


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m bertjudge zoo",
        description=zoo.__doc__.split("\n\n")[0],
        epilog="\n\n".join(zoo.__doc__.split("\n\n")[1:]),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--registry", help=f"registry file (default {zoo.DEFAULT_REGISTRY}, or $BERTJUDGE_REGISTRY)")
    sub = p.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="list the entries")
    show = sub.add_parser("show", help="an entry, its cache state and its measured results")
    show.add_argument("name", help="the entry name, arch.tag")
    pull_p = sub.add_parser("pull", help="download and verify an entry into the cache")
    pull_p.add_argument("name", help="the entry name, arch.tag")
    pull_p.add_argument(
        "--input", dest="local_copy", metavar="LOCAL_COPY", help="use this local copy of the entry's files (offline)"
    )
    pull_p.add_argument("--from", dest="old_from", help=argparse.SUPPRESS)  # renamed --input: parsed to say so
    pull_p.add_argument("--force", action="store_true", help="download again even when cached")
    pull_p.add_argument("--trust-remote-code", action="store_true", help="also download the checkpoint's code")
    pull_p.add_argument(
        "--token",
        default=os.environ.get("HF_TOKEN"),
        help="Hugging Face token for private repositories (default: $HF_TOKEN)",
    )
    pub = sub.add_parser("publish", help="measure an exported judge, copy it to the zoo and register it")
    pub.add_argument("path", help="the exported judge folder (with judge.json)")
    pub.add_argument("--name", required=True, help="the entry name, arch.tag (e.g. minilm-l6.embedded-v1)")
    pub.add_argument("--license", required=True, help="the judge's license, e.g. Apache-2.0")
    pub.add_argument("--to", required=True, help="a folder, or hf://org/name (needs --token or HF_TOKEN)")
    pub.add_argument(
        "--public",
        action="store_true",
        help="make a new hf:// repository public (default: private, so that nothing is public by accident; "
        "an existing repository keeps its visibility)",
    )
    pub.add_argument(
        "--token",
        default=os.environ.get("HF_TOKEN"),
        help="Hugging Face token for uploading to hf:// (default: $HF_TOKEN)",
    )
    pub.add_argument("--architecture", help="architecture key for the cost model (default: from the backbone)")
    pub.add_argument("--n", type=int, default=2000, help="embedded test records scored for accuracy")
    pub.add_argument("--results", help="results folder (default benchmarks/results)")
    pub.add_argument("--no-timing", action="store_true", help="count FLOPs only, do not time")
    ver = sub.add_parser("verify", help="re-hash a pulled entry")
    ver.add_argument("name", help="the entry name, arch.tag")
    readme = sub.add_parser("readme", help="regenerate zoo/README.md from the registry and the results")
    readme.add_argument("--results", help="results folder (default benchmarks/results)")
    readme.add_argument(
        "--output", default=str(zoo.DEFAULT_README), help=f"the README to write (default {zoo.DEFAULT_README})"
    )
    return p


def run(args: argparse.Namespace) -> int:
    _check(args)
    try:
        return _run(args)
    except zoo.ZooError as err:
        raise CommandError(str(err)) from err


def _check(args: argparse.Namespace) -> None:
    """Usage errors, before anything is downloaded or measured: a bad registry, an unknown name, a bad folder."""
    if args.command == "pull" and args.old_from is not None:
        raise CommandError(f"--from is now --input: use --input {args.old_from}", usage=True)
    new_registry = args.command == "publish" and not zoo.registry_path(args.registry).is_file()  # publish makes it
    try:
        entries = {} if new_registry else zoo.load_registry(args.registry)
    except zoo.ZooError as err:
        raise CommandError(str(err), usage=True) from err
    if args.command in ("show", "pull", "verify") and args.name not in entries:
        raise CommandError(
            f"{args.name!r} is not in {zoo.registry_path(args.registry)}; "
            "`python -m bertjudge zoo list` shows the names",
            usage=True,
        )
    if args.command == "pull" and args.local_copy is not None and not Path(args.local_copy).is_dir():
        what = "not a folder" if Path(args.local_copy).exists() else "no such folder"
        raise CommandError(f"--input {args.local_copy}: {what}", usage=True)
    if args.command == "verify":
        folder = zoo.cache_dir(zoo.get_entry(args.name, args.registry))
        if not zoo.manifest_path(folder).is_file():
            raise CommandError(
                f"{args.name} is not pulled (no {zoo.manifest_path(folder)}); run "
                f"`python -m bertjudge zoo pull {args.name}` first",
                usage=True,
            )
    if args.command == "readme":
        check_output(args.output)
    if args.command == "publish":
        if not (Path(args.path) / zoo.JUDGE_FILE).is_file():
            raise CommandError(f"{args.path}: not an exported judge folder (no {zoo.JUDGE_FILE})", usage=True)
        if args.n < 1:
            raise CommandError("--n must be at least 1", usage=True)
        if not NAME.match(args.name):
            raise CommandError(
                f"--name {args.name!r}: names are `arch.tag` (lower-case letters, digits, '-' or '_', "
                "with at least one dot)",
                usage=True,
            )
        _check_target(args)
        if args.results:
            check_output(args.results, folder=True, flag="--results")
        if args.name in entries:
            raise CommandError(
                f"{zoo.registry_path(args.registry)}: {args.name!r} is already registered; choose another tag",
                usage=True,
            )


def _check_target(args: argparse.Namespace) -> None:
    """``publish --to``: ``hf://org/name``, or a folder that does not hold the name yet."""
    try:
        target = parse_target(args.to)
    except URIError as err:
        raise CommandError(f"--to {err}", usage=True) from err
    if target.is_folder:
        check_output(target.location, folder=True, flag="--to")
        if (Path(target.location) / args.name).exists():
            raise CommandError(
                f"--to {args.to}: {Path(target.location) / args.name} exists; refusing to overwrite a published judge",
                usage=True,
            )


def _run(args: argparse.Namespace) -> int:
    if args.command == "list":
        for name, e in zoo.load_registry(args.registry).items():
            print(f"{name:<45} {e.source:<55} {e.license[:30]}")
    elif args.command == "show":
        entry = zoo.get_entry(args.name, args.registry)
        print(yaml.safe_dump({args.name: entry.to_dict()}, sort_keys=False, allow_unicode=True).rstrip())
        folder = zoo.cache_dir(entry)
        print(f"# cache: {folder} ({'pulled' if zoo.manifest_path(folder).is_file() else 'not pulled'})")
        for title, rows in bench_results.result_tables().items():
            for row in rows:
                if row["name"] == args.name:
                    print(f"# {title}: " + ", ".join(f"{k}={v}" for k, v in row.items() if v not in ("", None)))
    elif args.command == "pull":
        folder = zoo.pull(args.name, args.registry, args.local_copy, args.force, args.trust_remote_code, args.token)
        print(folder)
    elif args.command == "publish":
        entry = publish(
            args.path,
            args.name,
            args.license,
            args.to,
            args.registry,
            args.token,
            n=args.n,
            architecture=args.architecture,
            results_dir=args.results,
            timing=not args.no_timing,
            private=not args.public,
        )
        print(f"registered {args.name} in {zoo.registry_path(args.registry)}: {entry.source}")
    elif args.command == "verify":
        problems = zoo.verify(args.name, args.registry)
        for problem in problems:
            print(f"{args.name}: {problem}", file=sys.stderr)
        print(f"{args.name}: {'FAILED' if problems else 'ok'}")
        return 1 if problems else 0
    elif args.command == "readme":
        out = Path(args.output)
        tmp = out.with_name(f".{out.name}.tmp")
        tmp.write_text(render_readme(args.registry, args.results))
        os.replace(tmp, out)
        print(f"wrote {out}")
    return 0
