"""Off-the-shelf LLM judges at scale: inference backends and ``PromptedJudge``.

A backend answers two calls on lists of chat conversations: ``complete`` (text: greedy at
temperature 0, else sampled with a seed) and
``verdict_logits`` (log P(True) − log P(False) of the first answer token, NaN when unknown).

- ``TransformersBackend``: a local Hugging Face causal LM, batched, left padding.
- ``VLLMBackend``: vLLM offline inference on a GPU (``pip install vllm``), the same prompt tokens as
  ``TransformersBackend`` (``chat_prompts``, ``verdict_token_ids``).
- ``OpenAIBackend``: any OpenAI-compatible server (vLLM, llama.cpp, hosted APIs) over HTTP, with
  concurrent requests, retries with back-off, and a clear error when the server is unreachable.

``PromptedJudge`` puts the ``GenerativeJudge`` prompt (``bertjudge.judges.prompt``) in front of a
backend, or, in ``score10`` mode, JudgeLM's prompt shape: a 1–10 score of the answer against the
reference, P(correct) = (score − 1) / 9, and a verdict threshold fitted on labelled rows
(``fit_threshold``). It does not train; ``save(folder)`` writes a ``judge.json`` that ``Judge.load`` and
``python -m bertjudge judge`` accept (an API key is read from an environment variable, never saved).
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from bertjudge.core.extract import final_answer
from bertjudge.core.formats import NO_ANSWER, REFERENCE_JOIN, JudgeFormat
from bertjudge.core.judge_file import read_judge_config, write_judge_config
from bertjudge.core.registry import Registry
from bertjudge.judges import backbones
from bertjudge.judges.generative import generate, verdict_logits
from bertjudge.judges.interface import BaseJudge, class_path
from bertjudge.judges.prompt import (
    PROMPTED_MODES,
    SCORE_MODE,
    SCORE_TOKENS,
    VERDICT_WORDS,
    messages,
    parse_score,
    parse_verdict,
    prompt_version,
    score_to_probability,
    shorten,
)


class BackendError(RuntimeError):
    """A backend that cannot answer (server unreachable, refused request, malformed reply)."""


class Backend:
    """What a prompted judge asks of a model: ``complete(conversations, max_tokens)`` (the generated texts) and, for
    ``direct`` mode, ``verdict_logits(conversations)``; ``kind`` and ``config()`` (how ``make_backend`` rebuilds it);
    ``batch_unit``: how many prompts one call handles at once (a judge's chunks are whole numbers of them; None: the
    backend schedules its own batches and gets every prompt in one call)."""

    kind = "backend"
    batch_unit: int | None = None

    def config(self) -> dict:
        raise NotImplementedError

    def complete(self, conversations: list[list[dict]], max_tokens: int) -> list[str]:
        raise NotImplementedError

    def verdict_logits(self, conversations: list[list[dict]]) -> list[float]:
        raise BackendError(f"the {self.kind} backend gives no verdict log-probabilities: use reasoning mode")

    def place(self, device=None, dtype=None) -> Backend:
        """Move the model it runs here to ``device`` and cast its weights to ``dtype``; a model that runs elsewhere
        (a server, an engine that places its own) stays as it is. Returns the backend."""
        return self

    def local_model(self) -> tuple | None:
        """(model, tokenizer) of the causal LM it runs in this process, as transformers objects; None when the model
        runs elsewhere (a server, an engine of its own)."""
        return None


def chat_prompts(tokenizer, conversations: list[list[dict]], thinking: bool = False) -> list[str]:
    """Each conversation through the model's chat template, ending with the assistant's header.

    One function for every local backend, so that they all score the same prompt text.
    """
    return [
        tokenizer.apply_chat_template(c, tokenize=False, add_generation_prompt=True, enable_thinking=thinking)
        for c in conversations
    ]


def verdict_token_ids(tokenizer) -> list[int]:
    """The first token of ``True`` and of ``False`` as the first word of the answer (no leading space: they
    follow the assistant header), in ``VERDICT_WORDS`` order."""
    return [tokenizer(w, add_special_tokens=False)["input_ids"][0] for w in VERDICT_WORDS]


class TransformersBackend(Backend):
    """A local causal LM through its chat template, in batches with left padding.

    Args:
        model: a hub id (resolved to an offline copy when one is installed) or a local folder.
        dtype: weights dtype name (``bfloat16``…); None keeps the checkpoint's default.
        device: ``cpu``, ``cuda``…; None picks CUDA when available.
        batch_size: prompts per forward pass.
        thinking: passed to the chat template as ``enable_thinking`` (Qwen3).
    """

    kind = "transformers"

    @property
    def batch_unit(self) -> int:
        """Prompts a call handles at once (a forward pass): a judge's chunks are whole numbers of them."""
        return self.batch_size

    def __init__(
        self,
        model: str,
        dtype: str | None = None,
        device: str | None = None,
        batch_size: int = 8,
        thinking: bool = False,
    ):
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        path = backbones.resolve(model)
        self.name, self.batch_size, self.thinking = model, batch_size, thinking
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.tokenizer = AutoTokenizer.from_pretrained(path, padding_side="left")
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        kwargs = {"dtype": getattr(torch, dtype)} if dtype else {}
        self.model = AutoModelForCausalLM.from_pretrained(path, **kwargs).to(self.device).eval()
        self.verdict_ids = verdict_token_ids(self.tokenizer)

    def config(self) -> dict:
        return {"kind": self.kind, "model": self.name, "batch_size": self.batch_size, "thinking": self.thinking}

    def local_model(self) -> tuple:
        return self.model, self.tokenizer

    def place(self, device=None, dtype=None) -> TransformersBackend:
        if device is not None or dtype is not None:
            self.model.to(device=device, dtype=dtype)
        if device is not None:
            self.device = str(device)
        return self

    def _batches(self, conversations: list[list[dict]]):
        prompts = chat_prompts(self.tokenizer, conversations, self.thinking)
        for start in range(0, len(prompts), self.batch_size):
            batch = self.tokenizer(
                prompts[start : start + self.batch_size], padding=True, add_special_tokens=False, return_tensors="pt"
            ).to(self.device)
            yield batch["input_ids"], batch["attention_mask"]

    def complete(
        self, conversations: list[list[dict]], max_tokens: int, temperature: float = 0.0, seed: int = 0
    ) -> list[str]:
        return [
            text
            for i, (ids, mask) in enumerate(self._batches(conversations))
            for text in generate(self.model, self.tokenizer, ids, mask, max_tokens, temperature, seed + i)
        ]

    def verdict_logits(self, conversations: list[list[dict]]) -> np.ndarray:
        """One forward pass per batch; the prompts are batched longest first (alike lengths, little padding) and the
        logits returned in input order. Positions count real tokens only, so a prompt's logit does not depend on the
        batch it is in (up to float rounding)."""
        import torch

        prompts = chat_prompts(self.tokenizer, conversations, self.thinking)
        ids = self.tokenizer(prompts, add_special_tokens=False)["input_ids"]
        order = sorted(range(len(ids)), key=lambda i: -len(ids[i]))
        out = np.full(len(ids), np.nan)
        with torch.inference_mode():
            for start in range(0, len(order), self.batch_size):
                rows = order[start : start + self.batch_size]
                batch = self.tokenizer.pad({"input_ids": [ids[i] for i in rows]}, return_tensors="pt").to(self.device)
                width = batch["input_ids"].shape[1]  # left padding: every prompt ends in the last column
                last = torch.full((len(rows),), width - 1, device=self.device)
                logits = verdict_logits(self.model, batch["input_ids"], batch["attention_mask"], self.verdict_ids, last)
                out[rows] = logits.cpu().numpy()
        return out


