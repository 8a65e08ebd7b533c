import json

import numpy as np
import pytest

from bertjudge.cli.main import main
from bertjudge.core.records import RecordError, read_records
from bertjudge.evaluation.scoring import score_file
from bertjudge.judges.encoder import EncoderJudge
from bertjudge.judges.interface import BaseJudge


@pytest.fixture(scope="module")
def judge(tiny_backbone, tmp_path_factory):
    folder = tmp_path_factory.mktemp("judge") / "tiny"
    EncoderJudge(backbone=tiny_backbone).export(folder)
    from bertjudge.judges.loading import Judge

    return Judge.load(str(folder)), folder


def write_input(path, n=10):
    with open(path, "w") as handle:  # only question, candidate, reference — as users write them
        for i in range(n):
            handle.write(
                json.dumps(
                    {
                        "question": f"What is {i}+1?",
                        "candidate": f"Final answer: {i + 1}",
                        "reference": str(i + 1),
                        "note": i,
                    }
                )
                + "\n"
            )
    return path


class StopsAfter(BaseJudge):
    """The real judge, interrupted (as by Ctrl-C: a KeyboardInterrupt) after ``calls`` chunks."""

    def __init__(self, judge, calls):
        self.judge, self.calls = judge, calls
        self.threshold = judge.threshold
        self.rows_scored = 0

    @property
    def name(self):
        return self.judge.name

    def fingerprint(self):
        return self.judge.fingerprint()

    def score_records(self, records, batch_size=32):
        if self.calls == 0:
            raise KeyboardInterrupt
        self.calls -= 1
        self.rows_scored += len(records)
        return self.judge.score_records(records, batch_size)


def test_score_file_keeps_fields_and_adds_scores(judge, tmp_path):
    judge, _ = judge
    summary = score_file(judge, write_input(tmp_path / "in.jsonl"), tmp_path / "out.jsonl", progress=False)
    assert (summary.rows, summary.resumed, summary.failed) == (10, 0, 0)
    rows = [json.loads(line) for line in summary.output.read_text().splitlines()]
    assert [r["note"] for r in rows] == list(range(10)) and rows[0]["reference"] == "1"
    for row in rows:
        assert {"id", "score", "verdict", "judge", "input_hash"} <= set(row)
        assert 0 <= row["score"] <= 1 and row["verdict"] == (row["score"] >= judge.threshold)
    assert not list(tmp_path.glob("*.partial.jsonl"))


def test_interrupted_run_resumes_without_scoring_twice(judge, tmp_path):
    judge, _ = judge
    src = write_input(tmp_path / "in.jsonl", n=10)
    first = StopsAfter(judge, calls=2)
    with pytest.raises(KeyboardInterrupt):
        score_file(first, src, tmp_path / "out.jsonl", chunk_size=3, progress=False)
    assert not (tmp_path / "out.jsonl").exists()  # nothing final until the whole file is scored
    assert len((tmp_path / "out.jsonl.partial.jsonl").read_text().splitlines()) == 1 + 6  # a header, 6 rows
    second = StopsAfter(judge, calls=10)
    assert score_file(second, src, tmp_path / "out.jsonl", chunk_size=3, progress=False).resumed == 6
    assert first.rows_scored + second.rows_scored == 10
    resumed = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    fresh = [
        json.loads(line)
        for line in score_file(judge, src, tmp_path / "fresh.jsonl", progress=False).output.read_text().splitlines()
    ]
    # chunking changes batch make-up, which may move a score in its last bit: compare scores closely
    assert [r["score"] for r in resumed] == pytest.approx([r["score"] for r in fresh], abs=1e-6)
    drop = {"score", "verdict"}
    assert [{k: v for k, v in r.items() if k not in drop} for r in resumed] == [
        {k: v for k, v in r.items() if k not in drop} for r in fresh
    ]


def test_a_partial_file_from_other_input_is_refused(judge, tmp_path):
    judge, _ = judge
    src = write_input(tmp_path / "in.jsonl", n=4)
    with pytest.raises(KeyboardInterrupt):
        score_file(StopsAfter(judge, calls=1), src, tmp_path / "out.jsonl", chunk_size=2, progress=False)
    partial = tmp_path / "out.jsonl.partial.jsonl"
    header, line = partial.read_text().splitlines()[:2]
    partial.write_text(header + "\n" + json.dumps({**json.loads(line), "row_hash": "0" * 32}) + "\n")
    before = partial.read_bytes()
    with pytest.raises(
        RecordError,
        match=r"out\.jsonl\.partial\.jsonl:2: row '.*' was scored from other input "
        r"\(.*in\.jsonl:1: the row changed\); rerun with --restart",
    ):
        score_file(judge, src, tmp_path / "out.jsonl", progress=False)
    assert partial.read_bytes() == before and not (tmp_path / "out.jsonl").exists()


