"""``python -m bertjudge bench run|publish|pareto|archs``: measure FLOPs, latency and memory of judges; publish
the zoo README and the Pareto plot from the results files.

``bench run`` measures every subject (or ``--only`` some), writes the CSVs, then regenerates
``zoo/README.md`` and ``benchmarks/pareto.png`` from them: one command for everything published.
``bench publish`` regenerates those two from the CSVs alone."""

from __future__ import annotations

import argparse
import fnmatch
import sys
from pathlib import Path

from bertjudge.cli.common import CommandError, check_output
from bertjudge.core.records import RecordError
from bertjudge.evaluation import bench, bench_flops, bench_results, bench_timing, publish
from bertjudge.zoo import registry as zoo


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
        "--data",
        action="append",
        help="labelled records the accuracy is measured on, every row; repeatable, one accuracy row per judge and "
        f"file (default {' and '.join(str(p) for p in bench.EVAL_FILES)}; the table shows "
        f"{bench_results.HEADLINE_SET})",
    )
    run_p.add_argument("--eval", dest="old_eval", help=argparse.SUPPRESS)  # renamed --data: parsed to say so
    run_p.add_argument(
        "--reasoning-tokens",
        type=int,
        default=bench_flops.REASONING_TOKENS,
        help=f"tokens a reasoning judge generates before its verdict (default {bench_flops.REASONING_TOKENS})",
    )
    run_p.add_argument(
        "--max-timed-params",
        type=float,
        default=bench_timing.MAX_TIMED_PARAMS,
        help="time only models smaller than this",
    )
    run_p.add_argument("--no-timing", action="store_true", help="count FLOPs (and accuracy) only, do not time")
    run_p.add_argument(
        "--max-accuracy-minutes",
        type=float,
        default=bench.MAX_ACCURACY_MINUTES,
        help="a judge whose latency at batch 1 x the rows of the --data sets is above this is costed, not scored; "
        f"its row says why (default {bench.MAX_ACCURACY_MINUTES:g}; untimed judges are always scored)",
    )
    run_p.add_argument(
        "--min-run-time",
        type=float,
        default=bench_timing.MIN_RUN_TIME,
        help="seconds of timed runs at batch 1 per round, half per larger batch "
        f"(default {bench_timing.MIN_RUN_TIME:g})",
    )
    run_p.add_argument(
        "--rounds",
        type=int,
        default=bench.ROUNDS,
        help=f"times each subject is timed, in turns over all of them; a row keeps the medians (default {bench.ROUNDS})",
    )
    run_p.add_argument(
        "--max-load",
        type=float,
        default=bench_timing.MAX_LOAD,
        help="CPU time other processes may take while a judge is timed, per core, before its row is busy "
        f"(default {bench_timing.MAX_LOAD:g}; 0 refuses any)",
    )
    run_p.add_argument(
        "--allow-busy", action="store_true", help="write busy rows marked busy (the table leaves them out)"
    )
    run_p.add_argument("--results", help="results folder (default benchmarks/results)")
    _render_flags(run_p, "after measuring; by default only without --results")
    run_p.add_argument("--no-render", action="store_true", help="write the CSVs only")
    pub = sub.add_parser("publish", help="regenerate zoo/README.md and benchmarks/pareto.png from the results files")
    pub.add_argument("--results", help="results folder (default benchmarks/results)")
    pub.add_argument("--registry", help="registry file (default bertjudge/zoo/registry.yaml)")
    _render_flags(pub, "from the results files")
    pareto = sub.add_parser("pareto", help="the Pareto table and plot from the results files")
    pareto.add_argument("--results", help="results folder (default benchmarks/results)")
    pareto.add_argument("--table", default="cost-cpu-fp32", help="the cost file to plot (prefix of its name)")
    pareto.add_argument(
        "--output",
        default=str(bench_results.PARETO_PNG),
        help=f"the plot to write (default {bench_results.PARETO_PNG})",
    )
    sub.add_parser("archs", help="list the architectures costed and their sources")
    return p


def _render_flags(p: argparse.ArgumentParser, when: str) -> None:
    p.add_argument("--readme", help=f"the zoo README to regenerate {when} (default {zoo.DEFAULT_README})")
    p.add_argument("--plot", help=f"the Pareto plot to regenerate {when} (default {bench_results.PARETO_PNG})")
    p.add_argument("--table", default="cost-cpu-fp32", help="the cost file to plot (prefix of its name)")


