"""Cost of judges: FLOPs per judgment, latency, throughput, peak memory; the Pareto table and plot.

``python -m bertjudge bench run|publish|pareto|archs``. The protocol is in ``benchmarks/README.md``:

- FLOPs are counted by ``torch.utils.flop_counter.FlopCounterMode`` (matmuls and attention; a
  multiply-add is 2 FLOPs; norms, softmax and other element-wise ops are not counted) for one
  judgment at the median token length of the embedded test split (``embedded:test``, n=2000), on the
  ``meta`` device (no memory used), with eager attention so that attention matmuls are counted on every device.
  Encoders: one forward pass. Generative, direct: one prefill of the prompt with the LM head at the
  last position only, whose logits give the verdict token. Generative, reasoning: that prefill plus
  ``k`` single-token decode steps with a KV cache; decode FLOPs are linear in the context length,
  so two counted steps (contexts L and L + k - 1) give the exact sum k (f(L) + f(L + k - 1)) / 2.
- Latency p50/p95 at batch 1 and throughput at the best of a few batch sizes are timed with
  ``torch.utils.benchmark.Timer.blocked_autorange`` (all of torch's threads; the row keeps the number
  of runs, the calls per run and the spread, IQR / median). Peak memory (CUDA: growth of
  ``max_memory_allocated``; CPU: growth of the process's peak resident set, Linux ``VmHWM``, after
  freed memory is handed back to the OS) covers building or loading the model and timing it; a
  measurement below the weights' own size is not a measurement and is left empty, never 0.
- While a judge is timed, the CPU time other processes take on this process's CPUs (``/proc/stat``
  less this process's own time), per core, is its ``other_load``; above ``max_load`` the row is
  ``busy``: ``bench run`` refuses to write it (``--allow-busy`` writes it marked) and the table and
  plot leave it out. The 1-minute load averages before and after are recorded too.
- Accuracy of the judges that run here: verdicts at the judge's threshold against the labels of the
  frozen real-output test set ``data/real/real-test-v1.jsonl.gz`` (every row), overall and per
  category; the row names the set and the first 12 hex digits of its sha256. Rows measured on another
  set (the embedded test split, before) stay in the files but are left out of the table and the plot.
- Results go to ``benchmarks/results/<kind>-<device>-<dtype>-torch<version>.csv`` (kind ``cost`` or
  ``accuracy``), one row per judge keyed by its zoo name, written atomically.
"""

from __future__ import annotations

import csv
import ctypes
import dataclasses
import datetime
import gc
import hashlib
import json
import math
import os
import platform
import statistics
import time
from pathlib import Path

from bertjudge.core.errors import BertJudgeError
from bertjudge.core.formats import Encoder, JudgeFormat
from bertjudge.core.records import RECORD_SUFFIXES, read_records
from bertjudge.data.corpus import generate
from bertjudge.judges import backbones
from bertjudge.judges.loading import Judge
from bertjudge.judges.prompt import SCORE_MODE, SCORE_TOKENS, prompt_text
from bertjudge.judges.regex import RegexJudge
from bertjudge.zoo import registry as zoo

ROOT = Path(".")  # the project checkout bench runs in: its CSVs, plot and real test set
RESULTS_DIR = ROOT / "benchmarks" / "results"
QUOTED_FILE = ROOT / "benchmarks" / "quoted.csv"
PARETO_PNG = ROOT / "benchmarks" / "pareto.png"
PROXY_TOKENIZER = "sentence-transformers/all-MiniLM-L6-v2"
DEFAULT_TOKENS = 256  # when no evaluation set is available
REASONING_TOKENS = 512
MIN_RUN_TIME = 1.0  # seconds of timed runs at batch 1 per round (half of it per larger batch size)
ROUNDS = 5  # a subject is timed once per round, the rounds taken in turns over every subject; its row keeps the medians
PROBE_N = 1024  # the machine's speed around a timing: an n x n fp32 matmul for PROBE_SECONDS
PROBE_SECONDS = 0.2
MIN_RUNS = 5  # timed runs at batch 1 at least, however long a call takes (3 per larger batch size)
MAX_LOAD = 0.25  # CPU time other processes may take on this process's CPUs while timing, per core
COST_FIELDS = [
    "name",
    "judge_kind",
    "architecture",
    "config_source",
    "weights",
    "params",
    "tokens",
    "length_source",
    "flops",
    "latency_p50_ms",
    "latency_p95_ms",
    "throughput_per_s",
    "best_batch_size",
    "peak_mem_mb",
    "timing_runs",
    "calls_per_run",
    "latency_spread",
    "rounds",
    "machine_gflops",
    "device",
    "dtype",
    "hardware",
    "torch",
    "transformers",
    "measured_at",
    "loadavg_before",
    "loadavg_after",
    "other_load",
    "busy",
    "notes",
]
EVAL_FILE = ROOT / "data" / "real" / "real-test-v1.jsonl.gz"  # accuracy is measured on this set, whole
EVAL_SET = "real-test-v1"  # only accuracy rows of this set are shown (table, plot, Pareto front)
CATEGORIES = ("open_qa", "multiple_choice", "context_extraction", "open_math")
ACCURACY_FIELDS = [
    "name",
    "accuracy",
    *(f"acc_{c}" for c in CATEGORIES),
    "n",
    "eval_set",
    "eval_sha256",
    "source",
    "device",
    "dtype",
    "torch",
    "measured_at",
]
QUOTED_FIELDS = ["name", "accuracy", "eval_set", "source"]


# --- architectures: the published configs, written out (no hub access needed) ----------------------
@dataclasses.dataclass(frozen=True)
class Arch:
    hub_id: str
    kind: str  # "encoder" or "causal"
    model_type: str
    config: dict

    def make_config(self):
        from transformers import AutoConfig

        return AutoConfig.for_model(self.model_type, **self.config)


