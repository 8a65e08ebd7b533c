"""What every command shares: one-line errors with the right exit code, and reading data sources."""

from __future__ import annotations

from bertjudge.core.records import RecordError
from bertjudge.data.sources import load_source


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
