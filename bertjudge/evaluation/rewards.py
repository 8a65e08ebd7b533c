"""A verifier reward for RL: a judge scores a policy's completions against the reference answers of the
training set, in the form TRL's ``GRPOTrainer(reward_funcs=[...])`` calls a reward function.

``BertJudgeReward(judge)(prompts, completions, **columns)`` returns one reward per completion: the judge's
P(correct) (``hard=True``: its verdict, 1.0 or 0.0). The references come from a dataset column (``reference``
by default; a string or a list of acceptable answers per row), the question from the prompt (the last user
message of a conversational prompt, or the prompt text) or from a column. Completions are strings or, for a
conversational dataset, lists of messages (``[{"role": "assistant", "content": ...}]``), whose assistant
contents are the answer. All completions of a call are scored in one ``score_records`` (batched, in input
order). A row the judge cannot give a verdict for (a reasoning judge's unparsed output) gets ``None``, which
TRL counts as "no reward from this function".

    from trl import GRPOConfig, GRPOTrainer
    from bertjudge.evaluation.rewards import BertJudgeReward

    reward = BertJudgeReward("runs/quickstart/judge")            # any Judge.load spec, or a judge
    trainer = GRPOTrainer(model=..., reward_funcs=[reward], train_dataset=dataset,  # columns: prompt, reference
                          args=GRPOConfig(...))

A judge served by ``python -m bertjudge serve`` is a spec like any other (``BertJudgeReward("http://host:8000")``);
``AsyncBertJudgeReward`` is the same reward as an async function, which TRL awaits on its event loop without
blocking it (the remote judge's ``ascore_records``).
"""

from __future__ import annotations

import math
import os

from bertjudge.core.records import normalize
from bertjudge.judges.interface import BaseJudge
from bertjudge.judges.kinds import is_judge
from bertjudge.judges.loading import Judge


def message_text(content) -> str:
    """The text of a message's content: a string, or a list of parts (``{"type": "text", "text": ...}``)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(item.get("text") or "" if isinstance(item, dict) else str(item) for item in content)
    return str(content)


def completion_text(completion) -> str:
    """The answer in a completion: the string itself, or the assistant contents of a list of messages."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, dict):
        completion = [completion]
    if isinstance(completion, list):
        return "\n".join(
            message_text(m.get("content"))
            for m in completion
            if isinstance(m, dict) and m.get("role", "assistant") == "assistant"
        )
    raise TypeError(f"a completion must be a string or a list of messages, got {type(completion).__name__}")


def prompt_question(prompt) -> str:
    """The question in a prompt: the string itself, or the last user message of a list of messages."""
    if isinstance(prompt, str):
        return prompt
    if isinstance(prompt, list):
        users = [m for m in prompt if isinstance(m, dict) and m.get("role") == "user"]
        return message_text(users[-1].get("content")) if users else ""
    raise TypeError(f"a prompt must be a string or a list of messages, got {type(prompt).__name__}")


