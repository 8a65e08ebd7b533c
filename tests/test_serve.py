"""``python -m bertjudge serve``: a real server in a child process on a free loopback port, real HTTP (httpx).

Fast: one ``regex`` server with a token and small limits: the judge command's scores, 401, 413, 422,
/health, /metrics, /openapi.json, bad flags. Slow (``-m slow``): a tiny random encoder judge exported
from ``tiny_backbone``: the same scores as ``judge`` (bitwise for a request scored alone, to float32
rounding for requests batched together), dynamic batching, and a worker killed and restarted.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import numpy as np
import pytest

from bertjudge.cli.main import main
from bertjudge.core.records import normalize, read_records
from bertjudge.data.sources import load_source
from bertjudge.judges.loading import Judge
from bertjudge.judges.regex import RegexJudge
from bertjudge.serve.server import JudgeAPI, Rows, ScoreGate, ServeProcess

TOKEN = "s3cret-token"
MAX_ROWS = 6
MAX_BYTES = 20000


def rows_for(n: int, seed: int = 0) -> list[dict]:
    """Corpus records (every category, correct and wrong answers) as a client would send them."""
    keep = ("id", "task", "category", "question", "candidate", "references", "label")
    return [{k: r[k] for k in keep if k in r} for r in load_source(f"embedded:test?n={n}&seed={seed}")]


def judge_command(tmp_path, spec: str, rows: list[dict], name: str = "rows") -> list[dict]:
    """What ``python -m bertjudge judge`` writes for these rows (through the command's entry point)."""
    source, out = tmp_path / f"{name}.jsonl", tmp_path / f"{name}-scored.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["judge", "--judge", spec, "--input", str(source), "--output", str(out), "--no-progress"]) == 0
    return read_records(out)


def metric(text: str, name: str, labels: str = "") -> float:
    """A sample of Prometheus text (0 when absent)."""
    pattern = re.escape(name + (f"{{{labels}}}" if labels else "")) + r" ([0-9.e+-]+)$"
    found = re.search(pattern, text, re.MULTILINE)
    return float(found.group(1)) if found else 0.0


@pytest.fixture(scope="module")
def regex_server(tmp_path_factory):
    log = tmp_path_factory.mktemp("serve") / "server.log"
    server = ServeProcess(
        [
            "--judge",
            "regex",
            "--token",
            TOKEN,
            "--max-rows",
            str(MAX_ROWS),
            "--max-bytes",
            str(MAX_BYTES),
            "--max-batch-size",
            "4",
        ],
        log=log,
    )
    with server:
        yield server


@pytest.fixture()
def client(regex_server):
    with httpx.Client(base_url=regex_server.url, timeout=30, headers={"Authorization": f"Bearer {TOKEN}"}) as c:
        yield c


def test_scores_are_the_judge_commands(client, tmp_path):
    rows = rows_for(MAX_ROWS, seed=3)
    rows[0].pop("id")  # the server gives a row without id the id `judge` gives it
    reply = client.post("/score", json={"rows": rows})
    assert reply.status_code == 200, reply.text
    expected = judge_command(tmp_path, "regex", rows)
    assert reply.json()["rows"] == [{"id": r["id"], "score": r["score"], "verdict": r["verdict"]} for r in expected]
    assert {r["verdict"] for r in expected} == {True, False}  # both verdicts are exercised


def test_details_true_answers_the_judges_details_rows(client):
    rows = rows_for(MAX_ROWS, seed=7)
    reply = client.post("/score", json={"rows": rows, "details": True})
    assert reply.status_code == 200, reply.text
    expected = RegexJudge().details([normalize(r) for r in rows])
    assert reply.json()["rows"] == [{**row, "id": r["id"]} for r, row in zip(rows, expected)]
    assert {"answer", "unparsed", "similarity", "match"} <= set(expected[0])  # the rules' own fields
    plain = client.post("/score", json={"rows": rows, "details": False}).json()["rows"]
    assert plain == [
        {"id": r["id"], "score": row["score"], "verdict": row["verdict"]} for r, row in zip(rows, expected)
    ]
    refused = client.post("/score", json={"rows": rows, "details": "yes"})
    assert (
        refused.status_code == 422 and refused.json()["detail"] == "body: 'details' must be true or false, got \"yes\""
    )


def test_a_request_without_the_token_is_refused(regex_server):
    body = {"rows": rows_for(1)}
    with httpx.Client(base_url=regex_server.url, timeout=30) as anonymous:
        assert anonymous.post("/score", json=body).status_code == 401
        wrong = anonymous.post("/score", json=body, headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401 and "bearer token" in wrong.json()["detail"]
        assert wrong.headers["www-authenticate"] == "Bearer"
        assert anonymous.post("/score", content=b"not json").status_code == 401  # before the body is read
        assert anonymous.get("/info").status_code == 401
        assert anonymous.get("/health").status_code == 200  # probes and scrapers need no token
        assert anonymous.get("/metrics").status_code == 200


def test_too_many_rows_or_bytes_is_refused_with_413(client):
    too_many = client.post("/score", json={"rows": [{"candidate": "4", "references": ["4"]}] * (MAX_ROWS + 1)})
    assert too_many.status_code == 413
    assert f"{MAX_ROWS + 1} rows" in too_many.json()["detail"] and "--max-rows" in too_many.json()["detail"]
    big = {"rows": [{"candidate": "x" * MAX_BYTES, "references": ["x"]}]}
    too_big = client.post("/score", json=big)
    assert too_big.status_code == 413 and "--max-bytes" in too_big.json()["detail"]


@pytest.mark.parametrize(
    "row, field",
    [
        ({"candidate": 5, "references": ["4"]}, "'candidate'"),
        ({"candidate": "4"}, "'references'"),
        ({"candidate": "4", "references": []}, "'references'"),
        ({"candidate": "4", "references": ["4"], "category": "essay"}, "'category'"),
        ({"candidate": "4", "references": ["4"], "label": 2}, "'label'"),
        ("just a string", "expected a JSON object"),
    ],
)
def test_a_bad_row_is_refused_naming_the_row_and_the_field(client, regex_server, row, field):
    before = client.get("/metrics").text
    rows = rows_for(3)
    rows.insert(2, row)
    reply = client.post("/score", json={"rows": rows})
    assert reply.status_code == 422
    detail = reply.json()["detail"]
    assert detail.startswith("rows[2]: ") and field in detail and "\n" not in detail
    after = client.get("/metrics").text
    # no row of the request was scored: the worker never saw it
    assert metric(after, "bertjudge_serve_batch_rows_sum") == metric(before, "bertjudge_serve_batch_rows_sum")
    bad = "bertjudge_serve_failures_total"
    assert metric(after, bad, 'reason="bad_request"') == metric(before, bad, 'reason="bad_request"') + 1


@pytest.mark.parametrize(
    "body, status, words",
    [
        (b"{not json", 400, "not valid JSON"),
        (b'{"row": []}', 422, '{"rows": [record, ...]}'),
        (b'{"rows": []}', 422, "is empty"),
        (b'{"rows": {"candidate": "4"}}', 422, "must be a list"),
    ],
)
def test_a_bad_body_is_refused(client, body, status, words):
    reply = client.post("/score", content=body, headers={"Content-Type": "application/json"})
    assert reply.status_code == status and words in reply.json()["detail"]


def test_health_metrics_and_openapi(client):
    assert client.get("/health").text == "ok"
    rows = rows_for(2)
    before = client.get("/metrics").text
    assert client.post("/score", json={"rows": rows}).status_code == 200
    after = client.get("/metrics")
    assert after.headers["content-type"].startswith("text/plain")
    text = after.text
    for name in ("bertjudge_serve_request_seconds_bucket", "bertjudge_serve_batch_requests_count"):
        assert name in text
    assert (
        metric(text, "bertjudge_serve_requests_total", 'code="200"')
        == metric(before, "bertjudge_serve_requests_total", 'code="200"') + 1
    )
    assert metric(text, "bertjudge_serve_rows_total") == metric(before, "bertjudge_serve_rows_total") + 2
    assert metric(text, "bertjudge_serve_request_seconds_count") > metric(
        before, "bertjudge_serve_request_seconds_count"
    )
    schema = client.get("/openapi.json").json()
    post = schema["paths"]["/score"]["post"]
    assert post["requestBody"]["content"]["application/json"]["schema"]["$ref"].endswith("/ScoreRequest")
    assert post["responses"]["200"]["content"]["application/json"]["schema"]["$ref"].endswith("/ScoreResponse")
    assert {"401", "413", "422", "504"} <= set(post["responses"])
    assert post["security"] == [{"bearer": []}]
    assert set(schema["components"]["schemas"]["ScoredRow"]["properties"]) == {"id", "score", "verdict", "error"}
    assert "/metrics" in schema["paths"] and "/health" in schema["paths"]


def test_wrong_flags_and_a_missing_judge_are_one_line_errors(capsys, tmp_path):
    assert main(["serve", "--judge", "regex", "--port", "80"]) == 2
    assert main(["serve", "--judge", "regex", "--max-rows", "0"]) == 2
    assert main(["serve", "--judge", str(tmp_path / "nowhere")]) == 2  # before any worker starts
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 3 and "--port must be from 1024" in err[0] and "--max-rows" in err[1]
    assert "not a judge folder" in err[2] and "Traceback" not in "".join(err)
    assert "PROMETHEUS_MULTIPROC_DIR" not in os.environ  # serve() leaves the environment as it found it


def test_a_request_nobody_answers_gets_504_at_the_deadline():
    """A worker that never answers (the request it held died with it): the gate answers 504, not silence."""

    async def hung_worker(scope, receive, send):
        await asyncio.sleep(60)

    gate = ScoreGate(hung_worker, token=None, max_bytes=10_000, max_rows=4, timeout=0.3)
    body = json.dumps({"rows": [{"candidate": "4", "references": ["4"]}]}).encode()
    sent = []

    async def receive():
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message):
        sent.append(message)

    started = time.monotonic()
    asyncio.run(gate({"type": "http", "path": "/score", "method": "POST", "headers": []}, receive, send))
    assert 0.3 <= time.monotonic() - started < 5
    assert sent[0]["status"] == 504 and b"--timeout" in sent[1]["body"]


class PickyJudge(RegexJudge):
    """The regex judge, except that it raises on any batch holding the candidate 'boom' (scores and details); it
    counts its calls."""

    calls: list[tuple[str, int]] = []

    def score_records(self, records, batch_size=32, progress=False):
        self.calls.append(("score_records", len(records)))
        if any(r["candidate"] == "boom" for r in records):
            raise ValueError("cannot judge 'boom'\nsecond line")
        return np.array([row["score"] for row in RegexJudge.details(self, records)], dtype=float)

    def details(self, records, batch_size=32, progress=False):
        self.calls.append(("details", len(records)))
        if any(r["candidate"] == "boom" for r in records):
            raise ValueError("cannot judge 'boom'\nsecond line")
        return super().details(records, batch_size, progress)


def test_a_row_the_judge_fails_on_gets_an_error_and_the_rest_of_the_batch_is_scored():
    api = JudgeAPI("regex", batch_size=2, max_batch_size=4)
    api.judge = PickyJudge()
    requests = [
        Rows([normalize(r, f"rows[{i}]") for i, r in enumerate(rows)])
        for rows in (
            rows_for(3, seed=1),
            [*rows_for(2, seed=2), {"candidate": "boom", "references": ["4"]}],
            rows_for(4, seed=3),
        )
    ]
    answers = [api.encode_response(out) for out in api.unbatch(api.predict(api.batch(requests)))]
    assert [len(a["rows"]) for a in answers] == [3, 3, 4]
    failed = answers[1]["rows"][2]
    assert failed == {
        "id": requests[1].records[2]["id"],
        "score": None,
        "verdict": None,
        "error": "ValueError: cannot judge 'boom'",
    }
    good = [rec for rows in requests for rec in rows.records if rec["candidate"] != "boom"]
    expected = RegexJudge().score_records(good)
    got = [row for a in answers for row in a["rows"] if row is not failed]
    assert [(g["id"], g["score"]) for g in got] == [(r["id"], float(s)) for r, s in zip(good, expected)]


def test_requests_with_and_without_details_batched_together():
    """The rows of the requests that asked for details go to one ``details`` call, the others to one
    ``score_records`` call; each answer is its request's, and a failing row fails alone in either."""
    api = JudgeAPI("regex", batch_size=2, max_batch_size=4)
    api.judge, PickyJudge.calls = PickyJudge(), []
    sent = (
        (rows_for(3, seed=1), True),
        ([*rows_for(2, seed=2), {"candidate": "boom", "references": ["4"]}], False),
        ([{"candidate": "boom", "references": ["4"]}, *rows_for(3, seed=3)], True),
        (rows_for(2, seed=4), False),
    )
    requests = [Rows([normalize(r, f"rows[{i}]") for i, r in enumerate(rows)], details) for rows, details in sent]
    answers = [api.encode_response(out) for out in api.unbatch(api.predict(api.batch(requests)))]
    # one call for the 5 rows without details and one for the 7 with, then the failing rows' retries
    assert PickyJudge.calls[0] == ("score_records", 5)
    assert next(call for call in PickyJudge.calls if call[0] == "details") == ("details", 7)
    local = RegexJudge()
    for request, answer in zip(requests, answers):
        rows = answer["rows"]
        assert [row["id"] for row in rows] == [rec["id"] for rec in request.records]
        for rec, row in zip(request.records, rows):
            if rec["candidate"] == "boom":
                assert row == {
                    "id": rec["id"],
                    "score": None,
                    "verdict": None,
                    "error": "ValueError: cannot judge 'boom'",
                }
            elif request.details:
                assert row == {**local.details([rec])[0], "id": rec["id"]}
            else:
                assert row == {"id": rec["id"], **{k: local.details([rec])[0][k] for k in ("score", "verdict")}}


# ------------------------------------------------------------------------------ a tiny encoder judge (slow)
@pytest.fixture(scope="module")
def encoder_judge(tiny_backbone, tmp_path_factory):
    from bertjudge.judges.encoder import EncoderJudge

    return str(EncoderJudge(backbone=tiny_backbone).export(tmp_path_factory.mktemp("judges") / "tiny-encoder"))


@pytest.fixture(scope="module")
def encoder_server(encoder_judge, tmp_path_factory):
    log = tmp_path_factory.mktemp("serve") / "encoder-server.log"
    with ServeProcess(
        ["--judge", encoder_judge, "--max-batch-size", "16", "--batch-timeout", "0.3", "--timeout", "60"], log=log
    ) as server:
        yield server


@pytest.mark.slow
def test_encoder_scores_equal_the_judge_command(encoder_server, encoder_judge, tmp_path):
    rows = rows_for(24, seed=5)
    with httpx.Client(base_url=encoder_server.url, timeout=60) as client:
        alone = client.post("/score", json={"rows": rows})
        assert alone.status_code == 200, alone.text
        # a request scored on its own: the very floats `judge` writes for a file of the same rows
        expected = judge_command(tmp_path, encoder_judge, rows)
        assert alone.json()["rows"] == [{"id": r["id"], "score": r["score"], "verdict": r["verdict"]} for r in expected]
        assert len({r["score"] for r in expected}) > 1  # a real model, not a constant
        # with "details": true, the judge's details rows (score, verdict, unparsed, the raw logit) of the same rows
        detailed = client.post("/score", json={"rows": rows, "details": True})
        assert detailed.status_code == 200, detailed.text
        local = Judge.load(encoder_judge).details([normalize(r) for r in rows])
        got = detailed.json()["rows"]
        assert [g["id"] for g in got] == [r["id"] for r in rows] and {k for g in got for k in g} == {"id", *local[0]}
        for g, row in zip(got, local):
            for key, value in row.items():
                assert g[key] == (pytest.approx(value, abs=1e-6) if isinstance(value, float) else value), key

        # eight requests at once: batched together, padded together; the same scores to float32 rounding
        parts = [rows[i * 3 : i * 3 + 3] for i in range(8)]
        before = client.get("/metrics").text
        with ThreadPoolExecutor(8) as pool:
            replies = list(pool.map(lambda part: client.post("/score", json={"rows": part}), parts))
        after = client.get("/metrics").text
    by_id = {r["id"]: r for r in expected}
    for part, reply in zip(parts, replies):
        assert reply.status_code == 200, reply.text
        got = reply.json()["rows"]
        assert [g["id"] for g in got] == [r["id"] for r in part]
        for g in got:
            assert g["score"] == pytest.approx(by_id[g["id"]]["score"], abs=1e-5)
            assert g["verdict"] == by_id[g["id"]]["verdict"]
    batches = metric(after, "bertjudge_serve_batch_requests_count") - metric(
        before, "bertjudge_serve_batch_requests_count"
    )
    requests = metric(after, "bertjudge_serve_batch_requests_sum") - metric(
        before, "bertjudge_serve_batch_requests_sum"
    )
    assert requests == 8 and batches < 8  # dynamic batching joined requests


@pytest.mark.slow
def test_a_killed_worker_is_restarted_and_requests_are_answered(encoder_judge, tmp_path):
    rows = rows_for(4, seed=7)
    with (
        ServeProcess(
            ["--judge", encoder_judge, "--workers", "2", "--timeout", "60"], log=tmp_path / "server.log"
        ) as server,
        httpx.Client(base_url=server.url, timeout=90) as client,
    ):
        workers = server.worker_pids()
        assert len(workers) == 2
        os.kill(workers[0], signal.SIGKILL)
        # requests sent while the worker is dead and restarting: each answered (200 by the other worker, or
        # an error status), none left hanging
        with ThreadPoolExecutor(4) as pool:
            replies = list(pool.map(lambda _: client.post("/score", json={"rows": rows}), range(12)))
        assert all(r.status_code in (200, 500, 504) for r in replies)
        assert sum(r.status_code == 200 for r in replies) >= 1
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not (server.health() == 200 and len(server.worker_pids()) == 2):
            time.sleep(0.5)
        restarted = server.worker_pids()
        assert len(restarted) == 2 and workers[0] not in restarted and workers[1] in restarted
        after = client.post("/score", json={"rows": rows})
        assert after.status_code == 200 and len(after.json()["rows"]) == len(rows)
    assert server.process.returncode == 0
