"""The judge zoo: a hand-reviewed registry (``zoo/registry.yaml``) and its command.

``python -m bertjudge zoo list|show|pull|publish|verify|readme``.

- ``pull NAME`` downloads an entry into the cache (``$BERTJUDGE_CACHE``, default
  ``~/.cache/bertjudge``), refuses pickled weights, never downloads or runs code unless asked,
  checks every sha256 the registry lists, records the hashes of the rest (trust on first pull), and
  writes ``judge.json`` from the entry when the checkpoint has none (the authors' checkpoints), so
  that ``Judge.load(NAME)`` works.
- ``publish FOLDER`` measures an exported judge (``bertjudge.bench``), adds the measured section to
  its model card, copies it to a zoo location (a folder, or the Hugging Face Hub) and appends its
  entry, with the sha256 of every file, to the registry.
- ``verify NAME`` re-hashes a pulled entry.
- ``readme`` regenerates ``zoo/README.md`` from the registry and ``benchmarks/results/*.csv``.
"""

from __future__ import annotations

import argparse
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

from bertjudge.formats import FormatError, JudgeFormat

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_REGISTRY = ROOT / "zoo" / "registry.yaml"
DEFAULT_README = ROOT / "zoo" / "README.md"
JUDGE_FILE = "judge.json"
UNSAFE_SUFFIXES = (".bin", ".pt", ".pth", ".pkl", ".pickle", ".ckpt")
NAME_RE = re.compile(r"^[a-z0-9][a-z0-9_-]*(\.[a-z0-9][a-z0-9_-]*)+$")
SHA256_RE = re.compile(r"^[0-9a-f]{64}$")
COMMIT_RE = re.compile(r"^[0-9a-f]{40}$")
REQUIRED = ("class_path", "source", "format", "license", "provenance")
OPTIONAL = ("revision_pinned", "files", "num_labels", "threshold", "temperature", "bias", "architecture",
            "description", "build")
MEASURED_HINT = "measured numbers (accuracy, FLOPs, latency) belong in benchmarks/results/*.csv, not the registry"


class ZooError(RuntimeError):
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
    entry = {"revision_pinned": False, "files": {}, "num_labels": 1, "threshold": 0.5, "temperature": 1.0,
             "bias": 0.0, "architecture": None, "description": "", "build": None, **entry}
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


# --- hashing and the cache ------------------------------------------------------------------------
def sha256(path: str | os.PathLike) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def folder_files(folder: Path) -> list[str]:
    """Relative paths of the files of a judge folder, hidden files and folders left out."""
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*")
                  if p.is_file() and not any(part.startswith(".") for part in p.relative_to(folder).parts))


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


def _refuse_pickles(folder: Path, where: str) -> None:
    unsafe = [rel for rel in folder_files(folder) if rel.endswith(UNSAFE_SUFFIXES)]
    if unsafe:
        raise ZooError(f"{where}: refusing pickle files {unsafe} (they can run code when loaded); "
                       "publish the weights as safetensors")


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
    return (f"hf://{repo}@{revision}: {cause}, and the files are not in the local Hugging Face cache.\n"
            f"To use a local copy: on a machine with the network run\n"
            f"  hf download {repo} --revision {revision} --local-dir {repo.split('/')[1]}\n"
            f"copy that folder here, then\n"
            f"  python -m bertjudge zoo pull {name} --from {repo.split('/')[1]}\n"
            f"(or fill the Hugging Face cache and keep HF_HUB_OFFLINE=1).")


