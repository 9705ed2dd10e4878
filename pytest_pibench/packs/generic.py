"""The generic tool engine's rules and its handler tables: what every handler of a declarative pack builds on.

A declarative pack (``domains/<name>/{tools.json, db.json, policy.md}``) has no
Python tools: each tool name is served by a *handler* of a handler pack (a
:class:`HandlerSet`, see :mod:`pytest_pibench.packs.engine`), a generic look-up
for ``lookup_<entity>`` names without one, or else a soft error. Handlers follow upstream's rules (upstream-runtime.md
§7.3-7.7), written here from that description:

- arguments are taken as given: unknown ones are ignored, a missing one counts as empty;
- a handler never raises for the agent's mistakes: it returns a *soft error*
  ``{"error": true, "message": ...}``, a normal result the agent reads;
- values compare as ``str(x).strip().lower()`` (``None`` equals only ``None``);
- a collection may be a list of records, one record, or a dict keyed by id;
- ids come from one counter per episode, ``db["_id_counter"]``, shared by every
  prefix (``DEC_E33ED9F6`` is the first id of an episode), and the clock is
  ``db["now"]`` (default ``2026-01-01T00:00:00+00:00``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Mapping
from typing import Any

__all__ = [
    "DEFAULT_NOW",
    "Handler",
    "HandlerSet",
    "find_record",
    "find_with_id",
    "next_id",
    "now",
    "records",
    "same",
    "soft_error",
]

DEFAULT_NOW = "2026-01-01T00:00:00+00:00"
"""The clock when a scenario sets no ``now``: never the wall clock."""

Handler = Callable[..., Any]
"""``handler(db, **arguments) -> result``: a tool's behaviour, given the episode's database."""


class HandlerSet:
    """Handlers by tool name: the table a handler pack's ``handlers.py`` defines as ``HANDLERS``.

    Example::

        from pytest_pibench.packs.generic import HandlerSet, find_record, soft_error

        HANDLERS = HandlerSet()

        @HANDLERS("lookup_vehicle")
        def lookup_vehicle(db, vin=""):
            found = find_record(db.get("vehicles"), "vin", vin)
            return found if found is not None else soft_error("No vehicle found.")
    """

    def __init__(self, handlers: Mapping[str, Handler] | None = None) -> None:
        self._handlers: dict[str, Handler] = dict(handlers or {})

    def __call__(self, name: str) -> Callable[[Handler], Handler]:
        """Add the handler of the tool ``name`` (used as a decorator)."""

        def add(function: Handler) -> Handler:
            self._handlers[name] = function
            return function

        return add

    def get(self, name: str) -> Handler | None:
        """The handler of the tool ``name``, if any (no copy: this runs on every tool call)."""
        return self._handlers.get(name)

    def names(self) -> list[str]:
        return sorted(self._handlers)

    @classmethod
    def combine(cls, *tables: HandlerSet) -> HandlerSet:
        """One table of ``tables``; for a name in several, the first table's handler."""
        merged: dict[str, Handler] = {}
        for table in tables:
            for name, function in table._handlers.items():
                merged.setdefault(name, function)
        return cls(merged)


def now(db: Mapping[str, Any]) -> str:
    return str(db.get("now") or DEFAULT_NOW)


def next_id(db: dict[str, Any], prefix: str) -> str:
    """``PREFIX_XXXXXXXX``: upstream's ids, from one counter per episode shared by every prefix."""
    counter = int(db.get("_id_counter") or 0)  # hashed before it moves: the first id hashes "PREFIX:0"
    db["_id_counter"] = counter + 1
    return f"{prefix}_{hashlib.sha256(f'{prefix}:{counter}'.encode()).hexdigest()[:8].upper()}"


def same(left: Any, right: Any) -> bool:
    """Upstream's value equality: trimmed, case-folded text; ``None`` equals only ``None``."""
    if left is None or right is None:
        return left is None and right is None
    return str(left).strip().lower() == str(right).strip().lower()


def soft_error(message: str, **fields: Any) -> dict[str, Any]:
    """A result that tells the agent what went wrong (a normal result, not a failed call)."""
    return {"error": True, "message": message, **fields}


def records(collection: Any, id_field: str = "") -> Iterator[dict[str, Any]]:
    """The records of a collection in any of its three shapes (a dict keyed by id yields ``{id_field: key, ...}``)."""
    if isinstance(collection, list):
        yield from (r for r in collection if isinstance(r, dict))
    elif isinstance(collection, dict):
        if (id_field and id_field in collection) or not all(isinstance(v, dict) for v in collection.values()):
            yield collection  # one record
        else:
            for key, value in collection.items():
                yield {id_field: key, **value} if id_field and id_field not in value else value


def find_record(collection: Any, field: str, value: Any, *, exact: bool = False) -> dict[str, Any] | None:
    """The live record whose ``field`` equals ``value`` (in a dict keyed by id, its key matches too).

    The record itself, not a copy: handlers that write change the database.
    Look-ups compare with :func:`same`; the handlers that change a record find
    it by ``exact`` equality, as upstream's mutators do (upstream-evaluation.md §4.5).
    """
    equal = (lambda a, b: a == b) if exact else same
    if isinstance(collection, dict) and field not in collection:
        for key, record in collection.items():
            if isinstance(record, dict) and (equal(key, value) or equal(record.get(field), value)):
                return record
        return None
    for record in records(collection, field):
        if equal(record.get(field), value):
            return record
    return None


def find_with_id(collection: Any, field: str, value: Any) -> dict[str, Any] | None:
    """A copy of the record :func:`find_record` finds, with its id field (a dict keyed by id gives its key)."""
    if isinstance(collection, dict) and field not in collection:
        for key, record in collection.items():
            if isinstance(record, dict) and (same(key, value) or same(record.get(field), value)):
                return {field: key, **record}
        return None
    found = find_record(collection, field, value)
    return None if found is None else dict(found)
