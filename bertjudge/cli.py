"""``python -m bertjudge <command>``.

Training commands (fit, validate, test, predict) go through LightningCLI; every other
command is a small argparse program in the module that owns it, imported only when used.
"""

from __future__ import annotations

import importlib
import sys

TRAINING = ("fit", "validate", "test", "predict")
# command -> (module, function, one-line help); the function takes argv and returns an exit code
COMMANDS = {
    "judge": ("bertjudge.scoring", "cli", "score a JSONL/Parquet file with a judge (resumable)"),
    "corpus": ("bertjudge.data.corpus", "cli", "write the embedded corpus splits as JSONL"),
    "synth": ("bertjudge.data.synth", "cli", "bootstrap a labelled training set from (question, reference) rows"),
    "evaluate": ("bertjudge.evaluation", "cli", "compare judges against labels: report, leaderboards, plots"),
    "generate": ("bertjudge.pipeline.generate", "cli", "generate candidate answers with an LLM on benchmark tasks"),
    "label": ("bertjudge.pipeline.label", "cli", "label candidates with a teacher (LLM judge, rules or humans)"),
    "build": ("bertjudge.pipeline.build", "cli", "build a balanced training mixture with in- and out-of-domain splits"),
    "import-lmeval": ("bertjudge.pipeline.lmeval", "cli", "read lm-evaluation-harness samples files as records"),
    "import-evouna": ("bertjudge.pipeline.evouna", "cli", "EVOUNA's human-judged open-QA answers (NQ/TQ) as records"),
    "champ": ("bertjudge.pipeline.champ", "cli", "real GPT/PaLM math solutions (champ-dataset) as rule-labelled records"),
    "zoo": ("bertjudge.zoo", "cli", "list, show, pull, publish and verify published judges"),
    "bench": ("bertjudge.bench", "cli", "measure FLOPs, latency and memory of judges; the Pareto plot"),
    "soup": ("bertjudge.soup", "cli", "average the weights of judges fine-tuned from one start (a model soup)"),
    "calibrate": ("bertjudge.calibration", "cli", "refit a judge's temperature (and bias) on labelled data"),
}

USAGE = """usage: python -m bertjudge <command> [options]

Training (LightningCLI; see `python -m bertjudge fit --help`):
  fit            train a judge, export the best checkpoint, report held-out metrics
  validate       evaluate a judge on the validation split
  test           evaluate a judge on the test split
  predict        score the predict split

Other commands:
{other}
"""


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        other = "\n".join(f"  {name:<14} {help_}" for name, (_, _, help_) in COMMANDS.items())
        print(USAGE.format(other=other))
        return 0 if argv else 2
    command, rest = argv[0], argv[1:]
    if command in TRAINING:
        from bertjudge.training import run_lightning_cli

        run_lightning_cli([command, *rest])
        return 0
    if command not in COMMANDS:
        print(f"bertjudge: unknown command {command!r}; run `python -m bertjudge --help`", file=sys.stderr)
        return 2
    module, function, _ = COMMANDS[command]
    return int(getattr(importlib.import_module(module), function)(rest) or 0)
