"""``python -m bertjudge import-lmeval``: lm-evaluation-harness per-sample outputs as records.

lm-eval ``--log_samples`` writes ``<output>/<model>/samples_<task>_<timestamp>.jsonl``, one line
per document and filter (``doc_id``, ``doc``, ``target``, ``arguments``, ``resps``,
``filtered_resps``, ``filter``, ``metrics`` and the metric values, e.g. ``exact_match``).
Every raw response of a document becomes one record (a task with ``repeats`` > 1 generates several
per document: each is its own row, its id and ``meta.lm_eval.repeat`` distinct): the response as
candidate, the target as reference (the final part of a GSM8K-style "… #### 42" target, the content
of a ``\\boxed{}``), and as question the document's own, without the prompt's few-shot examples (the
task's ``doc_to_text`` rendered with the document when lm-eval's ``results_<timestamp>.json`` beside
the file gives it as a field or template; else the document's ``question`` field; else the prompt).
The label is lm-eval's 0/1 metric of the chosen filter (``label_source`` ``rule:lm-eval:<metric>``;
bertjudge's own in-harness metric is never the default) where the document has one response: with
repeats, lm-eval's metric is a verdict on what its filter made of them all (the first, a majority
vote), not on each response, so the rows carry it in ``meta`` only. Every filter's result is kept in
``meta``. Log-likelihood tasks (multiple choice scored without generating text) have no candidate: skipped.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import jinja2

from bertjudge.core.extract import boxed
from bertjudge.core.records import RecordError, make_id, normalize
from bertjudge.data.sources import category_of

SAMPLES = re.compile(r"^samples_(?P<task>.+)_(?P<time>\d{4}-\d{2}-\d{2}T[\d\-.:]+)\.jsonl$")
BINARY_METRICS = ("exact_match", "acc", "em", "exact", "correct")
OWN_METRICS = "bertjudge"  # bertjudge's own in-harness metric (pipeline/lmeval_metric.py) labels no row
TASKS = Path(__file__).parent / "lmeval_tasks"  # lm-eval task YAMLs that extend real tasks (package data)
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
# lm-eval's templates: Jinja with undefined names an error and its regex_replace filter (lm_eval.utils)
_JINJA = jinja2.Environment(loader=jinja2.BaseLoader(), undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
_JINJA.filters["regex_replace"] = lambda s, pattern, repl, count=0: re.sub(pattern, repl, s, count=count)
_SOURCE = re.compile(r"^\s*(def |lambda\b|functools\.partial\(|<function |<bound )")  # a function, as lm-eval logs it


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


def render(template: str, doc: dict):
    """What lm-eval makes of a ``doc_to_text``/``doc_to_target`` string for ``doc``: the field it names, else the
    Jinja template rendered with the document's fields (a result written as a list, "['a', 'b']", is the list).
    Raises ``jinja2.TemplateError`` (e.g. ``UndefinedError`` for a field the document lacks)."""
    if template in doc:
        return doc[template]
    text = _JINJA.from_string(template).render(**doc)
    if len(text) >= 2 and text[0] == "[" and text[-1] == "]":
        try:
            return ast.literal_eval(text)
        except (SyntaxError, ValueError):
            pass
    return text


def doc_question(doc, config: dict | None = None) -> tuple[str | None, str | None]:
    """(the document's question, where it came from): the task's ``doc_to_text`` (from lm-eval's results file,
    ``config``) rendered with ``doc`` when it is a field or a template, else ``doc["question"]``; (None, None)
    when neither gives text (a ``doc_to_text`` that is a Python function is logged as its source: not run)."""
    if not isinstance(doc, dict):
        return None, None
    template = (config or {}).get("doc_to_text")
    if isinstance(template, str) and template.strip() and not _SOURCE.match(template):
        try:
            text = render(template, doc)
        except (jinja2.TemplateError, TypeError):
            text = None
        if isinstance(text, str) and text.strip():
            return text.strip(), "doc_to_text"
    question = doc.get("question")
    if isinstance(question, str) and question.strip():
        return question, "doc"
    return None, None


def _prompt(arguments) -> str | None:
    first = next(iter(arguments.values())) if isinstance(arguments, dict) else arguments[0]  # 0.4.3+ or older
    prompt = first["arg_0"] if isinstance(first, dict) else first[0]
    return prompt if isinstance(prompt, str) else None


def _model_name(folder: str) -> str:
    return folder.replace("__", "/")  # lm-eval's sanitized model name, e.g. meta-llama__Llama-3.2-1B


def _responses(resps) -> list | None:
    """The responses to a generative document's request (several with ``repeats``); None: not text."""
    first = resps[0]
    responses = [first] if isinstance(first, str) else first
    if not isinstance(responses, list) or not responses or not all(isinstance(r, str) for r in responses):
        return None  # log-likelihood task: scores, not text (whatever the filter)
    return responses


def results_of(samples: Path) -> tuple[Path | None, dict]:
    """The ``results_<timestamp>.json`` lm-eval wrote with a samples file (same folder and timestamp)."""
    path = samples.parent / f"results_{SAMPLES.match(samples.name)['time']}.json"
    if not path.is_file():
        return None, {}
    try:
        results = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise RecordError(f"{path}:{e.lineno}: not an lm-eval results file ({e.msg})") from None
    if not isinstance(results, dict):
        raise RecordError(f"{path}: not an lm-eval results file (a JSON object)")
    return path, results


def task_config(results: dict, task: str) -> dict:
    """The task's configuration in an lm-eval results file (``configs``), or {}."""
    config = (results.get("configs") or {}).get(task)
    return config if isinstance(config, dict) else {}


def read_samples(
    path: str | Path,
    model: str | None = None,
    filter_name: str | None = None,
    metric: str | None = None,
    category: str | None = None,
    config: dict | None = None,
) -> tuple[list[dict], int]:
    """The records of one samples file (one per response) and how many documents were skipped (no generated
    text). ``config``: the task's configuration from lm-eval's results file (its ``doc_to_text`` gives the
    question; ``task_config``)."""
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
        row, lineno = by_filter.get(chosen, next(iter(by_filter.values())))  # the raw responses are every filter's
        where = f"{path}:{lineno}"
        try:
            responses, prompt = _responses(row["resps"]), _prompt(row["arguments"])
        except (KeyError, IndexError, TypeError):
            raise RecordError(f"{where}: missing resps or arguments") from None
        if responses is None:
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
        value = int(value) if value in (0, 1) else None  # 0., 1., True, False; not f1 scores
        refs = references(row["target"])
        if not refs:
            raise RecordError(f"{where}: empty target")
        question, source = doc_question(row.get("doc"), config)
        if question is None:
            question, source = prompt, "prompt"
        filters = {
            name: {
                "filtered_resp": r.get("filtered_resps"),
                **{m: r[m] for m in r.get("metrics", BINARY_METRICS) if m in r},
            }
            for name, (r, _) in by_filter.items()
        }
        label = value if len(responses) == 1 else None
        for repeat, candidate in enumerate(responses):
            item = f"doc:{doc_id}"
            rec = {
                "id": make_id(task, item if len(responses) == 1 else f"{item}#{repeat}", model, "lm-eval", candidate),
                "task": task,
                "category": category or lmeval_category(task),
                "question": question,
                "candidate": candidate,
                "references": refs,
                "label": label,
                "label_source": f"rule:lm-eval:{names[0]}" if label is not None else None,
                "candidate_model": model,
                "meta": {
                    "variant": "lm-eval",
                    "item": item,
                    "lm_eval": {
                        "file": path.name,
                        "doc_id": doc_id,
                        "repeat": repeat,
                        "repeats": len(responses),
                        "question_from": source,
                        "filter": chosen,
                        "metric": names[0] if names else None,
                        "value": value,
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