# Values of each model's config.json on the Hugging Face Hub (text model for Gemma 3).
ARCHITECTURES = {
    "minilm-l6": Arch(
        "sentence-transformers/all-MiniLM-L6-v2",
        "encoder",
        "bert",
        dict(
            vocab_size=30522,
            hidden_size=384,
            num_hidden_layers=6,
            num_attention_heads=12,
            intermediate_size=1536,
            max_position_embeddings=512,
        ),
    ),
    "mpnet-base": Arch(
        "sentence-transformers/all-mpnet-base-v2",
        "encoder",
        "mpnet",
        dict(
            vocab_size=30527,
            hidden_size=768,
            num_hidden_layers=12,
            num_attention_heads=12,
            intermediate_size=3072,
            max_position_embeddings=514,
        ),
    ),
    "eurobert-210m": Arch(
        "EuroBERT/EuroBERT-210m",
        "encoder",
        "eurobert",
        dict(
            vocab_size=128256,
            hidden_size=768,
            num_hidden_layers=12,
            num_attention_heads=12,
            num_key_value_heads=12,
            intermediate_size=3072,
            max_position_embeddings=8192,
            rms_norm_eps=1e-5,
            hidden_act="silu",
            rope_parameters={"rope_type": "default", "rope_theta": 250000.0},
        ),
    ),
    "modernbert-base": Arch(
        "answerdotai/ModernBERT-base",
        "encoder",
        "modernbert",
        dict(
            vocab_size=50368,
            hidden_size=768,
            num_hidden_layers=22,
            num_attention_heads=12,
            intermediate_size=1152,
            global_attn_every_n_layers=3,
            local_attention=128,
            max_position_embeddings=8192,
            classifier_pooling="mean",
        ),
    ),
    "qwen3-0.6b": Arch(
        "Qwen/Qwen3-0.6B",
        "causal",
        "qwen3",
        dict(
            vocab_size=151936,
            hidden_size=1024,
            intermediate_size=3072,
            num_hidden_layers=28,
            num_attention_heads=16,
            num_key_value_heads=8,
            head_dim=128,
            max_position_embeddings=40960,
            tie_word_embeddings=True,
        ),
    ),
    "qwen3-4b": Arch(
        "Qwen/Qwen3-4B",
        "causal",
        "qwen3",
        dict(
            vocab_size=151936,
            hidden_size=2560,
            intermediate_size=9728,
            num_hidden_layers=36,
            num_attention_heads=32,
            num_key_value_heads=8,
            head_dim=128,
            max_position_embeddings=40960,
            tie_word_embeddings=True,
        ),
    ),
    "qwen3-14b": Arch(
        "Qwen/Qwen3-14B",
        "causal",
        "qwen3",
        dict(
            vocab_size=151936,
            hidden_size=5120,
            intermediate_size=17408,
            num_hidden_layers=40,
            num_attention_heads=40,
            num_key_value_heads=8,
            head_dim=128,
            max_position_embeddings=40960,
            tie_word_embeddings=False,
        ),
    ),
    "gemma3-1b": Arch(
        "google/gemma-3-1b-it",
        "causal",
        "gemma3_text",
        dict(
            vocab_size=262144,
            hidden_size=1152,
            intermediate_size=6912,
            num_hidden_layers=26,
            num_attention_heads=4,
            num_key_value_heads=1,
            head_dim=256,
            sliding_window=512,
            query_pre_attn_scalar=256,
            max_position_embeddings=32768,
        ),
    ),
    "gemma3-4b": Arch(
        "google/gemma-3-4b-it",
        "causal",
        "gemma3_text",
        dict(
            vocab_size=262208,
            hidden_size=2560,
            intermediate_size=10240,
            num_hidden_layers=34,
            num_attention_heads=8,
            num_key_value_heads=4,
            head_dim=256,
            sliding_window=1024,
            query_pre_attn_scalar=256,
            max_position_embeddings=131072,
        ),
    ),
    "gemma3-12b": Arch(
        "google/gemma-3-12b-it",
        "causal",
        "gemma3_text",
        dict(
            vocab_size=262208,
            hidden_size=3840,
            intermediate_size=15360,
            num_hidden_layers=48,
            num_attention_heads=16,
            num_key_value_heads=8,
            head_dim=256,
            sliding_window=1024,
            query_pre_attn_scalar=256,
            max_position_embeddings=131072,
        ),
    ),
    "gemma3-27b": Arch(
        "google/gemma-3-27b-it",
        "causal",
        "gemma3_text",
        dict(
            vocab_size=262208,
            hidden_size=5376,
            intermediate_size=21504,
            num_hidden_layers=62,
            num_attention_heads=32,
            num_key_value_heads=16,
            head_dim=128,
            sliding_window=1024,
            query_pre_attn_scalar=168,
            max_position_embeddings=131072,
        ),
    ),
    # JudgeLM-7B/13B are fine-tuned Vicuna (Llama architecture, multi-head attention)
    "judgelm-7b": Arch(
        "BAAI/JudgeLM-7B-v1.0",
        "causal",
        "llama",
        dict(
            vocab_size=32000,
            hidden_size=4096,
            intermediate_size=11008,
            num_hidden_layers=32,
            num_attention_heads=32,
            num_key_value_heads=32,
            max_position_embeddings=2048,
            rms_norm_eps=1e-6,
            tie_word_embeddings=False,
        ),
    ),
    "judgelm-13b": Arch(
        "BAAI/JudgeLM-13B-v1.0",
        "causal",
        "llama",
        dict(
            vocab_size=32000,
            hidden_size=5120,
            intermediate_size=13824,
            num_hidden_layers=40,
            num_attention_heads=40,
            num_key_value_heads=40,
            max_position_embeddings=2048,
            rms_norm_eps=1e-6,
            tie_word_embeddings=False,
        ),
    ),
}
# generative baselines costed without a trained judge: (architecture, mode)
GENERATIVE_BASELINES = [
    ("qwen3-0.6b", "direct"),
    ("qwen3-4b", "direct"),
    ("qwen3-14b", "direct"),
    ("qwen3-0.6b", "reasoning"),
    ("qwen3-4b", "reasoning"),
    ("qwen3-14b", "reasoning"),
    ("gemma3-1b", "direct"),
    ("gemma3-4b", "direct"),
    ("gemma3-12b", "direct"),
    ("gemma3-27b", "direct"),
    ("judgelm-7b", SCORE_MODE),
    ("judgelm-13b", SCORE_MODE),
]
ENCODER_BASELINES = ["minilm-l6", "mpnet-base", "modernbert-base"]


