"""One resumable writer for long runs: ``judge``, ``evaluate``, ``generate`` and ``label``.

A run writes its rows to ``OUT.partial.jsonl`` as they are done, and the final file replaces it in one
rename (``commit``). A rerun after an interruption (Ctrl-C, ``kill -9``, a crash) reads what is there
and does only the rest. The partial file is:

- a header line ``{"bertjudge": "bertjudge partial file", "version": …, "kind": …, "settings": {…}}``:
  what the rows depend on (the judge's fingerprint, the generation settings, the teacher); the caller
  compares the stored settings with its own and refuses to resume when they differ;
- one entry per line, ``{"row_hash": …, "row": {"id": …, …}}``: the row written and the hash of the
  input it was made from (``records.row_hash``), so that an input row edited since is not taken;
- appended in whole lines, flushed and synced: ``kill -9`` leaves at most the last line cut, which is
  dropped (its row is done again); garbage before it is an error naming the file and line.

The file is locked (``flock``) while a run holds it: a second run on the same output is refused. Entries
are read as a stream, so a partial file of millions of rows is never held in memory.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from bertjudge.core.errors import BertJudgeError
from bertjudge.core.records import RecordError, complete_size, iter_appended, write_records

try:  # one writer per partial file (POSIX)
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None

PARTIAL_FORMAT = "bertjudge partial file"
PARTIAL_VERSION = 3


class PartialFileBusy(BertJudgeError, RuntimeError):
    """A partial file that another run is writing."""


def partial_path(output: str | os.PathLike) -> Path:
    """The append-only file of the rows done so far: ``OUT.partial.jsonl``."""
    output = Path(output)
    return output.with_name(output.name + ".partial.jsonl")


def changed_keys(old: dict, new: dict) -> list[str]:
    """The keys whose values differ between two settings dicts (either side may lack a key)."""
    return [key for key in dict.fromkeys([*old, *new]) if old.get(key) != new.get(key)]


def shown_keys(keys: list[str], most: int = 6) -> str:
    """``a, b, c and 4 more``: the keys named in a refusal."""
    return ", ".join(keys[:most]) + (f" and {len(keys) - most} more" if len(keys) > most else "")


def _json_default(value: Any):
    """numpy scalars (a judge's details) as Python numbers; anything else as its text."""
    item = getattr(value, "item", None)
    return item() if callable(item) else str(value)


class PartialFile:
    """The partial file of one output, held by this run until ``close``.

    Args:
        output: the final file (``.jsonl``, ``.jsonl.gz`` or ``.parquet``); the partial file is beside it.
        kind: what the run writes (``score``, ``generate``, ``label``, ``evaluate``), named in messages.
        settings: what the rows depend on; stored in the header of a new partial file.
        restart: drop an earlier run's partial file instead of resuming from it.
        hint: how to start over, ended on every refusal (e.g. "rerun with --restart …").

    ``stored_settings`` is the header's settings of an earlier run (None for a new file); the caller
    compares them with its own before using ``entries()``, then ``append``s and finally ``commit``s.
    """

    def __init__(self, output: str | os.PathLike, kind: str, settings: dict, restart: bool = False, hint: str = ""):
        self.output, self.path, self.kind = Path(output), partial_path(output), kind
        self.settings, self.hint = settings, hint
        if self.path.is_dir():
            raise IsADirectoryError(f"{self.path}: is a directory, not a partial {kind} file")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)
        self.handle = None
        self.committed = self.locked = False
        try:
            if fcntl is not None:
                try:
                    fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    raise PartialFileBusy(
                        f"{self.path}: another run is writing this partial file; wait for it or write to another output"
                    ) from None
            self.locked = True
            if restart:
                os.ftruncate(self.fd, 0)
            self.size = complete_size(self.path)
            self.stored_settings = self._read_header()
        except BaseException:
            self.close()
            raise

    def __enter__(self) -> PartialFile:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def refuse(self, where: str, message: str) -> RecordError:
        """A ``RecordError`` at ``where`` (the partial file, or one of its lines), ended by the hint."""
        return RecordError(f"{where}: {message}" + (f"; {self.hint}" if self.hint else ""))

    def _read_header(self) -> dict | None:
        for where, header in iter_appended(self.path, self.size):
            if not (isinstance(header, dict) and header.get("bertjudge") == PARTIAL_FORMAT):
                raise self.refuse(
                    where, f"not a partial {self.kind} file of this version of bertjudge (no header line)"
                )
            if header.get("version") != PARTIAL_VERSION or not isinstance(header.get("settings"), dict):
                raise self.refuse(
                    where,
                    f"a partial {self.kind} file of another version of bertjudge (version {header.get('version')!r})",
                )
            if header.get("kind") != self.kind:
                raise self.refuse(where, f"a partial {header.get('kind')} file, not a partial {self.kind} file")
            return header["settings"]
        return None

    def entries(self) -> Iterator[tuple[str, dict]]:
        """``(file:line, {"row_hash", "row"})`` of every complete entry after the header, streamed; a
        line that is not an entry is a ``RecordError`` naming it."""
        lines = iter_appended(self.path, self.size)
        next(lines, None)  # the header
        for where, entry in lines:
            if not (
                isinstance(entry, dict)
                and isinstance(entry.get("row"), dict)
                and isinstance(entry["row"].get("id"), str)
                and isinstance(entry.get("row_hash"), str)
            ):
                raise self.refuse(where, f"not a row of a partial {self.kind} file (the partial file is corrupted)")
            yield where, entry

    def rows(self) -> Iterator[dict]:
        """The rows of every complete entry, in the order they were written, streamed."""
        return (entry["row"] for _, entry in self.entries())

    def append(self, entries: Iterable[tuple[str, dict]]) -> None:
        """Append ``(row_hash, row)`` entries as whole lines, flushed and synced (the header first on a
        new file; a cut last line of an earlier run is dropped first)."""
        if self.handle is None:
            os.ftruncate(self.fd, self.size)
            os.lseek(self.fd, 0, os.SEEK_END)
            self.handle = os.fdopen(self.fd, "a", encoding="utf-8")
            if self.size == 0:
                header = {"bertjudge": PARTIAL_FORMAT, "version": PARTIAL_VERSION, "kind": self.kind}
                self._write([{**header, "settings": self.settings}])
        self._write([{"row_hash": digest, "row": row} for digest, row in entries])

    def _write(self, objects: list[dict]) -> None:
        if not objects:
            return
        text = "".join(json.dumps(obj, ensure_ascii=False, default=_json_default) + "\n" for obj in objects)
        self.handle.write(text)
        self.handle.flush()
        os.fsync(self.handle.fileno())
        self.size += len(text.encode("utf-8"))

    def commit(self, rows: Iterable[dict] | None = None) -> Path:
        """Write ``rows`` (default: every row of the partial file, in order) to the output atomically,
        then remove the partial file."""
        write_records(self.output, self.rows() if rows is None else rows)
        self.path.unlink()
        self.committed = True
        return self.output

    def close(self) -> None:
        """Release the lock (the partial file stays, for the next run, unless committed; a partial file that holds
        nothing — a run refused or stopped before its first row — is removed, so a refused run leaves no file)."""
        if self.locked and not self.committed and os.fstat(self.fd).st_size == 0:
            self.path.unlink(missing_ok=True)  # still locked: no other run is writing it
        if self.handle is not None:
            self.handle.close()  # closes the descriptor, and so releases the lock
            self.handle = None
        elif self.fd is not None:
            os.close(self.fd)
        self.fd, self.locked = None, False
