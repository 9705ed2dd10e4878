"""The STATE_FIELD check over the final database (upstream-evaluation.md §5.3) and its path grammar.

A path is dotted; a segment may be ``collection[key=value]``, selecting the
list elements whose ``str(element[key])`` equals ``value``. Which of them count
is the check's ``matches``:

- ``"first"`` (the default, upstream's semantics): the first element only. An
  agent that wrote two records for one key (two refunds for one order) is judged
  on whichever comes first, so the verdict can depend on call order;
- ``"one"``: exactly one element may match at every filter; two refunds for one
  order fail ("2 records match");
- ``"all"``: every element reached must hold the value (and at least one must
  exist); a duplicate escalation with another reason fails.

The value is compared with Python equality; an explicit final ``null`` is a real
value, a missing key or a ``null`` mid-path is "path not found".
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import Field

from pytest_pibench.checks.base import CheckContext, CheckModel, CheckType, NonEmptyStr, Outcome
from pytest_pibench.checks.registry import register_check

__all__ = ["BRACKET_SEGMENT", "MISSING", "PathMatches", "StateFieldCheck", "field_path_problem", "resolve_all",
           "resolve_path"]  # fmt: skip

BRACKET_SEGMENT = re.compile(r"^(\w+)\[(\w+)=([^\]]+)\]$")
"""A ``collection[key=value]`` segment of a ``state_field`` path (upstream's grammar)."""


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()
"""What :func:`resolve_path` returns for a path that leads nowhere (distinct from a stored ``None``)."""


def resolve_path(db: Any, path: str) -> Any:
    """The value at a ``state_field`` path, or :data:`MISSING`."""
    current = db
    for segment in path.split("."):
        if current is None or not isinstance(current, dict):
            return MISSING
        match = BRACKET_SEGMENT.match(segment)
        if match:
            collection, key, value = match.groups()
            items = current.get(collection)
            if not isinstance(items, list):
                return MISSING
            current = next((item for item in items if isinstance(item, dict) and str(item.get(key)) == value), MISSING)
            if current is MISSING:
                return MISSING
        else:
            if segment not in current:
                return MISSING
            current = current[segment]
    return current


def resolve_all(db: Any, path: str) -> tuple[list[Any], int]:
    """Every value a ``state_field`` path reaches (each filter fans out to all matching elements), in order,
    and the most elements any one filter matched (0 when the path reaches nothing)."""
    reached: list[Any] = [db]
    widest = 0
    for segment in path.split("."):
        match = BRACKET_SEGMENT.match(segment)
        following: list[Any] = []
        for current in reached:
            if not isinstance(current, dict):
                continue
            if match:
                collection, key, value = match.groups()
                items = current.get(collection)
                if isinstance(items, list):
                    found = [item for item in items if isinstance(item, dict) and str(item.get(key)) == value]
                    widest = max(widest, len(found))
                    following += found
            elif segment in current:  # a None here is dropped at the next segment, kept when it is the final value
                following.append(current[segment])
        reached = following
    return reached, (widest if reached else 0)


def field_path_problem(path: str) -> str | None:
    """Why a ``state_field`` path is malformed, or None."""
    for segment in path.split("."):
        if not segment:
            return "has an empty segment"
        if "[" in segment and not BRACKET_SEGMENT.match(segment):
            return f"segment {segment!r} is not of the form collection[key=value]"
    return None


PathMatches = Literal["first", "one", "all"]
"""Which records a ``collection[key=value]`` filter selects: see the module docstring."""


class StateFieldCheck(CheckModel):
    """Passes iff the final database value at ``field_path`` equals ``equals``."""

    type: Literal["state_field"]
    field_path: NonEmptyStr = Field(
        description="Dotted path; a segment may be collection[key=value], e.g. orders[order_id=ORD-1].return_status"
    )
    equals: Any = Field(description="Expected value (Python equality; null is a real value).")
    matches: PathMatches = Field(
        "first",
        description="Which records a [key=value] filter selects: 'first' (upstream's default: the first match only), "
        "'one' (exactly one record may match; a duplicate fails) or 'all' (every match must hold the value).",
    )


def _state_field(check: StateFieldCheck, context: CheckContext) -> Outcome:
    where = f"state_field({check.field_path})"
    if check.matches == "first":
        value = resolve_path(context.final_state, check.field_path)
        if value is MISSING:
            return False, f"{where}: path not found in db"
        return value == check.equals, f"{where}: expected={check.equals!r}, actual={value!r}"
    values, widest = resolve_all(context.final_state, check.field_path)
    if not values:
        return False, f"{where}: path not found in db"
    if check.matches == "one" and widest > 1:
        return False, f"{where}: {widest} records match a filter where exactly one is expected"
    wrong = [value for value in values if value != check.equals]
    if wrong:
        shown = repr(wrong[0]) if len(values) == 1 else f"{len(wrong)} of {len(values)} differ, e.g. {wrong[0]!r}"
        return False, f"{where}: expected={check.equals!r}, actual={shown}"
    return True, f"{where}: expected={check.equals!r}, actual={values[0]!r}" + (
        f" (all {len(values)} matches)" if len(values) > 1 else ""
    )


register_check(CheckType(StateFieldCheck, _state_field, dimension="state", tools={}, family="STATE_FIELD"))
