"""The read real-output sets (data/real/manual-v3, champ-read-v6, smollm2-read-v2): sample rows to read, then merge.

    # 1. the rows to read: CHAMP solutions to val/test problems (never train), SmolLM2 generations
    python -m bertjudge champ --output /tmp/champ_all.jsonl.gz --keep-unlabelled
    OUT=runs/smollm2-outputs SPLIT=test N=50 scripts/smollm2_outputs.sh
    python scripts/manual_set.py pool --champ /tmp/champ_all.jsonl.gz --smollm2 runs/smollm2-outputs --out /tmp/manual
    # 2. a reader reads each /tmp/manual/*.todo.jsonl row (guide: data/real/LABELLING.md) and writes
    #    data/real/manual-v1/<part>.labels.jsonl: {"id", "label", "hard", "reason"} per row
    # 3. merge (manual-v1's 360 rows, now the first 360 rows of manual-v3)
    python scripts/manual_set.py build --pool /tmp/manual --labels data/real/manual-v1 --out /tmp/manual-v1.jsonl.gz

manual-v3 extends those rows (``build --extend``) with rows each read twice; ``agree`` compares two
readings. The same two steps make the read training sets: `pool --splits train --unlabelled` samples
CHAMP train problems only, `--exclude` skips rows read in earlier rounds, `--smollm2` takes generated
answers; `build --val-percent P` splits train/val by problem (or generated item) instead of marking
every row test, and `--pool` may be the champ file itself.
data/real/README.md has the exact commands of every set.

Records keep their fields; ``label`` comes from the labels and ``label_source`` is ``LABEL_SOURCE``
("read:llm-agent": the readers of every set so far were the project's engineers, LLM coding agents,
not people; ``build --label-source`` names other readers), the rule label (when the rules gave one)
moves to ``meta.rule_label``, and ``meta.manual`` keeps the hard flag and the reason. Left out: CHAMP
problems whose reference is wrong (``WRONG_REFERENCES``), and SmolLM2 rows whose prompt lost its
question or its options (a bug of the first version of scripts/smollm2_tasks.py, fixed:
``broken_prompts``).
"""

from __future__ import annotations

import argparse
import collections
import json
import random
import sys
from pathlib import Path

from bertjudge.core.records import read_records, write_records
from bertjudge.pipeline.champ import WRONG_REFERENCES, bucket
from bertjudge.pipeline.tasks import instruction

sys.path.insert(0, str(Path(__file__).parent))
from smollm2_tasks import first_version_question, task_question

PARTS = 4
LABEL_SOURCE = "read:llm-agent"  # who read the rows: LLM agents (the project's engineers), not people


def _todo(rec: dict) -> dict:
    """What a labeller sees: no rule label."""
    return {
        "id": rec["id"],
        "model": rec["candidate_model"],
        "question": rec["question"],
        "references": rec["references"],
        "candidate": rec["candidate"],
    }


def _write_parts(out: Path, name: str, records: list[dict], parts: int) -> None:
    """``<name>-<i>.pool.jsonl`` (the records) and ``<name>-<i>.todo.jsonl`` (what a labeller reads)."""
    for i in range(parts):
        write_records(out / f"{name}-{i}.pool.jsonl", records[i::parts])
        with open(out / f"{name}-{i}.todo.jsonl", "w", encoding="utf-8") as f:
            f.writelines(json.dumps(_todo(r), ensure_ascii=False) + "\n" for r in records[i::parts])


def _labels(folder: Path) -> dict[str, dict]:
    return {
        row["id"]: row
        for path in sorted(folder.glob("*.labels.jsonl"))
        for row in map(json.loads, path.read_text(encoding="utf-8").splitlines())
    }


def _excluded_ids(path: Path) -> set[str]:
    """The row ids ``path`` holds: a folder of ``*.labels.jsonl`` (rows read before), or a record file."""
    return set(_labels(path)) if path.is_dir() else {r["id"] for r in read_records(path)}