def decode_steps(mode: str, k: int = REASONING_TOKENS) -> int:
    """Tokens generated after the prefill: ``k`` (reasoning), ``SCORE_TOKENS`` (score10), 0 (direct)."""
    return {"reasoning": k, SCORE_MODE: SCORE_TOKENS}.get(mode, 0)


def arch_for_backbone(backbone: str) -> str | None:
    """The architecture key of a backbone hub id (None when unknown)."""
    return next((key for key, arch in ARCHITECTURES.items() if arch.hub_id.lower() == str(backbone).lower()), None)


# --- FLOPs ---------------------------------------------------------------------------------------
def build_model(config, kind: str, num_labels: int = 1, device="meta", dtype=None, attn: str | None = "eager"):
    """A model of ``config`` (random weights; on ``meta`` nothing is allocated); ``attn=None``: the
    fastest attention the architecture supports."""
    import copy

    import torch
    from transformers import AutoModelForCausalLM, AutoModelForSequenceClassification

    config = copy.deepcopy(config)
    if kind == "encoder":
        config.num_labels = num_labels
        cls = AutoModelForSequenceClassification
    else:
        cls = AutoModelForCausalLM
    with torch.device(device):
        model = cls.from_config(config, attn_implementation=attn, dtype=dtype)
    return model.eval()


