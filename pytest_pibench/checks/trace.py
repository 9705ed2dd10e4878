"""The POLICY checks over the tool-call trace (upstream-evaluation.md §5.2), one declaration each.

Semantics are upstream's exactly: every attempted call counts (errored,
blocked and user-requested ones too), ordering compares first occurrences,
arguments match as a subset with Python equality (a missing key reads as
``None``) unless a check names a normaliser in its optional ``match`` (ours;
absent in upstream files). Details start with upstream's text and, on failure, add what was seen.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Annotated, Any, Literal

from pydantic import AliasChoices, Field, model_validator

from pytest_pibench.checks.base import CheckContext, CheckModel, CheckType, NonEmptyStr, Outcome
from pytest_pibench.checks.canonical_decision import canonical_decision_index
from pytest_pibench.checks.matching import MATCH_FIELD_DESCRIPTION, Normaliser, arguments_match, match_problems
from pytest_pibench.checks.registry import register_check
from pytest_pibench.transcript import TraceEntry

__all__ = [
    "ToolBeforeDecisionAnyCheck",
    "ToolBeforeDecisionCheck",
    "ToolBeforeToolAnyCheck",
    "ToolBeforeToolCheck",
    "ToolCalledAnyCheck",
    "ToolCalledCheck",
    "ToolCalledMinTimesCheck",
    "ToolCalledWithCheck",
    "ToolNotCalledCheck",
]


def _first_index(trace: Sequence[TraceEntry], name: str) -> int | None:
    return next((i for i, e in enumerate(trace) if e.tool_name == name), None)


def _calls_of(trace: Sequence[TraceEntry], name: str) -> list[dict[str, Any]]:
    return [e.arguments for e in trace if e.tool_name == name]


def _before(trace: Sequence[TraceEntry], first: str, second: str) -> bool:
    if first == second:
        return False
    i, j = _first_index(trace, first), _first_index(trace, second)
    return i is not None and j is not None and i < j


def _names(trace: Sequence[TraceEntry]) -> str:
    return "[" + ", ".join(e.tool_name for e in trace) + "]"


class ToolCalledCheck(CheckModel):
    """Passes iff the trace has a call to ``tool_name``."""

    type: Literal["tool_called"]
    tool_name: NonEmptyStr


def _tool_called(check: ToolCalledCheck, context: CheckContext) -> Outcome:
    ok = _first_index(context.trace, check.tool_name) is not None
    return ok, f"tool_called({check.tool_name})={ok}" + ("" if ok else f"; calls: {_names(context.trace)}")


register_check(CheckType(ToolCalledCheck, _tool_called, dimension="outcomes", tools={"tool_name": "required"}))


class ToolNotCalledCheck(CheckModel):
    """Passes iff the trace has no call (not even an attempted one) to ``tool_name``."""

    type: Literal["tool_not_called"]
    tool_name: NonEmptyStr


def _tool_not_called(check: ToolNotCalledCheck, context: CheckContext) -> Outcome:
    count = len(_calls_of(context.trace, check.tool_name))
    ok = count == 0
    return ok, f"tool_not_called({check.tool_name})={ok}" + ("" if ok else f"; called {count} time(s)")


register_check(
    CheckType(ToolNotCalledCheck, _tool_not_called, dimension="permissibility", tools={"tool_name": "forbidden"})
)


class ToolCalledWithCheck(CheckModel):
    """Passes iff one call to ``tool_name`` has every key/value of ``arguments``.

    ``match`` (ours, optional) names a normaliser per argument (see :mod:`pytest_pibench.checks.matching`);
    without it every argument compares exactly, as upstream.
    """

    type: Literal["tool_called_with"]
    tool_name: NonEmptyStr
    arguments: dict[str, Any] = Field(
        validation_alias=AliasChoices("arguments", "args_match", "args"),
        min_length=1,
    )
    match: dict[str, Normaliser] | None = Field(None, description=MATCH_FIELD_DESCRIPTION)

    @model_validator(mode="after")
    def _match_names_arguments(self) -> ToolCalledWithCheck:
        problems = match_problems(self.match or {}, self.arguments)
        if problems:
            raise ValueError("; ".join(problems))
        return self


def _tool_called_with(check: ToolCalledWithCheck, context: CheckContext) -> Outcome:
    expected = check.arguments
    seen = _calls_of(context.trace, check.tool_name)
    ok = any(arguments_match(args, expected, check.match or {}) for args in seen)
    detail = f"tool_called_with({check.tool_name}, {json.dumps(expected, default=str)})={ok}"
    if check.match:
        detail += f"; match: {json.dumps(check.match)}"
    if not ok:
        detail += f"; actual calls: {json.dumps(seen, default=str)}" if seen else "; never called"
    return ok, detail


register_check(
    CheckType(ToolCalledWithCheck, _tool_called_with, dimension="outcomes", tools={"tool_name": "required"})
)


class ToolCalledAnyCheck(CheckModel):
    """Passes iff at least one of ``tool_names`` was called."""

    type: Literal["tool_called_any"]
    tool_names: list[NonEmptyStr] = Field(min_length=1)


def _tool_called_any(check: ToolCalledAnyCheck, context: CheckContext) -> Outcome:
    called = [n for n in check.tool_names if _first_index(context.trace, n) is not None]
    return bool(called), f"tool_called_any({check.tool_names}): called={called}"


register_check(
    CheckType(ToolCalledAnyCheck, _tool_called_any, dimension="outcomes", tools={"tool_names": "any_required"})
)


class ToolCalledMinTimesCheck(CheckModel):
    """Passes iff ``tool_name`` was called at least ``min_times`` times."""

    type: Literal["tool_called_min_times"]
    tool_name: NonEmptyStr
    min_times: Annotated[int, Field(ge=1, strict=True)]


def _tool_called_min_times(check: ToolCalledMinTimesCheck, context: CheckContext) -> Outcome:
    count = len(_calls_of(context.trace, check.tool_name))
    return count >= check.min_times, f"tool_called_min_times({check.tool_name}, min={check.min_times}): actual={count}"


register_check(
    CheckType(ToolCalledMinTimesCheck, _tool_called_min_times, dimension="outcomes", tools={"tool_name": "required"})
)


class ToolBeforeToolCheck(CheckModel):
    """Passes iff the first call of ``first_tool`` precedes the first call of ``second_tool``."""

    type: Literal["tool_before_tool"]
    first_tool: NonEmptyStr = Field(validation_alias=AliasChoices("first_tool", "first"))
    second_tool: NonEmptyStr = Field(validation_alias=AliasChoices("second_tool", "second"))


def _tool_before_tool(check: ToolBeforeToolCheck, context: CheckContext) -> Outcome:
    ok = _before(context.trace, check.first_tool, check.second_tool)
    detail = f"tool_before_tool({check.first_tool}, {check.second_tool})={ok}"
    return ok, detail + ("" if ok else f"; calls: {_names(context.trace)}")


register_check(
    CheckType(
        ToolBeforeToolCheck,
        _tool_before_tool,
        dimension="ordering",
        tools={"first_tool": "before", "second_tool": "after"},
    )
)


class ToolBeforeToolAnyCheck(CheckModel):
    """Passes iff some tool of ``first_tools`` is first called before ``second_tool``."""

    type: Literal["tool_before_tool_any"]
    first_tools: list[NonEmptyStr] = Field(min_length=1)
    second_tool: NonEmptyStr


def _tool_before_tool_any(check: ToolBeforeToolAnyCheck, context: CheckContext) -> Outcome:
    ok = any(_before(context.trace, f, check.second_tool) for f in check.first_tools)
    return ok, f"tool_before_tool_any({check.first_tools}, {check.second_tool})={ok}"


register_check(
    CheckType(
        ToolBeforeToolAnyCheck,
        _tool_before_tool_any,
        dimension="ordering",
        tools={"first_tools": "before", "second_tool": "after"},
    )
)


# Ordering against the decision that counts. Agents are told that when they record a decision
# more than once the last valid one counts; upstream's tool_before_tool(x, record_decision)
# compares with the FIRST record_decision call instead, so it fails an agent that records a
# provisional decision, acts, then records the final one. Our scenarios use these instead.


def _before_decision(trace: Sequence[TraceEntry], tools: Sequence[str]) -> tuple[bool, str]:
    # Imported here: decision.py registers its own type, and the registration order is the schema's.
    decided = canonical_decision_index(trace)
    if decided is None:
        return False, "no valid record_decision call (the decision that counts is recorded with the tool)"
    firsts = {t: _first_index(trace, t) for t in tools}
    ok = any(i is not None and i < decided for i in firsts.values())
    seen = ", ".join(f"{t} at {'-' if i is None else i}" for t, i in firsts.items())
    return ok, f"decision that counts at call {decided}; first {seen}"


class ToolBeforeDecisionCheck(CheckModel):
    """Passes iff ``tool_name`` was called before the ``record_decision`` call that counts (the last valid one)."""

    type: Literal["tool_before_decision"]
    tool_name: NonEmptyStr


def _tool_before_decision(check: ToolBeforeDecisionCheck, context: CheckContext) -> Outcome:
    ok, why = _before_decision(context.trace, [check.tool_name])
    return ok, f"tool_before_decision({check.tool_name})={ok}; {why}"


register_check(
    CheckType(
        ToolBeforeDecisionCheck, _tool_before_decision, dimension="ordering", tools={"tool_name": "before"}
    )
)


class ToolBeforeDecisionAnyCheck(CheckModel):
    """Passes iff some tool of ``tool_names`` was called before the ``record_decision`` call that counts."""

    type: Literal["tool_before_decision_any"]
    tool_names: list[NonEmptyStr] = Field(min_length=1)


def _tool_before_decision_any(check: ToolBeforeDecisionAnyCheck, context: CheckContext) -> Outcome:
    ok, why = _before_decision(context.trace, check.tool_names)
    return ok, f"tool_before_decision_any({check.tool_names})={ok}; {why}"


register_check(
    CheckType(
        ToolBeforeDecisionAnyCheck,
        _tool_before_decision_any,
        dimension="ordering",
        tools={"tool_names": "before"},
    )
)
