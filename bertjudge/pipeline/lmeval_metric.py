"""A bertjudge metric inside lm-evaluation-harness: name it in a task YAML, get a judged accuracy.

lm-eval (0.4.x) calls a metric of a ``generate_until`` task once per document with the task's target
and the model's answer (after the task's filter): ``metric(references=[target], predictions=[answer],
**options)``, where ``options`` are the other keys of the metric's entry in ``metric_list``. So a
task YAML reports a bertjudge accuracy with::

    metric_list:
      - metric: !function bertjudge_metric.bertjudge_acc   # bertjudge_metric.py next to the YAML
        aggregation: mean
        higher_is_better: true
        category: open_qa          # optional: the records' category (default: each row's, inferred from it)
        judge: regex               # optional: any Judge.load spec (default: $BERTJUDGE_JUDGE, else regex)

where ``bertjudge_metric.py`` holds ``from bertjudge.pipeline.lmeval_metric import bertjudge_acc``
(lm-eval resolves ``!function`` next to the YAML). The judge is loaded once per process and spec.
A GSM8K-style target ("… #### 42") or a ``\\boxed{}`` one is read as the importer reads it.

lm-eval gives a metric no document, so the judge sees no question: judges that read it (trained
ones whose format includes the question) are better run post hoc with ``lmeval-report``.
"""

from __future__ import annotations

import functools
import os

from bertjudge.core.records import normalize
from bertjudge.judges.interface import BaseJudge
from bertjudge.judges.loading import Judge
from bertjudge.pipeline.lmeval import references as target_references

JUDGE_ENV = "BERTJUDGE_JUDGE"
DEFAULT_JUDGE = "regex"
OPTIONS = ("judge", "category", "batch_size")


def judge_spec(judge: str | None = None) -> str:
    """The judge to use: the YAML's ``judge``, else ``$BERTJUDGE_JUDGE``, else ``regex``."""
    return judge or os.environ.get(JUDGE_ENV) or DEFAULT_JUDGE


@functools.cache
def cached_judge(spec: str) -> BaseJudge:
    """``Judge.load(spec)``, once per process."""
    return Judge.load(spec)


def bertjudge_acc(references, predictions, **options) -> float:
    """The share of ``predictions`` the judge finds correct against ``references`` (one pair from
    lm-eval: 1.0 or 0.0; an answer the judge cannot read counts as wrong). A reference may be a
    string or a list of acceptable answers."""
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:  # a ValueError: lm-eval retries a metric that raises TypeError with other arguments
        raise ValueError(
            f"bertjudge_acc: unknown option(s) {unknown} in the task's metric_list entry; it takes {', '.join(OPTIONS)}"
        )
    if len(references) != len(predictions) or not predictions:
        raise ValueError(f"bertjudge_acc: {len(references)} references for {len(predictions)} predictions")
    records = []
    for i, (target, answer) in enumerate(zip(references, predictions)):
        refs = target_references(target) or [str(target)]
        records.append(
            normalize(
                {
                    "question": None,
                    "candidate": str(answer),
                    "references": refs,
                    "category": options.get("category"),  # None: inferred from the row, as everywhere
                    "task": "lm-eval",
                },
                f"lm-eval metric bertjudge_acc, item {i}",
            )
        )
    judge = cached_judge(judge_spec(options.get("judge")))
    rows = judge.details(records, batch_size=int(options.get("batch_size") or 32))
    return sum(row["verdict"] is True for row in rows) / len(rows)
