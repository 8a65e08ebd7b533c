"""The package works when installed from a wheel, outside the checkout: the registry and everything
else it reads ship inside it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def run(cmd, cwd, **kw):
    result = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=300, **kw)
    assert result.returncode == 0, f"{cmd}: {result.stderr[-2000:]}"
    return result


@dataclass
class Installed:
    """A wheel built from a copy of the checkout, installed in a fresh venv, and a folder outside the checkout."""

    wheel: Path
    venv: Path
    python: Path
    cli: Path
    work: Path
    env: dict


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Installed:
    tmp_path = tmp_path_factory.mktemp("wheel")
    source = tmp_path / "source"  # a copy: building writes build/ and *.egg-info next to pyproject.toml
    # symlinks kept, as in the checkout: bertjudge/configs links to configs/, whose files the wheel must hold
    shutil.copytree(
        ROOT / "bertjudge", source / "bertjudge", symlinks=True, ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copytree(ROOT / "configs", source / "configs")
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, source / name)
    run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path / "dist"),
            str(source),
        ],
        cwd=tmp_path,
    )
    (wheel,) = (tmp_path / "dist").glob("bertjudge-*.whl")
    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", str(venv)], cwd=tmp_path)
    python = venv / "bin" / "python"
    site = run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], cwd=tmp_path)
    # the dependencies (torch, transformers, ...) come from this environment; bertjudge only from the wheel
    (Path(site.stdout.strip()) / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    run([str(python), "-m", "pip", "install", "--no-deps", "--no-index", "-q", str(wheel)], cwd=tmp_path)
    work = tmp_path / "elsewhere"
    work.mkdir()
    env = {**os.environ, "PYTHONPATH": "", "HF_HUB_OFFLINE": "1"}
    return Installed(wheel, venv, python, venv / "bin" / "bertjudge", work, env)


def test_a_wheel_installed_in_a_fresh_venv_runs_outside_the_checkout(installed):
    wheel, venv, python, work, env = installed.wheel, installed.venv, installed.python, installed.work, installed.env
    names = zipfile.ZipFile(wheel).namelist()
    assert "bertjudge/py.typed" in names  # type checkers read the package's annotations
    assert "bertjudge/zoo/architectures.yaml" in names  # the configs bench costs, beside the registry
    assert "bertjudge/judges/model_card_template.md" in names  # the model card's text, rendered at export
    assert "bertjudge/judges/calibration_rows.jsonl" in names  # int8-static's calibration rows
    for task in ("gsm8k", "mmlu_pro", "triviaqa"):  # lm-eval tasks with the bertjudge filter: --include_path
        assert f"bertjudge/pipeline/lmeval_tasks/bertjudge_{task}.yaml" in names
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)  # the Apache-2.0 text travels with it
    # every training config, as files (not the checkout's link)
    configs = sorted(p.relative_to(ROOT / "configs").as_posix() for p in (ROOT / "configs").rglob("*.yaml"))
    assert sorted(n.removeprefix("bertjudge/configs/") for n in names if n.startswith("bertjudge/configs/")) == configs
    where = run([str(python), "-c", "import bertjudge; print(bertjudge.__file__)"], cwd=work, env=env)
    assert str(venv) in where.stdout and str(ROOT) not in where.stdout
    cli = installed.cli
    assert "judge" in run([str(cli), "--help"], cwd=work, env=env).stdout
    listed = run([str(cli), "zoo", "list"], cwd=work, env=env).stdout
    assert "minilm-l6.quickstart" in listed  # the registry shipped as package data
    tasks = "from bertjudge.pipeline.lmeval import TASKS; print(TASKS, *sorted(p.name for p in TASKS.glob('*.yaml')))"
    folder, *yamls = run([str(python), "-c", tasks], cwd=work, env=env).stdout.split()
    assert folder.startswith(str(venv)) and len(yamls) == 3  # what `lm_eval --include_path` is given
    card = (
        "from bertjudge.judges.model_card import TEMPLATE, model_card; "
        "print(TEMPLATE); print(model_card({'class': 'x.EncoderJudge', 'format': {'order': 'QCR'}}))"
    )
    template, card = run([str(python), "-c", card], cwd=work, env=env).stdout.split("\n", 1)
    assert template.startswith(str(venv)) and "inference: false" in card and "## Use with transformers alone" in card
    calibration = "from bertjudge.judges.inference import calibration_set; print(len(calibration_set()))"
    assert run([str(python), "-c", calibration], cwd=work, env=env).stdout.split() == ["256"]
    rows = [
        {"question": "What is 2+3?", "candidate": "Final answer: 5", "reference": "5"},
        {"question": "What is 2+3?", "candidate": "Final answer: 6", "reference": "5"},
    ]
    (work / "in.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    run(
        [str(cli), "judge", "--judge", "regex", "--input", "in.jsonl", "--output", "out.jsonl", "--no-progress"],
        cwd=work,
        env=env,
    )
    verdicts = [json.loads(line)["verdict"] for line in (work / "out.jsonl").read_text().splitlines()]
    assert verdicts == [True, False]


@pytest.mark.slow
def test_the_installed_wheel_fits_a_shipped_config_outside_the_checkout(installed, tiny_backbone):
    """`fit --config` on the quickstart config the wheel ships (found with `bertjudge configs`), from a folder
    outside the checkout, made tiny on the command line: a random backbone, embedded rows, two steps."""
    cli, env = installed.cli, {**installed.env, "WANDB_MODE": "offline"}
    for variable in ("WANDB_CACHE_DIR", "WANDB_CONFIG_DIR", "WANDB_DATA_DIR", "WANDB_ARTIFACT_DIR"):
        env[variable] = str(installed.work / "wandb-home" / variable.lower())
    work = installed.work / "fit"
    work.mkdir()
    (config,) = run([str(cli), "configs", "quickstart"], cwd=work, env=env).stdout.split()
    assert config.startswith(str(installed.venv)) and Path(config).is_file()
    fitted = run(
        [
            str(cli),
            "fit",
            "--config",
            config,
            f"--model.init_args.backbone={tiny_backbone}",
            "--data.train=[embedded:train?n=32]",
            "--data.val=[embedded:val?n=16]",
            "--data.test=[embedded:test?n=16]",
            "--data.adversarial=[]",
            "--data.real_test=[]",
            "--data.eval_batch_size=16",
            "--trainer.max_steps=2",
            "--trainer.val_check_interval=2",
            "--trainer.precision=32-true",
        ],
        cwd=work,
        env=env,
    )
    judge = work / "runs" / "quickstart" / "judge"  # the config's default_root_dir, under the folder it ran in
    assert f"exported the judge to {judge.relative_to(work)}" in fitted.stdout
    saved = json.loads((judge / "judge.json").read_text())
    assert saved["provenance"]["recipe"]["steps"] == 2 and saved["provenance"]["train_data"] == ["embedded:train?n=32"]
    assert 0 <= saved["metrics"]["test/acc"] <= 1 and saved["format"]["order"] == "ARQC"  # the config's format
    assert list((work / "runs" / "quickstart" / "wandb").glob("offline-run-*"))  # the config's WandbLogger, offline
    rows = [{"question": "What is 2+3?", "candidate": "Final answer: 5", "reference": "5"}]
    (work / "in.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    run(
        [str(cli), "judge", "--judge", str(judge), "--input", "in.jsonl", "--output", "out.jsonl", "--no-progress"],
        cwd=work,
        env=env,
    )
    assert 0 <= json.loads((work / "out.jsonl").read_text())["score"] <= 1
