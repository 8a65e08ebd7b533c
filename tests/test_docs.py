"""The README and the docs: no dead link, no module path that does not import, and a first screen that gets a
newcomer going (issue #45 item 5)."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted(
    {
        ROOT / "README.md",
        *(ROOT / "docs").rglob("*.md"),
        ROOT / "zoo" / "README.md",
        ROOT / "data" / "real" / "README.md",
        ROOT / "data" / "real" / "LABELLING.md",
        ROOT / "benchmarks" / "README.md",
    }
)
FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.S | re.M)
CODE_SPAN = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$", re.M)
MODULE = re.compile(r"\bbertjudge(?:\.[A-Za-z_][A-Za-z0-9_]*)+")


def rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


def prose(text: str) -> str:
    """The text a reader follows links in: fenced code blocks and inline code spans left out."""
    return CODE_SPAN.sub("", FENCE.sub("", text))


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link in a heading anchors on its text
    text = re.sub(r"[^\w\- ]", "", text.lower().replace("`", ""))
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    for heading in HEADING.findall(FENCE.sub("", page.read_text(encoding="utf-8"))):
        base = slug(heading)
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


def links(page: Path):
    for target in LINK.findall(prose(page.read_text(encoding="utf-8"))):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith("#"):
            continue  # http(s), mailto: not checked offline; a pure #anchor is the page itself
        yield target


def test_the_pages_exist():
    assert all(page.is_file() for page in PAGES), [rel(p) for p in PAGES if not p.is_file()]


@pytest.mark.parametrize("page", PAGES, ids=rel)
def test_every_relative_link_lands_on_a_file(page):
    dead = []
    for target in links(page):
        path, _, fragment = target.partition("#")
        path = path.split("?", 1)[0]
        dest = (page.parent / path).resolve()
        if not dest.exists():
            dead.append(target)
        elif fragment and dest.suffix == ".md" and fragment not in anchors(dest):
            dead.append(f"{target} (no such heading in {rel(dest)})")
    assert not dead, f"{rel(page)}: dead links {dead}"


def module_paths() -> list[str]:
    names = set()
    for page in [*PAGES, ROOT / "pyproject.toml"]:
        names.update(MODULE.findall(page.read_text(encoding="utf-8")))
    return sorted(names)


def test_module_paths_are_found():
    assert "bertjudge.evaluation.rewards" in module_paths()  # the pyproject's rl extra names it


@pytest.mark.parametrize("dotted", module_paths())
def test_every_module_path_named_imports(dotted):
    """``bertjudge.a.b`` is a module, or ``bertjudge.a.b.attr`` an attribute of one (``infer_category``,
    ``__version__``)."""
    parts = dotted.split(".")
    for i in range(len(parts), 1, -1):
        name = ".".join(parts[:i])
        try:
            obj = importlib.import_module(name)
        except ModuleNotFoundError as e:
            if e.name is None or not name.startswith(e.name):
                raise  # the module exists but a package it needs is missing
            continue
        for attr in parts[i:]:
            assert hasattr(obj, attr), f"{dotted}: {name} has no {'.'.join(parts[i:])}"
            obj = getattr(obj, attr)
        return
    pytest.fail(f"{dotted}: no such module")


def test_the_readme_first_screen():
    head = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()[:60]
    text = "\n".join(head)
    for needed in ("make quickstart", "make test", "Judge.load", "docs/index.md"):
        assert needed in text, f"README's first 60 lines lack {needed!r}"
    table = [
        i
        for i, line in enumerate(head[:-1])
        if line.startswith("|") and re.match(r"^\|(\s*:?-+:?\s*\|)+$", head[i + 1])
    ]
    assert table, "README's first 60 lines hold no markdown table"
    assert "n = " in text or "(n=" in text  # the headline says how many rows it was measured on


def test_the_readme_states_the_command_ci_runs():
    ci = (ROOT / ".ci" / "run").read_text()
    assert re.search(r"^make test$", ci, re.M)
    assert "make test" in (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_index_and_the_readme_link_every_page():
    index = ROOT / "docs" / "index.md"
    linked = {(index.parent / target.split("#")[0]).resolve() for target in links(index)}
    missing = [rel(p) for p in PAGES if p != index and p.resolve() not in linked]
    assert not missing, f"docs/index.md does not link {missing}"
    readme = {(ROOT / t.split("#")[0]).resolve() for t in links(ROOT / "README.md")}
    missing = [rel(p) for p in PAGES if p != ROOT / "README.md" and p.resolve() not in readme]
    assert not missing, f"README's where-next list does not link {missing}"
