"""``python -m bertjudge prompt-judge``: an off-the-shelf LLM made into a judge folder from the command line, with
the tiny random Llama of tests/test_judgelm.py (its first generated token a 1–9 rating or something unreadable)
as a local folder; the folder then goes through ``Judge.load`` and ``evaluate``; wrong calls are refused
before any weights are loaded."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from cli_run import evaluate
from test_generative import toy_records
from test_judgelm import score10_judge
from test_judgelm import scoring_lm as scoring_lm  # noqa: F401 (a fixture)
from test_judgelm import tokenizer as tokenizer  # noqa: F401 (a fixture of scoring_lm)

from bertjudge.cli.main import main
from bertjudge.core.records import write_records
from bertjudge.judges.backends import PromptedJudge
from bertjudge.judges.loading import Judge
from bertjudge.judges.prompt import SCORE_PROMPT_VERSION


def prompt_judge(*args) -> int:
    return main(["prompt-judge", *map(str, args)])


def test_fit_writes_a_judge_folder_with_the_threshold_fit_threshold_finds(scoring_lm, tmp_path, monkeypatch, capsys):
    rows = toy_records(16)  # rows on which the model's outputs vary, some unreadable
    unlabelled = {**toy_records(1, seed=9)[0], "id": "no-label", "label": None}
    data = write_records(tmp_path / "val.jsonl", [*rows, unlabelled])
    model = Path(scoring_lm)
    monkeypatch.chdir(model.parent)  # the model as a relative folder, saved as an absolute path
    out = tmp_path / "judges" / "judgelm"
    assert (
        prompt_judge("--model", model.name, "--mode", "score10", "--fit", data, "--max-new-tokens", 1, "--output", out)
        == 0
    )
    printed = capsys.readouterr()

    direct = score10_judge(str(model.resolve()), max_new_tokens=1)  # the same rows, through the library
    scores = direct.score_records(rows)
    threshold, accuracy = direct.fit_threshold(rows)
    unread = int(np.isnan(scores).sum())
    assert 0 < unread < len(rows)  # the model leaves some outputs unreadable, so the count is tested
    saved = json.loads((out / "judge.json").read_text())
    assert saved["threshold"] == threshold and saved["mode"] == "score10" and saved["max_new_tokens"] == 1
    assert saved["prompt_version"] == SCORE_PROMPT_VERSION
    assert saved["backend"]["model"] == str(model.resolve())
    labels = np.array([r["label"] for r in rows])
    overall = ((scores >= threshold) == labels).mean()
    assert saved["fit"] == {
        "data": [str(data)],
        "rows": len(rows),
        "unparsed": unread,
        "accuracy_read": pytest.approx(accuracy),
        "accuracy": pytest.approx(overall),
    }
    assert f"threshold {threshold:.4f} (a rating of {1 + 9 * threshold:.4g} or more is 'correct')" in printed.out
    assert f"accuracy {accuracy:.4f} on the {len(rows) - unread} read, {overall:.4f} on all" in printed.out
    assert f"unparsed: {unread} of {len(rows)} outputs" in printed.out
    assert "skipping 1 of 17 rows without a label" in printed.out
    assert f"judging with {direct.name}" in printed.err  # the progress bar of the fit rows
    assert [p.name for p in out.parent.iterdir()] == ["judgelm"]  # no temporary folder left beside it

    monkeypatch.chdir(tmp_path)  # loads from anywhere
    loaded = Judge.load(str(out))
    assert isinstance(loaded, PromptedJudge) and loaded.config() == direct.config()
    test = toy_records(6, seed=5)
    ours, theirs = loaded.details(test), direct.details(test)
    assert [(d["output"], d["verdict"]) for d in ours] == [(d["output"], d["verdict"]) for d in theirs]
    np.testing.assert_array_equal([d["score"] for d in ours], [d["score"] for d in theirs])  # NaN where unread


def test_without_fit_the_default_threshold_and_evaluate_reports_the_judge(scoring_lm, tmp_path, capsys):
    out = tmp_path / "judgelm"
    out.mkdir()  # an empty folder is fine
    assert prompt_judge("--model", scoring_lm, "--max-new-tokens", 1, "--batch-size", 4, "--output", out) == 0
    printed = capsys.readouterr().out
    assert "threshold 0.5 (a rating of 5.5 or more is 'correct'): the score10 default, not fitted" in printed
    saved = json.loads((out / "judge.json").read_text())
    assert saved["threshold"] == 0.5 and saved["backend"]["batch_size"] == 4 and "fit" not in saved

    test = toy_records(12, seed=5)
    data = write_records(tmp_path / "test.jsonl", test)
    report = evaluate(data, [str(out), "regex"], tmp_path / "report", "--bootstrap", "10")
    [key] = [k for k in report["judges"] if k != "regex"]
    result = report["judges"][key]
    details = score10_judge(scoring_lm, max_new_tokens=1).details(test)
    labels = np.array([r["label"] for r in test])
    verdicts = np.array([d["verdict"] is True for d in details])
    assert result["threshold"] == 0.5
    assert result["overall"]["accuracy"] == pytest.approx((verdicts == labels).mean())
    assert result["overall"]["unparsed_rate"] == pytest.approx(np.mean([d["unparsed"] for d in details]))
    assert key in (tmp_path / "report" / "report.md").read_text()


def test_a_fit_that_reads_no_output_writes_nothing(scoring_lm, tmp_path, capsys):
    """Reasoning mode with one new token never reaches a 'Verdict:' line: nothing to fit, no folder."""
    data = write_records(tmp_path / "val.jsonl", toy_records(8))
    out = tmp_path / "judge"
    args = ["--model", scoring_lm, "--mode", "reasoning", "--max-new-tokens", 1, "--fit", data, "--no-progress"]
    assert prompt_judge(*args, "--output", out) == 1
    err = capsys.readouterr().err.strip().splitlines()[-1]  # after the bars of loading the weights
    assert err == (
        "bertjudge prompt-judge: no threshold to fit: none of the 8 outputs on the --fit rows had a readable "
        "verdict (is --max-new-tokens 1 enough?)"
    )
    assert not out.exists() and list(tmp_path.iterdir()) == [data]


@pytest.fixture
def refused(tmp_path, capsys, monkeypatch):
    """``refused(message, *args)``: the call exits 2 with one line holding ``message``."""
    monkeypatch.delenv("BERTJUDGE_TEST_UNSET_KEY", raising=False)

    def check(message, *args):
        assert prompt_judge(*args) == 2
        err = capsys.readouterr().err.strip()
        assert err.count("\n") == 0 and err.startswith("bertjudge prompt-judge: "), err
        assert message in err, err

    return check


def test_bad_calls_are_one_line_usage_errors(refused, tmp_path):
    model, out = tmp_path / "not-a-model", tmp_path / "out"
    model.mkdir()  # a folder without weights: a call that got as far as loading it would fail with exit 1
    good = write_records(tmp_path / "val.jsonl", toy_records(4))
    refused("invalid choice: 'score5'", "--model", model, "--mode", "score5", "--output", out)
    refused("the following arguments are required: --model", "--output", out)
    refused(f"--model {tmp_path / 'missing'}: no such folder", "--model", tmp_path / "missing", "--output", out)
    refused("--batch-size must be at least 1", "--model", model, "--batch-size", 0, "--output", out)
    refused("--max-new-tokens must be at least 1", "--model", model, "--max-new-tokens", 0, "--output", out)
    full = tmp_path / "full"
    full.mkdir()
    (full / "judge.json").write_text("{}")
    refused(f"--output {full}: the folder exists and is not empty", "--model", model, "--output", full)
    refused(f"--output {good}: exists and is not a folder", "--model", model, "--output", good)
    refused(
        f"{tmp_path / 'missing.jsonl'}: no such file",
        "--model",
        model,
        "--fit",
        tmp_path / "missing.jsonl",
        "--output",
        out,
    )
    bad = tmp_path / "bad.jsonl"
    bad.write_text(good.read_text().splitlines()[0] + "\n{not json\n")
    refused(f"{bad}:2", "--model", model, "--fit", bad, "--output", out)
    unlabelled = write_records(tmp_path / "unlabelled.jsonl", [{**r, "label": None} for r in toy_records(3)])
    refused("none of the 3 rows has a label", "--model", model, "--fit", unlabelled, "--output", out)
    refused("--api-key-env goes with --server", "--model", model, "--api-key-env", "KEY", "--output", out)
    refused(
        "BERTJUDGE_TEST_UNSET_KEY: that environment variable is not set",
        "--model",
        "m",
        "--server",
        "http://127.0.0.1:9/v1",
        "--api-key-env",
        "BERTJUDGE_TEST_UNSET_KEY",
        "--output",
        out,
    )
    assert not out.exists() and not any(model.iterdir())
