"""What every command shares: one-line errors with the right exit code, reading data sources, and checking
outputs before any work (an output never overwrites an input)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from bertjudge.core.records import RecordError, is_record_file
from bertjudge.data.sources import load_source, source_paths


class CommandError(Exception):
    """A one-line error for the user. ``usage``: the command was called wrongly (exit 2); otherwise
    something failed while it ran (exit 1)."""

    def __init__(self, message: str, usage: bool = False):
        super().__init__(message)
        self.exit_code = 2 if usage else 1


def load_records(specs: list[str]) -> list[dict]:
    """Every record of the data sources (files or ``bertjudge.data.sources`` specs), in order; a bad
    source or row is a usage error naming the file and line."""
    records = []
    for spec in specs:
        try:
            records.extend(load_source(spec))
        except (RecordError, ValueError, FileNotFoundError) as e:
            raise CommandError(str(e), usage=True) from e
    return records


def at_least(**flags: tuple[float | None, float]) -> None:
    """Refuse a flag below its minimum: ``at_least(batch_size=(args.batch_size, 1))`` → ``--batch-size must be
    at least 1`` (usage). None (a flag not given) passes."""
    for name, (value, minimum) in flags.items():
        if value is not None and value < minimum:
            raise CommandError(f"--{name.replace('_', '-')} must be at least {minimum:g} (got {value:g})", usage=True)


def input_files(inputs: Iterable[str | os.PathLike]) -> set[Path]:
    """The files (resolved) that inputs read: files, the record files of folders, the paths of source specs."""
    files = set()
    for item in inputs:
        for path in source_paths(item) if isinstance(item, str) else [Path(item)]:
            if path.is_dir():
                files.update(p.resolve() for p in path.iterdir() if is_record_file(p))
            else:
                files.add(path.resolve())
    return files


def check_output(
    output: str | os.PathLike, inputs: Iterable[str | os.PathLike] = (), folder: bool = False, flag: str = "--output"
) -> Path:
    """Refuse, before any work (usage errors), an output that cannot be written or would overwrite an input:
    a file output that is an existing folder or one of ``inputs`` (files, folders or source specs), a folder
    output that is an existing file or one of the input files."""
    out = Path(output)
    if folder:
        if out.exists() and not out.is_dir():
            raise CommandError(f"{flag} {out}: exists and is not a folder", usage=True)
    elif out.is_dir():
        raise CommandError(f"{flag} {out}: is a folder; give a file to write", usage=True)
    else:
        check_writes([out], inputs, flag)
    return out


def check_writes(
    outputs: Iterable[str | os.PathLike], inputs: Iterable[str | os.PathLike], flag: str = "--output"
) -> None:
    """Refuse (usage) writing any of ``outputs`` when it is one of the files ``inputs`` read, or a folder."""
    read = input_files(inputs)
    for out in map(Path, outputs):
        if out.resolve() in read:
            raise CommandError(f"{flag}: writing {out} would overwrite an input file; write elsewhere", usage=True)
        if out.is_dir():
            raise CommandError(f"{flag}: cannot write {out}: a folder is in the way", usage=True)


def add_trust_flag(parser) -> None:
    """``--trust-remote-code``: load judge folders whose judge.json names a class that is not a registered kind."""
    parser.add_argument(
        "--trust-remote-code",
        action="store_true",
        help="load a judge folder whose judge.json names a judge class that bertjudge does not register (its "
        "module is imported, so its code runs): only for folders you trust",
    )