class VLLMBackend(Backend):
    """vLLM offline inference (``pip install vllm``, a GPU).

    Prompts are rendered and tokenized as in ``TransformersBackend`` (``chat_prompts`` with the model's own
    Hugging Face tokenizer, no added special tokens) and handed to vLLM as token ids, so both backends score the
    same tokens; vLLM is imported here, not at module level, because it is a heavy optional dependency.

    ``verdict_logits`` is one greedy decoding step restricted to the two verdict tokens (``allowed_token_ids``)
    that returns the ``top_logprobs`` likeliest tokens' log-probabilities. vLLM reports the log-probabilities of
    the model's raw output (computed before the restriction) and always includes the sampled token's. The
    restriction makes the sampled token the likelier of True and False, so that one is always listed and no row
    is NaN (unrestricted, a model about to write "The answer…" may list neither). The other is listed when it
    ranks among the top ``top_logprobs`` (20, vLLM's default ``max_logprobs``); when it does not, it is given
    the lowest listed log-probability, as ``OpenAIBackend`` does: a bound on the logit with the right sign, so
    the verdict is still exact.

    Args:
        model: a hub id (resolved to an offline copy when one is installed) or a local folder.
        dtype: vLLM's ``dtype`` (``bfloat16``, ``float16``…); None: ``auto``.
        thinking: passed to the chat template as ``enable_thinking`` (Qwen3).
        top_logprobs: how many log-probabilities the verdict step returns.
        engine_args: more keyword arguments of ``vllm.LLM`` (``gpu_memory_utilization``, ``max_model_len``,
            ``enforce_eager``…), saved with the backend's config.
    """

    kind = "vllm"
    batch_unit = None  # vLLM schedules its own batches: a judge hands it every prompt in one call

    def __init__(
        self,
        model: str,
        dtype: str | None = None,
        thinking: bool = False,
        top_logprobs: int = 20,
        engine_args: dict | None = None,
    ):
        if importlib.util.find_spec("vllm") is None:
            raise ImportError("the vllm backend needs `pip install vllm` (and a GPU)")
        from transformers import AutoTokenizer
        from vllm import LLM

        path = backbones.resolve(model)
        self.name, self.dtype, self.thinking, self.top_logprobs = model, dtype, thinking, top_logprobs
        self.engine_args = dict(engine_args or {})
        self.tokenizer = AutoTokenizer.from_pretrained(path)
        self.verdict_ids = verdict_token_ids(self.tokenizer)
        self.llm = LLM(model=path, dtype=dtype or "auto", **self.engine_args)

    def config(self) -> dict:
        return {
            "kind": self.kind,
            "model": self.name,
            "dtype": self.dtype,
            "thinking": self.thinking,
            "top_logprobs": self.top_logprobs,
            "engine_args": self.engine_args,
        }

    def _prompts(self, conversations: list[list[dict]]) -> list[dict]:
        texts = chat_prompts(self.tokenizer, conversations, self.thinking)
        return [{"prompt_token_ids": ids} for ids in self.tokenizer(texts, add_special_tokens=False)["input_ids"]]

    def complete(
        self, conversations: list[list[dict]], max_tokens: int, temperature: float = 0.0, seed: int = 0
    ) -> list[str]:
        from vllm import SamplingParams

        params = SamplingParams(temperature=temperature, seed=seed if temperature > 0 else None, max_tokens=max_tokens)
        outputs = self.llm.generate(self._prompts(conversations), params, use_tqdm=False)
        return [output.outputs[0].text for output in outputs]

    def verdict_logits(self, conversations: list[list[dict]]) -> np.ndarray:
        from vllm import SamplingParams

        true_id, false_id = self.verdict_ids
        params = SamplingParams(
            max_tokens=1, temperature=0, logprobs=self.top_logprobs, allowed_token_ids=[true_id, false_id]
        )
        out = []
        for output in self.llm.generate(self._prompts(conversations), params, use_tqdm=False):
            steps = output.outputs[0].logprobs
            if not steps:
                raise BackendError(f"vLLM returned no logprobs for the verdict step of {self.name}")
            out.append(verdict_logit([(token, lp.logprob) for token, lp in steps[0].items()], true_id, false_id))
        return np.array(out, dtype=float)


