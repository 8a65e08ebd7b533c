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
- Accuracy of the judges that run here: verdicts at the judge's threshold against the labels of each
  frozen real-output test set given (default ``EVAL_FILES``: ``data/real/real-test-v2.jsonl.gz`` and
  ``real-test-v3.jsonl.gz``, every row), overall and per category; one row per judge and set, naming the
  set and the first 12 hex digits of its sha256. The table and the plot show ``bench_results.HEADLINE_SET``
  (real-test-v3); rows of other sets stay in the files.
- Judges given as a spec (``Subject.spec``: ``contains``, ``hybrid:``, ``cascade:``, ``by-category:`` over the
  quickstart judge) are measured whole: ``score_records`` timed on the rows of the headline set (throughput)
  and on 100 of them judged one at a time (latency); their FLOPs per judgment are the learned part's FLOPs ×
  the share of the headline set's rows routed to it (``details``), said in the row's notes.
- Results go to ``benchmarks/results/<kind>-<device>-<dtype>-torch<version>.csv`` (kind ``cost`` or
  ``accuracy``), a cost row per judge keyed by its zoo name, an accuracy row per judge and set, written
  atomically.

The parts: ``bench_flops`` (the architectures and their FLOPs), ``bench_timing`` (latency, throughput, peak memory,
the machine's load and speed) and ``bench_results`` (the results files, the Pareto table and plot); this module says
what is measured (``Subject``: ``default_subjects``) and measures it, in rounds (``measure_rounds``).
"""

from __future__ import annotations

import dataclasses
import datetime
import hashlib
import json
import math
import platform
import statistics
from pathlib import Path

import numpy as np

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
from bertjudge.evaluation.bench_results import CATEGORIES, HEADLINE_SET, NOT_SCORED, ROOT
from bertjudge.evaluation.bench_timing import (
    MAX_LOAD,
    MAX_TIMED_PARAMS,
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
from bertjudge.judges.loading import Judge, set_precision
from bertjudge.judges.prompt import SCORE_MODE, SCORE_TOKENS, prompt_text
from bertjudge.judges.regex import RegexJudge
from bertjudge.zoo import registry as zoo

PROXY_TOKENIZER = "sentence-transformers/all-MiniLM-L6-v2"
DEFAULT_TOKENS = 256  # when no evaluation set is available
ROUNDS = 5  # a subject is timed once per round, the rounds taken in turns over every subject; its row keeps the medians
# accuracy is measured on each of these sets, whole (real-test-v3, the newest, is the headline: HEADLINE_SET)
EVAL_FILES = (ROOT / "data" / "real" / "real-test-v2.jsonl.gz", ROOT / "data" / "real" / "real-test-v3.jsonl.gz")
QUICKSTART = "runs/quickstart/judge"  # the folder `make quickstart` exports
ALL_REAL = "runs/all-real/judge"  # configs/encoder/minilm-l6-all-real.yaml's judge (zoo: minilm-l6.all-real)
# judges given as a spec (Judge.load), as docs/usage.md spells them: (name, kind, spec, the learned judge's folder
# or None); {folder} in the spec is that folder, and the subject is measured only when the folder exists
SPEC_SUBJECTS = (
    ("contains.v1", "rule", "contains", None),
    ("hybrid.quickstart", "routing", "hybrid:{folder}", QUICKSTART),
    ("cascade.quickstart", "routing", "cascade:{folder}", QUICKSTART),
    ("by-category.quickstart", "routing", "by-category:{folder}?multiple_choice=regex&open_math=regex", QUICKSTART),
    ("by-category.all-real", "routing", "by-category:{folder}?multiple_choice=regex", ALL_REAL),
)
TIMED_ROWS = 100  # a whole judge's latency: this many rows of the headline set, judged one at a time
# a judge whose latency at batch 1 × the rows of the evaluation sets is above this is costed but not scored (its row
# says why): on this CPU, SmolLM2-135M reasoning for 512 tokens (hours), not SmolLM2-135M direct (minutes, also
# when the machine runs a few times slower on a busy spell) nor any encoder
MAX_ACCURACY_MINUTES = 60.0

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
    """One row: a judge (zoo entry, exported folder, regex, a ``Judge.load`` spec) or an architecture baseline.
    A spec subject's ``folder`` is its learned part (None: rules only), whose FLOPs it counts."""

    name: str
    kind: str  # encoder | direct | reasoning | score10 | regex | rule | routing
    architecture: str | None = None
    format: JudgeFormat | None = None
    folder: Path | None = None
    num_labels: int = 1
    spec: str | None = None


def default_subjects(registry=None, folders=()) -> list[Subject]:
    """The regex judge, the spec judges (``SPEC_SUBJECTS``; those over the quickstart judge when its folder
    exists), every registry entry with a known architecture, exported judge folders (``runs/quickstart/judge``
    when it exists) and the encoder and generative baselines."""
    subjects, built = [Subject("regex.v1", "regex")], set()
    for name, entry in zoo.load_registry(registry).items():
        if entry.build:  # the project's own judges: measured from their exported folder once built
            folder = zoo.file_source(entry, registry)
            if (folder / "judge.json").is_file():
                subjects.append(folder_subject(folder, name, entry.architecture))
                built.add(Path(folder).resolve())
        elif entry.architecture in ARCHITECTURES:
            subjects.append(Subject(name, "encoder", entry.architecture, entry.format, num_labels=entry.num_labels))
    quickstart = (ROOT / QUICKSTART).resolve()
    default = [quickstart] if (quickstart / "judge.json").is_file() and quickstart not in built else []
    for folder in list(folders) or default:
        if Path(folder).resolve() not in built:  # a registry entry's folder is measured once, under its name
            subjects.append(folder_subject(Path(folder)))
    subjects[1:1] = spec_subjects()
    subjects += [
        Subject(f"{key}.arch", "encoder", key, JudgeFormat(order="QCR", max_length=512)) for key in ENCODER_BASELINES
    ]
    subjects += [Subject(f"{key}.{mode}", mode, key) for key, mode in GENERATIVE_BASELINES]
    return subjects


def folder_subject(folder: Path, name: str | None = None, architecture: str | None = None) -> Subject:
    """A subject for an exported judge folder (a trained judge, or a prompted one: an off-the-shelf LLM behind the
    judging prompt, whose ``judge.json`` names its model); named ``<arch>.<run name>`` unless ``name`` is given."""
    config = json.loads((folder / "judge.json").read_text())
    prov = config.get("provenance", {})
    prompted = isinstance(config.get("backend"), dict)  # bertjudge.judges.backends.PromptedJudge
    backbone = config["backend"].get("model", "") if prompted else prov.get("backbone", "")
    arch = architecture or arch_for_backbone(backbone) or "custom"
    generative = prompted or "Generative" in config["class"]
    return Subject(
        name or f"{arch}.{prov.get('name', folder.parent.name)}",
        config.get("mode", "encoder") if generative else "encoder",
        arch,
        JudgeFormat(order=config["order"]) if prompted else JudgeFormat.from_dict(config["format"]),
        folder,
        config.get("num_labels", 1),
    )


def network(judge) -> tuple:
    """(model, tokenizer) a judge loaded from a folder computes with: a trained judge's own, or the causal LM a
    prompted judge's backend runs here (a prompted judge on a server has none here to cost: ``BenchError``)."""
    if judge.model is None:
        raise BenchError(f"{judge.name}: no model runs here to cost (a prompted judge on a server)")
    return judge.model, judge.tokenizer


def spec_subjects() -> list[Subject]:
    """The ``SPEC_SUBJECTS`` that can be built here: one over a learned judge only when its folder exists."""
    subjects = []
    for name, kind, spec, folder in SPEC_SUBJECTS:
        if folder is None:
            subjects.append(Subject(name, kind, spec=spec))
        elif (ROOT / folder / "judge.json").is_file():
            learned = folder_subject(ROOT / folder)
            subjects.append(dataclasses.replace(learned, name=name, kind=kind, spec=spec.format(folder=folder)))
    return subjects


@dataclasses.dataclass
class EvalSet:
    """The labelled records accuracy is measured on: the set's name (its file name without the suffix),
    the sha256 of the file and its records."""

    name: str
    sha256: str
    records: list[dict]


def load_eval_set(path) -> EvalSet | None:
    """The records of ``path``, or None when it is absent."""
    path = Path(path)
    if not path.is_file():
        return None
    name = next((path.name[: -len(s)] for s in RECORD_SUFFIXES if path.name.endswith(s)), path.name)
    return EvalSet(name, hashlib.sha256(path.read_bytes()).hexdigest(), read_records(path))


def load_eval_sets(paths=None) -> list[EvalSet]:
    """The sets of ``paths`` (default ``EVAL_FILES``) that exist; two sets of one name are refused."""
    sets = [s for s in map(load_eval_set, paths or EVAL_FILES) if s is not None]
    names = [s.name for s in sets]
    if len(set(names)) < len(names):
        raise BenchError(f"two evaluation sets are named alike ({', '.join(names)}): their rows would be one")
    return sets


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


def _accuracy(judge, eval_set: EvalSet, env: dict, name: str, scores=None) -> dict:
    """Accuracy over the whole set and per category (None for a category without rows), from ``scores`` when
    given (the judge's scores of the set's records; NaN, no verdict, counts as a wrong verdict)."""
    records = eval_set.records
    scores = np.asarray(judge.score_records(records) if scores is None else scores, dtype=float)
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
    max_timed_params: float = MAX_TIMED_PARAMS,
    k: int = REASONING_TOKENS,
    tokenizer=None,
    eval_sets: list[EvalSet] = (),
    min_run_time: float = MIN_RUN_TIME,
    max_load: float = MAX_LOAD,
    with_accuracy: bool = True,
    max_accuracy_minutes: float = MAX_ACCURACY_MINUTES,
) -> tuple[dict, list[dict]]:
    """(cost row, accuracy rows) of one subject: ``records`` give the token length (and the regex judge's
    timing), each of ``eval_sets`` an accuracy row of a judge that runs here (timed or not; none without
    ``with_accuracy``; a spec subject is timed on the headline set's rows). A judge folder whose latency at batch 1
    times the rows of ``eval_sets`` is above ``max_accuracy_minutes`` is not scored: its row's notes say so and
    why (``too_slow_to_score``; untimed, it is scored). A timed row carries the machine's load while it was timed
    and ``busy`` when others took more than ``max_load`` per core; whether a busy row is written is the caller's
    choice."""
    import torch

    env = environment(device, dtype)
    torch_dtype = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}[dtype]
    row = {"name": subject.name, "judge_kind": subject.kind, "architecture": subject.architecture or "", **env}
    if subject.kind == "regex":
        sets = eval_sets if with_accuracy else ()
        return _measure_regex(row, records, timing, min_run_time, max_load), _accuracies(RegexJudge(), sets, env, row)
    if subject.spec is not None:
        return _measure_spec(subject, row, records, list(eval_sets), with_accuracy, timing, min_run_time, max_load)

    judge = None
    if subject.folder is not None:
        judge = Judge.load(str(subject.folder))
        model, tokenizer_used = network(judge)
        config = model.config
        folder = Path(subject.folder).resolve()
        shown = folder.relative_to(Path.cwd()) if folder.is_relative_to(Path.cwd()) else folder  # no machine paths
        trained = "weights" in judge.features
        row.update(config_source=str(shown), weights="trained (exported judge)" if trained else "pretrained, prompted")
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
        return row, []
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
    accuracy = []
    slow = too_slow_to_score(row, eval_sets, max_accuracy_minutes) if judge is not None else ""
    row["notes"] = _join(row.get("notes"), slow)
    if judge is not None and eval_sets and with_accuracy and not slow:
        judge.place(device, torch_dtype)
        accuracy = _accuracies(_pinned(judge, dtype), eval_sets, env, row)
    return row, accuracy


