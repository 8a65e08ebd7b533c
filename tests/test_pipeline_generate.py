"""Candidate generation: a tiny random Llama with a real tokenizer, resuming, thinking outputs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bertjudge.cli.main import main
from bertjudge.core.records import RecordError, read_records
from bertjudge.pipeline.generate import file_name, generate_file, split_thinking
from bertjudge.pipeline.tasks import TASKS

DATA = Path(__file__).parent / "fixtures" / "pipeline"


def test_cli_generates_valid_records_and_resumes(tiny_llama, tmp_path, monkeypatch):
    user_task = tmp_path / "capitals.jsonl"
    user_task.write_text(json.dumps({"question": "Capital of France?", "reference": "Paris"}) + "\n")
    out = tmp_path / "out"
    args = [
        "generate",
        "--model",
        tiny_llama,
        "--tasks",
        "gsm8k",
        str(user_task),
        "--data-dir",
        str(DATA),
        "--variant",
        "soft",
        "strict",
        "--output",
        str(out),
        "--max-new-tokens",
        "4",
        "--batch-size",
        "2",
        "--no-progress",
    ]
    assert main(args) == 0
    model = Path(tiny_llama).name  # the model's name is its folder's
    files = sorted(p.name for p in out.iterdir())
    assert files == sorted(file_name(t, "test", model, v) for t in ("gsm8k", "capitals") for v in ("soft", "strict"))
    records = read_records(out / file_name("gsm8k", "test", model, "soft"))
    assert len(records) == 2 and [r["references"] for r in records] == [["31"], ["25000"]]
    first = records[0]
    assert first["candidate_model"] == model and first["split"] == "test" and first["label"] is None
    assert first["question"].endswith(
        "end your response with 'Final answer: X', where X is the final result (a number or a mathematical expression)."
    )
    assert first["meta"]["generation"] == {
        "backend": "transformers",
        "model": tiny_llama,
        "thinking": False,
        "decoding": "greedy",
        "max_new_tokens": 4,
    }
    assert first["meta"]["variant"] == "soft" and len(first["meta"]["prompt_hash"]) == 16
    assert isinstance(first["candidate"], str)
    strict = read_records(out / file_name("gsm8k", "test", model, "strict"))
    assert {r["id"] for r in strict}.isdisjoint(r["id"] for r in records)
    assert [r["meta"]["item"] for r in strict] == [r["meta"]["item"] for r in records]

    calls = []
    from bertjudge.judges.backends import TransformersBackend

    original = TransformersBackend.complete
    monkeypatch.setattr(
        TransformersBackend, "complete", lambda self, c, m: calls.append(len(c)) or original(self, c, m)
    )
    assert main(args) == 0 and calls == []  # everything was done
    assert read_records(out / file_name("gsm8k", "test", model, "soft")) == records
    assert main([*args, "--max-new-tokens", "5"]) == 2  # other settings: refused, not mixed


class Scripted:
    kind = "scripted"

    def __init__(self, outputs):
        self.outputs, self.calls = list(outputs), []

    def config(self):
        return {"kind": self.kind, "model": "scripted"}

    def complete(self, conversations, max_tokens):
        self.calls.append([c[0]["content"] for c in conversations])
        return [self.outputs.pop(0) for _ in conversations]


class Interrupted(Scripted):
    """Stopped (Ctrl-C) in its call number ``after`` + 1."""

    def __init__(self, outputs, after):
        super().__init__(outputs)
        self.after = after

    def complete(self, conversations, max_tokens):
        if len(self.calls) == self.after:
            raise KeyboardInterrupt
        return super().complete(conversations, max_tokens)


def test_resume_from_a_partial_file_and_thinking(tmp_path):
    items = TASKS["math"].items("test", data_dir=DATA)
    first = Interrupted(["<think>halve it</think>\nFinal answer: 1/2", "x", "y"], after=2)
    with pytest.raises(KeyboardInterrupt):
        generate_file(first, TASKS["math"], items, "free", "test", "m", tmp_path, chunk_size=1)
    path = tmp_path / file_name("math", "test", "m", "free")
    partial = path.with_name(path.name + ".partial.jsonl")
    assert not path.exists() and len(partial.read_text().splitlines()) == 1 + 2  # a header, two answers
    with open(partial, "a") as handle:
        handle.write(partial.read_text().splitlines()[-1][:20])  # kill -9 in the middle of a line
    second = Scripted(["z"])
    generate_file(second, TASKS["math"], items, "free", "test", "m", tmp_path)
    assert second.calls == [[items[2]["body"]]] and not partial.exists()
    records = read_records(path)
    assert [r["candidate"] for r in records] == ["Final answer: 1/2", "x", "z"]
    assert records[0]["meta"]["raw"].startswith("<think>halve it</think>") and "raw" not in records[1]["meta"]
    assert records[0]["question"] == items[0]["body"]  # free: no instruction
    assert records[0]["references"] == ["\\frac{1}{2}"]
    with pytest.raises(RecordError, match="generated with"):
        generate_file(Scripted([]), TASKS["math"], items, "free", "test", "m", tmp_path, max_new_tokens=7)


def test_a_resume_after_an_item_changed_is_refused(tmp_path):
    items = TASKS["math"].items("test", data_dir=DATA)
    with pytest.raises(KeyboardInterrupt):
        generate_file(Interrupted(["a", "b", "c"], after=1), TASKS["math"], items, "free", "test", "m", tmp_path, 9, 1)
    partial = tmp_path / (file_name("math", "test", "m", "free") + ".partial.jsonl")
    before = partial.read_bytes()
    edited = [dict(items[0], references=["7"]), *items[1:]]
    with pytest.raises(RecordError, match=r"partial\.jsonl:2: .* was generated from another question or references"):
        generate_file(Scripted(["x", "y", "z"]), TASKS["math"], edited, "free", "test", "m", tmp_path, 9)
    assert partial.read_bytes() == before
    with pytest.raises(RecordError, match=r"partial\.jsonl: generated with .*write to another folder"):
        generate_file(Scripted(["x", "y", "z"]), TASKS["math"], items, "free", "test", "m", tmp_path, 10)


def test_split_thinking():
    assert split_thinking("<think>a</think> b") == ("b", True)
    assert split_thinking("reasoning without the opening tag</think>\nFinal answer: 3") == ("Final answer: 3", True)
    assert split_thinking("<think>never finished") == ("", True)
    assert split_thinking("plain") == ("plain", False)


def test_backend_choice():  # backend="vllm" without vLLM: tests/test_vllm_backend.py
    from bertjudge.pipeline.generate import candidate_backend

    server = candidate_backend("Qwen/Qwen3-8B", server="http://localhost:8000/v1")
    assert server.kind == "openai" and server.config()["base_url"] == "http://localhost:8000/v1"


def test_sampling_at_a_temperature_is_seeded_and_kept_apart_from_greedy(tiny_llama, tmp_path):
    user_task = tmp_path / "capitals.jsonl"
    user_task.write_text(
        "".join(json.dumps({"question": f"Capital of country {i}?", "reference": "Paris"}) + "\n" for i in range(4))
    )
    base = [
        "generate",
        "--model",
        tiny_llama,
        "--tasks",
        str(user_task),
        "--variant",
        "free",
        "--max-new-tokens",
        "12",
        "--batch-size",
        "2",
        "--no-progress",
    ]
    assert main(base + ["--output", str(tmp_path / "a"), "--temperature", "0", "1.5"]) == 0
    assert main(base + ["--output", str(tmp_path / "b"), "--temperature", "1.5"]) == 0
    model = Path(tiny_llama).name
    greedy = read_records(tmp_path / "a" / file_name("capitals", "test", model, "free"))
    sampled = read_records(tmp_path / "a" / file_name("capitals", "test", model, "free", 1.5))
    again = read_records(tmp_path / "b" / file_name("capitals", "test", model, "free", 1.5))
    assert [r["candidate"] for r in sampled] == [r["candidate"] for r in again]  # same seed, same text
    assert [r["candidate"] for r in sampled] != [r["candidate"] for r in greedy]
    assert {r["id"] for r in sampled}.isdisjoint(r["id"] for r in greedy)
    assert sampled[0]["meta"]["generation"]["decoding"] == {"temperature": 1.5, "seed": 0}
