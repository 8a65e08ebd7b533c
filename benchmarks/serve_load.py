"""Load test of `python -m bertjudge serve`: a real HTTP client (httpx, a thread pool) against a server it
starts on loopback, bounded in requests and in time.

    python benchmarks/serve_load.py --judge runs/quickstart/judge --requests 96 --rows 8 --concurrency 4
    python benchmarks/serve_load.py --judge runs/quickstart/judge --workers 2 --kill-worker   # + a fault phase

1. The row pool (``--data``, real development rows by default) is scored once by the `judge` command
   itself (its entry point, ``bertjudge.cli.main.main(["judge", ...])``): the reference scores.
2. The server starts (`python -m bertjudge serve`, its own process group); the time until `/health` is
   200 is reported.
3. **steady**: ``--requests`` requests of ``--rows`` rows drawn from the pool (seeded), ``--concurrency``
   at a time, none sent after ``--max-seconds``. Every answer's rows are checked against the `judge`
   command's scores (ids in order, |score difference| <= ``--tolerance``, the same verdict; how many
   are bitwise equal is reported too: rows batched with other requests' are padded with them, which
   moves float32 scores by rounding).
4. **kill-worker** (``--kill-worker``): as many requests again; once half of them are answered (or half
   of ``--max-seconds`` has passed), one inference worker process is killed (SIGKILL). Then the client waits until the server is healthy with
   every worker back, and sends ``--after`` more requests, which must all succeed.

Each phase counts requests sent, answered 200, refused (an HTTP error status, by code) and lost (no
HTTP answer within ``--client-timeout``: a dropped request), and reports requests/s, rows/s, p50/p99
latency and the mean number of requests per dynamic batch (from the server's /metrics). One CSV row a
phase is appended to ``benchmarks/results/serve-load-<host>.csv``, with the load average
(``os.getloadavg()``) before and after: the machine may be running other jobs. Exit 1 if a request is
lost, a score differs, a steady request is refused, or the server does not recover.
"""

from __future__ import annotations

import argparse
import csv
import os
import platform
import random
import re
import shlex
import signal
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import numpy as np

from bertjudge.cli.main import main as bertjudge_main
from bertjudge.core.records import read_records, write_records
from bertjudge.data.sources import load_source
from bertjudge.serve.server import ServeProcess

DATA = ["data/real/evouna-tq-v1.jsonl.gz?split=val&n=32&seed=0", "data/real/manual-v3.jsonl.gz?n=32&seed=0"]
RESULTS = Path("benchmarks/results")
SENT_FIELDS = ("id", "task", "category", "question", "candidate", "references")


@dataclass
class Outcome:
    """One request: when, what came back, and how its scores compare with the `judge` command's."""

    index: int
    rows: int
    started: float = 0.0
    seconds: float = 0.0
    status: int | None = None  # None: no HTTP answer
    error: str = ""
    compared: int = 0
    bitwise: int = 0
    max_diff: float = 0.0
    wrong: list = field(default_factory=list)  # rows whose id, score or verdict does not match


@dataclass
class Phase:
    name: str
    outcomes: list[Outcome]
    not_sent: int
    wall: float
    batching: float | None
    killed: int | None = None
    recovered_s: float | None = None
    after_ok: int | None = None
    after_sent: int | None = None


def reference_scores(judge: str, pool: list[dict], batch_size: int, folder: Path) -> tuple[dict, float]:
    """The `judge` command's output for the pool, by id, and its wall time."""
    source, scored = folder / "pool.jsonl", folder / "pool-scored.jsonl"
    write_records(source, pool)
    started = time.perf_counter()
    code = bertjudge_main(
        [
            "judge",
            "--judge",
            judge,
            "--input",
            str(source),
            "--output",
            str(scored),
            "--batch-size",
            str(batch_size),
            "--no-progress",
        ]
    )
    if code != 0:
        raise SystemExit(f"the judge command failed (exit {code})")
    return {r["id"]: r for r in read_records(scored)}, time.perf_counter() - started


def check(outcome: Outcome, sent: list[dict], answer: dict, reference: dict, tolerance: float) -> None:
    got = answer.get("rows", [])
    if [g.get("id") for g in got] != [r["id"] for r in sent]:
        outcome.wrong.append("ids or order differ")
        return
    for g in got:
        ref = reference[g["id"]]
        outcome.compared += 1
        if g["score"] is None or ref["score"] is None:
            if g["score"] != ref["score"]:
                outcome.wrong.append(g["id"])
            continue
        diff = abs(g["score"] - ref["score"])
        outcome.max_diff = max(outcome.max_diff, diff)
        outcome.bitwise += g["score"] == ref["score"]
        if diff > tolerance or g["verdict"] != ref["verdict"]:
            outcome.wrong.append(g["id"])


