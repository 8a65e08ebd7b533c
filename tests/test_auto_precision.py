"""Fast by default: a trained judge scores in ``auto`` unless a precision is given. The mode is the first that the
hardware makes faster (``inference.auto_candidates``) whose verdicts agree with fp32 on the built-in check set, else
fp32; decided once per judge, the same for every entry point and every load, never by a time measured; said in one
line; part of the fingerprint, so that a resumed run never mixes modes. ``fp32`` gives the exact fp32 scores.

The candidates are set here (bf16 runs on any CPU, with or without the instructions that make it fast), so that
these tests check the same thing on every machine."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
import torch
from cli_run import evaluate

from bertjudge.cli.main import main
from bertjudge.core.records import RecordError, read_records, write_records
from bertjudge.data.sources import load_source
from bertjudge.evaluation.scoring import judge_fingerprint, score_file
from bertjudge.judges import base, inference
from bertjudge.judges.encoder import EncoderJudge
from bertjudge.judges.generative import GenerativeJudge
from bertjudge.judges.inference import CHECK_ROWS, InferenceEngine, check_set
from bertjudge.judges.interface import BaseJudge
from bertjudge.judges.loading import Judge, set_precision

LINE = re.compile(r"^bertjudge: precision auto -> (\w+) for (\S+) \((.*)\)$")


@pytest.fixture(autouse=True)
def each_process_anew(monkeypatch):
    """A choice made by another test (or another load in this one) is not reused: each load decides as a new
    process would; and bf16 is auto's candidate whatever this CPU has."""
    monkeypatch.setattr(base, "_CHOSEN", {})
    monkeypatch.setattr(inference, "auto_candidates", lambda device: ("bf16",))


def said(err: str) -> list[tuple[str, str, str]]:
    """The lines auto wrote: (mode, judge, why)."""
    return [m.groups() for line in err.splitlines() if (m := LINE.match(line))]


def make_judge(backbone: str, **kwargs) -> EncoderJudge:
    """A tiny judge with random weights large enough that its scores differ from row to row."""
    judge = EncoderJudge(backbone=backbone, **kwargs)
    torch.manual_seed(1)
    with torch.no_grad():
        for weight in judge.model.parameters():
            if weight.ndim == 2:
                weight.normal_(std=0.3)
    judge.provenance = {"name": "tiny"}
    return judge.eval()


@pytest.fixture(scope="module")
def folder(tiny_backbone, tmp_path_factory):
    return make_judge(tiny_backbone).export(tmp_path_factory.mktemp("auto") / "tiny")


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """Rows as a user writes them: other rows than the check set's, in a file."""
    rows = load_source("embedded:test?n=40")
    bare = [{k: r[k] for k in ("id", "question", "candidate", "references", "label", "category")} for r in rows]
    return write_records(tmp_path_factory.mktemp("rows") / "rows.jsonl", bare)


def numbers(checks) -> list[tuple]:
    """auto's checks, all but the seconds each took."""
    return [(c.precision, c.agreement, c.max_score_diff, c.ok) for c in checks]


def fp32_scores(judge, records, batch_size=32):
    """The scores of the fp32 engine, as every judge gave them before auto."""
    logits = InferenceEngine(judge, "fp32", judge.default_token_budget(batch_size)).logits(records)
    return judge.probabilities(torch.from_numpy(logits)).numpy()


def test_the_candidates_are_what_the_hardware_makes_faster_and_never_int8_or_onnx(monkeypatch):
    monkeypatch.undo()  # the real auto_candidates
    for has, expected in ((True, ("bf16",)), (False, ())):
        monkeypatch.setattr(inference, "cpu_has_bf16", lambda has=has: has)
        assert inference.auto_candidates("cpu") == expected
    assert inference.auto_candidates("meta") == ()
    monkeypatch.undo()
    assert inference.auto_candidates("cpu") == (("bf16",) if inference.cpu_has_bf16() else ())
    assert base.JudgeModule.precision == "auto" and GenerativeJudge.precision == "fp32"  # an LLM's check: too dear


def test_without_a_faster_mode_auto_is_fp32_without_a_check(folder, data, monkeypatch, capsys):
    monkeypatch.setattr(inference, "auto_candidates", lambda device: ())
    judge = Judge.load(str(folder))
    records = read_records(data)
    scores = judge.score_records(records)
    assert judge.resolved_precision() == "fp32" and judge.set_precision("auto") == []
    np.testing.assert_array_equal(scores, fp32_scores(judge, records))  # fp32's scores, bit for bit
    ((mode, name, why),) = said(capsys.readouterr().err)
    assert (mode, name) == ("fp32", "tiny") and why.startswith("no faster mode on this machine")


