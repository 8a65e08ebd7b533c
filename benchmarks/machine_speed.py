"""How fast this machine's matmuls are, minute by minute: the speed every other benchmark here stands on.

    python benchmarks/machine_speed.py --seconds 180

Samples, one after another until ``--seconds`` have passed, the GEMM speed (an n × n matmul timed with
``torch.utils.benchmark`` for ``--sample-time`` seconds) in fp32 and bf16, with one thread and with all of torch's
threads; prints each sample and, per series, the lowest, median and highest speed and the two-thread / one-thread
ratio; writes ``benchmarks/results/machine-speed-<host>.csv``. On a virtual machine whose host places its vCPUs
on two physical cores or on the two hyperthreads of one, and whose neighbours share those cores, the speed moves
between states that no load figure of this machine shows: this is where the run-to-run spread of ``bench run``
and the ratios of ``throughput.py`` come from.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
from pathlib import Path

import torch
from torch.utils import benchmark

from bertjudge.evaluation import bench_results

RESULTS = Path("benchmarks/results")
DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16}


def gemm_gflops(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor, threads: int, seconds: float) -> float:
    timer = benchmark.Timer(
        "torch.mm(a, b, out=out)", globals={"torch": torch, "a": a, "b": b, "out": out}, num_threads=threads
    )
    return 2 * a.shape[0] ** 3 / timer.blocked_autorange(min_run_time=seconds).median / 1e9


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=180, help="how long to sample (default 180)")
    parser.add_argument("--sample-time", type=float, default=0.4, help="seconds per sample (default 0.4)")
    parser.add_argument("--n", type=int, default=2048, help="matrix size (default 2048)")
    parser.add_argument("--output", type=Path, help="default benchmarks/results/machine-speed-<host>.csv")
    args = parser.parse_args(argv)
    if args.seconds <= 0 or args.sample_time <= 0 or args.n < 1:
        parser.error("--seconds and --sample-time must be above 0, --n at least 1")
    threads = torch.get_num_threads()
    counts = sorted({1, threads})
    matrices = {name: [torch.randn(args.n, args.n, dtype=dtype) for _ in range(3)] for name, dtype in DTYPES.items()}
    rows, start = [], time.monotonic()
    while time.monotonic() - start < args.seconds:
        row = {"t_s": round(time.monotonic() - start, 1)}
        for count in counts:
            for name, (a, b, out) in matrices.items():
                row[f"{name}_x{count}"] = round(gemm_gflops(a, b, out, count, args.sample_time))
        rows.append(row)
        print(" ".join(f"{key} {value:>6}" for key, value in row.items()), flush=True)
    series = [key for key in rows[0] if key != "t_s"]
    print(f"\n{len(rows)} samples over {rows[-1]['t_s']:.0f} s, GFLOP/s (n={args.n}, {threads} threads):")
    for key in series:
        values = [row[key] for row in rows]
        print(f"{key:<8} lowest {min(values):>6}  median {statistics.median(values):>6.0f}  highest {max(values):>6}")
    for name in DTYPES:
        if threads > 1:
            ratios = [row[f"{name}_x{threads}"] / row[f"{name}_x1"] for row in rows]
            print(
                f"{name}: {threads} threads / 1 thread, per sample: lowest {min(ratios):.2f}, "
                f"median {statistics.median(ratios):.2f}, highest {max(ratios):.2f}"
            )
    out = args.output or RESULTS / f"machine-speed-{platform.node() or 'host'}.csv"
    bench_results.write_table(out, rows)
    print(f"wrote {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
