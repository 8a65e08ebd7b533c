"""The judge zoo: a hand-reviewed registry (``bertjudge/zoo/registry.yaml``, each entry a ``ZooEntry``), pulls and
verification.

The command is ``python -m bertjudge zoo list|show|pull|publish|verify|readme`` (``bertjudge.cli.zoo``);
``publish`` and ``readme``, which measure judges or read the measurements, are in ``bertjudge.evaluation.publish``.

- ``pull NAME`` downloads an entry into the cache (``$BERTJUDGE_CACHE``, default ``~/.cache/bertjudge``): an
  ``hf://`` source through the one Hub download path (``bertjudge.zoo.hub.download``: only the files of a judge
  folder, ``pull_patterns``, checked against the Hub's hashes; a repository's other files, such as
  .gitattributes, images or logs, are ignored), refuses pickled weights, never downloads or runs code unless
  asked, checks every sha256 the registry lists, records the hashes of the rest (trust on first pull), and
  writes ``judge.json`` from the entry when the checkpoint has none (the authors' checkpoints), so
  that ``Judge.load(NAME)`` works.
- ``publish FOLDER --to DEST`` measures an exported judge (``bertjudge.evaluation.bench``), adds the measured
  section to its model card, copies it to a zoo location (a folder, or ``hf://org/name`` on the Hugging Face
  Hub: a private repository unless ``--public``) and appends its entry, with the sha256 of every file, to the
  registry.
- ``verify NAME`` re-hashes a pulled entry.
- ``readme`` regenerates ``zoo/README.md`` from the registry and ``benchmarks/results/*.csv``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import sys
import tempfile
import urllib.request
from dataclasses import MISSING, dataclass, field, fields
from pathlib import Path

import yaml

from bertjudge.core.errors import BertJudgeError
from bertjudge.core.formats import FormatError, JudgeFormat
from bertjudge.core.hashing import SHA1_HEX, SHA256_HEX, folder_files, hash_folder
from bertjudge.core.judge_file import JUDGE_FILE, JUDGE_FOLDER_PATTERNS, judge_folder_files
from bertjudge.core.version import __version__
from bertjudge.zoo import hub
from bertjudge.zoo.cache import cache_root, differences, read_json, write_manifest
from bertjudge.zoo.uri import NAME, ModelURI, URIError, parse_uri

DEFAULT_REGISTRY = Path(__file__).with_name("registry.yaml")  # package data
ARCHITECTURES_FILE = Path(__file__).with_name("architectures.yaml")  # package data: the configs bench costs
DEFAULT_README = Path("zoo") / "README.md"  # in the project checkout
UNSAFE_SUFFIXES = (".bin", ".pt", ".pth", ".pkl", ".pickle", ".ckpt")
SOURCES = ("hf", "https", "file")  # the schemes a source is written in (bertjudge.zoo.uri)
MEASURED_HINT = "measured numbers (accuracy, FLOPs, latency) belong in benchmarks/results/*.csv, not the registry"


class ZooError(BertJudgeError, RuntimeError):
    """A bad registry entry, a failed or refused pull, a hash mismatch."""


# --- the registry ---------------------------------------------------------------------------------
def registry_path(path: str | os.PathLike | None = None) -> Path:
    return Path(path or os.environ.get("BERTJUDGE_REGISTRY") or DEFAULT_REGISTRY)


@dataclass(frozen=True)
class ZooEntry:
    """One entry of the registry, parsed and checked once (``ZooEntry.parse``); the fields are those of
    ``registry.yaml`` (its header says what each holds), the format parsed as a ``JudgeFormat``."""

    name: str
    class_path: str
    source: str
    format: JudgeFormat
    license: str
    provenance: dict
    revision_pinned: bool = False
    files: dict[str, str | None] = field(default_factory=dict)
    num_labels: int = 1
    threshold: float = 0.5
    temperature: float = 1.0
    bias: float = 0.0
    architecture: str | None = None
    description: str = ""
    build: str | None = None

    @property
    def uri(self) -> ModelURI:
        """The parsed ``source``."""
        return parse_uri(self.source)

    def to_dict(self) -> dict:
        """The entry's fields as registry.yaml writes them (its name is the key)."""
        data = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "name"}
        return {**data, "format": self.format.to_dict()}

    def judge_config(self) -> dict:
        """The ``judge.json`` a pull writes for a checkpoint that has none (the authors')."""
        return {
            "class": self.class_path,
            "format": self.format.to_dict(),
            "num_labels": self.num_labels,
            "threshold": self.threshold,
            "temperature": self.temperature,
            "bias": self.bias,
            "bertjudge_version": __version__,
            "provenance": {
                "name": self.name,
                "source": self.source,
                "license": self.license,
                **self.provenance,
                "judge_json": "written by `bertjudge zoo pull` from the registry",
            },
        }

    @classmethod
    def parse(cls, name: str, data, where: str = "registry") -> ZooEntry:
        """The entry ``name`` of ``where`` (the registry file) from its YAML mapping; anything wrong is one
        ``ZooError`` line naming ``where`` and the entry."""

        def bad(msg: str) -> ZooError:
            return ZooError(f"{where}: entry {name!r}: {msg}")

        if not NAME.match(str(name)):
            raise bad("names are `arch.tag`: lower-case letters, digits, '-' or '_', with at least one dot")
        if not isinstance(data, dict):
            raise bad(f"expected a mapping of fields, got {type(data).__name__}")
        known = [f.name for f in fields(cls) if f.name != "name"]
        unknown = sorted(set(data) - set(known))
        if unknown:
            raise bad(f"unknown field(s) {unknown} ({MEASURED_HINT}; allowed: {', '.join(known)})")
        required = [f.name for f in fields(cls) if f.name != "name" and f.default is f.default_factory is MISSING]
        missing = [key for key in required if data.get(key) in (None, "")]
        if missing:
            raise bad(f"missing field(s) {missing}")
        try:
            fmt = check_fields(data)
        except ValueError as err:
            raise bad(str(err)) from None
        return cls(name=name, **{**data, "format": fmt})


