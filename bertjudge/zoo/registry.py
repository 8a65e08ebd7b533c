"""The judge zoo: a hand-reviewed registry (``bertjudge/zoo/registry.yaml``), pulls and verification.

The command is ``python -m bertjudge zoo list|show|pull|publish|verify|readme`` (``bertjudge.cli.zoo``);
``publish`` and ``readme``, which measure judges or read the measurements, are in ``bertjudge.evaluation.publish``.

- ``pull NAME`` downloads an entry into the cache (``$BERTJUDGE_CACHE``, default
  ``~/.cache/bertjudge``): from the Hub only the files of a judge folder (``pull_patterns``: a repository's
  other files, such as .gitattributes, images or logs, are ignored), refuses pickled weights, never
  downloads or runs code unless asked,
  checks every sha256 the registry lists, records the hashes of the rest (trust on first pull), and
  writes ``judge.json`` from the entry when the checkpoint has none (the authors' checkpoints), so
  that ``Judge.load(NAME)`` works.
- ``publish FOLDER`` measures an exported judge (``bertjudge.evaluation.bench``), adds the measured section to
  its model card, copies it to a zoo location (a folder, or the Hugging Face Hub) and appends its
  entry, with the sha256 of every file, to the registry.
- ``verify NAME`` re-hashes a pulled entry.
- ``readme`` regenerates ``zoo/README.md`` from the registry and ``benchmarks/results/*.csv``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import socket
import sys
import tempfile
from pathlib import Path
from urllib.parse import unquote, urlsplit

import yaml

from bertjudge.core.errors import BertJudgeError
from bertjudge.core.formats import FormatError, JudgeFormat
from bertjudge.core.judge_file import JUDGE_FOLDER_PATTERNS, judge_folder_files
from bertjudge.core.version import __version__

DEFAULT_REGISTRY = Path(__file__).with_name("registry.yaml")  # package data
ARCHITECTURES_FILE = Path(__file__).with_name("architectures.yaml")  # package data: the configs bench costs
DEFAULT_README = Path("zoo") / "README.md"  # in the project checkout
JUDGE_FILE = "judge.json"
UNSAFE_SUFFIXES = (".bin", ".pt", ".pth", ".pkl", ".pickle", ".ckpt")
NAME_RE = re.compile(r"^[a-z0-9][a-z0-9_-]*(\.[a-z0-9][a-z0-9_-]*)+$")
SHA256_RE = re.compile(r"^[0-9a-f]{64}$")
COMMIT_RE = re.compile(r"^[0-9a-f]{40}$")
REQUIRED = ("class_path", "source", "format", "license", "provenance")
OPTIONAL = (
    "revision_pinned",
    "files",
    "num_labels",
    "threshold",
    "temperature",
    "bias",
    "architecture",
    "description",
    "build",
)
MEASURED_HINT = "measured numbers (accuracy, FLOPs, latency) belong in benchmarks/results/*.csv, not the registry"


class ZooError(BertJudgeError, RuntimeError):
    """A bad registry entry, a failed or refused pull, a hash mismatch."""


# --- the registry ---------------------------------------------------------------------------------
def registry_path(path: str | os.PathLike | None = None) -> Path:
    return Path(path or os.environ.get("BERTJUDGE_REGISTRY") or DEFAULT_REGISTRY)


def parse_source(source: str) -> tuple[str, str, str | None]:
    """``(scheme, location, revision)`` of a source URI; revision only for ``hf://org/name@rev``."""
    if source.startswith("hf://"):
        repo, at, revision = source[5:].partition("@")
        if not at or not revision or repo.count("/") != 1:
            raise ZooError(f"source {source!r}: write hf://org/name@revision (a commit id, or a branch such as main)")
        return "hf", repo, revision
    if source.startswith("https://"):
        return "https", source.rstrip("/"), None
    if source.startswith("file://"):
        parts = urlsplit(source)
        return "file", unquote(parts.netloc + parts.path), None
    raise ZooError(f"source {source!r}: use hf://org/name@rev, https://… or file://…")


