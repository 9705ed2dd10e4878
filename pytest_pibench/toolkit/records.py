"""Records for domain tools: find and update records by id, append action records, read constants.

The episode database holds collections (``db["orders"]``, ``db["refunds"]``):
lists of record dicts, or dicts keyed by id. Tools find records by id with a
loud :class:`ToolError` when none matches (the agent reads it and can correct
the id), update the live record in place (so state checks see it), and append
one action record per write with a deterministic id (:func:`next_id`) and the
scenario clock as its timestamp (:func:`new_record`, :func:`append_record`).
What a tool returns is a copy, so the agent's view never aliases the state.
"""

from __future__ import annotations

import copy
import hashlib
import pickle
from collections.abc import Callable
from typing import Any, TypeVar, cast

from pytest_pibench.toolkit.base import DB, ToolError
from pytest_pibench.toolkit.clock import now

__all__ = [
    "append_decision",
    "copy_record",
    "append_record",
    "collection",
    "constant",
    "find_record",
    "find_records",
    "nested_records",
    "new_record",
    "next_id",
    "record_getter",
    "require_text",
]

Record = dict[str, Any]
_Constant = TypeVar("_Constant", int, float, str, bool)
_Copied = TypeVar("_Copied")
_SCALARS = frozenset({str, int, float, bool, type(None)})


def copy_record(value: _Copied) -> _Copied:
    """A deep copy of a record (or any database value): what a tool hands the agent, an episode's database.

    Same result as ``copy.deepcopy`` for database data, several times faster
    (pickle's C code); a value pickle refuses falls back to ``copy.deepcopy``.
    The one deep copy of the engine: environments, trace entries and the
    oracle's arguments use it too.
    """
    if isinstance(value, dict) and type(value) is dict and all(type(item) in _SCALARS for item in value.values()):
        # A flat record (most tool arguments): a shallow copy is a deep one, and 10x cheaper.
        flat: _Copied = cast(_Copied, value.copy())
        return flat
    try:
        copied: _Copied = pickle.loads(pickle.dumps(value, pickle.HIGHEST_PROTOCOL))
    except Exception:  # an object pickle refuses: deepcopy may still manage
        copied = copy.deepcopy(value)
    return copied


# --------------------------------------------------------------------------- ids


def next_id(db: DB, prefix: str) -> str:
    """A deterministic new id such as ``REF_1A2B3C4D``.

    Uses one counter per prefix and episode (``db["_id_counters"]``), so an id
    depends only on how many ids of its own kind came before it: never on time,
    randomness or unrelated calls (a decision recorded early does not change the
    id of the ticket opened after it, so a gold trajectory may name that id).
    """
    counters = db.setdefault("_id_counters", {})
    counter = int(counters.get(prefix, 0)) + 1
    counters[prefix] = counter
    digest = hashlib.sha256(f"{prefix}:{counter}".encode()).hexdigest()[:8].upper()
    return f"{prefix}_{digest}"


# --------------------------------------------------------------------------- finding records


def find_record(db: DB, collection: str, id_field: str, value: str) -> Record:
    """Return the record of ``db[collection]`` whose ``id_field`` equals ``value``.

    The collection may be a list of records or a dict keyed by id. The match is
    exact (ids are case-sensitive). The live record is returned, so a tool may
    mutate it; copy it (``copy.deepcopy``) before returning it to the agent if
    the agent must not see later changes.

    Raises:
        ToolError: when no record matches.
    """
    records = db.get(collection)
    if isinstance(records, dict):
        record = records.get(value)
        if isinstance(record, dict):
            return record
        records = list(records.values())
    if isinstance(records, list):
        for record in records:
            if isinstance(record, dict) and record.get(id_field) == value:
                return record
    raise ToolError(f"No record in {collection!r} has {id_field}={value!r}.")