def batching(url: str, headers: dict) -> tuple[float, float]:
    """(requests, batches) scored so far, from the server's /metrics."""
    text = httpx.get(url + "/metrics", headers=headers, timeout=30).text

    def sample(name: str) -> float:
        found = re.search(rf"^{name} ([0-9.e+-]+)$", text, re.MULTILINE)
        return float(found.group(1)) if found else 0.0

    return sample("bertjudge_serve_batch_requests_sum"), sample("bertjudge_serve_batch_requests_count")


def run_phase(
    name: str, server: ServeProcess, pool: list[dict], reference: dict, args, first_index: int, kill: bool = False
) -> Phase:
    headers = {"Authorization": f"Bearer {args.token}"} if args.token else {}
    local = threading.local()
    answered = 0
    lock = threading.Lock()
    half = threading.Event()
    started = time.perf_counter()
    deadline = started + args.max_seconds
    batch_before = batching(server.url, headers)

    def one(index: int) -> Outcome | None:
        nonlocal answered
        if time.perf_counter() > deadline:
            return None
        if not hasattr(local, "client"):
            local.client = httpx.Client(base_url=server.url, timeout=args.client_timeout, headers=headers)
        rows = random.Random(index).sample(pool, args.rows)
        outcome = Outcome(index, len(rows), started=time.perf_counter() - started)
        t0 = time.perf_counter()
        try:
            reply = local.client.post("/score", json={"rows": rows})
            outcome.status = reply.status_code
            if reply.status_code == 200:
                check(outcome, rows, reply.json(), reference, args.tolerance)
            else:
                outcome.error = reply.text[:200]
        except httpx.HTTPError as err:  # no HTTP answer: a lost request
            outcome.error = f"{type(err).__name__}: {err}"
        outcome.seconds = time.perf_counter() - t0
        with lock:
            answered += 1
            if answered >= args.requests // 2:
                half.set()
        return outcome

    killed = None
    kill_at = None
    with ThreadPoolExecutor(args.concurrency) as pool_:
        futures = [pool_.submit(one, first_index + i) for i in range(args.requests)]
        if kill:
            half.wait(timeout=args.max_seconds / 2)  # half the requests answered, or half the time gone
            victims = server.worker_pids()
            if victims:
                killed = victims[0]
                kill_at = time.perf_counter()
                os.kill(killed, signal.SIGKILL)  # a process of the server this script started
                print(
                    f"killed inference worker pid {killed} after {answered} answers "
                    f"({kill_at - started:.1f} s into the phase)",
                    flush=True,
                )
        results = [f.result() for f in futures]
    wall = time.perf_counter() - started
    outcomes = [r for r in results if r is not None]
    batch_after = batching(server.url, headers)
    requests, batches = (a - b for a, b in zip(batch_after, batch_before))
    phase = Phase(
        name, outcomes, sum(r is None for r in results), wall, requests / batches if batches else None, killed=killed
    )
    if kill and killed is not None:
        # recovered: healthy, with as many workers as asked and the killed one gone
        limit = time.perf_counter() + args.recovery_seconds
        while time.perf_counter() < limit:
            pids = server.worker_pids()
            if server.health() == 200 and len(pids) == args.workers and killed not in pids:
                phase.recovered_s = time.perf_counter() - kill_at
                break
            time.sleep(0.25)
        after = [Outcome(i, args.rows) for i in range(args.after)]
        with httpx.Client(base_url=server.url, timeout=args.client_timeout, headers=headers) as client:
            for outcome in after:
                rows = random.Random(10**6 + outcome.index).sample(pool, args.rows)
                try:
                    reply = client.post("/score", json={"rows": rows})
                    outcome.status = reply.status_code
                    if reply.status_code == 200:
                        check(outcome, rows, reply.json(), reference, args.tolerance)
                except httpx.HTTPError as err:
                    outcome.error = str(err)
        phase.after_sent = len(after)
        phase.after_ok = sum(o.status == 200 and not o.wrong for o in after)
    return phase


