"""Throughput of a trained judge: the loop a user would write against every inference mode, in one run.

    python benchmarks/throughput.py --judge runs/quickstart/judge            # 512 rows of development data

(about 15 minutes on 2 CPU cores with every mode, 5 rounds and `--profile bf16 fp32`: 14:21–14:36 UTC on 2026-12-05)

Issue #43's "fast by default" (the ``default`` mode ≥ 2.5x the naive loop, paired, and verdicts ≥ 99.9% equal to
fp32's on 2,000 real rows), on an idle machine:

    python benchmarks/throughput.py --judge runs/quickstart/judge --preset real2000 --modes naive fp32 default \
        --repeats 3 --output benchmarks/results/throughput-real2000-vm.csv

About 20 minutes: an estimate from the 512-row run of 2026-12-05 (naive 28 rows/s, fp32 54, bf16 105) and the
2,000 rows' token count (3.9x the 512's): a pass is about 71 s of naive, 37 s of fp32 and 21 s of default with its
check, and each timed pass runs after 2 untimed ones (``torch.utils.benchmark``'s warm-up), so a round takes about
6.5 minutes and 3 rounds about 20, with the loading, the FLOP count and the GEMM probes. The machine has changed
since those rates were measured (an AMD EPYC with AVX512-BF16 on 2026-12-06, an Intel Xeon with AMX before).

On the same rows (a realistic length mix: EVOUNA's short open-QA answers, SmolLM2's multiple-choice and
extraction answers, CHAMP's long math chains of thought — development sets, not the test set), with the
same input text and maximum length as the judge:

- ``naive``: what a user would write with transformers alone — fixed batches of 32 rows in input order,
  each padded to its longest row, fp32;
- ``fp32``, ``bf16``, ``int8``: bertjudge's inference engine (``bertjudge.judges.inference``: one
  tokenization, rows sorted by length, batches filled to a token budget);
- ``onnx``: the same engine with the network exported to ONNX Runtime, where ``bertjudge[onnx]`` is
  installed (the export is part of the warm-up, not of the timing); every other mode of ``inference.PRECISIONS``
  the same way;
- ``default``: what a user gets from ``judge.score(questions, candidates, references)`` with no precision given,
  timed end to end on a second copy of the judge: its ``auto`` precision checks its candidate modes against fp32
  on the 64 check rows once per judge and process and caches the choice; before each timed pass the choice and the
  copies it made are forgotten (``forget_auto``), so that every pass pays the check once, as a fresh process
  does. The row says which mode ``auto`` took (``auto_mode``) and what taking it costs a fresh process (``auto_seconds``,
  timed once more after the passes: the weights' digest that keys the choice, the check, the candidate's copy).

``--preset real2000`` reads ``REAL2000``: 2,000 rows of development data, the test set ``real-test-v3`` never
(600 EVOUNA-TQ val open-QA answers, 800 of manual-v3, the 96 of smollm2-read-v2's val split, 344 CHAMP val solutions
of champ-read-v6, 160 of real-test-v2, a development set since 2026-12-06; seeded samples, seed 0). Verdict agreement
with fp32 is over every row, in every mode: the scores of each mode's last timed pass against fp32's (the engine's
``fp32`` mode, else the naive loop, fp32 too).

Prints samples/s, the ratio to the naive loop (paired: the median over the rounds of the naive pass's time over
the mode's in the same round, so that a slower spell of the machine cancels out), useful-FLOP utilization (FLOPs
of the non-padding tokens ÷ time ÷ the fp32 GEMM peak measured in the same run), verdict agreement and the largest
score difference with fp32, the process's peak RSS, and the ceiling: the ratio to the naive loop a mode would
reach if every useful FLOP ran at the bf16 GEMM peak measured in the same run and nothing else took time; writes
``benchmarks/results/throughput-<host>.csv``. Times are the median of ``--repeats`` timed passes
(``torch.utils.benchmark``'s ``Timer.timeit(1)``: each after 2 untimed warm-up passes), taken in turns — one pass of every mode, then the next round — so that a slower spell
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
import time
import weakref
from pathlib import Path

import numpy as np
import torch
from torch.utils import benchmark
from torch.utils.flop_counter import FlopCounterMode

from bertjudge.core.collate import pad_batch
from bertjudge.core.formats import expand_references
from bertjudge.data.sources import load_source
from bertjudge.evaluation import bench_results, bench_timing
from bertjudge.judges import base, inference
from bertjudge.judges.inference import PRECISIONS, InferenceEngine, available_precisions, default_token_budget
from bertjudge.judges.loading import Judge

DATA = ["data/real/evouna-tq-v1.jsonl.gz?split=val&n=192&seed=0", "data/real/manual-v3.jsonl.gz?n=320&seed=0"]
# issue #43's "2,000 real rows": development rows only, never the test set real-test-v3; a realistic mix of lengths
# and categories (open QA 600, maths about 940, multiple choice about 260, extraction about 190)
REAL2000 = [
    "data/real/evouna-tq-v1.jsonl.gz?split=val&n=600&seed=0",  # short open-QA answers, people's labels (of 1,395)
    "data/real/manual-v3.jsonl.gz?n=800&seed=0",  # math chains of thought, multiple choice, extraction (of 2,120)
    "data/real/smollm2-read-v2.jsonl.gz?split=val",  # 96: SmolLM2's multiple-choice and extraction answers
    "data/real/champ-read-v6.jsonl.gz?split=val&n=344&seed=0",  # long CHAMP solutions (of 2,248)
    "data/real/real-test-v2.jsonl.gz?n=160&seed=0",  # a development set since 2026-12-06 (of 660)
]
PRESETS = {"dev512": (DATA, 512), "real2000": (REAL2000, 2000)}  # name -> (source specs, rows they must give)
DEFAULT = "default"  # the mode that times judge.score as a user calls it (no precision given: auto, check included)
TARGET_VS_NAIVE, TARGET_AGREEMENT = 2.5, 0.999  # issue #43: "fast by default"
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


def forget_auto(judge) -> None:
    """Forget what ``auto`` chose for ``judge`` and every copy or session the inference engine made of it, as a
    fresh process starts: the process-wide choices (``base._CHOSEN``), each trained part's own (``_auto``) and
    every per-judge cache of ``inference`` (its weak dictionaries keyed by the judge: the bf16 and int8 copies,
    the ONNX sessions, and any a new mode adds)."""
    base._CHOSEN.clear()
    caches = [value for value in vars(inference).values() if isinstance(value, weakref.WeakKeyDictionary)]
    for part in judge.parts():
        if "precision" in part.features:
            part._auto = None
        for cache in caches:
            cache.pop(part, None)


def default_pass(judge, records: list[dict]):
    """One pass of what a user gets with no precision given: ``judge.score`` over the rows' parallel lists (their
    categories given, so that every mode reads the same text), ``auto``'s check made afresh (``forget_auto``)."""
    questions = [r.get("question") or "" for r in records]
    candidates = [r["candidate"] for r in records]
    references = [r["references"] for r in records]
    categories = [r.get("category") for r in records]

    def run() -> np.ndarray:
        forget_auto(judge)
        return judge.score(questions, candidates, references, categories=categories)

    return run