class BertJudgeReward:
    """A reward function for TRL's ``GRPOTrainer``: P(correct) of each completion by a bertjudge judge.

    Args:
        judge: a judge (``BaseJudge``), or a ``Judge.load`` spec (a folder, a zoo name, a Hub id…).
        reference_column: the dataset column (passed to the reward function as a keyword argument) with each
            row's reference answer(s).
        question_column: the column with the question; None: the question is read from the prompt.
        category_column: the column with each row's category (``multiple_choice``, ``open_math``…, see
            ``bertjudge.core.records.CATEGORIES``), which changes how some formats read an answer; None: each row's
            category is inferred from its question and references (``core.categories.infer_category``).
        hard: return the verdict (1.0 at or above the judge's threshold, else 0.0) instead of P(correct).
        batch_size: rows per forward pass of the judge.
        name: the reward's name in TRL's logs (``rewards/<name>/mean``); default ``bertjudge`` (``bertjudge_hard``).
        revision, device, dtype: passed to ``Judge.load`` when ``judge`` is a spec.
    """

    def __init__(
        self,
        judge: BaseJudge | str | os.PathLike,
        reference_column: str = "reference",
        question_column: str | None = None,
        category_column: str | None = None,
        hard: bool = False,
        batch_size: int = 32,
        name: str | None = None,
        revision: str | None = None,
        device: str | None = None,
        dtype: str | None = None,
    ):
        if is_judge(judge):
            if revision is not None or device is not None or dtype is not None:
                raise ValueError("revision, device and dtype apply to a judge spec; place a loaded judge yourself")
            self.judge = judge
        else:
            self.judge = Judge.load(str(judge), revision=revision, device=device, dtype=dtype)
        self.reference_column, self.question_column = reference_column, question_column
        self.category_column, self.hard, self.batch_size = category_column, hard, batch_size
        self.__name__ = name or ("bertjudge_hard" if hard else "bertjudge")

    def _column(self, kwargs: dict, column: str, n: int) -> list:
        if column not in kwargs:
            found = sorted(k for k, v in kwargs.items() if isinstance(v, (list, tuple)))
            raise KeyError(
                f"{self.__name__}: no {column!r} column among the reward function's inputs "
                f"(dataset columns: {found or 'none'}); name it with reference_column=/question_column="
            )
        values = list(kwargs[column])
        if len(values) != n:
            raise ValueError(f"{self.__name__}: column {column!r} has {len(values)} values for {n} completions")
        return values

    def records(self, prompts: list, completions: list, **kwargs) -> list[dict]:
        """The records the judge reads: one per completion."""
        n = len(completions)
        if len(prompts) != n:
            raise ValueError(f"{self.__name__}: {len(prompts)} prompts for {n} completions")
        references = self._column(kwargs, self.reference_column, n)
        questions = (
            self._column(kwargs, self.question_column, n)
            if self.question_column
            else [prompt_question(p) for p in prompts]
        )
        categories = self._column(kwargs, self.category_column, n) if self.category_column else [None] * n
        return [
            normalize(
                {"question": q, "candidate": completion_text(c), "references": r, "category": k},
                f"{self.__name__}: completion {i} (column {self.reference_column!r})",
            )
            for i, (q, c, r, k) in enumerate(zip(questions, completions, references, categories))
        ]

    def __call__(self, prompts: list, completions: list, **kwargs) -> list[float | None]:
        """One reward per completion (``None`` where the judge gives no verdict); TRL's extra keyword arguments
        (``completion_ids``, ``trainer_state``, other dataset columns) are accepted and left alone."""
        if not completions:
            return []
        scores = self.judge.score_records(self.records(prompts, completions, **kwargs), batch_size=self.batch_size)
        return self.rewards(scores)

    def rewards(self, scores) -> list[float | None]:
        """The rewards of the judge's scores: P(correct), or the verdict with ``hard``; None where no verdict."""
        threshold = float(self.judge.threshold)
        return [None if math.isnan(s) else float(s >= threshold) if self.hard else float(s) for s in map(float, scores)]

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({self.judge.name!r}, reference_column={self.reference_column!r}, hard={self.hard})"
        )


class AsyncBertJudgeReward(BertJudgeReward):
    """``BertJudgeReward`` as an async reward function: TRL's ``GRPOTrainer`` awaits it on its event loop, beside its
    other async reward functions, so that a judge served elsewhere (``BertJudgeReward("http://host:8000")``, a
    ``judges.remote.RemoteJudge``) scores while the rest goes on. The judge's ``ascore_records`` is awaited: the remote
    judge's sends its requests on the loop, any other judge's runs ``score_records`` in a worker thread (the
    interface's default, ``asyncio.to_thread``). Same arguments and rewards as ``BertJudgeReward``."""

    async def __call__(self, prompts: list, completions: list, **kwargs) -> list[float | None]:
        if not completions:
            return []
        records = self.records(prompts, completions, **kwargs)
        scores = await self.judge.ascore_records(records, batch_size=self.batch_size)
        return self.rewards(scores)
