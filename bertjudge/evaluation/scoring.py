"""Score files (``python -m bertjudge judge``), atomically and resumably.

Each output row is the input row (every field kept) plus ``id`` (when it had none), ``score``
(calibrated P(correct)), ``verdict`` (score >= the judge's threshold), ``judge`` and
``input_hash`` (and ``error_type``, ``error_type_prob`` from a judge with an error-type head); a row the
judge could not give a verdict for has ``score`` and ``verdict`` null and
``unparsed: true``, and a row the judge failed on (an exception) has them null and an ``error``
(the exception's type and message) instead of stopping the run.

Scored rows are appended to ``OUT.partial.jsonl`` (``core.resumable.PartialFile``) as they are done; a
rerun after an interruption (Ctrl-C, ``kill -9``) skips them, and the final file replaces the partial
one in one rename. The partial file's header holds the judge's fingerprint (``judge_fingerprint``: the
sha256 of its folder's files, its calibration and format), and each row the hash of the whole input row
(``records.row_hash``): a rerun with another judge or with an edited row is refused (``restart=True``
starts over).

The input is streamed twice (once to validate every row before anything is scored, once to score it) and
the output is streamed from the partial file, so memory does not grow with the file: a million-row
JSONL is judged in bounded memory. (A Parquet output is built in memory: Arrow needs its columns whole.)
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bertjudge.core.errors import BertJudgeError, JudgeUnavailable
from bertjudge.core.records import RecordError, check_output_suffix, input_hash, iter_located, row_hash
from bertjudge.core.resumable import PartialFile, changed_keys, partial_path, shown_keys
from bertjudge.judges.interface import BaseJudge, verdict_fields

__all__ = [
    "RowFailed",
    "ScoreSummary",
    "check_paths",
    "details_isolated",
    "error_text",
    "judge_fingerprint",
    "partial_path",
    "score_file",
    "score_isolated",
]

SCORING_FIELDS = ("unparsed", "error", "error_type", "error_type_prob")  # written by scoring: never kept from input
# stop the run (a judge that cannot answer at all: a server down); any other exception fails a row
FATAL = (KeyboardInterrupt, SystemExit, GeneratorExit, JudgeUnavailable)
RESTART_HINT = "rerun with --restart to score every row again"


class RowFailed(BertJudgeError, RuntimeError):
    """``strict=True``: a row the judge could not score stopped the run (the partial file is kept)."""


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
        raise IsADirectoryError(f"{out}: is a directory; --output is the score file to write (.jsonl, .parquet, .csv)")
    check_output_suffix(out)
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
def judge_fingerprint(judge: BaseJudge) -> dict[str, str]:
    """What a judge's scores depend on, as ``{part: hash}`` (its ``fingerprint()``, keys and values as strings): a
    trained judge, the sha256 of every file of its folder (judge.json with its format and calibration included); a
    routing judge, its options and its parts' fingerprints (``model/…``, ``expensive/…``, ``rules/…``), a
    by-category judge its judges' (``default/…``, ``<category>/…``); any other judge (``regex``, ``contains``,
    prompted), its class, name and configuration."""
    return {str(key): str(value) for key, value in judge.fingerprint().items()}


def precision_change(stored: dict[str, str], now: dict[str, str], changed: list[str]) -> str:
    """For a refusal to resume: the precision the rows were scored in and the judge's now, where that changed
    (``; scored in fp32, now bf16: --precision fp32 resumes them`` when nothing else did), else ''."""
    keys = [key for key in changed if key == "precision" or key.endswith("/precision")]
    pairs = sorted({(str(stored.get(key)), str(now.get(key))) for key in keys})
    if not pairs:
        return ""
    said = ", ".join(f"scored in {before}, now {after}" for before, after in pairs)
    if len(pairs) == 1 and len(keys) == len(changed) and stored.get(keys[0]) is not None:
        return f"; {said}: --precision {pairs[0][0]} resumes them"
    return f"; {said}"


# --- resuming ----------------------------------------------------------------------------------------
def _changed_fields(stored: dict, raw: dict) -> list[str]:
    """The input fields of a stored output row that differ from the input row now."""
    added = {"id", "score", "verdict", "judge", "input_hash", *SCORING_FIELDS}
    if raw.get("category") is None:  # the category the judge inferred, written beside the row's own fields
        added.add("category")
    keys = [key for key in dict.fromkeys([*raw, *stored]) if key not in added]
    return [key for key in keys if stored.get(key) != raw.get(key)]


def _check_judge(partial: PartialFile, judge_name: str, fingerprint: dict[str, str]) -> None:
    """Refuse to resume rows scored by another judge, or by this one before a change."""
    stored = partial.stored_settings
    if stored is None:
        return
    changed = changed_keys(stored.get("fingerprint") or {}, fingerprint)
    if changed:
        before = stored.get("judge")
        who = f"judge {before!r}, now {judge_name!r}" if before != judge_name else f"judge {judge_name!r}"
        raise partial.refuse(
            str(partial.path),
            f"the judge changed since these rows were scored ({who}: {shown_keys(changed)} differ)"
            + precision_change(stored.get("fingerprint") or {}, fingerprint, changed),
        )


def _check_entry(partial: PartialFile, where: str, entry: dict, current, ids: set, judge_name: str) -> None:
    """An entry of the partial file must be the input row at the same place, unchanged."""
    row = entry["row"]
    rid = row["id"]
    if rid not in ids:
        raise partial.refuse(where, f"row {rid!r} is no longer in the input")
    place, raw, rec = current if current is not None else (None, None, None)
    if rec is None or rec["id"] != rid:
        raise partial.refuse(where, f"row {rid!r} is not at the same place in the input (its rows were reordered)")
    if entry["row_hash"] != row_hash(rec):
        fields = _changed_fields(row, raw)
        what = f"field(s) {', '.join(map(repr, fields))} changed" if fields else "the row changed"
        raise partial.refuse(where, f"row {rid!r} was scored from other input ({place}: {what})")
    if row.get("judge") != judge_name:
        raise partial.refuse(where, f"row {rid!r} was scored by judge {row.get('judge')!r}, not {judge_name!r}")


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


def _details(judge, records: list[dict], batch_size: int) -> list[dict]:
    rows = judge.details(records, batch_size=batch_size)
    if len(rows) != len(records):
        raise RuntimeError(f"the judge returned {len(rows)} details rows for {len(records)} rows")
    return list(rows)


def score_isolated(judge, records: list[dict], batch_size: int) -> list[float | BaseException]:
    """A score per record, or the exception that scoring it raised: a failing chunk is scored again a
    batch at a time, and a failing batch a row at a time, so that one bad row fails alone."""
    return _isolated(lambda chunk: _scores(judge, chunk, batch_size), records, batch_size)


def details_isolated(judge, records: list[dict], batch_size: int) -> list[dict | BaseException]:
    """``score_isolated`` for the judge's ``details()``: a details row per record, or the exception it raised."""
    return _isolated(lambda chunk: _details(judge, chunk, batch_size), records, batch_size)


