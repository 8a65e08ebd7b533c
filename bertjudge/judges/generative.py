"""``GenerativeJudge``: a causal LM prompted to answer True or False, fine-tuned with LoRA.

*Direct* mode (the default, and the one that trains): one forward pass over the prompt; the
logit is log P(True) − log P(False) of the verdict token, so ``sigmoid(logit)`` is
P(True) / (P(True) + P(False)) and the BCE of the base class is the loss on the verdict token
alone. *Reasoning* mode: greedy generation of a short reasoning, then the parsed verdict
(logit +inf or −inf); an output without a readable verdict scores NaN and is counted
(``{split}/unparsed`` in validation and test, ``unparsed`` in ``details``), never scored wrong.
"""

from __future__ import annotations

import copy
import math
from pathlib import Path

import torch
from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

from bertjudge.core.collate import Collator
from bertjudge.core.formats import Encoder, JudgeFormat
from bertjudge.core.judge_file import JudgeFileError
from bertjudge.judges import backbones
from bertjudge.judges.base import JudgeModule
from bertjudge.judges.prompt import MODES, PROMPT_VERSION, VERDICT_WORDS, parse_verdict, prompt_text


def default_format() -> JudgeFormat:
    return JudgeFormat(order="QRC", max_length=1024)


class PromptEncoder(Encoder):
    """Records -> token ids of the judging prompt, through the tokenizer's chat template.

    Parts are truncated by the format's segment rule (budgets in tokens) before the prompt is
    written; a tokenizer without a chat template gets the plain prompt followed by ``Answer:``.
    """

    def __init__(self, tokenizer, fmt: JudgeFormat, mode: str = "direct", thinking: bool = False):
        super().__init__(tokenizer, fmt)
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        self.mode, self.thinking = mode, thinking
        self.chat = bool(tokenizer.chat_template)
        # after a chat template's assistant header the verdict starts a line; after "Answer:" a space
        space = "" if self.chat else " "
        self.verdict_ids = [tokenizer(space + word, add_special_tokens=False)["input_ids"][0] for word in VERDICT_WORDS]
        if self.verdict_ids[0] == self.verdict_ids[1]:
            raise ValueError("the tokenizer does not tell the verdict words apart by their first token")
        self.overhead = len(self.tokenize([self.render(dict.fromkeys(fmt.parts, ""))])[0])

    def render(self, texts: dict[str, str]) -> str:
        content = prompt_text(texts, self.format.parts, self.mode)
        if not self.chat:
            return content + "\n\nAnswer:"
        return self.tokenizer.apply_chat_template(
            [{"role": "user", "content": content}],
            tokenize=False,
            add_generation_prompt=True,
            enable_thinking=self.thinking,
        )

    def tokenize(self, prompts: list[str]) -> list[list[int]]:
        # a chat template writes its own special tokens
        return self.tokenizer(prompts, add_special_tokens=not self.chat)["input_ids"]

    def encode_many(self, records: list[dict]) -> list[list[int]]:
        parts = self.format.parts
        texts = [self.texts(r) for r in records]
        tokenized = {
            p: self.tokenizer([t[p] for t in texts], add_special_tokens=False, verbose=False)["input_ids"]
            for p in parts
        }
        budget = self.format.max_length - self.overhead
        prompts = []
        for i, text in enumerate(texts):
            full = {p: tokenized[p][i] for p in parts}
            kept = self._truncate_segments(full, budget)
            prompts.append(
                self.render({p: text[p] if kept[p] == full[p] else self.tokenizer.decode(kept[p]) for p in parts})
            )
        return self.tokenize(prompts)


