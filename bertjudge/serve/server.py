"""A judge behind an HTTP API, on LitServe (Lightning's serving engine): ``python -m bertjudge serve``.

``POST /score`` takes ``{"rows": [record, ...]}`` in the record schema (``bertjudge.core.records``) and
answers ``{"rows": [{"id", "score", "verdict"}, ...]}`` in order, scored by the judge's ``score_records``,
the code path of ``python -m bertjudge judge``; with ``"details": true``, each answered row is the judge's
``details()`` row instead (the rules' extracted answer, ``unparsed``, an encoder's ``logit``…) with its ``id``.
``GET /health`` is LitServe's (200 once every worker is ready), ``GET /metrics`` is Prometheus text,
``GET /openapi.json`` (and ``/docs``) describe the API, ``GET /info`` (LitServe's, behind the token) names the judge
(its ``describe()`` and fingerprint) and the ``limits`` (max rows and bytes a request): what
``Judge.load("http://host:port")`` (``judges.remote.RemoteJudge``) reads to act as the judge.

How a request travels:

1. the HTTP process (``ScoreGate``, an ASGI middleware in front of LitServe's FastAPI app) checks the
   bearer token (401), the body size (413), the JSON (400), the number of rows (413) and normalizes every
   row (422 naming ``rows[i]`` and the field), so that one bad request never reaches a worker;
2. LitServe queues it; an inference worker (``JudgeAPI``, one process each) takes up to
   ``max_batch_size`` waiting requests (waiting at most ``batch_timeout`` seconds for them), ``batch``
   joins their rows, ``predict`` scores them in one ``score_records`` call and ``unbatch`` splits the
   scores back per request; a row the judge fails on gets ``score`` and ``verdict`` null and an
   ``error``, as in `judge`'s output, and the other rows are scored;
3. a request not answered within ``timeout`` seconds is answered 504 by the gate; a worker that dies is
   restarted by LitServe, and the requests it held are answered 500.

Scores: a request scored on its own gets the very scores ``judge`` writes for a file of the same rows
(the same ``score_records`` call with the same ``batch_size``). Rows of requests batched together are
padded together, which moves an encoder's float32 scores by rounding only (about 1e-6).

(No ``from __future__ import annotations`` here: LitServe and FastAPI read ``decode_request``'s and
``encode_response``'s annotations at run time to build the endpoint and its OpenAPI description.)
"""

import asyncio
import contextlib
import hmac
import json
import math
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any

import torch
from pydantic import BaseModel, ConfigDict, Field

from bertjudge.core.records import CATEGORIES, RecordError, normalize
from bertjudge.evaluation.scoring import details_isolated, error_text, judge_fingerprint, score_isolated
from bertjudge.judges.interface import verdict_fields
from bertjudge.judges.loading import Judge

try:
    import litserve as ls
except ImportError:  # pragma: no cover - the `server` extra is not installed
    raise ImportError("python -m bertjudge serve needs LitServe: pip install 'bertjudge[server]'") from None

SCORE_PATH = "/score"
METRICS_PATH = "/metrics"
# reachable without the bearer token: liveness probes, scrapers and the API description
PUBLIC_PATHS = ("/health", METRICS_PATH, "/openapi.json", "/docs", "/docs/oauth2-redirect", "/redoc")
HOSTS = ("127.0.0.1", "0.0.0.0", "::")  # what LitServe binds

EXAMPLE_ROW = {
    "id": "q1-a",
    "question": "What is 17 * 3?",
    "candidate": "17 * 3 = 51, so the answer is 51.",
    "references": ["51"],
    "category": "open_math",
}


