"""Timing a model and the machine it runs on, for ``bench`` (``bertjudge.evaluation.bench``; the protocol is in
``benchmarks/README.md``): latency and throughput by ``torch.utils.benchmark`` (``measure_calls``, ``time_model``),
peak memory (``PeakMemory``), the CPU time other processes take on this process's CPUs (``MachineLoad``; above
``MAX_LOAD`` per core a row is busy) and the machine's GEMM speed around a timing (``machine_gflops``)."""

from __future__ import annotations

import ctypes
import gc
import os
import platform
import time
from pathlib import Path

import numpy as np

from bertjudge.evaluation.bench_flops import REASONING_TOKENS, _ids, decode_steps

MIN_RUN_TIME = 1.0  # seconds of timed runs at batch 1 per round (half of it per larger batch size)
PROBE_N = 1024  # the machine's speed around a timing: an n x n fp32 matmul for PROBE_SECONDS
PROBE_SECONDS = 0.2
MIN_RUNS = 5  # timed runs at batch 1 at least, however long a call takes (3 per larger batch size)
MAX_LOAD = 0.25  # CPU time other processes may take on this process's CPUs while timing, per core
MAX_TIMED_PARAMS = 3e9  # models this large or larger are costed in FLOPs only on this 2-core CPU (--max-timed-params)


# --- timing and memory ------------------------------------------------------------------------------
def _rss_kb(field: str) -> int | None:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def _malloc_trim() -> None:
    """Hand the heap's free pages back to the OS (glibc): otherwise a model built after a bigger one
    reuses pages already resident, the resident set does not grow and its peak memory reads 0."""
    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):  # not glibc
        pass


def _max_rss_kb() -> int:
    """The process's lifetime peak resident set in KB (``getrusage``; bytes on macOS)."""
    import resource  # Unix only

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak // 1024 if platform.system() == "Darwin" else peak


class PeakMemory:
    """Peak memory during a block, in MB: growth of the CUDA allocator's peak, or growth of the CPU peak
    resident set (Linux ``VmHWM``, reset through ``/proc/self/clear_refs`` after freed memory is handed
    back to the OS; elsewhere the growth of ``getrusage``'s lifetime peak). ``mb`` is None when nothing
    could be measured."""

    def __init__(self, device: str):
        self.device, self.mb, self.hwm = device, None, False

    def __enter__(self):
        import torch

        gc.collect()
        if self.device.startswith("cuda"):
            torch.cuda.synchronize()
            torch.cuda.empty_cache()
            torch.cuda.reset_peak_memory_stats()
            self.start = torch.cuda.memory_allocated()
            return self
        _malloc_trim()
        try:
            Path("/proc/self/clear_refs").write_text("5")  # resets VmHWM to the current RSS
            self.hwm = True
        except OSError:
            pass
        self.start = _rss_kb("VmRSS") if self.hwm else _max_rss_kb()
        return self

    def __exit__(self, *exc):
        import torch

        if self.device.startswith("cuda"):
            torch.cuda.synchronize()
            self.mb = (torch.cuda.max_memory_allocated() - self.start) / 2**20
        else:
            peak = _rss_kb("VmHWM") if self.hwm else _max_rss_kb()
            if self.start is not None and peak is not None:
                self.mb = (peak - self.start) / 1024


def peak_memory_cell(peak_mb: float | None, model) -> tuple[float | str, str]:
    """(the ``peak_mem_mb`` cell, a note): the measured peak, or empty with the reason when it is below
    the model's own weights (pages were reused, so the growth measures nothing) — never a 0 row."""
    weights_mb = sum(t.numel() * t.element_size() for t in [*model.parameters(), *model.buffers()]) / 2**20
    if peak_mb is None:
        return "", "peak memory not measured (no /proc/self/status nor getrusage here)"
    if peak_mb < weights_mb:
        return "", f"peak memory not measured: grew {peak_mb:.0f} MB, less than the weights' {weights_mb:.0f} MB"
    return round(peak_mb, 1), ""


def _loadavg() -> float | None:
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return None


def _cpu_ticks(cpus) -> tuple[int, int] | None:
    """(busy, total) clock ticks of ``cpus`` since boot, from ``/proc/stat`` (Linux); steal time counts
    as busy (a hypervisor's other guests slow this one down too)."""
    try:
        lines = Path("/proc/stat").read_text().splitlines()
    except OSError:
        return None
    wanted, busy, total = {f"cpu{i}" for i in cpus}, 0, 0
    for line in lines:
        fields = line.split()
        if fields and fields[0] in wanted:
            user, nice, system, idle, iowait, irq, softirq, steal = (int(v) for v in fields[1:9])
            total += user + nice + system + idle + iowait + irq + softirq + steal
            busy += user + nice + system + irq + softirq + steal
    return (busy, total) if total else None