def too_slow_to_score(row: dict, eval_sets: list[EvalSet], max_minutes: float) -> str:
    """Why a timed judge is not scored on ``eval_sets`` (its latency p50 at batch 1 × their rows above
    ``max_minutes``; a note that starts with ``NOT_SCORED``, which the table shows as the reason), or ""."""
    p50, n = row.get("latency_p50_ms"), sum(len(s.records) for s in eval_sets)
    if p50 in (None, "") or not n or p50 / 1000 * n <= max_minutes * 60:
        return ""
    minutes = p50 / 1000 * n / 60
    amount, unit = (minutes / 60, "hours") if minutes >= 90 else (minutes, "minutes")
    takes = f"{amount:.2g} {unit}" if amount < 10 else f"{amount:.0f} {unit}"
    return (
        f"{NOT_SCORED}: ≈ {p50 / 1000:.3g} s per row (latency p50 at batch 1, on {row.get('hardware') or 'this machine'})"
        f": ≈ {takes} for the {n:,} rows of {' + '.join(s.name for s in eval_sets)}, above the "
        f"{max_minutes:g}-minute budget (bench run --max-accuracy-minutes)"
    )


def _accuracies(judge, eval_sets, env: dict, row: dict) -> list[dict]:
    return [_accuracy(judge, eval_set, env, row["name"]) for eval_set in eval_sets]