def pool(
    champ: str,
    smollm2: str | None,
    out: Path,
    per_model: int = 60,
    seed: int = 0,
    splits: tuple[str, ...] = ("test", "val"),
    unlabelled: bool = False,
    per_problem: int = 2,
    parts: int = PARTS,
    name: str = "champ",
    exclude: list[Path] | None = None,
    smollm2_parts: int = 2,
    smollm2_per_item: int | None = None,
    skip_wrong_references: bool = False,
) -> None:
    """Sample CHAMP rows of ``splits`` (only those the rules left unlabelled with ``unlabelled``),
    at most ``per_problem`` solutions per problem and model, ``per_model`` per model; none labelled in
    ``exclude`` (folders of ``*.labels.jsonl``: a later round; or record files: rows already in a set), none of a problem in
    ``WRONG_REFERENCES`` with ``skip_wrong_references`` (``build`` leaves them out). Generated rows:
    all, or ``smollm2_per_item`` drawn per question."""
    rng = random.Random(seed)
    done = {i for path in exclude or () for i in _excluded_ids(path)}
    rows = [
        r
        for r in read_records(champ)
        if r["split"] in splits
        and not r["meta"].get("truncated")
        and not (unlabelled and r["label"] is not None)
        and r["id"] not in done
        and not (skip_wrong_references and r["meta"]["problem"] in WRONG_REFERENCES)
    ]
    by_model = collections.defaultdict(list)
    for rec in rows:
        by_model[rec["candidate_model"]].append(rec)
    picked = []
    for _, recs in sorted(by_model.items()):
        rng.shuffle(recs)
        seen, mine = collections.Counter(), []
        for rec in recs:  # at most per_problem solutions per problem and model: spread over problems
            if seen[rec["meta"]["problem"]] < per_problem and len(mine) < per_model:
                seen[rec["meta"]["problem"]] += 1
                mine.append(rec)
        picked += mine
    rng.shuffle(picked)
    out.mkdir(parents=True, exist_ok=True)
    _write_parts(out, name, picked, parts)
    if smollm2:
        recs = [r for path in sorted(Path(smollm2).glob("*.jsonl")) for r in read_records(path) if r["id"] not in done]
        rng.shuffle(recs)
        if smollm2_per_item:  # the first smollm2_per_item rows of each question after the shuffle
            taken, kept = collections.Counter(), []
            for rec in recs:
                taken[rec["meta"]["item"]] += 1
                if taken[rec["meta"]["item"]] <= smollm2_per_item:
                    kept.append(rec)
            recs = kept
        _write_parts(out, "smollm2", recs, smollm2_parts)
    print(f"wrote {len(picked)} CHAMP rows in {parts} parts{' and the SmolLM2 rows' if smollm2 else ''} to {out}")


def broken_prompts(records: list[dict], split: str = "test", n: int = 1000) -> set[str]:
    """Ids of generated rows whose prompt the first task-file version cut (question or options lost)."""
    from bertjudge.data.sources import load_source

    broken_bodies = {
        first_version_question(r["question"])
        for r in load_source(f"embedded:{split}?n={n}")
        if first_version_question(r["question"]) != task_question(r["question"], r["category"])
    }
    out = set()
    for rec in records:
        text = instruction(rec["category"], rec["meta"]["variant"])
        body = rec["question"][: -len(text) - 2] if text else rec["question"]
        if body in broken_bodies:
            out.add(rec["id"])
    return out


def training_split(problem: str, val_percent: int) -> str:
    """train or val by a hash of the problem (CHAMP) or item (generated) id: one question, one split."""
    return "val" if bucket(problem) < val_percent else "train"


def build(
    pool_dir: Path,
    labels_dir: Path,
    out: Path,
    val_percent: int | None = None,
    extend: Path | None = None,
    label_source: str = LABEL_SOURCE,
) -> None:
    """Merge the labels; split "test" (an evaluation set) or, with ``val_percent``, train/val by problem.
    ``extend``: a set built before whose rows come first, as they are (a larger version of it); a
    source spec (``FILE?split=test``) takes some of a file's rows.
    ``label_source``: who read the rows (default ``LABEL_SOURCE``, LLM agents)."""
    labels = {}
    for path in sorted(labels_dir.glob("*.labels.jsonl")):
        for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            row = json.loads(line)
            if row["label"] not in (0, 1) or row["id"] in labels:
                raise ValueError(f"{path}:{lineno}: a label must be 0 or 1, once per id")
            labels[row["id"]] = row
    if pool_dir.is_dir():
        pooled = [rec for path in sorted(pool_dir.glob("*.pool.jsonl")) for rec in read_records(path)]
    else:  # a `champ --keep-unlabelled` file: the labelled rows of it
        pooled = [rec for rec in read_records(pool_dir) if rec["id"] in labels]
    broken = broken_prompts([r for r in pooled if r["task"].startswith("embedded-")])
    records, dropped = [], collections.Counter()
    for rec in pooled:
        if rec["id"] not in labels:
            raise ValueError(f"{rec['id']} has no label in {labels_dir}")
        problem = rec["meta"].get("problem")
        if problem in WRONG_REFERENCES:
            dropped[f"wrong reference ({problem})"] += 1
            continue
        if rec["id"] in broken:
            dropped["prompt lost its question or options"] += 1
            continue
        row = labels[rec["id"]]
        meta = {
            **rec["meta"],
            "rule_label": rec["label"],
            "rule_label_source": rec["label_source"],
            "manual": {"hard": bool(row.get("hard")), "reason": row.get("reason", "")},
        }
        split = "test" if val_percent is None else training_split(problem or rec["meta"]["item"], val_percent)
        records.append({**rec, "label": int(row["label"]), "label_source": label_source, "split": split, "meta": meta})
    if extend:
        from bertjudge.data.sources import load_source

        earlier = list(load_source(str(extend)))  # a file, or a source spec such as FILE?split=test
        repeated = {r["id"] for r in earlier} & {r["id"] for r in records}
        if repeated:
            raise ValueError(f"{len(repeated)} rows are in {extend} already, e.g. {sorted(repeated)[0]}")
        records = earlier + records
    write_records(out, records)
    counts = collections.Counter((r["split"], r["task"], r["candidate_model"], r["label"]) for r in records)
    for key, n in sorted(counts.items()):
        print(*key, n)
    print(f"wrote {len(records)} rows to {out}; left out: {dict(dropped)}")


