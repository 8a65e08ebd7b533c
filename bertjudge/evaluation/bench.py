"""Cost of judges: FLOPs per judgment, latency, throughput, peak memory; the Pareto table and plot.

``python -m bertjudge bench run|pareto|archs``. The protocol is in ``benchmarks/README.md``:

- FLOPs are counted by ``torch.utils.flop_counter.FlopCounterMode`` (matmuls and attention; a
  multiply-add is 2 FLOPs; norms, softmax and other element-wise ops are not counted) for one
  judgment at the median token length of the embedded test split (``embedded:test``, n=2000), on the
  ``meta`` device (no memory used), with eager attention so that attention matmuls are counted on every device.
  Encoders: one forward pass. Generative, direct: one prefill of the prompt with the LM head at the
  last position only, whose logits give the verdict token. Generative, reasoning: that prefill plus
  ``k`` single-token decode steps with a KV cache; decode FLOPs are linear in the context length,
  so two counted steps (contexts L and L + k - 1) give the exact sum k (f(L) + f(L + k - 1)) / 2.
  JudgeLM-style (``score10``): the JudgeLM prompt's prefill plus ``SCORE_TOKENS`` (10) decode steps
  for the 1–10 score line, counted the same way.
- Latency p50/p95 at batch 1, throughput at the best of a few batch sizes, peak memory (CUDA:
  ``max_memory_allocated``; CPU: the process's peak resident set growth, Linux ``VmHWM``), with
  random weights of the exact architecture where no trained weights exist offline.
- Accuracy of the judges that run here: verdicts at the judge's threshold against the labels of the
  frozen real-output test set ``data/real/real-test-v1.jsonl.gz`` (every row), overall and per
  category; the row names the set and the first 12 hex digits of its sha256. Rows measured on another
  set (the embedded test split, before) stay in the files but are left out of the table and the plot.
- Results go to ``benchmarks/results/<kind>-<device>-<dtype>-torch<version>.csv`` (kind ``cost`` or
  ``accuracy``), one row per judge keyed by its zoo name, written atomically.
"""

from __future__ import annotations

import csv
import dataclasses
import datetime
import hashlib
import json
import math
import os
import platform
import statistics
import time
from pathlib import Path

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
    "device",
    "dtype",
    "hardware",
    "torch",
    "transformers",
    "measured_at",
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


class PeakMemory:
    """Peak memory during a block, in MB: CUDA allocator peak, or growth of the CPU peak RSS (Linux)."""

    def __init__(self, device: str):
        self.device, self.mb = device, None

    def __enter__(self):
        import torch

        if self.device.startswith("cuda"):
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
            self.start = torch.cuda.memory_allocated()
        else:
            try:
                Path("/proc/self/clear_refs").write_text("5")  # resets VmHWM to the current RSS
            except OSError:
                pass
            self.start = _rss_kb("VmRSS")
        return self

    def __exit__(self, *exc):
        import torch

        if self.device.startswith("cuda"):
            torch.cuda.synchronize()
            self.mb = torch.cuda.max_memory_allocated() / 2**20
        elif self.start is not None and _rss_kb("VmHWM") is not None:
            self.mb = (_rss_kb("VmHWM") - self.start) / 1024


def _timed(fn, device: str, budget_s: float, min_reps: int = 5, max_reps: int = 30, warmup: int = 2) -> list[float]:
    """Wall-clock seconds of repeated calls of ``fn`` (after warm-up), within a time budget."""
    import torch

    def sync():
        if device.startswith("cuda"):
            torch.cuda.synchronize()

    for _ in range(warmup):
        fn()
    sync()
    times, start = [], time.perf_counter()
    while len(times) < max_reps and (len(times) < min_reps or time.perf_counter() - start < budget_s):
        t = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - t)
    return times


def _percentile(values: list[float], q: float) -> float:
    import numpy as np

    return float(np.percentile(values, q))


def time_model(
    model,
    kind: str,
    length: int,
    device: str,
    mode: str = "encoder",
    k: int = REASONING_TOKENS,
    batch_sizes=None,
    budget_s: float = 8.0,
) -> dict:
    """Latency p50/p95 (ms) at batch 1 and the best throughput (judgments/s) of ``model``."""
    import torch

    batch_sizes = batch_sizes or ((1, 8, 32, 128) if device.startswith("cuda") else (1, 4, 16))
    extra = {} if kind == "encoder" else {"logits_to_keep": 1}

    def forward(batch):
        ids = torch.randint(5, 1000, (batch, length), device=device)
        return lambda: model(input_ids=ids, **extra)

    out, notes = {}, []
    with torch.inference_mode():
        lat = _timed(forward(1), device, budget_s)
        steps = decode_steps(mode, k)
        if steps:
            step = _decode_latency(model, length, device, budget_s)
            out["latency_p50_ms"] = 1000 * (_percentile(lat, 50) + steps * _percentile(step, 50))
            out["latency_p95_ms"] = 1000 * (_percentile(lat, 95) + steps * _percentile(step, 95))
            notes.append(f"latency = prefill + {steps} x measured decode step ({1000 * _percentile(step, 50):.1f} ms)")
            out["notes"] = "; ".join(notes)
            return out
        out["latency_p50_ms"], out["latency_p95_ms"] = 1000 * _percentile(lat, 50), 1000 * _percentile(lat, 95)
        best = (1 / statistics.median(lat), 1)
        for batch in batch_sizes[1:]:
            if statistics.median(lat) * batch > budget_s:  # would not fit the budget
                notes.append(f"batch sizes above {best[1]} not tried (time budget)")
                break
            times = _timed(forward(batch), device, budget_s, min_reps=3, max_reps=5, warmup=1)
            best = max(best, (batch / statistics.median(times), batch))
        out["throughput_per_s"], out["best_batch_size"] = best
    out["notes"] = "; ".join(notes)
    return out


