"""Score files (``python -m bertjudge judge``), atomically and resumably.

Each output row is the input row (every field kept) plus ``id`` (when it had none), ``score``
(calibrated P(correct)), ``verdict`` (score >= the judge's threshold), ``judge`` and
``input_hash``; a row the judge could not give a verdict for has ``score`` and ``verdict`` null and
``unparsed: true``, and a row the judge failed on (an exception) has them null and an ``error``
(the exception's type and message) instead of stopping the run.

Scored rows are appended to ``OUT.partial.jsonl`` as they are done; a rerun after an interruption
(Ctrl-C, ``kill -9``) skips them, and the final file replaces the partial one in one rename. The
partial file starts with a header line holding the judge's fingerprint (``judge_fingerprint``: the
sha256 of its folder's files, its calibration and format), and keeps with each row the hash of the
whole input row (``records.row_hash``): a rerun with another judge or with an edited row is refused
(``restart=True`` starts over). A last line cut by ``kill -9`` is done again; garbage before it is an
error naming the line.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bertjudge.core.errors import BertJudgeError
from bertjudge.core.records import (
    RecordError,
    input_hash,
    read_appended,
    read_located,
    row_hash,
    write_records,
)
from bertjudge.judges.interface import verdict_fields
from bertjudge.judges.routing import CascadeJudge

try:  # one writer per partial file (POSIX)
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None

PARTIAL_FORMAT = "bertjudge partial score file"
PARTIAL_VERSION = 2
SCORING_FIELDS = ("unparsed", "error")  # written by scoring when they apply: never kept from an input row
FATAL = (KeyboardInterrupt, SystemExit, GeneratorExit)  # stop the run; any other exception fails a row
RESTART_HINT = "rerun with --restart to score every row again"


class RowFailed(BertJudgeError, RuntimeError):
    """``strict=True``: a row the judge could not score stopped the run (the partial file is kept)."""


class ScoringError(BertJudgeError, RuntimeError):
    """A partial file that another run is writing."""


@dataclass
class ScoreSummary:
    """What ``score_file`` did: the file written, its rows, how many were taken from the partial file
    of an interrupted run, and how many failed (``score`` null with an ``error``; the first named)."""

    output: Path
    rows: int
    resumed: int
    failed: int
    first_failure: str | None = None

    def __fspath__(self) -> str:
        return str(self.output)


def partial_path(output: str | os.PathLike) -> Path:
    """The append-only file of rows scored so far: ``OUT.partial.jsonl``."""
    output = Path(output)
    return output.with_name(output.name + ".partial.jsonl")


def _same_file(a: Path, b: Path) -> bool:
    """Whether two paths name one file: the same resolved path, or one file by a hard or symbolic link."""
    try:
        if a.exists() and b.exists() and os.path.samefile(a, b):
            return True
    except OSError:
        pass
    return a.resolve() == b.resolve()


def check_paths(input_path: str | os.PathLike, output_path: str | os.PathLike) -> None:
    """Refuse, before anything is read, scored or written: a missing input, an output that is a folder or
    that would overwrite the input (the same path, or the same file by a link), and a partial file that would."""
    inp, out = Path(input_path), Path(output_path)
    if not inp.is_file():
        raise RecordError(f"{inp}: no such file")
    if out.is_dir():
        raise IsADirectoryError(f"{out}: is a directory; --output is the score file to write (.jsonl or .parquet)")
    if out.parent.exists() and not out.parent.is_dir():
        raise NotADirectoryError(f"{out.parent}: is not a directory, so {out} cannot be written")
    for target, what in ((out, "output"), (partial_path(out), "partial file")):
        if _same_file(inp, target):
            raise RecordError(
                f"{out}: the {what} would overwrite the input file {inp}; write the scores to another file"
            )
    if partial_path(out).is_dir():
        raise IsADirectoryError(f"{partial_path(out)}: is a directory, not a partial score file")


# --- what identifies a judge ----------------------------------------------------------------------
def _class_path(obj) -> str:
    return f"{type(obj).__module__}.{type(obj).__qualname__}"


def _digest(obj) -> str:
    blob = json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def judge_fingerprint(judge) -> dict[str, str]:
    """What a judge's scores depend on, as ``{part: hash}``: a judge that says (``fingerprint()``: the
    trained judges, the sha256 of every file of their folder, judge.json with its format and calibration
    included); a routing judge, its options and its parts' fingerprints (``model/…``, ``expensive/…``,
    ``rules/…``); any other judge (``regex``, ``contains``, prompted), its class, name and configuration."""
    if isinstance(judge, CascadeJudge):
        found = {
            "class": _class_path(judge),
            "name": judge.name,
            "rules_accept": judge.rules_accept,
            "band": ",".join(f"{x:g}" for x in judge.band),
        }
        for part in ("rules", "model", "expensive"):
            sub = getattr(judge, part, None)
            if sub is not None:
                found.update({f"{part}/{key}": value for key, value in judge_fingerprint(sub).items()})
        return found
    own = getattr(judge, "fingerprint", None)
    if callable(own):
        return {str(key): str(value) for key, value in own().items()}
    config = (
        judge.config()
        if callable(getattr(judge, "config", None))
        else {"threshold": float(getattr(judge, "threshold", 0.5)), "temperature": getattr(judge, "temperature", None)}
    )
    return {"class": _class_path(judge), "name": judge.name, "config": _digest(config)}


# --- the partial file -----------------------------------------------------------------------------
def _header(judge_name: str, fingerprint: dict[str, str]) -> dict:
    return {"bertjudge": PARTIAL_FORMAT, "version": PARTIAL_VERSION, "judge": judge_name, "fingerprint": fingerprint}


def _changed_fields(stored: dict, raw: dict) -> list[str]:
    """The input fields of a stored output row that differ from the input row now."""
    added = {"id", "score", "verdict", "judge", "input_hash", *SCORING_FIELDS}
    keys = [key for key in dict.fromkeys([*raw, *stored]) if key not in added]
    return [key for key in keys if stored.get(key) != raw.get(key)]


def _load_partial(
    partial: Path, lines: list, located: list, judge_name: str, fingerprint: dict[str, str]
) -> dict[str, dict]:
    """Rows (by id) already scored by an interrupted run, from the complete lines of its partial file;
    refused if the judge, or any field of a row, changed since."""
    if not lines:
        return {}
    where, header = lines[0]
    if not (isinstance(header, dict) and header.get("bertjudge") == PARTIAL_FORMAT):
        raise RecordError(
            f"{where}: not a partial score file of this version of bertjudge (no header line); {RESTART_HINT}"
        )
    if header.get("version") != PARTIAL_VERSION or not isinstance(header.get("fingerprint"), dict):
        raise RecordError(
            f"{where}: a partial score file of another version of bertjudge "
            f"(version {header.get('version')!r}); {RESTART_HINT}"
        )
    old = header["fingerprint"]
    changed = [key for key in dict.fromkeys([*old, *fingerprint]) if old.get(key) != fingerprint.get(key)]
    if changed:
        who = (
            f"judge {header.get('judge')!r}, now {judge_name!r}"
            if header.get("judge") != judge_name
            else f"judge {judge_name!r}"
        )
        shown = ", ".join(changed[:6]) + (f" and {len(changed) - 6} more" if len(changed) > 6 else "")
        raise RecordError(
            f"{partial}: the judge changed since these rows were scored ({who}: {shown} differ); {RESTART_HINT}"
        )
    current = {rec["id"]: (place, raw, row_hash(rec)) for place, raw, rec in located}
    done, first = {}, {}
    for where, line in lines[1:]:
        if not (
            isinstance(line, dict)
            and isinstance(line.get("row"), dict)
            and isinstance(line["row"].get("id"), str)
            and isinstance(line.get("row_hash"), str)
        ):
            raise RecordError(f"{where}: not a scored row (the partial file is corrupted); {RESTART_HINT}")
        row = line["row"]
        rid = row["id"]
        if rid in first:
            raise RecordError(
                f"{where}: row {rid!r} is there twice (first at line {first[rid]}); the partial file "
                f"is corrupted; {RESTART_HINT}"
            )
        first[rid] = where.rpartition(":")[2]
        if rid not in current:
            raise RecordError(f"{where}: row {rid!r} is no longer in the input; {RESTART_HINT}")
        place, raw, digest = current[rid]
        if line["row_hash"] != digest:
            fields = _changed_fields(row, raw)
            what = f"field(s) {', '.join(map(repr, fields))} changed" if fields else "the row changed"
            raise RecordError(f"{where}: row {rid!r} was scored from other input ({place}: {what}); {RESTART_HINT}")
        if row.get("judge") != judge_name:
            raise RecordError(
                f"{where}: row {rid!r} was scored by judge {row.get('judge')!r}, not {judge_name!r}; {RESTART_HINT}"
            )
        done[rid] = row
    return done


class _PartialFile:
    """The partial file, open for appending: locked against a second writer, cut back to its complete
    lines, with its header written when new."""

    def __init__(self, path: Path, restart: bool):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
        self.handle = None
        try:
            if fcntl is not None:
                try:
                    fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    raise ScoringError(
                        f"{path}: another run is writing this partial file; wait for it or write to another output"
                    ) from None
            if restart:
                os.ftruncate(self.fd, 0)
        except BaseException:
            os.close(self.fd)
            raise

    def open_for_append(self, size: int, header: dict) -> None:
        os.ftruncate(self.fd, size)  # drop a last line cut by an interruption: its row is done again
        os.lseek(self.fd, 0, os.SEEK_END)
        self.handle = os.fdopen(self.fd, "a", encoding="utf-8")
        if size == 0:
            self.write([header])

    def write(self, objects: list[dict]) -> None:
        """Append whole lines, flushed and synced: an interruption leaves at most the last line cut."""
        self.handle.write("".join(json.dumps(obj, ensure_ascii=False) + "\n" for obj in objects))
        self.handle.flush()
        os.fsync(self.handle.fileno())

    def close(self) -> None:
        if self.handle is not None:
            self.handle.close()  # closes the descriptor, and so releases the lock
        else:
            os.close(self.fd)


# --- scoring ----------------------------------------------------------------------------------------
def error_text(err: BaseException) -> str:
    """One line for a failed row's ``error`` field: the exception's type and the first line of its message."""
    message = str(err).strip().splitlines()
    text = f"{type(err).__name__}: {message[0]}" if message else type(err).__name__
    return text if len(text) <= 500 else text[:497] + "..."


def _scores(judge, records: list[dict], batch_size: int) -> list[float]:
    scores = np.asarray(judge.score_records(records, batch_size=batch_size), dtype=float).reshape(-1)
    if len(scores) != len(records):
        raise RuntimeError(f"the judge returned {len(scores)} scores for {len(records)} rows")
    return [float(s) for s in scores]


def score_isolated(judge, records: list[dict], batch_size: int) -> list[float | BaseException]:
    """A score per record, or the exception that scoring it raised: a failing chunk is scored again a
    batch at a time, and a failing batch a row at a time, so that one bad row fails alone."""
    try:
        return _scores(judge, records, batch_size)
    except FATAL:
        raise
    except BaseException as err:  # noqa: BLE001 - e.g. Math-Verify's TimeoutException is a BaseException
        if len(records) == 1:
            return [err]
    size = batch_size if len(records) > batch_size else 1
    out: list[float | BaseException] = []
    for start in range(0, len(records), size):
        out += score_isolated(judge, records[start : start + size], batch_size)
    return out


def score_file(
    judge,
    input_path: str | Path,
    output_path: str | Path,
    batch_size: int = 32,
    chunk_size: int = 256,
    progress: bool = True,
    strict: bool = False,
    restart: bool = False,
) -> ScoreSummary:
    """Score every row of ``input_path`` with ``judge`` into ``output_path`` (JSONL or Parquet).

    A row the judge fails on is written with ``score`` and ``verdict`` null and an ``error``, and counted
    in the summary's ``failed``; with ``strict`` the first such row stops the run (``RowFailed``; the
    rows scored before it stay in the partial file). ``restart`` drops the partial file of an earlier
    run instead of resuming from it.
    """
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be a whole number of at least 1, got {batch_size!r}")
    if not isinstance(chunk_size, int) or chunk_size < 1:
        raise ValueError(f"chunk_size must be a whole number of at least 1, got {chunk_size!r}")
    output = Path(output_path)
    check_paths(input_path, output)
    located = read_located(input_path)  # validates the whole file before anything is written
    judge_name = judge.name
    fingerprint = judge_fingerprint(judge)
    partial = partial_path(output)
    file = _PartialFile(partial, restart)
    try:
        lines, size = read_appended(partial)
        done = _load_partial(partial, lines, located, judge_name, fingerprint)
        file.open_for_append(size, _header(judge_name, fingerprint))
        resumed = len(done)
        todo = [(where, raw, rec) for where, raw, rec in located if rec["id"] not in done]
        bar = None
        if progress:
            from tqdm.auto import tqdm

            bar = tqdm(total=len(located), initial=len(located) - len(todo), desc=f"judging {input_path}", unit="row")
        try:
            for start in range(0, len(todo), chunk_size):
                chunk = todo[start : start + chunk_size]
                results = score_isolated(judge, [rec for _, _, rec in chunk], batch_size)
                lines_out = []
                for (where, raw, rec), result in zip(chunk, results):
                    if isinstance(result, BaseException):
                        if strict:
                            file.write(lines_out)
                            raise RowFailed(
                                f"{where}: row {rec['id']!r} could not be scored by {judge_name} "
                                f"({error_text(result)}); stopped (--strict); the rows scored before "
                                f"it are kept in {partial}"
                            ) from result
                        fields = {"score": None, "verdict": None, "error": error_text(result)}
                    else:
                        fields = verdict_fields(result, judge.threshold)
                    row = {
                        **{k: v for k, v in raw.items() if k not in SCORING_FIELDS},
                        "id": rec["id"],
                        **fields,
                        "judge": judge_name,
                        "input_hash": input_hash(rec),
                    }
                    done[rec["id"]] = row
                    lines_out.append({"row_hash": row_hash(rec), "row": row})
                file.write(lines_out)
                if bar is not None:
                    bar.update(len(chunk))
        finally:
            if bar is not None:
                bar.close()
        write_records(output, [done[rec["id"]] for _, _, rec in located])
        partial.unlink()
    finally:
        file.close()
    failures = [
        (where, rec["id"], done[rec["id"]]["error"])
        for where, _, rec in located
        if done[rec["id"]].get("error") is not None and done[rec["id"]].get("score") is None
    ]
    first = f"{failures[0][0]}: row {failures[0][1]!r}: {failures[0][2]}" if failures else None
    return ScoreSummary(output, len(located), resumed, len(failures), first)
