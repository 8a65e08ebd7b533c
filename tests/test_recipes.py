"""docs/recipes.md and the configs: measured figures live in the docs, and every pointer between them lands."""

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RECIPES = ROOT / "docs" / "recipes.md"
CONFIGS = sorted(ROOT.glob("configs/**/*.yaml"))
POINTER = re.compile(r"Measured figures: docs/recipes\.md#(\S+)")
LINK = re.compile(r"\]\(([^)#\s]+\.md)(?:#([^)\s]+))?\)")
# what a measured figure looks like in a comment: an accuracy/ECE-like decimal, a duration, a speed, a ratio
FIGURE = re.compile(r"\b0\.\d{2,}\b|\d\s*(?:min|h)\b|\d\s*s\b|\bit/s\b|~\d+(?:\.\d+)?x\b")


def anchors(markdown: str) -> Iterator[str]:
    """The anchors GitHub gives a file's headings: lower case, punctuation but '-' and '_' dropped, spaces to
    '-', a repeated one suffixed -1, -2 …"""
    seen: dict[str, int] = {}
    for line in markdown.splitlines():
        heading = re.match(r"#{1,6} (.+)", line)
        if heading:
            slug = re.sub(r"[^\w\- ]", "", heading.group(1).strip().lower()).replace(" ", "-")
            seen[slug] = seen.get(slug, -1) + 1
            yield slug if seen[slug] == 0 else f"{slug}-{seen[slug]}"


def comments(path: Path) -> str:
    """The comments of a YAML file (a '#' at a line's start or after a space), joined."""
    return " ".join(m.group(1) for m in re.finditer(r"(?:^|\s)#(.*)$", path.read_text(), flags=re.M))


@pytest.mark.parametrize("config", CONFIGS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_a_config_comment_holds_no_measured_figure(config):
    found = FIGURE.findall(comments(config))
    assert not found, f"{config.name}: measured figures {found} belong in docs/recipes.md, not in the config"


def test_every_pointer_lands_on_its_configs_own_section():
    sections = dict(zip(anchors(RECIPES.read_text()), re.findall(r"^#{1,6} (.+)$", RECIPES.read_text(), flags=re.M)))
    pointed = 0
    for config in CONFIGS:
        for anchor in POINTER.findall(comments(config)):
            assert sections.get(anchor) == config.relative_to(ROOT).as_posix(), f"{config}: #{anchor}"
            pointed += 1
    assert pointed >= 8  # the configs whose comments held figures (issue #31)


def test_every_section_names_a_config_that_exists():
    headings = re.findall(r"^## (.+)$", RECIPES.read_text(), flags=re.M)
    assert headings and all((ROOT / heading).is_file() for heading in headings), headings


def test_every_link_in_recipes_lands():
    for target, anchor in LINK.findall(RECIPES.read_text()):
        path = (RECIPES.parent / target).resolve()
        assert path.is_file(), target
        assert anchor == "" or anchor in set(anchors(path.read_text())), f"{target}#{anchor}"