def count_flops(model, **inputs) -> int:
    """FLOPs of one forward call, by ``torch.utils.flop_counter``."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    with torch.no_grad(), FlopCounterMode(display=False) as counter:
        model(**inputs)
    return int(counter.get_total_flops())


def _ids(length: int, batch: int = 1, device="meta"):
    import torch

    return torch.zeros((batch, length), dtype=torch.long, device=device)


def judgment_flops(
    config, kind: str, length: int, mode: str = "encoder", k: int = REASONING_TOKENS, num_labels: int = 1
) -> tuple[int, int]:
    """(FLOPs per judgment, parameter count) of an architecture at ``length`` tokens (see module doc)."""
    model = build_model(config, "encoder" if kind == "encoder" else "causal", num_labels)
    params = sum(p.numel() for p in model.parameters())
    if kind == "encoder":
        return count_flops(model, input_ids=_ids(length)), params
    flops = count_flops(model, input_ids=_ids(length), logits_to_keep=1)
    steps = decode_steps(mode, k)
    if steps:
        first, last = (_decode_step_flops(model, context) for context in (length, length + steps - 1))
        flops += steps * (first + last) // 2
    return flops, params


def _decode_step_flops(model, context: int) -> int:
    """FLOPs of one decode step (one new token, LM head on it) after ``context`` cached tokens."""
    import torch

    with torch.no_grad():
        cache = model(input_ids=_ids(context), use_cache=True, logits_to_keep=1).cache
    return count_flops(model, input_ids=_ids(1), cache=cache, logits_to_keep=1)


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
    import numpy as np

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


# --- subjects: what is benchmarked ------------------------------------------------------------------
@dataclasses.dataclass
class Subject:
    """One row: a judge (zoo entry, exported folder, regex) or an architecture baseline."""

    name: str
    kind: str  # encoder | direct | reasoning | score10 | regex
    architecture: str | None = None
    format: JudgeFormat | None = None
    folder: Path | None = None
    num_labels: int = 1


def default_subjects(registry=None, folders=()) -> list[Subject]:
    """The regex judge, every registry entry with a known architecture, exported judge folders
    (``runs/quickstart/judge`` when it exists) and the encoder and generative baselines."""
    subjects, built = [Subject("regex.v1", "regex")], set()
    for name, entry in zoo.load_registry(registry).items():
        if entry["build"]:  # the project's own judges: measured from their exported folder once built
            folder = zoo.file_source(entry, registry)
            if (folder / "judge.json").is_file():
                subjects.append(folder_subject(folder, name, entry["architecture"]))
                built.add(Path(folder).resolve())
        elif entry["architecture"] in ARCHITECTURES:
            subjects.append(
                Subject(
                    name,
                    "encoder",
                    entry["architecture"],
                    JudgeFormat.from_dict(entry["format"]),
                    num_labels=entry["num_labels"],
                )
            )
    quickstart = (ROOT / "runs" / "quickstart" / "judge").resolve()
    default = [quickstart] if (quickstart / "judge.json").is_file() and quickstart not in built else []
    for folder in list(folders) or default:
        if Path(folder).resolve() not in built:  # a registry entry's folder is measured once, under its name
            subjects.append(folder_subject(Path(folder)))
    subjects += [
        Subject(f"{key}.arch", "encoder", key, JudgeFormat(order="QCR", max_length=512)) for key in ENCODER_BASELINES
    ]
    subjects += [Subject(f"{key}.{mode}", mode, key) for key, mode in GENERATIVE_BASELINES]
    return subjects


def folder_subject(folder: Path, name: str | None = None, architecture: str | None = None) -> Subject:
    """A subject for an exported judge folder; named ``<arch>.<run name>`` unless ``name`` is given."""
    config = json.loads((folder / "judge.json").read_text())
    prov = config.get("provenance", {})
    arch = architecture or arch_for_backbone(prov.get("backbone", "")) or "custom"
    kind = config.get("mode", "encoder") if "Generative" in config["class"] else "encoder"
    return Subject(
        name or f"{arch}.{prov.get('name', folder.parent.name)}",
        kind,
        arch,
        JudgeFormat.from_dict(config["format"]),
        folder,
        config.get("num_labels", 1),
    )


@dataclasses.dataclass
class EvalSet:
    """The labelled records accuracy is measured on: the set's name (its file name without the suffix),
    the sha256 of the file and its records."""

    name: str
    sha256: str
    records: list[dict]


def load_eval_set(path=None) -> EvalSet | None:
    """The records of ``path`` (default ``data/real/real-test-v1.jsonl.gz``), or None when it is absent."""
    path = Path(path or EVAL_FILE)
    if not path.is_file():
        return None
    name = next((path.name[: -len(s)] for s in RECORD_SUFFIXES if path.name.endswith(s)), path.name)
    return EvalSet(name, hashlib.sha256(path.read_bytes()).hexdigest(), read_records(path))


def eval_records(n: int, seed: int) -> list[dict]:
    """The labelled embedded test split (for token lengths)."""
    return generate("test", n, seed)


def proxy_tokenizer():
    """The tokenizer that measures the token length of architectures without a trained judge."""
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(backbones.resolve(PROXY_TOKENIZER))


def median_tokens(records, tokenizer, subject: Subject) -> int:
    """Median token length of ``records`` as ``subject`` reads them (generative: the judging prompt)."""
    if subject.kind in ("direct", "reasoning", SCORE_MODE):
        encoder = Encoder(tokenizer, JudgeFormat(order="QCR", truncation="left", max_length=1 << 20))
        parts = (
            ["question", "reference", "candidate"]
            if subject.kind == SCORE_MODE
            else ["question", "candidate", "reference"]
        )
        texts = [prompt_text(encoder.texts(r), parts, subject.kind) for r in records]
        lengths = [len(ids) for ids in tokenizer(texts, add_special_tokens=True)["input_ids"]]
    else:
        fmt = subject.format or JudgeFormat()
        missing = [t for t in fmt.new_tokens if t not in tokenizer.get_vocab()]
        if missing:
            tokenizer.add_special_tokens({"additional_special_tokens": missing})
        lengths = [len(ids) for ids in Encoder(tokenizer, fmt).encode_many(records)]
    return int(statistics.median(lengths))


# --- measuring --------------------------------------------------------------------------------------
def environment(device: str, dtype: str) -> dict:
    import torch
    import transformers

    if device.startswith("cuda"):
        hardware = torch.cuda.get_device_name(0)
    else:
        cpu = (
            next(
                (
                    line.split(":", 1)[1].strip()
                    for line in Path("/proc/cpuinfo").read_text().splitlines()
                    if line.startswith("model name")
                ),
                platform.processor(),
            )
            if Path("/proc/cpuinfo").is_file()
            else platform.processor()
        )
        hardware = f"{cpu}, {torch.get_num_threads()} threads"
    return {
        "device": device.split(":")[0],
        "dtype": dtype,
        "hardware": hardware,
        "torch": torch.__version__.split("+")[0],
        "transformers": transformers.__version__,
        "measured_at": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }


def _accuracy(judge, eval_set: EvalSet, env: dict, name: str) -> dict:
    """Accuracy over the whole set and per category (None for a category without rows)."""
    import numpy as np

    records = eval_set.records
    scores = np.asarray(judge.score_records(records))
    labels = np.array([r["label"] for r in records])
    correct = (scores >= getattr(judge, "threshold", 0.5)) == labels
    categories = np.array([r["category"] for r in records])
    per_category = {
        f"acc_{c}": round(float(correct[categories == c].mean()), 4) if (categories == c).any() else None
        for c in CATEGORIES
    }
    return {
        "name": name,
        "accuracy": round(float(correct.mean()), 4),
        **per_category,
        "n": len(records),
        "eval_set": eval_set.name,
        "eval_sha256": eval_set.sha256[:12],
        "source": "measured",
        **{k: env[k] for k in ("device", "dtype", "torch", "measured_at")},
    }


class BenchError(BertJudgeError, RuntimeError):
    """A benchmark cannot do what it was asked (no results to render, ...)."""


def measure(
    subject: Subject,
    records: list[dict] | None,
    device: str = "cpu",
    dtype: str = "fp32",
    timing: bool = True,
    max_timed_params: float = 3e9,
    k: int = REASONING_TOKENS,
    tokenizer=None,
    eval_set: EvalSet | None = None,
    min_run_time: float = MIN_RUN_TIME,
    max_load: float = MAX_LOAD,
) -> tuple[dict, dict | None]:
    """(cost row, accuracy row or None) of one subject: ``records`` give the token length (and the
    regex judge's timing), ``eval_set`` the accuracy of a judge that runs here (timed or not). A timed
    row carries the machine's load while it was timed and ``busy`` when others took more than
    ``max_load`` per core; whether a busy row is written is the caller's choice."""
    import torch

    env = environment(device, dtype)
    torch_dtype = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}[dtype]
    row = {"name": subject.name, "judge_kind": subject.kind, "architecture": subject.architecture or "", **env}
    if subject.kind == "regex":
        return _measure_regex(row, records, timing, min_run_time, max_load), _regex_accuracy(eval_set, env, subject)

    judge = None
    if subject.folder is not None:
        judge = Judge.load(str(subject.folder))
        tokenizer_used, config = judge.tokenizer, judge.model.config
        folder = Path(subject.folder).resolve()
        shown = folder.relative_to(Path.cwd()) if folder.is_relative_to(Path.cwd()) else folder  # no machine paths
        row.update(config_source=str(shown), weights="trained (exported judge)")
    else:
        arch = ARCHITECTURES[subject.architecture]
        tokenizer_used, config = tokenizer or proxy_tokenizer(), arch.make_config()
        row.update(
            config_source=f"{arch.hub_id} (config written in bertjudge.evaluation.bench)",
            weights="random (exact architecture)",
        )
    if records:
        row["tokens"] = median_tokens(records, tokenizer_used, subject)
        proxy = "" if subject.folder is not None else f", proxy tokenizer {PROXY_TOKENIZER}"
        row["length_source"] = f"median of embedded:test n={len(records)}{proxy}"
    else:
        row["tokens"], row["length_source"] = DEFAULT_TOKENS, "default (no evaluation set)"
    model_kind = "encoder" if subject.kind == "encoder" else "causal"
    row["flops"], row["params"] = judgment_flops(config, model_kind, row["tokens"], subject.kind, k, subject.num_labels)
    if subject.kind == "reasoning":
        row["notes"] = f"prefill + {k} reasoning tokens (decode with KV cache)"
    elif subject.kind == SCORE_MODE:
        row["notes"] = (
            f"JudgeLM-style: prefill of the JudgeLM prompt + {SCORE_TOKENS} tokens for the 1-10 score "
            "line (decode with KV cache)"
        )
    if row["params"] >= max_timed_params:
        if timing:
            row["notes"] = _join(
                row.get("notes"),
                f"not timed: {row['params'] / 1e9:.1f}B parameters (limit {max_timed_params / 1e9:.0f}B here); "
                "FLOPs only",
            )
        return row, None
    if timing:
        timing_key = (subject.architecture, subject.kind, row["tokens"], subject.num_labels, device, dtype, k)
        if judge is not None or timing_key not in _TIMINGS:  # architectures are timed once per length in a process
            judge = None  # freed: loaded again inside the peak-memory block
            judge, timed = _time_subject(
                subject, config, model_kind, row["tokens"], device, torch_dtype, k, min_run_time
            )
            _TIMINGS[timing_key] = timed
        timed = _TIMINGS[timing_key]
        row.update({key: value for key, value in timed.items() if key not in ("notes", "other_load_raw")})
        row["busy"] = "yes" if is_busy(timed["other_load_raw"], max_load) else ""
        row["notes"] = _join(row.get("notes"), timed["notes"])
    accuracy = None
    if judge is not None and eval_set:
        judge.to(device=device, dtype=torch_dtype)
        accuracy = _accuracy(judge, eval_set, env, subject.name)
    return row, accuracy


