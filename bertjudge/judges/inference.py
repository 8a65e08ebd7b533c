"""The inference engine of trained judges: every path that scores with a network goes through it
(``Judge.score``, ``judge``, ``evaluate``, ``predict``'s writer, the server).

Records are tokenized once, sorted by token length, cut into batches that fill a **token budget**
(rows × the batch's longest row ≤ ``token_budget``) rather than a fixed row count, padded to their own
longest row, scored, and put back in input order. A record read as several sequences (one per
reference) gets the largest of its sequences' logits.

The token budget matters on a CPU: batches of about 2,048 tokens stay in its caches and run faster than
larger ones (measured with ``benchmarks/throughput.py``), while a GPU wants large batches: ``default_token_budget``.

Precision modes (``PRECISIONS``): ``fp32``; ``bf16`` (autocast over a copy whose Linear weights are stored in
bf16, so they are not cast again at every batch: AMX / AVX512-bf16 CPUs and GPUs);
``int8`` (dynamic int8 quantization of the Linear layers, CPU); ``onnx`` (the judge's forward exported
with ``torch.onnx`` and run by ONNX Runtime; the optional extra ``bertjudge[onnx]``); ``auto`` (the default of
encoder judges) takes the first mode of ``auto_candidates`` — the modes measured faster than fp32 on this kind
of hardware, fastest first: bf16 on a CPU with AMX or AVX512-BF16 and on a GPU with bf16 — whose verdicts
agree with fp32 on the built-in check set (``check_set``) and whose scores stay within ``SCORE_TOLERANCE``
(``choose``), else fp32. The order decides, never a time measured: the same judge on the same machine gets
the same mode whatever rows it scores first and however busy the machine is.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import importlib.resources
import importlib.util
import itertools
import json
import logging
import math
import re
import tempfile
import time
import warnings
import weakref
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from bertjudge.core.collate import pad_batch
from bertjudge.core.errors import BertJudgeError
from bertjudge.core.formats import expand_references
from bertjudge.core.records import normalize
from bertjudge.judges.check_rows import ROWS

# ONNX_MODES only where the onnx extra is installed (available_precisions)
PRECISIONS = ("fp32", "bf16", "int8", "onnx", "int8-static")
ONNX_MODES = ("onnx", "int8-static")  # the modes ONNX Runtime runs
# max |P(mode) - P(fp32)| allowed on the check set. onnx runs the same fp32 weights in other kernels: it differs
# from fp32 by float rounding only (measured: 6e-8 on a tiny random BERT, at most 7.1e-6 on runs/quickstart/judge
# over 512 dev rows), so 1e-3 leaves room for deeper networks and other kernels and still refuses a wrong graph.
SCORE_TOLERANCE = {"fp32": 0.0, "bf16": 0.1, "int8": 0.1, "onnx": 1e-3, "int8-static": 0.1}
AGREEMENT = 0.999  # share of verdicts that must agree with fp32 on the check set
# auto's check set (check_rows.ROWS): the same rows for every judge and every call, so that the mode chosen depends on
# the judge and the machine only, not on the rows scored first
CHECK_ROWS = len(ROWS)
CHECK_TOKEN_BUDGET = 16384  # the check's batches: few and large (both modes read the same batches)
CPU_TOKEN_BUDGET = 2048  # the largest default batch on a CPU (rows x padded length): larger ones leave its caches
GPU_TOKEN_BUDGET = 16384
ONNX_PACKAGES = ("onnxruntime", "onnxscript")  # run, and export (torch.onnx's exporter needs onnxscript and onnx)
ONNX_INSTALL = "pip install 'bertjudge[onnx]'"
# int8-static's calibration: onnxruntime.quantization.CalibrationMethod's name (benchmarks/README.md, Static int8)
INT8_STATIC_CALIBRATION = "MinMax"
_COPIES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # judge -> {mode: (tensor state, its copy)}
_ONNX_SESSIONS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # judge -> (tensor state, ORT session)
_INT8_STATIC_SESSIONS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # the same, of the quantized graph


class OnnxError(BertJudgeError):
    """An ONNX mode (onnx, int8-static) cannot run: its packages are missing, or the judge's forward does not export
    (or its graph does not quantize)."""


def onnx_available() -> bool:
    """Whether the optional extra ``onnx`` is installed (looked up, not imported: ONNX Runtime is heavy)."""
    return all(importlib.util.find_spec(name) is not None for name in ONNX_PACKAGES)


def available_precisions() -> tuple[str, ...]:
    """The modes this installation can run: ``PRECISIONS`` less ``onnx`` and ``int8-static`` (``ONNX_MODES``) when
    the onnx extra is missing."""
    return tuple(p for p in PRECISIONS if p not in ONNX_MODES or onnx_available())


@functools.cache
def cpu_has_bf16() -> bool:
    """Whether this CPU has the bf16 instructions that make bf16 matmuls faster than fp32's: AMX or AVX512-BF16
    (torch's probes; /proc/cpuinfo's flags where this torch has none)."""
    probes = [getattr(torch.cpu, name, None) for name in ("_is_amx_tile_supported", "_is_avx512_bf16_supported")]
    if all(probe is not None for probe in probes):
        return any(probe() for probe in probes)
    try:
        flags = set(Path("/proc/cpuinfo").read_text().split())
    except OSError:
        return False
    return bool(flags & {"amx_bf16", "avx512_bf16"})


def auto_candidates(device: torch.device | str) -> tuple[str, ...]:
    """The modes ``auto`` tries on ``device`` before fp32, in order: those measured faster than fp32 on such
    hardware (benchmarks/README.md, *Throughput of the inference engine*). bf16 on a CPU with AMX or AVX512-BF16
    (3.3-4.9x the naive loop there, fp32 1.8-2.1x) and on a GPU with bf16; none elsewhere. int8 (dynamic) is slower
    than bf16 where it was measured and flips 3.7% of the quickstart judge's verdicts; onnx is slower than
    torch's fp32 on a CPU: neither is tried (``--precision`` still runs them)."""
    device = torch.device(device)
    if device.type == "cuda":
        return ("bf16",) if torch.cuda.is_bf16_supported() else ()
    return ("bf16",) if device.type == "cpu" and cpu_has_bf16() else ()


