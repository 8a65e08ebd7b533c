"""Task files of embedded-corpus questions for `python -m bertjudge generate` (scripts/smollm2_outputs.sh).

A multiple-choice question loses its trailing answer-format line ("Select one option.", …): the
generate variants bring their own. Extraction questions keep theirs (it says what to do when the
passage has no answer).

    python scripts/smollm2_tasks.py OUT_FOLDER SPLIT N   # N questions per category
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

NAMES = {"multiple_choice": "mc", "context_extraction": "extraction", "open_math": "math"}
MC_FORMAT_LINES = re.compile(
    r"\n+(Answer with the letter of the correct option\.|Choose the best answer\.|"
    r"Respond with only the option label\.|Think step by step, then write 'Final answer: "
    r"<label>'\.|Explain your choice briefly\.|Select one option\.)\s*$"
)


def task_question(question: str, category: str) -> str:
    question = question.strip()
    return MC_FORMAT_LINES.sub("", question) if category == "multiple_choice" else question


def first_version_question(question: str) -> str:
    """What the first version of this script wrote: the last paragraph cut whatever it held — the
    question of an extraction item, or the options of a multiple-choice item without a format line."""
    question = question.strip()
    return re.sub(r"\n\n[^\n]*$", "", question) if "\n\n" in question else question


def main(folder: Path, split: str, n: int) -> None:
    from bertjudge.data.sources import load_source

    seen, rows = set(), {c: [] for c in NAMES}
    for rec in load_source(f"embedded:{split}?n={20 * n}"):
        if rec["category"] not in NAMES:  # open QA: SmolLM2's answers were not read for it
            continue
        question = task_question(rec["question"], rec["category"])
        if question in seen or len(rows[rec["category"]]) >= n:
            continue
        seen.add(question)
        rows[rec["category"]].append({"question": question, "references": rec["references"]})
    folder.mkdir(parents=True, exist_ok=True)
    for category, items in rows.items():
        with open(folder / f"embedded-{NAMES[category]}.jsonl", "w", encoding="utf-8") as f:
            f.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in items)
        print(category, len(items))


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]))