def test_auto_decides_once_on_the_check_set_whatever_is_scored_first_and_says_so(folder, data, capsys):
    records = read_records(data)
    first = Judge.load(str(folder))
    a = first.score_records(records[:3])  # a few rows first...
    again = first.score_records(records)
    assert first.resolved_precision() == "bf16"  # this judge's bf16 agrees with fp32 on the check set
    ((mode, name, why),) = said(capsys.readouterr().err)  # said once, for as many calls
    assert (mode, name) == ("bf16", "tiny")
    assert why.startswith(f"verdicts agree 100.00% with fp32 on {CHECK_ROWS} rows, max |dP| 0.")
    np.testing.assert_array_equal(a, first.score_records(records[:3]))
    base._CHOSEN.clear()  # as a new process would
    second = Judge.load(str(folder))
    b = second.score_records(records)  # ...or all of them first: the same mode, the same scores
    assert second.resolved_precision() == "bf16" and len(said(capsys.readouterr().err)) == 1
    np.testing.assert_array_equal(again, b)
    assert numbers(second.set_precision("auto")) == numbers(first.set_precision("auto"))  # number for number
    third = Judge.load(str(folder))  # in the same process: the choice made for this content is reused, unsaid
    np.testing.assert_array_equal(third.score_records(records), b)
    assert third.resolved_precision() == "bf16" and said(capsys.readouterr().err) == []
    fp32 = fp32_scores(first, records)
    assert 0 < np.max(np.abs(b - fp32)) <= inference.SCORE_TOLERANCE["bf16"]  # bf16 ran, close to fp32


def test_the_time_a_mode_took_never_decides(folder, monkeypatch):
    real = inference._compare

    def slow_bf16(judge, records, precision, *args):
        check, probs = real(judge, records, precision, *args)
        check.seconds = 1e6 if precision == "bf16" else check.seconds  # as on a machine busy at that moment
        return check, probs

    monkeypatch.setattr(inference, "_compare", slow_bf16)
    judge = Judge.load(str(folder))
    assert judge.resolved_precision() == "bf16"
    assert [c.seconds for c in judge.set_precision("auto")][-1] == 1e6


def test_explicit_fp32_gives_the_fp32_scores_with_no_check(folder, data, capsys):
    records = read_records(data)
    judge = Judge.load(str(folder))
    assert set_precision(judge, "fp32") == {"tiny": []}
    scores = judge.score_records(records)
    np.testing.assert_array_equal(scores, fp32_scores(judge, records))
    assert judge.fingerprint()["precision"] == "fp32" and said(capsys.readouterr().err) == []
    assert main(["judge", "--judge", str(folder), "--input", str(data), "--output", str(data.parent / "fp32.jsonl"),
                 "--precision", "fp32", "--no-progress"]) == 0  # fmt: skip
    np.testing.assert_allclose([r["score"] for r in read_records(data.parent / "fp32.jsonl")], scores, atol=1e-6)
    assert said(capsys.readouterr().err) == []


def test_a_judge_whose_bf16_flips_a_verdict_falls_back_to_fp32(folder, data, capsys):
    """The threshold placed between a check row's fp32 and bf16 scores: bf16 flips that verdict, auto refuses it."""
    records = read_records(data)
    judge = Judge.load(str(folder))
    assert judge.resolved_precision() == "bf16"
    check = check_set()
    p32 = judge.probabilities(torch.from_numpy(InferenceEngine(judge, "fp32").logits(check))).numpy()
    p16 = judge.probabilities(torch.from_numpy(InferenceEngine(judge, "bf16").logits(check))).numpy()
    i = int(np.argmax(np.abs(p16 - p32)))
    judge.threshold = float((p16[i] + p32[i]) / 2)  # a change of threshold: auto decides again
    assert judge.resolved_precision() == "fp32"
    np.testing.assert_array_equal(judge.score_records(records), fp32_scores(judge, records))
    _, (mode, name, why) = said(capsys.readouterr().err)
    assert mode == "fp32" and why.startswith(f"bf16 refused: verdicts agree {1 - 1 / CHECK_ROWS:.2%} with fp32")


def test_scores_beyond_the_tolerance_fall_back_to_fp32(folder, monkeypatch, capsys):
    monkeypatch.setitem(inference.SCORE_TOLERANCE, "bf16", 0.0)  # a test-only tolerance: any difference refuses
    judge = Judge.load(str(folder))
    assert judge.resolved_precision() == "fp32"
    ((mode, _, why),) = said(capsys.readouterr().err)
    assert mode == "fp32" and re.search(r"max \|dP\| 0\.\d+ \(at most 0\)$", why.split(";")[0])


