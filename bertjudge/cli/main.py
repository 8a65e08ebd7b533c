"""``python -m bertjudge <command>``: the command layer.

Training commands (fit, validate, test, predict) go through LightningCLI. Every other command is a
module of this package with ``parser()`` (its argparse parser) and ``run(args)`` (its exit code),
imported only when used. Errors reach the user as one line — exit 2 for a wrong call or bad input,
1 for a failure while running — and a traceback only with ``--debug``.
"""

from __future__ import annotations

import argparse
import gzip
import importlib
import io
import os
import sys
import zlib
from pathlib import Path

from bertjudge.cli.common import CommandError
from bertjudge.core.errors import BertJudgeError
from bertjudge.core.formats import FormatError
from bertjudge.core.judge_file import JudgeFileError
from bertjudge.core.records import RecordError
from bertjudge.zoo.uri import URIError

# errors in what the user gave (files, rows, judge folders, a judge's name): exit 2, like a wrong flag
INPUT_ERRORS = (
    RecordError,
    FormatError,
    JudgeFileError,
    URIError,
    FileNotFoundError,
    IsADirectoryError,
    NotADirectoryError,
)

TRAINING = {
    "fit": "train a judge, export the best checkpoint, report held-out metrics",
    "validate": "evaluate a judge on the validation split",
    "test": "evaluate a judge on the test split",
    "predict": "score the predict split",
}
# command -> (module in bertjudge.cli, one-line help)
COMMANDS = {
    "judge": ("judge", "score a JSONL/Parquet file with a judge (resumable)"),
    "evaluate": ("evaluate", "compare judges against labels: report, leaderboards, plots"),
    "calibrate": ("calibrate", "refit a judge's temperature (and bias) on labelled data, or adapt it without labels"),
    "soup": ("soup", "average the weights of judges fine-tuned from one start (a model soup)"),
    "prompt-judge": ("prompt_judge", "make an off-the-shelf LLM a judge folder (JudgeLM-style), its threshold fitted"),
    "zoo": ("zoo", "list, show, pull, publish and verify published judges"),
    "bench": ("bench", "measure FLOPs, latency and memory of judges; the Pareto plot"),
    "corpus": ("corpus", "write the embedded corpus splits as JSONL"),
    "synth": ("synth", "bootstrap a labelled training set from (question, reference) rows"),
    "generate": ("generate", "generate candidate answers with an LLM on benchmark tasks"),
    "label": ("label", "label candidates with a teacher (LLM judge, rules or humans)"),
    "build": ("build", "build a balanced training mixture with in- and out-of-domain splits"),
    "import-lmeval": ("import_lmeval", "read lm-evaluation-harness samples files as records"),
    "lmeval-report": (
        "lmeval_report",
        "judge lm-eval --log_samples output: per-task, per-model accuracy beside lm-eval's metric",
    ),
    "import-evouna": ("import_evouna", "EVOUNA's human-judged open-QA answers (NQ/TQ) as records"),
    "champ": ("champ", "real GPT/PaLM math solutions (champ-dataset) as rule-labelled records"),
    "serve": ("serve", "serve a judge over HTTP (LitServe): /score, /health, /metrics"),
    "configs": ("configs", "list the shipped training configs, print one's path for fit --config, or copy them"),
}

USAGE = """usage: python -m bertjudge [--debug] <command> [options]

Training (LightningCLI; e.g. `python -m bertjudge fit --help`):
{training}

Other commands (`python -m bertjudge <command> --help`):
{other}

--debug   show the Python traceback of an error instead of one line
"""