def _pinned(judge, dtype: str):
    """``judge`` scoring in fp32 when the row says fp32 (its trained parts' mode may default to another, ``auto``)."""
    if dtype == "fp32":
        set_precision(judge, "fp32")
    return judge


_TIMINGS: dict[tuple, dict] = {}


def clear_timings() -> None:
    """Forget the architectures timed in this process, so that the next ``measure`` times them again."""
    _TIMINGS.clear()


def measure_rounds(
    subjects: list[Subject],
    records: list[dict] | None,
    rounds: int = ROUNDS,
    eval_sets: list[EvalSet] = (),
    progress=None,
    on_round=None,
    on_error=None,
    **kwargs,
) -> list[tuple[dict | None, list[dict]]]:
    """(cost row, accuracy rows: one per set of ``eval_sets``) of every subject, timed ``rounds`` times in turns:
    round 1 measures every subject as ``measure`` does (accuracy included), each later round times every timed
    subject again afresh, and each cost row keeps the rounds' medians (``merge_rounds``). On a shared virtual
    machine a subject's speed moves by a quarter from one stretch of seconds to the next; the rounds spread its
    timings over the whole run, so that two runs see alike what one contiguous timing would catch by chance.
    ``kwargs`` go to ``measure``.

    ``progress(round, subject)`` is called before each measurement, ``on_round(round, results)`` after each round
    with the results so far (a caller writes them: an interrupted run keeps the rounds it finished). Without
    ``on_error`` a subject's error is raised; with it, ``on_error(subject, error)`` is called, that subject is left
    out of later rounds and keeps the rounds it finished ((None, []) when none), and the others go on."""
    if rounds < 1:
        raise ValueError(f"rounds must be at least 1, got {rounds}")
    per_round: dict[str, list[dict]] = {s.name: [] for s in subjects}
    accuracy: dict[str, list[dict]] = {}
    max_load = kwargs.get("max_load", MAX_LOAD)

    def results() -> list[tuple[dict | None, list[dict]]]:
        return [
            (merge_rounds(per_round[s.name], max_load), accuracy.get(s.name, [])) if per_round[s.name] else (None, [])
            for s in subjects
        ]

    timed = list(subjects)
    for number in range(1, rounds + 1):
        clear_timings()  # every round times afresh
        for subject in list(timed):
            if progress is not None:
                progress(number, subject)
            try:
                cost, acc = measure(subject, records, eval_sets=eval_sets, with_accuracy=number == 1, **kwargs)
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
            model = network(judge)[0]
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


