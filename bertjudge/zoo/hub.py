"""The Hugging Face Hub: the one download-and-verify path (``download``), used by ``Judge.load("hf://org/name")`` and
by ``zoo pull`` of an ``hf://`` entry, with the one offline check (``offline_reason``).

A snapshot is fetched with ``huggingface_hub.snapshot_download`` into the Hugging Face cache (``HF_HUB_CACHE``):
only the files of a judge folder (``allow_patterns``, default ``core.judge_file.JUDGE_FOLDER_PATTERNS``; a
repository's other files, such as .gitattributes, images or a training log, are neither downloaded nor checked),
from the cache alone when offline. Its files are then checked at every download: against the hashes the Hub names
them by (a cached file is a link to ``blobs/<sha256>`` for LFS files, ``blobs/<git blob sha1>`` for the others; the
cached tree listing gives the same ids) and, where no such hash is at hand, against the sha256 recorded at the first
download (a manifest in bertjudge's cache, ``zoo.cache``).
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from huggingface_hub import constants, get_cached_repo_tree, snapshot_download
from huggingface_hub.errors import (
    CachedRepoTreeNotFoundError,
    GatedRepoError,
    HfHubHTTPError,
    IncompleteSnapshotError,
    LocalEntryNotFoundError,
    RepositoryNotFoundError,
    RevisionNotFoundError,
)

from bertjudge.core.errors import BertJudgeError
from bertjudge.core.hashing import SHA1_HEX, SHA256_HEX, file_sha256, folder_files, git_blob_sha1
from bertjudge.core.judge_file import JUDGE_FOLDER_PATTERNS, JudgeFileError, judge_folder_files
from bertjudge.zoo.cache import cache_root, differences, read_json, write_manifest
from bertjudge.zoo.uri import ModelURI


class NotCachedError(BertJudgeError, FileNotFoundError):
    """Offline (or the Hub unreachable) and the revision is not in the local Hugging Face cache."""


@dataclass(frozen=True)
class Snapshot:
    """A checked snapshot: its folder in the Hugging Face cache, the repository, the revision asked for and the
    commit it resolved to."""

    folder: Path
    repo: str
    revision: str
    commit: str

    def provenance(self) -> dict:
        """What a judge records of where it came from (``judge.provenance["hub"]``)."""
        return {"repo": self.repo, "revision": self.revision, "commit": self.commit}


def hub_reachable(timeout: float = 3.0) -> bool:
    """A fast check (one TCP connection) that the Hugging Face Hub endpoint answers."""
    host = urlsplit(constants.ENDPOINT)
    try:
        socket.create_connection((host.hostname, host.port or (443 if host.scheme == "https" else 80)), timeout).close()
        return True
    except OSError:
        return False


def offline_reason() -> str | None:
    """Why the Hub is not to be asked (``HF_HUB_OFFLINE`` set, as huggingface_hub reads it, or its endpoint not
    answering), or None when it is online: the one offline check of downloads and uploads."""
    if constants.is_offline_mode():
        return "HF_HUB_OFFLINE is set"
    if not hub_reachable():
        return f"the Hugging Face Hub ({constants.ENDPOINT}) is unreachable from this machine"
    return None


def download(uri: ModelURI, patterns: tuple[str, ...] = JUDGE_FOLDER_PATTERNS, token: str | None = None) -> Snapshot:
    """The checked snapshot of ``hf://org/name[@revision]`` (default ``main``): the files matching ``patterns``,
    downloaded, or found in the Hugging Face cache when offline, then checked (``check_files``). A repository or
    revision the Hub (or, offline, the cache) does not have is a ``FileNotFoundError``, a changed file a
    ``JudgeFileError``; each one line."""
    repo, revision = uri.location, uri.revision or "main"
    shown = f"hf://{repo}@{revision}"
    why = offline_reason()
    try:
        folder = snapshot_download(
            repo, revision=revision, allow_patterns=list(patterns), local_files_only=why is not None, token=token
        )
    except RevisionNotFoundError:
        raise FileNotFoundError(f"{shown}: the Hub repository has no revision {revision!r}") from None
    except (RepositoryNotFoundError, GatedRepoError):
        raise FileNotFoundError(
            f"{shown}: no such Hub repository (or it is private or gated and no token was given)"
        ) from None
    except IncompleteSnapshotError as err:
        raise JudgeFileError(f"{shown}: {str(err).split(' Re-run')[0]} Load it again with the network on") from None
    except LocalEntryNotFoundError:
        raise NotCachedError(
            f"{shown}: no revision {revision!r} of {repo} in the local Hugging Face cache ({constants.HF_HUB_CACHE}), "
            f"and {why or 'the Hub could not be reached'}"
        ) from None
    except HfHubHTTPError as err:  # the Hub down, a refused token
        raise FileNotFoundError(f"{shown}: {' '.join(str(err).split())}") from None
    snapshot = Snapshot(Path(folder), repo, revision, Path(folder).name)
    check_files(snapshot, patterns)
    return snapshot


def hub_hashes(snapshot: Snapshot, files: list[str]) -> dict[str, tuple[str, str]]:
    """``{file: (algorithm, digest)}`` for those of ``files`` the Hub gives a hash: a cached file links to its blob,
    named by the file's sha256 (LFS) or git blob id (the others). The cached tree listing, when there is one, must
    name the same git blob id (a link switched to another blob is caught)."""
    try:
        listed = {f.path: f.blob_id for f in get_cached_repo_tree(snapshot.repo, revision=snapshot.commit)}
    except CachedRepoTreeNotFoundError:
        listed = {}
    found = {}
    for rel in files:
        path = snapshot.folder / rel
        blob = Path(os.path.realpath(path)).name if path.is_symlink() else ""
        if SHA256_HEX.match(blob):
            found[rel] = ("sha256", blob)
        elif SHA1_HEX.match(blob):
            if rel in listed and listed[rel] != blob:
                raise JudgeFileError(
                    f"{path}: links to blob {blob}, but the Hub lists {listed[rel]} for {snapshot.repo}@"
                    f"{snapshot.commit}; the cache was changed: delete the snapshot and load again"
                )
            found[rel] = ("git-sha1", blob)
    return found


def manifest_path(snapshot: Snapshot) -> Path:
    """Where the sha256 of a snapshot's files without a Hub hash are recorded: in bertjudge's cache."""
    return cache_root() / "hub" / snapshot.repo.replace("/", "--") / f"{snapshot.commit}.manifest.json"


def check_files(snapshot: Snapshot, patterns: tuple[str, ...] = JUDGE_FOLDER_PATTERNS) -> None:
    """Refuse a snapshot whose files matching ``patterns`` differ from the Hub's hashes (``hub_hashes``) or, for files
    without one, from the sha256 recorded at the first download (the manifest is written then)."""
    files = judge_folder_files(folder_files(snapshot.folder), patterns)
    known = hub_hashes(snapshot, files)
    for rel, (algorithm, expected) in known.items():
        path = snapshot.folder / rel
        got = file_sha256(path) if algorithm == "sha256" else git_blob_sha1(path)
        if got != expected:
            raise JudgeFileError(
                f"{path}: {algorithm} {got} differs from the Hub's {expected} for {snapshot.repo}@"
                f"{snapshot.commit}; the file was changed after download: delete the snapshot and load again"
            )
    rest = {rel: file_sha256(snapshot.folder / rel) for rel in files if rel not in known}
    manifest = manifest_path(snapshot)
    recorded = read_json(manifest).get("files")
    if recorded is None:
        if rest:
            try:
                write_manifest(manifest, f"hf://{snapshot.repo}@{snapshot.commit}", rest)
            except OSError:  # a read-only cache: nothing recorded, nothing to compare later
                pass
        return
    problems = differences(rest, recorded)
    if problems:
        raise JudgeFileError(
            f"{snapshot.folder}: the files differ from those of the first download of hf://{snapshot.repo}@"
            f"{snapshot.commit} ({problems[0]}; sha256 recorded in {manifest}); delete the snapshot and load again"
        )
