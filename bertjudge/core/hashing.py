"""The one file hasher: the sha256 of a file, the git blob id the Hugging Face Hub names a non-LFS file by, and the
files of a folder with their sha256. Every place that hashes a file calls these (the zoo's pulls and manifests,
Hub snapshot checks, a judge's fingerprint, the provenance of an imported data file).

Hashes of data rather than files stay where the data is: a record's id and row hash (``core.records``), a judge's
``config()`` digest (``judges.interface.config_digest``); they hash canonical JSON, not bytes on disk."""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

SHA256_HEX = re.compile(r"^[0-9a-f]{64}$")  # a sha256 digest (an LFS file's blob name on the Hub)
SHA1_HEX = re.compile(r"^[0-9a-f]{40}$")  # a git object id: a commit, or a non-LFS file's blob name on the Hub
BLOCK = 1 << 20


def file_sha256(path: str | os.PathLike) -> str:
    """The sha256 hex digest of a file's bytes, read in blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(BLOCK), b""):
            digest.update(block)
    return digest.hexdigest()


def git_blob_sha1(path: str | os.PathLike) -> str:
    """The git blob id of a file (``git hash-object``): the id the Hub gives a file kept outside LFS."""
    digest = hashlib.sha1(f"blob {Path(path).stat().st_size}\0".encode())
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(BLOCK), b""):
            digest.update(block)
    return digest.hexdigest()


def folder_files(folder: str | os.PathLike) -> list[str]:
    """The relative paths (posix) of the files of a folder, sorted; hidden files and folders left out."""
    folder = Path(folder)
    return sorted(
        p.relative_to(folder).as_posix()
        for p in folder.rglob("*")
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(folder).parts)
    )


def hash_folder(folder: str | os.PathLike, files: list[str] | None = None) -> dict[str, str]:
    """``{relative path: sha256}`` of ``files`` of ``folder`` (default: all of them, ``folder_files``)."""
    return {rel: file_sha256(Path(folder) / rel) for rel in (folder_files(folder) if files is None else files)}
