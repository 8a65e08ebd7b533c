"""Bootstrap a labelled training set from a user's (question, reference) rows.

``python -m bertjudge synth --input QR.jsonl --output DIR`` reads one JSON object per line with
``question`` (string or null), ``reference`` (string) or ``references`` (list of strings), and
optionally ``category`` and ``task``; it writes ``train.jsonl`` and ``val.jsonl`` (split by question,
so no question is in both) with correct and wrong candidates per question, in the embedded corpus's
styles (``bertjudge.data.corpus``): bare, "Final answer:", ``\\boxed{}``, markdown, explanations,
reasoning, hedges, refusals, truncations, text addressed to the judge.

What it can know, and what it cannot:

* Correct candidates restate a reference (or an equivalent form the generator can prove: the same
  number as a fraction, decimal, words, with the reference's unit; an option's label or its text)
  and are right by construction.
* Open-QA rows (a factual question without a passage) get correct candidates in the forms real
  assistants write: any listed alias, the bare entity or a sentence restating the question, a
  paragraph that buries the answer among neutral sentences, citations "[1]", bold, a light hedge
  that still commits, case and punctuation changes, and the derivable forms of a date ("July 4,
  1776" = "4 July 1776" = "1776-07-04"), a river ("the Nile" = "Nile River") or a person's
  initials ("R. Bagdasarian").
* Wrong candidates come only from what the row shows: another option of a multiple-choice question
  (options parsed from the question text), the number off by one, its sign flipped, scaled by ten,
  a number copied from the question, the right number with another unit (math), another span of
  the passage (extraction), or answers that are wrong in any domain (negating the reference,
  hedging between answers, listing all options, refusing, stopping before the answer, a reasoning
  that states something else at the end, an injection aimed at the judge). For open QA they also
  come from the corpus's own lists when a reference is an entity it knows (another capital, country,
  river, element, profession, planet, month), made-up names for a "who" question about a person
  (including the same surname with another first name, "Ross Bagdasarian" -> "Freya Bagdasarian",
  and a longer surname, "Ross Bagdasarianson"), moved dates and numbers ("Apollo 11" -> "Apollo 12"),
  and the question's own names (an answer to another question); sentences that mention the
  reference but commit to one of these, and paragraphs built around them.
* It cannot invent wrong answers that need domain knowledge beyond the reference (a plausible but
  false capital, a typical reasoning mistake specific to the problem), and it cannot know aliases
  the references do not list: a passage span offered as a wrong answer can be a synonym of the
  reference (e.g. "the French capital" for "Paris"). An open-QA row whose reference is none of
  these gets only the domain-free wrong kinds and the question's own names. Review a sample before
  training on it; for real model outputs, label them with a teacher instead.

Category is inferred when missing: a numeric reference -> ``open_math``; a single option label with
options listed in the question -> ``multiple_choice``; a question holding a passage (a line starting
"Passage:", "Context:", "Text:", "Article:" ..., "read the text", "according to the passage", or
more than 400 characters), an "unanswerable" reference, a reference of more than 8 words, or no
question -> ``context_extraction``; anything else (a factual question without a passage and a
short answer, as in TriviaQA or NQ-open) -> ``open_qa``.
"""

from __future__ import annotations

import hashlib
import random
from pathlib import Path

from bertjudge.core import records
from bertjudge.data import corpus

SYNTH_VERSION = "synth-v1"
LABEL_SOURCE = f"synthetic:{SYNTH_VERSION}"


def read_rows(path: Path) -> list[dict]:
    """Validated (question, references, category, task) rows; RecordError names the file and line."""
    rows = []
    for where, obj in records.iter_raw(path):
        rec = records.normalize({**obj, "candidate": ""} if isinstance(obj, dict) else obj, where)
        if rec["category"] == "other" and obj.get("category") is None:
            rec["category"] = None  # to be inferred
        rows.append(
            {
                "question": rec["question"],
                "references": rec["references"],
                "category": rec["category"],
                "task": obj.get("task") or "synth",
                "where": where,
            }
        )
    if not rows:
        raise records.RecordError(f"{path}: empty file, no rows")
    return rows


def synthesize(rows: list[dict], per_question: int = 4, seed: int = 0, val_fraction: float = 0.1) -> list[dict]:
    """Labelled records: per question, ``per_question`` candidates, half correct and half wrong
    (the extra one correct when odd), each text distinct; split by a hash of the question."""
    rng = random.Random(f"{SYNTH_VERSION}/{seed}")
    models = list(corpus.MODELS)
    out = []
    for row in rows:
        try:
            item = corpus.item_from_reference(row["question"], row["references"], row["category"], row["task"])
        except ValueError as err:
            raise records.RecordError(f"{row['where']}: {err}") from None
        h = int(hashlib.md5((row["question"] or "").encode("utf-8")).hexdigest()[:8], 16)
        split = "val" if h % 1000 < val_fraction * 1000 else "train"
        texts = set()
        labels = [1, 0] * (per_question // 2) + [1] * (per_question % 2)
        for label in labels:
            for _ in range(20):
                model = rng.choice(models)
                text, meta = corpus.candidate(item, label, rng, model)
                if text.strip() not in texts:
                    break
            else:
                continue
            texts.add(text.strip())
            meta.update(source=row["where"], inferred_category=row["category"] is None)
            out.append(
                {
                    "id": records.make_id(item.task, item.question, model, meta["kind"], text),
                    "task": item.task,
                    "category": item.category,
                    "question": row["question"],
                    "candidate": text,
                    "references": list(row["references"]),
                    "label": label,
                    "label_source": LABEL_SOURCE,
                    "candidate_model": model,
                    "split": split,
                    "meta": meta,
                }
            )
    return out
