"""A judge served by ``python -m bertjudge serve`` elsewhere, used as if it were here: ``Judge.load("http://host:8000")``.

``RemoteJudge`` answers the judge interface (``score``, ``score_records``, ``details``, ``describe``) by sending the
records to the server's ``POST /score`` and reading back the scores (``details``: the served judge's own details
rows, ``"details": true``), so ``judge``, ``evaluate``, the TRL reward and any program that takes a judge use a
served one unchanged. On construction it asks ``GET /info`` what the
server serves: the judge's ``name``, ``kind``, ``threshold`` and fingerprint (so that an interrupted ``judge`` run
resumes against the same judge, and refuses another) and the server's limits (``--max-rows``, ``--max-bytes``),
which size its requests.

- The token: ``token=``, else the environment variable ``BERTJUDGE_TOKEN`` (the one ``serve`` reads), sent as
  ``Authorization: Bearer <token>``. Use ``https://`` for a server beyond this machine.
- Requests: at most the server's ``max_rows`` rows and ``max_bytes`` bytes each, ``concurrency`` in flight at
  once (the server scores requests that arrive together in one batch); scores come back in input order.
- Faults: a connection error, a timeout and the answers 429, 500 (a worker died; the server restarts it), 502,
  503 and 504 are retried ``retries`` times, waiting ``backoff`` seconds, then twice that…, or what a
  ``Retry-After`` header asks. What is still failing then, a refused token (401, 403) and a server that is not a
  bertjudge server raise ``RemoteUnavailable``, a ``JudgeUnavailable``: ``judge`` and ``evaluate`` stop there
  (the rows done stay in the partial file, and a rerun once the server is back goes on from them) instead of
  writing every row as failed. A request refused for its rows (400, 413, 422) and a row the served judge failed
  on raise ``RemoteJudgeError`` naming the URL and the server's ``detail``: ``judge`` then scores that chunk's
  rows apart and writes the bad row with an ``error``, as for a local judge. Every message is one line.
- ``ascore_records`` is the same call for an event loop (``httpx.AsyncClient``), for RL loops that must not
  block (``evaluation.rewards.AsyncBertJudgeReward``).

Scores are the server's: those of ``judge`` with the server's judge for a request scored alone, to float32
rounding (about 1e-6) for rows of requests the server batched together.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import re
import time
from concurrent.futures import ThreadPoolExecutor
from email.utils import parsedate_to_datetime
from urllib.parse import urlsplit

import httpx
import numpy as np

from bertjudge.core.errors import BertJudgeError, JudgeUnavailable
from bertjudge.core.formats import FormatError, JudgeFormat
from bertjudge.judges.interface import BaseJudge, class_path

TOKEN_ENV = "BERTJUDGE_TOKEN"
URL_SCHEMES = ("http", "https")
RETRY_STATUSES = (429, 500, 502, 503, 504)  # the server busy, restarting a worker or behind a proxy that is
REFUSED_STATUSES = (401, 403)  # the client is refused, whatever the rows: no request can succeed
MAX_WAIT_S = 60.0  # the longest wait before a retry, whatever Retry-After asks
BODY_OVERHEAD = 64  # bytes of a request body besides its rows: {"rows": [...]}
# what describe() leaves out of the server's answer: the fingerprint (fingerprint()), the limits, and a routing
# judge's row counts, which count the rows the server's own copy routed, not this client's
NOT_DESCRIBED = ("fingerprint", "limits", "spec", "routing", "rows_per_route")


class RemoteJudgeError(BertJudgeError, RuntimeError):
    """The server refused a request for its rows (400, 413, 422) or failed on a row; one line with the URL."""


class RemoteUnavailable(RemoteJudgeError, JudgeUnavailable):
    """The server cannot be used: not reachable or failing after the retries, refusing the token, or not a
    bertjudge judge server. A run stops on it rather than failing its rows."""


class _Retry(Exception):
    """A failed try worth another (connection error, timeout, 429/5xx): why, and how long to wait at least."""

    def __init__(self, why: str, wait: float = 0.0):
        super().__init__(why)
        self.why, self.wait = why, wait


def _transport_why(err: httpx.TransportError, timeout: float) -> str:
    """A connection error in a few words: ``connection refused``, ``no answer within 30 s``…"""
    if isinstance(err, httpx.TimeoutException):
        return f"no answer within {timeout:g} s" if not isinstance(err, httpx.ConnectTimeout) else "connect timeout"
    text = re.sub(r"^\[Errno -?\d+\]\s*", "", str(err).strip().splitlines()[0] if str(err).strip() else "")
    if isinstance(err, (httpx.RemoteProtocolError, httpx.ReadError)):
        return f"connection closed by the server{f': {text}' if text else ''}"
    return (text[:1].lower() + text[1:]) if text else type(err).__name__


def _detail(response: httpx.Response) -> str:
    """The server's ``detail`` (bertjudge's and FastAPI's errors), else the start of the body; one line."""
    try:
        detail = response.json().get("detail")
    except (ValueError, AttributeError):
        detail = None
    text = detail if isinstance(detail, str) else json.dumps(detail) if detail is not None else response.text
    text = " ".join(str(text).split())
    return (text[:297] + "...") if len(text) > 300 else text or response.reason_phrase


