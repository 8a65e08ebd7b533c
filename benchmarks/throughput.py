"""Throughput of a trained judge: the loop a user would write against every inference mode, in one run.

    python benchmarks/throughput.py --judge runs/quickstart/judge            # 512 rows of development data

(about 15 minutes on 2 CPU cores with every mode, 5 rounds and `--profile bf16 fp32`: 14:21–14:36 UTC on 2026-12-05)

On the same rows (a realistic length mix: EVOUNA's short open-QA answers, SmolLM2's multiple-choice and
extraction answers, CHAMP's long math chains of thought — development sets, not the test set), with the
same input text and maximum length as the judge:

- ``naive``: what a user would write with transformers alone — fixed batches of 32 rows in input order,
  each padded to its longest row, fp32;
- ``fp32``, ``bf16``, ``int8``: bertjudge's inference engine (``bertjudge.judges.inference``: one
  tokenization, rows sorted by length, batches filled to a token budget);
- ``onnx``: the same engine with the network exported to ONNX Runtime, where ``bertjudge[onnx]`` is
  installed (the export is part of the warm-up, not of the timing).

Prints samples/s, the ratio to the naive loop (paired: the median over the rounds of the naive pass's time over
the mode's in the same round, so that a slower spell of the machine cancels out), useful-FLOP utilization (FLOPs
of the non-padding tokens ÷ time ÷ the fp32 GEMM peak measured in the same run), verdict agreement and the largest
score difference with fp32, the process's peak RSS, and the ceiling: the ratio to the naive loop a mode would
reach if every useful FLOP ran at the bf16 GEMM peak measured in the same run and nothing else took time; writes
``benchmarks/results/throughput-<host>.csv``. Times are the median of ``--repeats`` timed passes
(``torch.utils.benchmark``), taken in turns — one pass of every mode, then the next round — so that a slower spell
of a shared machine falls on every mode alike; every pass's seconds (``round_seconds``), each mode's spread
((max - min) / median) and the machine's fp32 GEMM speed around its passes (probed as ``bench run`` probes it) are
in the CSV, and so is the CPU time other processes took while the modes were timed (``other_load``, measured as
``bench run`` measures it): a run above ``--max-load`` is marked busy.
"""

from __future__ import annotations

import argparse
import platform
import resource
import statistics
import sys
from pathlib import Path

import numpy as np
import torch
from torch.utils import benchmark
from torch.utils.flop_counter import FlopCounterMode

from bertjudge.core.collate import pad_batch
from bertjudge.core.formats import expand_references
from bertjudge.data.sources import load_source
from bertjudge.evaluation import bench_results, bench_timing
from bertjudge.judges.inference import PRECISIONS, InferenceEngine, available_precisions, default_token_budget
from bertjudge.judges.loading import Judge

DATA = ["data/real/evouna-tq-v1.jsonl.gz?split=val&n=192&seed=0", "data/real/manual-v3.jsonl.gz?n=320&seed=0"]
RESULTS = Path("benchmarks/results")


def naive_logits(judge, records: list[dict], batch_size: int = 32) -> np.ndarray:
    """The loop a user would write: fixed batches in input order, padded to their longest row, fp32."""
    out = []
    with torch.inference_mode():
        for start in range(0, len(records), batch_size):
            chunk = records[start : start + batch_size]
            sequences, owner = expand_references(chunk, judge.format)
            input_ids, mask = pad_batch(judge.encoder.encode_many(sequences), judge.encoder.pad_id)
            logits = judge({"input_ids": input_ids, "attention_mask": mask}).float().numpy()
            best = np.full(len(chunk), -np.inf)
            np.maximum.at(best, np.asarray(owner), logits)
            out.append(best)
    return np.concatenate(out)


def useful_flops(judge, records: list[dict]) -> float:
    """FLOPs of one forward pass over every sequence at its own length (no padding), counted by
    ``torch.utils.flop_counter`` once per distinct length."""
    sequences, _ = expand_references(records, judge.format)
    lengths = [len(ids) for ids in judge.encoder.encode_many(sequences)]
    per_length = {}
    with torch.inference_mode():
        for length in sorted(set(lengths)):
            ids = torch.full((1, length), judge.encoder.pad_id + 1, dtype=torch.long)
            counter = FlopCounterMode(display=False)
            with counter:
                judge({"input_ids": ids, "attention_mask": torch.ones_like(ids)})
            per_length[length] = counter.get_total_flops()
    return float(sum(per_length[length] for length in lengths))