# ------------------------------------------------------------------------------ the HTTP schema
class ScoreRequest(BaseModel):
    """The body of ``POST /score``."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"rows": [EXAMPLE_ROW]}]})
    rows: list[dict[str, Any]] = Field(
        description="records in the bertjudge record schema: 'candidate' (the answer judged) and 'references' "
        "(a list of acceptable answers; or 'reference', a string) are required; 'question', 'id', "
        f"'category' (one of {', '.join(CATEGORIES)}; without one, inferred from the row as "
        "everywhere), 'task', 'label', 'meta' and the rest are optional. A row without 'id' gets the id `judge` would give it."
    )
    details: bool = Field(
        False,
        description="true: answer each row with the judge's details (what its details() gives: the rules' "
        "extracted answer, 'unparsed', an encoder's 'logit'...) besides id, score and verdict",
    )


class ScoredRow(BaseModel):
    model_config = ConfigDict(extra="allow")  # with "details": true, the judge's details fields too
    id: str = Field(description="the row's id (given, or derived from its fields as `judge` does)")
    score: float | None = Field(description="calibrated P(correct); null where the judge could not give a verdict")
    verdict: bool | None = Field(description="score >= the judge's threshold; null where score is null")
    error: str | None = Field(
        None, description="only on a row the judge failed on (score and verdict null), as in `judge`'s output"
    )


class ScoreResponse(BaseModel):
    """The answer of ``POST /score``: one scored row per row sent, in order."""

    rows: list[ScoredRow]


def check_rows(payload: Any, max_rows: int) -> list[dict]:
    """The normalized rows of a ``/score`` body; ``RecordError`` naming ``rows[i]`` and the field, or
    ``TooManyRows``."""
    if not isinstance(payload, dict) or "rows" not in payload:
        raise RecordError('body: expected a JSON object {"rows": [record, ...]}')
    rows = payload["rows"]
    if not isinstance(rows, list):
        raise RecordError(f"body: 'rows' must be a list of records, got {type(rows).__name__}")
    if not rows:
        raise RecordError("body: 'rows' is empty; send at least one record")
    if len(rows) > max_rows:
        raise TooManyRows(f"body: {len(rows)} rows, more than the limit of {max_rows} a request (--max-rows)")
    if not isinstance(payload.get("details", False), bool):
        raise RecordError(f"body: 'details' must be true or false, got {json.dumps(payload['details'])}")
    return [normalize(row, f"rows[{i}]") for i, row in enumerate(rows)]


class TooManyRows(ValueError):
    """A request with more rows than the server accepts (HTTP 413)."""


# ------------------------------------------------------------------------------ metrics
_METRICS: dict[str, Any] = {}
_METRICS_LOCK = threading.Lock()
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0)


def metrics() -> dict[str, Any]:
    """This process's Prometheus metrics, created once (multiprocess mode: ``PROMETHEUS_MULTIPROC_DIR``)."""
    with _METRICS_LOCK:
        if not _METRICS:
            from prometheus_client import Counter, Histogram

            _METRICS.update(
                requests=Counter(
                    "bertjudge_serve_requests", "POST /score requests answered, by HTTP status", ["code"], registry=None
                ),
                rows=Counter("bertjudge_serve_rows", "rows scored (in requests answered 200)", registry=None),
                failures=Counter(
                    "bertjudge_serve_failures",
                    "POST /score requests not answered 200, by reason "
                    "(unauthorized, too_large, bad_request, timeout, server_error, client_gone)",
                    ["reason"],
                    registry=None,
                ),
                latency=Histogram(
                    "bertjudge_serve_request_seconds",
                    "POST /score latency, from the first byte read to the answer",
                    buckets=LATENCY_BUCKETS,
                    registry=None,
                ),
                batch_requests=Histogram(
                    "bertjudge_serve_batch_requests",
                    "requests scored together in one dynamic batch",
                    buckets=(1, 2, 4, 8, 16, 32, 64, 128),
                    registry=None,
                ),
                batch_rows=Histogram(
                    "bertjudge_serve_batch_rows",
                    "rows scored together in one dynamic batch",
                    buckets=(1, 8, 32, 64, 128, 256, 512, 1024, 4096),
                    registry=None,
                ),
                predict=Histogram(
                    "bertjudge_serve_predict_seconds",
                    "time a worker spends scoring one dynamic batch",
                    buckets=LATENCY_BUCKETS,
                    registry=None,
                ),
            )
        return _METRICS


def metrics_text() -> tuple[bytes, str]:
    """Every process's metrics (HTTP process and workers, dead ones included), as Prometheus text."""
    from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
    from prometheus_client.multiprocess import MultiProcessCollector

    registry = CollectorRegistry()
    MultiProcessCollector(registry)
    return generate_latest(registry), CONTENT_TYPE_LATEST


def failure_reason(status: int) -> str:
    return {401: "unauthorized", 413: "too_large", 499: "client_gone", 504: "timeout"}.get(
        status, "server_error" if status >= 500 else "bad_request"
    )


