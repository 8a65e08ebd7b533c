"""The package's layers import only downward, without cycles, and only at module level.

Layers, lowest first (a module may import its own layer and the ones below): core ← zoo ← judges ←
data ← evaluation ← serve ← train ← pipeline ← cli. ``bertjudge/__init__.py`` (the lazy ``Judge``) and
``__main__.py`` stand above them all. Imports inside functions are for heavy optional third-party
packages only: a ``bertjudge`` import inside a function hides a dependency from this test.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import bertjudge

LAYERS = ("core", "zoo", "judges", "data", "evaluation", "serve", "train", "pipeline", "cli")
PACKAGE = Path(bertjudge.__file__).parent


def module_sources(root: Path = PACKAGE) -> dict[str, str]:
    sources = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        sources[name] = path.read_text(encoding="utf-8")
    return sources


def layer(module: str) -> int | None:
    """The rank of a module's layer; None for the package root (``bertjudge``, ``bertjudge.__main__``)."""
    parts = module.split(".")
    if len(parts) < 2 or parts[1] not in LAYERS:
        return None
    return LAYERS.index(parts[1])


def imports(module: str, source: str, known: set[str]) -> list[tuple[str, bool, int]]:
    """(imported bertjudge module, imported at module level?, line) for each bertjudge import."""
    is_package = module in known and any(m.startswith(module + ".") for m in known)
    found = []
    tree = ast.parse(source)
    top_level = {id(node) for node in tree.body}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".") if is_package else module.split(".")[:-1]
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            names = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names]
        else:
            continue
        for name in names:
            if name == "bertjudge" or name.startswith("bertjudge."):
                while name not in known and "." in name:
                    name = name.rpartition(".")[0]
                found.append((name, id(node) in top_level, node.lineno))
    return found


def violations(sources: dict[str, str]) -> list[str]:
    """Every upward import, import cycle and function-level bertjudge import, one line each."""
    known = set(sources)
    problems, graph = [], {m: set() for m in sources}
    for module, source in sources.items():
        for target, top, line in imports(module, source, known):
            if target == module:
                continue
            graph[module].add(target)
            here, there = layer(module), layer(target)
            if here is not None and (there is None or there > here):
                problems.append(f"{module}:{line}: imports {target}, a higher layer")
            if not top and module != "bertjudge":
                problems.append(f"{module}:{line}: imports {target} inside a function")
    # cycles: a module that reaches itself
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                problems.append("import cycle: " + " -> ".join(stack[stack.index(nxt) :] + [nxt]))
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    return problems


def test_the_package_imports_only_downward_without_cycles():
    assert violations(module_sources()) == []


def test_every_module_belongs_to_a_layer():
    stray = [m for m in module_sources() if layer(m) is None and m not in ("bertjudge", "bertjudge.__main__")]
    assert stray == []


@pytest.mark.parametrize(
    "bad, expected",
    [
        (
            {"bertjudge.core.a": "from bertjudge.judges.b import X\n", "bertjudge.judges.b": "X = 1\n"},
            "bertjudge.core.a:1: imports bertjudge.judges.b, a higher layer",
        ),
        (
            {"bertjudge.core.a": "def f():\n    from bertjudge.core import b\n", "bertjudge.core.b": ""},
            "bertjudge.core.a:2: imports bertjudge.core.b inside a function",
        ),
        (
            {"bertjudge.core.a": "import bertjudge.core.b\n", "bertjudge.core.b": "from bertjudge.core import a\n"},
            "import cycle: bertjudge.core.a -> bertjudge.core.b -> bertjudge.core.a",
        ),
    ],
)
def test_the_checker_fails_on_an_upward_import_a_hidden_import_and_a_cycle(bad, expected):
    assert expected in violations(bad)


MAX_MODULE_LINES, MAX_FUNCTION_LINES = 800, 100
CORPUS = PACKAGE / "data" / "corpus"  # the procedural corpus: templates as data, exempt


def oversized(root: Path) -> list[str]:
    """Modules over ``MAX_MODULE_LINES`` lines and functions over ``MAX_FUNCTION_LINES`` under ``root``."""
    found = []
    for path in sorted(root.rglob("*.py")):
        if CORPUS in path.parents:
            continue
        text = path.read_text(encoding="utf-8")
        if len(text.splitlines()) > MAX_MODULE_LINES:
            found.append(f"{path.relative_to(root)}: {len(text.splitlines())} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    found.append(f"{path.relative_to(root)}:{node.lineno} {node.name}: {lines} lines")
    return found


def test_modules_and_functions_stay_small():
    assert oversized(PACKAGE) == []


def test_the_size_check_finds_a_long_function_and_a_long_module(tmp_path):
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    (tmp_path / "long.py").write_text(f"def f():\n{body}\n" + "\n" * MAX_MODULE_LINES)
    assert [line.split(":")[0] for line in oversized(tmp_path)] == ["long.py", "long.py"]
