"""``Judge.load("http://host:port")``: a judge served by ``python -m bertjudge serve``, used as a local one.

Against a real server (``ServeProcess``: a child process on a free loopback port) serving the ``regex`` judge,
with a token and small limits so that requests are cut by rows and by bytes: the scores of the local regex judge
(1,000 rows, sync and async), the interface (``score``, ``details``: the served judge's own details rows,
``describe``, the fingerprint), the ``judge`` command with ``--judge http://…``, ``evaluate``, the TRL reward (sync
and async), a wrong token and an unreachable server as one-line errors, a row too large for the server failing
alone. Slow (``-m slow``): the server killed
in the middle of a ``judge`` run, restarted, and the run resumed without a row lost or scored twice.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from cli_run import evaluate
from test_serve import judge_command, rows_for

from bertjudge.cli.main import main
from bertjudge.core.errors import BertJudgeError, JudgeUnavailable
from bertjudge.core.records import normalize, read_records
from bertjudge.core.resumable import partial_path
from bertjudge.data.sources import load_source
from bertjudge.evaluation.rewards import AsyncBertJudgeReward, BertJudgeReward
from bertjudge.evaluation.scoring import judge_fingerprint, score_file
from bertjudge.judges.loading import Judge
from bertjudge.judges.regex import RegexJudge
from bertjudge.judges.remote import RemoteJudge, RemoteJudgeError, RemoteUnavailable
from bertjudge.serve.server import ServeProcess, free_port

ROOT = Path(__file__).resolve().parents[1]
TOKEN = "remote-s3cret"
MAX_ROWS = 64
MAX_BYTES = 40_000  # some requests are cut by bytes before MAX_ROWS rows


def entries(path: Path) -> int:
    """Complete rows in a partial file (lines after the header)."""
    return max(0, path.read_bytes().count(b"\n") - 1) if path.exists() else 0


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    log = tmp_path_factory.mktemp("remote") / "server.log"
    args = ["--judge", "regex", "--token", TOKEN, "--max-rows", str(MAX_ROWS), "--max-bytes", str(MAX_BYTES)]
    with ServeProcess(args, log=log) as running:
        yield running


@pytest.fixture()
def token(monkeypatch):
    monkeypatch.setenv("BERTJUDGE_TOKEN", TOKEN)


def test_the_remote_judge_scores_as_the_local_one(server, token):
    records = load_source("embedded:test?n=1000")
    judge = Judge.load(server.url)
    assert isinstance(judge, RemoteJudge)
    assert (judge.max_rows, judge.max_bytes) == (MAX_ROWS, MAX_BYTES)  # the server's limits, from GET /info
    requests = judge._requests(records)
    assert all(len(ids) <= MAX_ROWS and len(body) <= MAX_BYTES for ids, body in requests)
    assert any(len(ids) < MAX_ROWS for ids, _ in requests[:-1])  # some cut by bytes
    local = RegexJudge()
    expected = local.score_records(records)
    got = judge.score_records(records)
    assert isinstance(got, np.ndarray) and got.dtype == float and got.shape == (1000,)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-6)
    assert set(np.unique(expected)) == {0.0, 1.0}  # both verdicts
    np.testing.assert_allclose(asyncio.run(judge.ascore_records(records)), expected, rtol=0, atol=1e-6)

    # the rest of the interface, as the served judge reports it
    assert judge.name == "regex" and judge.threshold == local.threshold
    assert judge.describe() == {**local.describe(), "url": server.url}
    assert judge_fingerprint(judge) == judge_fingerprint(local)  # a `judge` run resumes across local and remote
    # the served judge's own details (the rules' extracted answer, unparsed, similarity…), on the 1,000 rows
    details = local.details(records)
    assert judge.details(records) == details
    assert {row["unparsed"] for row in details} == {True, False} and {"answer", "similarity"} <= set(details[0])
    few = records[:20]
    questions, candidates, references = ([r[k] for r in few] for k in ("question", "candidate", "references"))
    np.testing.assert_array_equal(
        judge.score(questions, candidates, references), local.score(questions, candidates, references)
    )
    assert judge.score_records([]).shape == (0,)


def test_a_wrong_token_is_a_one_line_error_naming_401(server, monkeypatch, tmp_path, capsys):
    with pytest.raises(RemoteUnavailable) as wrong:
        RemoteJudge(server.url, token="nope")
    message = str(wrong.value)
    assert "401" in message and server.url in message and "bearer token" in message and "\n" not in message
    monkeypatch.delenv("BERTJUDGE_TOKEN", raising=False)
    with pytest.raises(RemoteUnavailable, match="401.*BERTJUDGE_TOKEN, which is not set"):
        Judge.load(server.url)

    monkeypatch.setenv("BERTJUDGE_TOKEN", "nope")  # the judge command: one line, exit 1, nothing written
    source, out = tmp_path / "rows.jsonl", tmp_path / "scored.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in rows_for(3)))
    assert main(["judge", "--judge", server.url, "--input", str(source), "--output", str(out)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "401" in err[0] and server.url in err[0] and "Traceback" not in err[0]
    assert not out.exists() and not partial_path(out).exists()


def test_an_unreachable_server_is_a_one_line_error_after_the_retries():
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    with pytest.raises(RemoteUnavailable) as gone:
        RemoteJudge(url, retries=3, backoff=0.01)
    assert str(gone.value) == f"{url}: not reachable after 4 tries (connection refused)"
    assert isinstance(gone.value, JudgeUnavailable) and isinstance(gone.value, BertJudgeError)


def test_the_judge_command_with_a_url_writes_the_local_judges_scores(server, token, tmp_path):
    rows = rows_for(300, seed=4)
    rows[0].pop("id")  # an id is given as the command gives it
    remote = judge_command(tmp_path, server.url, rows, name="remote")
    local = judge_command(tmp_path, "regex", rows, name="local")
    assert remote == local  # every field: id, category, score, verdict, judge ("regex"), input_hash
    assert {r["verdict"] for r in local} == {True, False}


def test_evaluate_with_a_url(server, token, tmp_path):
    data = "embedded:test?n=120&seed=2"
    (remote,) = evaluate(data, [server.url], tmp_path / "remote", "--bootstrap", "20")["judges"].values()
    local = evaluate(data, ["regex"], tmp_path / "local", "--bootstrap", "20")["judges"]["regex"]
    # the same report, the served judge's details included (regex's unparsed flag: the unparsed rate)
    assert remote["overall"] == local["overall"] and local["overall"]["unparsed_rate"] > 0
    assert remote["by_category"] == local["by_category"]
    (scored,) = (tmp_path / "remote" / "scores").glob("*.jsonl")
    expected = json_lines(tmp_path / "local" / "scores" / "regex.jsonl")
    assert json_lines(scored) == expected  # every row's details: id, score, verdict, answer, unparsed…


def json_lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_row_too_large_for_the_server_fails_alone(server, token, tmp_path):
    rows = rows_for(5, seed=6)
    rows[2] = {"id": "huge", "candidate": "x " * MAX_BYTES, "references": ["x"]}
    with pytest.raises(RemoteJudgeError, match="413.*--max-bytes") as refused:
        Judge.load(server.url).score_records([normalize(r) for r in rows])
    assert not isinstance(refused.value, JudgeUnavailable)  # about the rows, not the server
    scored = {r["id"]: r for r in judge_command_failing(tmp_path, server.url, rows)}
    assert scored["huge"]["score"] is None and "413" in scored["huge"]["error"]
    expected = RegexJudge().score_records([normalize(r) for r in rows if r["id"] != "huge"])
    assert [scored[r["id"]]["score"] for r in rows if r["id"] != "huge"] == list(expected)


def judge_command_failing(tmp_path, spec: str, rows: list[dict]) -> list[dict]:
    """``judge`` on rows one of which fails: exit 1, every row written (the failed one with an ``error``)."""
    source, out = tmp_path / "rows.jsonl", tmp_path / "scored.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["judge", "--judge", spec, "--input", str(source), "--output", str(out), "--no-progress"]) == 1
    return read_records(out)


def test_a_server_gone_after_load_stops_a_run_without_failing_its_rows(server, token, tmp_path):
    """Deterministic: a judge loaded from the server, whose server is then gone (its URL now a dead port)."""
    rows = rows_for(40, seed=8)
    source, out = tmp_path / "rows.jsonl", tmp_path / "scored.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in rows))
    judge = RemoteJudge(server.url, backoff=0.01)
    judge.url = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(RemoteUnavailable, match="not reachable after 4 tries"):
        score_file(judge, source, out, progress=False)
    assert entries(partial_path(out)) == 0  # no row written as failed
    judge.url = server.url  # back: the rerun scores every row
    summary = score_file(judge, source, out, progress=False)
    assert summary.rows == 40 and summary.failed == 0
    assert [r["score"] for r in read_records(out)] == list(RegexJudge().score_records([normalize(r) for r in rows]))


def test_the_reward_sync_and_async(server, token):
    prompts = ["What is 2+3?", "What is the capital of France?", "Who wrote Hamlet?"]
    completions = ["2+3 = 5. Final answer: 5", "I think it is Lyon.", "Shakespeare wrote it."]
    columns = {"reference": ["5", "Paris", ["William Shakespeare", "Shakespeare"]], "trainer_state": None}
    expected = BertJudgeReward("regex")(prompts, completions, **columns)
    assert BertJudgeReward(server.url)(prompts, completions, **columns) == expected
    reward = AsyncBertJudgeReward(server.url, hard=True)
    assert inspect.iscoroutinefunction(reward.__call__)  # what TRL checks to await it on its event loop
    assert asyncio.run(reward(prompts, completions, **columns)) == expected
    local = AsyncBertJudgeReward("regex")  # a judge without ascore_records: in a worker thread
    assert asyncio.run(local(prompts, completions, **columns)) == expected


def test_spec_and_arguments_are_checked():
    with pytest.raises(ValueError, match="device="):
        Judge.load("http://127.0.0.1:1", device="cpu")
    with pytest.raises(ValueError, match="http://HOST:PORT"):
        RemoteJudge("http://127.0.0.1:1?max_rows=3")
    with pytest.raises(ValueError, match="retries"):
        RemoteJudge("http://127.0.0.1:1", retries=-1)


# ------------------------------------------------------------------------------ the server killed mid-run (slow)
@pytest.mark.slow
def test_a_server_killed_mid_run_and_restarted_resumes_the_judge_command(tmp_path):
    n = 1536  # six chunks of 256 rows; the server is killed once the first is in the partial file
    rows = rows_for(n, seed=9)
    source, out = tmp_path / "rows.jsonl", tmp_path / "scored.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in rows))
    args = ["--judge", "regex", "--token", TOKEN, "--max-rows", "32", "--batch-timeout", "0.1"]
    command = [sys.executable, "-m", "bertjudge", "judge", "--judge", "URL", "--input", str(source)]
    command += ["--output", str(out), "--no-progress"]
    env = {**os.environ, "BERTJUDGE_TOKEN": TOKEN, "PYTHONPATH": str(ROOT)}

    server = ServeProcess(args, log=tmp_path / "server.log").start()
    command[command.index("URL")] = server.url
    try:
        run = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 300
        while run.poll() is None and entries(partial_path(out)) == 0 and time.monotonic() < deadline:
            time.sleep(0.02)
        os.killpg(server.process.pid, signal.SIGKILL)  # the server and its workers, no handler runs
        server.process.wait()
        _, err = run.communicate(timeout=300)
    finally:
        server.stop()
    assert run.returncode == 1, err
    err = err.strip().splitlines()
    assert len(err) == 1 and f"{server.url}: not reachable after 4 tries" in err[0], err
    done = entries(partial_path(out))
    assert 0 < done < n and done % 256 == 0  # whole chunks kept, no row written as failed
    assert not out.exists()

    with ServeProcess(args, port=server.port, log=tmp_path / "server2.log"):
        rerun = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert rerun.returncode == 0, rerun.stderr
    assert f"({n} rows, {done} from the partial file of an earlier run; 0 failed)" in rerun.stdout
    scored = read_records(out)
    assert [r["id"] for r in scored] == [r["id"] for r in rows]  # none lost, none twice, in order
    expected = RegexJudge().score_records([normalize(r) for r in rows])
    assert [r["score"] for r in scored] == list(expected)
