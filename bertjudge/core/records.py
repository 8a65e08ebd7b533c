"""The record schema: the one contract between stages.

Fields: ``id``; ``task``; ``category`` (``CATEGORIES``); ``question`` (or null); ``candidate`` (the answer
judged); ``references`` (acceptable answers, a list; a single ``reference`` string is accepted); ``label``
(1 correct, 0 wrong, null); ``label_source`` (who labelled: ``human:<who>`` only for people,
``read:llm-agent`` for rows LLM agents read, ``rule:…``, ``synthetic:…``); ``candidate_model``; ``split``;
``meta`` (an object). Scoring adds ``SCORE_FIELDS``.

A record is a plain dict with named fields. ``read_records`` validates a whole file
and raises :class:`RecordError` naming the file and line before anything is
written; ``write_records`` writes atomically (temporary file, then rename).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

CATEGORIES = ("multiple_choice", "context_extraction", "open_math", "open_qa", "other")
SCHEMA_FIELDS = (
    "id", "task", "category", "question", "candidate", "references", "label",
    "label_source", "candidate_model", "split", "meta",
)
SCORE_FIELDS = ("score", "verdict", "judge", "input_hash")
RECORD_SUFFIXES = (".jsonl", ".jsonl.gz", ".parquet")  # JSON lines (gzip-compressed or not) and Parquet


def is_record_file(path: str | os.PathLike) -> bool:
    """Whether ``path`` has a record-file suffix (``.jsonl``, ``.jsonl.gz`` or ``.parquet``)."""
    return Path(path).name.endswith(RECORD_SUFFIXES)


def _gzipped(path: Path) -> bool:
    return path.suffix == ".gz"


class RecordError(ValueError):
    """Bad input, with the place it was found (``file:line``)."""


def _hash(*parts: Any) -> str:
    blob = json.dumps(parts, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def make_id(task: str, question: str | None, candidate_model: str | None,
            variant: str | None, candidate: str) -> str:
    """A stable id from task, item (question), candidate model, prompt variant and the candidate text."""
    return f"{task}-{_hash(task, question, candidate_model, variant, candidate)[:16]}"


def input_hash(record: dict) -> str:
    """Hash of exactly what a judge reads: question, candidate and references."""
    return _hash(record.get("question"), record["candidate"], record["references"])[:16]


def normalize(obj: Any, where: str = "<record>") -> dict:
    """Validate one raw record and fill defaults; raise RecordError naming ``where``."""
    if not isinstance(obj, dict):
        raise RecordError(f"{where}: expected a JSON object, got {type(obj).__name__}")
    rec = dict(obj)

    def bad(msg: str) -> RecordError:
        return RecordError(f"{where}: {msg}")

    if "references" not in rec:
        if "reference" not in rec:
            raise bad("missing field 'references' (or 'reference')")
        rec["references"] = rec.pop("reference")
    elif "reference" in rec:
        raise bad("give either 'reference' or 'references', not both")
    refs = rec["references"]
    if isinstance(refs, str):
        refs = [refs]
    if not isinstance(refs, list) or not refs or not all(isinstance(r, str) for r in refs):
        raise bad("'references' must be a non-empty list of strings (or 'reference' a string)")
    rec["references"] = refs

    if "candidate" not in rec:
        raise bad("missing field 'candidate'")
    if not isinstance(rec["candidate"], str):
        raise bad(f"'candidate' must be a string, got {type(rec['candidate']).__name__}")
    question = rec.setdefault("question", None)
    if question is not None and not isinstance(question, str):
        raise bad(f"'question' must be a string or null, got {type(question).__name__}")

    for key, default in (("task", "unknown"), ("category", "other")):
        value = rec.get(key)
        rec[key] = default if value is None else value
        if not isinstance(rec[key], str):
            raise bad(f"'{key}' must be a string, got {type(rec[key]).__name__}")
    if rec["category"] not in CATEGORIES:
        raise bad(f"'category' must be one of {', '.join(CATEGORIES)}; got {rec['category']!r}")

    label = rec.setdefault("label", None)
    if isinstance(label, bool):
        label = int(label)
    if label not in (0, 1, None) or isinstance(label, float) and label not in (0.0, 1.0):
        raise bad(f"'label' must be 0, 1 or null, got {label!r}")
    rec["label"] = None if label is None else int(label)

    for key in ("label_source", "candidate_model", "split"):
        value = rec.setdefault(key, None)
        if value is not None and not isinstance(value, str):
            raise bad(f"'{key}' must be a string or null, got {type(value).__name__}")
    meta = rec.setdefault("meta", {})
    if meta is None:
        rec["meta"] = {}
    elif not isinstance(meta, dict):
        raise bad(f"'meta' must be an object, got {type(meta).__name__}")

    if rec.get("id") is None:
        rec["id"] = make_id(rec["task"], rec["question"], rec["candidate_model"],
                            rec["meta"].get("variant"), rec["candidate"])
    elif not isinstance(rec["id"], str):
        raise bad(f"'id' must be a string, got {type(rec['id']).__name__}")
    return rec


def _lines(handle, path: Path) -> Iterator[str]:
    try:
        yield from handle
    except (OSError, EOFError) as err:  # a corrupt or truncated gzip file
        raise RecordError(f"{path}: not a readable gzip file ({err})") from None


def _iter_jsonl(path: Path) -> Iterator[tuple[str, Any]]:
    opener = gzip.open if _gzipped(path) else open
    with opener(path, "rt", encoding="utf-8") as handle:
        for lineno, line in enumerate(_lines(handle, path), 1):
            if not line.strip():
                continue
            where = f"{path}:{lineno}"
            try:
                yield where, json.loads(line)
            except json.JSONDecodeError as err:
                raise RecordError(f"{where}: invalid JSON ({err.msg} at column {err.colno})") from None


def _iter_parquet(path: Path) -> Iterator[tuple[str, Any]]:
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
    except Exception as err:  # pyarrow raises several types for corrupt files
        raise RecordError(f"{path}: not a readable Parquet file ({err})") from None
    for row, obj in enumerate(table.to_pylist(), 1):
        if isinstance(obj.get("meta"), str):  # written by write_records as a JSON string
            try:
                obj["meta"] = json.loads(obj["meta"])
            except json.JSONDecodeError:
                raise RecordError(f"{path}:row {row}: 'meta' is not valid JSON") from None
        yield f"{path}:row {row}", obj


def iter_raw(path: str | os.PathLike) -> Iterator[tuple[str, Any]]:
    """``(file:line, parsed row)`` of a JSONL (``.gz`` read as gzip) or Parquet file, unvalidated;
    invalid JSON is refused."""
    path = Path(path)
    if not path.is_file():
        raise RecordError(f"{path}: no such file")
    yield from (_iter_parquet if path.suffix == ".parquet" else _iter_jsonl)(path)


def read_with_raw(path: str | os.PathLike) -> list[tuple[dict, dict]]:
    """(raw row, normalized record) pairs of a JSONL or Parquet file, validated as a whole.

    Refuses a missing, empty or bad file, and duplicate ids, naming the file and line.
    """
    path = Path(path)
    pairs, seen = [], {}
    for where, obj in iter_raw(path):
        rec = normalize(obj, where)
        if rec["id"] in seen:
            raise RecordError(f"{where}: duplicate id {rec['id']!r} (first at {seen[rec['id']]})")
        seen[rec["id"]] = where
        pairs.append((obj, rec))
    if not pairs:
        raise RecordError(f"{path}: empty file, no records")
    return pairs


def read_records(path: str | os.PathLike) -> list[dict]:
    """Read and validate a JSONL or Parquet file into normalized records."""
    return [rec for _, rec in read_with_raw(path)]


def read_partial(path: Path) -> dict[str, dict]:
    """Rows (by id) of the append-only ``.partial`` file of an interrupted resumable run.

    A line cut by the interruption is skipped, so that its row is done again.
    """
    done = {}
    if path.exists():
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                try:
                    row = json.loads(line)
                except json.JSONDecodeError:
                    continue
                done[row["id"]] = row
    return done


def atomic_path(path: Path):
    """A temporary sibling of ``path``; rename it over ``path`` when complete."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    return Path(tmp)


def write_records(path: str | os.PathLike, records: Iterable[dict]) -> Path:
    """Write records as JSONL, gzip-compressed JSONL (``.gz``, reproducible bytes) or Parquet
    (by suffix), atomically."""
    path = Path(path)
    tmp = atomic_path(path)
    try:
        if path.suffix == ".parquet":
            import pyarrow as pa
            import pyarrow.parquet as pq

            rows = [dict(r, meta=json.dumps(r.get("meta", {}), ensure_ascii=False)) for r in records]
            pq.write_table(pa.Table.from_pylist(rows), tmp)
        elif _gzipped(path):
            with open(tmp, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as zipped:
                for rec in records:  # no name or time in the header: the same records give the same bytes
                    zipped.write((json.dumps(rec, ensure_ascii=False) + "\n").encode("utf-8"))
        else:
            with open(tmp, "w", encoding="utf-8") as handle:
                for rec in records:
                    handle.write(json.dumps(rec, ensure_ascii=False) + "\n")
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600 files; give the usual permissions
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return path
