"""The record schema: the one contract between stages.

Fields: ``id``; ``task``; ``category`` (``CATEGORIES``; a row without one gets the category its question and
references show, ``categories.infer_category``); ``question`` (or null); ``candidate`` (the answer
judged); ``references`` (acceptable answers, a list; a single ``reference`` string is accepted); ``label``
(1 correct, 0 wrong, null); ``label_source`` (who labelled: ``human:<who>`` only for people,
``read:llm-agent`` for rows LLM agents read, ``rule:…``, ``synthetic:…``); ``candidate_model``; ``split``;
``meta`` (an object). Scoring adds ``SCORE_FIELDS``.

A record is a plain dict with named fields. ``read_records`` validates a whole file
and raises :class:`RecordError` naming the file and line before anything is
written; ``write_records`` writes atomically (temporary file, then rename).
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import json
import os
import tempfile
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from bertjudge.core.categories import infer_category
from bertjudge.core.errors import BertJudgeError

CATEGORIES = ("multiple_choice", "context_extraction", "open_math", "open_qa", "other")
SCHEMA_FIELDS = (
    "id",
    "task",
    "category",
    "question",
    "candidate",
    "references",
    "label",
    "label_source",
    "candidate_model",
    "split",
    "meta",
)
SCORE_FIELDS = ("score", "verdict", "judge", "input_hash")
RECORD_SUFFIXES = (".jsonl", ".jsonl.gz", ".parquet")  # JSON lines (gzip-compressed or not) and Parquet


def is_record_file(path: str | os.PathLike) -> bool:
    """Whether ``path`` has a record-file suffix (``.jsonl``, ``.jsonl.gz`` or ``.parquet``)."""
    return Path(path).name.endswith(RECORD_SUFFIXES)


def _gzipped(path: Path) -> bool:
    return path.suffix == ".gz"


class RecordError(BertJudgeError, ValueError):
    """Bad input, with the place it was found (``file:line``)."""


def _hash(*parts: Any) -> str:
    """The sha256 of values as canonical JSON: the hash of a record's data (its id, ``input_hash``), not of a file
    (files are hashed by ``core.hashing``)."""
    blob = json.dumps(parts, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8", "surrogatepass")).hexdigest()  # a lone surrogate hashes too


def make_id(task: str, question: str | None, candidate_model: str | None, variant: str | None, candidate: str) -> str:
    """A stable id from task, item (question), candidate model, prompt variant and the candidate text."""
    return f"{task}-{_hash(task, question, candidate_model, variant, candidate)[:16]}"


def input_hash(record: dict) -> str:
    """Hash of exactly what a judge reads: question, candidate and references."""
    return _hash(record.get("question"), record["candidate"], record["references"])[:16]


def row_hash(record: dict) -> str:
    """Hash of a whole record: every field (category, label, meta, extra fields…), not only what a judge
    reads. A resumable run keeps it per row, so that a row edited in any field is not taken from an
    earlier run. Values JSON cannot write (dates from Parquet) are hashed as their text."""
    blob = json.dumps(record, ensure_ascii=False, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:32]


def normalize(obj: Any, where: str = "<record>") -> dict:
    """Validate one raw record and fill defaults; raise RecordError naming ``where``."""
    if not isinstance(obj, dict):
        raise RecordError(f"{where}: expected a JSON object, got {type(obj).__name__}")
    rec = dict(obj)

    def bad(msg: str) -> RecordError:
        return RecordError(f"{where}: {msg}")

    for key, other in (("reference", "references"), ("references", "reference")):
        if key in rec and rec[key] is None and other in rec:  # a null column of a Parquet file is no value
            del rec[key]
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

    if rec.get("category") is None:  # one answer per row, however it is called: the category read from the row
        rec["category"] = infer_category(question, refs)
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
        rec["id"] = make_id(
            rec["task"], rec["question"], rec["candidate_model"], rec["meta"].get("variant"), rec["candidate"]
        )
    elif not isinstance(rec["id"], str):
        raise bad(f"'id' must be a string, got {type(rec['id']).__name__}")
    return rec


def _lines(handle, path: Path) -> Iterator[bytes]:
    try:
        yield from handle
    except (OSError, EOFError, zlib.error) as err:  # a corrupt or truncated gzip file
        raise RecordError(f"{path}: not a readable gzip file ({err})") from None


def _iter_jsonl(path: Path) -> Iterator[tuple[str, Any]]:
    opener = gzip.open if _gzipped(path) else open
    with opener(path, "rb") as handle:  # bytes, decoded line by line: a bad byte is named by its line
        for lineno, raw in enumerate(_lines(handle, path), 1):
            where = f"{path}:{lineno}"
            try:
                line = raw.decode("utf-8-sig" if lineno == 1 else "utf-8")  # a byte-order mark is not an error
            except UnicodeDecodeError as err:
                raise RecordError(f"{where}: not UTF-8 text (byte {err.start + 1}); save the file as UTF-8") from None
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
                if "\\ud" in line.lower():  # an escaped surrogate: refuse one that pairs with nothing
                    json.dumps(obj, ensure_ascii=False).encode("utf-8")
                yield where, obj
            except json.JSONDecodeError as err:
                raise RecordError(f"{where}: invalid JSON ({err.msg} at column {err.colno})") from None
            except UnicodeEncodeError:
                raise RecordError(f"{where}: not valid Unicode (an unpaired surrogate escape, e.g. \\ud800)") from None
            except (ValueError, RecursionError) as err:  # a number past Python's digit limit, nesting too deep
                raise RecordError(
                    f"{where}: JSON this reader refuses ({type(err).__name__}: {str(err)[:80]})"
                ) from None


JSON_COLUMNS_KEY = b"bertjudge.json_columns"  # Parquet schema metadata: the columns written as JSON text


def _iter_parquet(path: Path) -> Iterator[tuple[str, Any]]:
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
    except Exception as err:  # pyarrow raises several types for corrupt files
        raise RecordError(f"{path}: not a readable Parquet file ({err})") from None
    try:
        json_columns = set(json.loads((table.schema.metadata or {}).get(JSON_COLUMNS_KEY, b"[]")))
    except (json.JSONDecodeError, TypeError):
        raise RecordError(f"{path}: the schema metadata {JSON_COLUMNS_KEY.decode()} is not a JSON list") from None
    for row, obj in enumerate(table.to_pylist(), 1):
        for key in json_columns | {"meta"}:  # meta: written by write_records as a JSON string
            if isinstance(obj.get(key), str):
                try:
                    obj[key] = json.loads(obj[key])
                except json.JSONDecodeError:
                    raise RecordError(f"{path}:row {row}: {key!r} is not valid JSON") from None
        yield f"{path}:row {row}", obj


def iter_raw(path: str | os.PathLike) -> Iterator[tuple[str, Any]]:
    """``(file:line, parsed row)`` of a JSONL (``.gz`` read as gzip) or Parquet file, unvalidated;
    invalid JSON is refused."""
    path = Path(path)
    if not path.is_file():
        raise RecordError(f"{path}: no such file")
    yield from (_iter_parquet if path.suffix == ".parquet" else _iter_jsonl)(path)


def iter_located(path: str | os.PathLike) -> Iterator[tuple[str, dict, dict]]:
    """(file:line, raw row, normalized record) of a JSONL or Parquet file, streamed: a bad row or a
    duplicate id is a ``RecordError`` naming the file and line when it is reached (only the ids are
    kept, so a file of millions of rows is read in bounded memory)."""
    seen: dict[str, str] = {}  # id -> its place after "FILE:" (the line, or "row N" of a Parquet file)
    prefix = len(str(Path(path))) + 1
    for where, obj in iter_raw(path):
        rec = normalize(obj, where)
        first = seen.setdefault(rec["id"], where[prefix:])
        if first != where[prefix:]:
            raise RecordError(f"{where}: duplicate id {rec['id']!r} (first at {where[:prefix]}{first})")
        yield where, obj, rec


def read_located(path: str | os.PathLike) -> list[tuple[str, dict, dict]]:
    """(file:line, raw row, normalized record) of a JSONL or Parquet file, validated as a whole.

    Refuses a missing, empty or bad file, and duplicate ids, naming the file and line.
    """
    rows = list(iter_located(path))
    if not rows:
        raise RecordError(f"{Path(path)}: empty file, no records")
    return rows


def read_with_raw(path: str | os.PathLike) -> list[tuple[dict, dict]]:
    """(raw row, normalized record) pairs of a JSONL or Parquet file, validated as a whole.

    Refuses a missing, empty or bad file, and duplicate ids, naming the file and line.
    """
    return [(obj, rec) for _, obj, rec in read_located(path)]


def read_records(path: str | os.PathLike) -> list[dict]:
    """Read and validate a JSONL or Parquet file into normalized records."""
    return [rec for _, rec in read_with_raw(path)]


def iter_appended(path: str | os.PathLike, size: int | None = None) -> Iterator[tuple[str, Any]]:
    """``(file:line, parsed object)`` of each complete line of an append-only JSONL file of a resumable
    run, streamed, strictly: only the first ``size`` bytes are read (default: up to the last newline;
    a last line without its newline was cut by ``kill -9``, a crash or a full disk, and is left out, to be
    done again). An unreadable line before it (garbage in the middle) is a ``RecordError`` naming the
    file and line. A missing file has no lines."""
    path = Path(path)
    if not path.exists():
        return
    if not path.is_file():
        raise RecordError(f"{path}: not a file")
    if size is None:
        size = complete_size(path)
    with open(path, "rb") as handle:
        done = 0
        for lineno, line in enumerate(handle, 1):
            done += len(line)
            if done > size or not line.endswith(b"\n"):
                return
            if not line.strip():
                continue
            where = f"{path}:{lineno}"
            try:
                yield where, json.loads(line.decode("utf-8"))
            except UnicodeDecodeError:
                raise RecordError(f"{where}: not UTF-8 text (the file is corrupted)") from None
            except json.JSONDecodeError as err:
                raise RecordError(
                    f"{where}: invalid JSON ({err.msg} at column {err.colno}); the file is corrupted"
                ) from None


def complete_size(path: str | os.PathLike) -> int:
    """The bytes of a file up to its last newline: what follows was cut by an interruption (0 for a
    missing file)."""
    path = Path(path)
    if not path.is_file():
        return 0
    with open(path, "rb") as handle:
        position = handle.seek(0, os.SEEK_END)
        while position > 0:
            start = max(0, position - (1 << 16))
            handle.seek(start)
            newline = handle.read(position - start).rfind(b"\n")
            if newline >= 0:
                return start + newline + 1
            position = start
    return 0


def read_appended(path: str | os.PathLike) -> tuple[list[tuple[str, Any]], int]:
    """The complete lines of an append-only JSONL file (``iter_appended``) and the bytes they take:
    truncate the file to that size before appending to it."""
    size = complete_size(path)
    return list(iter_appended(path, size)), size


def atomic_path(path: Path):
    """A temporary sibling of ``path``; rename it over ``path`` when complete."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    return Path(tmp)


