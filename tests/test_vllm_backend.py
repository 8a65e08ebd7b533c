"""The vLLM backend (``bertjudge.judges.backends.VLLMBackend``).

Everywhere: without vLLM, every way to ask for it (the class, ``make_backend``, a prompted judge's
``judge.json``, ``generate --backend vllm``) fails with the ImportError that names ``pip install vllm``; the
verdict logit it reads from vLLM's listed log-probabilities follows the rule ``OpenAIBackend`` uses.

Where vLLM and a CUDA GPU are there (``pytest -m gpu tests/test_vllm_backend.py``): on the same
conversations, vLLM's verdict logits and ``PromptedJudge`` direct-mode verdicts match the transformers
backend's. The model is ``$BERTJUDGE_VLLM_MODEL`` (a hub id or a folder), by default the offline
SmolLM2-135M-Instruct that ``bertjudge.judges.backbones.resolve`` finds.
"""

from __future__ import annotations

import importlib.util
import math
import os
from pathlib import Path

import numpy as np
import pytest
from test_generative import toy_records

from bertjudge.core.judge_file import read_judge_config, write_judge_config
from bertjudge.judges import backbones
from bertjudge.judges.backends import (
    OpenAIBackend,
    PromptedJudge,
    TransformersBackend,
    VLLMBackend,
    make_backend,
    verdict_logit,
)
from bertjudge.judges.loading import Judge
from bertjudge.pipeline.generate import candidate_backend

MODEL = os.environ.get("BERTJUDGE_VLLM_MODEL", "HuggingFaceTB/SmolLM2-135M-Instruct")
# Both backends run the model in float32 (vLLM supports it for correctness checks like this one): bfloat16
# cannot tell these logits apart. SmolLM2-135M's verdict logits on the toy prompts are small (|logit| <= 0.26
# on CPU in float32) while its logits, between 16 and 32, are only good to 0.125 in bfloat16, so two bfloat16
# kernels disagree by whole 0.125 steps. In float32 the kernels differ only in summation order (expected about
# 1e-3 here; not measured: no GPU where this was written); 0.05 leaves room for reduced-precision (TF32)
# matmuls while staying below most of the logits.
TOLERANCE = 0.05
# vLLM starts faster without CUDA graphs and leaves room on the GPU for the transformers copy
ENGINE = {"gpu_memory_utilization": 0.3, "enforce_eager": True, "max_model_len": 2048}


def test_without_vllm_every_way_to_the_backend_names_the_install(tmp_path):
    if importlib.util.find_spec("vllm") is not None:
        pytest.skip("vllm is installed")
    with pytest.raises(ImportError, match="pip install vllm"):
        VLLMBackend("Qwen/Qwen3-8B")
    with pytest.raises(ImportError, match="pip install vllm"):
        make_backend({"kind": "vllm", "model": "Qwen/Qwen3-8B", "top_logprobs": 5})
    with pytest.raises(ImportError, match="pip install vllm"):
        candidate_backend("Qwen/Qwen3-8B", backend="vllm")
    # a prompted judge's folder as export() writes it, its backend a vLLM one
    PromptedJudge(OpenAIBackend("http://localhost:9/v1", "Qwen/Qwen3-8B"), mode="direct").export(tmp_path)
    config = read_judge_config(tmp_path)
    config["backend"] = {"kind": "vllm", "model": "Qwen/Qwen3-8B", "dtype": None, "thinking": False}
    write_judge_config(tmp_path, config)
    with pytest.raises(ImportError, match="pip install vllm"):
        Judge.load(str(tmp_path))


def test_the_verdict_logit_from_listed_token_ids():
    true, false = 11, 22
    listed = [(5, -0.3), (true, -1.2), (7, -2.0), (false, -2.5)]
    assert verdict_logit(listed, true, false) == pytest.approx(-1.2 - -2.5)
    # a verdict token that is not listed is at most as likely as the least likely listed one
    assert verdict_logit(listed[:3], true, false) == pytest.approx(-1.2 - min(lp for _, lp in listed[:3]))
    assert verdict_logit([(false, -0.1), (5, -3.0)], true, false) == pytest.approx(-3.0 - -0.1)
    assert math.isnan(verdict_logit([(5, -0.3), (7, -2.0)], true, false))


@pytest.fixture(scope="module")
def backends():
    """(vLLM, transformers) over the same model on the GPU, both in float32."""
    pytest.importorskip("vllm")
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("vLLM needs a CUDA GPU")
    if not Path(backbones.resolve(MODEL)).exists() and os.environ.get("HF_HUB_OFFLINE") == "1":
        pytest.skip(f"no offline copy of {MODEL}; set BERTJUDGE_VLLM_MODEL to a local model folder")
    fast = VLLMBackend(MODEL, dtype="float32", engine_args=ENGINE)
    reference = TransformersBackend(MODEL, dtype="float32", device="cuda", batch_size=8)
    return fast, reference


@pytest.fixture(scope="module")
def records():
    return toy_records(16)


@pytest.mark.gpu
@pytest.mark.slow
def test_verdict_logits_match_the_transformers_backend(backends, records):
    fast, reference = backends
    assert fast.verdict_ids == reference.verdict_ids
    conversations = [PromptedJudge(reference, mode="direct").conversation(r) for r in records]
    ours, theirs = fast.verdict_logits(conversations), reference.verdict_logits(conversations)
    assert ours.shape == theirs.shape == (len(records),) and not np.isnan(ours).any()
    worst = np.abs(ours - theirs).max()
    assert worst <= TOLERANCE, f"vLLM and transformers verdict logits differ by up to {worst:.3f}"
    clear = np.abs(theirs) > TOLERANCE  # rows nearer 0 than the tolerance may round either way
    assert clear.any(), f"every logit is within {TOLERANCE} of 0: the sign comparison would be empty"
    assert (np.sign(ours[clear]) == np.sign(theirs[clear])).all()


@pytest.mark.gpu
@pytest.mark.slow
def test_prompted_judge_over_vllm_gives_the_transformers_verdicts(backends, records):
    fast, reference = backends
    ours = PromptedJudge(fast, mode="direct").details(records)
    theirs = PromptedJudge(reference, mode="direct").details(records)
    assert not any(row["unparsed"] for row in ours)
    scores, expected = (np.array([row["score"] for row in rows]) for rows in (ours, theirs))
    # P = sigmoid(logit) moves at most a quarter as much as the logit
    assert np.abs(scores - expected).max() <= TOLERANCE / 4
    clear = np.abs(expected - 0.5) > TOLERANCE / 4  # rows this near the threshold may round either way
    assert clear.any(), "every score is at the threshold: the verdict comparison would be empty"
    verdicts = [(row["verdict"], other["verdict"]) for row, other, c in zip(ours, theirs, clear, strict=True) if c]
    assert all(mine == theirs_ for mine, theirs_ in verdicts)


@pytest.mark.gpu
@pytest.mark.slow
def test_vllm_completes_each_conversation(backends, records):
    fast, _ = backends
    conversations = [PromptedJudge(fast, mode="reasoning").conversation(r) for r in records[:3]]
    outputs = fast.complete(conversations, max_tokens=8)
    assert len(outputs) == 3 and all(isinstance(text, str) and text for text in outputs)