def timed_in_turns(fns: dict, repeats: int) -> dict[str, dict]:
    """Per function: the median seconds of its ``repeats`` passes, the passes' seconds round by round (``rounds``),
    their spread ((max - min) / median) and the
    machine's median fp32 GEMM speed around them (``bench_timing.machine_gflops``, probed before and after each pass,
    the lower kept). The passes are taken in turns (every function once, then again), so that the machine's slower
    spells are shared out rather than falling on one function."""
    timers = {  # Timer's default is one thread
        name: benchmark.Timer("fn()", globals={"fn": fn}, num_threads=torch.get_num_threads())
        for name, fn in fns.items()
    }
    passes = {name: [] for name in fns}  # (seconds, machine GFLOP/s)
    for _ in range(repeats):
        for name, timer in timers.items():
            before = bench_timing.machine_gflops()
            seconds = timer.timeit(1).median
            passes[name].append((seconds, min(before, bench_timing.machine_gflops())))
    out = {}
    for name, timed in passes.items():
        seconds = [t[0] for t in timed]
        median = statistics.median(seconds)
        out[name] = {
            "seconds": median,
            "rounds": seconds,
            "spread": (max(seconds) - min(seconds)) / median,
            "machine_gflops": statistics.median(t[1] for t in timed),
        }
    return out