def record_getter(collection: str, id_field: str, missing: str) -> Callable[[DB, str], Record]:
    """A finder for one collection whose error tells the agent what id it got wrong and what one looks like.

    ``missing`` is a :meth:`str.format` template with ``{value}``::

        get_order = record_getter(
            "orders", "order_id",
            "No order found with order_id {value!r}. Check the id (format like 'ORD-1001').",
        )
        order = get_order(db, order_id)   # the live record, or ToolError
    """

    def get(db: DB, value: str) -> Record:
        try:
            return find_record(db, collection, id_field, value)
        except ToolError:
            raise ToolError(missing.format(value=value)) from None

    get.__name__ = f"get_{id_field}"
    get.__doc__ = f"The live record of {collection!r} whose {id_field} is ``value`` (ToolError if none)."
    return get


def find_records(db: DB, collection: str, /, **equals: Any) -> list[Record]:
    """The live records of ``db[collection]`` whose fields equal ``equals`` (a missing field is ``None``).

    ``find_records(db, "escalations", order_id="ORD-1", status="pending")``;
    with no ``equals``, every record. A missing collection has no records.

    Raises:
        TypeError: when ``db[collection]`` is neither a list nor a dict of records (a database defect).
    """
    records = db.get(collection)
    if records is None:
        return []
    if isinstance(records, dict):
        records = list(records.values())
    if not isinstance(records, list):
        raise TypeError(f"db[{collection!r}] is a {type(records).__name__}, not a list of records")
    return [
        record
        for record in records
        if isinstance(record, dict) and all(record.get(key) == value for key, value in equals.items())
    ]


def nested_records(record: Record, field: str) -> list[Record]:
    """The dict entries of the list ``record[field]`` (an order's items, a ticket's comments); [] if none."""
    entries = record.get(field)
    if not isinstance(entries, list):
        return []
    return [entry for entry in entries if isinstance(entry, dict)]


# --------------------------------------------------------------------------- writing records


def collection(db: DB, name: str) -> list[Any]:
    """The list ``db[name]``, created empty if it is missing or null, for appending to.

    Raises:
        TypeError: when ``db[name]`` holds something else (a database defect, never silently replaced).
    """
    records = db.get(name)
    if records is None:
        records = []
        db[name] = records
    if not isinstance(records, list):
        raise TypeError(f"db[{name!r}] is a {type(records).__name__}, not a list of records")
    return records


def new_record(db: DB, id_field: str, prefix: str, /, **fields: Any) -> Record:
    """An action record: a new id first (``next_id(db, prefix)``), then ``fields``, then ``created_at`` (the clock).

    The record is not stored yet: add fields if needed, then :func:`append_record`.
    Field order is kept, and it is the order the agent reads the result in.
    """
    return {id_field: next_id(db, prefix), **fields, "created_at": now(db)}


def append_record(db: DB, collection_name: str, record: Record) -> Record:
    """Append ``record`` to ``db[collection_name]`` (created if missing) and return a copy for the agent."""
    collection(db, collection_name).append(record)
    return copy_record(record)


def append_decision(db: DB, decision: str, **fields: Any) -> Record:
    """Append a decision record to ``db["decisions"]`` and return a copy of it.

    Domain ``record_decision`` tools call this after their own checks. Fields
    whose value is ``None`` are left out of the record.
    """
    record: Record = {
        "decision_id": next_id(db, "DEC"),
        "decision": decision,
        "recorded_at": now(db),
    }
    record.update({key: value for key, value in fields.items() if value is not None})
    return append_record(db, "decisions", record)


# --------------------------------------------------------------------------- arguments and constants


def require_text(text: str, what: str) -> str:
    """``text`` without surrounding spaces; a blank one is a ToolError naming ``what`` (e.g. "rationale")."""
    cleaned = text.strip()
    if not cleaned:
        raise ToolError(f"{what} must not be empty.")
    return cleaned


def constant(db: DB, *path: str, default: _Constant) -> _Constant:
    """The value at ``db["constants"][path[0]][path[1]]...``, or ``default`` if absent or of another type.

    ``constant(db, "return_windows_days", "member", "general", default=30)``.
    The type of ``default`` decides what is accepted: a bool is not an int, and
    an int is accepted (as a float) where ``default`` is a float.
    """
    node: Any = db.get("constants")
    for key in path:
        if not isinstance(node, dict):
            return default
        node = node.get(key)
    if isinstance(default, float) and type(node) is int:
        node = float(node)
    return node if type(node) is type(default) else default
