"""``python -m bertjudge import-lmeval``: lm-evaluation-harness per-sample outputs as records.

lm-eval ``--log_samples`` writes ``<output>/<model>/samples_<task>_<timestamp>.jsonl``, one line
per document and filter (``doc_id``, ``doc``, ``target``, ``arguments``, ``resps``,
``filtered_resps``, ``filter``, ``metrics`` and the metric values, e.g. ``exact_match``).
Each document becomes one record: the prompt the model saw (``arguments``), the raw response
``resps[0][0]`` as candidate, the target as reference (the final part of a GSM8K-style
"… #### 42" target, the content of a ``\\boxed{}``), and the label from a 0/1 metric of the chosen
filter (``label_source`` ``rule:lm-eval:<metric>``; bertjudge's own in-harness metric is never
the default). Every filter's result is kept in ``meta``.
Log-likelihood tasks (multiple choice scored without generating text) have no candidate: skipped.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from bertjudge.core.extract import boxed
from bertjudge.core.records import RecordError, make_id, normalize
from bertjudge.data.sources import category_of

SAMPLES = re.compile(r"^samples_(?P<task>.+)_(?P<time>\d{4}-\d{2}-\d{2}T[\d\-.:]+)\.jsonl$")
BINARY_METRICS = ("exact_match", "acc", "em", "exact", "correct")
OWN_METRICS = "bertjudge"  # bertjudge's own in-harness metrics (pipeline/lmeval_metric.py) label no row
_PREFIXES = {  # lm-eval task families → categories
    "mmlu": "multiple_choice",
    "arc": "multiple_choice",
    "truthfulqa": "multiple_choice",
    "gpqa": "multiple_choice",
    "hellaswag": "multiple_choice",
    "squad": "context_extraction",
    "drop": "context_extraction",
    "coqa": "context_extraction",
    "hotpot": "context_extraction",
    "gsm8k": "open_math",
    "minerva_math": "open_math",
    "hendrycks_math": "open_math",
    "math": "open_math",
    "asdiv": "open_math",
    "aime": "open_math",
    "nq_open": "open_qa",
    "triviaqa": "open_qa",
    "webqs": "open_qa",
}


def lmeval_category(task: str) -> str:
    category = category_of(task)
    if category != "other":
        return category
    return next((c for prefix, c in _PREFIXES.items() if task.lower().startswith(prefix)), "other")


def references(target) -> list[str]:
    """Acceptable answers from an lm-eval target (a string, a number or a list of them)."""
    targets = target if isinstance(target, list) else [target]
    out = []
    for t in map(str, targets):
        if "####" in t:
            t = t.rsplit("####", 1)[1].replace(",", "")
        out.append((boxed(t) or t).strip())
    return [t for t in dict.fromkeys(out) if t]


def _prompt(arguments) -> str | None:
    first = next(iter(arguments.values())) if isinstance(arguments, dict) else arguments[0]  # 0.4.3+ or older
    prompt = first["arg_0"] if isinstance(first, dict) else first[0]
    return prompt if isinstance(prompt, str) else None


def _model_name(folder: str) -> str:
    return folder.replace("__", "/")  # lm-eval's sanitized model name, e.g. meta-llama__Llama-3.2-1B


def read_samples(
    path: str | Path,
    model: str | None = None,
    filter_name: str | None = None,
    metric: str | None = None,
    category: str | None = None,
) -> tuple[list[dict], int]:
    """The records of one samples file and how many documents were skipped (no generated text)."""
    path = Path(path)
    match = SAMPLES.match(path.name)
    if not match:
        raise RecordError(f"{path}: not an lm-eval samples file (samples_<task>_<timestamp>.jsonl)")
    task, model = match["task"], model or _model_name(path.parent.name)
    docs: dict = {}
    with open(path, encoding="utf-8") as handle:
        for lineno, line in enumerate(handle, 1):
            if line.strip():
                try:
                    row = json.loads(line)
                    docs.setdefault(row["doc_id"], {})[row.get("filter", "none")] = (row, lineno)
                except (json.JSONDecodeError, KeyError, TypeError):
                    raise RecordError(f"{path}:{lineno}: not an lm-eval sample (JSON with doc_id)") from None
    records, skipped = [], 0
    for doc_id, by_filter in docs.items():
        chosen = filter_name or next(iter(by_filter))
        row, lineno = by_filter.get(chosen, next(iter(by_filter.values())))  # the raw response is every filter's
        where = f"{path}:{lineno}"
        try:
            candidate, prompt = row["resps"][0][0], _prompt(row["arguments"])
        except (KeyError, IndexError, TypeError):
            raise RecordError(f"{where}: missing resps or arguments") from None
        if not isinstance(candidate, str):  # log-likelihood task: scores, not text (whatever the filter)
            skipped += 1
            continue
        if chosen not in by_filter:
            raise RecordError(f"{path}: doc {doc_id} has no filter {chosen!r} (it has {', '.join(by_filter)})")
        names = (
            [metric]
            if metric
            else [m for m in row.get("metrics", BINARY_METRICS) if m in row and not m.startswith(OWN_METRICS)]
        )
        value = row.get(names[0]) if names else None
        label = int(value) if value in (0, 1) else None  # 0., 1., True, False; not f1 scores
        refs = references(row["target"])
        if not refs:
            raise RecordError(f"{where}: empty target")
        filters = {
            name: {
                "filtered_resp": r.get("filtered_resps"),
                **{m: r[m] for m in r.get("metrics", BINARY_METRICS) if m in r},
            }
            for name, (r, _) in by_filter.items()
        }
        rec = {
            "id": make_id(task, f"doc:{doc_id}", model, "lm-eval", candidate),
            "task": task,
            "category": category or lmeval_category(task),
            "question": prompt,
            "candidate": candidate,
            "references": refs,
            "label": label,
            "label_source": f"rule:lm-eval:{names[0]}" if label is not None else None,
            "candidate_model": model,
            "meta": {
                "variant": "lm-eval",
                "item": f"doc:{doc_id}",
                "lm_eval": {
                    "file": path.name,
                    "doc_id": doc_id,
                    "filter": chosen,
                    "filters": filters,
                    **{k: row[k] for k in ("doc_hash", "prompt_hash", "target_hash") if k in row},
                },
            },
        }
        records.append(normalize(rec, where))
    return records, skipped


def sample_files(paths: list[str]) -> list[Path]:
    """The samples files of the given files and folders (folders searched recursively)."""
    files = []
    for path in map(Path, paths):
        found = sorted(p for p in path.rglob("samples_*.jsonl")) if path.is_dir() else [path]
        if not found:
            raise RecordError(f"{path}: no samples_*.jsonl files under this folder")
        files += found
    return files