_TIMINGS: dict[tuple, dict] = {}


def clear_timings() -> None:
    """Forget the architectures timed in this process, so that the next ``measure`` times them again."""
    _TIMINGS.clear()


def measure_rounds(
    subjects: list[Subject],
    records: list[dict] | None,
    rounds: int = ROUNDS,
    eval_set: EvalSet | None = None,
    progress=None,
    on_round=None,
    on_error=None,
    **kwargs,
) -> list[tuple[dict | None, dict | None]]:
    """(cost row, accuracy row or None) of every subject, timed ``rounds`` times in turns: round 1 measures every
    subject as ``measure`` does (accuracy included), each later round times every timed subject again afresh, and
    each cost row keeps the rounds' medians (``merge_rounds``). On a shared virtual machine a subject's speed moves
    by a quarter from one stretch of seconds to the next; the rounds spread its timings over the whole run, so that
    two runs see alike what one contiguous timing would catch by chance. ``kwargs`` go to ``measure``.

    ``progress(round, subject)`` is called before each measurement, ``on_round(round, results)`` after each round
    with the results so far (a caller writes them: an interrupted run keeps the rounds it finished). Without
    ``on_error`` a subject's error is raised; with it, ``on_error(subject, error)`` is called, that subject is left
    out of later rounds and keeps the rounds it finished ((None, None) when none), and the others go on."""
    if rounds < 1:
        raise ValueError(f"rounds must be at least 1, got {rounds}")
    per_round: dict[str, list[dict]] = {s.name: [] for s in subjects}
    accuracy: dict[str, dict | None] = {}
    max_load = kwargs.get("max_load", MAX_LOAD)

    def results() -> list[tuple[dict | None, dict | None]]:
        return [
            (merge_rounds(per_round[s.name], max_load), accuracy.get(s.name)) if per_round[s.name] else (None, None)
            for s in subjects
        ]

    timed = list(subjects)
    for number in range(1, rounds + 1):
        clear_timings()  # every round times afresh
        for subject in list(timed):
            if progress is not None:
                progress(number, subject)
            try:
                cost, acc = measure(subject, records, eval_set=eval_set if number == 1 else None, **kwargs)
            except Exception as error:
                if on_error is None:
                    raise
                on_error(subject, error)
                timed.remove(subject)
                continue
            per_round[subject.name].append(cost)
            if number == 1:
                accuracy[subject.name] = acc
        if on_round is not None:
            on_round(number, results())
        if not kwargs.get("timing", True):
            break
        timed = [s for s in timed if per_round[s.name][0].get("latency_p50_ms") not in (None, "")]
    return results()