def _fetch_hf(name: str, repo: str, revision: str, dest: Path, trust_remote_code: bool, token: str | None) -> None:
    """Download (or find in the Hugging Face cache) a snapshot, then copy it without pickles or code."""
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import LocalEntryNotFoundError

    offline = os.environ.get("HF_HUB_OFFLINE", "0").lower() in ("1", "true", "yes", "on")
    cause = "HF_HUB_OFFLINE is set"
    if not offline and not hub_reachable():
        offline, cause = True, "the Hugging Face Hub is unreachable from this machine"
    skip = UNSAFE_SUFFIXES + (() if trust_remote_code else (".py",))
    try:
        snapshot = snapshot_download(repo, revision=revision, ignore_patterns=[f"*{s}" for s in skip],
                                     local_files_only=offline, token=token)
    except LocalEntryNotFoundError:
        raise ZooError(_hub_offline_message(name, repo, revision, cause)) from None
    _copy_tree(Path(snapshot), dest, f"hf://{repo}@{revision}", skip=skip)


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


def _copy_tree(src: Path, dest: Path, where: str, skip: tuple[str, ...] = ()) -> None:
    """Copy a judge folder (links followed), leaving out files ending in ``skip``; refuse pickles."""
    if not src.is_dir():
        raise ZooError(f"{where}: {src} is not a folder")
    files = [rel for rel in folder_files(src) if not rel.endswith(skip)] if skip else folder_files(src)
    unsafe = [rel for rel in files if rel.endswith(UNSAFE_SUFFIXES)]
    if unsafe:
        raise ZooError(f"{where}: refusing pickle files {unsafe} (they can run code when loaded); "
                       "publish the weights as safetensors")
    for rel in files:
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src / rel, dest / rel)


def _registry_judge_config(name: str, entry: dict) -> dict:
    from bertjudge import __version__

    return {"class": entry["class_path"], "format": JudgeFormat.from_dict(entry["format"]).to_dict(),
            "num_labels": entry["num_labels"], "threshold": entry["threshold"],
            "temperature": entry["temperature"], "bias": entry["bias"], "bertjudge_version": __version__,
            "provenance": {"name": name, "source": entry["source"], "license": entry["license"],
                           **entry["provenance"], "judge_json": "written by `bertjudge zoo pull` from the registry"}}


def file_source(entry: dict, registry: str | os.PathLike | None = None) -> Path:
    """The folder of a file:// entry (a relative path is relative to the registry's folder)."""
    src = Path(parse_source(entry["source"])[1])
    return src if src.is_absolute() else (registry_path(registry).resolve().parent / src).resolve()


def pull(name: str, registry: str | os.PathLike | None = None, local_copy: str | os.PathLike | None = None,
         force: bool = False, trust_remote_code: bool = False, token: str | None = None) -> Path:
    """The cached folder of entry ``name``, downloaded and verified first when not there yet."""
    entry = get_entry(name, registry)
    folder = cache_dir(name, entry)
    if folder.is_dir() and manifest_path(folder).is_file() and not force:
        return folder
    scheme, location, revision = parse_source(entry["source"])
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    try:
        if local_copy is not None:  # a copy of a hub snapshot: left out as a hub download would be
            _copy_tree(Path(local_copy), tmp, name, skip=UNSAFE_SUFFIXES + (() if trust_remote_code else (".py",)))
        elif scheme == "file":
            src = file_source(entry, registry)
            if not src.is_dir() and entry["build"]:
                raise ZooError(f"{name} is built on this machine, not downloaded: {src} does not exist yet; "
                               f"build it with `{entry['build']}`")
            _copy_tree(src, tmp, name)
        elif scheme == "hf":
            _fetch_hf(name, location, revision, tmp, trust_remote_code, token)
        else:
            _fetch_https(location, entry["files"], tmp)
        hashes = hash_folder(tmp)
        for rel, expected in entry["files"].items():
            if rel not in hashes:
                raise ZooError(f"{name}: the registry lists {rel!r} but the source has no such file")
            if expected is not None and hashes[rel] != expected:
                raise ZooError(f"{name}: sha256 mismatch for {rel!r}: registry {expected}, got {hashes[rel]} "
                               "(the file was changed or corrupted; refusing it)")
        if "auto_map" in _read_json(tmp / "config.json") and not trust_remote_code:
            print(f"{name}: the checkpoint's config names remote code (auto_map); it was not downloaded and "
                  "will not run (transformers' own implementation is used)", file=sys.stderr)
        wrote_config = not (tmp / JUDGE_FILE).is_file()
        if wrote_config:
            (tmp / JUDGE_FILE).write_text(json.dumps(_registry_judge_config(name, entry), indent=2) + "\n")
        manifest = {"name": name, "source": entry["source"], "files": hash_folder(tmp),
                    "verified": sorted(r for r, h in entry["files"].items() if h is not None),
                    "judge_json_written": wrote_config}
        if folder.exists():
            shutil.rmtree(folder)
        os.replace(tmp, folder)
        manifest_path(folder).write_text(json.dumps(manifest, indent=2) + "\n")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return folder


