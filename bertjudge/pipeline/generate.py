"""``python -m bertjudge generate``: a candidate LLM answers benchmark tasks; its answers become records.

Backends (greedy decoding, or sampling at ``--temperature`` with a seed): a local transformers model (batched, left padding), vLLM when it is
installed and a GPU is there, or any OpenAI-compatible server (``--server``). The prompt is the
task's question with the variant's answer-format instruction, sent as one user turn through the
model's chat template. A model that thinks (``<think>…</think>``) keeps only the part after its
thinking as candidate (an unfinished thought leaves an empty candidate); the raw output is kept in
``meta.raw``.

One file per task, split, model, variant and temperature: ``OUTPUT/<task>.<split>.<model>.<variant>.jsonl``
(``….<variant>.t0.7.jsonl`` when sampled). Each record's id derives from task, item, model, variant and
temperature, so a rerun skips what is done: answers are appended to ``<file>.partial.jsonl``
(``core.resumable.PartialFile``) as they come, and the final file replaces it in one rename. A rerun
with other generation settings, or after an item's question or references changed, is refused.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from bertjudge.core.records import RecordError, make_id, read_records, row_hash
from bertjudge.core.resumable import PartialFile
from bertjudge.judges.backends import OpenAIBackend, TransformersBackend, VLLMBackend
from bertjudge.pipeline.tasks import Task, digest

THINK_START, THINK_END = "<think>", "</think>"


def split_thinking(text: str) -> tuple[str, bool]:
    """(the answer after any thinking, whether the output had thinking)."""
    if THINK_END in text:
        return text.rsplit(THINK_END, 1)[1].strip(), True
    if THINK_START in text:
        return "", True  # the thought never finished: no answer
    return text, False


def candidate_backend(
    model: str,
    backend: str = "auto",
    server: str | None = None,
    batch_size: int = 8,
    dtype: str | None = None,
    thinking: bool = False,
):
    """An OpenAI-compatible client when ``server`` is given, else vLLM or transformers (``auto``: vLLM
    when installed and CUDA is available)."""
    if server:
        return OpenAIBackend(server, model)
    if backend == "auto":
        import torch

        backend = "vllm" if importlib.util.find_spec("vllm") and torch.cuda.is_available() else "transformers"
    if backend == "vllm":
        return VLLMBackend(model, dtype=dtype, thinking=thinking)
    return TransformersBackend(model, dtype=dtype, batch_size=batch_size, thinking=thinking)


def file_name(task: str, split: str, model: str, variant: str, temperature: float = 0.0) -> str:
    sampled = f".t{temperature:g}" if temperature > 0 else ""
    return f"{task}.{split}.{model.replace('/', '--')}.{variant}{sampled}.jsonl"


def _previous(path: Path, settings: dict) -> dict[str, dict]:
    """Records of an earlier run's final file; refused if made with other settings."""
    done = {rec["id"]: rec for rec in read_records(path)} if path.exists() else {}
    for rec in done.values():
        if rec["meta"].get("generation") != settings:
            raise RecordError(
                f"{path}: {rec['id']} was generated with {rec['meta'].get('generation')}, not "
                f"{settings}; write to another folder or delete {path}"
            )
    return done


def _resume(partial: PartialFile, settings: dict, made_from: dict[str, str]) -> dict[str, dict]:
    """Records of an interrupted run's partial file; refused if generated with other settings or from an
    item whose question or references changed since."""
    if partial.stored_settings not in (None, settings):
        raise partial.refuse(str(partial.path), f"generated with {partial.stored_settings}, not {settings}")
    done = {}
    for where, entry in partial.entries():
        rid = entry["row"]["id"]
        if rid in made_from and made_from[rid] != entry["row_hash"]:
            raise partial.refuse(where, f"{rid} was generated from another question or references than its item's now")
        done[rid] = entry["row"]
    return done


def generate_file(
    backend,
    task: Task,
    items: list[dict],
    variant: str,
    split: str,
    model_name: str,
    out: Path,
    max_new_tokens: int = 2048,
    chunk_size: int = 64,
    progress: bool = False,
    temperature: float = 0.0,
    seed: int = 0,
) -> Path:
    """Generate the candidates of one task and variant into ``out`` (resumable); return the file.

    Sampling (``temperature`` > 0) is seeded per chunk (``seed`` + the chunk's start), so a run that
    is not interrupted is reproducible."""
    config = backend.config()
    decoding = {"temperature": temperature, "seed": seed} if temperature > 0 else "greedy"
    settings = {
        "backend": config["kind"],
        "model": config["model"],
        "thinking": config.get("thinking", False),
        "decoding": decoding,
        "max_new_tokens": max_new_tokens,
    }
    salt = f"t{temperature:g}" if temperature > 0 else ""  # greedy ids are those of earlier versions
    path = out / file_name(task.name, split, model_name, variant, temperature)
    done = _previous(path, settings)
    todo, made_from = [], {}
    for item in items:
        rec_id = make_id(task.name, item["item"], model_name, variant, salt)
        question = task.question(item["body"], variant)
        made_from[rec_id] = row_hash({"question": question, "references": item["references"]})
        if rec_id not in done:
            todo.append((rec_id, item, question))
    hint = f"write to another folder, or delete {path.name}.partial.jsonl to generate again"
    with PartialFile(path, "generate", settings, hint=hint) as partial:
        done.update(_resume(partial, settings, made_from))
        todo = [job for job in todo if job[0] not in done]
        bar = None
        if progress and todo:
            from tqdm.auto import tqdm

            bar = tqdm(total=len(todo), desc=f"{task.name}/{variant}", unit="answer")
        for start in range(0, len(todo), chunk_size):
            chunk = todo[start : start + chunk_size]
            conversations = [[{"role": "user", "content": q}] for _, _, q in chunk]
            outputs = (
                backend.complete(conversations, max_new_tokens, temperature, seed + start)
                if temperature > 0
                else backend.complete(conversations, max_new_tokens)
            )
            entries = []
            for (rec_id, item, question), raw in zip(chunk, outputs, strict=True):
                candidate, thought = split_thinking(raw)
                meta = {
                    "item": item["item"],
                    "variant": variant,
                    "prompt_hash": digest(question)[:16],
                    "generation": settings,
                    **({"raw": raw} if thought else {}),
                }
                done[rec_id] = {
                    "id": rec_id,
                    "task": task.name,
                    "category": task.category,
                    "question": question,
                    "candidate": candidate,
                    "references": item["references"],
                    "label": None,
                    "label_source": None,
                    "candidate_model": model_name,
                    "split": split,
                    "meta": meta,
                }
                entries.append((made_from[rec_id], done[rec_id]))
            partial.append(entries)
            if bar is not None:
                bar.update(len(chunk))
        if bar is not None:
            bar.close()
        if done:
            partial.commit(done.values())
        else:
            partial.path.unlink()
    return path