def summary(phase: Phase, args, load_before, load_after, server_start_s: float, reference_s: float) -> dict:
    out = phase.outcomes
    ok = [o for o in out if o.status == 200]
    refused = [o for o in out if o.status is not None and o.status != 200]
    lost = [o for o in out if o.status is None]
    codes = {}
    for o in refused:
        codes[o.status] = codes.get(o.status, 0) + 1
    latency = np.array([o.seconds for o in ok]) * 1000
    rows_ok = sum(o.rows for o in ok)
    return {
        "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "host": platform.node() or "host",
        "phase": phase.name,
        "judge": args.judge,
        "requests": args.requests,
        "rows_per_request": args.rows,
        "concurrency": args.concurrency,
        "workers": args.workers,
        "max_batch_size": args.max_batch_size,
        "batch_timeout_s": args.batch_timeout,
        "sent": len(out),
        "answered_200": len(ok),
        "refused": len(refused),
        "refused_by_status": " ".join(f"{k}:{v}" for k, v in sorted(codes.items())),
        "lost": len(lost),
        "not_sent": phase.not_sent,
        "wall_s": round(phase.wall, 2),
        "requests_per_s": round(len(ok) / phase.wall, 2),
        "rows_per_s": round(rows_ok / phase.wall, 1),
        "p50_ms": round(float(np.percentile(latency, 50)), 1) if len(latency) else "",
        "p99_ms": round(float(np.percentile(latency, 99)), 1) if len(latency) else "",
        "mean_requests_per_batch": round(phase.batching, 2) if phase.batching else "",
        "rows_checked": sum(o.compared for o in out),
        "rows_bitwise_equal": sum(o.bitwise for o in out),
        "max_abs_score_diff": f"{max((o.max_diff for o in out), default=0.0):.3g}",
        "rows_mismatched": sum(len(o.wrong) for o in out),
        "killed_worker_pid": phase.killed or "",
        "recovered_s": round(phase.recovered_s, 1) if phase.recovered_s is not None else "",
        "after_kill_ok": f"{phase.after_ok}/{phase.after_sent}" if phase.after_sent is not None else "",
        "server_start_s": round(server_start_s, 1),
        "judge_command_s": round(reference_s, 1),
        "loadavg_before": " ".join(f"{x:.2f}" for x in load_before),
        "loadavg_after": " ".join(f"{x:.2f}" for x in load_after),
        "cpus": os.cpu_count(),
        "command": shlex.join([Path(sys.executable).name, *sys.argv]),
    }


