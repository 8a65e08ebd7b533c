"""``judge.json``: what an exported judge folder says about itself (its class, input format,
threshold, calibration, provenance). The one reader and writer of that file."""

from __future__ import annotations

import json
import os
from pathlib import Path

JUDGE_FILE = "judge.json"


class JudgeFileError(ValueError):
    """A judge folder whose judge.json is missing, unreadable or incomplete."""


def has_judge_file(folder: str | os.PathLike) -> bool:
    return (Path(folder) / JUDGE_FILE).is_file()


def read_judge_config(folder: str | os.PathLike, required: tuple[str, ...] = ("class",)) -> dict:
    """The parsed judge.json of ``folder``; a missing file, bad JSON or a missing ``required`` key is
    a ``JudgeFileError`` naming the file."""
    path = Path(folder) / JUDGE_FILE
    if not path.is_file():
        raise JudgeFileError(f"{folder}: not a judge folder (no {JUDGE_FILE})")
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise JudgeFileError(f"{path}: not valid JSON ({e})") from None
    if not isinstance(config, dict):
        raise JudgeFileError(f"{path}: expected a JSON object")
    missing = [key for key in required if key not in config]
    if missing:
        raise JudgeFileError(f"{path}: missing {', '.join(repr(k) for k in missing)}")
    return config


def write_judge_config(folder: str | os.PathLike, config: dict) -> Path:
    """Write ``config`` as ``folder``/judge.json (the folder is created)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / JUDGE_FILE
    tmp = path.with_name(f".{JUDGE_FILE}.tmp")
    tmp.write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path