def _decode_latency(model, length: int, device: str, budget_s: float) -> list[float]:
    import torch

    state = {"cache": model(input_ids=_ids(length, device=device), use_cache=True, logits_to_keep=1).cache}
    token = torch.ones((1, 1), dtype=torch.long, device=device)

    def step():
        state["cache"] = model(input_ids=token, cache=state["cache"], use_cache=True, logits_to_keep=1).cache

    return _timed(step, device, budget_s / 2, min_reps=5, max_reps=20, warmup=1)


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
                built.add(folder)
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
) -> tuple[dict, dict | None]:
    """(cost row, accuracy row or None) of one subject: ``records`` give the token length (and the
    regex judge's timing), ``eval_set`` the accuracy of a judge that runs here."""
    import torch

    env = environment(device, dtype)
    torch_dtype = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}[dtype]
    row = {"name": subject.name, "judge_kind": subject.kind, "architecture": subject.architecture or "", **env}
    if subject.kind == "regex":
        judge = RegexJudge()
        row.update(weights="none", flops=0, notes="rules only, no neural network: 0 FLOPs")
        if not records:
            row["notes"] += "; not timed (no evaluation set)"
        elif timing:
            sample = records[:100]
            times = [_time_once(lambda r=r: judge.score_records([r])) for r in sample]
            row.update(
                latency_p50_ms=1000 * _percentile(times, 50),
                latency_p95_ms=1000 * _percentile(times, 95),
                throughput_per_s=len(sample) / sum(times),
                best_batch_size=1,
            )
            row["notes"] += f"; {_load_note(device)}"
        return row, _accuracy(judge, eval_set, env, subject.name) if eval_set else None

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
    if not timing:
        return row, None
    if row["params"] >= max_timed_params:
        row["notes"] = "; ".join(
            filter(
                None,
                [
                    row.get("notes"),
                    f"not timed: {row['params'] / 1e9:.1f}B parameters "
                    f"(limit {max_timed_params / 1e9:.0f}B here); FLOPs only",
                ],
            )
        )
        return row, None
    load = _load_note(device)
    timing_key = (subject.architecture, subject.kind, row["tokens"], subject.num_labels, device, dtype, k)
    if judge is not None or timing_key not in _TIMINGS:  # architectures are timed once per length in a process
        with PeakMemory(device) as peak:
            model = (
                judge.model
                if judge is not None
                else build_model(config, model_kind, subject.num_labels, "cpu", torch_dtype, attn=None)
            )
            model = model.to(device=device, dtype=torch_dtype).eval()
            timed = time_model(model, model_kind, row["tokens"], device, subject.kind, k)
        timed["peak_mem_mb"] = round(peak.mb, 1) if peak.mb is not None else ""
        timed["notes"] = "; ".join(filter(None, [timed.get("notes"), load]))
        _TIMINGS[timing_key] = timed
    timed = _TIMINGS[timing_key]
    row.update({key: value for key, value in timed.items() if key != "notes"})
    row["notes"] = "; ".join(filter(None, [row.get("notes"), timed["notes"]]))
    accuracy = None
    if judge is not None and eval_set:
        judge.to(device=device, dtype=torch_dtype)
        accuracy = _accuracy(judge, eval_set, env, subject.name)
    return row, accuracy


_TIMINGS: dict[tuple, dict] = {}


def _load_note(device: str) -> str:
    """The machine's load when timing started: timings on a busy CPU are slower than alone."""
    if device.startswith("cuda") or not hasattr(os, "getloadavg"):
        return ""
    return f"CPU load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores when timed"


def _time_once(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


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
) -> tuple[dict, dict | None]:
    """Cost (token length from ``n`` embedded test records) and accuracy (on ``eval_path``, default
    real-test-v1, every row) of an exported judge folder."""
    subject = folder_subject(Path(folder), name, architecture)
    return measure(subject, eval_records(n, seed), device, dtype, timing=timing, eval_set=load_eval_set(eval_path))


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
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.tmp")
        with open(tmp, "w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=fields, extrasaction="ignore")
            writer.writeheader()
            for row in merged:
                writer.writerow({key: _fmt_cell(row.get(key)) for key in fields})
        os.replace(tmp, path)
    return list(by_file)


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


def result_tables(results_dir=None, quoted_file=None) -> dict[str, list[dict]]:
    """Per cost file: its rows joined with their accuracy on real-test-v1, overall (``accuracy``) and per
    category (``acc_<category>``), measured on the same device and dtype, else on any; the Pareto
    front flag (real-test-v1 accuracies only). Accuracy rows of another evaluation set are left out
    (``accuracy_source`` says so); a quoted accuracy (the authors' figure on their own test set) is
    kept apart in ``quoted_accuracy``, out of the front and the plot."""
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
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def flops_ratio(
    rows: list[dict], big: str = "qwen3-14b.direct", small: str = "eurobert-210m.bertjudge"
) -> float | None:
    flops = {r["name"]: _float(r["flops"]) for r in rows}
    return flops[big] / flops[small] if flops.get(big) and flops.get(small) else None
