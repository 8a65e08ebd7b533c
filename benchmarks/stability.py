"""Run-to-run stability of ``bench run``'s timings: every subject timed twice, in two passes, nothing written.

    python benchmarks/stability.py                                  # every subject bench run times
    python benchmarks/stability.py --only 'minilm-l6.*' regex.v1    # some of them

Each pass times every subject as ``python -m bertjudge bench run`` does (``torch.utils.benchmark``, the
same inputs, rounds and time budget; the second pass forgets the first's timings), then prints per subject the
latency p50 and p95 of both passes, their ratio (second / first), the spread (IQR / median) and the load
other processes put on the CPUs while it was timed. Run it on an idle machine: a subject is stable when
both latencies of one pass are within ``--tolerance`` (15%) of the other's (max / min ≤ 1.15).

The machine's fp32 GEMM speed is measured at the start of each pass and printed: on a shared virtual machine it
drifts by itself, and a subject whose latency ratio is near the inverse of that drift is not what the code did.

Exit status: 0 every timed subject is stable; 1 one is not; 2 one is not and a pass was busy (other
processes above ``--max-load``), so the check says nothing about the benchmark — run it again idle.
"""

from __future__ import annotations

import argparse
import fnmatch
import sys

from bertjudge.evaluation import bench, bench_results, bench_timing

LATENCIES = ("latency_p50_ms", "latency_p95_ms")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--only", nargs="*", help="names or glob patterns to time (default: every subject)")
    p.add_argument("--judge", action="append", default=[], help="an exported judge folder (repeatable)")
    p.add_argument("--registry", help="registry file (default bertjudge/zoo/registry.yaml)")
    p.add_argument("--device", default="cpu", help="cpu or cuda (default cpu)")
    p.add_argument("--dtype", default="fp32", choices=["fp32", "bf16", "fp16"])
    p.add_argument("--n", type=int, default=2000, help="embedded test records (median token length)")
    p.add_argument("--min-run-time", type=float, default=bench_timing.MIN_RUN_TIME, help="as bench run's")
    p.add_argument("--max-timed-params", type=float, default=bench_timing.MAX_TIMED_PARAMS, help="as bench run's")
    p.add_argument("--rounds", type=int, default=bench.ROUNDS, help="as bench run's")
    p.add_argument("--max-load", type=float, default=bench_timing.MAX_LOAD, help="as bench run's")
    p.add_argument("--tolerance", type=float, default=0.15, help="largest relative difference (default 0.15)")
    return p


def time_passes(subjects, records, args, passes: int = 2, speeds: list | None = None) -> list[dict[str, dict]]:
    """Per pass, the cost row of every subject, timed afresh as ``bench run`` times it (``--rounds`` rounds in
    turns, no timing kept from an earlier pass); ``speeds``, when given, gets the machine's fp32 GEMM FLOP/s
    measured at the start of each pass."""
    tokenizer = bench.proxy_tokenizer()
    runs = []
    for number in range(1, passes + 1):
        if speeds is not None:
            speeds.append(bench_timing.gemm_peak())

        def progress(round_number, subject, number=number):
            print(f"pass {number}, round {round_number}: {subject.name} ...", file=sys.stderr, flush=True)

        results = bench.measure_rounds(
            subjects,
            records,
            args.rounds,
            progress=progress,
            device=args.device,
            dtype=args.dtype,
            max_timed_params=args.max_timed_params,
            tokenizer=tokenizer,
            min_run_time=args.min_run_time,
            max_load=args.max_load,
        )
        runs.append({subject.name: cost for subject, (cost, _) in zip(subjects, results)})
    return runs


def ratio(first, second) -> float | None:
    """second / first, or None when either is missing."""
    a, b = bench_results._float(first), bench_results._float(second)
    return b / a if a and b is not None else None


def stable(r: float | None, tolerance: float) -> bool:
    """Whether a ratio is within ``tolerance`` either way (max / min ≤ 1 + tolerance)."""
    return bool(r) and max(r, 1 / r) <= 1 + tolerance