class OpenAIBackend(Backend):
    """Any server with the OpenAI chat completions API.

    Args:
        base_url: the API root, e.g. ``http://localhost:8000/v1``.
        model: the model name the server knows.
        api_key_env: the environment variable holding the API key (unset: no key is sent).
        concurrency: requests in flight at once.
        retries: further attempts after a failed request (connection error, 429, 5xx).
        backoff: seconds before the first retry, doubled each time.
        timeout: seconds per request.
        top_logprobs: how many alternatives to ask for in direct mode (the server must support logprobs).
    """

    kind = "openai"

    @property
    def batch_unit(self) -> int:
        """Requests in flight at once: a judge's chunks are whole numbers of them."""
        return self.concurrency

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key_env: str = "OPENAI_API_KEY",
        concurrency: int = 8,
        retries: int = 3,
        backoff: float = 1.0,
        timeout: float = 120.0,
        top_logprobs: int = 20,
    ):
        self.base_url, self.model, self.api_key_env = base_url.rstrip("/"), model, api_key_env
        self.concurrency, self.retries, self.backoff, self.timeout = concurrency, retries, backoff, timeout
        self.top_logprobs = top_logprobs

    def config(self) -> dict:
        return {
            "kind": self.kind,
            "base_url": self.base_url,
            "model": self.model,
            "api_key_env": self.api_key_env,
            "concurrency": self.concurrency,
            "retries": self.retries,
            "backoff": self.backoff,
            "timeout": self.timeout,
            "top_logprobs": self.top_logprobs,
        }

    def _post(self, body: dict) -> dict:
        url = f"{self.base_url}/chat/completions"
        headers = {"Content-Type": "application/json"}
        if os.environ.get(self.api_key_env):
            headers["Authorization"] = f"Bearer {os.environ[self.api_key_env]}"
        data = json.dumps(body).encode()
        for attempt in range(self.retries + 1):
            try:
                request = urllib.request.Request(url, data=data, headers=headers, method="POST")
                with urllib.request.urlopen(request, timeout=self.timeout) as response:
                    return json.loads(response.read())
            except urllib.error.HTTPError as err:  # the server answered with an error status
                if err.code != 429 and err.code < 500 or attempt == self.retries:
                    detail = err.read().decode(errors="replace")[:500]
                    raise BackendError(f"{url} refused the request: HTTP {err.code}: {detail}") from err
            except (urllib.error.URLError, TimeoutError, ConnectionError) as err:
                if attempt == self.retries:
                    reason = getattr(err, "reason", err)
                    raise BackendError(
                        f"cannot reach the OpenAI-compatible server at {self.base_url} ({reason}) "
                        f"after {self.retries + 1} attempts: is it running and is the URL right?"
                    ) from err
            time.sleep(self.backoff * 2**attempt)
        raise AssertionError("unreachable")

    def _map(self, function, items: list) -> list:
        with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
            return list(pool.map(function, items))

    def complete(
        self, conversations: list[list[dict]], max_tokens: int, temperature: float = 0.0, seed: int = 0
    ) -> list[str]:
        def one(conversation):
            sampling = {"temperature": temperature, "seed": seed} if temperature > 0 else {"temperature": 0}
            reply = self._post({"model": self.model, "messages": conversation, "max_tokens": max_tokens, **sampling})
            try:
                return reply["choices"][0]["message"]["content"] or ""
            except (KeyError, IndexError, TypeError) as err:
                raise BackendError(f"{self.base_url}: malformed reply {str(reply)[:300]}") from err

        return self._map(one, conversations)

    def verdict_logits(self, conversations: list[list[dict]]) -> np.ndarray:
        def one(conversation):
            reply = self._post(
                {
                    "model": self.model,
                    "messages": conversation,
                    "max_tokens": 1,
                    "temperature": 0,
                    "logprobs": True,
                    "top_logprobs": self.top_logprobs,
                }
            )
            try:
                top = reply["choices"][0]["logprobs"]["content"][0]["top_logprobs"]
            except (KeyError, IndexError, TypeError) as err:
                raise BackendError(
                    f"{self.base_url}: no logprobs in the reply (does the server support "
                    f"them? use mode=reasoning otherwise): {str(reply)[:300]}"
                ) from err
            return logit_from_top_logprobs(top)

        return np.array(self._map(one, conversations), dtype=float)


