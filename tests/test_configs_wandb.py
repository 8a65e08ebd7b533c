"""wandb follows ``WANDB_MODE``, offline when it is unset: no WandbLogger in configs/ names a mode (``offline``), the
training command sets ``WANDB_MODE=offline`` unless the user set it, and ``evaluate --wandb`` writes an offline run (tables, plots, the report files) under the report's folder."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
import yaml
from cli_run import evaluate

from bertjudge.core.records import normalize, write_records

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = sorted((ROOT / "configs").rglob("*.yaml"))


def wandb_loggers(node, where: str = "") -> list[tuple[str, dict]]:
    """(key path, init_args) of every WandbLogger in a parsed YAML document."""
    found = []
    if isinstance(node, dict):
        if "WandbLogger" in str(node.get("class_path", "")):
            found.append((where, node.get("init_args") or {}))
        for key, value in node.items():
            found += wandb_loggers(value, f"{where}.{key}" if where else str(key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            found += wandb_loggers(value, f"{where}[{i}]")
    return found


def hard_coded_modes(path: Path) -> list[str]:
    """The WandbLoggers of a config file that fix their mode (``offline``) instead of leaving it to WANDB_MODE."""
    loggers = wandb_loggers(yaml.safe_load(path.read_text()))
    return [
        f"{path}: {where}: init_args.offline is {args['offline']!r}: leave the mode to WANDB_MODE"
        for where, args in loggers
        if "offline" in args
    ]


def test_there_are_configs_with_wandb_loggers():
    assert CONFIGS and any(wandb_loggers(yaml.safe_load(p.read_text())) for p in CONFIGS)
    assert wandb_loggers(yaml.safe_load((ROOT / "configs" / "trainer" / "ddp.yaml").read_text()))


@pytest.mark.parametrize("path", CONFIGS, ids=[p.relative_to(ROOT).as_posix() for p in CONFIGS])
def test_no_wandb_logger_fixes_its_mode(path):
    assert hard_coded_modes(path) == []


def test_the_check_finds_a_logger_that_fixes_its_mode(tmp_path):
    fixed = tmp_path / "fixed.yaml"
    fixed.write_text(
        yaml.safe_dump(
            {
                "trainer": {
                    "logger": [
                        {"class_path": "lightning.pytorch.loggers.CSVLogger", "init_args": {"save_dir": "x"}},
                        {"class_path": "lightning.pytorch.loggers.WandbLogger", "init_args": {"offline": True}},
                    ]
                }
            }
        )
    )
    assert hard_coded_modes(fixed) == [
        f"{fixed}: trainer.logger[1]: init_args.offline is True: leave the mode to WANDB_MODE"
    ]


@pytest.mark.parametrize("given, expected", [(None, "offline"), ("online", "online"), ("disabled", "disabled")])
def test_training_runs_wandb_offline_unless_wandb_mode_says_otherwise(given, expected, monkeypatch, tmp_path):
    from bertjudge.cli.common import CommandError
    from bertjudge.cli.train import run_lightning_cli

    if given is None:
        monkeypatch.delenv("WANDB_MODE", raising=False)
    else:
        monkeypatch.setenv("WANDB_MODE", given)
    with pytest.raises(CommandError):  # refused before anything runs; the mode is set first
        run_lightning_cli(["fit", "--config", str(tmp_path / "missing.yaml")])
    assert os.environ["WANDB_MODE"] == expected


def labelled_rows(n: int = 12) -> list[dict]:
    rows = []
    for i in range(n):
        a = 3 + i
        category = ("open_math", "open_qa", "multiple_choice")[i % 3]
        answer = a if i % 4 else a + 1
        rows.append(
            normalize(
                {
                    "task": f"toy-{i % 2}",
                    "category": category,
                    "question": f"What is {a} + 0?",
                    "candidate": f"The sum is {answer}. Final answer: {answer}",
                    "reference": str(a),
                    "label": int(answer == a),
                    "candidate_model": f"model-{i % 3}",
                }
            )
        )
    return rows


def test_evaluate_logs_the_report_to_an_offline_wandb_run(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("WANDB_MODE", "offline")
    for variable in ("WANDB_CACHE_DIR", "WANDB_CONFIG_DIR", "WANDB_DATA_DIR", "WANDB_ARTIFACT_DIR"):
        monkeypatch.setenv(variable, str(tmp_path / "wandb-home" / variable.lower()))
    data = write_records(tmp_path / "rows.jsonl", labelled_rows())
    out = tmp_path / "report"
    evaluate(data, ["regex", "contains"], out, "--bootstrap", "20", "--wandb", "bertjudge-test")
    [run] = list((out / "wandb").glob("offline-run-*"))
    assert str(run) in capsys.readouterr().out
    assert list(run.glob("run-*.wandb"))  # the run's records, for `wandb sync`
    files = run / "files"
    assert (files / "report.json").is_file() and (files / "report.md").is_file()
    assert list((files / "media" / "images").rglob("*.png"))  # the plots
    report = json.loads((out / "report.json").read_text())
    tables = {
        re.fullmatch(r"(.+)_\d+_[0-9a-f]+\.table\.json", path.name)[1]: json.loads(path.read_text())
        for path in (files / "media" / "table").glob("*.table.json")
    }
    assert set(tables) == {"overall", "by_category", "by_task", "by_data", "by_candidate_model", "by_length"}
    overall = tables["overall"]
    assert overall["columns"][:4] == ["judge", "n", "threshold", "accuracy"]
    assert {row[0]: row[3] for row in overall["data"]} == pytest.approx(
        {name: result["overall"]["accuracy"] for name, result in report["judges"].items()}
    )
    by_category = {(row[0], row[1]): row[3] for row in tables["by_category"]["data"]}
    assert by_category == pytest.approx(
        {
            (name, category): stats["accuracy"]
            for name, result in report["judges"].items()
            for category, stats in result["by_category"].items()
        }
    )