def validate_entry(name: str, entry, where: str = "registry") -> dict:
    """Check one entry and fill its defaults; raise ZooError with a clear message."""

    def bad(msg: str) -> ZooError:
        return ZooError(f"{where}: entry {name!r}: {msg}")

    if not NAME_RE.match(str(name)):
        raise bad("names are `arch.tag`: lower-case letters, digits, '-' or '_', with at least one dot")
    if not isinstance(entry, dict):
        raise bad(f"expected a mapping of fields, got {type(entry).__name__}")
    unknown = sorted(set(entry) - set(REQUIRED) - set(OPTIONAL))
    if unknown:
        raise bad(f"unknown field(s) {unknown} ({MEASURED_HINT}; allowed: {', '.join(REQUIRED + OPTIONAL)})")
    missing = [key for key in REQUIRED if entry.get(key) in (None, "")]
    if missing:
        raise bad(f"missing field(s) {missing}")
    entry = {
        "revision_pinned": False,
        "files": {},
        "num_labels": 1,
        "threshold": 0.5,
        "temperature": 1.0,
        "bias": 0.0,
        "architecture": None,
        "description": "",
        "build": None,
        **entry,
    }
    if not re.match(r"^[A-Za-z_][\w.]*\.[A-Za-z_]\w*$", str(entry["class_path"])):
        raise bad(f"class_path {entry['class_path']!r} is not a dotted module.Class path")
    try:
        scheme, _, revision = parse_source(str(entry["source"]))
    except ZooError as err:
        raise bad(str(err)) from None
    if not isinstance(entry["revision_pinned"], bool):
        raise bad("revision_pinned must be true or false")
    if entry["revision_pinned"] and not (scheme == "hf" and COMMIT_RE.match(revision)):
        raise bad("revision_pinned: true needs an hf:// source whose revision is a 40-hex commit id")
    files = entry["files"]
    if not isinstance(files, dict):
        raise bad("files must map relative paths to sha256 hex digests (or null)")
    for path, digest in files.items():
        if Path(path).is_absolute() or ".." in Path(path).parts:
            raise bad(f"file {path!r}: give a path relative to the judge folder")
        if path.endswith(UNSAFE_SUFFIXES):
            raise bad(f"file {path!r} is a pickle format ({', '.join(UNSAFE_SUFFIXES)}); publish safetensors")
        if digest is not None and not SHA256_RE.match(str(digest)):
            raise bad(f"file {path!r}: sha256 must be 64 lower-case hex digits or null, got {digest!r}")
    if entry["build"] is not None and (scheme != "file" or not isinstance(entry["build"], str)):
        raise bad("build (the command that makes the judge on this machine) goes with a file:// source")
    if scheme == "https" and (not files or None in files.values()):
        raise bad("an https:// source must list every file with its sha256")
    if not isinstance(entry["format"], dict):
        raise bad("format must be a mapping of JudgeFormat fields")
    try:
        JudgeFormat.from_dict(entry["format"])
    except (FormatError, TypeError) as err:
        raise bad(f"format: {err}") from None
    if entry["num_labels"] not in (1, 2):
        raise bad(f"num_labels must be 1 or 2, got {entry['num_labels']!r}")
    for key in ("threshold", "temperature", "bias"):
        if not isinstance(entry[key], (int, float)) or isinstance(entry[key], bool):
            raise bad(f"{key} must be a number")
    if not isinstance(entry["provenance"], dict):
        raise bad("provenance must be a mapping (training data, labeler, recipe config, ...)")
    if not isinstance(entry["license"], str):
        raise bad("license must be a string")
    return entry


def load_registry(path: str | os.PathLike | None = None) -> dict[str, dict]:
    """The validated entries of a registry file, by name."""
    path = registry_path(path)
    if not path.is_file():
        raise ZooError(f"{path}: no such registry file")
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as err:
        raise ZooError(f"{path}: not valid YAML ({err})") from None
    if not isinstance(data, dict):
        raise ZooError(f"{path}: expected a mapping of entry names to entries")
    return {name: validate_entry(name, entry, str(path)) for name, entry in data.items()}


def get_entry(name: str, registry: str | os.PathLike | None = None) -> dict:
    entries = load_registry(registry)
    if name not in entries:
        raise ZooError(f"{name!r} is not in {registry_path(registry)}; `python -m bertjudge zoo list` shows the names")
    return entries[name]


