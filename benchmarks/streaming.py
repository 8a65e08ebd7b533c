"""``judge`` on a file of a million rows: peak memory, and the output against judging the same rows in chunks.

    python benchmarks/streaming.py                       # 1,000,000 rows, the `contains` judge
    python benchmarks/streaming.py --rows 100000 --judge regex

Writes a JSONL of ``--rows`` answers (open QA, multiple choice, math, in turn; ~300 bytes each) to a
temporary folder, runs ``python -m bertjudge judge`` on it in a child process and reads the child's peak
resident memory (``getrusage(RUSAGE_CHILDREN).ru_maxrss``, read before any other child runs), then judges the same rows split into
``--chunks`` files, one command each, and checks that the whole-file output equals the chunks' outputs
put together: the same ids in the same order, every score within 1e-6. The judge is a fast rule judge
by default, so that the run measures the command's memory (reading, resuming, writing), not a model's
speed. Prints one line per run and appends a row to ``benchmarks/results/streaming-<host>.csv``.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RESULTS = Path(__file__).parent / "results"


def row(i: int) -> dict:
    kind = i % 3
    if kind == 0:
        return {
            "id": f"qa{i}",
            "category": "open_qa",
            "question": f"Which city hosts the headquarters of organisation number {i}?",
            "candidate": f"The headquarters of organisation {i} are in Geneva, Switzerland, since {1900 + i % 120}.",
            "references": ["Geneva", "Genève"],
        }
    if kind == 1:
        return {
            "id": f"mc{i}",
            "category": "multiple_choice",
            "question": f"Question {i}: which option is right?\n(A) red (B) green (C) blue (D) black",
            "candidate": f"Looking at the options, the answer is ({'ABCD'[i % 4]}).",
            "references": ["B"],
        }
    return {
        "id": f"m{i}",
        "category": "open_math",
        "question": f"What is {i} divided by 7?",
        "candidate": f"We divide: {i}/7, so the final answer is \\boxed{{{i}/7}}.",
        "references": [f"{i}/7" if i % 5 else f"{i + 1}/7"],
    }


def write_rows(path: Path, start: int, stop: int) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        for i in range(start, stop):
            handle.write(json.dumps(row(i)) + "\n")


def judge(judge_spec: str, src: Path, out: Path) -> tuple[float, float]:
    """Run the judge command in a child; (seconds, the largest peak RSS of the children so far, in MB)."""
    start = time.perf_counter()
    command = [sys.executable, "-m", "bertjudge", "judge", "--judge", judge_spec]
    done = subprocess.run(
        [*command, "--input", str(src), "--output", str(out), "--no-progress"], capture_output=True, text=True
    )
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"judge failed on {src}: {done.stderr.strip().splitlines()[-1]}")
    return seconds, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # KB on Linux


def scored(path: Path):
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            obj = json.loads(line)
            yield obj["id"], obj["score"]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rows", type=int, default=1_000_000, help="rows in the file (default 1,000,000)")
    p.add_argument("--chunks", type=int, default=10, help="files the same rows are split into (default 10)")
    p.add_argument("--judge", default="contains", help="the judge spec (default: contains, a fast rule judge)")
    p.add_argument("--no-csv", action="store_true", help="print only; append nothing to benchmarks/results/")
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bertjudge-streaming-") as tmp:
        tmp = Path(tmp)
        whole = tmp / "all.jsonl"
        write_rows(whole, 0, args.rows)
        size_mb = whole.stat().st_size / 1e6
        seconds, peak = judge(args.judge, whole, tmp / "all.out.jsonl")  # first: the only child measured so far
        step = -(-args.rows // args.chunks)
        for k, start in enumerate(range(0, args.rows, step)):
            write_rows(tmp / f"part{k}.jsonl", start, min(start + step, args.rows))
            judge(args.judge, tmp / f"part{k}.jsonl", tmp / f"part{k}.out.jsonl")
        parts = (scored(tmp / f"part{k}.out.jsonl") for k in range(-(-args.rows // step)))
        expected = (pair for part in parts for pair in part)
        rows = differ = 0
        for (rid, score), (eid, escore) in zip(scored(tmp / "all.out.jsonl"), expected, strict=True):
            rows += 1
            if rid != eid or (score is None) != (escore is None) or score is not None and abs(score - escore) > 1e-6:
                differ += 1
    result = {
        "host": platform.node() or "unknown",
        "judge": args.judge,
        "rows": rows,
        "input_mb": round(size_mb, 1),
        "seconds": round(seconds, 1),
        "rows_per_s": round(rows / seconds, 1),
        "peak_rss_mb": round(peak, 1),
        "rows_differing_from_chunks": differ,
        "load_average": round(os.getloadavg()[0], 2),
        "cores": os.cpu_count(),
    }
    print(
        f"{rows:,} rows ({size_mb:.0f} MB) with {args.judge}: {seconds:.0f} s ({rows / seconds:,.0f} rows/s), peak RSS "
        f"{peak:.0f} MB; rows differing from the same rows judged in {args.chunks} chunks: {differ}"
    )
    if not args.no_csv:
        RESULTS.mkdir(exist_ok=True)
        out = RESULTS / f"streaming-{result['host']}.csv"
        new = not out.exists()
        with open(out, "a", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(result))
            if new:
                writer.writeheader()
            writer.writerow(result)
        print(f"appended to {out}")
    return 0 if differ == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
