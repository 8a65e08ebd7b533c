"""The paper's 15 benchmark tasks, each a small declaration: where its data is, how a row becomes a
prompt and its references.

A :class:`Task` names its Hugging Face dataset (id, configs, and the dataset's split for each role,
``train`` and ``test``), a prompt builder (row → the question body: passage, options) and a
reference builder (row → acceptable answers). The answer-format instruction is a parameter, worded
per category: ``free`` (none), ``soft`` (reason freely, end with "Final answer: X") and ``strict``
(only "Final answer: X").

Data comes from the hub (``datasets.load_dataset``) or, with ``data_dir``, from local copies in the
datasets' own formats: ``DATA/<task>/<split>.jsonl`` or ``.parquet`` (split named by role or as the
dataset names it), ``DATA/<task>/<split>/`` or ``DATA/<task>/`` saved with ``save_to_disk``.
A user's file of (question, reference[s]) rows is a task too (:func:`local_task`).
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from bertjudge.core.extract import boxed
from bertjudge.data.sources import category_of

VARIANTS = ("free", "soft", "strict")
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
UNANSWERABLE = "unanswerable"
_WHAT = {  # what X is in "Final answer: X", per category
    "multiple_choice": "the letter of the correct option",
    "context_extraction": "the answer, as short as possible (a few words from the passage)",
    "open_math": "the final result (a number or a mathematical expression)",
    "open_qa": "the answer, as short as possible (a name, a date, a number or a few words)",
    "other": "the answer, as short as possible",
}


def instruction(category: str, variant: str) -> str:
    """The answer-format instruction appended to the question ('' for ``free``)."""
    if variant == "free":
        return ""
    what = _WHAT[category]
    if variant == "soft":
        return f"You may reason step by step, but end your response with 'Final answer: X', where X is {what}."
    if variant == "strict":
        return f"Answer only with 'Final answer: X', where X is {what}. Write nothing else."
    raise ValueError(f"unknown prompt variant {variant!r}; choose from {', '.join(VARIANTS)}")


def digest(text: str) -> str:
    """The sha256 of a text (a prompt, a task's reference data): data, not a file (files: ``core.hashing``)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _unique(values: Iterable) -> list[str]:
    return list(dict.fromkeys(str(v).strip() for v in values if v is not None and str(v).strip()))


# ---- prompt and reference builders ------------------------------------------------------------


def _options(question: str, options: list[str]) -> str:
    lines = [f"{LETTERS[i]}. {str(option).strip()}" for i, option in enumerate(options)]
    return f"Question: {question.strip()}\n\nOptions:\n" + "\n".join(lines)


def _passage(passage: str, question: str) -> str:
    return f"Passage:\n{passage.strip()}\n\nQuestion: {question.strip()}"


def _shuffled(question: str, options: list[str], correct: int) -> tuple[list[str], str]:
    """Options in an order seeded by the question (the datasets list the right one first), and its letter."""
    order = list(range(len(options)))
    random.Random(digest(question)).shuffle(order)
    return [options[i] for i in order], LETTERS[order.index(correct)]


def _truthfulqa(row: dict) -> tuple[list[str], str]:
    targets = row["mc1_targets"]
    return _shuffled(row["question"], targets["choices"], targets["labels"].index(1))


def _gpqa(row: dict) -> tuple[list[str], str]:
    options = [row["Correct Answer"], *(row[f"Incorrect Answer {i}"] for i in (1, 2, 3))]
    return _shuffled(row["Question"], [o.strip() for o in options], 0)


def _arc_key(row: dict) -> str:
    return LETTERS[row["choices"]["label"].index(row["answerKey"])]  # keys are A-E or 1-5


def _squad_prompt(row: dict) -> str:
    return (
        _passage(row["context"], row["question"])
        + f"\n\nIf the passage does not contain the answer, the answer is '{UNANSWERABLE}'."
    )


def _hotpot_context(row: dict) -> str:
    context = row["context"]
    return "\n\n".join(
        f"{title}: {''.join(sentences).strip()}" for title, sentences in zip(context["title"], context["sentences"])
    )


def _coqa_turns(row: dict) -> list[dict]:
    """One item per question of a CoQA conversation, with the earlier turns as history."""
    questions, answers = row["questions"], row["answers"]["input_text"]
    return [
        {
            "story": row["story"],
            "history": list(zip(questions[:i], answers[:i])),
            "question": questions[i],
            "answer": answers[i],
        }
        for i in range(len(questions))
    ]


def _coqa_prompt(turn: dict) -> str:
    history = "".join(f"Q: {q}\nA: {a}\n" for q, a in turn["history"])
    conversation = f"\n\nConversation so far:\n{history.rstrip()}" if history else ""
    return f"Passage:\n{turn['story'].strip()}{conversation}\n\nQuestion: {turn['question'].strip()}"


def _gsm8k_answer(row: dict) -> list[str]:
    return [row["answer"].split("####")[-1].strip().replace(",", "")]


def _asdiv_answer(row: dict) -> list[str]:
    return [row["answer"].split(" (")[0].strip()]  # "9 (apples)" → "9"


def _open_question(question: str) -> str:
    """NQ-open questions are lower case without a question mark ("who sang ..."): give them one."""
    question = question.strip()
    return question if question.endswith("?") else f"{question[:1].upper()}{question[1:]}?"


def _triviaqa_answer(row: dict) -> list[str]:
    answer = row["answer"]
    return [answer["value"], *answer.get("aliases", [])]


# ---- the registry -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Task:
    """One benchmark: its data, its prompt builder and its reference builder."""

    name: str
    category: str
    hub_id: str | None
    splits: dict[str, str]  # role ("train", "test") → the dataset's own split name
    prompt: Callable[[dict], str]  # row → question body (passage, options), without instruction
    references: Callable[[dict], list[str]]
    configs: tuple[str | None, ...] = (None,)
    expand: Callable[[dict], list[dict]] | None = None  # one row → several items (CoQA turns)
    files: dict[str, str] = field(default_factory=dict)  # role → local file (user tasks)

    def question(self, body: str, variant: str) -> str:
        """The full prompt the candidate model sees: the body and the answer-format instruction."""
        text = instruction(self.category, variant)
        return f"{body}\n\n{text}" if text else body

    def rows(self, split: str = "test", data_dir: str | Path | None = None) -> Iterator[dict]:
        """The dataset's rows for a role, from local files or the hub."""
        if split not in self.splits:
            raise ValueError(f"task {self.name} has no {split!r} split (it has {', '.join(self.splits)})")
        if self.files:
            yield from _read_table(Path(self.files[split]))
        elif data_dir is not None:
            yield from _read_local(Path(data_dir) / self.name, split, self.splits[split])
        else:
            import datasets

            for config in self.configs:
                yield from datasets.load_dataset(self.hub_id, config, split=self.splits[split])

    def items(
        self, split: str = "test", data_dir: str | Path | None = None, limit: int | None = None, seed: int = 0
    ) -> list[dict]:
        """``{"item", "body", "references"}`` per distinct question (``item``: a hash of the body);
        rows without a reference are skipped; ``limit`` keeps a seeded sample in dataset order."""
        items, seen = [], set()
        for row in self.rows(split, data_dir):
            for sub in self.expand(row) if self.expand else [row]:
                body, refs = self.prompt(sub), _unique(self.references(sub))
                key = digest(body)[:16]
                if refs and key not in seen:
                    seen.add(key)
                    items.append({"item": key, "body": body, "references": refs})
        if limit is not None and limit < len(items):
            items = [items[i] for i in sorted(random.Random(seed).sample(range(len(items)), limit))]
        return items


_MATH_SUBJECTS = (
    "algebra",
    "counting_and_probability",
    "geometry",
    "intermediate_algebra",
    "number_theory",
    "prealgebra",
    "precalculus",
)

TASKS: dict[str, Task] = {
    # multiple choice
    "mmlu": Task(
        "mmlu",
        "multiple_choice",
        "cais/mmlu",
        {"train": "auxiliary_train", "test": "test"},
        lambda r: _options(r["question"], r["choices"]),
        lambda r: [LETTERS[r["answer"]]],
        configs=("all",),
    ),
    "mmlu_pro": Task(
        "mmlu_pro",
        "multiple_choice",
        "TIGER-Lab/MMLU-Pro",
        {"test": "test"},
        lambda r: _options(r["question"], r["options"]),
        lambda r: [r["answer"]],
    ),
    "truthfulqa": Task(
        "truthfulqa",
        "multiple_choice",
        "truthfulqa/truthful_qa",
        {"test": "validation"},
        lambda r: _options(r["question"], _truthfulqa(r)[0]),
        lambda r: [_truthfulqa(r)[1]],
        configs=("multiple_choice",),
    ),
    "arc_easy": Task(
        "arc_easy",
        "multiple_choice",
        "allenai/ai2_arc",
        {"train": "train", "test": "test"},
        lambda r: _options(r["question"], r["choices"]["text"]),
        lambda r: [_arc_key(r)],
        configs=("ARC-Easy",),
    ),
    "arc_challenge": Task(
        "arc_challenge",
        "multiple_choice",
        "allenai/ai2_arc",
        {"train": "train", "test": "test"},
        lambda r: _options(r["question"], r["choices"]["text"]),
        lambda r: [_arc_key(r)],
        configs=("ARC-Challenge",),
    ),
    "gpqa": Task(
        "gpqa",
        "multiple_choice",
        "Idavidrein/gpqa",
        {"test": "train"},  # gated; one split
        lambda r: _options(r["Question"], _gpqa(r)[0]),
        lambda r: [_gpqa(r)[1]],
        configs=("gpqa_diamond",),
    ),
    # context extraction
    "squad_v2": Task(
        "squad_v2",
        "context_extraction",
        "rajpurkar/squad_v2",
        {"train": "train", "test": "validation"},
        _squad_prompt,
        lambda r: r["answers"]["text"] or [UNANSWERABLE],
    ),
    "hotpotqa": Task(
        "hotpotqa",
        "context_extraction",
        "hotpotqa/hotpot_qa",
        {"train": "train", "test": "validation"},
        lambda r: _passage(_hotpot_context(r), r["question"]),
        lambda r: [r["answer"]],
        configs=("distractor",),
    ),
    "drop": Task(
        "drop",
        "context_extraction",
        "ucinlp/drop",
        {"test": "validation"},
        lambda r: _passage(r["passage"], r["question"]),
        lambda r: r["answers_spans"]["spans"],
    ),
    "coqa": Task(
        "coqa",
        "context_extraction",
        "stanfordnlp/coqa",
        {"test": "validation"},
        _coqa_prompt,
        lambda t: [t["answer"]],
        expand=_coqa_turns,
    ),
    # open math
    "gsm8k": Task(
        "gsm8k",
        "open_math",
        "openai/gsm8k",
        {"train": "train", "test": "test"},
        lambda r: r["question"],
        _gsm8k_answer,
        configs=("main",),
    ),
    "math": Task(
        "math",
        "open_math",
        "EleutherAI/hendrycks_math",
        {"train": "train", "test": "test"},
        lambda r: r["problem"],
        lambda r: [boxed(r["solution"])],
        configs=_MATH_SUBJECTS,
    ),
    "asdiv": Task(
        "asdiv",
        "open_math",
        "EleutherAI/asdiv",
        {"test": "validation"},
        lambda r: f"{r['body'].strip()} {r['question'].strip()}",
        _asdiv_answer,
    ),
    "aime24": Task(
        "aime24",
        "open_math",
        "HuggingFaceH4/aime_2024",
        {"test": "train"},
        lambda r: r["problem"],
        lambda r: [r["answer"]],
    ),
    "aime25": Task(
        "aime25", "open_math", "MathArena/aime_2025", {"test": "train"}, lambda r: r["problem"], lambda r: [r["answer"]]
    ),
    # open QA (no passage; aliases as references)
    "nq_open": Task(
        "nq_open",
        "open_qa",
        "google-research-datasets/nq_open",
        {"train": "train", "test": "validation"},
        lambda r: _open_question(r["question"]),
        lambda r: list(r["answer"]),
    ),
    "triviaqa": Task(
        "triviaqa",
        "open_qa",
        "mandarjoshi/trivia_qa",
        {"train": "train", "test": "validation"},
        lambda r: _open_question(r["question"]),
        _triviaqa_answer,
        configs=("rc.nocontext",),
    ),
}


def local_task(path: str | Path, category: str | None = None, name: str | None = None) -> Task:
    """A task from a user's JSONL/Parquet file with ``question`` and ``reference`` (or ``references``)."""
    path = Path(path)
    name = name or path.stem
    return Task(
        name,
        category or category_of(name),
        None,
        {"test": "test"},
        lambda r: r["question"],
        lambda r: r["references"] if "references" in r else [r["reference"]],
        files={"test": str(path)},
    )


def get_task(spec: str, category: str | None = None) -> Task:
    """A registered task by name, or a local task from a file path."""
    if spec in TASKS:
        return TASKS[spec]
    if Path(spec).is_file():
        return local_task(spec, category)
    raise ValueError(f"unknown task {spec!r}: not a file, nor one of {', '.join(TASKS)}")


# ---- local copies -------------------------------------------------------------------------------


def _read_table(path: Path) -> Iterator[dict]:
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        yield from pq.read_table(path).to_pylist()
    elif path.suffix in (".jsonl", ".json"):
        with open(path, encoding="utf-8") as handle:
            for lineno, line in enumerate(handle, 1):
                if line.strip():
                    try:
                        yield json.loads(line)
                    except json.JSONDecodeError as err:
                        raise ValueError(f"{path}:{lineno}: invalid JSON ({err.msg})") from None
    else:
        raise ValueError(f"{path}: expected a .jsonl, .json (JSON lines) or .parquet file")


def _read_local(folder: Path, role: str, split: str) -> Iterator[dict]:
    for name in dict.fromkeys((role, split)):
        for suffix in (".jsonl", ".json", ".parquet"):
            if (folder / f"{name}{suffix}").is_file():
                yield from _read_table(folder / f"{name}{suffix}")
                return
        if (folder / name).is_dir():
            import datasets

            yield from datasets.load_from_disk(str(folder / name))
            return
    if (folder / "dataset_dict.json").is_file():
        import datasets

        saved = datasets.load_from_disk(str(folder))
        if split in saved:
            yield from saved[split]
            return
    raise FileNotFoundError(
        f"no local copy of split {split!r} in {folder}: expected {role}.jsonl, {role}.parquet, "
        f"{split}.jsonl, a save_to_disk folder {folder / split}, or a DatasetDict in {folder}"
    )