# --- judges given as a spec: measured whole ----------------------------------------------------------------
_SHARES: dict[tuple[str, str], float] = {}  # (spec, sha256 of the rows) -> share of rows a learned part scored


def _timing_rows(eval_sets: list[EvalSet], records) -> tuple[str, str, list[dict]]:
    """(name, sha256, rows) a whole judge is timed on and its routing share counted on: the headline set's rows,
    else the last evaluation set's, else ``records`` (the embedded test split)."""
    chosen = next((s for s in eval_sets if s.name == HEADLINE_SET), eval_sets[-1] if eval_sets else None)
    if chosen is not None:
        return chosen.name, chosen.sha256, chosen.records
    digest = hashlib.sha256(json.dumps(records or [], sort_keys=True, default=str).encode()).hexdigest()
    return f"embedded:test n={len(records or [])}", digest, list(records or [])


def learned_share(judge, details: list[dict]) -> float:
    """The share of rows a learned part (a judge with trained ``weights``) scored, from ``judge.details`` rows: a
    routing judge's row names the parts that scored it (a by-category judge's ``route``; a cascade's ``scores``, one
    per stage that scored it); a judge that does not route scores every row itself."""
    if not details:
        return 0.0
    if "routing" not in judge.features:
        return 1.0 if "weights" in judge.features else 0.0
    learned = {name for name, part in judge.stages().items() if any("weights" in p.features for p in part.parts())}
    routed = [[row["route"]] if "route" in row else list(row.get("scores") or {}) for row in details]
    return sum(1 for names in routed if learned & set(names)) / len(details)


