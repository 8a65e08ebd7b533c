"""``python -m bertjudge label``: label candidates with a teacher, keeping full provenance.

Teachers:

- ``rule:math-verify`` — the rule-extracted final answer is Math-Verify-equivalent to a reference;
- ``rule:exact-match`` — the normalized final answer equals a normalized reference;
- ``rule:regex`` — ``RegexJudge`` by category (letters, ROUGE-L >= ``threshold``, Math-Verify);
- ``human`` — labels imported from a file of id → label (JSON lines ``{"id", "label"}`` or one JSON object);
- ``llm:<model>`` — an LLM judge (the ``GenerativeJudge`` prompt through a local transformers model or,
  with ``server``, any OpenAI-compatible server; the paper uses Nemotron-Super-49B-v1.5, non-reasoning).

A rule teacher labels a candidate whose answer it cannot extract as wrong (0); an LLM teacher whose
output cannot be read leaves the label null. Both count as invalid outputs in the report. Each input
file is written under the same name to the output folder, with ``label_report.json``; an
interrupted run resumes where it stopped.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from datetime import datetime, timezone
from pathlib import Path

from bertjudge.core.extract import final_answer, normalize_answer
from bertjudge.core.records import RecordError, input_hash, is_record_file, read_records, row_hash
from bertjudge.core.registry import Registry
from bertjudge.core.resumable import PartialFile
from bertjudge.judges.backends import OpenAIBackend, PromptedJudge, TransformersBackend
from bertjudge.judges.prompt import PROMPT_VERSION
from bertjudge.judges.regex import RegexJudge, math_equal

RULES = ("math-verify", "exact-match", "regex")
REPORT_FILE = "label_report.json"


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


class RuleTeacher:
    """A rule teacher; ``label(records)`` returns ``(label, details)`` per record."""

    def __init__(self, rule: str, threshold: float = 0.5):
        if rule not in RULES:
            raise ValueError(f"unknown rule {rule!r}; choose from {', '.join(RULES)}")
        self.rule, self.threshold = rule, threshold
        self.source = f"rule:{rule}"

    def provenance(self) -> dict:
        extra = {"threshold": self.threshold} if self.rule == "regex" else {}
        return {"teacher": self.source, "timestamp": _now(), **extra}

    def label(self, records: list[dict]) -> list[tuple[int, dict]]:
        if self.rule == "regex":
            rows = RegexJudge(self.threshold).details(records)
            return [(int(r["match"]), {"answer": r["answer"], "invalid": r["unparsed"]}) for r in rows]
        out = []
        for rec in records:
            answer = final_answer(rec["candidate"])
            if answer is None:
                out.append((0, {"answer": None, "invalid": True}))
                continue
            match = normalize_answer(answer) in {normalize_answer(r) for r in rec["references"]}
            parsed = True
            if self.rule == "math-verify" and not match:
                match, parsed = math_equal(rec["references"], answer)
            out.append((int(match), {"answer": answer, "invalid": not parsed}))
        return out


class HumanTeacher:
    """Labels from a file of id → label; records it does not cover stay unlabelled (invalid)."""

    source = "human"

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.labels = read_human_labels(self.path)

    def provenance(self) -> dict:
        return {"teacher": self.source, "file": str(self.path), "labels": row_hash(self.labels), "timestamp": _now()}

    def label(self, records: list[dict]) -> list[tuple[int | None, dict]]:
        return [(self.labels.get(rec["id"]), {"invalid": rec["id"] not in self.labels}) for rec in records]


def read_human_labels(path: Path) -> dict[str, int]:
    """``{id: 0|1}`` from JSON lines ``{"id": …, "label": …}`` or one JSON object ``{id: label}``."""
    text = path.read_text(encoding="utf-8")
    try:
        whole = json.loads(text)
    except json.JSONDecodeError:
        whole = None
    if isinstance(whole, dict) and "id" not in whole:
        pairs = [(str(k), v, f"{path}: id {k!r}") for k, v in whole.items()]
    else:
        pairs = []
        for lineno, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    row = json.loads(line)
                    pairs.append((row["id"], row["label"], f"{path}:{lineno}"))
                except (json.JSONDecodeError, KeyError, TypeError):
                    raise RecordError(f"{path}:{lineno}: expected a JSON object with 'id' and 'label'") from None
    labels = {}
    for key, value, where in pairs:
        if value not in (0, 1):  # True and False are 1 and 0
            raise RecordError(f"{where}: label must be 0, 1, true or false, got {value!r}")
        labels[key] = int(value)
    if not labels:
        raise RecordError(f"{path}: no labels")
    return labels


class LLMTeacher:
    """An LLM judge as teacher: the versioned judging prompt, a verdict parsed from its output.

    Args:
        model: a local model (hub id or folder) or, with ``server``, the name the server knows.
        server: the root of an OpenAI-compatible API (``http://host:8000/v1``); None runs locally.
        mode: ``reasoning`` (generate, parse "Verdict: True|False") or ``direct`` (verdict-token probability).
        max_new_tokens, batch_size: decoding bound and local batch.
        revision: the model revision, recorded as provenance.
    """

    def __init__(
        self,
        model: str,
        server: str | None = None,
        mode: str = "reasoning",
        max_new_tokens: int = 512,
        batch_size: int = 8,
        revision: str | None = None,
        backend=None,
    ):
        if backend is None:
            backend = OpenAIBackend(server, model) if server else TransformersBackend(model, batch_size=batch_size)
        self.judge = PromptedJudge(backend, mode=mode, max_new_tokens=max_new_tokens)
        self.model, self.revision, self.prompt_version = model, revision, PROMPT_VERSION
        self.source = f"llm:{model}@{PROMPT_VERSION}"

    def provenance(self) -> dict:
        return {
            "teacher": self.source,
            "model": self.model,
            "revision": self.revision,
            "prompt_version": self.prompt_version,
            "backend": self.judge.backend.kind,
            "decoding": {"greedy": True, "mode": self.judge.mode, "max_new_tokens": self.judge.max_new_tokens},
            "timestamp": _now(),
        }

    def label(self, records: list[dict]) -> list[tuple[int | None, dict]]:
        rows = self.judge.details(records)
        return [
            (None if r["unparsed"] else int(r["verdict"]), {"output": r["output"], "invalid": r["unparsed"]})
            for r in rows
        ]


def _human_teacher(name: str, labels: str | None = None, **_) -> HumanTeacher:
    if not labels:
        raise ValueError("the human teacher needs --labels FILE (id → label)")
    return HumanTeacher(labels)


def _llm_teacher(name: str, labels: str | None = None, threshold: float = 0.5, **llm) -> LLMTeacher:
    if not name:
        raise ValueError("the LLM teacher needs a model: llm:<model>")
    return LLMTeacher(name, **llm)


# a teacher's kind (the part of its spec before ":") → a factory(name, labels=, threshold=, **llm options)
TEACHERS: Registry = Registry(
    "teacher kind",
    {
        "rule": lambda name, labels=None, threshold=0.5, **_: RuleTeacher(name, threshold),
        "human": _human_teacher,
        "llm": _llm_teacher,
    },
)


def make_teacher(spec: str, labels: str | None = None, threshold: float = 0.5, **llm):
    """A teacher from its spec, through ``TEACHERS``: ``rule:<rule>``, ``human`` (with ``labels``) or
    ``llm:<model>``."""
    kind, _, name = spec.partition(":")
    factory = TEACHERS.lookup(kind, hint=f" in {spec!r} (rule:{{{','.join(RULES)}}}, human or llm:<model>)")
    return factory(name, labels=labels, threshold=threshold, **llm)


def label_records(teacher, records: list[dict]) -> list[dict]:
    """Records with ``label``, ``label_source`` and ``meta.labelling`` (provenance and details) set."""
    provenance = teacher.provenance()
    out = []
    for rec, (label, details) in zip(records, teacher.label(records), strict=True):
        meta = dict(rec["meta"], labelling={**provenance, **details})
        if rec.get("label_source"):
            meta["labelling"]["previous"] = {"label": rec["label"], "label_source": rec["label_source"]}
        out.append({**rec, "label": label, "label_source": teacher.source, "meta": meta})
    return out


def _settings(teacher) -> dict:
    """What a teacher's labels depend on: its provenance without the time (a human teacher's names its labels'
    hash)."""
    return {key: value for key, value in teacher.provenance().items() if key != "timestamp"}


def _previous(teacher, records: list[dict], path: Path) -> dict[str, dict]:
    """Rows of an earlier run's final file, kept if this teacher labelled them from the same input."""
    if not path.exists():
        return {}
    done = {rec["id"]: rec for rec in read_records(path)}
    if any(row["label_source"] != teacher.source for row in done.values()):
        raise RecordError(f"{path}: labelled by another teacher; choose another output folder or delete it")
    for rec in records:
        if rec["id"] in done and input_hash(done[rec["id"]]) != input_hash(rec):
            raise RecordError(f"{path}: {rec['id']} was labelled from another question, candidate or references")
    return done