def test_bad_input_writes_nothing(judge, tmp_path):
    judge, _ = judge
    src = tmp_path / "bad.jsonl"
    src.write_text('{"question": "q", "candidate": "a", "reference": "a"}\n{"question": "q", "candidate": 1}\n')
    with pytest.raises(RecordError, match=r"bad\.jsonl:2"):
        score_file(judge, src, tmp_path / "out.jsonl", progress=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.jsonl"]


def test_command_line_writes_parquet_and_reports_errors(judge, tmp_path, capsys):
    _, folder = judge
    src = write_input(tmp_path / "in.jsonl", n=3)
    assert (
        main(
            [
                "judge",
                "--judge",
                str(folder),
                "--input",
                str(src),
                "--output",
                str(tmp_path / "o.parquet"),
                "--no-progress",
            ]
        )
        == 0
    )
    rows = read_records(tmp_path / "o.parquet")
    assert len(rows) == 3 and np.all([0 <= r["score"] <= 1 for r in rows])
    assert (
        main(["judge", "--judge", str(tmp_path / "nope"), "--input", str(src), "--output", str(tmp_path / "x.jsonl")])
        == 2
    )
    assert "not a judge folder" in capsys.readouterr().err


def test_predict_writes_a_score_file(tiny_backbone, tmp_path):
    from bertjudge.cli.train import run_lightning_cli

    src = write_input(tmp_path / "in.jsonl", n=7)
    out = tmp_path / "pred.jsonl"
    cli = run_lightning_cli(
        [
            "predict",
            "--model=bertjudge.judges.encoder.EncoderJudge",
            f"--model.backbone={tiny_backbone}",
            f"--data.predict=[{src}]",
            "--data.eval_batch_size=3",
            "--trainer.logger=false",
            f"--trainer.default_root_dir={tmp_path}",
            "--trainer.callbacks+=bertjudge.evaluation.predict_writer.ScoreFileWriter",
            f"--trainer.callbacks.output={out}",
        ]
    )
    rows = read_records(out)
    cli.model.set_precision("fp32")  # predict scored in the trainer's precision (32-true), not the engine's auto
    expected = cli.model.score_records(cli.datamodule.records["predict"])
    assert [r["id"] for r in rows] == [r["id"] for r in cli.datamodule.records["predict"]]
    np.testing.assert_allclose([r["score"] for r in rows], expected, rtol=1e-5)


def test_a_judgment_the_judge_could_not_give_is_null_not_wrong():
    from bertjudge.judges.interface import verdict_fields

    assert verdict_fields(float("nan"), 0.5) == {"score": None, "verdict": None, "unparsed": True}
    assert verdict_fields(0.7, 0.5) == {"score": 0.7, "verdict": True}
    assert verdict_fields(0.2, 0.5)["verdict"] is False


def test_a_row_without_a_category_gets_one_answer_from_every_entry_point(judge, tmp_path):
    """Judge.score, score_records, the judge command and evaluate read a row without a category the same way: the
    category its question and references show (core.categories.infer_category), written beside its score."""
    from cli_run import evaluate

    from bertjudge.core.categories import infer_category
    from bertjudge.data.sources import load_source

    judge, folder = judge
    # fp32 everywhere: this test is about the category each entry point reads; that every entry point scores alike
    # in the default precision (auto, bf16 where the CPU has it) is tests/test_auto_precision.py's
    judge.set_precision("fp32")
    rows = load_source("embedded:test?n=400")
    bare = [{k: r[k] for k in ("id", "question", "candidate", "references", "label")} for r in rows]
    src = tmp_path / "bare.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in bare))
    from_lists = judge.score(
        [r["question"] for r in bare], [r["candidate"] for r in bare], [r["references"] for r in bare]
    )
    from_records = judge.score_records(read_records(src))
    out = tmp_path / "s.jsonl"
    assert (
        main(["judge", "--judge", str(folder), "--input", str(src), "--output", str(out), "--precision", "fp32"]) == 0
    )
    scored = [json.loads(line) for line in out.read_text().splitlines()]
    evaluate(src, [str(folder)], tmp_path / "eval", "--bootstrap", "10", "--precision", "fp32")
    evaluated = [json.loads(line) for line in (tmp_path / "eval" / "scores" / "tiny.jsonl").read_text().splitlines()]
    np.testing.assert_allclose(from_lists, from_records, atol=1e-6)
    np.testing.assert_allclose([r["score"] for r in scored], from_records, atol=1e-6)
    np.testing.assert_allclose([r["score"] for r in evaluated], from_records, atol=1e-6)
    inferred = [infer_category(r["question"], r["references"]) for r in bare]
    assert [r["category"] for r in scored] == inferred  # the category it used, written
    given = judge.score_records(rows)  # with the corpus's own categories: the same wherever inference agrees
    same = np.array([i == r["category"] for i, r in zip(inferred, rows)])
    assert same.mean() > 0.9
    np.testing.assert_allclose(np.asarray(given)[same], np.asarray(from_records)[same], atol=1e-6)
