"""Make an off-the-shelf LLM into a judge folder that `judge`, `evaluate` and Judge.load accept: a prompted judge
(e.g. the JudgeLM-style baseline), no training.

Modes: score10 (JudgeLM's prompt shape: a 1-10 rating of the answer against the reference, P(correct) =
(rating - 1) / 9), reasoning (a short reasoning ending in a True/False verdict) and direct (the probability of
the verdict token; over HTTP the server must return logprobs). The model runs here (a hub id resolved to an
offline copy, or a local folder) or on an OpenAI-compatible --server. With --fit, the verdict threshold is the
one that maximizes accuracy on those labelled rows (use validation rows, not the rows you will evaluate on);
without, the mode's default, 0.5. The folder holds judge.json only: the model's name, the prompt and the
threshold (and how it was fitted); an API key is read from --api-key-env, never saved.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
from pathlib import Path

import numpy as np

from bertjudge.cli.common import CommandError, at_least, check_output, load_records
from bertjudge.core.judge_file import read_judge_config, write_judge_config
from bertjudge.judges.backends import PromptedJudge, prompted_judge
from bertjudge.judges.prompt import PROMPTED_MODES, SCORE_MODE, SCORE_TOKENS


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m bertjudge prompt-judge",
        usage="%(prog)s --model MODEL --output DIR [--mode MODE] [--fit SOURCE ...] [--server URL "
        "[--api-key-env VAR]] [--batch-size N] [--max-new-tokens N]",
        description=__doc__,
        epilog="example: python -m bertjudge prompt-judge --model HuggingFaceTB/SmolLM2-135M-Instruct --mode score10 "
        '--fit "data/real/evouna-tq-v1.jsonl.gz?split=val&n=200&seed=0" --output runs/judgelm-smollm2',
    )
    p.add_argument("--model", required=True, help="hub id or local folder (or the name a --server knows)")
    p.add_argument(
        "--mode", choices=PROMPTED_MODES, default=SCORE_MODE, help=f"how the LLM judges (default {SCORE_MODE})"
    )
    p.add_argument(
        "--fit",
        nargs="+",
        default=[],
        metavar="SOURCE",
        help="labelled validation rows (files or bertjudge.data.sources specs) to fit the threshold on; "
        "rows without a label are skipped",
    )
    p.add_argument("--output", required=True, metavar="DIR", help="the judge folder to write (new, or an empty folder)")
    p.add_argument("--server", metavar="URL", help="OpenAI-compatible API root, e.g. http://localhost:8000/v1")
    p.add_argument(
        "--api-key-env",
        metavar="VAR",
        help="with --server: the environment variable that holds the API key (default OPENAI_API_KEY, "
        "sent when set); the name is saved, the key never",
    )
    p.add_argument(
        "--batch-size",
        type=int,
        default=8,
        metavar="N",
        help="prompts per forward pass here, or requests in flight with --server (default 8)",
    )
    p.add_argument(
        "--max-new-tokens",
        type=int,
        metavar="N",
        help=f"generation bound of score10 and reasoning modes (default: {SCORE_TOKENS} for score10, 512 for reasoning)",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    return p


def check(args: argparse.Namespace) -> Path:
    """Refuse a wrong call before any data or weights are loaded (usage errors); the output folder."""
    at_least(batch_size=(args.batch_size, 1), max_new_tokens=(args.max_new_tokens, 1))
    if (
        not args.server
        and args.model.startswith(("/", "./", "../", "~"))
        and not Path(args.model).expanduser().is_dir()
    ):
        raise CommandError(f"--model {args.model}: no such folder (a local model is a folder)", usage=True)
    if args.api_key_env is not None:
        if not args.server:
            raise CommandError("--api-key-env goes with --server (a local model needs no key)", usage=True)
        if not os.environ.get(args.api_key_env):
            raise CommandError(f"--api-key-env {args.api_key_env}: that environment variable is not set", usage=True)
    out = check_output(args.output, folder=True)
    if out.is_dir() and any(out.iterdir()):
        raise CommandError(f"--output {out}: the folder exists and is not empty; write to a new folder", usage=True)
    return out


def labelled(records: list[dict]) -> list[dict]:
    """The rows with a label (a threshold is fitted on those); none is a usage error."""
    rows = [r for r in records if r.get("label") is not None]
    if not rows:
        raise CommandError(f"--fit: none of the {len(records)} rows has a label; give labelled rows", usage=True)
    if len(rows) < len(records):
        print(f"--fit: skipping {len(records) - len(rows)} of {len(records)} rows without a label")
    return rows


def fit(judge: PromptedJudge, records: list[dict], sources: list[str], progress: bool, batch_size: int) -> dict:
    """Score the fit rows once (under a progress bar), fit the threshold on them and print what it gives: the
    threshold, the accuracy on the rows whose output was read and on all rows (an unread output is no
    'correct' verdict, as ``evaluate`` counts it), and how many outputs could not be read. Returns what
    judge.json keeps of the fit."""
    scores = judge.score_records(records, batch_size=batch_size, progress=progress)
    labels = np.array([r["label"] for r in records], dtype=float)
    unread = np.isnan(scores)
    if unread.all():
        hint = (
            "does the server list True or False among the first token's top logprobs?"
            if judge.mode == "direct"
            else f"is --max-new-tokens {judge.max_new_tokens} enough?"
        )
        raise CommandError(
            f"no threshold to fit: none of the {len(records)} outputs on the --fit rows had a readable "
            f"{_what(judge)} ({hint})"
        )
    threshold, accuracy = judge.fit_threshold(records, scores=scores)
    overall = float(((scores >= threshold) == labels).mean())
    print(
        f"threshold {threshold:.4f}{_rating(judge, threshold)} fitted on {len(records)} labelled rows: "
        f"accuracy {accuracy:.4f} on the {int((~unread).sum())} read, {overall:.4f} on all"
    )
    if judge.mode != "direct" or unread.any():  # direct mode reads every row but over HTTP without logprobs
        print(f"unparsed: {int(unread.sum())} of {len(records)} outputs had no readable {_what(judge)}")
    return {
        "data": list(sources),
        "rows": len(records),
        "unparsed": int(unread.sum()),
        "accuracy_read": accuracy,
        "accuracy": overall,
    }


def _what(judge: PromptedJudge) -> str:
    return "rating" if judge.mode == SCORE_MODE else "verdict"


def _rating(judge: PromptedJudge, threshold: float) -> str:
    """In score10 mode, what the threshold means as a rating (P = (rating − 1) / 9)."""
    if judge.mode != SCORE_MODE:
        return ""
    if threshold > 1:
        return " (no rating is 'correct')"
    if threshold <= 0:
        return " (every rating is 'correct')"
    return f" (a rating of {1 + 9 * threshold:.4g} or more is 'correct')"


def write(judge: PromptedJudge, out: Path, provenance: dict | None) -> None:
    """The judge folder, whole or not at all: written beside ``out`` and renamed into place; ``provenance``
    (how the threshold was fitted) is added to its judge.json."""
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        judge.export(tmp)
        if provenance is not None:
            write_judge_config(tmp, {**read_judge_config(tmp), "fit": provenance})
        if out.is_dir():  # checked empty before any work
            out.rmdir()
        os.replace(tmp, out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def run(args: argparse.Namespace) -> int:
    out = check(args)
    records = labelled(load_records(args.fit)) if args.fit else []  # bad sources are refused before the model loads
    judge = prompted_judge(
        args.model,
        args.mode,
        server=args.server,
        api_key_env=args.api_key_env,
        batch_size=args.batch_size,
        max_new_tokens=args.max_new_tokens,
    )
    provenance = None
    if records:
        provenance = fit(judge, records, args.fit, progress=not args.no_progress, batch_size=args.batch_size)
    else:
        print(
            f"threshold {judge.threshold:g}{_rating(judge, judge.threshold)}: the {args.mode} default, not fitted "
            "(give --fit with labelled validation rows to fit it)"
        )
    write(judge, out, provenance)
    print(f"wrote {out} ({judge.name})")
    return 0