def _read_json(path: Path) -> dict:
    return json.loads(path.read_text()) if path.is_file() else {}


def verify(name: str, registry: str | os.PathLike | None = None) -> list[str]:
    """Problems found re-hashing a pulled entry against the registry and its pull manifest ([] = fine)."""
    entry = get_entry(name, registry)
    folder = cache_dir(name, entry)
    manifest = _read_json(manifest_path(folder))
    if not folder.is_dir() or not manifest:
        raise ZooError(f"{name} is not pulled (no {folder}); run `python -m bertjudge zoo pull {name}`")
    expected = {**manifest["files"], **{k: v for k, v in entry["files"].items() if v is not None}}
    found = hash_folder(folder)
    problems = [f"{rel}: missing" for rel in expected if rel not in found]
    problems += [f"{rel}: sha256 {found[rel]} != expected {digest}"
                 for rel, digest in expected.items() if rel in found and found[rel] != digest]
    problems += [f"{rel}: not in the pulled manifest" for rel in found if rel not in expected]
    return problems


# --- publish --------------------------------------------------------------------------------------
def _append_entry(registry: Path, name: str, entry: dict) -> None:
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


def card_section(name: str, cost: dict, accuracy: dict | None) -> str:
    """The measured section of a published judge's model card."""
    lines = ["", "## Measured by `bertjudge zoo publish`", "", f"Zoo name: `{name}`.", "",
             "| measure | value |", "|---|---|"]
    for key in ("params", "tokens", "flops", "latency_p50_ms", "latency_p95_ms", "throughput_per_s",
                "best_batch_size", "peak_mem_mb", "hardware", "dtype", "torch"):
        if cost.get(key) not in (None, ""):
            lines.append(f"| {key} | {cost[key]} |")
    if accuracy:
        lines.append(f"| accuracy ({accuracy['eval_set']}, n={accuracy['n']}) | {float(accuracy['accuracy']):.4f} |")
    else:
        lines.append("| accuracy | not measured (the embedded corpus is not available) |")
    return "\n".join(lines) + "\n"


def publish(path: str | os.PathLike, name: str, license: str, to: str, registry: str | os.PathLike | None = None,
            token: str | None = None, n: int = 2000, seed: int = 0, architecture: str | None = None,
            results_dir: str | os.PathLike | None = None, timing: bool = True) -> dict:
    """Measure, card, copy and register an exported judge folder; returns the registry entry."""
    from bertjudge import bench

    src = Path(path)
    config = _read_json(src / JUDGE_FILE)
    if not config:
        raise ZooError(f"{src}: not an exported judge folder (no {JUDGE_FILE})")
    _refuse_pickles(src, str(src))
    registry = registry_path(registry)
    if registry.is_file() and name in load_registry(registry):
        raise ZooError(f"{registry}: {name!r} is already registered; choose another tag")
    validate_entry(name, {"class_path": config["class"], "source": "file://x", "format": config.get("format", {}),
                          "license": license, "provenance": {}}, "publish")
    cost, accuracy = bench.measure_judge_folder(src, name, n=n, seed=seed, architecture=architecture, timing=timing)
    bench.write_results([cost], "cost", results_dir)
    if accuracy:
        bench.write_results([accuracy], "accuracy", results_dir)

    with tempfile.TemporaryDirectory() as staging:
        stage = Path(staging) / name
        _copy_tree(src, stage, str(src))
        card = stage / "README.md"
        card.write_text((card.read_text() if card.is_file() else f"# {name}\n") + card_section(name, cost, accuracy))
        files = hash_folder(stage)
        if to.startswith("hf://"):
            source, pinned = _upload(stage, to[5:], token, name), True
        else:
            dest = Path(to) / name
            if dest.exists():
                raise ZooError(f"{dest} exists; refusing to overwrite a published judge")
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copytree(stage, dest)
            source, pinned = f"file://{dest.resolve()}", False
    entry = {"class_path": config["class"], "source": source, "revision_pinned": pinned, "files": files,
             "format": config["format"], "num_labels": config.get("num_labels", 1),
             "threshold": config.get("threshold", 0.5), "temperature": config.get("temperature", 1.0),
             **({"bias": config["bias"]} if config.get("bias") else {}),
             "architecture": cost.get("architecture") or None, "license": license,
             "description": f"Published from {src.resolve()} by bertjudge zoo publish.",
             "provenance": config.get("provenance") or {"note": "the judge.json had no provenance"}}
    _append_entry(registry, name, entry)
    return entry


