"""The judge classes a judge folder may name, registered by name: a folder is data, not code.

A judge folder's ``judge.json`` names its class (``"class": "bertjudge.judges.encoder.EncoderJudge"``). A folder
from the Hub or from a colleague could name any module, and importing it runs its code, so ``Judge.load`` imports
only the classes registered here — bertjudge's own, and those a program registers with ``register`` — and refuses
any other before importing it, unless the caller passes ``trust_remote_code=True`` (as ``transformers`` does), which
imports the named module and still checks that the class is a judge.
"""

from __future__ import annotations

import importlib

from bertjudge.core.judge_file import JudgeFileError
from bertjudge.core.registry import Registry
from bertjudge.judges.interface import BaseJudge

# judge.json's "class" of every judge kind bertjudge exports; nothing is imported until a folder asks for it.
# Not here, on purpose: bertjudge.judges.remote.RemoteJudge (a judge served over HTTP) is loaded by its URL only; a
# folder naming it would send the rows, and $BERTJUDGE_TOKEN, to whatever server a downloaded folder names.
BUILTIN_JUDGE_CLASSES: frozenset[str] = frozenset(
    {
        "bertjudge.judges.encoder.EncoderJudge",
        "bertjudge.judges.generative.GenerativeJudge",
        "bertjudge.judges.bleurt.BleurtJudge",
        "bertjudge.judges.backends.PromptedJudge",
        "bertjudge.judges.regex.RegexJudge",
        "bertjudge.judges.regex.ContainsJudge",
    }
)
# judge.json's "class" -> the class (None until a folder asks for it), and those a program registers (``register``)
JUDGE_CLASSES: Registry[type[BaseJudge] | None] = Registry("judge class", dict.fromkeys(BUILTIN_JUDGE_CLASSES))


def is_judge(obj) -> bool:
    """Whether ``obj`` is a judge (an instance of a judge class), not a spec that names one: what an API taking
    "a judge or a ``Judge.load`` spec" asks, so that no caller checks a judge's type itself."""
    return isinstance(obj, BaseJudge)


def register(cls: type[BaseJudge]) -> type[BaseJudge]:
    """Let folders whose ``judge.json`` names ``cls`` load without ``trust_remote_code`` (usable as a decorator)."""
    if not (isinstance(cls, type) and issubclass(cls, BaseJudge)):
        raise TypeError(f"{cls!r} is not a judge class (a subclass of BaseJudge)")
    return JUDGE_CLASSES.register(f"{cls.__module__}.{cls.__qualname__}", cls)


def judge_class(class_path: str, where: str, trust_remote_code: bool = False) -> type[BaseJudge]:
    """The class ``class_path`` (from ``where``, a judge.json), imported only when registered or trusted."""
    if class_path not in JUDGE_CLASSES and not trust_remote_code:
        raise JudgeFileError(
            f"{where}: class {class_path!r} is not a registered judge class, so it was not imported (a judge folder "
            f"could name any module); pass trust_remote_code=True (--trust-remote-code) if you trust this folder. "
            f"Available: {JUDGE_CLASSES.available()}"
        )
    module, _, name = class_path.rpartition(".")
    try:
        cls = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError, ValueError):
        raise JudgeFileError(f"{where}: unknown judge class {class_path!r}") from None
    if not (isinstance(cls, type) and issubclass(cls, BaseJudge)):
        raise JudgeFileError(f"{where}: {class_path!r} is not a judge class")
    return cls
