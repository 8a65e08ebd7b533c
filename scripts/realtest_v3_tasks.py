"""Task files for `real-test-v3`'s SmolLM2 part: questions no file in data/real holds, each asked for its final
answer in prescribed formats (`bertjudge.data.answer_formats`), as real benchmarks write the instruction.

- multiple choice, context extraction, open math: embedded-corpus test questions (``embedded:test?n=12000``)
  that no ``data/real`` file holds (compared without their answer-format line);
- open QA: real trivia questions of EVOUNA-TQ's test split (their answers by other systems are in
  ``real-test-v1``; nothing trains on that split).

Each question is asked twice (open QA once), each time in another prescribed format of its category, round robin
over the category's formats; half the multiple-choice questions and every math question also ask for reasoning
first, so that answers are long. One task file per category (``v3-mc.jsonl``: one generation batch holds
questions of several formats), and ``formats.jsonl`` names the format each prompt asks for (``{"question",
"format"}``), which the set's rows keep in ``meta.format``.

    python scripts/realtest_v3_tasks.py tasks OUT_FOLDER [--per-category 40]
    python scripts/realtest_v3_tasks.py annotate GENERATED_FOLDER TASKS_FOLDER OUT_FOLDER   # meta.format, meta.instruction
"""

from __future__ import annotations

import argparse
import glob
import json
import random
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from smollm2_tasks import task_question  # noqa: E402

SHORT = {"multiple_choice": "mc", "context_extraction": "extraction", "open_math": "math", "open_qa": "qa"}
# how many questions per category, relative to --per-category, and formats per question
SHARE = {"multiple_choice": (1.5, 2), "context_extraction": (1.0, 2), "open_math": (1.0, 2), "open_qa": (2.0, 1)}
REASONING = "Think step by step before you answer."
SEED = 3


def used_questions(root: Path) -> set[str]:
    from bertjudge.core.records import read_records

    used = set()
    for path in sorted(glob.glob(str(root / "data/real/*.jsonl.gz"))):
        for rec in read_records(path):
            if rec.get("question"):
                used.add(task_question(rec["question"], rec.get("category") or ""))
    return used


def questions(root: Path, per_category: int, rng: random.Random) -> dict[str, list[dict]]:
    from bertjudge.core.records import read_records
    from bertjudge.data.sources import load_source

    used, pools = used_questions(root), defaultdict(dict)
    for rec in load_source("embedded:test?n=12000"):
        q = task_question(rec["question"], rec["category"])
        if rec["category"] != "open_qa" and q not in used:
            pools[rec["category"]].setdefault(q, rec["references"])
    for rec in read_records(root / "data/real/evouna-tq-v1.jsonl.gz"):
        if rec.get("split") == "test":
            pools["open_qa"].setdefault(rec["question"].strip(), rec["references"])
    chosen = {}
    for category in SHORT:
        n = round(SHARE[category][0] * per_category)
        items = sorted(pools[category].items())
        chosen[category] = [{"question": q, "references": refs} for q, refs in rng.sample(items, n)]
    return chosen


def write_tasks(out: Path, per_category: int) -> None:
    from bertjudge.data.answer_formats import FORMATS, formats_for, instructions_for

    rng = random.Random(SEED)
    root = Path(__file__).resolve().parent.parent
    files, formats = defaultdict(list), []
    for category, items in questions(root, per_category, rng).items():
        names = [n for n in formats_for(category) if FORMATS[n].prescribed]
        per_question = SHARE[category][1]
        for i, item in enumerate(items):
            for k in range(per_question):
                name = names[(per_question * i + k) % len(names)]
                instruction = rng.choice(instructions_for(FORMATS[name], category))
                reason = category == "open_math" or (category == "multiple_choice" and i % 2 == 0)
                text = f"{REASONING} {instruction}" if reason else instruction
                question = f"{item['question']}\n\n{text}"
                files[f"v3-{SHORT[category]}"].append({"question": question, "references": item["references"]})
                formats.append({"question": question, "format": name, "instruction": text})
    out.mkdir(parents=True, exist_ok=True)
    for name, rows in [*sorted(files.items()), ("formats", formats)]:
        with open(out / f"{name}.jsonl", "w", encoding="utf-8") as f:
            f.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    print({name: len(rows) for name, rows in files.items()}, "rows in", len({f["format"] for f in formats}), "formats")


def asked_before(root: Path) -> set[str]:
    """The questions of ``data/real`` as they were asked: a generated row's without its variant's instruction (which
    ``used_questions`` keeps, so that a question asked before could get through the selection)."""
    from bertjudge.core.records import read_records
    from bertjudge.pipeline.tasks import VARIANTS, instruction

    asked = set()
    for path in sorted(glob.glob(str(root / "data/real/*.jsonl.gz"))):
        for rec in read_records(path):
            question, variant = rec.get("question") or "", (rec.get("meta") or {}).get("variant")
            text = instruction(rec["category"], variant) if variant in VARIANTS else ""
            if text and question.endswith(f"\n\n{text}"):
                question = question[: -len(text) - 2]
            asked.add(task_question(question, rec.get("category") or ""))
    return asked


def annotate(generated: Path, tasks: Path, out: Path) -> None:
    """The generated rows (every ``*.jsonl`` under ``generated``) with the format and instruction each prompt asked
    for in ``meta``, one file per input file in ``out``; rows of an embedded question asked before in ``data/real``
    are left out (open-QA questions are EVOUNA-TQ test questions on purpose)."""
    from bertjudge.core.records import read_records, write_records

    asked = {r["question"]: r for r in map(json.loads, (tasks / "formats.jsonl").read_text().splitlines())}
    before = asked_before(Path(__file__).resolve().parent.parent)
    out.mkdir(parents=True, exist_ok=True)
    for path in sorted(generated.rglob("*.jsonl")):
        rows, kept = read_records(path), []
        for rec in rows:
            prompt = asked[rec["question"]]
            body = rec["question"][: -len(prompt["instruction"]) - 2]
            if rec["category"] != "open_qa" and task_question(body, rec["category"]) in before:
                continue
            rec["meta"] = {**rec["meta"], "format": prompt["format"], "instruction": prompt["instruction"]}
            kept.append(rec)
        write_records(out / path.name, kept)
        print(path.name, len(kept), f"({len(rows) - len(kept)} left out: their question was asked before)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    t = sub.add_parser("tasks", help="write the task files and formats.jsonl")
    t.add_argument("out", type=Path)
    t.add_argument("--per-category", type=int, default=40)
    a = sub.add_parser("annotate", help="add meta.format and meta.instruction to generated rows")
    a.add_argument("generated", type=Path)
    a.add_argument("tasks", type=Path)
    a.add_argument("out", type=Path)
    args = parser.parse_args()
    if args.command == "tasks":
        write_tasks(args.out, args.per_category)
    else:
        annotate(args.generated, args.tasks, args.out)


if __name__ == "__main__":
    main()
