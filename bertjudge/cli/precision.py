"""``--precision`` and ``--batch-size``: the inference engine's flags for the commands that score rows (judge,
evaluate)."""

from __future__ import annotations

import argparse

from bertjudge.judges.inference import (
    AGREEMENT,
    CHECK_ROWS,
    CPU_TOKEN_BUDGET,
    ONNX_INSTALL,
    PRECISIONS,
    SCORE_TOLERANCE,
)
from bertjudge.judges.interface import BaseJudge
from bertjudge.judges.loading import set_precision


def add_batch_size_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--batch-size",
        type=int,
        default=32,
        help="rows per forward pass at the maximum length (default 32); trained judges fill each batch to that many "
        f"tokens, at most {CPU_TOKEN_BUDGET:,} on a CPU",
    )


def add_precision_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--precision",
        choices=(*PRECISIONS, "auto"),
        default=None,
        help="how trained judges run. auto (the default of encoder judges; a generative judge runs in fp32 unless "
        "asked): bf16 where the CPU has AMX or AVX512-BF16 (or on a GPU), kept only if its verdicts agree with fp32 on "
        f"{CHECK_ROWS} built-in check rows (at least {AGREEMENT * 100:.1f}%%) and its scores stay within "
        f"{SCORE_TOLERANCE['bf16']:g}, else fp32: the same mode for a judge on a machine whatever the input, said in "
        "one line. fp32: the exact fp32 scores, no check. bf16 (autocast), int8 (dynamic quantization, CPU), onnx "
        "(the network exported to ONNX Runtime once per run), int8-static (that export quantized to int8, activation "
        f"ranges calibrated on built-in rows, CPU; onnx and int8-static need {ONNX_INSTALL})",
    )


def apply_precision(judge: BaseJudge, precision: str | None) -> None:
    """Set the precision of ``judge``'s trained parts (None: each keeps its default, ``auto`` for encoder judges,
    chosen when the judge is first fingerprinted or scores); ``auto`` chooses now, and each part says on stderr
    which mode it took, in one line."""
    if precision is not None:
        set_precision(judge, precision)
