"""``judge.json``: what an exported judge folder says about itself (its class, input format,
threshold, calibration, provenance). The one reader and writer of that file; and the names of the files a
judge folder is made of (``JUDGE_FOLDER_PATTERNS``: what a Hub download or a zoo pull takes, nothing else)."""

from __future__ import annotations

import json
import math
import os
from fnmatch import fnmatchcase
from pathlib import Path

from bertjudge.core.errors import BertJudgeError
from bertjudge.core.formats import FormatError, JudgeFormat

JUDGE_FILE = "judge.json"
MODEL_CONFIG = "config.json"
MODEL_CARD = "README.md"
WEIGHTS = "model.safetensors"
WEIGHTS_INDEX = "model.safetensors.index.json"
WEIGHT_SHARDS = "model-*-of-*.safetensors"  # the shards WEIGHTS_INDEX names (save_pretrained's names)
ERROR_HEAD_WEIGHTS = "error_head.safetensors"  # an encoder judge's error-type head, beside WEIGHTS
# files a Hugging Face tokenizer builds its vocabulary from (one is needed; vocab.json goes with merges.txt)
TOKENIZER_VOCABULARIES = (
    "tokenizer.json",
    "vocab.txt",
    "vocab.json",
    "spiece.model",
    "sentencepiece.bpe.model",
    "tokenizer.model",
    "spm.model",
    "sentencepiece.model",
)
TOKENIZER_FILES = (
    "tokenizer_config.json",
    "special_tokens_map.json",
    "added_tokens.json",
    "merges.txt",
    "chat_template.jinja",
    "chat_template.json",
    "additional_chat_templates/*.jinja",
)
# every file an exported judge folder is made of (fnmatch patterns, relative to the folder, as
# huggingface_hub's allow_patterns): what the judges' export writes and check_export_folder reads; a Hub
# repository's other files (.gitattributes, images, logs, pickled weights) are neither downloaded nor checked
JUDGE_FOLDER_PATTERNS = (
    JUDGE_FILE,
    MODEL_CONFIG,
    "generation_config.json",
    WEIGHTS,
    WEIGHTS_INDEX,
    WEIGHT_SHARDS,
    ERROR_HEAD_WEIGHTS,
    *TOKENIZER_FILES,
    *TOKENIZER_VOCABULARIES,
    MODEL_CARD,
)
MODEL_KEYS = ("class", "format", "threshold", "temperature")  # what a trained judge's judge.json must say


class JudgeFileError(BertJudgeError, ValueError):
    """A judge folder that is incomplete or inconsistent: judge.json missing, unreadable or incomplete, or
    its config, tokenizer or weights files missing or damaged. The message names the file."""


def judge_folder_files(paths, patterns: tuple[str, ...] = JUDGE_FOLDER_PATTERNS) -> list[str]:
    """The relative paths among ``paths`` that belong to a judge folder (match one of ``patterns``, case-sensitive,
    as huggingface_hub's ``allow_patterns`` match them), in their order."""
    return [path for path in paths if any(fnmatchcase(path, pattern) for pattern in patterns)]


def has_judge_file(folder: str | os.PathLike) -> bool:
    return (Path(folder) / JUDGE_FILE).is_file()


def read_json_object(path: Path, what: str) -> dict:
    """The JSON object in ``path`` (``what`` it holds, for the message); a missing file, bad JSON or
    another JSON value is a ``JudgeFileError`` naming the file."""
    if not path.is_file():
        raise JudgeFileError(f"{path}: missing ({what})")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise JudgeFileError(f"{path}: not valid JSON ({err}); the file is truncated or damaged") from None
    if not isinstance(data, dict):
        raise JudgeFileError(f"{path}: expected a JSON object ({what})")
    return data


def read_judge_config(folder: str | os.PathLike, required: tuple[str, ...] = ("class",)) -> dict:
    """The parsed judge.json of ``folder``; a missing file, bad JSON or a missing ``required`` key is
    a ``JudgeFileError`` naming the file."""
    path = Path(folder) / JUDGE_FILE
    if not path.is_file():
        raise JudgeFileError(f"{folder}: not a judge folder (no {JUDGE_FILE})")
    config = read_json_object(path, "the judge's configuration")
    missing = [key for key in required if key not in config]
    if missing:
        raise JudgeFileError(f"{path}: missing {', '.join(repr(k) for k in missing)}")
    return config


def read_model_config(folder: str | os.PathLike) -> tuple[dict, JudgeFormat]:
    """judge.json of a trained judge's folder, checked: ``class``, ``format`` (a valid input format),
    ``threshold`` (a number in [0, 1]), ``temperature`` (a positive number), and ``bias`` and ``num_labels``
    when given. Returns the config and its format; any problem is a ``JudgeFileError`` naming judge.json."""
    config = read_judge_config(folder, required=MODEL_KEYS)
    path = Path(folder) / JUDGE_FILE
    if not isinstance(config["format"], dict):
        raise JudgeFileError(
            f"{path}: 'format' must be an object of format fields, got {type(config['format']).__name__}"
        )
    try:
        fmt = JudgeFormat.from_dict(config["format"])
    except (FormatError, TypeError, ValueError) as err:
        raise JudgeFileError(f"{path}: bad 'format' ({err})") from None

    def number(key: str) -> float:
        value = config[key]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise JudgeFileError(f"{path}: {key!r} must be a finite number, got {value!r}")
        return float(value)

    if not 0.0 <= number("threshold") <= 1.0:
        raise JudgeFileError(f"{path}: 'threshold' must be between 0 and 1, got {config['threshold']!r}")
    if number("temperature") <= 0:
        raise JudgeFileError(f"{path}: 'temperature' must be positive, got {config['temperature']!r}")
    if "bias" in config:
        number("bias")
    if config.get("num_labels", 1) not in (1, 2) or isinstance(config.get("num_labels"), bool):
        raise JudgeFileError(f"{path}: 'num_labels' must be 1 or 2, got {config['num_labels']!r}")
    return config, fmt


def write_judge_config(folder: str | os.PathLike, config: dict) -> Path:
    """Write ``config`` as ``folder``/judge.json (the folder is created)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / JUDGE_FILE
    tmp = path.with_name(f".{JUDGE_FILE}.tmp")
    tmp.write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path