# ------------------------------------------------------------------------------ the inference worker
@dataclass
class Rows:
    """The rows of one request, and whether it asked for the judge's details."""

    records: list[dict]
    details: bool = False


@dataclass
class Batch:
    """Rows of several requests joined for one ``score_records`` call (and one ``details`` call for those of the
    requests that asked for details), how many rows each sent, and which asked."""

    records: list[dict]
    sizes: list[int]
    details: list[bool]


class JudgeAPI(ls.LitAPI):
    """A bertjudge judge (any ``Judge.load`` spec) as a LitServe API at ``/score``, with dynamic batching.

    Args:
        spec: what ``Judge.load`` takes: ``regex``, an exported judge folder, a zoo name, ``cascade:``...
        batch_size: rows per forward pass in ``score_records`` (``judge --batch-size``).
        threads: torch threads per worker (None: torch's default).
        max_batch_size: most requests scored together; batch_timeout: seconds a worker waits to fill a batch.
    """

    def __init__(
        self,
        spec: str,
        batch_size: int = 32,
        threads: int | None = None,
        max_batch_size: int = 8,
        batch_timeout: float = 0.01,
    ):
        super().__init__(max_batch_size=max_batch_size, batch_timeout=batch_timeout, api_path=SCORE_PATH)
        self.judge_spec, self.batch_size, self.threads = spec, batch_size, threads
        self.judge = None

    def setup(self, device) -> None:
        if self.threads:
            torch.set_num_threads(self.threads)
        self.judge = Judge.load(self.judge_spec)
        if str(device) != "cpu":
            self.judge.place(device)
        metrics()  # this worker's metrics files exist from the start

    def decode_request(self, request: ScoreRequest) -> Rows:
        # the gate validated the rows already; normalizing again gives the records `judge` scores
        return Rows([normalize(row, f"rows[{i}]") for i, row in enumerate(request.rows)], request.details)

    def batch(self, inputs: list[Rows]) -> Batch:
        return Batch(
            [rec for rows in inputs for rec in rows.records],
            [len(r.records) for r in inputs],
            [r.details for r in inputs],
        )

    def predict(self, x: Batch | Rows) -> list:
        batch = x if isinstance(x, Batch) else Batch(x.records, [len(x.records)], [x.details])
        m = metrics()
        started = time.perf_counter()
        results = self._results(batch)
        m["predict"].observe(time.perf_counter() - started)
        m["batch_requests"].observe(len(batch.sizes))
        m["batch_rows"].observe(len(batch.records))
        outputs, start = [], 0
        for size in batch.sizes:
            outputs.append((batch.records[start : start + size], results[start : start + size]))
            start += size
        return outputs if isinstance(x, Batch) else outputs[0]

    def _results(self, batch: Batch) -> list:
        """Per row, its score (or, for a request that asked, its details row) or the exception it raised: the rows
        of the requests without details in one ``score_records`` call, the others in one ``details`` call."""
        wants = [want for want, size in zip(batch.details, batch.sizes) for _ in range(size)]
        bare = [rec for rec, want in zip(batch.records, wants) if not want]
        detailed = [rec for rec, want in zip(batch.records, wants) if want]
        scores = iter(score_isolated(self.judge, bare, self.batch_size) if bare else [])
        details = iter(details_isolated(self.judge, detailed, self.batch_size) if detailed else [])
        return [next(details) if want else next(scores) for want in wants]

    def unbatch(self, output: list) -> list:
        return list(output)

    def encode_response(self, output: tuple[list[dict], list]) -> dict:
        records, results = output
        return {"rows": [answer(rec["id"], result, self.judge.threshold) for rec, result in zip(records, results)]}


def answer(row_id: str, result, threshold: float) -> dict:
    """One row of the answer: ``id``, ``score``, ``verdict`` as `judge` writes them, or ``id`` and the judge's details
    row (``result`` a dict; JSON-ready: NaN as null); a row the judge failed on has ``score`` and ``verdict`` null and
    an ``error``, as in `judge`'s output."""
    if isinstance(result, BaseException):
        return {"id": row_id, "score": None, "verdict": None, "error": error_text(result)}
    if isinstance(result, dict):
        return {**plain(result), "id": row_id}
    fields = verdict_fields(result, threshold)
    return {"id": row_id, "score": fields["score"], "verdict": fields["verdict"]}