def _upload(folder: Path, repo: str, token: str | None, name: str) -> str:
    from huggingface_hub import HfApi

    api = HfApi(token=token)
    api.create_repo(repo, exist_ok=True)
    commit = api.upload_folder(repo_id=repo, folder_path=folder, commit_message=f"bertjudge zoo publish {name}")
    return f"hf://{repo}@{commit.oid}"


# --- the README -----------------------------------------------------------------------------------
def render_readme(registry: str | os.PathLike | None = None, results_dir: str | os.PathLike | None = None) -> str:
    """zoo/README.md: the registry and the measured tables, generated from the CSVs."""
    from bertjudge import bench

    entries = load_registry(registry)
    lines = ["# The bertjudge zoo", "",
             ("<!-- generated by `python -m bertjudge zoo readme` from zoo/registry.yaml and "
             "benchmarks/results/*.csv; do not edit by hand -->"), "",
             ("Load any entry with `Judge.load(\"<name>\")` (pulled and verified on first use) or "
             "`python -m bertjudge zoo pull <name>`."), "",
             "## Entries", "", "| name | source | pinned | license | description |", "|---|---|---|---|---|"]
    for name, e in entries.items():
        lines.append(f"| `{name}` | `{e['source']}` | {'yes' if e['revision_pinned'] else 'no'} "
                     f"| {e['license']} | {e['description']} |")
    lines += ["", "## Cost and accuracy", "",
              ("Measured with `python -m bertjudge bench run` (protocol: benchmarks/README.md). Rows without a "
              "trained judge (tag `arch`, `direct`, `reasoning`) cost the architecture with random weights; token "
              "lengths (so FLOPs) are the median of the synthetic embedded test split (n=2000). "
              f"Accuracy is measured on the frozen real-output test set {bench.EVAL_SET} "
              "(`data/real/real-test-v1.jsonl.gz`, every row: its 2,615 rows are 2,075 open QA, 180 multiple "
              "choice, 180 extraction, 180 math), overall and per category, for the judges that run here. "
              f"Accuracies measured on another set (the synthetic embedded test split, before) are not shown: "
              f"such rows say \"not measured on {bench.EVAL_SET} yet\". An accuracy the authors quoted on their own "
              "test set is shown in parentheses with its source; it is not comparable and is left out of the "
              f"front and the plot. `*` marks the Pareto front (FLOPs vs {bench.EVAL_SET} accuracy)."), ""]
    tables = bench.result_tables(results_dir)
    if not tables:
        lines.append("No results yet: run `python -m bertjudge bench run`.")
    for title, rows in tables.items():
        lines += [f"### {title}", "", bench.markdown_table(rows), ""]
    lines += ["![Pareto front](../benchmarks/pareto.png)", ""]
    return "\n".join(lines)