def merge_rounds(rows: list[dict], max_load: float = MAX_LOAD) -> dict:
    """One cost row from a subject's rounds (the first kept round's other cells). Rounds timed on a busy machine
    (other processes above ``max_load`` per core) are left out while any round was idle; the row is busy only when
    every round was. Of the rounds kept, latency p50 and p95, throughput and the machine's GEMM speed
    (``machine_gflops``) are the medians, the spread the rounds' p50 IQR / median, the runs summed, peak memory and
    other processes' load the largest, the load averages those before the first and after the last round kept.
    ``rounds`` is how many rounds were kept (0: none was timed)."""
    import statistics

    timed = [r for r in rows if r.get("latency_p50_ms") not in (None, "")]
    idle = [r for r in timed if r.get("busy") != "yes"]
    left_out = len(timed) - len(idle) if idle else 0
    timed = idle or timed
    row = dict(timed[0] if timed else rows[0])
    row["rounds"] = len(timed)
    if len(timed) < 2:
        if left_out:
            row["notes"] = _join(row.get("notes"), f"{left_out} busy round(s) left out")
        return row
    p50 = [r["latency_p50_ms"] for r in timed]
    row["latency_p50_ms"] = statistics.median(p50)
    row["latency_p95_ms"] = statistics.median(r["latency_p95_ms"] for r in timed)
    quartiles = statistics.quantiles(p50, n=4, method="inclusive")
    row["latency_spread"] = round((quartiles[2] - quartiles[0]) / row["latency_p50_ms"], 4)
    row["timing_runs"] = sum(r["timing_runs"] for r in timed)
    row["calls_per_run"] = statistics.median_low(r["calls_per_run"] for r in timed)
    if all(r.get("throughput_per_s") not in (None, "") for r in timed):
        row["throughput_per_s"] = statistics.median(r["throughput_per_s"] for r in timed)
        row["best_batch_size"] = statistics.mode(r["best_batch_size"] for r in timed)
    for key, combine in (("peak_mem_mb", max), ("other_load", max), ("machine_gflops", statistics.median)):
        values = [r[key] for r in timed if isinstance(r.get(key), (int, float))]
        if values:
            row[key] = round(combine(values), 3)
    if isinstance(row.get("other_load"), (int, float)):
        row["busy"] = "yes" if is_busy(row["other_load"], max_load) else ""
    row["loadavg_before"], row["loadavg_after"] = timed[0].get("loadavg_before", ""), timed[-1].get("loadavg_after", "")
    busy = f" ({left_out} busy round(s) left out)" if left_out else ""
    row["notes"] = _join(row.get("notes"), f"medians of {len(timed)} rounds taken in turns{busy}")
    return row


def _join(*notes) -> str:
    return "; ".join(filter(None, notes))


def _time_subject(subject, config, model_kind, tokens, device, torch_dtype, k, min_run_time) -> tuple:
    """(the judge or None, the timing cells) of a subject built (architecture) or loaded again (judge
    folder) inside the peak-memory block, so that its weights count in every row alike."""
    judge = None
    with PeakMemory(device) as peak:
        if subject.folder is not None:
            judge = Judge.load(str(subject.folder))
            model = judge.model
        else:
            model = build_model(config, model_kind, subject.num_labels, "cpu", torch_dtype, attn=None)
        model = model.to(device=device, dtype=torch_dtype).eval()
        on_cpu = str(device).startswith("cpu")  # the probe is the CPU's speed: it says nothing of a GPU's
        before = machine_gflops() if on_cpu else None
        with MachineLoad() as load:
            timed = time_model(model, model_kind, tokens, device, subject.kind, k, min_run_time=min_run_time)
        if on_cpu:
            timed["machine_gflops"] = round(min(before, machine_gflops()), 1)
    timed["peak_mem_mb"], note = peak_memory_cell(peak.mb, model)
    timed.update(load.fields(), other_load_raw=load.other_load)
    timed["notes"] = _join(timed.get("notes"), note)
    return judge, timed


def _measure_regex(row: dict, records, timing: bool, min_run_time: float, max_load: float) -> dict:
    """The regex judge's row: 0 FLOPs; latency per record over up to 100 records of ``records``, each
    judged alone, in ``torch.utils.benchmark`` runs that judge them all."""
    judge = RegexJudge()
    row.update(weights="none", flops=0, notes="rules only, no neural network: 0 FLOPs")
    if not records:
        row["notes"] += "; not timed (no evaluation set)"
    elif timing:
        sample = records[:100]

        def judge_each():
            for record in sample:
                judge.score_records([record])

        before = machine_gflops()
        with MachineLoad(max_load) as load:
            m = measure_calls(judge_each, min_run_time)
        row.update(latency_cells(m, per_call=len(sample)), best_batch_size=1, **load.fields())
        row["machine_gflops"] = round(min(before, machine_gflops()), 1)
        row["throughput_per_s"] = 1000 / row["latency_p50_ms"]
        row["notes"] += f"; latency = a run over {len(sample)} records judged one at a time, per record"
    return row


def _regex_accuracy(eval_set: EvalSet | None, env: dict, subject: Subject) -> dict | None:
    return _accuracy(RegexJudge(), eval_set, env, subject.name) if eval_set else None


