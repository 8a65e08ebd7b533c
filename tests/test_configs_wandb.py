"""wandb follows ``WANDB_MODE``, offline when it is unset: no WandbLogger in configs/ names a mode (``offline``), the
training command sets ``WANDB_MODE=offline`` unless the user set it, ``fit`` logs the exported judge as a ``model``
artifact, and ``evaluate --wandb`` writes an offline run (tables, the rows each judge got wrong, plots, the report
files) under the report's folder. What an offline run holds is read back from its ``run-*.wandb`` file
(tests/wandb_records.py): what ``wandb sync`` would upload."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
import yaml
from cli_run import evaluate
from wandb_records import artifacts, md5_digest

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
    """Toy sums; some rows every judge that reads the number gets wrong: a label that contradicts the answer
    (row 5, 11) and a right answer in words (row 7: unparsed by the rules)."""
    rows = []
    for i in range(n):
        a = 3 + i
        category = ("open_math", "open_qa", "multiple_choice")[i % 3]
        answer = a if i % 4 else a + 1
        candidate = f"The sum is {answer}. Final answer: {answer}" if i != 7 else "The sum is ten."
        rows.append(
            normalize(
                {
                    "task": f"toy-{i % 2}",
                    "category": category,
                    "question": f"What is {a} + 0?",
                    "candidate": candidate,
                    "reference": str(a),
                    "label": int(answer == a) ^ (i % 6 == 5),
                    "candidate_model": f"model-{i % 3}",
                }
            )
        )
    return rows


def offline_wandb(monkeypatch, tmp_path) -> None:
    """wandb offline, its caches and staged artifact files under ``tmp_path`` (not the user's home)."""
    monkeypatch.setenv("WANDB_MODE", "offline")
    for variable in ("WANDB_CACHE_DIR", "WANDB_CONFIG_DIR", "WANDB_DATA_DIR", "WANDB_ARTIFACT_DIR"):
        monkeypatch.setenv(variable, str(tmp_path / "wandb-home" / variable.lower()))


def test_evaluate_logs_the_report_to_an_offline_wandb_run(tmp_path, monkeypatch, capsys):
    offline_wandb(monkeypatch, tmp_path)
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

    # each judge's wrong rows: those whose verdict (score at or above its threshold; unparsed: incorrect) is not the
    # label, with the judge's score and details
    from bertjudge.evaluation.labelled import load_labelled
    from bertjudge.evaluation.wandb_log import ERROR_COLUMNS
    from bertjudge.judges.loading import Judge

    errors = {
        re.fullmatch(r"(.+)_\d+_[0-9a-f]+\.table\.json", path.name)[1]: json.loads(path.read_text())
        for path in (files / "media" / "table" / "errors").glob("*.table.json")
    }
    assert set(errors) == {"regex", "contains"}
    records = load_labelled([str(data)])
    for name, table in errors.items():
        judge = Judge.load(name)
        wrong = [
            (rec, row)
            for rec, row in zip(records, judge.details(records))
            if (row["score"] is not None and row["score"] >= judge.threshold) != bool(rec["label"])
        ]
        assert len(wrong) == round(report["n"] * (1 - report["judges"][name]["overall"]["accuracy"])) >= 3
        assert table["columns"] == ERROR_COLUMNS
        cells = [dict(zip(ERROR_COLUMNS, row)) for row in table["data"]]
        assert [(c["id"], c["score"], c["label"]) for c in cells] == [
            (rec["id"], row["score"], bool(rec["label"])) for rec, row in wrong
        ]
        for cell, (rec, row) in zip(cells, wrong):
            assert (cell["judge"], cell["data"], cell["question"], cell["candidate"]) == (
                name,
                "rows.jsonl",
                rec["question"],
                rec["candidate"],
            )
            assert cell["verdict"] != cell["label"] and json.loads(cell["references"]) == rec["references"]
            assert cell["error"] == ("false positive" if cell["verdict"] else "false negative")
            assert cell["threshold"] == judge.threshold
            assert json.loads(cell["details"]) == {k: v for k, v in row.items() if k not in ("score", "verdict")}
        assert "The sum is ten." in [cell["candidate"] for cell in cells]  # the right answer in words


@pytest.mark.parametrize(
    "run, name", [("quickstart", "judge-quickstart"), ("my run (2)", "judge-my-run-2"), ("///", "judge-run")]
)
def test_the_artifact_is_named_after_the_run_in_the_characters_wandb_allows(run, name):
    from bertjudge.train.wandb_artifact import artifact_name

    assert artifact_name(run) == name


def test_fit_logs_the_exported_judge_as_a_model_artifact(tiny_backbone, tmp_path, monkeypatch, capsys):
    import wandb

    from bertjudge.cli.train import run_lightning_cli

    offline_wandb(monkeypatch, tmp_path)
    root = tmp_path / "my run"
    try:
        run_lightning_cli(
            [
                "fit",
                "--model=bertjudge.judges.encoder.EncoderJudge",
                f"--model.backbone={tiny_backbone}",
                "--data.train=[embedded:train?n=16]",
                "--data.val=[embedded:val?n=8]",
                "--data.test=[embedded:test?n=8]",
                "--data.batch_size=8",
                "--trainer.max_steps=2",
                "--trainer.logger=lightning.pytorch.loggers.WandbLogger",
                f"--trainer.logger.save_dir={tmp_path}",
                "--trainer.logger.project=bertjudge-test",
                "--trainer.enable_progress_bar=false",
                f"--trainer.default_root_dir={root}",
            ]
        )
    finally:
        wandb.finish()  # the CLI's process finishes its run on exit; this one goes on
    [run] = (tmp_path / "wandb").glob("offline-run-*")
    assert f"logged the judge to wandb as the model artifact judge-my-run; `wandb sync {run}` uploads it" in (
        capsys.readouterr().out
    )
    [artifact] = artifacts(run)
    assert (artifact.type, artifact.name) == ("model", "judge-my-run") and set(artifact.aliases) >= {"latest", "best"}
    folder = root / "judge"
    files = {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    entries = {entry.path: entry for entry in artifact.manifest.contents}
    assert set(entries) == set(files) and {"model.safetensors", "judge.json", "README.md"} <= set(entries)
    for path, entry in entries.items():  # every file of the judge, byte for byte, staged for `wandb sync`
        assert (entry.digest, entry.size) == (md5_digest(files[path]), len(files[path])), path
        assert Path(entry.local_path).read_bytes() == files[path]
    saved, metadata = json.loads(files["judge.json"]), json.loads(artifact.metadata)
    assert {key: metadata[key] for key in ("format", "threshold", "temperature", "metrics")} == {
        key: saved[key] for key in ("format", "threshold", "temperature", "metrics")
    }
    assert 0 <= metadata["metrics"]["test/acc"] <= 1 and metadata["class"].endswith("EncoderJudge")