def check_fields(data: dict) -> JudgeFormat:
    """The checks of an entry's fields (a ``ValueError`` saying what is wrong); returns its parsed format."""
    try:
        uri = parse_uri(str(data["source"]))
    except URIError:
        uri = None
    if uri is None or uri.scheme not in SOURCES:
        raise ValueError(f"source {data['source']!r}: use hf://org/name@rev, https://… or file://…")
    if uri.scheme == "hf" and uri.revision is None:
        raise ValueError(
            f"source {data['source']!r}: write hf://org/name@revision (a commit id, or a branch such as main)"
        )
    if not re.match(r"^[A-Za-z_][\w.]*\.[A-Za-z_]\w*$", str(data["class_path"])):
        raise ValueError(f"class_path {data['class_path']!r} is not a dotted module.Class path")
    pinned = data.get("revision_pinned", False)
    if not isinstance(pinned, bool):
        raise ValueError("revision_pinned must be true or false")
    if pinned and not (uri.scheme == "hf" and SHA1_HEX.match(uri.revision)):
        raise ValueError("revision_pinned: true needs an hf:// source whose revision is a 40-hex commit id")
    files = data.get("files", {})
    if not isinstance(files, dict):
        raise ValueError("files must map relative paths to sha256 hex digests (or null)")
    for path, digest in files.items():
        if Path(path).is_absolute() or ".." in Path(path).parts:
            raise ValueError(f"file {path!r}: give a path relative to the judge folder")
        if path.endswith(UNSAFE_SUFFIXES):
            raise ValueError(f"file {path!r} is a pickle format ({', '.join(UNSAFE_SUFFIXES)}); publish safetensors")
        if digest is not None and not SHA256_HEX.match(str(digest)):
            raise ValueError(f"file {path!r}: sha256 must be 64 lower-case hex digits or null, got {digest!r}")
    if data.get("build") is not None and (uri.scheme != "file" or not isinstance(data["build"], str)):
        raise ValueError("build (the command that makes the judge on this machine) goes with a file:// source")
    if uri.scheme == "https" and (not files or None in files.values()):
        raise ValueError("an https:// source must list every file with its sha256")
    if data.get("num_labels", 1) not in (1, 2):
        raise ValueError(f"num_labels must be 1 or 2, got {data['num_labels']!r}")
    for key in ("threshold", "temperature", "bias"):
        if not isinstance(data.get(key, 0.0), (int, float)) or isinstance(data.get(key), bool):
            raise ValueError(f"{key} must be a number")
    for key, kind, what in (
        ("provenance", dict, "a mapping (training data, labeler, recipe config, ...)"),
        ("license", str, "a string"),
        ("format", dict, "a mapping of JudgeFormat fields"),
    ):
        if not isinstance(data[key], kind):
            raise ValueError(f"{key} must be {what}")
    try:
        return JudgeFormat.from_dict(data["format"])
    except (FormatError, TypeError) as err:
        raise ValueError(f"format: {err}") from None


