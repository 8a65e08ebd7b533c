"""bertjudge inside lm-evaluation-harness: a filter that judges the raw responses, a metric that reports it.

Importing this module registers both with lm-eval (0.4.x), the way lm-eval registers its own:

- the filter ``bertjudge`` (``register_filter``), a filter pipeline of its own beside the task's: it
  takes each document's first raw response (what the model generated, before any of the task's
  filters: not gsm8k's regex-extracted number), the document's question and its references, and
  judges all the documents of the run in one ``judge.details`` call, in batches of ``batch_size``;
- the metric ``bertjudge`` (``register_metric``; aggregation ``mean``, higher is better): per
  document, 1.0 where the judge found the response correct, else 0.0 (an answer it cannot read is
  wrong). lm-eval computes every metric on every filter pipeline: ``bertjudge`` has a value on the
  bertjudge pipeline only, NaN on the task's own (which lm-eval turns into 1.0 on a task with several
  targets per document, e.g. triviaqa: read ``bertjudge,bertjudge``). lm-eval's ``exact_match`` on the
  task's own filters stays as it was, so the two figures sit side by side on the same samples.

lm-eval gives a metric only the filtered answer and the target, never the document, and calls it once
per document; a filter gets every document and its raw responses at once: hence the filter judges.
It reads the question and references from the document itself, each by a field name or a Jinja
template over its fields (as lm-eval reads ``doc_to_text``/``doc_to_target``; a GSM8K-style
"… #### 42" target or a ``\\boxed{}`` one reads as its answer, a rendered list as several answers).

A task YAML (as ``bertjudge/pipeline/lmeval_tasks/`` extends gsm8k, mmlu_pro and triviaqa)::

    filter_list:
      - name: strict-match …                       # the task's own pipelines, unchanged
      - name: bertjudge
        filter:
          - function: !function bertjudge.pipeline.lmeval_metric.BertJudgeFilter   # imports this module
            judge: regex          # any Judge.load spec; default $BERTJUDGE_JUDGE, else regex
            device: cuda          # where a trained judge runs; default $BERTJUDGE_DEVICE, else where it loads
            batch_size: 32        # rows per forward pass (default 32)
            category: open_math   # the rows' category (default: each row's, inferred from it)
            question: question    # a field or a Jinja template over the document (default: question)
            references: answer    # the same for the acceptable answers (default: answer)
    metric_list:
      - metric: exact_match …                      # the task's own
      - metric: bertjudge
        aggregation: mean
        higher_is_better: true

The judge is loaded once per process, spec and device. A wrong option or a template that does not fit
the documents fails when the filter runs, after generation: try a new YAML with ``--limit 2`` first.
"""

from __future__ import annotations

import functools
import logging
import math
import os

import jinja2
import lm_eval.api.metrics  # noqa: F401  (registers lm-eval's aggregations, "mean" among them)
from lm_eval.api.filter import Filter
from lm_eval.api.registry import register_filter, register_metric

from bertjudge.core.records import CATEGORIES, normalize
from bertjudge.judges.interface import BaseJudge
from bertjudge.judges.loading import Judge
from bertjudge.pipeline.lmeval import references as target_references
from bertjudge.pipeline.lmeval import render

NAME = "bertjudge"  # the filter's and the metric's name in lm-eval's registries
JUDGE_ENV = "BERTJUDGE_JUDGE"
DEVICE_ENV = "BERTJUDGE_DEVICE"
DEFAULT_JUDGE = "regex"
log = logging.getLogger(__name__)


def judge_spec(judge: str | None = None) -> str:
    """The judge to use: the YAML's ``judge``, else ``$BERTJUDGE_JUDGE``, else ``regex``."""
    return judge or os.environ.get(JUDGE_ENV) or DEFAULT_JUDGE


def judge_device(device: str | None = None) -> str | None:
    """Where a trained judge runs: the YAML's ``device``, else ``$BERTJUDGE_DEVICE``, else where it loads."""
    return device or os.environ.get(DEVICE_ENV) or None


@functools.cache
def cached_judge(spec: str, device: str | None = None) -> BaseJudge:
    """``Judge.load(spec, device=device)``, once per process."""
    return Judge.load(spec, device=device) if device else Judge.load(spec)