def check_set() -> list[dict]:
    """The rows ``auto`` compares each mode with fp32 on (``check_rows.ROWS``: 64 rows of the embedded corpus, 16
    each of open QA, maths, multiple choice and extraction), as records; new copies at each call."""
    return [normalize(copy.deepcopy(row), f"check row {i}") for i, row in enumerate(ROWS)]


def default_token_budget(device: torch.device | str, requested: int | None = None) -> int:
    """The token budget of a batch on ``device`` when the caller set none: ``requested`` (a batch size times the
    maximum length, say), capped at ``CPU_TOKEN_BUDGET`` on a CPU; ``GPU_TOKEN_BUDGET`` when nothing was asked."""
    if torch.device(device).type == "cpu":
        return min(requested or CPU_TOKEN_BUDGET, CPU_TOKEN_BUDGET)
    return requested or GPU_TOKEN_BUDGET


def token_batches(lengths: list[int], token_budget: int, max_rows: int = 512) -> list[list[int]]:
    """Indices of sequences grouped into batches, shortest first: each batch holds as many rows as fit
    ``rows × longest row ≤ token_budget`` (at least one row, at most ``max_rows``)."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    batches, current = [], []
    for i in order:
        width = max(lengths[i], 1)  # sorted ascending: this row is the batch's longest
        if current and ((len(current) + 1) * width > token_budget or len(current) >= max_rows):
            batches.append(current)
            current = []
        current.append(i)
    if current:
        batches.append(current)
    return batches


@dataclass
class Check:
    """How a precision mode compares with fp32 on the check set."""

    precision: str
    seconds: float
    agreement: float
    max_score_diff: float
    ok: bool
    why_not: str = ""  # for a mode that could not run on this judge (its network does not export to ONNX)


class InferenceEngine:
    """Scores records with a trained judge (a ``JudgeModule``) in one precision mode.

    Args:
        judge: the judge whose ``encoder`` (token ids) and ``forward`` (one logit per sequence) are used.
        precision: one of ``PRECISIONS``.
        token_budget: rows × padded length per batch (None: ``default_token_budget`` of the judge's device).
    """

    def __init__(self, judge, precision: str = "fp32", token_budget: int | None = None):
        if precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {PRECISIONS} (or 'auto'), got {precision!r}")
        if token_budget is None:
            token_budget = default_token_budget(_device_of(judge))
        if token_budget < 1:
            raise ValueError(f"token_budget must be at least 1, got {token_budget}")
        if precision in ONNX_MODES and not onnx_available():
            missing = [name for name in ONNX_PACKAGES if importlib.util.find_spec(name) is None]
            raise OnnxError(f"precision {precision!r} needs {' and '.join(missing)}: {ONNX_INSTALL}")
        self.judge, self.precision, self.token_budget = judge, precision, token_budget

    def network(self):
        """The module that runs the forward pass: the judge itself in fp32, else its copy for this mode, made
        once per judge and made again when the judge's weights change (``tensor_state``): in ``int8`` the
        Linear layers dynamically quantized (CPU); in ``bf16`` the Linear weights stored in bf16 — what
        autocast would cast them to at every batch, so the scores are those of autocast over the judge."""
        if self.precision not in ("int8", "bf16"):
            return self.judge
        state = tensor_state(self.judge)
        copies = _COPIES.setdefault(self.judge, {})
        if copies.get(self.precision, (None,))[0] != state:
            copies[self.precision] = (state, _copy_for(self.judge, self.precision))
        return copies[self.precision][1]

    def encode(self, records: list[dict]) -> tuple[list[list[int]], np.ndarray]:
        """Token ids of every sequence the judge reads, and the record each comes from."""
        fmt = self.judge.format
        sequences, owner = expand_references(records, fmt)
        return self.judge.encoder.encode_many(sequences), np.asarray(owner, dtype=np.int64)

    @torch.inference_mode()
    def logits(self, records: list[dict], progress: bool = False, encoded: tuple | None = None) -> np.ndarray:
        """Uncalibrated logit per record, in input order (the max over a record's sequences); ``encoded``: the
        records' ``encode`` when already made (every mode reads the same token ids)."""
        if not records:
            return np.empty(0, dtype=np.float64)
        ids, owner = self.encode(records) if encoded is None else encoded
        sequence_logits = np.empty(len(ids), dtype=np.float64)
        batches = token_batches([len(row) for row in ids], self.token_budget)
        bar = None
        if progress:
            from tqdm.auto import tqdm

            bar = tqdm(total=len(records), desc=f"judging with {self.judge.name} ({self.precision})", unit="row")
        left = np.bincount(owner, minlength=len(records))  # sequences still to score, per record
        try:
            with self.forward_pass() as forward:
                for idx in batches:
                    sequence_logits[idx] = forward(*pad_batch([ids[i] for i in idx], self.judge.encoder.pad_id))
                    np.subtract.at(left, owner[idx], 1)
                    if bar is not None:  # a record is done when its last sequence is
                        bar.update(int(np.count_nonzero(left[np.unique(owner[idx])] == 0)))
        finally:
            if bar is not None:
                bar.close()
        if len(owner) == len(records):
            return sequence_logits
        out = np.full(len(records), -np.inf)
        np.maximum.at(out, owner, sequence_logits)
        return out

    @contextlib.contextmanager
    def forward_pass(self):
        """The forward pass of this mode, as a function from a padded batch (``input_ids``, ``attention_mask``:
        CPU tensors) to its logits (a NumPy array); a torch network is in eval mode while it is used. Every
        mode reads the same token ids: only the network that turns them into logits differs."""
        if self.precision in ONNX_MODES:
            session = (onnx_session if self.precision == "onnx" else int8_static_session)(self.judge)
            yield lambda input_ids, attention_mask: session.run(
                None, {"input_ids": input_ids.numpy(), "attention_mask": attention_mask.numpy()}
            )[0]
            return
        network = self.network()
        was_training = network.training
        network.eval()
        device = next(network.parameters()).device if self.precision != "int8" else torch.device("cpu")
        autocast = torch.autocast(device.type, dtype=torch.bfloat16, enabled=self.precision == "bf16")

        def forward(input_ids: torch.Tensor, attention_mask: torch.Tensor) -> np.ndarray:
            with autocast:
                out = network({"input_ids": input_ids.to(device), "attention_mask": attention_mask.to(device)})
            return out.float().cpu().numpy()

        try:
            yield forward
        finally:
            network.train(was_training)


def _device_of(judge) -> torch.device:
    return next(itertools.chain(judge.parameters(), [torch.empty(0)])).device


def _copy_for(judge, precision: str):
    """A copy of ``judge`` for ``precision`` (``int8`` or ``bf16``; see ``InferenceEngine.network``). Its tokenizer
    and encoder are the judge's own, not copies: only the forward pass runs on the copy (and copying a tokenizer
    takes longer than copying a small network)."""
    shared = {id(part): part for part in (judge.encoder, judge.encoder.tokenizer)}
    if precision == "int8":
        with warnings.catch_warnings():  # torch.ao's dynamic quantization warns that torchao replaces it
            warnings.simplefilter("ignore")
            return torch.ao.quantization.quantize_dynamic(
                copy.deepcopy(judge, shared).float().cpu(), {torch.nn.Linear}, dtype=torch.qint8
            )
    network = copy.deepcopy(judge, shared)
    for module in network.modules():
        if isinstance(module, torch.nn.Linear):
            module.to(torch.bfloat16)
    return network


class _ForwardOfIds(torch.nn.Module):
    """A judge's ``forward(batch)`` as ``forward(input_ids, attention_mask)``: the signature of the ONNX graph."""

    def __init__(self, judge):
        super().__init__()
        self.judge = judge

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        return self.judge({"input_ids": input_ids, "attention_mask": attention_mask})


def tensor_state(judge) -> tuple:
    """Where each of the judge's tensors lives and how often it was changed in place (torch's version
    counter): it changes when the weights do (an optimizer step, ``load_state_dict``, ``.to()``), so an
    exported graph is never used after the network it was exported from has changed."""
    tensors = itertools.chain(judge.parameters(), judge.buffers())  # an inference tensor keeps no counter: 0
    return tuple((t.data_ptr(), 0 if t.is_inference() else t._version) for t in tensors)


def onnx_session(judge):
    """The ONNX Runtime session of ``judge``'s forward, exported once per judge and process.

    Kept in memory (a weak dictionary keyed by the judge, like the int8 copies), not next to the judge: a
    judge folder is input that is fingerprinted and never written to, an in-memory judge has no folder, and
    a cache on disk would need keys, invalidation and cleanup for an export that takes seconds. It is
    re-exported when the judge's tensors change (``tensor_state``)."""
    return _cached_session(_ONNX_SESSIONS, judge, quantized=False)


def int8_static_session(judge):
    """The ONNX Runtime session of ``judge``'s forward quantized statically to int8 (``quantize_int8_static``),
    made once per judge and process and made again when its tensors change, as ``onnx_session``'s."""
    return _cached_session(_INT8_STATIC_SESSIONS, judge, quantized=True)


def _cached_session(cache: weakref.WeakKeyDictionary, judge, quantized: bool):
    state = tensor_state(judge)
    cached = cache.get(judge)
    if cached is None or cached[0] != state:
        cache[judge] = (state, _new_session(judge, quantized))
    return cache[judge][1]


def _new_session(judge, quantized: bool = False):
    """Export ``judge``'s forward (dynamic batch and sequence axes), quantize it when ``quantized``
    (``quantize_int8_static``) and open it in ONNX Runtime: CUDA when this ONNX Runtime has it and the graph is not
    quantized (the int8 kernels used here are the CPU's), else the CPU, with as many intra-op threads as torch uses."""
    import onnxruntime

    with tempfile.TemporaryDirectory(prefix="bertjudge-onnx-", ignore_cleanup_errors=True) as tmp:
        path = f"{tmp}/model.onnx"  # a file, not bytes: its weights may go to a side file past protobuf's 2 GB
        _export(judge, path)
        if quantized:
            path = quantize_int8_static(judge, path, f"{tmp}/int8-static.onnx")
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = torch.get_num_threads()
        options.log_severity_level = 3  # errors only: ORT warns about unused initializers and the like
        wanted = ("CPUExecutionProvider",) if quantized else ("CUDAExecutionProvider", "CPUExecutionProvider")
        providers = [p for p in wanted if p in onnxruntime.get_available_providers()]
        return onnxruntime.InferenceSession(path, options, providers=providers)


CALIBRATION_ROWS = "calibration_rows.jsonl"  # package data beside this module


def calibration_set() -> list[dict]:
    """The rows ``int8-static`` calibrates its activations on, as records read afresh at each call.

    ``calibration_rows.jsonl`` holds 256 rows of the embedded procedural corpus's validation split
    (``embedded:val?n=256&seed=1``: another seed than the check set's, none of them a check row), kept as they were on
    2026-12-06 rather than generated, so that the quantized network does not move when the corpus does (and so that
    the judges layer needs nothing from ``bertjudge.data``)."""
    text = importlib.resources.files(__package__).joinpath(CALIBRATION_ROWS).read_text(encoding="utf-8")
    rows = [json.loads(line) for line in text.splitlines() if line.strip()]
    return [normalize(row, f"{CALIBRATION_ROWS}:{i}") for i, row in enumerate(rows, 1)]


def calibration_batches(judge) -> list[dict[str, np.ndarray]]:
    """The calibration rows as the engine feeds them to the network: tokenized by ``judge``'s encoder (one
    sequence per reference), sorted by length, cut into batches of at most ``CPU_TOKEN_BUDGET`` tokens, each padded
    to its longest row."""
    ids, _ = InferenceEngine(judge, "fp32").encode(calibration_set())
    batches = token_batches([len(row) for row in ids], CPU_TOKEN_BUDGET)
    padded = [pad_batch([ids[i] for i in idx], judge.encoder.pad_id) for idx in batches]
    return [{"input_ids": input_ids.numpy(), "attention_mask": mask.numpy()} for input_ids, mask in padded]


def quantize_int8_static(judge, source: str, target: str) -> str:
    """Quantize the ONNX graph at ``source`` (``judge``'s export) statically to int8 and write it to ``target``:
    ONNX Runtime's ``quantize_static`` in the QDQ format, the MatMuls' weights int8, symmetric, one scale per output
    channel, their inputs uint8 with ranges calibrated (``INT8_STATIC_CALIBRATION``) on ``calibration_batches`` —
    fixed rows, none of them ``auto``'s check rows — except ``int8_static_excluded``'s MatMuls, which stay fp32.
    Attention (one ONNX Attention op: its two matmuls and softmax) and the pooler and classifier (Gemm) are not
    MatMuls: they stay fp32 too. Returns ``target``."""
    import onnx
    from onnxruntime.quantization import (
        CalibrationDataReader,
        CalibrationMethod,
        QuantFormat,
        QuantType,
        quantize_static,
    )

    class Rows(CalibrationDataReader):
        def __init__(self, batches):
            self.batches = iter(batches)

        def get_next(self):
            return next(self.batches, None)

    excluded = int8_static_excluded(onnx.load(source, load_external_data=False))
    try:
        with _quiet("root"):  # quantize_static logs its advice (run its pre-processing) at warning level
            quantize_static(
                source,
                target,
                Rows(calibration_batches(judge)),
                quant_format=QuantFormat.QDQ,
                op_types_to_quantize=["MatMul"],
                per_channel=True,
                reduce_range=False,  # VNNI's u8 x s8 dot products do not saturate: keep the 8th bit
                activation_type=QuantType.QUInt8,
                weight_type=QuantType.QInt8,
                nodes_to_exclude=excluded,
                calibrate_method=getattr(CalibrationMethod, INT8_STATIC_CALIBRATION),
                extra_options={"WeightSymmetric": True, "ActivationSymmetric": False},
            )
    except Exception as e:  # noqa: BLE001 - whatever the quantizer raises, say which judge and why, in one line
        why = str(e).strip().splitlines() or [""]
        raise OnnxError(f"{judge.name}: its ONNX graph does not quantize to int8 ({type(e).__name__}: {why[0]})") from e
    return target


def int8_static_excluded(model) -> list[str]:
    """The MatMuls of ``model`` (an ONNX graph) that ``int8-static`` leaves in fp32: those that read a Gelu's output
    (each feed-forward block's second matmul), whose inputs' long positive tail one per-tensor int8 range cannot hold
    (measured with them: benchmarks/README.md, Static int8)."""
    gelu = {name for node in model.graph.node if node.op_type == "Gelu" for name in node.output}
    return [node.name for node in model.graph.node if node.op_type == "MatMul" and node.input[0] in gelu]


@contextlib.contextmanager
def _quiet(logger: str):
    """Errors only from ``logger`` while in the block (the exporter logs a warning per torchvision operator
    it does not register, on every export)."""
    log = logging.getLogger(logger)
    level = log.level
    log.setLevel(logging.ERROR)
    try:
        yield
    finally:
        log.setLevel(level)


def _export(judge, path: str) -> None:
    """``torch.onnx.export`` (the torch.export-based exporter: it refuses a graph it cannot keep dynamic
    rather than freezing a branch taken on the example) of the judge's forward, in eval mode, to ``path``."""
    pad = judge.encoder.pad_id
    example = torch.tensor([[1, 2, 3, 4, 5, 6, 7, 8], [1, 2, 3, 4, 5, pad, pad, pad]])
    mask = (torch.arange(8) < torch.tensor([[8], [5]])).long()  # one padded row: the masked path is traced
    device = next(judge.parameters()).device
    dims = {0: torch.export.Dim.DYNAMIC, 1: torch.export.Dim.DYNAMIC}  # refused if the network fixes either
    was_training = judge.training
    judge.eval()
    try:
        with torch.inference_mode(False), warnings.catch_warnings(), _quiet("torch.onnx"):
            warnings.simplefilter("ignore")  # the exporter's deprecation and tracing notes
            program = torch.onnx.export(
                _ForwardOfIds(judge).eval(),
                (example.to(device), mask.to(device)),
                input_names=["input_ids", "attention_mask"],
                output_names=["logits"],
                dynamic_shapes=(dims, dims),
                dynamo=True,
                opset_version=23,  # attention as ONNX's Attention op (one ORT kernel), not matmuls and a softmax
                verbose=False,
            )
        program.save(path)
    except Exception as e:  # noqa: BLE001 - whatever the exporter raises, say which judge and why, in one line
        root = e
        while root.__cause__ is not None:  # the exporter wraps the reason (torch.export's) in its own error
            root = root.__cause__
        why = re.sub(r"\x1b\[[0-9;]*m", "", str(root)).strip().splitlines() or [""]  # the exporter colours text
        raise OnnxError(f"{judge.name}: its forward does not export to ONNX ({type(root).__name__}: {why[0]})") from e
    finally:
        judge.train(was_training)


def compare(
    judge,
    records: list[dict],
    precision: str,
    reference: np.ndarray | None = None,
    token_budget: int | None = None,
) -> tuple[Check, np.ndarray]:
    """Time ``precision`` on ``records`` (after a warm-up on 8 of them that builds its copy or ONNX session) and
    compare its scores and verdicts with ``reference`` (the fp32 probabilities; computed when None). Returns the
    check and this mode's probabilities."""
    InferenceEngine(judge, precision, token_budget).logits(records[:8])
    return _compare(judge, records, precision, reference, token_budget)


def _compare(judge, records, precision, reference=None, token_budget=None, encoded=None) -> tuple[Check, np.ndarray]:
    """``compare`` without the warm-up: its seconds include building the mode's copy or session."""
    engine = InferenceEngine(judge, precision, token_budget)
    start = time.perf_counter()
    logits = engine.logits(records, encoded=encoded)
    seconds = time.perf_counter() - start
    probs = judge.probabilities(torch.from_numpy(logits)).numpy()
    if reference is None:
        reference = probs
    agreement = float(np.mean((probs >= judge.threshold) == (reference >= judge.threshold)))
    diff = float(np.max(np.abs(probs - reference))) if len(probs) else 0.0
    ok = agreement >= AGREEMENT and diff <= SCORE_TOLERANCE[precision]
    return Check(precision, seconds, agreement, diff, ok), probs


def choose(
    judge,
    records: list[dict] | None = None,
    candidates: tuple[str, ...] | None = None,
    token_budget: int | None = None,
) -> tuple[str, list[Check]]:
    """The first of ``candidates`` (default: ``auto_candidates`` of the judge's device) whose verdicts agree with
    fp32 on ``records`` (default: ``check_set()``, in batches of up to ``token_budget`` tokens, default
    ``CHECK_TOKEN_BUDGET``) at ``AGREEMENT`` and whose scores stay within its ``SCORE_TOLERANCE``; fp32 when none
    does. Returns it and the checks made: fp32's first (none when there is no candidate), then each candidate's up
    to the one taken. The order decides; the seconds each check took are reported, never compared, so the choice
    does not depend on how busy the machine is. A mode that cannot run on this judge (a forward that does not
    export to ONNX) is refused, not an error."""
    records = check_set() if records is None else records
    token_budget = CHECK_TOKEN_BUDGET if token_budget is None else token_budget
    candidates = auto_candidates(_device_of(judge)) if candidates is None else candidates
    candidates = [precision for precision in dict.fromkeys(candidates) if precision != "fp32"]
    if not candidates:
        return "fp32", []
    if not records:
        raise ValueError("precision 'auto' needs records to check the modes against fp32 on")
    encoded = InferenceEngine(judge, "fp32", token_budget).encode(records)  # tokenized once for every mode
    fp32, reference = _compare(judge, records, "fp32", None, token_budget, encoded)
    checks = [fp32]
    for precision in candidates:
        try:
            checks.append(_compare(judge, records, precision, reference, token_budget, encoded)[0])
        except OnnxError as e:
            checks.append(Check(precision, math.nan, math.nan, math.nan, False, str(e)))
        if checks[-1].ok:
            return precision, checks
    return "fp32", checks


def auto_line(name: str, chosen: str, checks: list[Check], rows: int, seconds: float) -> str:
    """The one line that says what ``auto`` chose for the judge ``name`` and why (``choose``'s checks on ``rows``
    rows, made in ``seconds``)."""
    head = f"bertjudge: precision auto -> {chosen} for {name}"
    if not checks:
        return f"{head} (no faster mode on this machine: bf16 needs a CPU with AMX or AVX512-BF16, or a GPU)"
    last = checks[-1]
    if last.why_not:
        verdict = f"{last.precision} refused: {last.why_not}"
    elif last.ok:
        verdict = f"verdicts agree {last.agreement:.2%} with fp32 on {rows} rows, max |dP| {last.max_score_diff:.4f}"
    else:
        verdict = (
            f"{last.precision} refused: verdicts agree {last.agreement:.2%} with fp32 on {rows} rows (at least "
            f"{AGREEMENT:.1%}), max |dP| {last.max_score_diff:.4f} (at most {SCORE_TOLERANCE[last.precision]:g})"
        )
    return f"{head} ({verdict}; checked in {seconds:.1f} s)"