def left_pad(input_ids: torch.Tensor, attention_mask: torch.Tensor, pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Move right-padded rows to left padding (what generation needs)."""
    ids, mask = torch.full_like(input_ids, pad_id), torch.zeros_like(attention_mask)
    width = input_ids.shape[1]
    for i, n in enumerate(attention_mask.sum(1).tolist()):
        ids[i, width - n :] = input_ids[i, :n]
        mask[i, width - n :] = 1
    return ids, mask


def verdict_logits(
    model, input_ids: torch.Tensor, attention_mask: torch.Tensor, verdict_ids: list[int], positions: torch.Tensor
) -> torch.Tensor:
    """log P(True) − log P(False) of the next token at ``positions`` (one per row).

    Only the two rows of the LM head are needed: the softmax normalizer cancels in the difference.
    Positions count real tokens only, so left and right padding give the same result.
    """
    position_ids = (attention_mask.cumsum(1) - 1).clamp(min=0)
    hidden = model.get_decoder()(
        input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids
    ).last_hidden_state
    h = hidden[torch.arange(len(positions), device=hidden.device), positions]
    head = model.get_output_embeddings()
    logits = h @ head.weight[verdict_ids].T
    if getattr(head, "bias", None) is not None:
        logits = logits + head.bias[verdict_ids]
    cap = getattr(model.config.get_text_config(), "final_logit_softcapping", None)
    if cap:
        logits = cap * torch.tanh(logits / cap)
    return (logits[:, 0] - logits[:, 1]).float()


@torch.inference_mode()
def generate(
    model,
    tokenizer,
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor,
    max_new_tokens: int,
    temperature: float = 0.0,
    seed: int = 0,
) -> list[str]:
    """Continuations of left-padded prompts, decoded without special tokens: greedy at temperature 0,
    else sampled (seeded, without touching the global random state)."""
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    sampling = (
        {"do_sample": True, "temperature": temperature, "top_k": 0, "top_p": 1.0}
        if temperature > 0
        else {"do_sample": False}
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        out = model.generate(
            input_ids=input_ids,
            attention_mask=attention_mask,
            max_new_tokens=max_new_tokens,
            pad_token_id=pad,
            **sampling,
        )
    return tokenizer.batch_decode(out[:, input_ids.shape[1] :], skip_special_tokens=True)


class GenerativeJudge(JudgeModule):
    """A causal LM judge (the paper's LLM-as-a-judge baselines, fine-tuned or off the shelf).

    Args:
        backbone: a hub id (resolved to an installed offline copy when one exists, see
            ``bertjudge.judges.backbones``) or a local folder.
        format: parts and truncation budgets of the prompt (default order QRC, 1024 tokens);
            ``markers`` is not used.
        mode: ``direct`` (verdict-token probability, trainable) or ``reasoning`` (generate, then parse;
            evaluation only).
        lora_r: LoRA rank; 0 trains every weight (or none, for off-the-shelf evaluation).
        lora_alpha, lora_dropout, lora_target_modules: the rest of the peft ``LoraConfig``.
        thinking: passed to the chat template as ``enable_thinking`` (Qwen3).
        max_new_tokens: the generation bound of reasoning mode.
        dtype: weights dtype (``bfloat16`` for large off-the-shelf judges); None keeps fp32.
        pretrained: load the backbone's weights (False: random weights from its config).
        **kwargs: the recipe and calibration arguments of ``JudgeModule``.
    """

    judge_kind = "generative"
    # not auto: its check would run a causal LM over the 256 check rows twice (and generate in reasoning mode);
    # set_precision("auto") or --precision auto still checks it
    precision = "fp32"

    def __init__(
        self,
        backbone: str = "HuggingFaceTB/SmolLM2-135M-Instruct",
        format: JudgeFormat | None = None,
        mode: str = "direct",
        lora_r: int = 16,
        lora_alpha: int = 32,
        lora_dropout: float = 0.05,
        lora_target_modules: list[str] | str = "all-linear",
        thinking: bool = False,
        max_new_tokens: int = 256,
        dtype: str | None = None,
        pretrained: bool = True,
        lr: float = 2e-4,
        warmup_ratio: float = 0.05,
        weight_decay: float = 0.0,
        effective_batch_size: int | None = 32,
        threshold: float = 0.5,
        temperature: float = 1.0,
        bias: float = 0.0,
    ):
        super().__init__(
            format or default_format(),
            lr,
            warmup_ratio,
            weight_decay,
            effective_batch_size,
            threshold,
            temperature,
            bias,
        )
        self.save_hyperparameters(ignore=["format"])
        self.hparams["format"] = self.format.to_dict()
        path = backbones.resolve(backbone)
        self.tokenizer = AutoTokenizer.from_pretrained(path, trust_remote_code=False)
        kwargs = {"dtype": getattr(torch, dtype)} if dtype else {}
        self._loading_info = None  # checked by from_export
        if pretrained:
            model, self._loading_info = AutoModelForCausalLM.from_pretrained(
                path, output_loading_info=True, trust_remote_code=False, **kwargs
            )
        else:
            model = AutoModelForCausalLM.from_config(
                AutoConfig.from_pretrained(path, trust_remote_code=False), **kwargs
            )
        if lora_r:
            from peft import LoraConfig, get_peft_model

            model = get_peft_model(
                model,
                LoraConfig(
                    r=lora_r,
                    lora_alpha=lora_alpha,
                    lora_dropout=lora_dropout,
                    target_modules=lora_target_modules,
                    task_type="CAUSAL_LM",
                ),
            )
        self.model = model.train()  # transformers 5 returns models in eval mode
        self.encoder = PromptEncoder(self.tokenizer, self.format, mode, thinking)
        self.provenance = {"backbone": backbone, "prompt_version": PROMPT_VERSION, "mode": mode}

    @property
    def mode(self) -> str:
        return self.encoder.mode

    # --- scoring -------------------------------------------------------------------------------
    def forward(self, batch: dict) -> torch.Tensor:
        ids, mask = batch["input_ids"], batch["attention_mask"]
        if self.mode == "direct":  # right padding: the verdict follows the last real token
            return verdict_logits(self.model, ids, mask, self.encoder.verdict_ids, mask.sum(1) - 1)
        verdicts = [parse_verdict(text) for text in self.generate(batch)]
        return torch.tensor(
            [math.nan if v is None else math.inf if v else -math.inf for v in verdicts], device=ids.device
        )

    def generate(self, batch: dict) -> list[str]:
        """The generated continuation of each prompt of a (right-padded) batch."""
        ids, mask = left_pad(batch["input_ids"], batch["attention_mask"], self.encoder.pad_id)
        return generate(self.model, self.tokenizer, ids, mask, self.hparams.max_new_tokens)

    @torch.inference_mode()
    def details(self, records: list[dict], batch_size: int = 8, progress: bool = False) -> list[dict]:
        """Per record: ``output`` (reasoning mode), ``verdict``, ``unparsed`` and ``score``."""
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be a whole number of at least 1, got {batch_size!r}")
        was_training = self.training
        self.eval()
        collate, rows = Collator(self.encoder), []
        starts = range(0, len(records), batch_size)
        if progress:
            from tqdm.auto import tqdm

            starts = tqdm(starts, desc=f"judging with {self.name}", unit="batch")
        for start in starts:
            batch = collate(records[start : start + batch_size])
            batch = {k: v.to(self.device) if torch.is_tensor(v) else v for k, v in batch.items()}
            if self.mode == "direct":
                for p in self.probabilities(self(batch)).tolist():
                    rows.append({"output": None, "verdict": p >= self.threshold, "unparsed": False, "score": p})
                continue
            for text in self.generate(batch):
                verdict = parse_verdict(text)
                rows.append(
                    {
                        "output": text,
                        "verdict": verdict,
                        "unparsed": verdict is None,
                        "score": math.nan if verdict is None else float(verdict),
                    }
                )
        self.train(was_training)
        return rows

    # --- training and evaluation ---------------------------------------------------------------
    def setup(self, stage: str) -> None:
        if stage == "fit" and self.mode != "direct":
            raise ValueError("only direct mode trains (the loss is on the verdict token); set model.mode=direct")
        super().setup(stage)

    # --- export ----------------------------------------------------------------------------------
    def save_weights(self, folder: Path) -> None:
        """A plain causal LM folder: LoRA adapters are merged into a copy of the weights."""
        model = self.model
        if hasattr(model, "merge_and_unload"):
            model = copy.deepcopy(model).merge_and_unload()
        model.save_pretrained(folder)
        self.tokenizer.save_pretrained(folder)

    def config(self) -> dict:
        return {
            **super().config(),
            "mode": self.mode,
            "thinking": self.hparams.thinking,
            "max_new_tokens": self.hparams.max_new_tokens,
            "prompt_version": PROMPT_VERSION,
            "verdict_token_ids": self.encoder.verdict_ids,
        }

    @classmethod
    def from_config(cls, folder: Path, config: dict, saved: JudgeFormat, model_config: dict) -> GenerativeJudge:
        """Refuse another prompt version than this code writes."""
        for key in ("mode", "thinking", "max_new_tokens", "prompt_version"):
            if key not in config:
                raise JudgeFileError(f"{folder / 'judge.json'}: missing {key!r} (a generative judge's)")
        if config["prompt_version"] != PROMPT_VERSION:
            raise ValueError(
                f"{folder}: made with prompt {config['prompt_version']!r}, this code writes "
                f"{PROMPT_VERSION!r}; use the bertjudge version that made it"
            )
        return cls(
            backbone=str(folder),
            format=saved,
            mode=config["mode"],
            lora_r=0,
            thinking=config["thinking"],
            max_new_tokens=config["max_new_tokens"],
            threshold=config["threshold"],
            temperature=config["temperature"],
            bias=config.get("bias", 0.0),
        )