def operator_shares(fn, top: int = 8) -> str:
    """One pass of ``fn`` under ``torch.profiler``: its ``top`` operators by self CPU time, with their shares."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU]) as prof:
        fn()
    events = sorted(prof.key_averages(), key=lambda e: e.self_cpu_time_total, reverse=True)
    total = sum(e.self_cpu_time_total for e in events) or 1
    return "\n".join(f"  {e.key:<52} {e.self_cpu_time_total / total:>6.1%} ({e.count} calls)" for e in events[:top])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--judge", default="runs/quickstart/judge", help="an exported trained judge")
    parser.add_argument("--data", nargs="+", default=DATA, help="the rows (source specs); default: dev sets")
    parser.add_argument(
        "--modes",
        nargs="+",
        default=list(available_precisions()),
        choices=PRECISIONS,
        help="default: the installed ones",
    )
    parser.add_argument(
        "--token-budget",
        type=int,
        nargs="+",
        help="rows x padded length per batch (default: the engine's for the mode and device); several: every mode "
        "is timed at each, in turns",
    )
    parser.add_argument(
        "--repeats", type=int, default=5, help="timed passes per mode, taken in turns (the median is kept)"
    )
    parser.add_argument("--threads", type=int, default=torch.get_num_threads())
    parser.add_argument(
        "--max-load",
        type=float,
        default=bench_timing.MAX_LOAD,
        help="other processes' share of each core above which "
        f"the run is marked busy (default {bench_timing.MAX_LOAD}, as bench run's)",
    )
    parser.add_argument(
        "--profile",
        nargs="*",
        default=[],
        choices=["naive", *PRECISIONS],
        help="after timing, one more pass of these modes under torch.profiler: where their time goes, by operator",
    )
    parser.add_argument(
        "--output", type=Path, help="the CSV to write (default benchmarks/results/throughput-<host>.csv)"
    )
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    judge = Judge.load(args.judge)
    device = next(judge.parameters()).device
    records = [r for spec in args.data for r in load_source(spec)]
    peak = {"fp32": bench_timing.gemm_peak(torch.float32), "bf16": bench_timing.gemm_peak(torch.bfloat16)}
    flops = useful_flops(judge, records)
    print(
        f"{len(records)} rows; useful forward FLOPs {flops / 1e9:.1f} G; GEMM peak fp32 {peak['fp32'] / 1e9:.0f} "
        f"GFLOP/s, bf16 {peak['bf16'] / 1e9:.0f} GFLOP/s; {args.threads} threads",
        file=sys.stderr,
    )

    def probs(logits):
        return judge.probabilities(torch.from_numpy(logits)).numpy()

    rows = []
    passes = {("naive", ""): lambda: naive_logits(judge, records)}  # (mode, token budget) -> one pass
    for mode in args.modes:
        for budget in args.token_budget or [default_token_budget(device)]:
            engine = InferenceEngine(judge, mode, budget)
            engine.logits(records[:8])  # warm-up: the bf16 and int8 copies, the ONNX export, oneDNN kernels
            passes[mode, budget] = lambda engine=engine: engine.logits(records)
    with bench_timing.MachineLoad(args.max_load) as load:
        timings = timed_in_turns(passes, args.repeats)
    scores = {key: probs(fn()) for key, fn in passes.items()}
    naive_seconds, naive_rounds = timings["naive", ""]["seconds"], timings["naive", ""]["rounds"]
    reference = next((p for (mode, _), p in scores.items() if mode == "fp32"), scores["naive", ""])
    # the most any mode could do: every useful FLOP at the bf16 GEMM peak, nothing else taking time
    ceiling = naive_seconds / (flops / peak["bf16"])
    for (mode, budget), p in scores.items():
        timing = timings[mode, budget]
        seconds = timing["seconds"]
        rows.append(
            {
                "mode": mode,
                "rows": len(records),
                "seconds": round(seconds, 3),
                "samples_per_s": round(len(records) / seconds, 2),
                "spread": round(timing["spread"], 3),
                "round_seconds": " ".join(f"{t:.4f}" for t in timing["rounds"]),
                "machine_gflops": round(timing["machine_gflops"], 1),
                # paired: the naive pass's time over this one's in the same round, the median over the rounds
                "vs_naive": round(statistics.median(n / t for n, t in zip(naive_rounds, timing["rounds"])), 2),
                "useful_flop_utilization_fp32_peak": round(flops / seconds / peak["fp32"], 3),
                "verdict_agreement_fp32": round(
                    float(np.mean((p >= judge.threshold) == (reference >= judge.threshold))), 4
                ),
                "max_score_diff_fp32": round(float(np.max(np.abs(p - reference))), 4),
                "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
                "token_budget": budget,
                "gemm_peak_fp32_gflops": round(peak["fp32"] / 1e9),
                "gemm_peak_bf16_gflops": round(peak["bf16"] / 1e9),
                "ceiling_vs_naive": round(ceiling, 2),
                "threads": args.threads,
                "cpu": platform.processor() or platform.machine(),
                **load.fields(),
                "judge": args.judge,
            }
        )
    header = f"{'mode':<6} {'budget':>6} {'rows/s':>8} {'vs naive':>9} {'util':>6} {'agree':>7} {'max |dP|':>9} {'peak RSS':>9} {'spread':>7} {'GEMM':>5}"
    print(header)
    for r in rows:
        print(
            f"{r['mode']:<6} {r['token_budget']:>6} {r['samples_per_s']:>8.1f} {r['vs_naive']:>8.2f}x {r['useful_flop_utilization_fp32_peak']:>6.2f} "
            f"{r['verdict_agreement_fp32']:>7.4f} {r['max_score_diff_fp32']:>9.4f} {r['peak_rss_mb']:>6} MB {r['spread']:>7.2f} {r['machine_gflops']:>5.0f}"
        )
    print(
        f"ceiling: {ceiling:.2f}x naive (every useful FLOP at the bf16 GEMM peak of this run, "
        f"{peak['bf16'] / 1e9:.0f} GFLOP/s, and nothing else taking time)"
    )
    for mode in args.profile:
        key = next((key for key in passes if key[0] == mode), None)  # its pass at the first token budget
        if key is None:
            print(f"\n{mode}: not profiled (not among --modes)")
            continue
        print(f"\n{mode}: share of the pass's operator time (torch.profiler, self CPU time)")
        print(operator_shares(passes[key]))
    if load.busy:
        print(
            f"the machine was busy (other processes took {load.other_load:.2f} of each core, above --max-load "
            f"{args.max_load}): these figures are marked busy and not for publication",
            file=sys.stderr,
        )
    out = args.output or RESULTS / f"throughput-{platform.node() or 'host'}.csv"
    bench_results.write_table(out, rows)
    print(f"wrote {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
