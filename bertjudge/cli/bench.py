"""``python -m bertjudge bench run|pareto|archs``: measure FLOPs, latency and memory of judges; the Pareto plot."""

from __future__ import annotations

import argparse
import fnmatch
import sys
from pathlib import Path

from bertjudge.cli.common import CommandError, check_output
from bertjudge.core.records import RecordError
from bertjudge.evaluation import bench


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m bertjudge bench",
        description=bench.__doc__.split("\n\n")[0],
        epilog="The protocol is in benchmarks/README.md.",
    )
    sub = p.add_subparsers(dest="command", required=True)
    run_p = sub.add_parser("run", help="measure judges and baselines, write benchmarks/results/*.csv")
    run_p.add_argument("--only", nargs="*", help="names or glob patterns to measure (default: all)")
    run_p.add_argument("--judge", action="append", default=[], help="an exported judge folder (repeatable)")
    run_p.add_argument("--registry", help="registry file (default bertjudge/zoo/registry.yaml)")
    run_p.add_argument("--device", default="auto", help="cpu, cuda or auto (cpu, and cuda when present)")
    run_p.add_argument("--dtype", default="fp32", choices=["fp32", "bf16", "fp16"], help="weights dtype (default fp32)")
    run_p.add_argument("--n", type=int, default=2000, help="embedded test records (median token length)")
    run_p.add_argument("--seed", type=int, default=0, help="seed of the embedded test records (default 0)")
    run_p.add_argument(
        "--eval",
        help="labelled records the accuracy is measured on, every row (default data/real/real-test-v1.jsonl.gz)",
    )
    run_p.add_argument(
        "--reasoning-tokens",
        type=int,
        default=bench.REASONING_TOKENS,
        help=f"tokens a reasoning judge generates before its verdict (default {bench.REASONING_TOKENS})",
    )
    run_p.add_argument("--max-timed-params", type=float, default=3e9, help="time only models smaller than this")
    run_p.add_argument("--no-timing", action="store_true", help="count FLOPs only")
    run_p.add_argument("--results", help="results folder (default benchmarks/results)")
    pareto = sub.add_parser("pareto", help="the Pareto table and plot from the results files")
    pareto.add_argument("--results", help="results folder (default benchmarks/results)")
    pareto.add_argument("--table", default="cost-cpu-fp32", help="the cost file to plot (prefix of its name)")
    pareto.add_argument(
        "--output", default=str(bench.PARETO_PNG), help=f"the plot to write (default {bench.PARETO_PNG})"
    )
    sub.add_parser("archs", help="list the architectures costed and their sources")
    return p


def run(args: argparse.Namespace) -> int:
    if args.command == "archs":
        for key, arch in bench.ARCHITECTURES.items():
            print(f"{key:<16} {arch.kind:<8} {arch.hub_id}")
        return 0
    if args.command == "pareto":
        if args.results and not Path(args.results).is_dir():
            raise CommandError(f"--results {args.results}: no such folder", usage=True)
        check_output(args.output, [])
        tables = bench.result_tables(args.results)
        title = next((t for t in tables if t.startswith(args.table)), None)
        if title is None:
            raise CommandError(
                f"no results file starting with {args.table!r} in {args.results or bench.RESULTS_DIR}", usage=True
            )
        print(bench.markdown_table(tables[title]))
        _print_ratio(tables[title])
        print(f"wrote {bench.plot_pareto(tables[title], args.output)}")
        return 0
    return _measure(args)


def _print_ratio(rows: list[dict]) -> None:
    ratio = bench.flops_ratio(rows)
    if ratio:
        print(f"FLOPs(qwen3-14b.direct) / FLOPs(eurobert-210m.bertjudge) = {ratio:.0f}")


def _measure(args: argparse.Namespace) -> int:
    for flag, value in (("--n", args.n), ("--reasoning-tokens", args.reasoning_tokens)):
        if value < 1:
            raise CommandError(f"{flag} must be at least 1", usage=True)
    if args.max_timed_params <= 0:
        raise CommandError("--max-timed-params must be above 0", usage=True)
    if args.eval and not Path(args.eval).is_file():
        raise CommandError(
            f"--eval {args.eval}: {'is a folder' if Path(args.eval).is_dir() else 'no such file'}", usage=True
        )
    for folder in args.judge:
        if not (Path(folder) / "judge.json").is_file():
            raise CommandError(f"{folder}: not an exported judge folder (no judge.json)", usage=True)
    if args.results:
        check_output(args.results, folder=True, flag="--results")
    try:
        eval_set = bench.load_eval_set(args.eval)  # read and checked before anything is measured
    except RecordError as err:
        raise CommandError(str(err), usage=True) from err
    import torch

    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else []) if args.device == "auto" else [args.device]
    subjects = bench.default_subjects(args.registry, args.judge)
    if args.only:
        subjects = [s for s in subjects if any(fnmatch.fnmatch(s.name, pattern) for pattern in args.only)]
    if not subjects:
        raise CommandError(f"no subject matches {args.only}", usage=True)
    records = bench.eval_records(args.n, args.seed)
    if eval_set is None:
        print(f"bench: {bench.EVAL_FILE} not found; no accuracy is measured", file=sys.stderr)
    tokenizer = bench.proxy_tokenizer()
    for device in devices:
        for subject in subjects:
            print(f"[{device}] {subject.name} ...", file=sys.stderr, flush=True)
            cost, accuracy = bench.measure(
                subject,
                records,
                device,
                args.dtype,
                timing=not args.no_timing,
                max_timed_params=args.max_timed_params,
                k=args.reasoning_tokens,
                tokenizer=tokenizer,
                eval_set=eval_set,
            )
            flops = cost.get("flops")
            p50 = cost.get("latency_p50_ms")
            print(
                f"    {'' if flops is None else f'{flops / 1e9:.4g}'} GFLOPs at {cost.get('tokens', '-')} tokens, "
                f"p50 {'' if p50 in (None, '') else f'{float(p50):.3g}'} ms",
                file=sys.stderr,
                flush=True,
            )
            [path] = bench.write_results([cost], "cost", args.results)  # row by row: a failure keeps the others
            if accuracy:
                bench.write_results([accuracy], "accuracy", args.results)
        print(f"wrote {path} and its accuracy file")
        _print_ratio(bench.read_csv(path))
    return 0
