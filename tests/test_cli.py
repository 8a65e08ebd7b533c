"""Every command explains itself: ``--help`` works and the top-level help lists each command in one line."""

from __future__ import annotations

import pytest

from bertjudge.cli.main import COMMANDS, TRAINING, main


def test_the_top_level_help_lists_every_command(capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for name in (*TRAINING, *COMMANDS):
        assert any(line.split()[:1] == [name] for line in out.splitlines()), name


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_command_has_a_help(command, capsys):
    with pytest.raises(SystemExit) as done:
        main([command, "--help"])
    assert done.value.code == 0
    assert "usage:" in capsys.readouterr().out


def test_an_unknown_command_is_a_usage_error(capsys):
    assert main(["nope"]) == 2
    assert "unknown command" in capsys.readouterr().err