def test_new_weights_are_checked_again(folder):
    judge = Judge.load(str(folder))
    judge.resolved_precision()
    before = judge._auto
    with torch.no_grad():
        judge.model.classifier.bias += 3.0  # in place, as a training step would
    judge.resolved_precision()
    assert judge._auto is not before and judge._auto[0] != before[0]


def test_every_entry_point_gives_one_answer_under_the_default(folder, data, tmp_path):
    """Judge.score, score_records, details, the judge command and evaluate (each a load of its own, deciding as a
    new process would) score the same rows alike, in the mode auto took."""
    records = read_records(data)
    judge = Judge.load(str(folder))
    from_lists = judge.score(
        [r["question"] for r in records],
        [r["candidate"] for r in records],
        [r["references"] for r in records],
        categories=[r["category"] for r in records],
    )
    assert judge.resolved_precision() == "bf16"
    from_records = judge.score_records(records)
    from_details = [d["score"] for d in judge.details(records)]
    base._CHOSEN.clear()
    assert main(["judge", "--judge", str(folder), "--input", str(data), "--output", str(tmp_path / "s.jsonl")]) == 0
    scored = [r["score"] for r in read_records(tmp_path / "s.jsonl")]
    base._CHOSEN.clear()
    evaluate(data, [str(folder)], tmp_path / "eval", "--bootstrap", "10")
    lines = (tmp_path / "eval" / "scores" / "tiny.jsonl").read_text().splitlines()
    evaluated = [json.loads(line)["score"] for line in lines]
    for other in (from_records, from_details, scored, evaluated):
        np.testing.assert_allclose(other, from_lists, atol=1e-6)
    assert np.max(np.abs(np.asarray(from_lists) - fp32_scores(judge, records))) > 1e-6  # not fp32's


def test_a_resume_refuses_rows_scored_in_another_mode(folder, data, tmp_path, monkeypatch):
    class StopsAfter(BaseJudge):
        """The judge, interrupted after one chunk (as by Ctrl-C)."""

        def __init__(self, judge):
            self.judge, self.threshold, self.calls = judge, judge.threshold, 1

        name = property(lambda self: self.judge.name)
        fingerprint = property(lambda self: self.judge.fingerprint)

        def score_records(self, records, batch_size=32):
            if not self.calls:
                raise KeyboardInterrupt
            self.calls -= 1
            return self.judge.score_records(records, batch_size)

    out = tmp_path / "out.jsonl"
    fp32 = Judge.load(str(folder))
    fp32.set_precision("fp32")
    with pytest.raises(KeyboardInterrupt):
        score_file(StopsAfter(fp32), data, out, chunk_size=8, progress=False)
    auto = Judge.load(str(folder))
    assert judge_fingerprint(auto)["precision"] == "bf16"
    refused = r"the judge changed since these rows were scored \(.*: precision differ\); scored in fp32, now bf16: "
    with pytest.raises(RecordError, match=refused + r"--precision fp32 resumes them; rerun with --restart"):
        score_file(auto, data, out, chunk_size=8, progress=False)
    monkeypatch.setattr(inference, "auto_candidates", lambda device: ())  # auto takes fp32: the same scores
    base._CHOSEN.clear()
    summary = score_file(Judge.load(str(folder)), data, out, chunk_size=8, progress=False)
    assert summary.resumed == 8 and summary.rows == len(read_records(data))


def test_each_trained_part_of_a_routing_judge_chooses(folder, tiny_backbone, tmp_path, capsys):
    other = make_judge(tiny_backbone, bias=0.3)
    other.provenance = {"name": "other"}
    other.export(tmp_path / "other")
    cascade = Judge.load(f"cascade:{folder},{tmp_path / 'other'}")
    fingerprint = judge_fingerprint(cascade)  # each trained part chose (the rules have no precision)
    modes = {name: mode for mode, name, _ in said(capsys.readouterr().err)}
    assert fingerprint["model/precision"] == modes["tiny"] == "bf16"
    assert fingerprint["expensive/precision"] == modes["other"] and len(modes) == 2
    assert set_precision(cascade, "fp32") == {"tiny": [], "other": []}
    assert {k: v for k, v in judge_fingerprint(cascade).items() if k.endswith("precision")} == {
        "model/precision": "fp32",
        "expensive/precision": "fp32",
    }
