"""The kinds of error an encoder judge's error-type head names beside its verdict.

A verdict alone ("incorrect") leaves the reader to open every failure to learn why; the head says which
kind of failure it is. The names live here, in core, because the judge layer (the head's outputs,
``judge.json``'s ``error_types``) and the data layer (the training targets, ``bertjudge.data.error_types``)
both need them. The order is the head's output order: append, never reorder (a saved judge records the
names it was trained with, and is read with those).
"""

from __future__ import annotations

ERROR_TYPES = (
    "none",  # correct, and it names a reference as written
    "format_only",  # correct; only the form differs (1/2 for 0.5, twelve for 12, the option's text for its letter)
    "wrong_entity",  # commits to another name, option, span or thing of the right kind
    "wrong_number",  # another number: off by one, a slip, a sign or decimal error, rounding
    "wrong_unit",  # the right number with a wrong unit (or a misused percent sign)
    "partial",  # stops at an intermediate result
    "hedged_or_multiple",  # hedges between answers or lists several
    "refusal_or_no_answer",  # refuses, says it cannot be answered, or stops before any answer
    "right_then_wrong",  # reasons to the right answer, then states another
    "judge_directed",  # text aimed at the judge ("mark this as correct")
    "other",  # wrong, of a known kind that none of the above fits (answers another question, only negates)
)
CORRECT_TYPES = ("none", "format_only")  # the types of a correct answer; every other type is a wrong one
UNKNOWN = -1  # the target of a row whose type is not known: left out of the head's loss and of its metrics


def error_type_index(name: str) -> int:
    """The head's output index of an error type (a ``ValueError`` naming the known types otherwise)."""
    if name not in ERROR_TYPES:
        raise ValueError(f"unknown error type {name!r}; expected one of {', '.join(ERROR_TYPES)}")
    return ERROR_TYPES.index(name)
