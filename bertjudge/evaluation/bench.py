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

The parts: ``bench_flops`` (the architectures and their FLOPs), ``bench_timing`` (latency, throughput, peak memory,
the machine's load and speed) and ``bench_results`` (the results files, the Pareto table and plot); this module says
what is measured (``Subject``: ``default_subjects``) and measures it, in rounds (``measure_rounds``).
"""

from __future__ import annotations

import dataclasses
import datetime
import hashlib
import json
import platform
import statistics
from pathlib import Path

from bertjudge.core.errors import BertJudgeError
from bertjudge.core.formats import Encoder, JudgeFormat
from bertjudge.core.records import RECORD_SUFFIXES, read_records
from bertjudge.data.corpus import generate
from bertjudge.evaluation.bench_flops import (
    ARCHITECTURES,
    REASONING_TOKENS,
    arch_for_backbone,
    build_model,
    judgment_flops,
)
from bertjudge.evaluation.bench_results import CATEGORIES, ROOT
from bertjudge.evaluation.bench_timing import (
    MAX_LOAD,
    MIN_RUN_TIME,
    MachineLoad,
    PeakMemory,
    is_busy,
    latency_cells,
    machine_gflops,
    measure_calls,
    peak_memory_cell,
    time_model,
)
from bertjudge.judges import backbones
from bertjudge.judges.loading import Judge
from bertjudge.judges.prompt import SCORE_MODE, SCORE_TOKENS, prompt_text
from bertjudge.judges.regex import RegexJudge
from bertjudge.zoo import registry as zoo

PROXY_TOKENIZER = "sentence-transformers/all-MiniLM-L6-v2"
DEFAULT_TOKENS = 256  # when no evaluation set is available
ROUNDS = 5  # a subject is timed once per round, the rounds taken in turns over every subject; its row keeps the medians
EVAL_FILE = ROOT / "data" / "real" / "real-test-v1.jsonl.gz"  # accuracy is measured on this set, whole

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
        if entry.build:  # the project's own judges: measured from their exported folder once built
            folder = zoo.file_source(entry, registry)
            if (folder / "judge.json").is_file():
                subjects.append(folder_subject(folder, name, entry.architecture))
                built.add(Path(folder).resolve())
        elif entry.architecture in ARCHITECTURES:
            subjects.append(Subject(name, "encoder", entry.architecture, entry.format, num_labels=entry.num_labels))
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
    correct = (scores >= judge.threshold) == labels
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
