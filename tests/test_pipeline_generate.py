"""Candidate generation: a tiny random Llama with a real tokenizer, resuming, thinking outputs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bertjudge.cli.main import main
from bertjudge.core.records import RecordError, read_records
from bertjudge.judges import backbones
from bertjudge.pipeline.generate import file_name, generate_file, split_thinking
from bertjudge.pipeline.tasks import TASKS

DATA = Path(__file__).parent / "fixtures" / "pipeline"


@pytest.fixture(scope="module")
def tiny_llama(tmp_path_factory):
    """A random 2-layer Llama with the MiniLM tokenizer and a minimal chat template."""
    import torch
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    folder = tmp_path_factory.mktemp("tiny-llama")
    tokenizer = AutoTokenizer.from_pretrained(backbones.resolve("sentence-transformers/all-MiniLM-L6-v2"))
    tokenizer.chat_template = (
        "{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
        "{% if add_generation_prompt %}assistant:{% endif %}"
    )
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=512,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=101,
        eos_token_id=102,
    )
    torch.manual_seed(0)
    LlamaForCausalLM(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return str(folder)


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
    assert main([*args, "--max-new-tokens", "5"]) == 1  # other settings: refused, not mixed


class Scripted:
    kind = "scripted"

    def __init__(self, outputs):
        self.outputs, self.calls = list(outputs), []

    def config(self):
        return {"kind": self.kind, "model": "scripted"}

    def complete(self, conversations, max_tokens):
        self.calls.append([c[0]["content"] for c in conversations])
        return [self.outputs.pop(0) for _ in conversations]


def test_resume_from_a_partial_file_and_thinking(tmp_path):
    items = TASKS["math"].items("test", data_dir=DATA)
    first = Scripted(["<think>halve it</think>\nFinal answer: 1/2", "x", "y"])
    path = generate_file(first, TASKS["math"], items, "free", "test", "m", tmp_path, chunk_size=1)
    records = read_records(path)
    assert records[0]["candidate"] == "Final answer: 1/2"
    assert records[0]["meta"]["raw"].startswith("<think>halve it</think>") and "raw" not in records[1]["meta"]
    assert records[0]["question"] == items[0]["body"]  # free: no instruction
    assert records[0]["references"] == ["\\frac{1}{2}"]
    lines = [json.dumps(r) for r in records[:2]]
    path.unlink()
    partial = path.with_name(path.name + ".partial")
    partial.write_text(lines[0] + "\n" + lines[1] + "\n" + lines[1][:20])  # interrupted mid-line
    second = Scripted(["z"])
    generate_file(second, TASKS["math"], items, "free", "test", "m", tmp_path)
    assert second.calls == [[items[2]["body"]]] and not partial.exists()
    assert [r["candidate"] for r in read_records(path)] == ["Final answer: 1/2", "x", "z"]
    with pytest.raises(RecordError, match="generated with"):
        generate_file(Scripted([]), TASKS["math"], items, "free", "test", "m", tmp_path, max_new_tokens=7)


def test_split_thinking():
    assert split_thinking("<think>a</think> b") == ("b", True)
    assert split_thinking("reasoning without the opening tag</think>\nFinal answer: 3") == ("Final answer: 3", True)
    assert split_thinking("<think>never finished") == ("", True)
    assert split_thinking("plain") == ("plain", False)


def test_backend_choice():
    import importlib.util

    from bertjudge.pipeline.generate import candidate_backend

    server = candidate_backend("Qwen/Qwen3-8B", server="http://localhost:8000/v1")
    assert server.kind == "openai" and server.config()["base_url"] == "http://localhost:8000/v1"
    if importlib.util.find_spec("vllm") is None:
        with pytest.raises(ImportError, match="pip install vllm"):
            candidate_backend("Qwen/Qwen3-8B", backend="vllm")


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
