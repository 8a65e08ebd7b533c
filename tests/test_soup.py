"""Model soups: the weight average, its checks, and the command with calibration."""

import json

import pytest
import torch

from bertjudge.cli.main import main
from bertjudge.core.formats import JudgeFormat
from bertjudge.judges.encoder import EncoderJudge
from bertjudge.judges.loading import Judge
from bertjudge.train.soup import SoupError, average_judges


@pytest.fixture
def two_judges(tiny_backbone, tmp_path):
    """Two exported judges from one start: b is a with every weight shifted by +1."""
    a = EncoderJudge(backbone=tiny_backbone, temperature=1.0)
    a.export(tmp_path / "a")
    b = Judge.load(str(tmp_path / "a"))
    with torch.no_grad():
        for param in b.parameters():
            param.add_(1.0)
    b.temperature = 3.0
    b.export(tmp_path / "b")
    return tmp_path / "a", tmp_path / "b"


def test_the_soup_is_the_mean_of_the_weights(two_judges):
    a, b = (Judge.load(str(folder)) for folder in two_judges)
    expected = {k: (v + b.state_dict()[k]) / 2 for k, v in a.state_dict().items() if v.is_floating_point()}
    soup = average_judges([a, b], names=["a", "b"])
    for key, value in expected.items():
        torch.testing.assert_close(soup.state_dict()[key], value)
    assert soup.temperature == 2.0
    assert soup.provenance["soup"]["ingredients"] == ["a", "b"]


def test_ingredients_that_cannot_be_averaged_are_refused(two_judges, tiny_backbone, tiny_backbones):
    a = Judge.load(str(two_judges[0]))
    with pytest.raises(SoupError, match="at least two"):
        average_judges([a])
    other_format = EncoderJudge(backbone=tiny_backbone, format=JudgeFormat(order="QRC"))
    with pytest.raises(SoupError, match="input formats"):
        average_judges([a, other_format], names=["a", "qrc"])
    other_weights = EncoderJudge(backbone=tiny_backbones["eurobert"])
    with pytest.raises(SoupError, match="same weights"):
        average_judges([a, other_weights], names=["a", "eurobert"])


def test_the_command_writes_a_calibrated_judge(two_judges, tmp_path, capsys):
    out = tmp_path / "soup" / "judge"
    assert main(["soup", "--judge", *map(str, two_judges), "--output", str(out), "--data", "embedded:val?n=32"]) == 0
    config = json.loads((out / "judge.json").read_text())
    assert config["provenance"]["name"] == "soup"
    assert config["provenance"]["calibration"]["rows"] == 32
    assert config["temperature"] == pytest.approx(config["provenance"]["calibration"]["temperature"])
    assert "fitted on 32 rows" in capsys.readouterr().out
    soup, a = Judge.load(str(out)), Judge.load(str(two_judges[0]))
    key = "model.classifier.weight"
    torch.testing.assert_close(soup.state_dict()[key], a.state_dict()[key] + 0.5)


def test_the_command_names_a_missing_judge(two_judges, tmp_path, capsys):
    assert (
        main(["soup", "--judge", str(two_judges[0]), str(tmp_path / "nowhere"), "--output", str(tmp_path / "s")]) == 2
    )
    assert "nowhere" in capsys.readouterr().err
    assert not (tmp_path / "s").exists()


def test_the_command_without_data_keeps_the_ingredients_mean_temperature(two_judges, tmp_path, capsys):
    out = tmp_path / "soup" / "judge"
    assert main(["soup", "--judge", *map(str, two_judges), "--output", str(out), "--name", "two-seeds"]) == 0
    config = json.loads((out / "judge.json").read_text())
    assert config["provenance"]["name"] == "two-seeds"
    assert config["temperature"] == pytest.approx(2.0)  # the mean of 1.0 and 3.0
    assert "give --data to fit it" in capsys.readouterr().out


@pytest.mark.parametrize(
    "old,expected",
    [
        (
            ["--judge", "{a}", "{b}", "--calibrate", "embedded:val?n=32"],
            "--calibrate is now --data: use --data embedded:val?n=32",
        ),
        (["{a}", "{b}"], "judges are given with --judge: use --judge {a} {b}"),
    ],
    ids=["calibrate", "positional-judges"],
)
def test_the_earlier_form_is_refused_in_one_line_naming_the_new_flag(old, expected, two_judges, tmp_path, capsys):
    a, b = map(str, two_judges)
    argv = ["soup", *(arg.format(a=a, b=b) for arg in old), "--output", str(tmp_path / "s")]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.splitlines() == [f"bertjudge soup: {expected.format(a=a, b=b)}"]
    assert not (tmp_path / "s").exists()