def _nested(value: Any) -> bool:
    return isinstance(value, dict) or isinstance(value, list) and any(isinstance(v, (dict, list)) for v in value)


def _parquet_table(records: Iterable[dict]):
    """Every column of every row: the union of the rows' keys (in order of appearance), null where a row
    has none. ``meta``, and a column whose values Arrow cannot hold in one type (numbers and strings)
    or that holds objects (whose keys differ from row to row), are written as JSON text; the schema
    metadata lists the latter, and ``iter_raw`` reads them back."""
    import pyarrow as pa

    rows = [dict(r, meta=json.dumps(r.get("meta", {}), ensure_ascii=False)) for r in records]
    names = list(dict.fromkeys(key for row in rows for key in row))
    arrays, json_columns = [], []
    for name in names:
        values = [row.get(name) for row in rows]
        array = None
        if name != "meta" and not any(_nested(v) for v in values):
            try:
                array = pa.array(values)
            except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, OverflowError):
                array = None
        if array is None and name != "meta":
            json_columns.append(name)
            values = [None if v is None else json.dumps(v, ensure_ascii=False, default=str) for v in values]
        arrays.append(array if array is not None else pa.array(values, pa.string()))
    metadata = {JSON_COLUMNS_KEY: json.dumps(json_columns).encode()} if json_columns else None
    return pa.Table.from_arrays(arrays, names=names, metadata=metadata)