def append_csv(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    old = []
    if path.exists():
        with open(path, newline="", encoding="utf-8") as f:
            old = list(csv.DictReader(f))
    fields = list(rows[0]) + [k for r in old for k in r if k not in rows[0]]
    tmp = path.with_suffix(".csv.tmp")
    with open(tmp, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(dict.fromkeys(fields)), restval="")
        writer.writeheader()
        writer.writerows(old + rows)
    os.replace(tmp, path)


def print_table(rows: list[dict]) -> None:
    columns = [
        ("phase", "phase"),
        ("sent", "sent"),
        ("answered_200", "200"),
        ("refused_by_status", "refused"),
        ("lost", "lost"),
        ("not_sent", "unsent"),
        ("wall_s", "wall s"),
        ("requests_per_s", "req/s"),
        ("rows_per_s", "rows/s"),
        ("p50_ms", "p50 ms"),
        ("p99_ms", "p99 ms"),
        ("mean_requests_per_batch", "req/batch"),
        ("rows_checked", "rows checked"),
        ("rows_mismatched", "mismatched"),
        ("max_abs_score_diff", "max |diff|"),
        ("recovered_s", "recovered s"),
        ("after_kill_ok", "after kill"),
    ]
    cells = [[str(r[key]) or "-" for key, _ in columns] for r in rows]
    widths = [max(len(title), *(len(c[i]) for c in cells)) for i, (_, title) in enumerate(columns)]
    print("  ".join(title.rjust(w) for (_, title), w in zip(columns, widths)))
    for c in cells:
        print("  ".join(v.rjust(w) for v, w in zip(c, widths)))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--judge", default="runs/quickstart/judge", help="the judge to serve (any Judge.load spec)")
    p.add_argument("--data", action="append", help=f"row pool sources (repeatable; default {' '.join(DATA)})")
    p.add_argument("--requests", type=int, default=96, help="requests a phase (default 96)")
    p.add_argument("--rows", type=int, default=8, help="rows a request (default 8)")
    p.add_argument("--concurrency", type=int, default=4, help="requests in flight at once (default 4)")
    p.add_argument(
        "--max-seconds", type=float, default=60, help="no request sent after this long in a phase (default 60)"
    )
    p.add_argument("--workers", type=int, default=1, help="server inference workers (default 1)")
    p.add_argument("--max-batch-size", type=int, default=8, help="server --max-batch-size (default 8)")
    p.add_argument("--batch-timeout", type=float, default=0.01, help="server --batch-timeout (default 0.01)")
    p.add_argument("--batch-size", type=int, default=32, help="rows per forward pass, server and judge (default 32)")
    p.add_argument("--server-timeout", type=float, default=30, help="server --timeout (default 30)")
    p.add_argument("--token", default="load-test-token", help="bearer token of the server ('' for none)")
    p.add_argument("--kill-worker", action="store_true", help="after the steady phase, a phase that kills a worker")
    p.add_argument("--after", type=int, default=8, help="requests sent after recovery (default 8)")
    p.add_argument("--recovery-seconds", type=float, default=60, help="how long to wait for recovery (default 60)")
    p.add_argument(
        "--client-timeout",
        type=float,
        default=90,
        help="seconds without an answer before a request counts as lost (default 90)",
    )
    p.add_argument("--tolerance", type=float, default=1e-5, help="largest |score - judge's score| (default 1e-5)")
    p.add_argument("--output", type=Path, help="CSV to append to (default benchmarks/results/serve-load-<host>.csv)")
    args = p.parse_args(argv)
    if args.rows < 1 or args.requests < 1 or args.concurrency < 1:
        p.error("--requests, --rows and --concurrency must be at least 1")

    load_before = os.getloadavg()
    pool = [{k: r[k] for k in SENT_FIELDS if k in r} for spec in (args.data or DATA) for r in load_source(spec)]
    if len(pool) < args.rows:
        p.error(f"the pool has {len(pool)} rows, fewer than --rows {args.rows}")
    with tempfile.TemporaryDirectory(prefix="serve-load-") as tmp:
        folder = Path(tmp)
        reference, reference_s = reference_scores(args.judge, pool, args.batch_size, folder)
        print(f"judge command: {len(pool)} pool rows scored in {reference_s:.1f} s", flush=True)
        serve_args = [
            "--judge",
            args.judge,
            "--workers",
            str(args.workers),
            "--max-batch-size",
            str(args.max_batch_size),
            "--batch-timeout",
            str(args.batch_timeout),
            "--batch-size",
            str(args.batch_size),
            "--timeout",
            str(args.server_timeout),
        ]
        if args.kill_worker:  # LitServe says at level info when it sees a worker die and restarts it
            serve_args += ["--log-level", "info"]
        log = folder / "server.log"
        server = ServeProcess(serve_args, log=log, env={"BERTJUDGE_TOKEN": args.token} if args.token else {})
        t0 = time.perf_counter()
        server.start()
        server_start_s = time.perf_counter() - t0
        print(f"server healthy after {server_start_s:.1f} s at {server.url}", flush=True)
        try:
            phases = [run_phase("steady", server, pool, reference, args, 0)]
            if args.kill_worker:
                phases.append(run_phase("kill-worker", server, pool, reference, args, args.requests, kill=True))
        finally:
            code = server.stop()
        print(f"server stopped (exit {code})")
        with open(log, encoding="utf-8", errors="replace") as handle:  # what the server said about its workers
            said = [line.rstrip() for line in handle if re.search(r"monitoring|[Ww]orker .*(dead|died)|Error", line)]
        for line in said[:12]:
            print(f"  server log: {line}")
    load_after = os.getloadavg()
    rows = [summary(ph, args, load_before, load_after, server_start_s, reference_s) for ph in phases]
    out = args.output or RESULTS / f"serve-load-{platform.node() or 'host'}.csv"
    append_csv(out, rows)
    print()
    print_table(rows)
    print(
        f"\nload average before {rows[0]['loadavg_before']}, after {rows[0]['loadavg_after']} "
        f"({os.cpu_count()} CPUs); wrote {out}"
    )
    failed = []
    for ph, row in zip(phases, rows):
        for o in ph.outcomes:
            if o.status is None:
                print(f"  {ph.name}: request {o.index} LOST: {o.error}")
            elif o.wrong:
                print(f"  {ph.name}: request {o.index} scores differ from the judge command: {o.wrong[:3]}")
        if row["lost"] or row["rows_mismatched"]:
            failed.append(f"{ph.name}: {row['lost']} lost, {row['rows_mismatched']} rows mismatched")
        if ph.name == "steady" and row["refused"]:
            failed.append(f"steady: {row['refused']} refused ({row['refused_by_status']})")
        if ph.name == "kill-worker":
            if ph.killed is None:
                failed.append("kill-worker: no worker process found to kill")
            elif ph.recovered_s is None:
                failed.append(f"kill-worker: not recovered within {args.recovery_seconds:g} s")
            if ph.after_ok != ph.after_sent:
                failed.append(f"kill-worker: {ph.after_ok}/{ph.after_sent} requests after recovery succeeded")
            refused = [o for o in ph.outcomes if o.status not in (None, 200)]
            for o in refused[:5]:
                print(f"  kill-worker: request {o.index} refused {o.status} ({o.started:.1f} s): {o.error[:120]}")
    if failed:
        print("FAILED: " + "; ".join(failed))
        return 1
    print("every request sent was answered 200 or refused with an HTTP status; none lost")
    return 0


if __name__ == "__main__":
    sys.exit(main())