def load_registry(path: str | os.PathLike | None = None) -> dict[str, ZooEntry]:
    """The entries of a registry file, parsed and checked, by name."""
    path = registry_path(path)
    if not path.is_file():
        raise ZooError(f"{path}: no such registry file")
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as err:
        raise ZooError(f"{path}: not valid YAML ({' '.join(str(err).split())})") from None
    if not isinstance(data, dict):
        raise ZooError(f"{path}: expected a mapping of entry names to entries")
    return {name: ZooEntry.parse(name, entry, str(path)) for name, entry in data.items()}


def get_entry(name: str, registry: str | os.PathLike | None = None) -> ZooEntry:
    entries = load_registry(registry)
    if name not in entries:
        raise ZooError(f"{name!r} is not in {registry_path(registry)}; `python -m bertjudge zoo list` shows the names")
    return entries[name]


def is_registered(name: str, registry: str | os.PathLike | None = None) -> bool:
    """Whether ``name`` names an entry (False when there is no registry file)."""
    try:
        return NAME.match(name) is not None and name in load_registry(registry)
    except ZooError:
        return False


def load_architectures(path: str | os.PathLike | None = None) -> dict[str, dict]:
    """The architectures ``bench`` costs, by the key an entry's ``architecture`` names (``architectures.yaml``):
    ``hub_id``, ``kind`` (``encoder`` or ``causal``), ``model_type`` and ``config`` (the values of the model's
    config.json on the Hub)."""
    return yaml.safe_load(Path(path or ARCHITECTURES_FILE).read_text(encoding="utf-8"))


# --- the cache ------------------------------------------------------------------------------------
def cache_dir(entry: ZooEntry) -> Path:
    """Where an entry is pulled: by revision for hf://, by the listed hashes otherwise."""
    key = entry.uri.revision or hashlib.sha256(json.dumps(entry.files, sort_keys=True).encode()).hexdigest()[:12]
    return cache_root() / entry.name / re.sub(r"[^\w.-]", "_", key)


def manifest_path(folder: Path) -> Path:
    return folder.with_name(folder.name + ".manifest.json")


def refuse_pickles(folder: Path, where: str, files: list[str] | None = None) -> None:
    unsafe = [rel for rel in (folder_files(folder) if files is None else files) if rel.endswith(UNSAFE_SUFFIXES)]
    if unsafe:
        raise ZooError(
            f"{where}: refusing pickle files {unsafe} (they can run code when loaded); "
            "publish the weights as safetensors"
        )


# --- fetching -------------------------------------------------------------------------------------
def pull_patterns(entry: ZooEntry, trust_remote_code: bool = False) -> tuple[str, ...]:
    """What a pull takes from a Hub snapshot (or a local copy of one), as ``allow_patterns``: the files of a
    judge folder (``JUDGE_FOLDER_PATTERNS``), the files the entry lists, and, with ``trust_remote_code``,
    the checkpoint's code (``*.py``)."""
    return JUDGE_FOLDER_PATTERNS + tuple(entry.files) + (("*.py",) if trust_remote_code else ())


def _fetch_hf(entry: ZooEntry, dest: Path, patterns: tuple[str, ...], token: str | None) -> None:
    """The entry's Hub snapshot through the one download path (``hub.download``), its files copied to ``dest``."""
    uri = entry.uri
    try:
        snapshot = hub.download(uri, patterns, token)
    except hub.NotCachedError as err:
        folder = uri.location.split("/")[1]
        raise ZooError(
            f"{err}; to use a copy: on a machine with the network run `hf download {uri.location} --revision "
            f"{uri.revision} --local-dir {folder}`, copy that folder here and run `python -m bertjudge zoo pull "
            f"{entry.name} --input {folder}` (or fill the Hugging Face cache and keep HF_HUB_OFFLINE=1)"
        ) from None
    copy_tree(snapshot.folder, dest, str(uri), only=patterns)


def _fetch_https(base: str, files: dict, dest: Path) -> None:
    for rel in files:
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            with urllib.request.urlopen(f"{base}/{rel}", timeout=10) as response, open(target, "wb") as out:
                shutil.copyfileobj(response, out)
        except OSError as err:
            raise ZooError(f"{base}/{rel}: download failed ({err})") from None