class Judged(str):
    """A response the bertjudge filter judged: its text (what lm-eval logs as the filtered response and its
    other metrics read) with the judge's ``verdict`` and ``score``."""

    verdict: bool | None = None
    score: float | None = None

    def __new__(cls, text: str = "", verdict: bool | None = None, score: float | None = None):
        obj = super().__new__(cls, text)
        obj.verdict, obj.score = verdict, score
        return obj

    def __reduce__(self):
        return Judged, (str(self), self.verdict, self.score)


def _read(template: str | None, doc: dict, option: str, i: int):
    if template is None:
        return None
    try:
        return render(str(template), doc)
    except jinja2.TemplateError as e:
        raise ValueError(
            f"bertjudge filter, document {i}: its {option} option {template!r} does not fit the document "
            f"(fields: {', '.join(map(str, doc))}): {e}; give a field name or a Jinja template over those fields"
        ) from None


@register_filter(NAME)
class BertJudgeFilter(Filter):
    """lm-eval's filter ``bertjudge``: each document's first raw response, judged with the document's question
    and references, all documents in one call (see the module's doc for the options)."""

    def __init__(
        self,
        judge: str | None = None,
        device: str | None = None,
        batch_size: int = 32,
        category: str | None = None,
        question: str | None = "question",
        references: str = "answer",
    ) -> None:
        if category is not None and category not in CATEGORIES:
            raise ValueError(f"bertjudge filter: category {category!r} is not one of {', '.join(CATEGORIES)}")
        self.judge, self.device = judge_spec(judge), judge_device(device)
        self.batch_size, self.category = int(batch_size), category
        self.question, self.references = question, references

    def record(self, i: int, response: str, doc: dict) -> dict:
        """The record the judge reads for document ``i``."""
        question = _read(self.question, doc, "question", i)
        target = _read(self.references, doc, "references", i)
        return normalize(
            {
                "question": None if question is None else str(question).strip() or None,
                "candidate": response,
                "references": target_references(target) or [str(target)],
                "category": self.category,  # None: inferred from the row, as everywhere
                "task": "lm-eval",
            },
            f"lm-eval filter bertjudge, document {i}",
        )

    def apply(self, resps, docs) -> list[Judged]:
        resps, docs = list(resps), list(docs)
        firsts = [r if isinstance(r, str) else r[0] for r in resps]  # per document, its responses (repeats)
        if not all(isinstance(r, str) for r in firsts):
            raise ValueError("bertjudge filter: the responses are not text (it judges generate_until tasks)")
        if not firsts:
            return []
        records = [self.record(i, text, doc) for i, (text, doc) in enumerate(zip(firsts, docs))]
        judge = cached_judge(self.judge, self.device)
        rows = judge.details(records, batch_size=self.batch_size)
        log.info("bertjudge: %s judged %d responses in batches of %d", judge.name, len(rows), self.batch_size)
        return [Judged(text, row["verdict"], row["score"]) for text, row in zip(firsts, rows)]


@register_metric(metric=NAME, higher_is_better=True, aggregation="mean")
def bertjudge(references=None, predictions=None, **options) -> float:
    """lm-eval's metric ``bertjudge``: 1.0 where the bertjudge filter judged the document's response correct,
    0.0 where it did not (or could not read it), NaN on a filter pipeline other than bertjudge's."""
    if options:  # a ValueError: lm-eval retries a metric that raises TypeError with other arguments
        raise ValueError(
            f"bertjudge metric: unknown option(s) {sorted(options)} in the task's metric_list entry: the judge's "
            "options (judge, device, batch_size, category, question, references) go on the bertjudge filter"
        )
    if not predictions or len(predictions) != 1:
        raise ValueError(f"bertjudge metric: one prediction per call from lm-eval, got {len(predictions or [])}")
    [prediction] = predictions
    while isinstance(prediction, list) and prediction:  # lm-eval's exact_match, on a task with several targets,
        prediction = prediction[0]  # leaves the response repeated once per target for the metrics after it
    if not isinstance(prediction, Judged):
        return math.nan  # a pipeline the bertjudge filter did not run in
    return float(prediction.verdict is True)
