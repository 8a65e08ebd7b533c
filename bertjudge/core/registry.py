"""One way to register things by name: judge classes (``judges.kinds.JUDGE_CLASSES``), inference backends
(``judges.backends.BACKENDS``) and labelling teachers (``pipeline.label.TEACHERS``) are each a ``Registry``.

A registry is a ``dict`` from a name to what it names, filled where the things are defined (no import side
effects: nothing registers itself by being imported elsewhere), with ``register`` for a program's own (a decorator
wraps it where the name comes from the thing, as ``judges.kinds.register`` and ``backends.register_backend`` do)
and ``lookup``, whose error lists what is available.
"""

from __future__ import annotations

from typing import Generic, TypeVar

T = TypeVar("T")


class Registry(dict[str, T], Generic[T]):
    """Things of one kind (``what``: "judge class", "backend kind", …) by name."""

    def __init__(self, what: str, items: dict[str, T] | None = None):
        super().__init__(items or {})
        self.what = what

    def register(self, name: str, thing: T) -> T:
        """Add ``thing`` under ``name`` (replacing an earlier one of that name); returns ``thing``."""
        self[name] = thing
        return thing

    def available(self) -> str:
        return ", ".join(sorted(self))

    def lookup(self, name: str, error: type[Exception] = ValueError, hint: str = "") -> T:
        """What ``name`` names, or ``error`` (one line: the name, ``hint`` and what is available)."""
        if name not in self:
            raise error(f"unknown {self.what} {name!r}{hint}. Available: {self.available()}")
        return self[name]