def _isolated(call, records: list[dict], batch_size: int) -> list:
    """``call(records)`` (one result per record); where it raises, the chunk again a batch at a time, and a
    failing batch a row at a time: a row's result, or the exception its row alone raised."""
    try:
        return call(records)
    except FATAL:
        raise
    except BaseException as err:  # noqa: BLE001 - e.g. Math-Verify's TimeoutException is a BaseException
        if len(records) == 1:
            return [err]
    size = batch_size if len(records) > batch_size else 1
    out: list = []
    for start in range(0, len(records), size):
        out += _isolated(call, records[start : start + size], batch_size)
    return out


def _scan(path: str | os.PathLike) -> set[str]:
    """Validate every row of the input (a bad row or a duplicate id is refused before anything is
    scored); the ids of its rows."""
    ids = {rec["id"] for _, _, rec in iter_located(path)}
    if not ids:
        raise RecordError(f"{Path(path)}: empty file, no records")
    return ids


def _chunks(rows: Iterator, size: int) -> Iterator[list]:
    while chunk := list(itertools.islice(rows, size)):
        yield chunk


@dataclass
class _Failures:
    count: int = 0
    first: str | None = None

    def add(self, where: str, row: dict) -> None:
        if row.get("error") is not None and row.get("score") is None:
            self.count += 1
            self.first = self.first or f"{where}: row {row['id']!r}: {row['error']}"


def _error_types(judge, chunk: list, results: list, batch_size: int) -> list[dict]:
    """Per row of a scored chunk, ``error_type`` and ``error_type_prob`` from a judge with an error-type
    head (agreeing with the verdicts just written), else nothing; rows that failed get nothing."""
    scored = [i for i, r in enumerate(results) if not isinstance(r, BaseException) and not np.isnan(r)]
    if not scored:
        return [{}] * len(chunk)
    verdicts = [results[i] >= judge.threshold for i in scored]
    types = judge.error_types([chunk[i][2] for i in scored], batch_size=batch_size, verdicts=verdicts)
    out: list[dict] = [{}] * len(chunk)
    for i, kind in zip(scored, types or []):
        out[i] = kind
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
    ids = _scan(input_path)
    judge_name = judge.name
    fingerprint = judge_fingerprint(judge)
    failures, resumed = _Failures(), 0
    with PartialFile(
        output, "score", {"judge": judge_name, "fingerprint": fingerprint}, restart, RESTART_HINT
    ) as partial:
        _check_judge(partial, judge_name, fingerprint)
        rows = iter_located(input_path)
        for where, entry in partial.entries():
            current = next(rows, None)
            _check_entry(partial, where, entry, current, ids, judge_name)
            failures.add(current[0], entry["row"])
            resumed += 1
        bar = None
        if progress:
            from tqdm.auto import tqdm

            bar = tqdm(total=len(ids), initial=resumed, desc=f"judging {input_path}", unit="row")
        try:
            for chunk in _chunks(rows, chunk_size):
                results = score_isolated(judge, [rec for _, _, rec in chunk], batch_size)
                types = _error_types(judge, chunk, results, batch_size)
                entries = []
                for (where, raw, rec), result, kind in zip(chunk, results, types):
                    if isinstance(result, BaseException):
                        if strict:
                            partial.append(entries)
                            raise RowFailed(
                                f"{where}: row {rec['id']!r} could not be scored by {judge_name} "
                                f"({error_text(result)}); stopped (--strict); the rows scored before "
                                f"it are kept in {partial.path}"
                            ) from result
                        fields = {"score": None, "verdict": None, "error": error_text(result)}
                    else:
                        fields = {**verdict_fields(result, judge.threshold), **kind}
                    row = {
                        **{k: v for k, v in raw.items() if k not in SCORING_FIELDS},
                        "id": rec["id"],
                        "category": rec["category"],  # the one the judge read: the row's, or inferred from it
                        **fields,
                        "judge": judge_name,
                        "input_hash": input_hash(rec),
                    }
                    failures.add(where, row)
                    entries.append((row_hash(rec), row))
                partial.append(entries)
                if bar is not None:
                    bar.update(len(chunk))
        finally:
            if bar is not None:
                bar.close()
        partial.commit()
    return ScoreSummary(output, len(ids), resumed, failures.count, failures.first)