def label_file(teacher, records: list[dict], path: Path, chunk_size: int = 256) -> list[dict]:
    """Label ``records`` into ``path``, resumably: rows are appended to ``<path>.partial.jsonl`` as they
    are labelled (``core.resumable.PartialFile``), and an output already labelled by this teacher from
    the same input is kept. A resume with another teacher, or after an input row changed, is refused."""
    done = _previous(teacher, records, path)
    settings = _settings(teacher)
    made_from = {rec["id"]: row_hash(rec) for rec in records}
    hint = f"choose another output folder, or delete {path.name}.partial.jsonl to label again"
    with PartialFile(path, "label", settings, hint=hint) as partial:
        if partial.stored_settings not in (None, settings):
            raise partial.refuse(str(partial.path), "labelled by another teacher (or the same one set up otherwise)")
        for where, entry in partial.entries():
            rid = entry["row"]["id"]
            if rid in made_from and made_from[rid] != entry["row_hash"]:
                raise partial.refuse(where, f"{rid} was labelled from another input row than the one there now")
            done[rid] = entry["row"]
        todo = [rec for rec in records if rec["id"] not in done]
        for start in range(0, len(todo), chunk_size):
            rows = label_records(teacher, todo[start : start + chunk_size])
            done.update((row["id"], row) for row in rows)
            partial.append((made_from[row["id"]], row) for row in rows)
        rows = [done[rec["id"]] for rec in records]
        partial.commit(rows)
    return rows