def synthetic_label_source(how: str, original: str | None) -> str:
    """The ``label_source`` of a row a program made from a labelled row (``how``: ``synthetic:<what>``):
    ``synthetic:answer-format(from human:evouna)``: it starts with who gave it, a program, never ``human:``."""
    return f"{how}(from {original or 'unknown'})"


OUTPUT_SUFFIXES = (".jsonl", ".jsonl.gz", ".parquet", ".csv")


def check_output_suffix(path: str | os.PathLike) -> Path:
    """``path`` when its name says a format ``write_records`` writes; a one-line RecordError otherwise."""
    path = Path(path)
    if not path.name.endswith(OUTPUT_SUFFIXES):
        raise RecordError(f"{path}: write a {', '.join(OUTPUT_SUFFIXES[:-1])} or {OUTPUT_SUFFIXES[-1]} file")
    return path


def _write_csv(handle, records: Iterable[dict]) -> None:
    """Records as CSV: one column per field (in order of first appearance), lists and objects as JSON text."""
    rows = list(records)
    columns = list(dict.fromkeys(key for rec in rows for key in rec))
    writer = csv.DictWriter(handle, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    for rec in rows:
        writer.writerow(
            {k: json.dumps(v, ensure_ascii=False) if isinstance(v, (list, dict)) else v for k, v in rec.items()}
        )


def write_records(path: str | os.PathLike, records: Iterable[dict]) -> Path:
    """Write records as JSONL, gzip-compressed JSONL (``.gz``, reproducible bytes), Parquet or CSV (``.csv``: lists
    and objects as JSON text) by suffix, atomically."""
    path = Path(path)
    tmp = atomic_path(path)
    try:
        if path.suffix == ".csv":
            with open(tmp, "w", encoding="utf-8", newline="") as handle:
                _write_csv(handle, records)
        elif path.suffix == ".parquet":
            import pyarrow.parquet as pq

            pq.write_table(_parquet_table(records), tmp)
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
