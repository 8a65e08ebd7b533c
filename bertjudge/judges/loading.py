"""The Python API: ``Judge.load(spec)`` then ``judge.score(questions, candidates, references)``.

One spec grammar for every command and for Python: ``regex``, ``contains``, an exported judge folder,
a zoo name, a Hugging Face Hub id (``org/name``, ``org/name@revision``), the URL of a judge server
(``http://host:port`` or ``https://…``: the judge ``python -m bertjudge serve`` serves there, as a
``judges.remote.RemoteJudge``; its bearer token from ``$BERTJUDGE_TOKEN``), or a routing judge over such specs
(``hybrid:<judge>``, ``cascade:<judge>[,<expensive judge>][?band=LOW,HIGH][&rules=match|parsed]``).

A Hub id is fetched with ``huggingface_hub.snapshot_download`` (offline, ``HF_HUB_OFFLINE=1``: from the
local Hugging Face cache), only the files of a judge folder (``allow_patterns``:
``core.judge_file.JUDGE_FOLDER_PATTERNS``; the repository's other files, such as .gitattributes, images or a
training log, are neither downloaded nor checked), its commit is recorded in the judge's provenance
(``hub: {repo, revision, commit}``), and those files are checked on every load: against the hashes the Hub names them by (a cached
file is a link to ``blobs/<sha256>`` for LFS files, ``blobs/<git blob sha1>`` for the others; the cached
tree listing gives the same ids), and, where no such hash is at hand, against the sha256 recorded at the
first load (``<repo cache folder>/bertjudge/<commit>.manifest.json``).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path

import torch
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

from bertjudge.core.formats import JudgeFormat
from bertjudge.core.judge_file import (
    JUDGE_FOLDER_PATTERNS,
    JudgeFileError,
    has_judge_file,
    judge_folder_files,
    read_judge_config,
)
from bertjudge.judges.interface import BaseJudge
from bertjudge.judges.kinds import judge_class
from bertjudge.judges.regex import ContainsJudge, RegexJudge
from bertjudge.judges.remote import RemoteJudge, is_remote
from bertjudge.judges.routing import (
    SPEC_HELP,
    ByCategoryJudge,
    CascadeJudge,
    HybridJudge,
    checked_options,
    is_routed,
    split_spec,
)
from bertjudge.zoo import registry as zoo

HUB_ID = re.compile(r"^(?P<repo>[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*)(?:@(?P<revision>[^\s@]+))?$")
GIT_SHA1 = re.compile(r"^[0-9a-f]{40}$")
SHA256 = re.compile(r"^[0-9a-f]{64}$")


class Judge:
    """Loads any judge; every judge answers ``score(questions, candidates, references)`` and
    ``score_records(records)`` with P(correct), batched and deterministic."""

    @staticmethod
    def load(
        spec: str,
        format: JudgeFormat | None = None,
        revision: str | None = None,
        device: str | torch.device | None = None,
        dtype: str | torch.dtype | None = None,
        trust_remote_code: bool = False,
    ) -> BaseJudge:
        """``regex``, ``contains`` (a reference contained in the answer), the path of an exported judge folder (with
        ``judge.json``), a zoo name, a Hugging Face Hub id (``org/name``, or ``org/name@revision``), the URL of a
        judge server (``http://host:port``, ``https://host[/path]``: a ``RemoteJudge`` scoring with the judge
        ``python -m bertjudge serve`` serves there; the bearer token from ``$BERTJUDGE_TOKEN``), or a
        routing judge (``bertjudge.judges.routing``) over such specs:

        - ``hybrid:<judge>``: regex where it extracts an answer, ``<judge>`` on the other rows;
        - ``cascade:<judge>[,<expensive judge>][?band=LOW,HIGH][&rules=match|parsed]``: regex on the
          rows it parses and finds matching (``rules=parsed``: every row it parses), then ``<judge>``
          where its score is outside ``[LOW, HIGH]`` (default ``0.2,0.8``), then the expensive judge
          on the rest (without one, ``<judge>`` decides them), e.g.
          ``cascade:runs/quickstart/judge,runs/llm-judge?band=0.1,0.9``.

        ``format`` (optional) is checked against the format the judge (a routing judge's model) was
        trained with. ``revision`` (a Hub id only): a branch, tag or commit id (default ``main``); the
        commit it resolves to is recorded in ``judge.provenance["hub"]``. ``device`` (``"cuda"``,
        ``"cpu"``…) moves a trained judge there, ``dtype`` (``"bfloat16"``, ``torch.float16``…) casts its
        weights; rule judges have nothing to move. A folder whose ``judge.json`` names a class that is not a registered
        judge kind (``bertjudge.judges.kinds``) is refused before its module is imported, unless
        ``trust_remote_code`` (then the class is imported and must still be a judge).
        """
        dtype = checked_dtype(dtype)
        if is_routed(spec):
            if revision is not None:
                raise ValueError(f"{spec!r}: revision= applies to one Hub id; write org/name@revision inside the spec")
            return from_spec(spec, format, device=device, dtype=dtype, trust_remote_code=trust_remote_code)
        if is_remote(spec):
            if revision is not None or device is not None or dtype is not None:
                raise ValueError(
                    f"{spec!r}: revision=, device= and dtype= apply to a local judge; the server places its own"
                )
            judge = RemoteJudge(spec)
            judge.check_format(format)
            return judge
        if spec in ("regex", "contains"):
            if revision is not None:
                raise ValueError(f"{spec!r}: revision= applies to a Hub id (org/name), not to a built-in judge")
            return RegexJudge() if spec == "regex" else ContainsJudge()
        folder, hub = Path(spec), None
        if not folder.exists() and zoo.is_registered(spec):  # a zoo name: pulled and verified once, then cached
            folder = zoo.pull(spec)
        elif not folder.exists() and HUB_ID.match(spec):
            folder, hub = hub_snapshot(spec, revision)
        if revision is not None and hub is None:
            raise ValueError(f"{spec!r}: revision= applies to a Hub id (org/name), not to a folder or a zoo name")
        if not has_judge_file(folder):
            where = f"{spec} (Hub commit {hub['commit']})" if hub else spec
            raise FileNotFoundError(
                f"{where}: not a judge folder (no judge.json); give 'regex', 'contains', the "
                f"folder that `fit` exported, a zoo name, a Hub id of an exported judge, the URL of a judge "
                f"server (http://host:port), {SPEC_HELP}"
            )
        cls = judge_class(read_judge_config(folder)["class"], str(folder / "judge.json"), trust_remote_code)
        judge = cls.from_export(folder, format=format)
        if hub is not None and judge.provenance is not None:
            judge.provenance["hub"] = hub
        return judge.place(device, dtype)


def checked_dtype(dtype: str | torch.dtype | None) -> torch.dtype | None:
    """A floating ``torch.dtype`` from a dtype or its name (``bfloat16``, ``torch.float16``, ``bf16``…)."""
    if dtype is None or isinstance(dtype, torch.dtype) and dtype.is_floating_point:
        return dtype
    aliases = {"bf16": "bfloat16", "fp16": "float16", "half": "float16", "fp32": "float32", "float": "float32"}
    name = str(dtype).removeprefix("torch.")
    found = getattr(torch, aliases.get(name, name), None) if isinstance(dtype, str) else None
    if not isinstance(found, torch.dtype) or not found.is_floating_point:
        raise ValueError(f"dtype {dtype!r}: give a floating dtype such as 'float32', 'bfloat16' or 'float16'")
    return found


# --- the Hugging Face Hub --------------------------------------------------------------------------
def hub_snapshot(spec: str, revision: str | None = None) -> tuple[Path, dict]:
    """The local snapshot folder of Hub id ``spec`` (``org/name`` or ``org/name@revision``) at ``revision``
    (default ``main``) and ``{repo, revision, commit}``: the files of a judge folder fetched with
    ``snapshot_download`` (offline: from the local cache), then checked (``check_hub_files``). A revision the Hub (or, offline, the cache) does
    not have is a ``FileNotFoundError``; a changed file a ``JudgeFileError``; each one line."""
    match = HUB_ID.match(spec)
    repo, in_spec = match["repo"], match["revision"]
    if in_spec and revision and in_spec != revision:
        raise ValueError(f"{spec!r}: the spec names revision {in_spec!r} but revision={revision!r} was given")
    revision = in_spec or revision
    shown = f"{repo}@{revision or 'main'}"
    try:
        snapshot = Path(snapshot_download(repo, revision=revision, allow_patterns=list(JUDGE_FOLDER_PATTERNS)))
    except RevisionNotFoundError:
        raise FileNotFoundError(f"{shown}: the Hub repository has no revision {revision!r}") from None
    except (RepositoryNotFoundError, GatedRepoError):
        raise FileNotFoundError(
            f"{spec}: not a judge folder, a zoo name or a Hub repository (or it is private or gated "
            "and no token was given)"
        ) from None
    except IncompleteSnapshotError as err:
        raise JudgeFileError(f"{shown}: {str(err).split(' Re-run')[0]} Load it again with the network on") from None
    except LocalEntryNotFoundError:
        why = "HF_HUB_OFFLINE is set" if constants.is_offline_mode() else "the Hub could not be reached"
        raise FileNotFoundError(
            f"{shown}: not a judge folder or a zoo name, and no revision {revision or 'main'!r} of "
            f"{repo} in the local Hugging Face cache ({constants.HF_HUB_CACHE}; {why})"
        ) from None
    except HfHubHTTPError as err:  # the Hub down, a refused token
        raise FileNotFoundError(f"{shown}: {' '.join(str(err).split())}") from None
    commit = snapshot.name
    check_hub_files(snapshot, repo, commit)
    return snapshot, {"repo": repo, "revision": revision or "main", "commit": commit}


def git_blob_sha1(path: Path) -> str:
    """The git blob id of a file (``git hash-object``): the id the Hub gives a file kept outside LFS."""
    digest = hashlib.sha1(f"blob {path.stat().st_size}\0".encode())
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def snapshot_files(snapshot: Path) -> list[str]:
    """The files of a snapshot that belong to the judge (``JUDGE_FOLDER_PATTERNS``); the others are ignored."""
    return judge_folder_files(zoo.folder_files(snapshot))


def hub_hashes(snapshot: Path, repo: str, commit: str) -> dict[str, tuple[str, str]]:
    """``{file: (algorithm, digest)}`` for the snapshot's judge files the Hub gives a hash: a cached file links to
    its blob, named by the file's sha256 (LFS) or git blob id (the others). The cached tree listing, when
    there is one, must name the same git blob id (a link switched to another blob is caught)."""
    try:
        listed = {f.path: f.blob_id for f in get_cached_repo_tree(repo, revision=commit)}
    except CachedRepoTreeNotFoundError:
        listed = {}
    found = {}
    for rel in snapshot_files(snapshot):
        path = snapshot / rel
        blob = Path(os.path.realpath(path)).name if path.is_symlink() else ""
        if SHA256.match(blob):
            found[rel] = ("sha256", blob)
        elif GIT_SHA1.match(blob):
            if rel in listed and listed[rel] != blob:
                raise JudgeFileError(
                    f"{path}: links to blob {blob}, but the Hub lists {listed[rel]} for {repo}@"
                    f"{commit}; the cache was changed: delete the snapshot and load again"
                )
            found[rel] = ("git-sha1", blob)
    return found


def check_hub_files(snapshot: Path, repo: str, commit: str) -> None:
    """Refuse a snapshot whose judge files (``snapshot_files``) differ from the Hub's hashes (``hub_hashes``) or,
    for files without one, from the sha256 recorded at the first load in the manifest (written then)."""
    known = hub_hashes(snapshot, repo, commit)
    for rel, (algorithm, expected) in known.items():
        got = zoo.sha256(snapshot / rel) if algorithm == "sha256" else git_blob_sha1(snapshot / rel)
        if got != expected:
            raise JudgeFileError(
                f"{snapshot / rel}: {algorithm} {got} differs from the Hub's {expected} for {repo}@"
                f"{commit}; the file was changed after download: delete the snapshot and load again"
            )
    rest = {rel: zoo.sha256(snapshot / rel) for rel in snapshot_files(snapshot) if rel not in known}
    manifest = snapshot.parent.parent / "bertjudge" / f"{commit}.manifest.json"
    recorded = zoo.read_json(manifest).get("files")
    if recorded is None:
        if rest:
            try:
                manifest.parent.mkdir(parents=True, exist_ok=True)
                tmp = manifest.with_name(f".{manifest.name}.tmp")
                tmp.write_text(json.dumps({"repo": repo, "commit": commit, "files": rest}, indent=2) + "\n")
                os.replace(tmp, manifest)
            except OSError:  # a read-only cache: nothing recorded, nothing to compare later
                pass
        return
    changed = sorted(rel for rel in set(rest) | set(recorded) if rest.get(rel) != recorded.get(rel))
    if changed:
        rel = changed[0]
        what = "is new" if rel not in recorded else "is missing" if rel not in rest else "changed"
        raise JudgeFileError(
            f"{snapshot / rel}: {what} since the first load of {repo}@{commit} (sha256 recorded in "
            f"{manifest}); delete the snapshot and load again"
        )


def from_spec(spec: str, format=None, device=None, dtype=None, trust_remote_code: bool = False) -> BaseJudge:
    """A ``HybridJudge`` from ``hybrid:<judge>``, a ``CascadeJudge`` from
    ``cascade:<judge>[,<expensive judge>][?band=LOW,HIGH][&rules=match|parsed]``, a ``ByCategoryJudge`` from
    ``by-category:<judge>?<category>=<judge>&…``; each ``<judge>`` is any ``Judge.load`` spec (an exported
    folder, a zoo name, ``regex``). ``format`` is checked against the model's."""
    kind, judges, options = split_spec(spec)
    if kind == "by-category":
        if len(judges) != 1 or not judges[0] or not options or not all(options.values()):
            raise ValueError(f"{spec!r}: expected {SPEC_HELP}")
        default = Judge.load(judges[0], format=format, device=device, dtype=dtype, trust_remote_code=trust_remote_code)
        routes = {
            category: Judge.load(route, device=device, dtype=dtype, trust_remote_code=trust_remote_code)
            for category, route in options.items()
        }
        try:
            return ByCategoryJudge(default, routes)
        except ValueError as err:
            raise ValueError(f"{spec!r}: {err}") from None
    allowed = {"hybrid": set(), "cascade": {"band", "rules"}}.get(kind)
    counts = {"hybrid": (1,), "cascade": (1, 2)}.get(kind, ())
    if allowed is None or len(judges) not in counts or not all(judges):
        raise ValueError(f"{spec!r}: expected {SPEC_HELP}")
    if set(options) - allowed:
        raise ValueError(
            f"{spec!r}: unknown option(s) {sorted(set(options) - allowed)}; {kind} accepts {sorted(allowed) or 'none'}"
        )
    try:  # checked before any judge is loaded
        low, high = map(float, options.get("band", "0.2,0.8").split(","))
    except ValueError:
        raise ValueError(f"{spec!r}: band must be two numbers LOW,HIGH, got {options['band']!r}") from None
    try:
        rules_accept, band = checked_options(options.get("rules", "match"), (low, high))
    except ValueError as err:
        raise ValueError(f"{spec!r}: {err}") from None
    model = Judge.load(judges[0], format=format, device=device, dtype=dtype, trust_remote_code=trust_remote_code)
    if kind == "hybrid":
        return HybridJudge(model)
    expensive = (
        Judge.load(judges[1], device=device, dtype=dtype, trust_remote_code=trust_remote_code)
        if len(judges) == 2
        else None
    )
    return CascadeJudge(model, expensive, rules_accept=rules_accept, band=band)


def set_precision(judge: BaseJudge, precision: str, check_records: list[dict] | None = None) -> dict[str, list]:
    """Score with ``precision`` (``fp32``, ``bf16``, ``int8`` or ``auto``) in every trained part of ``judge``
    (a routing judge's model and expensive judge); rule-based and prompted parts are unchanged. Returns,
    per trained part, the checks ``auto`` made on ``check_records`` (``JudgeModule.set_precision``)."""
    return {
        part.name: part.set_precision(precision, check_records)
        for part in judge.parts()
        if "precision" in part.features
    }
