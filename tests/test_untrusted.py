"""Nothing wrong, nothing lost (issue 34): a row never kills a run, a resume never mixes old and new,
the output never overwrites the input, and a judge folder loads only if it is complete and safe.

Every case goes through the real ``judge`` command (or the library under it) with real judges: a tiny
random encoder judge exported to a folder, and ``BoxedIntJudge``, a rule judge saved as a folder that
fails, as judges do, on one odd row (Python refuses to read an integer of more than 4300 digits). Each
asserts the exit code, the one-line message naming the file and line (or part), and that no input or
earlier output was changed.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import signal
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml
from safetensors.torch import load_file, save_file

from bertjudge.cli.main import main
from bertjudge.core.hashing import hash_folder
from bertjudge.core.judge_file import JudgeFileError, read_judge_config, write_judge_config
from bertjudge.core.records import normalize, read_records, read_with_raw
from bertjudge.evaluation.scoring import judge_fingerprint, partial_path, score_file
from bertjudge.judges import kinds
from bertjudge.judges.encoder import EncoderJudge
from bertjudge.judges.interface import BaseJudge
from bertjudge.judges.loading import Judge
from bertjudge.zoo import registry as zoo

INTERRUPT_ENV = "BOXED_INT_INTERRUPT_AFTER_CALLS"
BIG = "7" * 5000  # more digits than Python reads as an int


@kinds.register  # a program's own judge kind: its folders load without trust_remote_code
class BoxedIntJudge(BaseJudge):
    """Correct when the integer in the candidate's ``\\boxed{}`` equals the reference's. A judge folder
    (``judge.json`` names this class). With ``BOXED_INT_INTERRUPT_AFTER_CALLS=N`` in the environment it
    sends itself SIGINT (a real Ctrl-C) in its call N+1."""

    name = "boxed-int"
    threshold = 0.5

    def __init__(self):
        self.calls = 0

    def score_records(self, records, batch_size=32, progress=False):
        self.calls += 1
        limit = os.environ.get(INTERRUPT_ENV)
        if limit is not None and self.calls > int(limit):
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)  # the KeyboardInterrupt is raised here
        scores = []
        for rec in records:
            found = re.search(r"\\boxed\{(\d+)\}", rec["candidate"])
            scores.append(float(found is not None and int(found.group(1)) == int(rec["references"][0])))
        return np.array(scores)

    def config(self):
        return {"class": f"{__name__}.BoxedIntJudge", "name": self.name}

    @classmethod
    def from_export(cls, folder, format=None):
        read_judge_config(folder)
        return cls()


def boxed_rows(n, bad=()):
    return [
        {
            "id": f"r{i}",
            "question": f"What is {i}*2?",
            "category": "open_math",
            "label": i % 3 != 0,
            "candidate": f"So it is \\boxed{{{BIG if i in bad else 2 * i + (i % 3 == 0)}}}.",
            "reference": str(2 * i),
            "meta": {"i": i},
            "note": i,
        }
        for i in range(n)
    ]


def expected_score(row):
    found = re.search(r"\\boxed\{(\d+)\}", row["candidate"]).group(1)
    return float(found == row["reference"])


UNSURE = [
    "I am not sure about this one",
    "Hard to say without more work",
    "It could be anything really",
    "No idea at all, sorry",
    "Perhaps something else entirely",
    "I would rather not guess here",
]


def unparsed_rows(n):
    """Multiple-choice rows whose answer the rules cannot find: a routing judge sends them to its model."""
    question = "Which colour is a clear sky?\nA. red\nB. blue\nC. green\nD. black"
    return [
        {
            "id": f"u{i}",
            "question": question,
            "category": "multiple_choice",
            "reference": "B",
            "candidate": UNSURE[i % len(UNSURE)] + ", really" * (i // len(UNSURE)),
        }
        for i in range(n)
    ]


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def snapshot(*roots):
    """Every file under ``roots`` with its bytes: what must not change."""
    files = {}
    for root in map(Path, roots):
        for path in [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file()):
            files[str(path)] = path.read_bytes()
    return files


def judge_cmd(capsys, *args):
    """Run ``python -m bertjudge judge ARGS --no-progress``: (exit code, stdout, the last stderr line)."""
    capsys.readouterr()
    code = main(["judge", *map(str, args), "--no-progress"])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    return code, out, lines[-1] if lines else ""


def rows_of(path):
    return [json.loads(line) for line in Path(path).read_text().splitlines()]


@pytest.fixture(scope="module")
def boxed(tmp_path_factory):
    folder = tmp_path_factory.mktemp("boxed") / "judge"
    write_judge_config(folder, BoxedIntJudge().config())
    return folder


@pytest.fixture(scope="module")
def encoder(tiny_backbone, tmp_path_factory):
    return EncoderJudge(backbone=tiny_backbone).export(tmp_path_factory.mktemp("encoder") / "judge")


@pytest.fixture
def encoder_copy(encoder, tmp_path):
    return Path(shutil.copytree(encoder, tmp_path / "judge"))


@pytest.fixture
def interrupted(boxed, tmp_path, capsys, monkeypatch):
    """An input of 300 rows and a run of it stopped by Ctrl-C after its first chunk (256 rows)."""
    src = write_jsonl(tmp_path / "in.jsonl", boxed_rows(300))
    out = tmp_path / "out.jsonl"
    monkeypatch.setenv(INTERRUPT_ENV, "1")
    code, _, err = judge_cmd(capsys, "--judge", boxed, "--input", src, "--output", out)
    monkeypatch.delenv(INTERRUPT_ENV)
    assert code == 130 and err == "bertjudge judge: interrupted"
    assert len(partial_path(out).read_text().splitlines()) == 1 + 256 and not out.exists()
    return src, out


# --- a row never kills a run ----------------------------------------------------------------------
def test_a_row_the_judge_fails_on_is_written_with_an_error_counted_and_exits_1(boxed, tmp_path, capsys):
    rows = boxed_rows(8, bad={3})
    src = write_jsonl(tmp_path / "in.jsonl", rows)
    before = snapshot(src)
    code, out, err = judge_cmd(capsys, "--judge", boxed, "--input", src, "--output", tmp_path / "out.jsonl")
    assert code == 1 and f"wrote {tmp_path / 'out.jsonl'} (8 rows; 1 failed)" in out
    assert err.startswith(
        f"bertjudge judge: 1 of 8 rows could not be scored (score null, with an 'error'); "
        f"first: {src}:4: row 'r3': ValueError: Exceeds the limit (4300 digits)"
    )
    scored = rows_of(tmp_path / "out.jsonl")
    assert [r["id"] for r in scored] == [r["id"] for r in rows]
    bad = scored[3]
    assert bad["score"] is None and bad["verdict"] is None and bad["error"].startswith("ValueError: Exceeds")
    assert "\n" not in bad["error"]
    for row, original in zip(scored, rows):
        assert {k: row[k] for k in original} == original  # every input field kept
        if row["id"] != "r3":
            assert row["score"] == expected_score(original) and "error" not in row
    assert snapshot(src) == before and not partial_path(tmp_path / "out.jsonl").exists()


def test_a_failing_batch_is_scored_again_row_by_row_to_isolate_the_bad_row(boxed, tmp_path):
    rows = boxed_rows(12, bad={7})
    src = write_jsonl(tmp_path / "in.jsonl", rows)
    judge = Judge.load(str(boxed))
    summary = score_file(judge, src, tmp_path / "out.jsonl", batch_size=3, chunk_size=5, progress=False)
    assert (summary.rows, summary.failed, summary.resumed) == (12, 1, 0)
    assert summary.first_failure.startswith(f"{src}:8: row 'r7': ValueError")
    # chunks of 5 (one call), then batches of 3, then rows: 3 calls for the chunks, 2 batches, 3 rows
    assert judge.calls == 3 + 2 + 3
    scored = rows_of(tmp_path / "out.jsonl")
    assert [r["score"] for r in scored] == [None if i == 7 else expected_score(r) for i, r in enumerate(rows)]


def test_strict_stops_at_the_first_failing_row_and_a_rerun_resumes(boxed, tmp_path, capsys):
    rows = boxed_rows(6, bad={2, 4})
    src = write_jsonl(tmp_path / "in.jsonl", rows)
    out = tmp_path / "out.jsonl"
    code, _, err = judge_cmd(capsys, "--judge", boxed, "--input", src, "--output", out, "--strict")
    assert code == 1 and err.startswith(
        f"bertjudge judge: {src}:3: row 'r2' could not be scored by boxed-int (ValueError: Exceeds the limit"
    )
    assert f"stopped (--strict); the rows scored before it are kept in {partial_path(out)}" in err
    assert not out.exists()
    kept = rows_of(partial_path(out))
    assert (
        kept[0]["bertjudge"] == "bertjudge partial file"
        and kept[0]["kind"] == "score"
        and [r["row"]["id"] for r in kept[1:]] == ["r0", "r1"]
    )
    code, stdout, err = judge_cmd(capsys, "--judge", boxed, "--input", src, "--output", out)
    assert code == 1 and "(6 rows, 2 from the partial file of an earlier run; 2 failed)" in stdout
    assert err.startswith("bertjudge judge: 2 of 6 rows could not be scored") and f"first: {src}:3: row 'r2'" in err
    assert [r["error"] is not None for r in rows_of(out) if "error" in r] == [True, True]


# --- resume that cannot mix -----------------------------------------------------------------------
def edit(rows, how):
    rows = [dict(r) for r in rows]
    if how == "removed":
        del rows[5]
    else:
        key, value = how
        rows[5][key] = value
    return rows


@pytest.mark.parametrize(
    "how, named",
    [
        (("category", "other"), "field(s) 'category' changed"),
        (("label", False), "field(s) 'label' changed"),
        (("meta", {"i": 5, "variant": "new"}), "field(s) 'meta' changed"),
        (("note", "edited"), "field(s) 'note' changed"),
        (("question", "What is 5 times 2?"), "field(s) 'question' changed"),
        ("removed", "row 'r5' is no longer in the input"),
    ],
)
def test_a_row_edited_in_any_field_refuses_the_resume_until_restart(interrupted, boxed, how, named, capsys):
    src, out = interrupted
    write_jsonl(src, edit([json.loads(line) for line in src.read_text().splitlines()], how))
    before = snapshot(src.parent)
    code, _, err = judge_cmd(capsys, "--judge", boxed, "--input", src, "--output", out)
    assert code == 2 and err.startswith(f"bertjudge judge: {partial_path(out)}:7: ")
    assert named in err and err.endswith("rerun with --restart to score every row again")
    assert snapshot(src.parent) == before  # neither the input nor the partial file changed
    code, stdout, _ = judge_cmd(capsys, "--judge", boxed, "--input", src, "--output", out, "--restart")
    assert code == 0 and "from the partial file" not in stdout and not partial_path(out).exists()
    assert [{k: r[k] for k in raw} for r, raw in zip(rows_of(out), rows_of(src))] == rows_of(src)


def recalibrate(folder):
    config = json.loads((folder / "judge.json").read_text())
    (folder / "judge.json").write_text(json.dumps({**config, "temperature": 2.5}))


def new_weights(folder):
    state = load_file(folder / "model.safetensors")
    state["classifier.weight"] = state["classifier.weight"] * 3
    save_file(state, folder / "model.safetensors", metadata={"format": "pt"})


class Interrupting(BaseJudge):
    """A loaded judge stopped by a KeyboardInterrupt (Ctrl-C) in its second call."""

    def __init__(self, judge):
        self.judge, self.calls = judge, 0
        self.threshold = judge.threshold

    @property
    def name(self):
        return self.judge.name

    def fingerprint(self):
        return judge_fingerprint(self.judge)

    def score_records(self, records, batch_size=32, progress=False):
        self.calls += 1
        if self.calls > 1:
            raise KeyboardInterrupt
        return self.judge.score_records(records, batch_size)


@pytest.mark.parametrize(
    "change, spec, differ",
    [
        (recalibrate, "{folder}", "config, judge.json differ"),  # the same name, recalibrated
        (new_weights, "{folder}", "model.safetensors differ"),
        (recalibrate, "hybrid:{folder}", "model/config, model/judge.json differ"),
    ],
)
def test_a_changed_judge_refuses_the_resume_until_restart(encoder_copy, tmp_path, capsys, change, spec, differ):
    spec = spec.format(folder=encoder_copy)
    src = write_jsonl(tmp_path / "in.jsonl", unparsed_rows(10))
    assert all(row["unparsed"] for row in Judge.load("regex").details(read_records(src)))
    out = tmp_path / "out.jsonl"
    judge = Judge.load(spec)
    if spec.startswith("hybrid:"):  # a routing judge: stopped inside its model stage
        judge.model = Interrupting(judge.model)
        with pytest.raises(KeyboardInterrupt):
            score_file(judge, src, out, chunk_size=4, progress=False)
    else:
        with pytest.raises(KeyboardInterrupt):
            score_file(Interrupting(judge), src, out, chunk_size=4, progress=False)
    assert len(partial_path(out).read_text().splitlines()) == 1 + 4
    change(encoder_copy)
    before = snapshot(tmp_path)
    code, _, err = judge_cmd(capsys, "--judge", spec, "--input", src, "--output", out)
    assert code == 2 and err.startswith(
        f"bertjudge judge: {partial_path(out)}: the judge changed since these rows "
        f"were scored (judge {judge.name!r}: {differ}); rerun with --restart"
    )
    assert snapshot(tmp_path) == before
    code, _, _ = judge_cmd(capsys, "--judge", spec, "--input", src, "--output", out, "--restart")
    assert code == 0
    fresh = Judge.load(spec).score_records(read_records(src))
    np.testing.assert_allclose([r["score"] for r in rows_of(out)], fresh, atol=1e-6)


def test_another_judge_of_another_kind_refuses_the_resume(tmp_path, capsys):
    rows = [{"id": f"r{i}", "candidate": f"Final answer: {i}", "reference": str(i)} for i in range(6)]
    src = write_jsonl(tmp_path / "in.jsonl", rows)
    out = tmp_path / "out.jsonl"
    with pytest.raises(KeyboardInterrupt):
        score_file(Interrupting(Judge.load("regex")), src, out, chunk_size=2, progress=False)
    before = snapshot(tmp_path)
    code, _, err = judge_cmd(capsys, "--judge", "contains", "--input", src, "--output", out)
    assert (
        code == 2
        and "the judge changed since these rows were scored (judge 'regex', now 'contains': class, name, config differ)"
        in err
        and str(partial_path(out)) in err
    )
    assert snapshot(tmp_path) == before


def test_a_last_line_cut_by_kill_9_is_done_again(interrupted, boxed, tmp_path, capsys):
    src, out = interrupted
    partial = partial_path(out)
    last = partial.read_text().splitlines()[-1]
    with open(partial, "a") as handle:  # kill -9 in the middle of a write
        handle.write(last.replace('"r255"', '"r256"')[: len(last) // 2])
    code, stdout, _ = judge_cmd(capsys, "--judge", boxed, "--input", src, "--output", out)
    assert code == 0 and "(300 rows, 256 from the partial file of an earlier run; 0 failed)" in stdout
    assert [r["id"] for r in rows_of(out)] == [r["id"] for r in rows_of(src)]  # none lost, none twice
    assert [r["score"] for r in rows_of(out)] == [expected_score(r) for r in rows_of(src)]


def test_garbage_in_the_middle_of_the_partial_file_is_an_error_naming_its_line(interrupted, boxed, capsys):
    src, out = interrupted
    partial = partial_path(out)
    lines = partial.read_text().splitlines()
    lines[9] = lines[9][:40] + "\x00garbage"
    partial.write_text("\n".join(lines) + "\n")
    before = snapshot(src.parent)
    code, _, err = judge_cmd(capsys, "--judge", boxed, "--input", src, "--output", out)
    assert code == 2 and err.startswith(f"bertjudge judge: {partial}:10: invalid JSON")
    assert "corrupted" in err and snapshot(src.parent) == before
    partial.write_text(lines[0] + "\n" + json.dumps({"id": "r0", "score": 1.0}) + "\n")
    code, _, err = judge_cmd(capsys, "--judge", boxed, "--input", src, "--output", out)
    assert code == 2 and err == (
        f"bertjudge judge: {partial}:2: not a row of a partial score file (the partial file is corrupted); "
        "rerun with --restart to score every row again"
    )


def test_a_partial_file_without_a_header_is_refused(interrupted, boxed, capsys):
    src, out = interrupted
    partial = partial_path(out)
    partial.write_text(
        "".join(
            json.dumps(json.loads(line)["row"]) + "\n"  # as an older version wrote it
            for line in partial.read_text().splitlines()[1:]
        )
    )
    before = snapshot(src.parent)
    code, _, err = judge_cmd(capsys, "--judge", boxed, "--input", src, "--output", out)
    assert code == 2 and err == (
        f"bertjudge judge: {partial}:1: not a partial score file of this version of "
        "bertjudge (no header line); rerun with --restart to score every row again"
    )
    assert snapshot(src.parent) == before


def test_ctrl_c_leaves_whole_lines_and_a_rerun_gives_the_uninterrupted_result(interrupted, boxed, tmp_path, capsys):
    src, out = interrupted
    data = partial_path(out).read_bytes()
    assert data.endswith(b"\n") and all(json.loads(line) for line in data.splitlines())  # whole lines only
    code, stdout, _ = judge_cmd(capsys, "--judge", boxed, "--input", src, "--output", out)
    assert code == 0 and "(300 rows, 256 from the partial file of an earlier run; 0 failed)" in stdout
    code, _, _ = judge_cmd(capsys, "--judge", boxed, "--input", src, "--output", tmp_path / "fresh.jsonl")
    assert code == 0 and out.read_bytes() == (tmp_path / "fresh.jsonl").read_bytes()


@pytest.mark.slow  # three runs of the command line (~25 s)
def test_kill_9_during_judge_then_the_same_command_loses_and_repeats_no_row(tmp_path):
    import subprocess
    import sys

    rows = [
        {
            "id": f"m{i}",
            "category": "open_math",
            "question": f"What is {i}/7?",
            "candidate": f"We get $\\frac{{{i}}}{{7}}$, so the answer is \\boxed{{\\frac{{{i}}}{{7}}}}.",
            "reference": f"{i}/7" if i % 4 else f"{i + 1}/7",
        }
        for i in range(600)
    ]
    src = write_jsonl(tmp_path / "in.jsonl", rows)
    command = [sys.executable, "-m", "bertjudge", "judge", "--judge", "regex", "--input", str(src), "--no-progress"]
    out = tmp_path / "out.jsonl"
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    proc = subprocess.Popen([*command, "--output", str(out)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.time() + 120
    while time.time() < deadline and proc.poll() is None:
        partial = partial_path(out)
        if partial.exists() and partial.read_bytes().count(b"\n") >= 2:
            break
        time.sleep(0.05)
    proc.kill()  # SIGKILL: no handler runs
    proc.communicate()
    assert proc.returncode == -signal.SIGKILL and not out.exists()
    done = subprocess.run([*command, "--output", str(out)], env=env, capture_output=True, text=True)
    assert done.returncode == 0 and "from the partial file of an earlier run; 0 failed)" in done.stdout
    fresh = subprocess.run([*command, "--output", str(tmp_path / "fresh.jsonl")], env=env, capture_output=True)
    assert fresh.returncode == 0
    assert [r["id"] for r in rows_of(out)] == [r["id"] for r in rows]
    assert out.read_bytes() == (tmp_path / "fresh.jsonl").read_bytes()


def test_a_second_run_on_the_same_partial_file_is_refused(boxed, tmp_path, capsys):
    src = write_jsonl(tmp_path / "in.jsonl", boxed_rows(4))
    out = tmp_path / "out.jsonl"
    with open(partial_path(out), "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)  # a run in progress
        code, _, err = judge_cmd(capsys, "--judge", boxed, "--input", src, "--output", out)
    assert code == 1 and err.startswith(f"bertjudge judge: {partial_path(out)}: another run is writing")
    assert not out.exists()


# --- output safety ----------------------------------------------------------------------------------
@pytest.mark.parametrize("how", ["same path", "another spelling", "symbolic link", "hard link"])
def test_output_that_is_the_input_is_refused_before_anything_is_written(boxed, tmp_path, capsys, monkeypatch, how):
    src = write_jsonl(tmp_path / "in.jsonl", boxed_rows(3))
    monkeypatch.chdir(tmp_path)
    output = {
        "same path": src,
        "another spelling": Path("sub/../in.jsonl"),
        "symbolic link": tmp_path / "link.jsonl",
        "hard link": tmp_path / "hard.jsonl",
    }[how]
    (tmp_path / "sub").mkdir()
    if how == "symbolic link":
        output.symlink_to(src)
    if how == "hard link":
        os.link(src, output)
    before = snapshot(tmp_path)
    code, _, err = judge_cmd(capsys, "--judge", boxed, "--input", src, "--output", output)
    assert code == 2 and err == (
        f"bertjudge judge: {output}: the output would overwrite the input file {src}; write the scores to another file"
    )
    assert snapshot(tmp_path) == before and not partial_path(output).exists()


def test_an_output_that_is_a_directory_is_refused_before_the_judge_is_loaded(tmp_path, capsys):
    src = write_jsonl(tmp_path / "in.jsonl", boxed_rows(3))
    (tmp_path / "out").mkdir()
    before = snapshot(tmp_path)
    code, _, err = judge_cmd(
        capsys, "--judge", tmp_path / "no-such-judge", "--input", src, "--output", tmp_path / "out"
    )
    assert code == 2 and err == (
        f"bertjudge judge: {tmp_path / 'out'}: is a directory; --output is the score file to write (.jsonl, .parquet, .csv)"
    )
    assert snapshot(tmp_path) == before and sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl", "out"]


def test_a_missing_input_is_refused_before_the_judge_is_loaded(tmp_path, capsys):
    code, _, err = judge_cmd(
        capsys,
        "--judge",
        tmp_path / "no-such-judge",
        "--input",
        tmp_path / "missing.jsonl",
        "--output",
        tmp_path / "out.jsonl",
    )
    assert code == 2 and err == f"bertjudge judge: {tmp_path / 'missing.jsonl'}: no such file"
    assert list(tmp_path.iterdir()) == []


def test_parquet_output_keeps_every_column_of_every_row_and_reads_back(boxed, tmp_path, capsys):
    rows = boxed_rows(5, bad={1})
    rows[2]["extra"] = {"source": "web", "scores": [1, 2]}  # only in this row, nested
    rows[3]["note"] = "three"  # a str where the other rows have an int
    del rows[4]["meta"]
    src = write_jsonl(tmp_path / "in.jsonl", rows)
    assert judge_cmd(capsys, "--judge", boxed, "--input", src, "--output", tmp_path / "out.jsonl")[0] == 1
    assert judge_cmd(capsys, "--judge", boxed, "--input", src, "--output", tmp_path / "out.parquet")[0] == 1
    jsonl = rows_of(tmp_path / "out.jsonl")
    parquet = [raw for raw, _ in read_with_raw(tmp_path / "out.parquet")]
    columns = {key for row in jsonl for key in row}
    for from_json, from_parquet in zip(jsonl, parquet):
        assert set(from_parquet) == columns  # every column, null where a row has none
        assert {k: v for k, v in from_parquet.items() if v is not None} == {
            "meta": {},
            **{k: v for k, v in from_json.items() if v is not None},
        }
    assert parquet[1]["error"].startswith("ValueError") and parquet[2]["extra"] == rows[2]["extra"]
    assert [r["note"] for r in parquet] == [0, 1, 2, "three", 4]
    again = read_records(tmp_path / "out.parquet")  # the tool reads its own output
    assert [r["id"] for r in again] == [r["id"] for r in rows]


@pytest.mark.parametrize("size", ["0", "-1"])
def test_a_batch_size_below_one_is_a_usage_error(boxed, tmp_path, capsys, size):
    src = write_jsonl(tmp_path / "in.jsonl", boxed_rows(3))
    before = snapshot(tmp_path)
    code, _, err = judge_cmd(
        capsys, "--judge", boxed, "--input", src, "--output", tmp_path / "o.jsonl", "--batch-size", size
    )
    assert code == 2 and err == f"bertjudge judge: --batch-size must be at least 1, got {size}"
    assert snapshot(tmp_path) == before


def test_the_library_refuses_a_batch_size_below_one_instead_of_scoring_garbage(encoder, tmp_path):
    judge = Judge.load(str(encoder))
    records = [normalize({"candidate": "5", "reference": "5"})]
    for size in (0, -1):
        with pytest.raises(ValueError, match=f"batch_size must be a whole number of at least 1, got {size}"):
            judge.score_records(records, batch_size=size)
        with pytest.raises(ValueError, match="batch_size"):
            score_file(
                judge,
                write_jsonl(tmp_path / "in.jsonl", boxed_rows(2)),
                tmp_path / "o.jsonl",
                batch_size=size,
                progress=False,
            )
    assert not (tmp_path / "o.jsonl").exists() and not partial_path(tmp_path / "o.jsonl").exists()


# --- untrusted judge folders ----------------------------------------------------------------------
def remove(name):
    return lambda folder: (folder / name).unlink()


def cut(name, keep=0.5):
    return lambda folder: (folder / name).write_bytes(
        (folder / name).read_bytes()[: int((folder / name).stat().st_size * keep)]
    )


def edit_judge_json(**changes):
    def change(folder):
        config = json.loads((folder / "judge.json").read_text())
        config.update(changes)
        (folder / "judge.json").write_text(json.dumps({k: v for k, v in config.items() if v is not None}))

    return change


def small_vocabulary(folder):  # a tokenizer of another model: ten words
    (folder / "tokenizer.json").unlink()
    (folder / "vocab.txt").write_text(
        "\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "b", "c", "d", "e"])
    )


def pickle_beside(folder):
    torch.save({"weights": torch.zeros(2)}, folder / "pytorch_model.bin")


@pytest.mark.parametrize(
    "damage, named",
    [
        (remove("tokenizer.json"), "tokenizer.json: missing (no tokenizer vocabulary"),
        (remove("tokenizer_config.json"), "tokenizer_config.json: missing (a tokenizer file)"),
        (small_vocabulary, "the tokenizer has 10 tokens for a model of"),
        (remove("model.safetensors"), "model.safetensors: missing (the judge's weights)"),
        (cut("model.safetensors"), "model.safetensors: not a complete safetensors file"),
        (cut("model.safetensors", keep=0.0001), "model.safetensors: not a complete safetensors file"),
        (lambda f: (f / "model.safetensors").write_bytes(b"not the weights"), "model.safetensors: not a complete"),
        (pickle_beside, "pytorch_model.bin: a pickle file (loading it can run code); refusing the folder"),
        (remove("config.json"), "config.json: missing (the model's configuration)"),
        (cut("config.json"), "config.json: not valid JSON"),
        (cut("judge.json"), "judge.json: not valid JSON"),
        (edit_judge_json(**{"class": None}), "judge.json: missing 'class'"),
        (edit_judge_json(format={"order": "XYZ"}), "judge.json: bad 'format'"),
        (edit_judge_json(format={"order": "QCR", "colour": "red"}), "judge.json: bad 'format' (unknown format fields"),
        (edit_judge_json(format="QCR"), "judge.json: 'format' must be an object of format fields, got str"),
        (edit_judge_json(temperature=0), "judge.json: 'temperature' must be positive, got 0"),
        (edit_judge_json(threshold="high"), "judge.json: 'threshold' must be a finite number, got 'high'"),
    ],
)
def test_an_incomplete_or_unsafe_judge_folder_is_refused_naming_the_file(encoder_copy, tmp_path, capsys, damage, named):
    damage(encoder_copy)
    src = write_jsonl(tmp_path / "in.jsonl", boxed_rows(3))
    before = snapshot(tmp_path)
    code, _, err = judge_cmd(capsys, "--judge", encoder_copy, "--input", src, "--output", tmp_path / "out.jsonl")
    assert code == 2 and err.startswith(f"bertjudge judge: {encoder_copy}") and named in err, err
    assert snapshot(tmp_path) == before  # nothing written, the folder untouched
    with pytest.raises(JudgeFileError):
        Judge.load(str(encoder_copy))


def test_pickle_weights_load_only_when_allowed(encoder_copy):
    state = load_file(encoder_copy / "model.safetensors")
    (encoder_copy / "model.safetensors").unlink()
    torch.save(state, encoder_copy / "pytorch_model.bin")
    with pytest.raises(JudgeFileError, match="pytorch_model.bin: a pickle file"):
        EncoderJudge.from_export(encoder_copy)
    records = [normalize({"question": "2+3?", "candidate": c, "reference": "5"}) for c in ("5", "six")]
    allowed = EncoderJudge.from_export(encoder_copy, allow_pickle=True)
    save_file(state, encoder_copy / "model.safetensors")
    (encoder_copy / "pytorch_model.bin").unlink()
    np.testing.assert_allclose(
        allowed.score_records(records), Judge.load(str(encoder_copy)).score_records(records), rtol=1e-6
    )


def test_remote_code_named_by_a_folder_never_runs(encoder_copy, tmp_path):
    config = json.loads((encoder_copy / "config.json").read_text())
    config["auto_map"] = {
        "AutoConfig": "modeling_evil.EvilConfig",
        "AutoModelForSequenceClassification": "modeling_evil.EvilModel",
    }
    (encoder_copy / "config.json").write_text(json.dumps(config))
    marker = tmp_path / "remote-code-ran"
    (encoder_copy / "modeling_evil.py").write_text(f"open({str(marker)!r}, 'w').close()\nraise SystemExit(1)\n")
    judge = Judge.load(str(encoder_copy))
    assert type(judge.model).__name__ == "BertForSequenceClassification" and not marker.exists()


def test_a_bleurt_folder_is_checked_too(tmp_path):
    from test_bleurt import make_tiny_bleurt

    from bertjudge.judges.bleurt import BleurtJudge

    bleurt = BleurtJudge(checkpoint=make_tiny_bleurt(tmp_path / "bleurt-checkpoint")).export(tmp_path / "bleurt")
    records = [normalize({"question": "2+3?", "candidate": "5", "reference": "5"})]
    assert Judge.load(str(bleurt)).score_records(records).shape == (1,)  # complete: it loads and scores
    edit_judge_json(bleurt_threshold="low")(bleurt)
    with pytest.raises(
        JudgeFileError, match=re.escape(f"{bleurt / 'judge.json'}: 'bleurt_threshold' must be a number")
    ):
        Judge.load(str(bleurt))
    edit_judge_json(bleurt_threshold=0.1)(bleurt)
    cut("model.safetensors")(bleurt)
    with pytest.raises(JudgeFileError, match=re.escape(f"{bleurt / 'model.safetensors'}: not a complete safetensors")):
        Judge.load(str(bleurt))
    (bleurt / "vocab.txt").unlink()
    with pytest.raises(JudgeFileError, match=re.escape(f"{bleurt / 'vocab.txt'}: missing (no tokenizer vocabulary")):
        Judge.load(str(bleurt))


@pytest.mark.slow  # the SmolLM2 tokenizer is read from a GGUF file (~15 s)
def test_a_generative_folder_is_checked_too(tmp_path):
    from test_generative import make_tiny_causal_lm, smollm2_tokenizer

    from bertjudge.judges.generative import GenerativeJudge

    lm = make_tiny_causal_lm(tmp_path / "lm", smollm2_tokenizer(), "llama")
    generative = GenerativeJudge(backbone=lm, lora_r=0).export(tmp_path / "generative")
    records = [normalize({"question": "2+3?", "candidate": "5", "reference": "5"})]
    assert Judge.load(str(generative)).score_records(records).shape == (1,)
    (generative / "tokenizer.json").unlink()
    with pytest.raises(JudgeFileError, match=re.escape(f"{generative / 'tokenizer.json'}: missing")):
        Judge.load(str(generative))
    GenerativeJudge(backbone=lm, lora_r=0).export(generative)  # whole again, then only judge.json is wrong
    edit_judge_json(mode=None)(generative)
    with pytest.raises(JudgeFileError, match=re.escape(f"{generative / 'judge.json'}: missing 'mode'")):
        Judge.load(str(generative))


def test_a_judge_loaded_by_zoo_name_is_rehashed_and_refused_when_its_cache_changed(
    encoder, tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv("BERTJUDGE_CACHE", str(tmp_path / "cache"))
    registry = tmp_path / "reg.yaml"
    registry.write_text(
        yaml.safe_dump(
            {
                "minilm-l6.toy": {
                    "class_path": "bertjudge.judges.encoder.EncoderJudge",
                    "source": f"file://{encoder}",
                    "format": json.loads((encoder / "judge.json").read_text())["format"],
                    "license": "Apache-2.0",
                    "provenance": {"training_data": "toy"},
                    "files": hash_folder(encoder),
                }
            }
        )
    )
    monkeypatch.setenv("BERTJUDGE_REGISTRY", str(registry))
    records = [normalize({"question": "2+3?", "candidate": "5", "reference": "5"})]
    expected = Judge.load("minilm-l6.toy").score_records(records)
    folder = zoo.cache_dir(zoo.get_entry("minilm-l6.toy"))
    new_weights(folder)  # the cached weights changed after the pull
    with pytest.raises(
        zoo.ZooError,
        match=r"minilm-l6.toy: the cached files in .* changed since they were pulled "
        r"\(model.safetensors: sha256 .*\); refusing them: .*zoo pull "
        r"minilm-l6.toy --force",
    ):
        Judge.load("minilm-l6.toy")
    src = write_jsonl(tmp_path / "in.jsonl", boxed_rows(2))
    code, _, err = judge_cmd(capsys, "--judge", "minilm-l6.toy", "--input", src, "--output", tmp_path / "o.jsonl")
    assert (
        code == 1
        and err.startswith("bertjudge judge: minilm-l6.toy: the cached files in")
        and not (tmp_path / "o.jsonl").exists()
    )
    assert main(["zoo", "pull", "minilm-l6.toy", "--force"]) == 0
    np.testing.assert_allclose(Judge.load("minilm-l6.toy").score_records(records), expected, rtol=1e-6)
    pickle_beside(folder)  # a file added to the cache
    with pytest.raises(zoo.ZooError, match=r"pytorch_model.bin: not in the manifest"):
        Judge.load("minilm-l6.toy")


def test_a_judge_json_naming_an_unregistered_module_is_refused_without_importing_it(tmp_path, monkeypatch, capsys):
    """A judge folder is data: its judge.json cannot make Judge.load run a module's code."""
    package = tmp_path / "site"
    package.mkdir()
    marker = tmp_path / "imported.txt"
    (package / "sidefx_judge.py").write_text(
        f"from pathlib import Path\nPath({str(marker)!r}).write_text('ran')\n\nclass Thing:\n    pass\n"
    )
    monkeypatch.syspath_prepend(str(package))
    folder = tmp_path / "judge"
    write_judge_config(folder, {"class": "sidefx_judge.Thing", "threshold": 0.5})
    with pytest.raises(JudgeFileError, match=r"'sidefx_judge.Thing' is not a registered judge class, so it was not"):
        Judge.load(str(folder))
    assert not marker.exists() and "sidefx_judge" not in sys.modules  # nothing imported, nothing ran
    try:
        Judge.load(str(folder))
    except JudgeFileError as err:
        assert "trust_remote_code=True" in str(err) and "Available: bertjudge.judges.backends.PromptedJudge" in str(err)
    rows = write_jsonl(tmp_path / "in.jsonl", boxed_rows(2))
    code, _, err = judge_cmd(capsys, "--judge", folder, "--input", rows, "--output", tmp_path / "out.jsonl")
    assert code == 2 and "--trust-remote-code" in err and not marker.exists()  # bad input: exit 2
    assert not (tmp_path / "out.jsonl").exists()
    # trusted: the module is imported (its code runs), and a class that is not a judge is still refused
    with pytest.raises(JudgeFileError, match=r"'sidefx_judge.Thing' is not a judge class"):
        Judge.load(str(folder), trust_remote_code=True)
    assert marker.read_text() == "ran"
    with pytest.raises(TypeError, match="not a judge class"):
        kinds.register(int)


