"""``python -m bertjudge serve``: a judge behind an HTTP API (LitServe): /score, /health, /metrics."""

from __future__ import annotations

import argparse
import os
import sys

from bertjudge.cli.common import CommandError
from bertjudge.judges.routing import SPEC_HELP
from bertjudge.serve.server import ServeConfig, serve

TOKEN_ENV = "BERTJUDGE_TOKEN"


DESCRIPTION = f"""Serve a judge over HTTP with LitServe until Ctrl-C or SIGTERM.

  POST /score     {{"rows": [record, ...]}} -> {{"rows": [{{"id", "score", "verdict"}}, ...]}}, in order;
                  the scores of `python -m bertjudge judge` for the same rows. Records as in the files
                  `judge` reads: 'candidate' and 'references' (or 'reference'), optional 'question', 'id',
                  'category'... A bad row: 422 naming rows[i] and the field (no row of that request is
                  scored); too many rows or bytes: 413; no answer within --timeout: 504.
  GET  /health    200 "ok" once every worker has loaded the judge, 503 before
  GET  /metrics   Prometheus: requests, rows, latency, failures, dynamic batch sizes
  GET  /docs      the API (OpenAPI at /openapi.json)
  GET  /info      the judge (name, kind, threshold, fingerprint) and the limits; what a client's
                  Judge.load("http://HOST:PORT") reads (`judge --judge http://HOST:PORT` scores with it)

Requests that arrive together are scored together (dynamic batching): a worker takes up to
--max-batch-size waiting requests, waiting at most --batch-timeout seconds for them. With a token
(--token or ${TOKEN_ENV}), every path but /health, /metrics and the API description needs the
header 'Authorization: Bearer <token>' (401 without). A worker that dies is restarted; the requests
it held are answered 500."""


def parser() -> argparse.ArgumentParser:
    d = ServeConfig(judge="")
    p = argparse.ArgumentParser(
        prog="python -m bertjudge serve",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=DESCRIPTION,
        epilog="example: python -m bertjudge serve --judge runs/quickstart/judge --port 8000\n"
        '         curl -s localhost:8000/score -d \'{"rows": [{"question": "2+2?", "candidate": "4", '
        '"references": ["4"]}]}\'',
    )
    p.add_argument(
        "--judge", required=True, help=f"'regex', 'contains', the folder of an exported judge, a zoo name, {SPEC_HELP}"
    )
    p.add_argument("--port", type=int, default=d.port, help=f"port to listen on (default {d.port})")
    p.add_argument(
        "--host",
        default=d.host,
        help="interface: 127.0.0.1 (this machine only, the default), 0.0.0.0 or :: (every interface: set a token)",
    )
    p.add_argument(
        "--workers",
        type=int,
        default=d.workers,
        help=f"inference worker processes, each with its own copy of the judge (default {d.workers}); "
        "per device with --accelerator cuda",
    )
    p.add_argument(
        "--max-batch-size",
        type=int,
        default=d.max_batch_size,
        help=f"most requests scored together in one batch (default {d.max_batch_size})",
    )
    p.add_argument(
        "--batch-timeout",
        type=float,
        default=d.batch_timeout,
        help=f"seconds a worker waits for more requests to fill a batch (default {d.batch_timeout:g})",
    )
    p.add_argument(
        "--batch-size",
        type=int,
        default=d.batch_size,
        help=f"rows per forward pass, as `judge --batch-size` (default {d.batch_size})",
    )
    p.add_argument(
        "--max-rows", type=int, default=d.max_rows, help=f"most rows a request (default {d.max_rows}; 413 beyond)"
    )
    p.add_argument(
        "--max-bytes",
        type=int,
        default=d.max_bytes,
        help=f"largest request body in bytes (default {d.max_bytes}; 413 beyond)",
    )
    p.add_argument(
        "--token",
        default=None,
        help=f"bearer token requests must send (default: ${TOKEN_ENV} if set, else none; the "
        "variable keeps it out of the process list)",
    )
    p.add_argument(
        "--timeout",
        type=float,
        default=d.timeout,
        help=f"seconds after which an unanswered request is answered 504 (default {d.timeout:g})",
    )
    p.add_argument(
        "--accelerator",
        default=d.accelerator,
        choices=("cpu", "cuda", "auto"),
        help="where the judge runs (default cpu, where `judge` scores; on cuda, scores can differ "
        "from `judge`'s by float rounding)",
    )
    p.add_argument(
        "--threads",
        type=int,
        default=None,
        help="torch threads per worker (default: torch's with one worker, else CPUs / workers)",
    )
    p.add_argument(
        "--log-level",
        default=d.log_level,
        choices=("critical", "error", "warning", "info", "debug"),
        help=f"server log level (default {d.log_level}; info logs every request)",
    )
    return p


def run(args: argparse.Namespace) -> int:
    token = args.token if args.token is not None else os.environ.get(TOKEN_ENV) or None
    config = ServeConfig(
        judge=args.judge,
        port=args.port,
        host=args.host,
        workers=args.workers,
        max_batch_size=args.max_batch_size,
        batch_timeout=args.batch_timeout,
        batch_size=args.batch_size,
        max_rows=args.max_rows,
        max_bytes=args.max_bytes,
        token=token,
        timeout=args.timeout,
        accelerator=args.accelerator,
        threads=args.threads,
        log_level=args.log_level,
    )
    try:
        config.check()
    except ValueError as e:
        raise CommandError(str(e), usage=True) from None

    if args.host != "127.0.0.1" and not token:
        print(
            f"bertjudge serve: warning: listening on every interface ({args.host}) without a token; anyone who "
            f"reaches this machine can use the judge (set --token or ${TOKEN_ENV})",
            file=sys.stderr,
        )

    def ready(info: dict) -> None:
        shown = "localhost" if args.host == "127.0.0.1" else args.host
        print(
            f"serving {info.get('name', args.judge)} ({info.get('kind', '?')}) on http://{shown}:{args.port}: "
            f"POST /score, GET /health, GET /metrics, /docs; {args.workers} worker(s), up to "
            f"{args.max_batch_size} requests a batch{', bearer token required' if token else ''}",
            flush=True,
        )

    try:
        serve(config, ready=ready)
    except KeyboardInterrupt:
        pass
    print("bertjudge serve: stopped", file=sys.stderr)
    return 0