def logit_from_top_logprobs(top: list[dict]) -> float:
    """log P(True) − log P(False) from a first token's top alternatives.

    The tokens must be exactly ``True`` and ``False`` (what follows the assistant header, as in
    ``GenerativeJudge``). A verdict word missing from the list gets the lowest listed
    log-probability (an upper bound); NaN when neither is listed.
    """
    return verdict_logit([(item["token"], item["logprob"]) for item in top], *VERDICT_WORDS)


def verdict_logit(listed: list[tuple], true, false) -> float:
    """log P(True) − log P(False) from a first token's listed (token, log-probability) pairs, tokens as
    strings or ids. A verdict token missing from the list gets the lowest listed log-probability (any
    token not listed is at most that likely, so the result keeps its sign); NaN when neither is listed."""
    best = {token: logprob for token, logprob in listed if token in (true, false)}
    if not best:
        return math.nan
    floor = min(logprob for _, logprob in listed)
    return best.get(true, floor) - best.get(false, floor)


BACKENDS: Registry[type] = Registry(
    "backend kind", {"openai": OpenAIBackend, "transformers": TransformersBackend, "vllm": VLLMBackend}
)


def register_backend(cls: type) -> type:
    """Make a backend class (with ``kind``, ``batch_unit``, ``config()`` and the generation calls) loadable by its
    ``kind`` in a prompted judge's ``judge.json`` (usable as a decorator)."""
    return BACKENDS.register(cls.kind, cls)


