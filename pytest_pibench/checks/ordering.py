"""Argument-aware ordering: ``call_before_call`` (ours; upstream has no such type).

Upstream's ``tool_before_tool`` compares the first call of one tool with the
first call of another, whatever their arguments, so a look-up of the wrong
record (another employee, the other item's product) satisfies "read the record
before acting". ``call_before_call`` counts only the calls that match:

* a call *matches* a side when its tool is the side's tool and it has every
  key/value of the side's ``*_arguments`` (upstream's subset match of
  ``tool_called_with``, with the check's ``match`` normalisers); a side without
  arguments matches every call of its tool;
* the check passes iff a matching ``second`` call exists, a matching ``first``
  call exists, and the first matching ``first`` call comes before the first
  matching ``second`` call. Equivalently: every matching ``second`` call is
  preceded by a matching ``first`` call ("do X before any Y"), and Y was done.

Like upstream's ordering, every attempted call counts (errored and blocked ones
too). At least one side must have arguments: without any, the check says what
``tool_before_tool`` says, and that is the type to use. ``tool_before_tool``
itself is unchanged.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import Field, model_validator

from pytest_pibench.checks.base import CheckContext, CheckModel, CheckType, NonEmptyStr, Outcome
from pytest_pibench.checks.matching import MATCH_FIELD_DESCRIPTION, Normaliser, arguments_match, match_problems
from pytest_pibench.checks.registry import register_check
from pytest_pibench.transcript import TraceEntry

__all__ = ["CallBeforeCallCheck", "first_matching_call"]


def first_matching_call(
    trace: Sequence[TraceEntry], tool: str, arguments: Mapping[str, Any] | None, match: Mapping[str, Normaliser]
) -> int | None:
    """The index of the first call of ``tool`` whose arguments match ``arguments`` (any call when None)."""
    return next(
        (
            i
            for i, entry in enumerate(trace)
            if entry.tool_name == tool and arguments_match(entry.arguments, arguments or {}, match)
        ),
        None,
    )


class CallBeforeCallCheck(CheckModel):
    """Passes iff the first call of ``first_tool`` matching ``first_arguments`` precedes the first call of
    ``second_tool`` matching ``second_arguments`` (both must exist): every matching second call then has a
    matching first call before it."""

    type: Literal["call_before_call"]
    first_tool: NonEmptyStr
    first_arguments: dict[str, Any] | None = Field(
        None, description="Subset the first call must have (any call of first_tool when absent)."
    )
    second_tool: NonEmptyStr
    second_arguments: dict[str, Any] | None = Field(
        None, description="Subset the second call must have (any call of second_tool when absent)."
    )
    match: dict[str, Normaliser] | None = Field(None, description=MATCH_FIELD_DESCRIPTION)

    @model_validator(mode="after")
    def _arguments_given(self) -> CallBeforeCallCheck:
        if not (self.first_arguments or self.second_arguments):
            raise ValueError("give first_arguments or second_arguments (without either, use tool_before_tool)")
        problems = match_problems(self.match or {}, self.first_arguments, self.second_arguments)
        if problems:
            raise ValueError("; ".join(problems))
        return self


def _side(tool: str, arguments: Mapping[str, Any] | None) -> str:
    return f"{tool}({json.dumps(arguments, default=str)})" if arguments else tool


def _call_before_call(check: CallBeforeCallCheck, context: CheckContext) -> Outcome:
    match = check.match or {}
    i = first_matching_call(context.trace, check.first_tool, check.first_arguments, match)
    j = first_matching_call(context.trace, check.second_tool, check.second_arguments, match)
    ok = i is not None and j is not None and i < j
    first, second = _side(check.first_tool, check.first_arguments), _side(check.second_tool, check.second_arguments)
    where = f"first matching {first} at {'-' if i is None else i}, first matching {second} at {'-' if j is None else j}"
    return ok, f"call_before_call({first}, {second})={ok}; {where}"


register_check(
    CheckType(
        CallBeforeCallCheck,
        _call_before_call,
        dimension="ordering",
        tools={"first_tool": "before", "second_tool": "after"},
    )
)