def compare(first: dict[str, dict], second: dict[str, dict], tolerance: float) -> list[dict]:
    """Per subject timed in both passes: both latencies, their ratios, spreads, loads and the verdict."""
    out = []
    for name, a in first.items():
        b = second[name]
        if a.get("latency_p50_ms") in (None, "") or b.get("latency_p50_ms") in (None, ""):
            continue  # not timed (too large here)
        ratios = {key: ratio(a[key], b[key]) for key in LATENCIES}
        out.append(
            {
                "name": name,
                **{f"{key}_{i}": row[key] for key in LATENCIES for i, row in ((1, a), (2, b))},
                **{f"{key}_ratio": r for key, r in ratios.items()},
                "spread": (a["latency_spread"], b["latency_spread"]),
                "other_load": (a.get("other_load"), b.get("other_load")),
                "rounds": (a.get("rounds", ""), b.get("rounds", "")),
                "machine_gflops": (a.get("machine_gflops", ""), b.get("machine_gflops", "")),
                "busy": bool(a.get("busy") or b.get("busy")),
                "stable": all(stable(r, tolerance) for r in ratios.values()),
            }
        )
    return out


def report(rows: list[dict]) -> str:
    lines = [
        "| subject | p50 1 / 2 (ms) | ratio | p95 1 / 2 (ms) | ratio | spread 1 / 2 | rounds 1 / 2 "
        "| machine GFLOP/s 1 / 2 | other load 1 / 2 | |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        verdict = "ok" if r["stable"] else "UNSTABLE"
        lines.append(
            f"| `{r['name']}` | {r['latency_p50_ms_1']:.4g} / {r['latency_p50_ms_2']:.4g} | "
            f"{r['latency_p50_ms_ratio']:.3f} | {r['latency_p95_ms_1']:.4g} / {r['latency_p95_ms_2']:.4g} | "
            f"{r['latency_p95_ms_ratio']:.3f} | {r['spread'][0]:.1%} / {r['spread'][1]:.1%} | "
            f"{r['rounds'][0]} / {r['rounds'][1]} | {r['machine_gflops'][0]} / {r['machine_gflops'][1]} | "
            f"{r['other_load'][0]} / {r['other_load'][1]} | {verdict}{' (busy)' if r['busy'] else ''} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.tolerance <= 0 or args.min_run_time <= 0 or args.n < 1 or args.rounds < 1 or args.max_load < 0:
        parser().error(
            "--tolerance and --min-run-time must be above 0, --n and --rounds at least 1, --max-load at least 0"
        )
    subjects = bench.default_subjects(args.registry, args.judge)
    if args.only:
        subjects = [s for s in subjects if any(fnmatch.fnmatch(s.name, pattern) for pattern in args.only)]
    if not subjects:
        parser().error(f"no subject matches {args.only}")
    speeds = []
    first, second = time_passes(subjects, bench.eval_records(args.n, 0), args, speeds=speeds)
    rows = compare(first, second, args.tolerance)
    print(report(rows))
    print(
        f"the machine's fp32 GEMM speed: {speeds[0] / 1e9:.0f} GFLOP/s at pass 1, {speeds[1] / 1e9:.0f} at pass 2 "
        f"(ratio {speeds[1] / speeds[0]:.3f}; a latency ratio near its inverse is the machine's drift, not the code's)"
    )
    unstable = [r["name"] for r in rows if not r["stable"]]
    if not unstable:
        print(f"every latency of pass 2 is within {args.tolerance:.0%} of pass 1 ({len(rows)} subjects)")
        return 0
    busy = any(r["busy"] for r in rows)
    print(
        f"outside {args.tolerance:.0%}: {', '.join(unstable)}"
        + ("; a pass was busy, so this says nothing: run it again on an idle machine" if busy else "")
    )
    return 2 if busy else 1


if __name__ == "__main__":
    sys.exit(main())