def run(args: argparse.Namespace) -> int:
    if args.command == "archs":
        for key, arch in bench_flops.ARCHITECTURES.items():
            print(f"{key:<16} {arch.kind:<8} {arch.hub_id}")
        return 0
    if args.command == "publish":
        _check_results(args.results)
        _render(args, args.readme or zoo.DEFAULT_README, args.plot or bench_results.PARETO_PNG)
        return 0
    if args.command == "pareto":
        _check_results(args.results)
        check_output(args.output, [])
        tables = bench_results.result_tables(args.results)
        title = next((t for t in tables if t.startswith(args.table)), None)
        if title is None:
            raise CommandError(
                f"no results file starting with {args.table!r} in {args.results or bench_results.RESULTS_DIR}",
                usage=True,
            )
        print(bench_results.markdown_table(tables[title]))
        _print_ratio(tables[title])
        print(f"wrote {bench_results.plot_pareto(tables[title], args.output)}")
        return 0
    return _measure(args)


def _check_results(results: str | None) -> None:
    if results and not Path(results).is_dir():
        raise CommandError(f"--results {results}: no such folder", usage=True)


def _render(args: argparse.Namespace, readme, plot) -> None:
    """Regenerate the README and the plot (either may be None) from the results files; say what was left out."""
    for path in filter(None, (readme, plot)):
        check_output(path, [], flag="--readme" if path == readme else "--plot")
    for path in publish.regenerate(readme, plot, args.registry, args.results, args.table):
        print(f"wrote {path}")
    for title, names in bench_results.busy_rows(args.results).items():
        print(f"{title}: left out of the table (busy): {', '.join(names)}", file=sys.stderr)


def _print_ratio(rows: list[dict]) -> None:
    ratio = bench_results.flops_ratio(rows)
    if ratio:
        print(f"FLOPs(qwen3-14b.direct) / FLOPs(eurobert-210m.bertjudge) = {ratio:.0f}")


def _check_run_args(args: argparse.Namespace) -> None:
    """Refuse a wrong ``bench run`` call before anything is read or measured."""
    for flag, value in (("--n", args.n), ("--reasoning-tokens", args.reasoning_tokens)):
        if value < 1:
            raise CommandError(f"{flag} must be at least 1", usage=True)
    if args.max_timed_params <= 0:
        raise CommandError("--max-timed-params must be above 0", usage=True)
    if args.min_run_time <= 0:
        raise CommandError("--min-run-time must be above 0", usage=True)
    if args.rounds < 1:
        raise CommandError("--rounds must be at least 1", usage=True)
    if args.max_load < 0:
        raise CommandError("--max-load must be at least 0", usage=True)
    if args.max_accuracy_minutes <= 0:
        raise CommandError("--max-accuracy-minutes must be above 0", usage=True)
    if args.old_eval:
        raise CommandError(f"--eval is now --data: use --data {args.old_eval}", usage=True)
    for data in args.data or ():
        if not Path(data).is_file():
            raise CommandError(f"--data {data}: {'is a folder' if Path(data).is_dir() else 'no such file'}", usage=True)
    for folder in args.judge:
        if not (Path(folder) / "judge.json").is_file():
            raise CommandError(f"{folder}: not an exported judge folder (no judge.json)", usage=True)