def test_judge_json_problems_name_judge_json_for_every_loader(tmp_path):
    folder = tmp_path / "judge"
    write_judge_config(folder, {"format": {"order": "QCR"}})
    with pytest.raises(JudgeFileError, match=re.escape(f"{folder / 'judge.json'}: missing 'class'")):
        Judge.load(str(folder))
    for cls in (
        "bertjudge.judges.encoder.EncoderJudge",
        "bertjudge.judges.bleurt.BleurtJudge",
        "bertjudge.judges.generative.GenerativeJudge",
    ):
        write_judge_config(
            folder, {"class": cls, "format": {"order": "QCR", "max_length": -3}, "threshold": 0.5, "temperature": 1.0}
        )
        with pytest.raises(JudgeFileError, match=re.escape(f"{folder / 'judge.json'}: bad 'format' (max_length -3")):
            Judge.load(str(folder))


def test_output_suffixes_write_what_they_say_or_are_refused_in_one_line(boxed, tmp_path, capsys):
    import csv

    import pandas as pd

    rows = boxed_rows(5)
    src = write_jsonl(tmp_path / "in.jsonl", rows)
    outputs = {}
    for name in ("out.jsonl", "out.jsonl.gz", "out.parquet", "out.csv"):
        code, _, _ = judge_cmd(capsys, "--judge", boxed, "--input", src, "--output", tmp_path / name)
        assert code == 0
    outputs["jsonl"] = rows_of(tmp_path / "out.jsonl")
    outputs["gz"] = read_records(tmp_path / "out.jsonl.gz")
    outputs["parquet"] = pd.read_parquet(tmp_path / "out.parquet").to_dict("records")
    with open(tmp_path / "out.csv", newline="", encoding="utf-8") as handle:
        table = list(csv.DictReader(handle))  # a CSV a spreadsheet opens, not JSON lines
    assert [r["id"] for r in table] == [r["id"] for r in outputs["jsonl"]]
    assert [float(r["score"]) for r in table] == [r["score"] for r in outputs["jsonl"]]
    assert json.loads(table[0]["meta"]) == rows[0]["meta"] and table[0]["reference"] == rows[0]["reference"]
    assert (
        [r["score"] for r in outputs["gz"]]
        == [r["score"] for r in outputs["parquet"]]
        == [r["score"] for r in outputs["jsonl"]]
    )
    for name in ("out.txt", "out.json", "scores"):
        code, _, err = judge_cmd(capsys, "--judge", boxed, "--input", src, "--output", tmp_path / name)
        assert (
            code == 2 and err == f"bertjudge judge: {tmp_path / name}: write a .jsonl, .jsonl.gz, .parquet or .csv file"
        )
        assert not (tmp_path / name).exists() and not partial_path(tmp_path / name).exists()


def test_a_run_stopped_before_its_first_row_leaves_no_partial_file(boxed, tmp_path, capsys, monkeypatch):
    src = write_jsonl(tmp_path / "in.jsonl", boxed_rows(4))
    out = tmp_path / "out.jsonl"
    monkeypatch.setenv(INTERRUPT_ENV, "0")  # Ctrl-C in the judge's first call, before any row is written
    code, _, err = judge_cmd(capsys, "--judge", boxed, "--input", src, "--output", out)
    assert code == 130 and not out.exists() and not partial_path(out).exists()  # nothing left behind
    monkeypatch.delenv(INTERRUPT_ENV)
    code, _, _ = judge_cmd(capsys, "--judge", boxed, "--input", src, "--output", out)
    assert code == 0 and len(rows_of(out)) == 4
