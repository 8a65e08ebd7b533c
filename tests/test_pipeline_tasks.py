"""Every task's loader, prompt builder and reference builder on tiny fixtures in the datasets' real formats."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bertjudge.data.sources import category_of
from bertjudge.judges.regex import question_options
from bertjudge.pipeline.tasks import TASKS, VARIANTS, get_task, instruction, local_task

DATA = Path(__file__).parent / "fixtures" / "pipeline"

# task -> (split, references of each item in order, a piece of the first item's body)
EXPECTED = {
    "mmlu": ("test", [["B"], ["B"], ["C"]], "Options:\nA. Oxygen\nB. Carbon dioxide"),
    "mmlu_pro": ("test", [["B"], ["D"]], "J. Array"),
    "arc_easy": ("test", [["B"], ["C"]], "B. balance"),
    "arc_challenge": ("test", [["B"]], "A student heats ice"),
    "squad_v2": ("test", [["1854", "in 1854"], ["unanswerable"]], "Passage:\nThe lighthouse"),
    "hotpotqa": ("test", [["Finland"]], "Aino Virta: Aino Virta was a designer born in Finland. She studied"),
    "drop": ("test", [["two", "2"]], "How many field goals"),
    "coqa": ("test", [["a kite"], ["red"], ["his sister Ana"]], "Question: What did Tom have?"),
    "gsm8k": ("test", [["31"], ["25000"]], "Ana buys 3 boxes"),
    "math": ("test", [["\\frac{1}{2}"], ["\\sqrt{2}+\\frac{3}{4}"], ["\\{2\\}"]], "Simplify"),
    "asdiv": ("test", [["9"]], "Mia had 12 apples. She ate 3 of them. How many apples"),
    "aime24": ("test", [["001"]], "$7^{100}$"),
    "aime25": ("test", [["28"]], "positive integers"),
    "nq_open": ("test", [["Leonard Cohen"], ["1889", "31 March 1889"]], "Who sang the original version of hallelujah?"),
    "triviaqa": ("test", [["David Seville"], ["Cancer", "Malignant neoplasm", "Cancers"]], "The Chipmunks?"),
}


def test_registry_covers_the_papers_tasks():
    assert len(TASKS) == 17  # the paper's 15 and two open-QA tasks
    counts = {}
    for name, task in TASKS.items():
        assert task.name == name and task.category == category_of(name)
        counts[task.category] = counts.get(task.category, 0) + 1
        assert "test" in task.splits
    assert counts == {"multiple_choice": 6, "context_extraction": 4, "open_math": 5, "open_qa": 2}
    assert {n for n, t in TASKS.items() if "train" in t.splits} == {
        "mmlu",
        "arc_easy",
        "arc_challenge",
        "squad_v2",
        "hotpotqa",
        "gsm8k",
        "math",
        "nq_open",
        "triviaqa",
    }


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_loader_prompt_and_references(name):
    split, references, piece = EXPECTED[name]
    items = TASKS[name].items(split, data_dir=DATA)
    assert [item["references"] for item in items] == references
    assert piece in items[0]["body"]
    assert len({item["item"] for item in items}) == len(items)


@pytest.mark.parametrize("name", sorted(n for n, t in TASKS.items() if "train" in t.splits))
def test_train_splits_load(name):
    items = TASKS[name].items("train", data_dir=DATA)
    assert items and all(item["references"] for item in items)


@pytest.mark.parametrize("name", ["truthfulqa", "gpqa"])
def test_shuffled_options_keep_the_right_answer(name):
    correct = {
        "truthfulqa": ["It passes through your digestive system.", "No, it is far too narrow to see from the Moon."],
        "gpqa": ["The photon", "sp3"],
    }[name]
    items = TASKS[name].items("test", data_dir=DATA)
    letters = []
    for item, text in zip(items, correct, strict=True):
        [letter] = item["references"]
        assert question_options(item["body"])[letter] == text
        letters.append(letter)
    assert TASKS[name].items("test", data_dir=DATA) == items  # the order is seeded, not random
    assert letters != ["A"] * len(letters)  # the datasets list the right answer first


def test_coqa_turns_carry_the_history():
    items = TASKS["coqa"].items("test", data_dir=DATA)
    assert "Conversation so far" not in items[0]["body"]
    assert "Q: What did Tom have?\nA: a kite\nQ: What colour was it?\nA: red" in items[2]["body"]
    assert items[2]["body"].endswith("Question: Who did he fly it with?")


def test_instructions_are_worded_per_category_and_not_swapped():
    for category in ("multiple_choice", "context_extraction", "open_math", "other"):
        soft, strict = instruction(category, "soft"), instruction(category, "strict")
        assert "Final answer: X" in soft and "Final answer: X" in strict
        assert "reason" in soft and "end your response" in soft and "only" not in soft
        assert strict.startswith("Answer only") and "reason" not in strict
    assert "letter" in instruction("multiple_choice", "soft")
    assert "passage" in instruction("context_extraction", "strict")
    assert instruction("open_math", "free") == ""
    task = TASKS["gsm8k"]
    assert task.question("Q?", "free") == "Q?"
    assert task.question("Q?", "strict") == "Q?\n\n" + instruction("open_math", "strict")
    with pytest.raises(ValueError, match="variant"):
        task.question("Q?", "loose")
    assert VARIANTS == ("free", "soft", "strict")


def test_datasets_save_to_disk_folder_and_missing_split(tmp_path):
    import datasets

    rows = [json.loads(line) for line in (DATA / "gsm8k" / "test.jsonl").read_text().splitlines()]
    datasets.DatasetDict({"test": datasets.Dataset.from_list(rows)}).save_to_disk(str(tmp_path / "gsm8k"))
    assert [i["references"] for i in TASKS["gsm8k"].items("test", data_dir=tmp_path)] == [["31"], ["25000"]]
    with pytest.raises(FileNotFoundError, match="train"):
        TASKS["gsm8k"].items("train", data_dir=tmp_path)
    with pytest.raises(ValueError, match="no 'train' split"):
        TASKS["gpqa"].items("train", data_dir=DATA)


def test_local_user_task_and_limit(tmp_path):
    path = tmp_path / "capitals.jsonl"
    rows = [{"question": f"Capital number {i}?", "reference": f"City {i}"} for i in range(10)]
    rows.append({"question": "Capital of Peru?", "references": ["Lima", "Lima, Peru"]})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    task = get_task(str(path))
    assert task.name == "capitals" and task.category == "other"
    items = task.items()
    assert len(items) == 11 and items[-1]["references"] == ["Lima", "Lima, Peru"]
    sample = task.items(limit=4, seed=1)
    assert len(sample) == 4 and sample == task.items(limit=4, seed=1)
    assert [items.index(s) for s in sample] == sorted(items.index(s) for s in sample)
    assert local_task(path, category="open_math").category == "open_math"
    with pytest.raises(ValueError, match="unknown task"):
        get_task("no-such-task")
