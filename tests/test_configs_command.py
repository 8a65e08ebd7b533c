"""``python -m bertjudge configs``: the training configs the package ships (``bertjudge/configs``, a link to the
checkout's ``configs/``; files in the wheel, tests/test_package.py), listed, one's path for ``fit --config``, or
copied to edit."""

from __future__ import annotations

from pathlib import Path

from bertjudge.cli.configs import SHIPPED
from bertjudge.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
NAMES = sorted(p.relative_to(ROOT / "configs").as_posix() for p in (ROOT / "configs").rglob("*.yaml"))


def test_the_package_ships_the_checkouts_configs():
    assert SHIPPED == ROOT / "bertjudge" / "configs" and SHIPPED.resolve() == (ROOT / "configs").resolve()
    assert "quickstart.yaml" in NAMES and "encoder/minilm-l6.yaml" in NAMES


def test_configs_lists_every_config_with_its_summary(capsys):
    assert main(["configs"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines[:-1]] == NAMES
    quickstart = next(line for line in lines if line.startswith("quickstart.yaml "))
    assert "The main job (`make quickstart`)" in quickstart
    assert lines[-1].startswith(f"({len(NAMES)} configs in {SHIPPED};")


def test_a_name_prints_the_path_fit_is_given(capsys):
    assert main(["configs", "quickstart", "encoder/minilm-l6.yaml", "configs/trainer/cpu.yaml"]) == 0
    paths = [Path(line) for line in capsys.readouterr().out.splitlines()]
    assert paths == [SHIPPED / "quickstart.yaml", SHIPPED / "encoder" / "minilm-l6.yaml", SHIPPED / "trainer/cpu.yaml"]
    assert paths[0].read_bytes() == (ROOT / "configs" / "quickstart.yaml").read_bytes()


def test_copy_writes_the_configs_into_a_folder_and_never_overwrites(tmp_path, capsys):
    assert main(["configs", "encoder/minilm-l6", "--copy", str(tmp_path / "mine")]) == 0
    copied = tmp_path / "mine" / "encoder" / "minilm-l6.yaml"
    assert copied.read_bytes() == (ROOT / "configs" / "encoder" / "minilm-l6.yaml").read_bytes()
    assert f"copied 1 config to {tmp_path / 'mine'}" in capsys.readouterr().out
    assert main(["configs", "--copy", str(tmp_path / "all")]) == 0
    assert sorted(p.relative_to(tmp_path / "all").as_posix() for p in (tmp_path / "all").rglob("*.yaml")) == NAMES
    copied.write_text("edited")
    assert main(["configs", "encoder/minilm-l6", "--copy", str(tmp_path / "mine")]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"bertjudge configs: {copied}: exists; remove it or copy into another folder"
    assert copied.read_text() == "edited"


def test_an_unknown_name_is_one_line_and_exit_2(capsys):
    assert main(["configs", "quickstart", "nope"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.strip() == (
        f"bertjudge configs: no shipped config 'nope'; `python -m bertjudge configs` lists the {len(NAMES)} there are"
    )