def report(records: list[dict]) -> dict:
    """Counts per task: rows, labelled, positive, invalid; and the overall invalid-output rate."""
    tasks: dict[str, Counter] = defaultdict(Counter)
    for rec in records:
        counts = tasks[rec["task"]]
        counts["rows"] += 1
        counts["labelled"] += rec["label"] is not None
        counts["positive"] += rec["label"] == 1
        counts["invalid"] += bool(rec["meta"]["labelling"]["invalid"])
    total = sum(tasks.values(), Counter())
    return {
        "teacher": records[0]["label_source"] if records else None,
        "rows": total["rows"],
        "invalid_rate": total["invalid"] / max(total["rows"], 1),
        "tasks": {t: dict(c) for t, c in tasks.items()},
    }


def input_files(paths: list[str]) -> list[Path]:
    """Record files of the given files and folders (.jsonl, .jsonl.gz, .parquet)."""
    files = []
    for path in map(Path, paths):
        found = sorted(p for p in path.iterdir() if is_record_file(p)) if path.is_dir() else [path]
        if not found:
            raise RecordError(f"{path}: no .jsonl or .parquet files (nor .jsonl.gz) in this folder")
        files += found
    names = Counter(f.name for f in files)
    if any(n > 1 for n in names.values()):
        raise RecordError(
            f"two inputs share a file name ({[k for k, n in names.items() if n > 1]}); "
            "outputs are written under the input names"
        )
    return files