def plain(value):
    """``value`` as JSON holds it: numpy scalars as Python's, NaN and infinities as None, tuples as lists."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if hasattr(value, "item") and callable(value.item) and getattr(value, "ndim", 1) == 0:
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


# ------------------------------------------------------------------------------ the HTTP gate
@dataclass
class _Exchange:
    """One ``/score`` request as the metrics count it."""

    started: float
    status: int = 500
    rows: int = 0
    counted: bool = False


class ScoreGate:
    """ASGI middleware in the HTTP process: token, size and row limits, row validation, a deadline, metrics.

    Args:
        app: LitServe's FastAPI app.
        token: the bearer token every path but ``PUBLIC_PATHS`` needs (None: no token).
        max_bytes: largest ``/score`` body; max_rows: most rows a request.
        timeout: seconds after which a ``/score`` request not yet answered is answered 504.
    """

    def __init__(self, app, token: str | None, max_bytes: int, max_rows: int, timeout: float):
        self.app, self.token = app, token
        self.max_bytes, self.max_rows, self.timeout = max_bytes, max_rows, timeout

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        path = scope["path"]
        if self.token and path not in PUBLIC_PATHS and not self._authorized(scope):
            if path == SCORE_PATH:
                self._count(_Exchange(started=time.perf_counter(), status=401))
            return await _reply(
                send,
                401,
                "missing or wrong bearer token: send 'Authorization: Bearer <token>'",
                {"www-authenticate": "Bearer"},
            )
        if path == METRICS_PATH:
            body, content_type = metrics_text()
            return await _reply_raw(send, 200, body, content_type)
        if path != SCORE_PATH or scope["method"] != "POST":
            return await self.app(scope, receive, send)
        # counted as the answer's last byte is handed over, so a client that has its answer sees it in /metrics
        exchange = _Exchange(started=time.perf_counter())

        async def send_counted(message):
            if message["type"] == "http.response.start":
                exchange.status = message["status"]
            elif message["type"] == "http.response.body" and not message.get("more_body", False):
                self._count(exchange)
            await send(message)

        exchange.status = await self._score(scope, receive, send_counted, exchange)
        self._count(exchange)  # a client that left (499) had no answer to count with

    def _authorized(self, scope) -> bool:
        headers = dict(scope["headers"])
        given = headers.get(b"authorization", b"").decode("latin-1")
        scheme, _, credential = given.partition(" ")
        return scheme.lower() == "bearer" and hmac.compare_digest(credential.strip().encode(), self.token.encode())

    def _count(self, exchange: _Exchange) -> None:
        """Count one ``/score`` request once, however many times it is called for it."""
        if exchange.counted:
            return
        exchange.counted = True
        status, rows, seconds = exchange.status, exchange.rows, time.perf_counter() - exchange.started
        m = metrics()
        m["requests"].labels(code=str(status)).inc()
        m["latency"].observe(seconds)
        if status == 200:
            m["rows"].inc(rows)
        else:
            m["failures"].labels(reason=failure_reason(status)).inc()

    async def _score(self, scope, receive, send, exchange: _Exchange) -> int:
        """Check the request, pass it to LitServe, answer 504 past the deadline: the status.

        ``exchange.rows`` is set once the rows are read and checked (it stays 0 for a refused request).
        """
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            return await _reply(
                send, 413, f"body of {int(declared)} bytes, more than the limit of {self.max_bytes} (--max-bytes)"
            )
        chunks, size = [], 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return 499  # the client left; nothing to answer
            size += len(message.get("body", b""))
            if size > self.max_bytes:
                return await _reply(send, 413, f"body of more than {self.max_bytes} bytes (--max-bytes)")
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        try:
            payload = json.loads(body)
        except (json.JSONDecodeError, UnicodeDecodeError) as err:
            return await _reply(send, 400, f"body: not valid JSON ({err})")
        try:
            rows = check_rows(payload, self.max_rows)
        except TooManyRows as err:
            return await _reply(send, 413, str(err))
        except RecordError as err:
            return await _reply(send, 422, str(err))
        exchange.rows = len(rows)

        # the body is JSON (checked above), whatever Content-Type the client sent (curl -d sends a form's)
        headers = [(k, v) for k, v in scope["headers"] if k != b"content-type"]
        scope = {**scope, "headers": [*headers, (b"content-type", b"application/json")]}
        sent_body = False

        async def replay():
            nonlocal sent_body
            if not sent_body:
                sent_body = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        status, started = 500, False

        async def watch(message):
            nonlocal status, started
            if message["type"] == "http.response.start":
                status, started = message["status"], True
            await send(message)

        try:
            await asyncio.wait_for(self.app(scope, replay, watch), self.timeout)
        except asyncio.TimeoutError:
            if started:
                raise
            return await _reply(
                send,
                504,
                f"not answered within {self.timeout:g} s (--timeout); the server is overloaded or a worker died",
            )
        return status


async def _reply(send, status: int, detail: str, headers: dict | None = None) -> int:
    body = json.dumps({"detail": detail}).encode()
    await _reply_raw(send, status, body, "application/json", headers)
    return status


async def _reply_raw(send, status: int, body: bytes, content_type: str, headers: dict | None = None) -> None:
    raw = [(b"content-type", content_type.encode()), (b"content-length", str(len(body)).encode())]
    raw += [(k.encode(), v.encode()) for k, v in (headers or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})


# ------------------------------------------------------------------------------ the server
@dataclass
class ServeConfig:
    """What ``python -m bertjudge serve`` takes (see its ``--help``)."""

    judge: str
    port: int = 8000
    host: str = "127.0.0.1"
    workers: int = 1
    max_batch_size: int = 8
    batch_timeout: float = 0.01
    batch_size: int = 32
    max_rows: int = 256
    max_bytes: int = 4 * 1024 * 1024
    token: str | None = None
    timeout: float = 60.0
    accelerator: str = "cpu"
    threads: int | None = None
    log_level: str = "warning"

    def check(self) -> None:
        """Refuse a setting LitServe or the gate cannot use, naming the flag."""
        problems = [
            (self.host not in HOSTS, f"--host must be one of {', '.join(HOSTS)}, got {self.host!r}"),
            (not 1024 <= self.port <= 65535, f"--port must be from 1024 to 65535, got {self.port}"),
            (self.workers < 1, "--workers must be at least 1"),
            (self.max_batch_size < 1, "--max-batch-size must be at least 1"),
            (not 0 <= self.batch_timeout < self.timeout, "--batch-timeout must be >= 0 and below --timeout"),
            (self.batch_size < 1, "--batch-size must be at least 1"),
            (self.max_rows < 1, "--max-rows must be at least 1"),
            (self.max_bytes < 64, "--max-bytes must be at least 64"),
            (not self.timeout > 0, "--timeout must be positive"),
            (self.token is not None and not self.token.strip(), "--token must not be empty"),
            (self.accelerator not in ("cpu", "cuda", "auto"), "--accelerator must be cpu, cuda or auto"),
            (self.threads is not None and self.threads < 1, "--threads must be at least 1"),
        ]
        for bad, message in problems:
            if bad:
                raise ValueError(message)


class JudgeServer(ls.LitServer):
    """LitServer whose HTTP servers run as threads of the main process (the default, ``serve``): there,
    LitServe's worker monitor answers 500 to the requests a dead worker held. It also stops those threads
    on shutdown, which LitServe leaves running (it ``terminate()``s processes only)."""

    def _perform_graceful_shutdown(self, manager, uvicorn_workers, shutdown_reason="normal"):
        threads = {k: w for k, w in uvicorn_workers.items() if isinstance(w, threading.Thread)}
        for thread in threads.values():
            uvicorn_server = getattr(getattr(thread, "_target", None), "__self__", None)
            if uvicorn_server is not None:
                uvicorn_server.should_exit = True
        deadline = time.monotonic() + 5
        for thread in threads.values():
            thread.join(timeout=max(0.0, deadline - time.monotonic()))
            if thread.is_alive():  # requests still waiting: stop without them
                uvicorn_server = getattr(getattr(thread, "_target", None), "__self__", None)
                if uvicorn_server is not None:
                    uvicorn_server.force_exit = True
                thread.join(timeout=2)
        rest = {k: w for k, w in uvicorn_workers.items() if k not in threads}
        super()._perform_graceful_shutdown(manager, rest, shutdown_reason)


def describe_judge(spec: str) -> dict:
    """Load the judge once in the server's process (a bad spec fails here, before any worker starts) and
    say what it is: its ``describe()`` and ``fingerprint`` (what its scores depend on: a ``RemoteJudge``
    resumes a ``judge`` run only against the same judge), as JSON."""
    judge = Judge.load(spec)
    described = json.loads(json.dumps({**judge.describe(), "fingerprint": judge_fingerprint(judge)}, default=str))
    del judge
    return {"spec": spec, **described}


def build_server(config: ServeConfig, judge_info: dict | None = None) -> JudgeServer:
    """The LitServer (not started) for ``config``: ``JudgeAPI`` workers, the gate, ``/metrics``, OpenAPI."""
    config.check()
    threads = config.threads or (max(1, (os.cpu_count() or 1) // config.workers) if config.workers > 1 else None)
    api = JudgeAPI(
        config.judge,
        batch_size=config.batch_size,
        threads=threads,
        max_batch_size=config.max_batch_size,
        batch_timeout=config.batch_timeout,
    )
    server = JudgeServer(
        api,
        accelerator=config.accelerator,
        workers_per_device=config.workers,
        timeout=config.timeout,
        # GET /info: the judge, and the limits a client (judges.remote.RemoteJudge) sizes its requests by
        model_metadata={
            **(judge_info or {"spec": config.judge}),
            "limits": {"max_rows": config.max_rows, "max_bytes": config.max_bytes},
        },
        restart_workers=True,
    )
    app = server.app
    app.title = "bertjudge judge server"
    app.version = "1"
    app.description = (
        f"Scores (question, candidate, references) rows with the judge {config.judge!r}: the scores "
        "of `python -m bertjudge judge`. Limits: "
        f"{config.max_rows} rows and {config.max_bytes} bytes a request, {config.timeout:g} s."
    )
    app.add_api_route(
        METRICS_PATH,
        _metrics_route,
        methods=["GET"],
        summary="Prometheus metrics",
        description="requests, rows, latency, failures (HTTP process) and dynamic batch sizes "
        "(workers), as Prometheus text",
    )
    _document(app, config)
    app.add_middleware(
        ScoreGate, token=config.token, max_bytes=config.max_bytes, max_rows=config.max_rows, timeout=config.timeout
    )
    return server


async def _metrics_route():  # answered by the gate; the route puts /metrics in the API description
    from fastapi.responses import Response

    body, content_type = metrics_text()
    return Response(body, media_type=content_type)


def _document(app, config: ServeConfig) -> None:
    """Describe in the OpenAPI schema what the gate answers (401, 413, 422, 504) and the bearer token."""
    generate = app.openapi

    def openapi() -> dict:
        if app.openapi_schema:
            return app.openapi_schema
        schema = generate()
        post = schema["paths"][SCORE_PATH]["post"]
        post["summary"] = "Score rows with the judge"
        post["description"] = (
            "One scored row per row sent, in order. Rows of requests that arrive together are "
            'scored in one batch (dynamic batching). With "details": true, each row holds the judge\'s details too.'
        )
        schemas = schema.setdefault("components", {}).setdefault("schemas", {})
        answer_schema = ScoreResponse.model_json_schema(ref_template="#/components/schemas/{model}")
        schemas.update(answer_schema.pop("$defs", {}), ScoreResponse=answer_schema)
        post["responses"]["200"] = {  # encode_response returns a plain dict: rows carry "error" only if failed
            "description": "one scored row per row sent, in order",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ScoreResponse"}}},
        }
        error = {"application/json": {"schema": {"type": "object", "properties": {"detail": {"type": "string"}}}}}
        for code, what in (
            ("400", "the body is not JSON"),
            ("401", "missing or wrong bearer token (when the server has one)"),
            ("413", f"more than {config.max_rows} rows or {config.max_bytes} bytes"),
            ("422", "a row outside the record schema: the detail names rows[i] and the field"),
            ("500", "the worker scoring this request died (LitServe restarts it)"),
            ("504", f"not answered within {config.timeout:g} s"),
        ):
            post["responses"][code] = {"description": what, "content": error}
        if config.token:
            schema.setdefault("components", {}).setdefault("securitySchemes", {})["bearer"] = {
                "type": "http",
                "scheme": "bearer",
            }
            post["security"] = [{"bearer": []}]
        app.openapi_schema = schema
        return schema

    app.openapi = openapi


def serve(config: ServeConfig, ready=None) -> None:
    """Run the server until SIGINT or SIGTERM (then stop its workers). ``ready(judge_info)`` is called
    once the judge has loaded, before the workers start."""
    config.check()
    own_dir = "PROMETHEUS_MULTIPROC_DIR" not in os.environ
    metrics_dir = tempfile.mkdtemp(prefix="bertjudge-serve-metrics-") if own_dir else None
    if own_dir:
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = metrics_dir  # read when the first metric is made
    try:
        info = describe_judge(config.judge)
        server = build_server(config, info)
        if ready is not None:
            ready(info)

        def stop(signum, frame):  # SIGTERM: shut down as Ctrl-C does, workers included
            raise KeyboardInterrupt

        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, stop)
        server.run(
            host=config.host,
            port=config.port,
            num_api_servers=1,
            api_server_worker_type="thread",
            generate_client_file=False,
            log_level=config.log_level,
        )
    finally:
        if own_dir:
            os.environ.pop("PROMETHEUS_MULTIPROC_DIR", None)
            shutil.rmtree(metrics_dir, ignore_errors=True)


# ------------------------------------------------------------------------------ a server in a child process
def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port free on ``host`` now."""
    with socket.socket() as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


