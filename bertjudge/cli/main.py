"""``python -m bertjudge <command>``: the command layer.

Training commands (fit, validate, test, predict) go through LightningCLI. Every other command is a
module of this package with ``parser()`` (its argparse parser) and ``run(args)`` (its exit code),
imported only when used. Errors reach the user as one line — exit 2 for a wrong call or bad input,
1 for a failure while running — and a traceback only with ``--debug``.
"""

from __future__ import annotations

import importlib
import sys

from bertjudge.cli.common import CommandError
from bertjudge.core.formats import FormatError
from bertjudge.core.judge_file import JudgeFileError
from bertjudge.core.records import RecordError

# errors in what the user gave (files, rows, judge folders): exit 2, like a wrong flag
INPUT_ERRORS = (RecordError, FormatError, JudgeFileError, FileNotFoundError, IsADirectoryError, NotADirectoryError)

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
    "zoo": ("zoo", "list, show, pull, publish and verify published judges"),
    "bench": ("bench", "measure FLOPs, latency and memory of judges; the Pareto plot"),
    "corpus": ("corpus", "write the embedded corpus splits as JSONL"),
    "synth": ("synth", "bootstrap a labelled training set from (question, reference) rows"),
    "generate": ("generate", "generate candidate answers with an LLM on benchmark tasks"),
    "label": ("label", "label candidates with a teacher (LLM judge, rules or humans)"),
    "build": ("build", "build a balanced training mixture with in- and out-of-domain splits"),
    "import-lmeval": ("import_lmeval", "read lm-evaluation-harness samples files as records"),
    "import-evouna": ("import_evouna", "EVOUNA's human-judged open-QA answers (NQ/TQ) as records"),
    "champ": ("champ", "real GPT/PaLM math solutions (champ-dataset) as rule-labelled records"),
}

USAGE = """usage: python -m bertjudge [--debug] <command> [options]

Training (LightningCLI; e.g. `python -m bertjudge fit --help`):
{training}

Other commands (`python -m bertjudge <command> --help`):
{other}

--debug   show the Python traceback of an error instead of one line
"""


def usage() -> str:
    return USAGE.format(training="\n".join(f"  {name:<14} {help_}" for name, help_ in TRAINING.items()),
                        other="\n".join(f"  {name:<14} {help_}" for name, (_, help_) in COMMANDS.items()))


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
        args = module.parser().parse_args(rest)  # argparse exits 2 on a wrong call
        return int(module.run(args) or 0)
    except KeyboardInterrupt:
        print(f"bertjudge {command}: interrupted", file=sys.stderr)
        return 130
    except Exception as e:  # noqa: BLE001 - the one place where every error becomes one line
        if debug:
            raise
        code = e.exit_code if isinstance(e, CommandError) else 2 if isinstance(e, INPUT_ERRORS) else 1
        message = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        known = isinstance(e, (CommandError, *INPUT_ERRORS))
        hint = "" if known else f" ({type(e).__name__}; --debug shows where)"
        print(f"bertjudge {command}: {message}{hint}", file=sys.stderr)
        return code
