"""bertjudge's cache (``$BERTJUDGE_CACHE``, default ``~/.cache/bertjudge``) and the one manifest format.

What a download leaves is kept in two places, each written by one tool: the Hub's files in the Hugging Face cache
(``huggingface_hub.snapshot_download``, shared with every other Hugging Face library), and bertjudge's own records
here: ``<name>/<revision or files digest>/`` (a zoo entry pulled as a judge folder) and
``hub/<org>--<name>/<commit>.manifest.json`` (the files of a Hub snapshot the Hub gave no hash for).

A manifest is a JSON object: ``source`` (the URI the files came from, ``bertjudge.zoo.uri``), ``files``
(``{relative path: sha256}``, trusted on first download) and, for a zoo pull, what the pull did (``name``,
``verified``: the files the registry gave a hash for, ``judge_json_written``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path


def cache_root() -> Path:
    return Path(os.environ.get("BERTJUDGE_CACHE") or Path.home() / ".cache" / "bertjudge")


def read_json(path: Path) -> dict:
    """The JSON object in ``path`` (a manifest, a checkpoint's config); ``{}`` when there is no such file."""
    return json.loads(path.read_text()) if path.is_file() else {}


def write_manifest(path: Path, source: str, files: dict[str, str], **extra) -> None:
    """Write a manifest atomically (the folder is created)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps({"source": source, "files": files, **extra}, indent=2) + "\n")
    os.replace(tmp, path)


def differences(found: dict[str, str], expected: dict[str, str]) -> list[str]:
    """What differs between the sha256 of the files ``found`` and those ``expected`` (a manifest's, a registry's),
    one line each; ``[]`` when they are the same files with the same bytes."""
    problems = [f"{rel}: missing" for rel in expected if rel not in found]
    problems += [
        f"{rel}: sha256 {found[rel]} != expected {digest}"
        for rel, digest in expected.items()
        if rel in found and found[rel] != digest
    ]
    return problems + [f"{rel}: not in the manifest" for rel in found if rel not in expected]