def is_registered(name: str, registry: str | os.PathLike | None = None) -> bool:
    """Whether ``name`` names an entry (False when there is no registry file)."""
    try:
        return NAME_RE.match(name) is not None and name in load_registry(registry)
    except ZooError:
        return False


def load_architectures(path: str | os.PathLike | None = None) -> dict[str, dict]:
    """The architectures ``bench`` costs, by the key an entry's ``architecture`` names (``architectures.yaml``):
    ``hub_id``, ``kind`` (``encoder`` or ``causal``), ``model_type`` and ``config`` (the values of the model's
    config.json on the Hub)."""
    return yaml.safe_load(Path(path or ARCHITECTURES_FILE).read_text(encoding="utf-8"))


# --- hashing and the cache ------------------------------------------------------------------------
def sha256(path: str | os.PathLike) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def folder_files(folder: Path) -> list[str]:
    """Relative paths of the files of a judge folder, hidden files and folders left out."""
    return sorted(
        p.relative_to(folder).as_posix()
        for p in folder.rglob("*")
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(folder).parts)
    )


def hash_folder(folder: Path) -> dict[str, str]:
    return {rel: sha256(folder / rel) for rel in folder_files(folder)}


def cache_root() -> Path:
    return Path(os.environ.get("BERTJUDGE_CACHE") or Path.home() / ".cache" / "bertjudge")


def cache_dir(name: str, entry: dict) -> Path:
    """Where an entry is pulled: by revision for hf://, by the listed hashes otherwise."""
    _, _, revision = parse_source(entry["source"])
    key = revision or hashlib.sha256(json.dumps(entry["files"], sort_keys=True).encode()).hexdigest()[:12]
    return cache_root() / name / re.sub(r"[^\w.-]", "_", key)


def manifest_path(folder: Path) -> Path:
    return folder.with_name(folder.name + ".manifest.json")


def refuse_pickles(folder: Path, where: str) -> None:
    unsafe = [rel for rel in folder_files(folder) if rel.endswith(UNSAFE_SUFFIXES)]
    if unsafe:
        raise ZooError(
            f"{where}: refusing pickle files {unsafe} (they can run code when loaded); "
            "publish the weights as safetensors"
        )


# --- fetching -------------------------------------------------------------------------------------
def hub_reachable(timeout: float = 3.0) -> bool:
    """A fast check (one TCP connection) that the Hugging Face Hub endpoint answers."""
    from huggingface_hub import constants

    host = urlsplit(constants.ENDPOINT)
    try:
        socket.create_connection((host.hostname, host.port or 443), timeout=timeout).close()
        return True
    except OSError:
        return False


def _hub_offline_message(name: str, repo: str, revision: str, cause: str) -> str:
    return (
        f"hf://{repo}@{revision}: {cause}, and the files are not in the local Hugging Face cache.\n"
        f"To use a local copy: on a machine with the network run\n"
        f"  hf download {repo} --revision {revision} --local-dir {repo.split('/')[1]}\n"
        f"copy that folder here, then\n"
        f"  python -m bertjudge zoo pull {name} --input {repo.split('/')[1]}\n"
        f"(or fill the Hugging Face cache and keep HF_HUB_OFFLINE=1)."
    )


def pull_patterns(entry: dict, trust_remote_code: bool = False) -> tuple[str, ...]:
    """What a pull takes from a Hub snapshot (or a local copy of one), as ``allow_patterns``: the files of a
    judge folder (``JUDGE_FOLDER_PATTERNS``), the files the entry lists, and, with ``trust_remote_code``,
    the checkpoint's code (``*.py``)."""
    return JUDGE_FOLDER_PATTERNS + tuple(entry["files"]) + (("*.py",) if trust_remote_code else ())


