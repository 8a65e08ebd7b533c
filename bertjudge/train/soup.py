"""Model soups: one judge whose weights are the average of several judges fine-tuned from one start.

``python -m bertjudge soup --judge A B [...] --output DIR --data SOURCE [SOURCE ...]``

Runs of one recipe that differ only in their seed end in one basin of the loss, and the uniform
average of their weights scores about like their ensemble (Wortsman et al., 2022, "Model soups")
at the cost of a single judge. The ingredients must share class, input format and every weight's
shape; the soup's temperature is refitted on the labelled ``--data`` sources, with bias 0
(without them, temperature and bias are the means of the ingredients', which were fitted for other weights).
"""

from __future__ import annotations

import torch

from bertjudge.core.errors import BertJudgeError
from bertjudge.judges.base import JudgeModule


class SoupError(BertJudgeError, ValueError):
    """Ingredients that cannot be averaged."""


def average_judges(judges: list[JudgeModule], names: list[str] | None = None) -> JudgeModule:
    """The first judge, with its weights replaced by the uniform average of every judge's weights."""
    if len(judges) < 2:
        raise SoupError("a soup needs at least two judges")
    names = names or [judge.name for judge in judges]
    first, states = judges[0], [judge.state_dict() for judge in judges]
    shapes = {key: value.shape for key, value in states[0].items()}
    for judge, state, name in zip(judges[1:], states[1:], names[1:]):
        kind, first_kind = judge.describe()["kind"], first.describe()["kind"]
        if kind != first_kind:
            raise SoupError(f"{name} is a {kind}, {names[0]} a {first_kind}")
        if judge.format.to_dict() != first.format.to_dict():
            raise SoupError(f"{name} and {names[0]} were trained with different input formats")
        if {key: value.shape for key, value in state.items()} != shapes:
            raise SoupError(
                f"{name} and {names[0]} do not have the same weights (names or shapes differ): "
                "a soup averages runs of one architecture fine-tuned from one start"
            )
    averaged = {
        key: torch.stack([state[key].float() for state in states]).mean(0).to(value.dtype)
        if value.is_floating_point()
        else value
        for key, value in states[0].items()
    }
    first.load_state_dict(averaged)
    first.temperature = sum(judge.temperature for judge in judges) / len(judges)
    first.bias = sum(judge.bias for judge in judges) / len(judges)
    first.provenance = {**first.provenance, "soup": {"ingredients": names, "weights": "uniform average"}}
    return first