def usage() -> str:
    return USAGE.format(
        training="\n".join(f"  {name:<14} {help_}" for name, help_ in TRAINING.items()),
        other="\n".join(f"  {name:<14} {help_}" for name, (_, help_) in COMMANDS.items()),
    )


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv[:1]
    argv = argv[1:] if debug else argv
    if not argv or argv[0] in ("-h", "--help"):
        print(usage(), file=sys.stdout if argv else sys.stderr)
        return 0 if argv else 2
    command, rest = argv[0], argv[1:]
    if command not in TRAINING and command not in COMMANDS:
        print(f"bertjudge: unknown command {command!r}; run `python -m bertjudge --help`", file=sys.stderr)
        return 2
    try:
        if command in TRAINING:  # LightningCLI parses, runs and exits on its own
            importlib.import_module("bertjudge.cli.train").run_lightning_cli([command, *rest])
            return 0
        module = importlib.import_module(f"bertjudge.cli.{COMMANDS[command][0]}")
        args = _one_line_errors(module.parser(), command).parse_args(rest)  # a wrong call: CommandError, exit 2
        return int(module.run(args) or 0)
    except KeyboardInterrupt:
        print(f"bertjudge {command}: interrupted", file=sys.stderr)
        return 130
    except Exception as e:  # noqa: BLE001 - the one place where every error becomes one line
        if debug:
            raise
        for error in (e, e.__cause__):  # a file that is not UTF-8 text, or a corrupt gzip stream: name it
            if isinstance(error, UNREADABLE):
                e = unreadable(error)
                break
        code = e.exit_code if isinstance(e, CommandError) else 2 if isinstance(e, INPUT_ERRORS) else 1
        message = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        known = isinstance(e, (CommandError, BertJudgeError, *INPUT_ERRORS))
        hint = "" if known else f" ({type(e).__name__}; --debug shows where)"
        print(f"bertjudge {command}: {message}{hint}", file=sys.stderr)
        return code


def _one_line_errors(parser: argparse.ArgumentParser, command: str) -> argparse.ArgumentParser:
    """Make a wrong call (a missing or unknown flag, a bad value) one line, exit 2, instead of argparse's usage
    text: the parser and its subcommands' parsers raise CommandError."""

    def error(message: str):
        raise CommandError(f"{message}; `python -m bertjudge {command} --help` lists the options", usage=True)

    parsers = [parser]
    while parsers:
        current = parsers.pop()
        current.error = error
        for action in current._actions:
            if isinstance(action, argparse._SubParsersAction):
                parsers.extend(action.choices.values())
    return parser


# errors of a file that is not what its name says: not UTF-8 text, or a corrupt gzip stream (zlib.error is no
# OSError); the readers name the file themselves where they can, this names it where one did not
UNREADABLE = (UnicodeDecodeError, zlib.error, EOFError, gzip.BadGzipFile)


def unreadable(error: Exception) -> Exception:
    """A RecordError naming the file being read when ``error`` was raised (the innermost frame that holds an
    open file, or a ``path`` to one) and, for bad UTF-8, its line; a RecordError saying what when none is found."""
    frames, tb = [], error.__traceback__
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    path = None
    for frame in reversed(frames):
        handles = [v for v in frame.f_locals.values() if isinstance(v, io.IOBase)]
        names = [getattr(h, "name", None) for h in handles] + [frame.f_locals.get("path")]
        path = next((Path(n) for n in names if isinstance(n, (str, os.PathLike)) and Path(n).is_file()), None)
        if path is not None:
            break
    if path is None:
        return RecordError(f"an input file is not UTF-8 text or not a readable gzip file ({error})")
    if not isinstance(error, UnicodeDecodeError):
        return RecordError(f"{path}: not a readable gzip file ({error})")
    try:
        data = path.read_bytes()
        data = gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data
        data.decode("utf-8")
        return RecordError(f"{path}: not UTF-8 text ({error.reason})")
    except UnicodeDecodeError as bad:
        line = data.count(b"\n", 0, bad.start) + 1
        column = bad.start - (data.rfind(b"\n", 0, bad.start) + 1) + 1
        return RecordError(f"{path}:{line}: not UTF-8 text (byte {column} of the line); save the file as UTF-8")
    except (OSError, EOFError, zlib.error) as bad:
        return RecordError(f"{path}: not a readable gzip file ({bad})")
