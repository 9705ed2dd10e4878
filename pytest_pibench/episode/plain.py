"""Builtins-only copies: what the episode hands on (messages, the final state) crosses process boundaries."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["final_state", "jsonable"]


def jsonable(value: Any) -> Any:
    """A deep copy made of builtins only (messages cross process boundaries)."""
    return json.loads(json.dumps(value, default=str))


_PLAIN_SCALARS = (str, int, float, bool, type(None))


def _plain_json(value: Any) -> bool:
    """Whether ``value`` is made only of JSON builtins (dicts with string keys, lists, scalars)."""
    kind = type(value)
    if kind is dict:
        return all(type(key) is str and _plain_json(item) for key, item in value.items())
    if kind is list:
        return all(_plain_json(item) for item in value)
    return kind in _PLAIN_SCALARS


def final_state(db: dict[str, Any]) -> dict[str, Any]:
    """The episode's database as the row's final state, builtins only.

    The database is the episode's own copy and nothing else keeps it, so when it
    holds only JSON builtins (the usual case: it was loaded from JSON) it is the
    final state as it is; a domain tool that stored anything else (a date, a
    tuple) gets the JSON round trip that turns it into builtins.
    """
    if _plain_json(db):
        return db
    state: dict[str, Any] = jsonable(db)
    return state