def _measure(args: argparse.Namespace) -> int:
    _check_run_args(args)
    if args.results:
        check_output(args.results, folder=True, flag="--results")
    # results elsewhere (a trial) do not overwrite the published README and plot unless asked to
    published = args.results is None and not args.no_render
    readme = None if args.no_render else args.readme or (zoo.DEFAULT_README if published else None)
    plot = None if args.no_render else args.plot or (bench_results.PARETO_PNG if published else None)
    for path, flag in ((readme, "--readme"), (plot, "--plot")):
        if path is not None:
            check_output(path, args.data or [], flag=flag)
    try:
        eval_sets = bench.load_eval_sets(args.data)  # read and checked before anything is measured
    except (RecordError, bench.BenchError) as err:
        raise CommandError(str(err), usage=True) from err
    import torch

    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else []) if args.device == "auto" else [args.device]
    subjects = bench.default_subjects(args.registry, args.judge)
    if args.only:
        subjects = [s for s in subjects if any(fnmatch.fnmatch(s.name, pattern) for pattern in args.only)]
    if not subjects:
        raise CommandError(f"no subject matches {args.only}", usage=True)
    records = bench.eval_records(args.n, args.seed)
    missing = [str(path) for path in bench.EVAL_FILES if not Path(path).is_file()] if not args.data else []
    if missing:
        print(f"bench: {', '.join(missing)} not found; no accuracy is measured on it", file=sys.stderr)
    tokenizer = bench.proxy_tokenizer()
    refused, failed = [], []
    for device in devices:

        def progress(number, subject, device=device):
            of = f" (round {number} of {args.rounds})" if args.rounds > 1 else ""
            print(f"[{device}] {subject.name}{of} ...", file=sys.stderr, flush=True)

        def write_round(number, results):
            """Every round's rows are written as it ends, so an interrupted run keeps the rounds it finished;
            accuracy once (round 1: it does not depend on the machine's load), busy rows only when allowed."""
            if number == 1:
                rows = [row for _, accuracies in results for row in accuracies]
                bench_results.write_results(rows, "accuracy", args.results)
            costs = [cost for cost, _ in results if cost is not None and (not cost.get("busy") or args.allow_busy)]
            bench_results.write_results(costs, "cost", args.results)

        def on_error(subject, error, device=device):
            lines = str(error).strip().splitlines()
            why = f"{type(error).__name__}: {lines[0] if lines else ''}".rstrip(": ")
            failed.append(f"{subject.name} [{device}] ({why})")
            print(f"[{device}] {subject.name}: failed ({why}); the others go on", file=sys.stderr)

        results = bench.measure_rounds(
            subjects,
            records,
            args.rounds,
            eval_sets,
            progress,
            write_round,
            on_error,
            device=device,
            dtype=args.dtype,
            timing=not args.no_timing,
            max_timed_params=args.max_timed_params,
            k=args.reasoning_tokens,
            tokenizer=tokenizer,
            min_run_time=args.min_run_time,
            max_load=args.max_load,
            max_accuracy_minutes=args.max_accuracy_minutes,
        )
        for subject, (cost, _) in zip(subjects, results):
            if cost is None:  # failed in its first round: said above
                continue
            print(f"[{device}] {subject.name}: {_summary(cost)}", file=sys.stderr, flush=True)
            if cost.get("busy") and not args.allow_busy:
                refused.append(f"{subject.name} [{device}] (other load {cost['other_load']} per core)")
                print(f"    not written: busy (other processes above --max-load {args.max_load:g})", file=sys.stderr)
                continue
            print(f"wrote {subject.name} to {bench_results.results_file('cost', cost, args.results)}")
        _print_ratio(
            bench_results.read_csv(
                bench_results.results_file("cost", bench.environment(device, args.dtype), args.results)
            )
        )
    if readme or plot:
        _render(args, readme, plot)
    problems = []
    if refused:
        problems.append(
            f"refused {len(refused)} row(s) timed on a busy machine: {'; '.join(refused)}; "
            "measure again when the machine is idle, or pass --allow-busy to write them marked busy"
        )
    if failed:
        problems.append(f"{len(failed)} subject(s) failed: {'; '.join(failed)}; the others were written")
    if problems:
        raise CommandError(" | ".join(problems))
    return 0


def _summary(cost: dict) -> str:
    """One line of what was measured: GFLOPs, tokens, p50 with its runs and spread, peak memory, others' load."""
    flops, p50 = cost.get("flops"), cost.get("latency_p50_ms")
    parts = [f"{'' if flops is None else f'{flops / 1e9:.4g}'} GFLOPs at {cost.get('tokens', '-')} tokens"]
    if p50 not in (None, ""):
        rounds = f" in {cost['rounds']} rounds" if cost.get("rounds", 1) > 1 else ""
        parts.append(
            f"p50 {float(p50):.3g} ms ({cost['timing_runs']} runs{rounds}, spread {cost['latency_spread']:.1%})"
        )
    if cost.get("peak_mem_mb") not in (None, ""):
        parts.append(f"peak {cost['peak_mem_mb']} MB")
    if cost.get("other_load") not in (None, ""):
        parts.append(f"other load {cost['other_load']} per core" + (" (BUSY)" if cost.get("busy") else ""))
    return ", ".join(parts)
