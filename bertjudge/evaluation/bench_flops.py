"""FLOPs per judgment of an architecture, and the architectures ``bench`` costs (``bertjudge.evaluation.bench``).

``ARCHITECTURES`` are the published configs, written out in ``bertjudge/zoo/architectures.yaml`` (package data: no
hub access needed). FLOPs are counted by ``torch.utils.flop_counter.FlopCounterMode`` on the ``meta`` device, as the
protocol in ``bench`` and ``benchmarks/README.md`` says: one forward pass (encoders), one prefill with the LM head at
the last position (generative, direct), plus the decode steps with a KV cache (reasoning, score10)."""

from __future__ import annotations

import copy
import dataclasses

from bertjudge.judges.prompt import SCORE_MODE, SCORE_TOKENS
from bertjudge.zoo import registry as zoo

REASONING_TOKENS = 512


# --- architectures: the published configs (bertjudge/zoo/architectures.yaml) -------------------------------
@dataclasses.dataclass(frozen=True)
class Arch:
    hub_id: str
    kind: str  # "encoder" or "causal"
    model_type: str
    config: dict

    def make_config(self):
        from transformers import AutoConfig

        return AutoConfig.for_model(self.model_type, **self.config)


# by key: each one's values of the model's config.json on the Hugging Face Hub (text model for Gemma 3)
ARCHITECTURES = {key: Arch(**spec) for key, spec in zoo.load_architectures().items()}


def decode_steps(mode: str, k: int = REASONING_TOKENS) -> int:
    """Tokens generated after the prefill: ``k`` (reasoning), ``SCORE_TOKENS`` (score10), 0 (direct)."""
    return {"reasoning": k, SCORE_MODE: SCORE_TOKENS}.get(mode, 0)


def arch_for_backbone(backbone: str) -> str | None:
    """The architecture key of a backbone hub id (None when unknown)."""
    return next((key for key, arch in ARCHITECTURES.items() if arch.hub_id.lower() == str(backbone).lower()), None)


# --- FLOPs ---------------------------------------------------------------------------------------
def build_model(config, kind: str, num_labels: int = 1, device="meta", dtype=None, attn: str | None = "eager"):
    """A model of ``config`` (random weights; on ``meta`` nothing is allocated); ``attn=None``: the
    fastest attention the architecture supports."""
    import torch
    from transformers import AutoModelForCausalLM, AutoModelForSequenceClassification

    config = copy.deepcopy(config)
    if kind == "encoder":
        config.num_labels = num_labels
        cls = AutoModelForSequenceClassification
    else:
        cls = AutoModelForCausalLM
    with torch.device(device):
        model = cls.from_config(config, attn_implementation=attn, dtype=dtype)
    return model.eval()


def count_flops(model, **inputs) -> int:
    """FLOPs of one forward call, by ``torch.utils.flop_counter``."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    with torch.no_grad(), FlopCounterMode(display=False) as counter:
        model(**inputs)
    return int(counter.get_total_flops())


def _ids(length: int, batch: int = 1, device="meta"):
    import torch

    return torch.zeros((batch, length), dtype=torch.long, device=device)


def judgment_flops(
    config, kind: str, length: int, mode: str = "encoder", k: int = REASONING_TOKENS, num_labels: int = 1
) -> tuple[int, int]:
    """(FLOPs per judgment, parameter count) of an architecture at ``length`` tokens (see module doc)."""
    model = build_model(config, "encoder" if kind == "encoder" else "causal", num_labels)
    params = sum(p.numel() for p in model.parameters())
    if kind == "encoder":
        return count_flops(model, input_ids=_ids(length)), params
    flops = count_flops(model, input_ids=_ids(length), logits_to_keep=1)
    steps = decode_steps(mode, k)
    if steps:
        first, last = (_decode_step_flops(model, context) for context in (length, length + steps - 1))
        flops += steps * (first + last) // 2
    return flops, params


def _decode_step_flops(model, context: int) -> int:
    """FLOPs of one decode step (one new token, LM head on it) after ``context`` cached tokens."""
    import torch

    with torch.no_grad():
        cache = model(input_ids=_ids(context), use_cache=True, logits_to_keep=1).cache
    return count_flops(model, input_ids=_ids(1), cache=cache, logits_to_keep=1)