class MachineLoad:
    """What other processes did to this process's CPUs while a block ran: ``other_load`` is the CPU time
    they took (busy ticks of these CPUs in ``/proc/stat`` less this process's own CPU time), per core
    and second of the block. Unlike the load average it leaves out the benchmark's own threads, which
    alone keep the load average near one per core. Without ``/proc/stat``, the 1-minute load average
    less torch's threads stands in. The 1-minute load averages before and after are kept for the record."""

    def __init__(self, max_load: float = MAX_LOAD):
        self.max_load = max_load
        self.cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else range(os.cpu_count() or 1)

    def __enter__(self):
        self.loadavg_before = _loadavg()
        self.start = (time.perf_counter(), time.process_time(), _cpu_ticks(self.cpus))
        return self

    def __exit__(self, *exc):
        import torch

        wall, own, ticks = time.perf_counter(), time.process_time(), _cpu_ticks(self.cpus)
        self.loadavg_after = _loadavg()
        (wall0, own0, ticks0), cores = self.start, len(self.cpus)
        self.other_load = None
        if ticks and ticks0 and wall > wall0:
            busy_s = (ticks[0] - ticks0[0]) / os.sysconf("SC_CLK_TCK")
            self.other_load = max(0.0, busy_s - (own - own0)) / ((wall - wall0) * cores)
        elif self.loadavg_after is not None:
            self.other_load = max(0.0, self.loadavg_after - torch.get_num_threads()) / cores

    @property
    def busy(self) -> bool:
        return is_busy(self.other_load, self.max_load)

    def fields(self) -> dict:
        """The row's cells: load averages, ``other_load`` and ``busy`` (``yes`` or empty)."""
        return {
            "loadavg_before": _round(self.loadavg_before, 2),
            "loadavg_after": _round(self.loadavg_after, 2),
            "other_load": _round(self.other_load, 3),
            "busy": "yes" if self.busy else "",
        }


def gemm_peak(dtype=None, n: int = 2048, min_run_time: float = 1.0) -> float:
    """FLOP/s of an n×n matmul on this machine, now (fp32 unless ``dtype``), timed like the judges (all of
    torch's threads, ``blocked_autorange``): the machine's speed at the moment, against which a utilization is
    computed and by which two passes on a shared machine can be told apart from the code's own noise."""
    import torch
    from torch.utils import benchmark

    dtype = dtype or torch.float32
    a, b = torch.randn(n, n, dtype=dtype), torch.randn(n, n, dtype=dtype)
    timer = benchmark.Timer("a @ b", globals={"a": a, "b": b}, num_threads=torch.get_num_threads())
    return 2 * n**3 / timer.blocked_autorange(min_run_time=min_run_time).median


_PROBE: list = []  # the probe's matrices, made once: a probe inside a peak-memory block allocates nothing


def machine_gflops() -> float:
    """The machine's fp32 GEMM speed now (GFLOP/s; a ``PROBE_N`` matmul timed for ``PROBE_SECONDS`` with all of
    torch's threads). A 2-vCPU virtual machine runs at very different speeds as its host places its vCPUs (two
    physical cores, or the two hyperthreads of one) and as neighbours use those cores, none of which the load of
    this machine shows; taken around every timing (``machine_gflops``), it says at what speed a row was timed."""
    import torch
    from torch.utils import benchmark

    if not _PROBE:
        _PROBE.extend(torch.randn(PROBE_N, PROBE_N) for _ in range(3))
    a, b, out = _PROBE
    timer = benchmark.Timer(
        "torch.mm(a, b, out=out)",
        globals={"torch": torch, "a": a, "b": b, "out": out},
        num_threads=torch.get_num_threads(),
    )
    return 2 * PROBE_N**3 / timer.blocked_autorange(min_run_time=PROBE_SECONDS).median / 1e9


def is_busy(other_load: float | None, max_load: float) -> bool:
    """Whether other processes took more than ``max_load`` of each core (unknown load: not busy)."""
    return other_load is not None and other_load > max_load


def _round(value, digits: int):
    return "" if value is None else round(value, digits)


