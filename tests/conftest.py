"""Shared fixtures: offline settings and tiny random backbones built from configs."""

from __future__ import annotations

import os
import signal
import warnings
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("WANDB_MODE", "offline")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import pytest  # noqa: E402

from bertjudge.judges import backbones  # noqa: E402

MINILM = "sentence-transformers/all-MiniLM-L6-v2"


@pytest.fixture(autouse=True)
def default_ctrl_c():
    """Ctrl-C raises KeyboardInterrupt in every test, as in a fresh ``python -m bertjudge`` process: a library that a
    test ran or imported in this process (a server, a logger) may leave its own SIGINT handler behind, so each test
    starts with Python's default one, and one left changed after a test is named in a warning."""
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    left = signal.getsignal(signal.SIGINT)
    if left is not signal.default_int_handler:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        warnings.warn(f"this test left a SIGINT handler behind ({left!r}); the default was put back", stacklevel=1)


@pytest.fixture(autouse=True)
def idle_machine(request, monkeypatch):
    """The machine reads as idle: what other processes do to its CPUs (CI may share them) never changes a result.

    ``bench_timing.MachineLoad`` counts other processes' CPU time from ``/proc/stat``; here the CPUs' busy ticks are
    this process's own CPU time, so the other load is 0 whatever runs beside the tests. A test marked ``real_load``
    reads the real ``/proc/stat``: it makes the load it measures itself (``test_bench.Spinner``)."""
    if request.node.get_closest_marker("real_load"):
        return
    import time

    from bertjudge.evaluation import bench_timing

    tick = os.sysconf("SC_CLK_TCK")

    def own_ticks(cpus):
        cpus = list(cpus)
        return round(time.process_time() * tick), round(time.monotonic() * tick * len(cpus))

    monkeypatch.setattr(bench_timing, "_cpu_ticks", own_ticks)


def require(module: str):
    """``pytest.importorskip`` for an optional integration, except in ``make test-integrations`` (CI), which sets
    ``BERTJUDGE_REQUIRE_INTEGRATIONS=1``: there a missing package fails the run instead of skipping it."""
    if os.environ.get("BERTJUDGE_REQUIRE_INTEGRATIONS") == "1":
        import importlib

        return importlib.import_module(module)
    return pytest.importorskip(module)


@pytest.fixture()
def run_folder(tmp_path, monkeypatch):
    """Run from ``tmp_path`` with the checkout's ``configs/`` and ``data/`` linked in, so that what a config writes
    under ``runs/`` (checkpoints, logs) lands in ``tmp_path``: a test never overwrites a real run's files."""
    root = Path(__file__).resolve().parent.parent
    folder = tmp_path / "cwd"
    folder.mkdir()
    for name in ("configs", "data"):
        (folder / name).symlink_to(root / name)
    monkeypatch.chdir(folder)
    return folder


TINY = {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 64}


def make_tiny_backbone(folder, model_type: str = "bert"):
    """A random-weight encoder of ``model_type`` with the MiniLM tokenizer, saved as an HF folder."""
    from transformers import AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(backbones.resolve(MINILM))
    extra = {
        "bert": {},
        "eurobert": {
            "num_key_value_heads": 2,
            "bos_token_id": 101,
            "eos_token_id": 102,
            "max_position_embeddings": 512,
        },
        "modernbert": {
            "global_attn_every_n_layers": 1,
            "local_attention": 64,
            "max_position_embeddings": 512,
            "bos_token_id": 101,
            "eos_token_id": 102,
            "sep_token_id": 102,
            "cls_token_id": 101,
        },
        "mpnet": {"bos_token_id": 101, "eos_token_id": 102},
    }
    return save_random_model(AutoModel, tokenizer, folder, model_type, **TINY, **extra[model_type])


def save_random_model(auto_class, tokenizer, folder, model_type: str, **config) -> str:
    """A model of ``model_type`` with seeded random weights and ``tokenizer``, saved as an HF folder."""
    import torch
    from transformers import AutoConfig

    config = AutoConfig.for_model(model_type, vocab_size=len(tokenizer), pad_token_id=tokenizer.pad_token_id, **config)
    torch.manual_seed(0)
    auto_class.from_config(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return str(folder)


@pytest.fixture(scope="session")
def tiny_backbone(tmp_path_factory):
    """Folder of a tiny random BERT with the real MiniLM tokenizer."""
    return make_tiny_backbone(tmp_path_factory.mktemp("tiny-bert"))


@pytest.fixture(scope="session")
def tiny_backbones(tmp_path_factory):
    """A tiny random backbone per architecture the configs use."""
    return {
        kind: make_tiny_backbone(tmp_path_factory.mktemp(f"tiny-{kind}"), kind)
        for kind in ("bert", "eurobert", "modernbert", "mpnet")
    }


@pytest.fixture(scope="session")
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
