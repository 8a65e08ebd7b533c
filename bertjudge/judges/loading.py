"""The Python API: ``Judge.load(spec)`` then ``judge.score(questions, candidates, references)``.

One spec grammar for every command and for Python: ``regex``, ``contains``, a routing judge over such specs
(``hybrid:<judge>``, ``cascade:<judge>[,<expensive judge>][?band=LOW,HIGH][&rules=match|parsed]``,
``by-category:…``), or a model's name as ``bertjudge.zoo.uri.parse_uri`` reads it (the one resolver): an exported
judge folder, a zoo name, a Hugging Face Hub id ``hf://org/name[@revision]``, or the URL of a judge server
(``http://host:port`` or ``https://…``: the judge ``python -m bertjudge serve`` serves there, as a
``judges.remote.RemoteJudge``; its bearer token from ``$BERTJUDGE_TOKEN``).

A Hub id is fetched and checked by ``bertjudge.zoo.hub.download`` (the download path ``zoo pull`` takes too: only the
files of a judge folder, from the local Hugging Face cache when offline, checked at every load against the Hub's
hashes or the sha256 recorded at the first download); its commit is recorded in the judge's provenance
(``hub: {repo, revision, commit}``).
"""

from __future__ import annotations

from pathlib import Path

import torch

from bertjudge.core.formats import JudgeFormat
from bertjudge.core.judge_file import has_judge_file, read_judge_config
from bertjudge.judges.interface import BaseJudge
from bertjudge.judges.kinds import judge_class
from bertjudge.judges.regex import ContainsJudge, RegexJudge
from bertjudge.judges.remote import RemoteJudge
from bertjudge.judges.routing import (
    SPEC_HELP,
    ByCategoryJudge,
    CascadeJudge,
    HybridJudge,
    checked_options,
    is_routed,
    split_spec,
)
from bertjudge.zoo import hub
from bertjudge.zoo import registry as zoo
from bertjudge.zoo.uri import ModelURI, parse_uri

BUILT_IN = {"regex": RegexJudge, "contains": ContainsJudge}  # the rule judges, by name


def not_a_judge(where: str) -> FileNotFoundError:
    return FileNotFoundError(
        f"{where}: not a judge folder (no judge.json); give 'regex', 'contains', the folder that `fit` exported, "
        f"a zoo name, a Hub id of an exported judge (hf://org/name[@revision]), the URL of a judge server "
        f"(http://host:port), {SPEC_HELP}"
    )


def folder_of_path(uri: ModelURI) -> tuple[Path, None]:
    return Path(uri.location), None


def folder_of_zoo_name(uri: ModelURI) -> tuple[Path, None]:
    """A zoo name: pulled and verified once, then cached (``zoo.pull``)."""
    if not zoo.is_registered(uri.location):
        raise not_a_judge(f"{uri.location} (no such folder, nor a name in {zoo.registry_path()})")
    return zoo.pull(uri.location), None


def folder_of_hub_id(uri: ModelURI) -> tuple[Path, dict]:
    """A Hub id: its checked snapshot (``hub.download``) and what the judge records of it."""
    snapshot = hub.download(uri)
    return snapshot.folder, snapshot.provenance()


# the folder a name resolves to, by its scheme (bertjudge.zoo.uri), and the Hub provenance when it came from there
FOLDERS = {"path": folder_of_path, "file": folder_of_path, "zoo": folder_of_zoo_name, "hf": folder_of_hub_id}


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
        ``judge.json``), a zoo name, a Hugging Face Hub id (``hf://org/name`` or ``hf://org/name@revision``), the URL
        of a judge server (``http://host:port``, ``https://host[/path]``: a ``RemoteJudge`` scoring with the judge
        ``python -m bertjudge serve`` serves there; the bearer token from ``$BERTJUDGE_TOKEN``), or a
        routing judge (``bertjudge.judges.routing``) over such specs:

        - ``hybrid:<judge>``: regex where it extracts an answer, ``<judge>`` on the other rows;
        - ``cascade:<judge>[,<expensive judge>][?band=LOW,HIGH][&rules=match|parsed]``: regex on the
          rows it parses and finds matching (``rules=parsed``: every row it parses), then ``<judge>``
          where its score is outside ``[LOW, HIGH]`` (default ``0.2,0.8``), then the expensive judge
          on the rest (without one, ``<judge>`` decides them), e.g.
          ``cascade:runs/quickstart/judge,runs/llm-judge?band=0.1,0.9``.

        ``format`` (optional) is checked against the format the judge (a routing judge's model) was
        trained with. ``revision`` (a Hub id only, the keyword form of ``@revision``): a branch, tag or commit id
        (default ``main``); the commit it resolves to is recorded in ``judge.provenance["hub"]``. ``device``
        (``"cuda"``, ``"cpu"``…) moves a trained judge there, ``dtype`` (``"bfloat16"``, ``torch.float16``…) casts its
        weights; rule judges have nothing to move. A folder whose ``judge.json`` names a class that is not a registered
        judge kind (``bertjudge.judges.kinds``) is refused before its module is imported, unless
        ``trust_remote_code`` (then the class is imported and must still be a judge). A name in another spelling
        (``hf:org/name``, a bare ``org/name`` that is no folder) is a one-line ``URIError`` naming the right one.
        """
        dtype = checked_dtype(dtype)
        if is_routed(spec):
            if revision is not None:
                raise ValueError(
                    f"{spec!r}: revision= applies to one Hub id; write hf://org/name@revision inside the spec"
                )
            return from_spec(spec, format, device=device, dtype=dtype, trust_remote_code=trust_remote_code)
        if spec in BUILT_IN:
            if revision is not None:
                raise ValueError(f"{spec!r}: revision= applies to a Hub id (hf://org/name), not to a built-in judge")
            return BUILT_IN[spec]()
        uri = parse_uri(spec)
        if uri.scheme in ("http", "https"):
            if revision is not None or device is not None or dtype is not None:
                raise ValueError(
                    f"{spec!r}: revision=, device= and dtype= apply to a local judge; the server places its own"
                )
            judge = RemoteJudge(spec)
            judge.check_format(format)
            return judge
        uri = uri.at(revision)
        folder, hub_provenance = FOLDERS[uri.scheme](uri)
        if not has_judge_file(folder):
            raise not_a_judge(f"{uri} (Hub commit {hub_provenance['commit']})" if hub_provenance else spec)
        cls = judge_class(read_judge_config(folder)["class"], str(folder / "judge.json"), trust_remote_code)
        judge = cls.from_export(folder, format=format)
        if hub_provenance is not None and judge.provenance is not None:
            judge.provenance["hub"] = hub_provenance
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