def agree(first: Path, second: Path, out: Path | None = None) -> None:
    """How often two independent readings of the same rows agree (and Cohen's kappa); the rows they
    disagree on, both readings side by side, to ``out`` for a third reader to settle."""
    import torch
    from torchmetrics.functional import cohen_kappa

    a, b = _labels(first), _labels(second)
    both = sorted(a.keys() & b.keys())
    if not both:
        raise ValueError(f"no row is labelled in both {first} and {second}")
    x, y = (torch.tensor([labels[i]["label"] for i in both]) for labels in (a, b))
    split = [i for i in both if a[i]["label"] != b[i]["label"]]
    kappa = cohen_kappa(x, y, task="binary").item()
    print(
        f"{len(both)} rows read twice: agree on {len(both) - len(split)} ({1 - len(split) / len(both):.1%}), "
        f"Cohen's kappa {kappa:.3f}; labelled 1: {int(x.sum())} / {int(y.sum())}; {len(split)} disagreements"
    )
    if out:
        with open(out, "w", encoding="utf-8") as f:
            f.writelines(json.dumps({"id": i, "first": a[i], "second": b[i]}, ensure_ascii=False) + "\n" for i in split)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("pool", help="sample the rows to label")
    p.add_argument("--champ", required=True, help="`champ --keep-unlabelled` output")
    p.add_argument("--smollm2", help="folder of `generate` outputs")
    p.add_argument("--smollm2-parts", type=int, default=2)
    p.add_argument("--out", required=True, type=Path)
    p.add_argument("--splits", default="test,val", help="CHAMP splits to sample (default test,val)")
    p.add_argument("--unlabelled", action="store_true", help="only rows the rules left unlabelled")
    p.add_argument("--per-model", type=int, default=60)
    p.add_argument("--per-problem", type=int, default=2, help="at most this many per problem and model")
    p.add_argument("--parts", type=int, default=PARTS)
    p.add_argument("--name", default="champ", help="file name prefix of the parts")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--exclude",
        type=Path,
        action="append",
        help="a folder of *.labels.jsonl, or a record file, whose rows are not sampled again (repeatable)",
    )
    p.add_argument("--smollm2-per-item", type=int, help="at most this many generated rows per question (drawn)")
    p.add_argument(
        "--skip-wrong-references",
        action="store_true",
        help="no CHAMP problem of WRONG_REFERENCES (build leaves them out anyway)",
    )
    b = sub.add_parser("build", help="merge the labels into the set")
    b.add_argument(
        "--pool",
        required=True,
        type=Path,
        help="the pool folder, or a `champ --keep-unlabelled` file to take the labelled rows from",
    )
    b.add_argument("--labels", required=True, type=Path)
    b.add_argument("--out", required=True, type=Path)
    b.add_argument(
        "--val-percent",
        type=int,
        help="a training set: train/val by problem, this %% in val "
        "(default: an evaluation set, every row in split test)",
    )
    b.add_argument(
        "--extend",
        type=Path,
        help="an earlier built set whose rows come first, as they are (or a "
        "source spec, FILE?split=test, for some of its rows)",
    )
    b.add_argument(
        "--label-source",
        default=LABEL_SOURCE,
        help=f"who read the rows, the records' label_source (default {LABEL_SOURCE}: LLM agents; "
        "human:<who> for labels people gave)",
    )
    g = sub.add_parser("agree", help="agreement of two independent readings of the same rows")
    g.add_argument("first", type=Path, help="a folder of *.labels.jsonl")
    g.add_argument("second", type=Path, help="another reader's folder")
    g.add_argument("--out", type=Path, help="write the disagreements here (JSON lines)")
    args = parser.parse_args(argv)
    if args.command == "pool":
        pool(
            args.champ,
            args.smollm2,
            args.out,
            per_model=args.per_model,
            splits=tuple(args.splits.split(",")),
            unlabelled=args.unlabelled,
            per_problem=args.per_problem,
            parts=args.parts,
            name=args.name,
            seed=args.seed,
            exclude=args.exclude,
            smollm2_parts=args.smollm2_parts,
            smollm2_per_item=args.smollm2_per_item,
            skip_wrong_references=args.skip_wrong_references,
        )
    elif args.command == "agree":
        agree(args.first, args.second, args.out)
    else:
        build(args.pool, args.labels, args.out, args.val_percent, extend=args.extend, label_source=args.label_source)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