def make_backend(config: dict):
    """A backend from its ``config()``: the class registered under its ``kind``."""
    args = dict(config)
    kind = args.pop("kind")
    return BACKENDS.lookup(kind)(**args)


def prompted_judge(
    model: str,
    mode: str = SCORE_MODE,
    server: str | None = None,
    api_key_env: str | None = None,
    batch_size: int = 8,
    max_new_tokens: int | None = None,
) -> PromptedJudge:
    """A ``PromptedJudge`` from what a user names (the ``prompt-judge`` command): ``model`` on an
    OpenAI-compatible ``server`` (``batch_size`` requests in flight, the key in ``api_key_env``), or loaded
    here (``batch_size`` prompts per forward pass). A local folder is saved as its absolute path, so that the
    judge folder loads from any working directory. The mode is checked before any weights are loaded."""
    if mode not in PROMPTED_MODES:
        raise ValueError(f"mode must be one of {PROMPTED_MODES}, got {mode!r}")
    if server:
        config = {"kind": "openai", "base_url": server, "model": model, "concurrency": batch_size}
        if api_key_env:
            config["api_key_env"] = api_key_env
    else:
        local = Path(model).expanduser()
        config = {"kind": "transformers", "model": str(local.resolve()) if local.exists() else model}
        config["batch_size"] = batch_size
    return PromptedJudge(make_backend(config), mode=mode, max_new_tokens=max_new_tokens)