def copy_tree(src: Path, dest: Path, where: str, only: tuple[str, ...] | None = None) -> None:
    """Copy a judge folder (links followed), with ``only`` the files that match one of those patterns; refuse
    pickles among the files copied."""
    if not src.is_dir():
        raise ZooError(f"{where}: {src} is not a folder")
    files = folder_files(src) if only is None else judge_folder_files(folder_files(src), only)
    refuse_pickles(src, where, files)
    for rel in files:
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src / rel, dest / rel)


def file_source(entry: ZooEntry, registry: str | os.PathLike | None = None) -> Path:
    """The folder of a file:// entry. A relative path is relative to the registry's folder, except in the
    registry shipped with the package, whose entries name the project's own runs: relative to the
    current directory (the project checkout)."""
    src = Path(entry.uri.location)
    if src.is_absolute():
        return src
    path = registry_path(registry).resolve()
    base = Path.cwd() if path == DEFAULT_REGISTRY.resolve() else path.parent
    return (base / src).resolve()


def _fetch(
    entry: ZooEntry,
    dest: Path,
    registry: str | os.PathLike | None,
    local_copy: str | os.PathLike | None,
    trust_remote_code: bool,
    token: str | None,
) -> None:
    """Put the entry's files in ``dest``: from a local copy of a Hub snapshot (taken as a download would take it),
    a file:// folder, the Hub or an https:// folder."""
    scheme = entry.uri.scheme
    if local_copy is not None:
        copy_tree(Path(local_copy), dest, entry.name, only=pull_patterns(entry, trust_remote_code))
    elif scheme == "file":
        src = file_source(entry, registry)
        if not src.is_dir() and entry.build:
            raise ZooError(
                f"{entry.name} is built on this machine, not downloaded: {src} does not exist yet; "
                f"build it with `{entry.build}`"
            )
        copy_tree(src, dest, entry.name)
    elif scheme == "hf":
        _fetch_hf(entry, dest, pull_patterns(entry, trust_remote_code), token)
    else:
        _fetch_https(entry.uri.location, entry.files, dest)


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
    folder = cache_dir(entry)
    if folder.is_dir() and manifest_path(folder).is_file() and not force:
        problems = verify(name, registry)
        if problems:
            more = f" and {len(problems) - 1} more" if len(problems) > 1 else ""
            raise ZooError(
                f"{name}: the cached files in {folder} changed since they were pulled ({problems[0]}{more}); "
                f"refusing them: `python -m bertjudge zoo pull {name} --force` pulls it again"
            )
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    try:
        _fetch(entry, tmp, registry, local_copy, trust_remote_code, token)
        hashes = hash_folder(tmp)
        for rel, expected in entry.files.items():
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
            (tmp / JUDGE_FILE).write_text(json.dumps(entry.judge_config(), indent=2) + "\n")
        files = hash_folder(tmp)
        if folder.exists():
            shutil.rmtree(folder)
        os.replace(tmp, folder)
        write_manifest(
            manifest_path(folder),
            entry.source,
            files,
            name=name,
            verified=sorted(r for r, h in entry.files.items() if h is not None),
            judge_json_written=wrote_config,
        )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return folder


def verify(name: str, registry: str | os.PathLike | None = None) -> list[str]:
    """Problems found re-hashing a pulled entry against the registry and its pull manifest ([] = fine)."""
    entry = get_entry(name, registry)
    folder = cache_dir(entry)
    manifest = read_json(manifest_path(folder))
    if not folder.is_dir() or not manifest:
        raise ZooError(f"{name} is not pulled (no {folder}); run `python -m bertjudge zoo pull {name}`")
    expected = {**manifest["files"], **{k: v for k, v in entry.files.items() if v is not None}}
    return differences(hash_folder(folder), expected)


# --- writing entries ------------------------------------------------------------------------------
def append_entry(registry: Path, entry: ZooEntry) -> None:
    """Append one entry as YAML text, keeping the hand-written comments of the file."""
    ZooEntry.parse(entry.name, entry.to_dict(), str(registry))
    if registry.is_file() and entry.name in load_registry(registry):
        raise ZooError(f"{registry}: {entry.name!r} is already registered; choose another tag")
    text = registry.read_text() if registry.is_file() else ""
    text = "" if text.strip() == "{}" else text  # an empty mapping written by a YAML dumper
    block = yaml.safe_dump({entry.name: entry.to_dict()}, sort_keys=False, allow_unicode=True, width=120)
    registry.parent.mkdir(parents=True, exist_ok=True)
    tmp = registry.with_name(f".{registry.name}.tmp")
    tmp.write_text(text.rstrip("\n") + ("\n\n" if text.strip() else "") + block)
    os.replace(tmp, registry)
