"""``python -m bertjudge generate``: a candidate LLM answers benchmark tasks; its answers become records."""

from __future__ import annotations

import argparse
from pathlib import Path

from bertjudge.cli.common import CommandError, check_output, check_writes
from bertjudge.core.records import RecordError
from bertjudge.pipeline import generate
from bertjudge.pipeline.tasks import VARIANTS, get_task


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m bertjudge generate",
        description=generate.__doc__.split("\n\n")[0],
        epilog=generate.__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--model", required=True, help="hub id or local folder (or the name a --server knows)")
    p.add_argument("--model-name", help="the candidate_model to record (default: --model, a folder's name)")
    p.add_argument(
        "--tasks", nargs="+", required=True, help="task names or JSONL/Parquet files of (question, reference[s]) rows"
    )
    p.add_argument("--category", help="category of file tasks (default: from the file name, else 'other')")
    p.add_argument("--variant", nargs="+", default=["soft"], choices=VARIANTS, help="answer-format instruction(s)")
    p.add_argument("--split", default="test", help="train or test (default test)")
    p.add_argument("--data-dir", help="local copies of the datasets (offline); default: the hub")
    p.add_argument("--limit", type=int, help="at most this many items per task (a seeded sample)")
    p.add_argument("--seed", type=int, default=0, help="seed of the --limit sample and of sampling (default 0)")
    p.add_argument("--output", required=True, help="output folder")
    p.add_argument("--server", help="OpenAI-compatible API root, e.g. http://localhost:8000/v1")
    p.add_argument(
        "--backend",
        choices=("auto", "transformers", "vllm"),
        default="auto",
        help="local backend (default auto: vLLM when installed and a GPU is there, else transformers)",
    )
    p.add_argument("--batch-size", type=int, default=8, help="local prompts per forward pass")
    p.add_argument("--dtype", help="local weights dtype, e.g. bfloat16")
    p.add_argument("--thinking", action="store_true", help="enable thinking in the chat template (Qwen3)")
    p.add_argument("--max-new-tokens", type=int, default=2048, help="generation bound per answer (default 2048)")
    p.add_argument(
        "--temperature",
        type=float,
        nargs="+",
        default=[0.0],
        help="decoding temperature(s): 0 is greedy (default), above 0 samples (seeded by --seed)",
    )
    p.add_argument("--chunk-size", type=int, default=64, help="answers per partial-file flush")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    return p


def run(args: argparse.Namespace) -> int:
    for flag, value in (
        ("--batch-size", args.batch_size),
        ("--max-new-tokens", args.max_new_tokens),
        ("--chunk-size", args.chunk_size),
        ("--limit", args.limit),
    ):
        if value is not None and value < 1:
            raise CommandError(f"{flag} must be at least 1", usage=True)
    if any(t < 0 for t in args.temperature):
        raise CommandError("--temperature must be 0 (greedy) or above", usage=True)
    check_output(args.output, folder=True)
    model_name = args.model_name or (Path(args.model).name if Path(args.model).exists() else args.model)
    try:
        tasks = [get_task(spec, args.category) for spec in args.tasks]
        work = [(task, task.items(args.split, args.data_dir, args.limit, args.seed)) for task in tasks]
    except (RecordError, ValueError, FileNotFoundError) as err:
        raise CommandError(str(err), usage=True) from err
    check_writes(
        [
            Path(args.output) / generate.file_name(task.name, args.split, model_name, variant, temperature)
            for task in tasks
            for variant in args.variant
            for temperature in args.temperature
        ],
        [spec for spec in args.tasks if Path(spec).is_file()],
    )
    try:
        backend = generate.candidate_backend(
            args.model, args.backend, args.server, args.batch_size, args.dtype, args.thinking
        )
    except ImportError as err:
        raise CommandError(str(err)) from err
    for task, items in work:
        for variant in args.variant:
            for temperature in args.temperature:
                path = generate.generate_file(
                    backend,
                    task,
                    items,
                    variant,
                    args.split,
                    model_name,
                    Path(args.output),
                    args.max_new_tokens,
                    args.chunk_size,
                    progress=not args.no_progress,
                    temperature=temperature,
                    seed=args.seed,
                )
                print(f"{task.name}/{variant}/t={temperature:g}: {len(items)} items → {path}")
    return 0