def measure_judge_folder(
    folder,
    name: str,
    n: int = 2000,
    seed: int = 0,
    architecture: str | None = None,
    timing: bool = True,
    device: str = "cpu",
    dtype: str = "fp32",
    eval_path=None,
    min_run_time: float = MIN_RUN_TIME,
    max_load: float = MAX_LOAD,
    rounds: int = ROUNDS,
) -> tuple[dict, dict | None]:
    """Cost (token length from ``n`` embedded test records; timed in ``rounds`` as ``bench run`` times) and
    accuracy (on ``eval_path``, default real-test-v1, every row) of an exported judge folder."""
    [(cost, accuracy)] = measure_rounds(
        [folder_subject(Path(folder), name, architecture)],
        eval_records(n, seed),
        rounds,
        load_eval_set(eval_path),
        device=device,
        dtype=dtype,
        timing=timing,
        min_run_time=min_run_time,
        max_load=max_load,
    )
    return cost, accuracy


# --- results files ----------------------------------------------------------------------------------
def results_file(kind: str, row: dict, results_dir=None) -> Path:
    return Path(results_dir or RESULTS_DIR) / f"{kind}-{row['device']}-{row['dtype']}-torch{row['torch']}.csv"


def read_csv(path: Path) -> list[dict]:
    if not path.is_file():
        return []
    with open(path, newline="") as handle:
        return [row for row in csv.DictReader(line for line in handle if not line.startswith("#"))]


def write_results(rows: list[dict], kind: str, results_dir=None) -> list[Path]:
    """Insert or replace rows (by name) in their results files, atomically; returns the files."""
    fields = COST_FIELDS if kind == "cost" else ACCURACY_FIELDS
    by_file: dict[Path, list[dict]] = {}
    for row in rows:
        by_file.setdefault(results_file(kind, row, results_dir), []).append(row)
    for path, new in by_file.items():
        names = {row["name"] for row in new}
        merged = [row for row in read_csv(path) if row["name"] not in names] + new
        merged.sort(key=lambda row: row["name"])
        write_table(path, [{key: _fmt_cell(row.get(key)) for key in fields} for row in merged], fields)
    return list(by_file)


