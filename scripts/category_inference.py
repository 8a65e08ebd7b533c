"""How much a row's category matters when a user leaves it out (issue #46): for each data source, how often
``infer_category`` gives the labelled category, and a judge's accuracy with the rows' categories and without them
(each row then read with the category inferred from it, as every entry point does).

    python scripts/category_inference.py --judge runs/quickstart/judge --data "embedded:test?n=1000" \
        data/real/real-test-v2.jsonl.gz
"""

from __future__ import annotations

import argparse

import numpy as np

from bertjudge.core.records import normalize
from bertjudge.data.sources import load_source
from bertjudge.judges.loading import Judge


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--judge", required=True, help="a Judge.load spec")
    p.add_argument("--data", nargs="+", required=True, help="labelled sources")
    args = p.parse_args(argv)
    judge = Judge.load(args.judge)
    print("| data | rows | category inferred = labelled | accuracy with categories | without | difference |")
    print("|---|---|---|---|---|---|")
    for spec in args.data:
        rows = load_source(spec)
        bare = [normalize({**r, "category": None}, r["id"]) for r in rows]
        agree = np.mean([b["category"] == r["category"] for b, r in zip(bare, rows)])
        labels = np.array([r["label"] for r in rows], dtype=bool)
        given = (np.asarray(judge.score_records(rows)) >= judge.threshold) == labels
        inferred = (np.asarray(judge.score_records(bare)) >= judge.threshold) == labels
        print(
            f"| {spec} | {len(rows)} | {agree:.3f} | {given.mean():.4f} | {inferred.mean():.4f} | "
            f"{inferred.mean() - given.mean():+.4f} |"
        )


if __name__ == "__main__":
    main()
