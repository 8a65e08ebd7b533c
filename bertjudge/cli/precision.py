"""``--precision`` and ``--batch-size``: the inference engine's flags for the commands that score rows (judge,
evaluate)."""

from __future__ import annotations

import argparse
import sys

from bertjudge.judges.inference import AGREEMENT, CPU_TOKEN_BUDGET, ONNX_INSTALL, PRECISIONS, SCORE_TOLERANCE
from bertjudge.judges.interface import BaseJudge
from bertjudge.judges.loading import set_precision

CHECK_ROWS = 256


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
        default="fp32",
        help="how trained judges run: fp32 (default), bf16 (autocast; fast on CPUs with AMX/AVX512-bf16 and on "
        "GPUs), int8 (dynamic quantization, CPU), onnx (the network exported to ONNX Runtime once per run; "
        f"needs {ONNX_INSTALL}) or auto: the fastest installed mode whose verdicts agree with fp32 "
        f"on the first {CHECK_ROWS} rows (at least {AGREEMENT * 100:.1f}%%) and whose scores stay within its tolerance "
        f"({', '.join(f'{k} {v:g}' for k, v in SCORE_TOLERANCE.items() if k != 'fp32')}); it says which",
    )


def apply_precision(judge: BaseJudge, precision: str, records: list[dict]) -> None:
    """Set the precision of ``judge``'s trained parts; for ``auto``, print what was checked and chosen."""
    chosen = set_precision(judge, precision, records[:CHECK_ROWS])
    if precision != "auto":
        return
    for name, checks in chosen.items():
        for check in checks:
            print(
                f"precision check of {name} on {min(len(records), CHECK_ROWS)} rows: {check.precision:<5} "
                f"{check.seconds:6.2f} s, verdicts agree {check.agreement:.2%}, max |dP| {check.max_score_diff:.4f}"
                f" -> {'ok' if check.ok else 'refused'}{f': {check.why_not}' if check.why_not else ''}",
                file=sys.stderr,
            )
    parts = [part for part in judge.parts() if part.name in chosen]
    print(f"precision: {', '.join(f'{p.name} {p.precision}' for p in parts)}", file=sys.stderr)
