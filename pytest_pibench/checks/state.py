"""The STATE_FIELD check over the final database (upstream-evaluation.md §5.3) and its path grammar.

A path is dotted; a segment may be ``collection[key=value]``, selecting the
first list element whose ``str(element[key])`` equals ``value``. The value is
compared with Python equality; an explicit final ``null`` is a real value, a
missing key or a ``null`` mid-path is "path not found".
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import Field

from pytest_pibench.checks.base import CheckContext, CheckModel, CheckType, NonEmptyStr, Outcome
from pytest_pibench.checks.registry import register_check

__all__ = ["BRACKET_SEGMENT", "MISSING", "StateFieldCheck", "field_path_problem", "resolve_path"]

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


def field_path_problem(path: str) -> str | None:
    """Why a ``state_field`` path is malformed, or None."""
    for segment in path.split("."):
        if not segment:
            return "has an empty segment"
        if "[" in segment and not BRACKET_SEGMENT.match(segment):
            return f"segment {segment!r} is not of the form collection[key=value]"
    return None


class StateFieldCheck(CheckModel):
    """Passes iff the final database value at ``field_path`` equals ``equals``."""

    type: Literal["state_field"]
    field_path: NonEmptyStr = Field(
        description="Dotted path; a segment may be collection[key=value], e.g. orders[order_id=ORD-1].return_status"
    )
    equals: Any = Field(description="Expected value (Python equality; null is a real value).")


def _state_field(check: StateFieldCheck, context: CheckContext) -> Outcome:
    value = resolve_path(context.final_state, check.field_path)
    if value is MISSING:
        return False, f"state_field({check.field_path}): path not found in db"
    return value == check.equals, f"state_field({check.field_path}): expected={check.equals!r}, actual={value!r}"


register_check(CheckType(StateFieldCheck, _state_field, dimension="state", tools={}, family="STATE_FIELD"))
