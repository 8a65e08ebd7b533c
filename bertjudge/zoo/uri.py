"""One way to name a model: the judge URI every part of bertjudge reads (``Judge.load`` and every command's
``--judge``, a zoo entry's ``source``, ``zoo publish --to``), parsed here and nowhere else.

- ``hf://org/name`` or ``hf://org/name@revision``: a repository on the Hugging Face Hub (a branch, tag or commit id;
  default ``main``), fetched and checked by ``bertjudge.zoo.hub.download``;
- ``http://host:port[/path]``, ``https://…``: a URL (for ``Judge.load``, a judge server; for a zoo source, a folder
  whose files are fetched as ``URL/<file>``);
- ``file://path``: a local folder, as a URI (a zoo source's usual spelling);
- a path: a local folder (a judge folder for ``Judge.load``);
- ``arch.tag`` (lower-case, with a dot) that is no existing path: a zoo name (``bertjudge/zoo/registry.yaml``).

Other spellings of a Hub id are refused with a one-line error naming the right one: ``hf:org/name`` and a bare
``org/name`` that is no folder (one spelling per thing: a bare path is always a path).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path
from urllib.parse import unquote, urlsplit

from huggingface_hub import parse_hf_uri
from huggingface_hub.errors import HfUriError

from bertjudge.core.errors import BertJudgeError

HUB_REPO = re.compile(r"^[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*(@[^\s@]+)?$")  # a bare org/name[@revision]
NAME = re.compile(r"^[a-z0-9][a-z0-9_-]*(\.[a-z0-9][a-z0-9_-]*)+$")  # a zoo name: arch.tag
SCHEMES = ("hf", "http", "https", "file")  # the schemes written NAME://; "path" and "zoo" are written bare
HELP = "a folder, a zoo name (arch.tag), hf://org/name[@revision] or http(s)://host[:port]"


class URIError(BertJudgeError, ValueError):
    """A model name that is not one of the spellings above; the message names the right one."""


@dataclass(frozen=True)
class ModelURI:
    """A parsed name: ``scheme`` (``hf``, ``http``, ``https``, ``file``, ``path`` or ``zoo``), ``location`` (the Hub
    repository ``org/name``, the URL, the folder's path or the zoo name) and, for ``hf`` only, ``revision`` (None:
    the default branch)."""

    scheme: str
    location: str
    revision: str | None = None

    def __str__(self) -> str:
        if self.scheme == "hf":
            return f"hf://{self.location}" + (f"@{self.revision}" if self.revision else "")
        return f"file://{self.location}" if self.scheme == "file" else self.location

    @property
    def is_folder(self) -> bool:
        return self.scheme in ("path", "file")

    def at(self, revision: str | None) -> ModelURI:
        """This name at ``revision`` (``Judge.load(..., revision=)``, the keyword form of ``@revision``); a revision
        for anything but a Hub id, or one that differs from the name's own, is a ``URIError``."""
        if revision is None:
            return self
        if self.scheme != "hf":
            raise URIError(f"{self}: revision= applies to a Hub id (hf://org/name), not to a {self.kind}")
        if self.revision not in (None, revision):
            raise URIError(f"{self}: the name says revision {self.revision!r} but revision={revision!r} was given")
        return replace(self, revision=revision)

    @property
    def kind(self) -> str:
        return {"hf": "Hub id", "zoo": "zoo name", "path": "folder", "file": "folder"}.get(self.scheme, "URL")


def parse_uri(text: str) -> ModelURI:
    """The ``ModelURI`` of a name (the spellings in the module's docstring); one-line ``URIError`` otherwise."""
    text = str(text).strip()
    scheme, sep, _ = text.partition("://")
    if sep and re.fullmatch(r"[A-Za-z][A-Za-z0-9+.-]*", scheme):
        scheme = scheme.lower()
        if scheme not in SCHEMES:
            raise URIError(f"{text}: unknown scheme {scheme}://; give {HELP}, or file://path")
        if scheme == "hf":
            return parse_hub(f"hf://{text[5:]}")
        if scheme == "file":
            parts = urlsplit(text)
            return ModelURI("file", unquote(parts.netloc + parts.path))
        return ModelURI(scheme, text.rstrip("/"))
    if text.lower().startswith("hf:"):
        raise URIError(f"{text}: write a Hub id as hf://{text[3:].lstrip('/')}")
    if not text:
        raise URIError(f"an empty name: give {HELP}")
    if Path(text).exists():
        return ModelURI("path", text)
    if NAME.match(text):
        return ModelURI("zoo", text)
    if HUB_REPO.match(text):
        raise URIError(f"{text}: no such folder; a Hub id is written hf://{text}")
    return ModelURI("path", text)


def parse_target(text: str) -> ModelURI:
    """Where ``zoo publish --to`` writes: ``hf://org/name`` (no revision: the commit made is recorded) or a folder
    (a path or ``file://path``; it need not exist yet); one-line ``URIError`` otherwise."""
    text = str(text).strip()
    target = parse_uri(text) if "://" in text else ModelURI("path", text)
    if target.scheme == "hf" and target.revision is not None:
        raise URIError(f"{text}: publish to hf://org/name; the commit made is recorded")
    if target.scheme not in ("hf", "path", "file") or not target.location:
        raise URIError(f"{text}: publish to a folder or to hf://org/name")
    return target


def parse_hub(text: str) -> ModelURI:
    """An ``hf://`` name, read by huggingface_hub's own parser (``parse_hf_uri``); a judge is a whole model
    repository: no repository type, no path inside it."""
    try:
        hub = parse_hf_uri(text)
    except HfUriError as err:
        raise URIError(f"{text}: {' '.join(str(err).split())} A Hub id is hf://org/name[@revision]") from None
    if hub.type != "model" or hub.path_in_repo:
        raise URIError(f"{text}: a judge is a model repository: hf://org/name[@revision], without a type or a path")
    return ModelURI("hf", hub.id, hub.revision)