def _fetch_hf(name: str, repo: str, revision: str, dest: Path, patterns: tuple[str, ...], token: str | None) -> None:
    """Download (or find in the Hugging Face cache) the files of a snapshot that match ``patterns`` (never
    pickles; code only where ``patterns`` allow ``*.py``), then copy those."""
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import LocalEntryNotFoundError

    offline = os.environ.get("HF_HUB_OFFLINE", "0").lower() in ("1", "true", "yes", "on")
    cause = "HF_HUB_OFFLINE is set"
    if not offline and not hub_reachable():
        offline, cause = True, "the Hugging Face Hub is unreachable from this machine"
    skip = UNSAFE_SUFFIXES + (() if "*.py" in patterns else (".py",))
    try:
        snapshot = snapshot_download(
            repo,
            revision=revision,
            allow_patterns=list(patterns),
            ignore_patterns=[f"*{s}" for s in skip],
            local_files_only=offline,
            token=token,
        )
    except LocalEntryNotFoundError:
        raise ZooError(_hub_offline_message(name, repo, revision, cause)) from None
    copy_tree(Path(snapshot), dest, f"hf://{repo}@{revision}", skip=skip, only=patterns)


def _fetch_https(base: str, files: dict, dest: Path) -> None:
    import urllib.request

    for rel in files:
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            with urllib.request.urlopen(f"{base}/{rel}", timeout=10) as response, open(target, "wb") as out:
                shutil.copyfileobj(response, out)
        except OSError as err:
            raise ZooError(f"{base}/{rel}: download failed ({err})") from None


def copy_tree(
    src: Path, dest: Path, where: str, skip: tuple[str, ...] = (), only: tuple[str, ...] | None = None
) -> None:
    """Copy a judge folder (links followed), leaving out files ending in ``skip`` and, with ``only``, the files
    that match none of those patterns; refuse pickles."""
    if not src.is_dir():
        raise ZooError(f"{where}: {src} is not a folder")
    files = [rel for rel in folder_files(src) if not rel.endswith(skip)] if skip else folder_files(src)
    if only is not None:
        files = judge_folder_files(files, only)
    unsafe = [rel for rel in files if rel.endswith(UNSAFE_SUFFIXES)]
    if unsafe:
        raise ZooError(
            f"{where}: refusing pickle files {unsafe} (they can run code when loaded); "
            "publish the weights as safetensors"
        )
    for rel in files:
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src / rel, dest / rel)


def _registry_judge_config(name: str, entry: dict) -> dict:
    return {
        "class": entry["class_path"],
        "format": JudgeFormat.from_dict(entry["format"]).to_dict(),
        "num_labels": entry["num_labels"],
        "threshold": entry["threshold"],
        "temperature": entry["temperature"],
        "bias": entry["bias"],
        "bertjudge_version": __version__,
        "provenance": {
            "name": name,
            "source": entry["source"],
            "license": entry["license"],
            **entry["provenance"],
            "judge_json": "written by `bertjudge zoo pull` from the registry",
        },
    }


def file_source(entry: dict, registry: str | os.PathLike | None = None) -> Path:
    """The folder of a file:// entry. A relative path is relative to the registry's folder, except in the
    registry shipped with the package, whose entries name the project's own runs: relative to the
    current directory (the project checkout)."""
    src = Path(parse_source(entry["source"])[1])
    if src.is_absolute():
        return src
    path = registry_path(registry).resolve()
    base = Path.cwd() if path == DEFAULT_REGISTRY.resolve() else path.parent
    return (base / src).resolve()