def measure_calls(fn, min_run_time: float, min_runs: int = MIN_RUNS):
    """A ``torch.utils.benchmark`` Measurement of ``fn()``, with all of torch's threads (``Timer``'s
    default is one) and CUDA synchronized by its timer: 2 warm-up calls and one timed call tell how
    long a call takes, then ``blocked_autorange`` runs for ``min_run_time`` seconds and at least long
    enough for ``min_runs`` runs. Its blocks grow until the timer's overhead is negligible (fast calls
    make long blocks), so a measurement of fewer runs is taken again, longer."""
    import torch
    from torch.utils import benchmark

    timer = benchmark.Timer("fn()", globals={"fn": fn}, num_threads=torch.get_num_threads())
    seconds = max(min_run_time, 1.2 * min_runs * timer.timeit(1).median)
    m = timer.blocked_autorange(min_run_time=seconds)
    while len(m.times) < min_runs:
        seconds *= 1.2 * min_runs / len(m.times)
        m = timer.blocked_autorange(min_run_time=seconds)
    return m


def _percentile(values: list[float], q: float) -> float:
    return float(np.percentile(values, q))


def latency_cells(m, per_call: int = 1) -> dict:
    """Latency p50/p95 (ms, per judgment when a call makes ``per_call`` judgments), the runs, the calls
    per run and the spread (IQR / median) of a Measurement. p95 is over runs (each the mean of its calls)."""
    return {
        "latency_p50_ms": 1000 * m.median / per_call,
        "latency_p95_ms": 1000 * _percentile(m.times, 95) / per_call,
        "timing_runs": len(m.times),
        "calls_per_run": m.number_per_run,
        "latency_spread": round(m.iqr / m.median, 4),
    }


def time_model(
    model,
    kind: str,
    length: int,
    device: str,
    mode: str = "encoder",
    k: int = REASONING_TOKENS,
    batch_sizes=None,
    min_run_time: float = MIN_RUN_TIME,
) -> dict:
    """Latency p50/p95 (ms) at batch 1, with its runs and spread, and the best throughput (judgments/s)
    of ``model``; a larger batch is tried for ``min_run_time / 2`` seconds when it fits that budget."""
    import torch

    batch_sizes = batch_sizes or ((1, 8, 32, 128) if device.startswith("cuda") else (1, 4, 16))
    extra = {} if kind == "encoder" else {"logits_to_keep": 1}
    generator = torch.Generator().manual_seed(0)  # the same input ids every run

    def forward(batch):
        ids = torch.randint(5, 1000, (batch, length), generator=generator).to(device)
        return lambda: model(input_ids=ids, **extra)

    notes = []
    with torch.inference_mode():
        lat = measure_calls(forward(1), min_run_time)
        out = latency_cells(lat)
        steps = decode_steps(mode, k)
        if steps:
            step = _decode_latency(model, length + steps // 2, device, min_run_time / 2)
            out["latency_p50_ms"] += 1000 * steps * step.median
            out["latency_p95_ms"] += 1000 * steps * _percentile(step.times, 95)
            out["latency_spread"] = round((lat.iqr + steps * step.iqr) / (lat.median + steps * step.median), 4)
            notes.append(
                f"latency = prefill + {steps} x measured decode step at context {length + steps // 2} "
                f"({1000 * step.median:.1f} ms)"
            )
            out["notes"] = "; ".join(notes)
            return out
        best = (1 / lat.median, 1)
        for batch in batch_sizes[1:]:
            if lat.median * batch > min_run_time / 2:  # would not fit the budget
                notes.append(f"batch sizes above {best[1]} not tried (time budget)")
                break
            m = measure_calls(forward(batch), min_run_time / 2, min_runs=3)
            best = max(best, (batch / m.median, batch))
        out["throughput_per_s"], out["best_batch_size"] = best
    out["notes"] = "; ".join(notes)
    return out


def _decode_latency(model, context: int, device: str, min_run_time: float):
    """A Measurement of one decode step after ``context`` cached tokens: the step's token is cropped off
    the cache after each step, so that every run decodes at the same context (decode cost is linear in
    it, so the middle of the generated span gives the mean step)."""
    import torch

    cache = model(input_ids=_ids(context, device=device), use_cache=True, logits_to_keep=1).cache
    token = torch.ones((1, 1), dtype=torch.long, device=device)

    def step():
        model(input_ids=token, cache=cache, use_cache=True, logits_to_keep=1)
        cache.crop(-1)  # the token just added: negative counts remove (old and new transformers)

    return measure_calls(step, min_run_time)