def _scores(details: list[dict]):
    return np.array([math.nan if row["score"] is None else row["score"] for row in details], dtype=float)


def _time_whole(judge, rows: list[dict], min_run_time: float, max_load: float) -> dict:
    """A whole judge's timing cells: latency per row over ``TIMED_ROWS`` of ``rows`` (evenly spread), each judged
    alone by ``score_records``; throughput of ``score_records`` over all of ``rows`` (3 runs at least); the machine's
    load while timed and its GEMM speed around it."""
    sample = rows[:: max(1, len(rows) // TIMED_ROWS)][:TIMED_ROWS]

    def judge_each():
        for record in sample:
            judge.score_records([record])

    before = machine_gflops()
    with MachineLoad(max_load) as load:
        each = measure_calls(judge_each, min_run_time)
        whole = measure_calls(lambda: judge.score_records(rows), min_run_time / 2, min_runs=3)
    cells = {**latency_cells(each, per_call=len(sample)), **load.fields(), "best_batch_size": ""}
    cells.update(throughput_per_s=len(rows) / whole.median, machine_gflops=round(min(before, machine_gflops()), 1))
    return cells


def _measure_spec(subject, row, records, eval_sets, with_accuracy, timing, min_run_time, max_load) -> tuple:
    """(cost row, accuracy rows) of a judge given as a spec (``Judge.load(subject.spec)``), measured whole: timed on
    the headline set's rows (``_timing_rows``, ``_time_whole``), its accuracy on each set, and the share of each
    set's rows routed to its learned part (``learned_share``, from the same ``details`` call; ``_spec_cost``)."""
    env = {key: row[key] for key in ("device", "dtype", "torch", "measured_at")}
    with PeakMemory(row["device"]) as peak:  # loaded and timed inside: its weights count as a folder's do
        judge = _pinned(Judge.load(subject.spec, device=row["device"]), row["dtype"])
        learned = [part for part in judge.parts() if "weights" in part.features]
        where, digest, rows = _timing_rows(eval_sets, records)
        timed = _time_whole(judge, rows, min_run_time, max_load) if timing and rows else {}
    row.update(config_source=subject.spec, weights="trained (exported judge)" if learned else "none", **timed)
    if timed and learned:
        row["peak_mem_mb"], row["notes"] = peak_memory_cell(peak.mb, learned[0].model)
    accuracies = []
    for eval_set in eval_sets:  # one details call a set gives its accuracy (round 1) and its routing share
        key = (subject.spec, eval_set.sha256)
        if with_accuracy or key not in _SHARES:
            details = judge.details(eval_set.records)
            _SHARES[key] = learned_share(judge, details)
            if with_accuracy:
                accuracies.append(_accuracy(judge, eval_set, env, subject.name, _scores(details)))
    if (subject.spec, digest) not in _SHARES:  # timed on rows of no evaluation set
        _SHARES[(subject.spec, digest)] = learned_share(judge, judge.details(rows))
    shares = {s.name: _SHARES[(subject.spec, s.sha256)] for s in eval_sets if s.name != where}
    _spec_cost(row, subject, learned, records, (where, len(rows), _SHARES[(subject.spec, digest)]), shares)
    return row, accuracies


def _spec_cost(row: dict, subject: Subject, learned: list, records, routed: tuple, shares: dict) -> None:
    """A spec subject's FLOPs per judgment: its learned part's FLOPs (at the embedded test split's median length, as
    the part's own folder row counts them) × the share of the timing rows routed to it (``routed``: where, how many
    rows, the share); the notes say the shares (``shares``: on the other sets) and how it was timed."""
    where, n, share = routed
    timing = (
        f"timed whole (score_records): latency = a run over {min(n, TIMED_ROWS)} rows of {where} judged one at a "
        f"time, per row; throughput = its {n} rows in one call"
        if row.get("latency_p50_ms") not in (None, "")
        else ""
    )
    if not learned:
        row.update(flops=0, notes=_join("rules only, no neural network: 0 FLOPs", timing, row.get("notes")))
        return
    part = learned[0]
    if records:
        row["tokens"] = median_tokens(records, part.tokenizer, subject)
        row["length_source"] = f"median of embedded:test n={len(records)}, as its learned part reads them"
    else:
        row["tokens"], row["length_source"] = DEFAULT_TOKENS, "default (no evaluation set)"
    flops, row["params"] = judgment_flops(part.model.config, "encoder", row["tokens"], num_labels=subject.num_labels)
    row["flops"] = round(flops * share)
    also = "; ".join(f"{name} {value:.1%}" for name, value in shares.items())
    row["notes"] = _join(
        f"learned part {part.name} ({flops / 1e9:.4g} GFLOPs a row) scored {share:.1%} of the {n} rows of {where}"
        + (f" ({also})" if also else "")
        + ": FLOPs = its FLOPs x that share",
        timing,
        row.get("notes"),
    )


def measure_judge_folder(
    folder,
    name: str,
    n: int = 2000,
    seed: int = 0,
    architecture: str | None = None,
    timing: bool = True,
    device: str = "cpu",
    dtype: str = "fp32",
    eval_paths=None,
    min_run_time: float = MIN_RUN_TIME,
    max_load: float = MAX_LOAD,
    rounds: int = ROUNDS,
) -> tuple[dict, list[dict]]:
    """Cost (token length from ``n`` embedded test records; timed in ``rounds`` as ``bench run`` times) and
    accuracy rows (on each of ``eval_paths`` that exists, default ``EVAL_FILES``, every row) of an exported
    judge folder."""
    [(cost, accuracy)] = measure_rounds(
        [folder_subject(Path(folder), name, architecture)],
        eval_records(n, seed),
        rounds,
        load_eval_sets(eval_paths),
        device=device,
        dtype=dtype,
        timing=timing,
        min_run_time=min_run_time,
        max_load=max_load,
    )
    return cost, accuracy