def auto_choice(judge) -> tuple[str, float]:
    """The mode ``auto`` takes for each trained part of ``judge`` (joined by ``+``) and the seconds taking it costs
    a fresh process: the choice forgotten (``forget_auto``), then made again and timed whole (the weights' digest
    that keys it, the check rows, fp32 and each candidate on them, the candidate's copy)."""
    forget_auto(judge)
    parts = [part for part in judge.parts() if "precision" in part.features]
    start = time.perf_counter()
    mode = "+".join(part.resolved_precision() for part in parts)
    return mode, time.perf_counter() - start


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


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--judge", default="runs/quickstart/judge", help="an exported trained judge")
    rows = p.add_mutually_exclusive_group()
    rows.add_argument("--data", nargs="+", help="the rows (source specs); default: the preset dev512")
    rows.add_argument(
        "--preset",
        choices=sorted(PRESETS),
        help="named rows: dev512 (the default: 512 rows of development data), real2000 (issue #43's 2,000 real "
        "development rows, REAL2000)",
    )
    p.add_argument(
        "--modes",
        nargs="+",
        default=[*available_precisions(), DEFAULT],
        choices=["naive", *PRECISIONS, DEFAULT],
        help=f"default: the installed ones and {DEFAULT} (judge.score with no precision: auto, its check timed); "
        "the naive loop is always timed",
    )
    p.add_argument(
        "--token-budget",
        type=int,
        nargs="+",
        help="rows x padded length per batch (default: the engine's for the mode and device); several: every mode "
        f"is timed at each, in turns ({DEFAULT} keeps what judge.score uses)",
    )
    p.add_argument("--repeats", type=int, default=5, help="timed passes per mode, taken in turns (the median is kept)")
    p.add_argument("--threads", type=int, default=torch.get_num_threads())
    p.add_argument(
        "--max-load",
        type=float,
        default=bench_timing.MAX_LOAD,
        help="other processes' share of each core above which "
        f"the run is marked busy (default {bench_timing.MAX_LOAD}, as bench run's)",
    )
    p.add_argument(
        "--profile",
        nargs="*",
        default=[],
        choices=["naive", *PRECISIONS, DEFAULT],
        help="after timing, one more pass of these modes under torch.profiler: where their time goes, by operator",
    )
    p.add_argument("--output", type=Path, help="the CSV to write (default benchmarks/results/throughput-<host>.csv)")
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.repeats < 1:
        parser().error("--repeats must be at least 1")
    torch.set_num_threads(args.threads)
    judge = Judge.load(args.judge)
    device = next(judge.parameters()).device
    specs, expected = (args.data, None) if args.data else PRESETS[args.preset or "dev512"]
    records = [r for spec in specs for r in load_source(spec)]
    if expected is not None and len(records) != expected:
        parser().error(f"preset {args.preset or 'dev512'} gave {len(records)} rows, not {expected}: its files changed")
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
    passes = {("naive", ""): lambda: probs(naive_logits(judge, records))}  # (mode, token budget) -> one pass: P
    fresh = None  # the judge the default mode scores with: a second copy, whose auto choice is forgotten every pass
    for mode in dict.fromkeys(m for m in args.modes if m != "naive"):
        if mode == DEFAULT:
            fresh = Judge.load(args.judge)
            default_pass(fresh, records[:8])()  # warm-up, as the other modes'; every pass makes auto's check again
            passes[mode, fresh.token_budget or fresh.default_token_budget(32)] = default_pass(fresh, records)
            continue
        for budget in args.token_budget or [default_token_budget(device)]:
            engine = InferenceEngine(judge, mode, budget)
            engine.logits(records[:8])  # warm-up: the bf16 and int8 copies, the ONNX export, oneDNN kernels
            passes[mode, budget] = lambda engine=engine: probs(engine.logits(records))
    last = {}  # the scores of each mode's last timed pass: verdicts are compared on them, no pass run again

    def keeping(key, fn):
        def run():
            last[key] = fn()

        return run

    with bench_timing.MachineLoad(args.max_load) as load:
        timings = timed_in_turns({key: keeping(key, fn) for key, fn in passes.items()}, args.repeats)
    scores = {key: last[key] for key in passes}
    auto_mode, auto_seconds = auto_choice(fresh) if fresh is not None else ("", 0.0)  # made once more
    naive_seconds, naive_rounds = timings["naive", ""]["seconds"], timings["naive", ""]["rounds"]
    reference_mode = "fp32" if any(mode == "fp32" for mode, _ in scores) else "naive"
    reference = next(p for (mode, _), p in scores.items() if mode == reference_mode)
    verdicts = reference >= judge.threshold
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
                "verdict_agreement_fp32": round(float(np.mean((p >= judge.threshold) == verdicts)), 4),
                "verdicts_differing_fp32": int(np.count_nonzero((p >= judge.threshold) != verdicts)),
                "max_score_diff_fp32": round(float(np.max(np.abs(p - reference))), 4),
                "fp32_reference": reference_mode,
                "auto_mode": auto_mode if mode == DEFAULT else "",
                "auto_seconds": round(auto_seconds, 3) if mode == DEFAULT else "",
                "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
                "token_budget": budget,
                "gemm_peak_fp32_gflops": round(peak["fp32"] / 1e9),
                "gemm_peak_bf16_gflops": round(peak["bf16"] / 1e9),
                "ceiling_vs_naive": round(ceiling, 2),
                "threads": args.threads,
                "cpu": platform.processor() or platform.machine(),
                **load.fields(),
                "judge": args.judge,
                "data": " ".join(specs),
            }
        )
    width = max(len(r["mode"]) for r in rows)
    header = (
        f"{'mode':<{width}} {'budget':>6} {'rows/s':>8} {'vs naive':>9} {'util':>6} {'agree':>7} {'differ':>6} "
        f"{'max |dP|':>9} {'peak RSS':>9} {'spread':>7} {'GEMM':>5}"
    )
    print(header)
    for r in rows:
        print(
            f"{r['mode']:<{width}} {r['token_budget']:>6} {r['samples_per_s']:>8.1f} {r['vs_naive']:>8.2f}x "
            f"{r['useful_flop_utilization_fp32_peak']:>6.2f} {r['verdict_agreement_fp32']:>7.4f} "
            f"{r['verdicts_differing_fp32']:>6} {r['max_score_diff_fp32']:>9.4f} {r['peak_rss_mb']:>6} MB "
            f"{r['spread']:>7.2f} {r['machine_gflops']:>5.0f}"
        )
    print(
        f"ceiling: {ceiling:.2f}x naive (every useful FLOP at the bf16 GEMM peak of this run, "
        f"{peak['bf16'] / 1e9:.0f} GFLOP/s, and nothing else taking time)"
    )
    for r in rows:
        if r["mode"] == DEFAULT:
            met = r["vs_naive"] >= TARGET_VS_NAIVE and r["verdict_agreement_fp32"] >= TARGET_AGREEMENT
            print(
                f"{DEFAULT}: judge.score with auto -> {auto_mode} (taking it {auto_seconds:.2f} s, inside every timed "
                f"pass): {r['vs_naive']:.2f}x the naive loop, paired (target {TARGET_VS_NAIVE}x); verdicts equal to "
                f"{reference_mode}'s on {len(records) - r['verdicts_differing_fp32']} of {len(records)} rows "
                f"({r['verdict_agreement_fp32']:.2%}, target {TARGET_AGREEMENT:.1%}): "
                + ("met" if met else "NOT met")
                + (" (busy machine: not for publication)" if load.busy else "")
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