def pull(
    name: str,
    registry: str | os.PathLike | None = None,
    local_copy: str | os.PathLike | None = None,
    force: bool = False,
    trust_remote_code: bool = False,
    token: str | None = None,
) -> Path:
    """The cached folder of entry ``name``, downloaded and verified first when not there yet; a cached
    folder is re-hashed against the hashes recorded when it was pulled (and the registry's), and refused
    when a file was changed, removed or added since (``force`` pulls it again)."""
    entry = get_entry(name, registry)
    folder = cache_dir(name, entry)
    if folder.is_dir() and manifest_path(folder).is_file() and not force:
        problems = verify(name, registry)
        if problems:
            more = f" and {len(problems) - 1} more" if len(problems) > 1 else ""
            raise ZooError(
                f"{name}: the cached files in {folder} changed since they were pulled ({problems[0]}{more}); "
                f"refusing them: `python -m bertjudge zoo pull {name} --force` pulls it again"
            )
        return folder
    scheme, location, revision = parse_source(entry["source"])
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    try:
        if local_copy is not None:  # a copy of a hub snapshot: taken as a hub download would take it
            skip = UNSAFE_SUFFIXES + (() if trust_remote_code else (".py",))
            copy_tree(Path(local_copy), tmp, name, skip=skip, only=pull_patterns(entry, trust_remote_code))
        elif scheme == "file":
            src = file_source(entry, registry)
            if not src.is_dir() and entry["build"]:
                raise ZooError(
                    f"{name} is built on this machine, not downloaded: {src} does not exist yet; "
                    f"build it with `{entry['build']}`"
                )
            copy_tree(src, tmp, name)
        elif scheme == "hf":
            _fetch_hf(name, location, revision, tmp, pull_patterns(entry, trust_remote_code), token)
        else:
            _fetch_https(location, entry["files"], tmp)
        hashes = hash_folder(tmp)
        for rel, expected in entry["files"].items():
            if rel not in hashes:
                raise ZooError(f"{name}: the registry lists {rel!r} but the source has no such file")
            if expected is not None and hashes[rel] != expected:
                raise ZooError(
                    f"{name}: sha256 mismatch for {rel!r}: registry {expected}, got {hashes[rel]} "
                    "(the file was changed or corrupted; refusing it)"
                )
        if "auto_map" in read_json(tmp / "config.json") and not trust_remote_code:
            print(
                f"{name}: the checkpoint's config names remote code (auto_map); it was not downloaded and "
                "will not run (transformers' own implementation is used)",
                file=sys.stderr,
            )
        wrote_config = not (tmp / JUDGE_FILE).is_file()
        if wrote_config:
            (tmp / JUDGE_FILE).write_text(json.dumps(_registry_judge_config(name, entry), indent=2) + "\n")
        manifest = {
            "name": name,
            "source": entry["source"],
            "files": hash_folder(tmp),
            "verified": sorted(r for r, h in entry["files"].items() if h is not None),
            "judge_json_written": wrote_config,
        }
        if folder.exists():
            shutil.rmtree(folder)
        os.replace(tmp, folder)
        manifest_path(folder).write_text(json.dumps(manifest, indent=2) + "\n")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return folder


def read_json(path: Path) -> dict:
    return json.loads(path.read_text()) if path.is_file() else {}


def verify(name: str, registry: str | os.PathLike | None = None) -> list[str]:
    """Problems found re-hashing a pulled entry against the registry and its pull manifest ([] = fine)."""
    entry = get_entry(name, registry)
    folder = cache_dir(name, entry)
    manifest = read_json(manifest_path(folder))
    if not folder.is_dir() or not manifest:
        raise ZooError(f"{name} is not pulled (no {folder}); run `python -m bertjudge zoo pull {name}`")
    expected = {**manifest["files"], **{k: v for k, v in entry["files"].items() if v is not None}}
    found = hash_folder(folder)
    problems = [f"{rel}: missing" for rel in expected if rel not in found]
    problems += [
        f"{rel}: sha256 {found[rel]} != expected {digest}"
        for rel, digest in expected.items()
        if rel in found and found[rel] != digest
    ]
    problems += [f"{rel}: not in the pulled manifest" for rel in found if rel not in expected]
    return problems


# --- writing entries ------------------------------------------------------------------------------
def append_entry(registry: Path, name: str, entry: dict) -> None:
    """Append one entry as YAML text, keeping the hand-written comments of the file."""
    validate_entry(name, entry, str(registry))
    if registry.is_file() and name in load_registry(registry):
        raise ZooError(f"{registry}: {name!r} is already registered; choose another tag")
    text = registry.read_text() if registry.is_file() else ""
    text = "" if text.strip() == "{}" else text  # an empty mapping written by a YAML dumper
    block = yaml.safe_dump({name: entry}, sort_keys=False, allow_unicode=True, width=120)
    registry.parent.mkdir(parents=True, exist_ok=True)
    tmp = registry.with_name(f".{registry.name}.tmp")
    tmp.write_text(text.rstrip("\n") + ("\n\n" if text.strip() else "") + block)
    os.replace(tmp, registry)