# --- the command ----------------------------------------------------------------------------------
def cli(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bertjudge zoo", description=__doc__.split("\n\n")[0])
    parser.add_argument("--registry", help=f"registry file (default {DEFAULT_REGISTRY}, or $BERTJUDGE_REGISTRY)")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="list the entries")
    show = sub.add_parser("show", help="an entry, its cache state and its measured results")
    show.add_argument("name")
    pull_p = sub.add_parser("pull", help="download and verify an entry into the cache")
    pull_p.add_argument("name")
    pull_p.add_argument("--from", dest="local_copy", help="use this local copy of the entry's files (offline)")
    pull_p.add_argument("--force", action="store_true", help="download again even when cached")
    pull_p.add_argument("--trust-remote-code", action="store_true", help="also download the checkpoint's code")
    pull_p.add_argument("--token", default=os.environ.get("HF_TOKEN"))
    pub = sub.add_parser("publish", help="measure an exported judge, copy it to the zoo and register it")
    pub.add_argument("path")
    pub.add_argument("--name", required=True, help="the entry name, arch.tag (e.g. minilm-l6.embedded-v1)")
    pub.add_argument("--license", required=True)
    pub.add_argument("--to", required=True, help="a folder, or hf://org/name (needs --token or HF_TOKEN)")
    pub.add_argument("--token", default=os.environ.get("HF_TOKEN"))
    pub.add_argument("--architecture", help="architecture key for the cost model (default: from the backbone)")
    pub.add_argument("--n", type=int, default=2000, help="embedded test records scored for accuracy")
    pub.add_argument("--results", help="results folder (default benchmarks/results)")
    pub.add_argument("--no-timing", action="store_true", help="count FLOPs only, do not time")
    ver = sub.add_parser("verify", help="re-hash a pulled entry")
    ver.add_argument("name")
    readme = sub.add_parser("readme", help="regenerate zoo/README.md from the registry and the results")
    readme.add_argument("--results", help="results folder (default benchmarks/results)")
    readme.add_argument("--out", default=str(DEFAULT_README))
    args = parser.parse_args(argv)
    try:
        return _run(args)
    except ZooError as err:
        print(f"zoo: {err}", file=sys.stderr)
        return 1


def _run(args) -> int:
    if args.command == "list":
        for name, e in load_registry(args.registry).items():
            print(f"{name:<45} {e['source']:<55} {e['license'][:30]}")
    elif args.command == "show":
        from bertjudge import bench

        entry = get_entry(args.name, args.registry)
        print(yaml.safe_dump({args.name: entry}, sort_keys=False, allow_unicode=True).rstrip())
        folder = cache_dir(args.name, entry)
        print(f"# cache: {folder} ({'pulled' if manifest_path(folder).is_file() else 'not pulled'})")
        for title, rows in bench.result_tables().items():
            for row in rows:
                if row["name"] == args.name:
                    print(f"# {title}: " + ", ".join(f"{k}={v}" for k, v in row.items() if v not in ("", None)))
    elif args.command == "pull":
        folder = pull(args.name, args.registry, args.local_copy, args.force, args.trust_remote_code, args.token)
        print(folder)
    elif args.command == "publish":
        entry = publish(args.path, args.name, args.license, args.to, args.registry, args.token, n=args.n,
                        architecture=args.architecture, results_dir=args.results, timing=not args.no_timing)
        print(f"registered {args.name} in {registry_path(args.registry)}: {entry['source']}")
    elif args.command == "verify":
        problems = verify(args.name, args.registry)
        for problem in problems:
            print(f"{args.name}: {problem}", file=sys.stderr)
        print(f"{args.name}: {'FAILED' if problems else 'ok'}")
        return 1 if problems else 0
    elif args.command == "readme":
        out = Path(args.out)
        tmp = out.with_name(f".{out.name}.tmp")
        tmp.write_text(render_readme(args.registry, args.results))
        os.replace(tmp, out)
        print(f"wrote {out}")
    return 0