class PromptedJudge(BaseJudge):
    """An off-the-shelf LLM judge behind a backend; ``score_records`` returns P(correct).

    Args:
        backend: a ``TransformersBackend``, ``VLLMBackend`` or ``OpenAIBackend``.
        mode: ``direct`` (verdict-token probability; over HTTP the server must return logprobs),
            ``reasoning`` (generate, then parse: 1., 0., or NaN when unreadable, flagged in ``details``) or
            ``score10`` (JudgeLM-style: generate a 1–10 score, P(correct) = (score − 1) / 9, NaN when
            unreadable; fit the threshold on labelled rows with ``fit_threshold``).
        order: the prompt's parts, letters of ``bertjudge.core.formats`` (Q, R, C, A).
        max_chars: a longer question or candidate keeps its head and tail (no tokenizer here).
        max_new_tokens: the generation bound of reasoning and score10 modes (default 512 and ``SCORE_TOKENS``).
        threshold: P(correct) at or above which the verdict is "correct".
    """

    temperature = 1.0
    features = frozenset({"export"})

    def __init__(
        self,
        backend,
        mode: str = "reasoning",
        order: str = "QRC",
        max_chars: int = 6000,
        max_new_tokens: int | None = None,
        threshold: float = 0.5,
    ):
        if mode not in PROMPTED_MODES:
            raise ValueError(f"mode must be one of {PROMPTED_MODES}, got {mode!r}")
        if max_new_tokens is None:
            max_new_tokens = SCORE_TOKENS if mode == SCORE_MODE else 512
        self.backend, self.mode, self.max_chars, self.max_new_tokens = backend, mode, max_chars, max_new_tokens
        self.order, self.prompt_parts, self.threshold = order, JudgeFormat(order=order).parts, threshold

    @property
    def name(self) -> str:
        return f"{self.backend.kind}:{self.backend.config()['model']}@{prompt_version(self.mode)}/{self.mode}"

    def place(self, device=None, dtype=None) -> PromptedJudge:
        """Move the backend's model to ``device`` and cast it to ``dtype`` when it runs here (``Backend.place``)."""
        self.backend.place(device, dtype)
        return self

    @property
    def model(self):
        """The causal LM that judges, when it runs in this process (``Backend.local_model``); else None."""
        return (self.backend.local_model() or (None, None))[0]

    @property
    def tokenizer(self):
        """The tokenizer of ``model`` (None when the model runs elsewhere)."""
        return (self.backend.local_model() or (None, None))[1]

    def conversation(self, record: dict) -> list[dict]:
        texts = {
            "question": shorten(record.get("question") or "", self.max_chars),
            "candidate": shorten(record["candidate"], self.max_chars),
            "reference": REFERENCE_JOIN.join(record["references"]),
        }
        if "answer" in self.prompt_parts:
            texts["answer"] = final_answer(record["candidate"]) or NO_ANSWER
        return messages(texts, self.prompt_parts, self.mode)

    def details(self, records: list[dict], batch_size: int = 32, progress: bool = False) -> list[dict]:
        """Per record: ``output`` (reasoning and score10 modes), ``verdict``, ``unparsed``, ``score`` and, in
        score10 mode, ``rating`` (the 1–10 score read, None when unreadable)."""
        conversations = [self.conversation(r) for r in records]
        if self.mode == "direct":
            logits = np.array(self._ask(self.backend.verdict_logits, conversations, progress, batch_size), dtype=float)
            scores = 1 / (1 + np.exp(-logits))
            return [
                {
                    "output": None,
                    "verdict": None if math.isnan(s) else bool(s >= self.threshold),
                    "unparsed": math.isnan(s),
                    "score": float(s),
                }
                for s in scores
            ]
        rows = []
        outputs = self._ask(
            lambda chunk: self.backend.complete(chunk, self.max_new_tokens), conversations, progress, batch_size
        )
        if self.mode == SCORE_MODE:
            for text in outputs:
                rating = parse_score(text)
                score = score_to_probability(rating)
                rows.append(
                    {
                        "output": text,
                        "rating": rating,
                        "verdict": None if rating is None else bool(score >= self.threshold),
                        "unparsed": rating is None,
                        "score": score,
                    }
                )
            return rows
        for text in outputs:
            verdict = parse_verdict(text)
            rows.append(
                {
                    "output": text,
                    "verdict": verdict,
                    "unparsed": verdict is None,
                    "score": math.nan if verdict is None else float(verdict),
                }
            )
        return rows

    def _ask(self, ask, conversations: list[list[dict]], progress: bool, batch_size: int) -> list:
        """``ask`` (a backend call on a list of conversations) on all of them, in chunks of about ``batch_size``
        under a progress bar when asked. A chunk is a whole number of the backend's batches (its requests in
        flight, over HTTP), so the batches, and hence the answers, are those of a single call; a backend that
        schedules its own batches (vLLM) gets all conversations in one call."""
        unit = self.backend.batch_unit
        step = unit * max(1, math.ceil(batch_size / unit)) if unit else max(1, len(conversations))
        bar = None
        if progress:
            from tqdm.auto import tqdm

            bar = tqdm(total=len(conversations), desc=f"judging with {self.name}", unit="row")
        answers = []
        try:
            for start in range(0, len(conversations), step):
                chunk = conversations[start : start + step]
                answers.extend(ask(chunk))
                if bar is not None:
                    bar.update(len(chunk))
        finally:
            if bar is not None:
                bar.close()
        return answers

    def score_records(self, records: list[dict], batch_size: int = 32, progress: bool = False) -> np.ndarray:
        """P(correct) per record (NaN where the verdict could not be read); ``batch_size``: rows per progress step."""
        return np.array([row["score"] for row in self.details(records, batch_size, progress)], dtype=float)

    def config(self) -> dict:
        return {
            "class": class_path(self),
            "backend": self.backend.config(),
            "mode": self.mode,
            "order": self.order,
            "max_chars": self.max_chars,
            "max_new_tokens": self.max_new_tokens,
            "threshold": self.threshold,
            "temperature": self.temperature,
            "prompt_version": prompt_version(self.mode),
        }

    def export(self, folder: str | os.PathLike, metrics: dict | None = None) -> Path:
        """Save the backend, prompt and threshold as a judge folder (no weights: the backend holds them)."""
        write_judge_config(folder, {**self.config(), **({"metrics": metrics} if metrics else {})})
        return Path(folder)

    @classmethod
    def from_export(cls, folder: str | os.PathLike, format=None) -> PromptedJudge:
        config = read_judge_config(folder, required=("class", "backend", "mode", "prompt_version"))
        if config["prompt_version"] != prompt_version(config["mode"]):
            raise ValueError(
                f"{folder}: made with prompt {config['prompt_version']!r}, this code writes "
                f"{prompt_version(config['mode'])!r} in {config['mode']!r} mode"
            )
        return cls(
            make_backend(config["backend"]),
            mode=config["mode"],
            order=config["order"],
            max_chars=config["max_chars"],
            max_new_tokens=config["max_new_tokens"],
            threshold=config["threshold"],
        )
