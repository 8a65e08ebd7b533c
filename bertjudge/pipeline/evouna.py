"""``python -m bertjudge import-evouna``: EVOUNA's human-judged open-QA answers as records.

EVOUNA ("Evaluating Open-QA Evaluation", Wang et al., NeurIPS 2023 Datasets and Benchmarks; the
repository ``wangcunxiang/QA-Eval``, Apache-2.0) gives, per question of NQ-open (``NQ.json``) or
TriviaQA (``TQ.json``), the answers of five systems and the correctness people assigned to each.
The layout, one JSON list of objects:

    {"question": …, "golden_answer": "alias 1/alias 2/…", "improper": false,
     "answer_fid": …, "judge_fid": true, "answer_gpt35": …, "judge_gpt35": false, …}

Each (question, system) with an answer and a judgment becomes one record: category ``open_qa``, the
aliases as ``references`` (``golden_answer`` split on "/", duplicates dropped), the people's judgment
as ``label`` with ``label_source`` ``human:evouna``, the system as ``candidate_model``. Questions the
annotators marked ``improper`` are left out. ``split`` is train / val / test by a hash of the question
(every answer to a question is in one split), so a judge is never tested on a question it trained on.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from bertjudge.core.records import RecordError, make_id, normalize

SYSTEMS = {  # EVOUNA's key suffix -> the system that answered
    "fid": "FiD (DPR+FiD)",
    "gpt35": "GPT-3.5",
    "chatgpt": "ChatGPT-3.5",
    "gpt4": "GPT-4",
    "newbing": "Bing Chat",
}
LABEL_SOURCE = "human:evouna"
SPLIT_PERCENT = {"train": 65, "val": 15, "test": 20}


def question_split(question: str, percent: dict[str, int] = SPLIT_PERCENT) -> str:
    """train / val / test by a hash of the whitespace-normalized question (stable across runs)."""
    key = " ".join(question.lower().split())
    bucket = int(hashlib.sha256(key.encode("utf-8")).hexdigest()[:8], 16) % 100
    edge = 0
    for split, share in percent.items():
        edge += share
        if bucket < edge:
            return split
    return list(percent)[-1]


def aliases(golden_answer: str) -> list[str]:
    """The acceptable answers of ``golden_answer`` ("a/b/c"), stripped, without repeats or empties."""
    return list(dict.fromkeys(a.strip() for a in golden_answer.split("/") if a.strip()))


def read_evouna(path: str | Path, dataset: str | None = None) -> list[dict]:
    """Records from an EVOUNA file (``TQ.json`` or ``NQ.json``); ``dataset`` names the task
    (``evouna-tq``; default from the file name). Raises RecordError naming the file and item."""
    path = Path(path)
    task = f"evouna-{(dataset or path.stem).lower()}"
    try:
        items = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise RecordError(f"{path}: not an EVOUNA JSON file ({err})") from None
    if not isinstance(items, list):
        raise RecordError(f"{path}: expected a JSON list of questions, got {type(items).__name__}")
    out = []
    for index, item in enumerate(items):
        where = f"{path}: item {index}"
        if (
            not isinstance(item, dict)
            or not isinstance(item.get("question"), str)
            or not isinstance(item.get("golden_answer"), str)
        ):
            raise RecordError(f"{where}: needs 'question' and 'golden_answer' strings")
        if item.get("improper"):
            continue
        refs = aliases(item["golden_answer"])
        if not refs:
            raise RecordError(f"{where}: 'golden_answer' holds no answer")
        question = item["question"].strip()
        for key, system in SYSTEMS.items():
            answer, judged = item.get(f"answer_{key}"), item.get(f"judge_{key}")
            if not isinstance(answer, str) or not answer.strip() or not isinstance(judged, bool):
                continue
            candidate = answer.strip()
            out.append(
                normalize(
                    {
                        "id": make_id(task, question, system, None, candidate),
                        "task": task,
                        "category": "open_qa",
                        "question": question,
                        "candidate": candidate,
                        "references": refs,
                        "label": int(judged),
                        "label_source": LABEL_SOURCE,
                        "candidate_model": system,
                        "split": question_split(question),
                        "meta": {"item": index, "system": key, "source": f"EVOUNA/{path.name}"},
                    },
                    where,
                )
            )
    return out