def write_table(path, rows: list[dict], fields: list[str] | None = None) -> Path:
    """``rows`` as a CSV file at ``path`` (columns ``fields``, default the first row's keys), written atomically:
    a temporary sibling renamed over it. The benchmark scripts' results files are written with it too."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields or list(rows[0]), extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    os.replace(tmp, path)
    return path


def _fmt_cell(value):
    if isinstance(value, float):
        return f"{value:.4g}" if abs(value) < 1e6 else f"{value:.6e}"
    return "" if value is None else value


# --- the Pareto table and plot ------------------------------------------------------------------------
def _float(value) -> float | None:
    try:
        return float(value) if value not in (None, "") else None
    except ValueError:
        return None


def pareto_front(points: list[tuple[str, float, float]]) -> set[str]:
    """Names of the points (name, flops, accuracy) that no other point beats on both axes."""
    front, best = set(), -math.inf
    for name, _, accuracy in sorted(points, key=lambda p: (p[1], -p[2])):
        if accuracy > best:
            front.add(name)
            best = accuracy
    return front


def row_is_busy(row: dict) -> bool:
    """A results row written with ``--allow-busy`` while other processes loaded the machine."""
    return str(row.get("busy") or "").strip().lower() in ("yes", "true", "1")


def busy_rows(results_dir=None) -> dict[str, list[str]]:
    """Per cost file (by its stem), the names of the rows left out of the table for being busy."""
    return {
        path.stem: names
        for path in sorted(Path(results_dir or RESULTS_DIR).glob("cost-*.csv"))
        if (names := [row["name"] for row in read_csv(path) if row_is_busy(row)])
    }


def result_tables(results_dir=None, quoted_file=None) -> dict[str, list[dict]]:
    """Per cost file: its rows (but those timed on a busy machine: ``busy_rows``) joined with their
    accuracy on real-test-v1, overall (``accuracy``) and per category (``acc_<category>``), measured on
    the same device and dtype, else on any; the Pareto front flag (real-test-v1 accuracies only).
    Accuracy rows of another evaluation set are left out (``accuracy_source`` says so); a quoted
    accuracy (the authors' figure on their own test set) is kept apart in ``quoted_accuracy``, out of
    the front and the plot."""
    results_dir = Path(results_dir or RESULTS_DIR)
    measured: dict[str, dict] = {}
    other_sets: dict[str, set[str]] = {}
    for path in sorted(results_dir.glob("accuracy-*.csv")):
        for row in read_csv(path):
            if row.get("eval_set") == EVAL_SET:
                measured.setdefault(row["name"], row)
            else:
                other_sets.setdefault(row["name"], set()).add(row.get("eval_set") or "unknown set")
    quoted = {row["name"]: row for row in read_csv(Path(quoted_file or QUOTED_FILE))}
    tables = {}
    for path in sorted(results_dir.glob("cost-*.csv")):
        same = {
            row["name"]: row
            for row in read_csv(path.with_name(path.name.replace("cost-", "accuracy-", 1)))
            if row.get("eval_set") == EVAL_SET
        }
        rows = []
        for row in read_csv(path):
            if row_is_busy(row):  # timed on a busy machine: its timings say nothing about the judge
                continue
            acc = same.get(row["name"]) or measured.get(row["name"]) or {}
            row.update(
                accuracy=acc.get("accuracy", ""),
                **{f"acc_{c}": acc.get(f"acc_{c}", "") for c in CATEGORIES},
                quoted_accuracy="",
                accuracy_source="",
            )
            if acc:
                row["accuracy_source"] = f"measured, {EVAL_SET} (sha256 {acc.get('eval_sha256') or '?'}, n={acc['n']})"
            elif row["name"] in quoted:
                q = quoted[row["name"]]
                row.update(
                    quoted_accuracy=q["accuracy"],
                    accuracy_source=f"quoted on another test set, not {EVAL_SET}: {q['source']} ({q['eval_set']})",
                )
            elif row["name"] in other_sets:
                row["accuracy_source"] = (
                    f"not measured on {EVAL_SET} yet; only on {', '.join(sorted(other_sets[row['name']]))}"
                )
            rows.append(row)
        points = [(r["name"], _float(r["flops"]), _float(r["accuracy"])) for r in rows]
        front = pareto_front([p for p in points if p[1] is not None and p[2] is not None])
        for row in rows:
            row["front"] = row["name"] in front
        rows.sort(key=lambda r: (_float(r["flops"]) if _float(r["flops"]) is not None else math.inf, r["name"]))
        tables[path.stem] = rows
    return tables


def _num(value, scale: float = 1.0, digits: int = 3) -> str:
    x = _float(value)
    return "" if x is None else f"{x / scale:.{digits}g}"


CATEGORY_HEADERS = {
    "open_qa": "open QA",
    "multiple_choice": "MC",
    "context_extraction": "extraction",
    "open_math": "math",
}


def markdown_table(rows: list[dict]) -> str:
    """The Pareto table of one cost file, as Markdown: accuracy on real-test-v1, overall and per category."""
    categories = " | ".join(CATEGORY_HEADERS[c] for c in CATEGORIES)
    lines = [
        "| judge | kind | params (M) | tokens | GFLOPs / judgment | latency p50 / p95 (ms) | "
        f"throughput (/s, batch) | peak mem (MB) | accuracy ({EVAL_SET}) | {categories} | front |",
        "|" + "---|" * (10 + len(CATEGORIES)),
    ]
    for r in rows:
        latency = f"{_num(r['latency_p50_ms'])} / {_num(r['latency_p95_ms'])}" if r["latency_p50_ms"] else "not timed"
        throughput = f"{_num(r['throughput_per_s'])} (b={r['best_batch_size']})" if r["throughput_per_s"] else ""
        if r["accuracy"]:
            accuracy = f"{float(r['accuracy']):.3f}"
        elif r["quoted_accuracy"]:
            accuracy = f"({float(r['quoted_accuracy']):.3f}: {r['accuracy_source']})"
        else:
            accuracy = f"n/a ({r['accuracy_source']})" if r["accuracy_source"] else "n/a"
        per_category = " | ".join(_num(r[f"acc_{c}"]) for c in CATEGORIES)
        lines.append(
            f"| `{r['name']}` | {r['judge_kind']} | {_num(r['params'], 1e6)} | {r['tokens']} | "
            f"{_num(r['flops'], 1e9, 4)} | {latency} | {throughput} | {_num(r['peak_mem_mb'], 1, 4)} | "
            f"{accuracy} | {per_category} | {'*' if r['front'] else ''} |"
        )
    return "\n".join(lines)


def plot_pareto(rows: list[dict], path=None) -> Path:
    """Accuracy on real-test-v1 against FLOPs per judgment (log scale), the front highlighted; judges
    without a real-test-v1 accuracy (quoted ones included) are marked along the bottom. FLOPs of 0
    (rules) are drawn at the left edge."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    path = Path(path or PARETO_PNG)
    positive = [_float(r["flops"]) for r in rows if (_float(r["flops"]) or 0) > 0]
    floor = min(positive) / 30 if positive else 1.0
    fig, ax = plt.subplots(figsize=(10, 6))
    scored = [r for r in rows if r["accuracy"] and _float(r["flops"]) is not None]
    unscored = [r for r in rows if not r["accuracy"] and _float(r["flops"]) is not None]

    def x(r):
        return max(_float(r["flops"]), floor)

    for r in scored:
        ax.scatter(x(r), float(r["accuracy"]), s=60, color="tab:red" if r["front"] else "tab:blue", zorder=3)
        label = r["name"] + (" (0 FLOPs)" if _float(r["flops"]) == 0 else "")
        ax.annotate(label, (x(r), float(r["accuracy"])), textcoords="offset points", xytext=(5, 5), fontsize=8)
    front = sorted((r for r in scored if r["front"]), key=x)
    if front:
        ax.step(
            [x(r) for r in front],
            [float(r["accuracy"]) for r in front],
            where="post",
            color="tab:red",
            label="Pareto front",
        )
    ax.set_xscale("log")
    ax.set_xlabel("FLOPs per judgment (log scale)")
    ax.set_ylabel(f"accuracy on {EVAL_SET}")
    ymin = min([float(r["accuracy"]) for r in scored] + [0.5]) - 0.08
    ax.set_ylim(ymin, 1.0)
    same_cost: dict[float, list[str]] = {}
    for r in unscored:
        same_cost.setdefault(x(r), []).append(r["name"])
    for i, (flops, names) in enumerate(sorted(same_cost.items())):
        label = names[0] + (f" (+{len(names) - 1} of the same cost)" if len(names) > 1 else "")
        ax.scatter(flops, ymin + 0.01, marker="|", s=200, color="gray")
        ax.annotate(
            label,
            (flops, ymin + 0.01),
            rotation=60,
            fontsize=7,
            color="gray",
            textcoords="offset points",
            xytext=(2, 6 + 4 * (i % 2)),
        )
    ax.set_title(f"bertjudge: accuracy on {EVAL_SET} vs compute (gray ticks: no {EVAL_SET} accuracy yet)")
    ax.grid(True, which="both", alpha=0.3)
    if front:
        ax.legend(loc="upper right")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    fig.savefig(tmp, dpi=120, format="png")
    plt.close(fig)
    os.replace(tmp, path)
    return path


def flops_ratio(
    rows: list[dict], big: str = "qwen3-14b.direct", small: str = "eurobert-210m.bertjudge"
) -> float | None:
    flops = {r["name"]: _float(r["flops"]) for r in rows}
    return flops[big] / flops[small] if flops.get(big) and flops.get(small) else None