def _retry_after(response: httpx.Response) -> float:
    """Seconds a ``Retry-After`` header asks to wait (0 without one)."""
    value = response.headers.get("retry-after", "").strip()
    if not value:
        return 0.0
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError, OverflowError):
        return 0.0


def _score(row: dict) -> float:
    """An answered row's score; NaN where the served judge gave none."""
    return math.nan if row.get("score") is None else float(row["score"])


class RemoteJudge(BaseJudge):
    """The judge a ``bertjudge serve`` server at ``url`` serves, behind the judge interface.

    Args:
        url: the server's root, ``http://host:port`` or ``https://host[/prefix]`` (``/score`` and ``/info`` are
            appended).
        token: the bearer token; None: ``$BERTJUDGE_TOKEN`` if set, else none.
        timeout: seconds to wait for one answer (the server answers 504 past its own ``--timeout``).
        retries: further tries of a request after a connection error, a timeout or a 429/500/502/503/504.
        backoff: seconds before the first retry, doubled for each further one.
        max_rows: most rows a request, for a server that does not say its ``--max-rows`` (256, ``serve``'s default).
        max_bytes: most bytes a request body, for a server that does not say its ``--max-bytes``.
        concurrency: requests in flight at once in one ``score_records`` call.

    Raises ``RemoteUnavailable`` (one line) when the server cannot be reached after the retries, refuses the
    token, or does not answer ``GET /info`` as a bertjudge server does.
    """

    def __init__(
        self,
        url: str,
        token: str | None = None,
        timeout: float = 120.0,
        retries: int = 3,
        backoff: float = 0.5,
        max_rows: int = 256,
        max_bytes: int = 4 * 1024 * 1024,
        concurrency: int = 4,
    ):
        parts = urlsplit(url)
        try:
            parts.port  # noqa: B018 - raises on a port that is not a number
        except ValueError:
            parts = None
        if not parts or parts.scheme.lower() not in URL_SCHEMES or not parts.hostname or parts.query or parts.fragment:
            raise ValueError(f"{url!r}: a judge server's URL is http://HOST:PORT or https://HOST[:PORT][/PATH]")
        for name, value, least in (("retries", retries, 0), ("max_rows", max_rows, 1), ("concurrency", concurrency, 1)):
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise ValueError(f"{name} must be a whole number of at least {least}, got {value!r}")
        if not timeout > 0 or backoff < 0 or max_bytes < BODY_OVERHEAD:
            raise ValueError("timeout must be positive, backoff at least 0 and max_bytes at least 64")
        self.url = url.rstrip("/")
        self.token = token if token is not None else os.environ.get(TOKEN_ENV) or None
        self.timeout, self.backoff = float(timeout), float(backoff)
        self.retries, self.concurrency = retries, concurrency
        self._client: httpx.Client | None = None
        info = self._info()
        self.info = info
        self.threshold = float(info["threshold"])
        limits = info.get("limits") or {}
        self.max_rows = int(limits.get("max_rows") or max_rows)
        self.max_bytes = int(limits.get("max_bytes") or max_bytes)

    # --- what the server serves ---------------------------------------------------------------------
    @property
    def name(self) -> str:
        """The served judge's name (``regex``, the exported folder's name…), as ``judge`` writes it."""
        return str(self.info["name"])

    def describe(self) -> dict:
        """The served judge's ``describe()`` as the server reports it (name, kind, threshold…) and ``url``."""
        described = {k: v for k, v in self.info.items() if k not in NOT_DESCRIBED}
        return {**described, "threshold": float(self.threshold), "url": self.url}

    def fingerprint(self) -> dict[str, str]:
        """What the scores depend on: the served judge's fingerprint as the server computes it (the files of its
        folder, its calibration and format; ``evaluation.scoring.judge_fingerprint``), so a partial ``judge`` run
        resumes only against the same judge, wherever it is served; a server that does not report one: the
        judge it describes and this URL."""
        own = self.info.get("fingerprint")
        if isinstance(own, dict) and own:
            return {str(k): str(v) for k, v in own.items()}
        described = json.dumps(self.describe(), sort_keys=True, default=str)
        return {"class": class_path(self), "url": self.url, "judge": described}

    def config(self) -> dict:
        """Its class and what it describes: the served judge (name, kind, threshold…) and ``url``."""
        return {"class": class_path(self), **self.describe()}

    def check_format(self, format: JudgeFormat | None) -> None:
        """Refuse ``format`` if the served judge was trained with another (a judge without a format: nothing)."""
        saved = self.info.get("format")
        if format is None or not isinstance(saved, dict):
            return
        try:
            format.check_matches(JudgeFormat.from_dict(saved), self.url)
        except FormatError as err:
            raise FormatError(" ".join(str(err).split())) from None

    def _info(self) -> dict:
        response = self._send(lambda client: client.get(self.url + "/info", headers=self._headers()))
        if response.status_code != 200:
            raise RemoteUnavailable(
                f"{self.url}: GET /info answered HTTP {response.status_code} ({_detail(response)}); "
                "is this a `python -m bertjudge serve` server?"
            )
        try:
            model = response.json()["model"]
            model["name"], float(model["threshold"])
        except (ValueError, KeyError, TypeError):
            raise RemoteUnavailable(
                f"{self.url}: GET /info does not describe a judge (no model name and threshold); "
                "is this a `python -m bertjudge serve` server?"
            ) from None
        return model

    # --- scoring -------------------------------------------------------------------------------------
    def score_records(self, records: list[dict], batch_size: int = 32, progress: bool = False) -> np.ndarray:
        """P(correct) per record (NaN where the served judge gave no verdict), in input order. ``batch_size`` is
        accepted for the common interface: the server scores with its own ``--batch-size``."""
        return np.array([_score(row) for row in self._served(records, progress)], dtype=float)

    def details(self, records: list[dict], batch_size: int = 32, progress: bool = False) -> list[dict]:
        """The served judge's ``details()`` row of each record (the rules' extracted answer, ``unparsed``, an
        encoder's ``logit``…), in input order, as the server's judge gives it here (a NaN as None)."""
        rows = self._served(records, progress, details=True)
        for row in rows:  # a server from before "details": true answers scores only
            row.setdefault("unparsed", row.get("score") is None)
        return [{key: value for key, value in row.items() if key != "id"} for row in rows]

    def _served(self, records: list[dict], progress: bool, details: bool = False) -> list[dict]:
        """The server's answered rows (``id``, ``score``, ``verdict``; with ``details``, the judge's details too) of
        ``records``, in input order: ``concurrency`` requests in flight at once."""
        requests = self._requests(records, details)
        self._client_now()  # one client for every thread below (httpx.Client is thread-safe)
        bar = None
        if progress and requests:
            from tqdm.auto import tqdm

            bar = tqdm(total=len(records), desc=f"judging with {self.url}", unit="row")

        def one(request: tuple[list, bytes]) -> list[dict]:
            ids, body = request
            rows = self._rows(self._send(lambda client: self._post(client, body)), ids)
            if bar is not None:
                bar.update(len(ids))
            return rows

        try:
            if len(requests) <= 1 or self.concurrency == 1:
                done = [one(request) for request in requests]
            else:
                with ThreadPoolExecutor(min(self.concurrency, len(requests))) as pool:
                    done = list(pool.map(one, requests))
        finally:
            if bar is not None:
                bar.close()
        return [row for rows in done for row in rows]

    async def ascore_records(self, records: list[dict], batch_size: int = 32) -> np.ndarray:
        """``score_records`` for an event loop: the requests go out on an ``httpx.AsyncClient``, ``concurrency``
        at a time, and the retries wait with ``asyncio.sleep``, so the loop goes on meanwhile."""
        requests = self._requests(records)
        if not requests:
            return np.array([], dtype=float)
        gate = asyncio.Semaphore(self.concurrency)
        async with httpx.AsyncClient(timeout=self.timeout) as client:

            async def one(request: tuple[list, bytes]) -> list[float]:
                ids, body = request
                async with gate:
                    response = await self._asend(client, body)
                return [_score(row) for row in self._rows(response, ids)]

            done = await asyncio.gather(*(one(request) for request in requests))
        return np.array([s for scores in done for s in scores], dtype=float)

    def _requests(self, records: list[dict], details: bool = False) -> list[tuple[list, bytes]]:
        """The records cut into requests of at most ``max_rows`` rows and ``max_bytes`` bytes: per request, the
        ids sent and the JSON body (a row larger than that goes alone, and the server refuses it with 413);
        ``details``: the body asks for the judge's details of each row."""
        requests: list[tuple[list, bytes]] = []
        ids: list = []
        rows: list[bytes] = []
        size = BODY_OVERHEAD
        end = b'], "details": true}' if details else b"]}"

        def close() -> None:
            requests.append((ids, b'{"rows": [' + b", ".join(rows) + end))

        for rec in records:
            row = json.dumps(rec, ensure_ascii=False, default=str).encode("utf-8")  # dates from Parquet as text
            if rows and (len(rows) >= self.max_rows or size + len(row) + 2 > self.max_bytes):
                close()
                ids, rows, size = [], [], BODY_OVERHEAD
            ids.append(rec.get("id"))
            rows.append(row)
            size += len(row) + 2
        if rows:
            close()
        return requests

    def _rows(self, response: httpx.Response, ids: list) -> list[dict]:
        """The rows of an answer to ``POST /score`` of rows with ``ids``; a refusal or a failed row raises."""
        if response.status_code != 200:
            raise RemoteJudgeError(f"{self.url}: POST /score answered HTTP {response.status_code}: {_detail(response)}")
        try:
            scored = response.json()["rows"]
        except (ValueError, KeyError, TypeError):
            raise RemoteJudgeError(f"{self.url}: POST /score answered 200 without a 'rows' list") from None
        if not isinstance(scored, list) or len(scored) != len(ids):
            got = len(scored) if isinstance(scored, list) else type(scored).__name__
            raise RemoteJudgeError(f"{self.url}: POST /score answered {got} rows for the {len(ids)} sent")
        for sent, row in zip(ids, scored):
            if not isinstance(row, dict) or sent is not None and row.get("id") != sent:
                got = row.get("id") if isinstance(row, dict) else row
                raise RemoteJudgeError(f"{self.url}: POST /score answered row {got!r} where {sent!r} was sent")
            if row.get("error"):
                raise RemoteJudgeError(f"{self.url}: row {row.get('id')!r}: {' '.join(str(row['error']).split())}")
        return scored

    # --- HTTP, with retries --------------------------------------------------------------------------
    def _headers(self) -> dict:
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}

    def _post(self, client, body: bytes):
        """``POST /score`` of a JSON body on ``client`` (an ``httpx.Client``, or an ``AsyncClient``: awaitable)."""
        headers = {**self._headers(), "Content-Type": "application/json"}
        return client.post(self.url + "/score", content=body, headers=headers)

    def _client_now(self) -> httpx.Client:
        if self._client is None:
            self._client = httpx.Client(timeout=self.timeout)
        return self._client

    def _check(self, response: httpx.Response) -> httpx.Response:
        """The response, or ``_Retry`` for a status worth another try; a refused token raises."""
        if response.status_code in RETRY_STATUSES:
            raise _Retry(f"HTTP {response.status_code}: {_detail(response)}", _retry_after(response))
        if response.status_code in REFUSED_STATUSES:
            raise RemoteUnavailable(
                f"{self.url}: HTTP {response.status_code}: {_detail(response)} "
                f"(the token: token= or ${TOKEN_ENV}{', which is not set' if not self.token else ''})"
            )
        return response

    def _wait(self, attempt: int, retry: _Retry) -> float:
        return min(MAX_WAIT_S, max(self.backoff * 2**attempt, retry.wait))

    def _gave_up(self, retry: _Retry) -> RemoteUnavailable:
        tries = f"{self.retries + 1} {'try' if self.retries == 0 else 'tries'}"
        if retry.why.startswith("HTTP "):
            return RemoteUnavailable(f"{self.url}: still failing after {tries} ({retry.why})")
        return RemoteUnavailable(f"{self.url}: not reachable after {tries} ({retry.why})")

    def _send(self, request) -> httpx.Response:
        """``request(client)`` with the retries; the last answer, or ``RemoteUnavailable``."""
        for attempt in range(self.retries + 1):
            try:
                try:
                    return self._check(request(self._client_now()))
                except httpx.TransportError as err:
                    raise _Retry(_transport_why(err, self.timeout)) from None
            except _Retry as retry:
                if attempt == self.retries:
                    raise self._gave_up(retry) from None
                time.sleep(self._wait(attempt, retry))
        raise AssertionError("unreachable")

    async def _asend(self, client: httpx.AsyncClient, body: bytes) -> httpx.Response:
        """``POST /score`` of ``body`` on ``client`` with the retries (``_send`` for an event loop)."""
        for attempt in range(self.retries + 1):
            try:
                try:
                    return self._check(await self._post(client, body))
                except httpx.TransportError as err:
                    raise _Retry(_transport_why(err, self.timeout)) from None
            except _Retry as retry:
                if attempt == self.retries:
                    raise self._gave_up(retry) from None
                await asyncio.sleep(self._wait(attempt, retry))
        raise AssertionError("unreachable")

    # --- lifetime ------------------------------------------------------------------------------------
    def close(self) -> None:
        """Close the connections kept open to the server (a later call opens new ones)."""
        if self._client is not None:
            self._client.close()
            self._client = None

    def __getstate__(self) -> dict:  # picklable (DataLoader workers, multiprocessing): without the connections
        return {**self.__dict__, "_client": None}

    def __repr__(self) -> str:
        return f"RemoteJudge({self.url!r}, name={self.name!r})"