class ServeProcess:
    """``python -m bertjudge serve ARGS --port P`` in a child process of its own session, for scripts and tests.

    ``start()`` waits until ``/health`` answers 200 (every worker has loaded the judge); ``stop()`` sends
    SIGTERM (the server stops its workers) and kills the session if it has not ended within ``timeout``.

    Args:
        args: the command's arguments after ``serve`` (``--judge J`` ...), without ``--port``.
        port: None: a free one. log: file for the server's stdout and stderr (None: discarded).
        env: extra environment variables.
    """

    def __init__(
        self, args: list[str], port: int | None = None, log: str | os.PathLike | None = None, env: dict | None = None
    ):
        self.port = port or free_port()
        self.args, self.log, self.env = list(args), log, env or {}
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen | None = None

    def start(self, timeout: float = 180.0) -> "ServeProcess":
        command = [sys.executable, "-m", "bertjudge", "serve", *self.args, "--port", str(self.port)]
        out = open(self.log, "ab") if self.log else subprocess.DEVNULL
        try:
            self.process = subprocess.Popen(
                command, stdout=out, stderr=subprocess.STDOUT, start_new_session=True, env={**os.environ, **self.env}
            )
        finally:
            if self.log:
                out.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"bertjudge serve exited with {self.process.returncode} before it was healthy{self._log_tail()}"
                )
            if self.health() == 200:
                return self
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"bertjudge serve was not healthy within {timeout:g} s{self._log_tail()}")

    def health(self) -> int | None:
        """The status of ``GET /health`` (None: no answer)."""
        try:
            with urllib.request.urlopen(self.url + "/health", timeout=5) as response:
                return response.status
        except urllib.error.HTTPError as err:
            return err.code
        except (OSError, urllib.error.URLError):
            return None

    def worker_pids(self) -> list[int]:
        """The pids of the inference workers (LitServe spawns them: ``spawn_main`` in their command line)."""
        import psutil

        if self.process is None or self.process.poll() is not None:
            return []
        pids = []
        for child in psutil.Process(self.process.pid).children(recursive=True):
            try:
                if any("spawn_main" in part for part in child.cmdline()):
                    pids.append(child.pid)
            except psutil.Error:  # ended meanwhile
                continue
        return sorted(pids)

    def stop(self, timeout: float = 30.0) -> int | None:
        """SIGTERM, then SIGKILL to the server's session after ``timeout``; its exit code."""
        if self.process is None:
            return None
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                pass
        with contextlib.suppress(ProcessLookupError, PermissionError):  # whatever the server left behind
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()
        return self.process.returncode

    def _log_tail(self) -> str:
        if not self.log or not os.path.exists(self.log):
            return ""
        with open(self.log, encoding="utf-8", errors="replace") as handle:
            return ":\n" + "".join(handle.readlines()[-15:])

    def __enter__(self) -> "ServeProcess":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
