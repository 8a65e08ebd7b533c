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

``--compare OLD.csv NEW.csv`` times nothing: it compares two ``bench run`` cost files (issue #43: "the normalized
cost of each entry reproduced within 15% by two bench runs"). Per entry with a normalized cost in both — latency p50
× the machine's GEMM speed around it / 1000 (``bench_results.normalized_cost``; the column ``bench_results.NORM_COST``
where a file has one) — it prints both values, new / old, max / min, pass or fail at ``--tolerance`` and each row's
busy flag, other load and GEMM speed (and the hardware, where it differs); entries in one file only, without a
normalized cost in one (not timed), or not measured again (the same ``measured_at``: a row the second run kept, which
would reproduce trivially) are listed, not failed. Exit status 0 when every entry compared reproduces, 1 when one does not or none could be
compared. The old file is usually the committed one:

    git show HEAD:benchmarks/results/cost-cpu-fp32-torch2.13.0.csv > /tmp/old.csv
    python -m bertjudge bench run        # rewrites the cost file
    python benchmarks/stability.py --compare /tmp/old.csv benchmarks/results/cost-cpu-fp32-torch2.13.0.csv
"""

from __future__ import annotations

import argparse
import fnmatch
import sys
from pathlib import Path

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
    p.add_argument(
        "--compare",
        nargs=2,
        type=Path,
        metavar=("OLD.csv", "NEW.csv"),
        help="time nothing: compare the normalized cost of every entry of two bench run cost files",
    )
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


def cost_rows(path: Path) -> dict[str, dict]:
    """The rows of a ``bench run`` cost file by entry name (``bench_results.read_csv``: comment lines skipped)."""
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file")
    rows = bench_results.read_csv(path)
    if rows and "name" not in rows[0]:
        raise ValueError(f"{path}: not a bench cost file (no 'name' column)")
    return {row["name"]: row for row in rows}


def norm_cost(row: dict) -> float | None:
    """A cost row's normalized cost: its ``bench_results.NORM_COST`` cell where it has one, else latency p50 × the
    machine's GEMM speed / 1000 (``bench_results.normalized_cost``); None when it has neither (not timed)."""
    value = bench_results._float(row.get(bench_results.NORM_COST))
    return value if value else bench_results._float(bench_results.normalized_cost(row))


def compare_costs(old: dict[str, dict], new: dict[str, dict], tolerance: float) -> tuple[list[dict], dict[str, list]]:
    """Per entry with a normalized cost in both files, measured in each: both costs, new / old, max / min and
    whether it reproduces (max / min ≤ 1 + ``tolerance``), with each row's busy flag, other load, GEMM speed and
    hardware. Also, by reason, the entries not compared: in one file only, without a normalized cost in one of them,
    or not measured again (both rows with the same ``measured_at``)."""
    compared = []
    skipped = {
        "only in old": [],
        "only in new": [],
        "no normalized cost in one": [],
        "not measured again (the same measured_at: a row the new run kept)": [],
    }
    for name in sorted(old.keys() | new.keys()):
        if name not in new or name not in old:
            skipped["only in old" if name not in new else "only in new"].append(name)
            continue
        a, b = norm_cost(old[name]), norm_cost(new[name])
        if not a or not b:
            skipped["no normalized cost in one"].append(name)
            continue
        if old[name].get("measured_at") and old[name].get("measured_at") == new[name].get("measured_at"):
            skipped["not measured again (the same measured_at: a row the new run kept)"].append(name)
            continue
        compared.append(
            {
                "name": name,
                "cost": (a, b),
                "ratio": b / a,
                "max_min": max(a, b) / min(a, b),
                "reproduces": stable(b / a, tolerance),
                "latency_p50_ms": (old[name].get("latency_p50_ms"), new[name].get("latency_p50_ms")),
                "machine_gflops": (old[name].get("machine_gflops"), new[name].get("machine_gflops")),
                "other_load": (old[name].get("other_load", ""), new[name].get("other_load", "")),
                "busy": (bench_results.row_is_busy(old[name]), bench_results.row_is_busy(new[name])),
                "measured_at": (old[name].get("measured_at", ""), new[name].get("measured_at", "")),
                "hardware": (old[name].get("hardware", ""), new[name].get("hardware", "")),
            }
        )
    return compared, skipped


def cost_report(rows: list[dict], skipped: dict[str, list], tolerance: float) -> str:
    """The comparison as a Markdown table, then the entries not compared, by reason."""
    lines = [
        f"| entry | norm. cost old / new | new / old | max / min | p50 old / new (ms) | GEMM GFLOP/s old / new "
        f"| other load old / new | busy old / new | within {tolerance:.0%} |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        busy = " / ".join("yes" if flag else "no" for flag in r["busy"])
        lines.append(
            f"| `{r['name']}` | {r['cost'][0]:.4g} / {r['cost'][1]:.4g} | {r['ratio']:.3f} | {r['max_min']:.3f} | "
            f"{r['latency_p50_ms'][0]} / {r['latency_p50_ms'][1]} | {r['machine_gflops'][0]} / "
            f"{r['machine_gflops'][1]} | {r['other_load'][0]} / {r['other_load'][1]} | {busy} | "
            f"{'ok' if r['reproduces'] else 'NO'} |"
        )
    for r in rows:
        if r["hardware"][0] != r["hardware"][1]:
            lines.append(f"`{r['name']}` was timed on other hardware: {r['hardware'][0]!r}, then {r['hardware'][1]!r}")
    for reason, names in skipped.items():
        if names:
            lines.append(f"not compared, {reason}: {', '.join(names)}")
    return "\n".join(lines)


def main_compare(old_path: Path, new_path: Path, tolerance: float) -> int:
    """``--compare``: the report, and 0 when every entry compared reproduces within ``tolerance``, else 1."""
    try:
        old, new = cost_rows(old_path), cost_rows(new_path)
    except (OSError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    rows, skipped = compare_costs(old, new, tolerance)
    print(cost_report(rows, skipped, tolerance))
    failed = [r["name"] for r in rows if not r["reproduces"]]
    busy = [r["name"] for r in rows if any(r["busy"])]
    note = f"; rows timed busy (a run with --allow-busy): {', '.join(busy)}" if busy else ""
    if not rows:
        print(f"no entry has a normalized cost in both {old_path} and {new_path}: nothing reproduced")
        return 1
    if failed:
        print(f"{len(failed)} of {len(rows)} entries outside {tolerance:.0%}: {', '.join(failed)}{note}")
        return 1
    print(f"every normalized cost reproduces within {tolerance:.0%} ({len(rows)} entries){note}")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.tolerance <= 0 or args.min_run_time <= 0 or args.n < 1 or args.rounds < 1 or args.max_load < 0:
        parser().error(
            "--tolerance and --min-run-time must be above 0, --n and --rounds at least 1, --max-load at least 0"
        )
    if args.compare:
        return main_compare(*args.compare, args.tolerance)
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
