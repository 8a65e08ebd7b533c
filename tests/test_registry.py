"""One registry mechanism (issue #45 item 2): judge classes, backends and teachers are each a core.registry.Registry,
looked up by name with one error that lists what is available."""

from __future__ import annotations

import pytest

from bertjudge.core.registry import Registry
from bertjudge.judges import backends, kinds
from bertjudge.pipeline import label


def test_a_registry_registers_and_looks_up_by_name_and_lists_what_is_available():
    colours = Registry("colour", {"red": 1})
    assert colours.register("blue", 2) == 2 and colours.lookup("blue") == 2 and colours["red"] == 1
    with pytest.raises(KeyError, match=r"^\"unknown colour 'green' \(try red\)\. Available: blue, red\"$"):
        colours.lookup("green", error=KeyError, hint=" (try red)")
    with pytest.raises(ValueError, match=r"^unknown colour 'x'\. Available: blue, red$"):
        colours.lookup("x")


def test_judge_classes_backends_and_teachers_are_registries():
    assert all(isinstance(r, Registry) for r in (kinds.JUDGE_CLASSES, backends.BACKENDS, label.TEACHERS))
    assert set(kinds.BUILTIN_JUDGE_CLASSES) <= set(kinds.JUDGE_CLASSES)
    assert {"openai", "transformers", "vllm"} <= set(backends.BACKENDS)
    assert set(label.TEACHERS) == {"rule", "human", "llm"}
