"""Helpers for writing domain tools (``domains/<name>/tools.py``).

A domain pack's ``tools.py`` defines plain, typed Python functions. The first
parameter of every tool is the episode database (a ``dict``); the remaining
parameters are what the agent passes. The JSON schema the agent sees is
generated from the signature and the Google-style docstring, so the function is
the single source of truth::

    from typing import Literal
    from pytest_pibench.toolkit import DB, ToolError, find_record

    def lookup_order(db: DB, order_id: str) -> dict:
        \"\"\"Look up an order by its id.

        Args:
            order_id: The order id, e.g. "ORD-1001".
        \"\"\"
        return find_record(db, "orders", "order_id", order_id)

    TOOLS = [lookup_order, ...]   # catalog order

A tool reports a problem by raising :class:`ToolError`; the environment turns
it into an error result for the agent (the episode goes on). Tools must be
deterministic: time comes from :func:`now` (the scenario clock), ids from
:func:`next_id`.
"""

from __future__ import annotations

import copy
import hashlib
from datetime import datetime
from typing import Any, Literal

__all__ = [
    "DB",
    "DEFAULT_NOW",
    "Decision",
    "ToolError",
    "append_decision",
    "find_record",
    "next_id",
    "now",
    "now_datetime",
]

DB = dict[str, Any]
"""The episode database: the domain's ``db.json`` deep-merged with the scenario patch."""

Decision = Literal["ALLOW", "ALLOW-CONDITIONAL", "DENY", "ESCALATE"]
"""The four canonical decisions, for ``record_decision`` signatures."""

DEFAULT_NOW = "2026-01-01T00:00:00+00:00"
"""Clock value used when a scenario sets no ``environment_setup.now``."""


class ToolError(Exception):
    """Raised by a tool to return an error result to the agent.

    The message is what the agent reads, so make it say what was wrong and how
    to fix it, e.g. ``ToolError("No order found with order_id 'ORD-9'.")``.
    """


def now(db: DB) -> str:
    """The scenario's current time as an ISO-8601 string (never the wall clock)."""
    value = db.get("now")
    return value if isinstance(value, str) and value else DEFAULT_NOW


def now_datetime(db: DB) -> datetime:
    """The scenario's current time as an aware :class:`datetime`."""
    return datetime.fromisoformat(now(db))


def next_id(db: DB, prefix: str) -> str:
    """A deterministic new id such as ``REF_1A2B3C4D``.

    Uses one counter per episode (``db["_id_counter"]``), so ids depend only on
    the order of id-producing calls, never on time or randomness.
    """
    counter = int(db.get("_id_counter", 0)) + 1
    db["_id_counter"] = counter
    digest = hashlib.sha256(f"{prefix}:{counter}".encode()).hexdigest()[:8].upper()
    return f"{prefix}_{digest}"


def find_record(db: DB, collection: str, id_field: str, value: str) -> dict[str, Any]:
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


def append_decision(db: DB, decision: str, **fields: Any) -> dict[str, Any]:
    """Append a decision record to ``db["decisions"]`` and return a copy of it.

    Domain ``record_decision`` tools call this after their own checks. Fields
    whose value is ``None`` are left out of the record.
    """
    record: dict[str, Any] = {
        "decision_id": next_id(db, "DEC"),
        "decision": decision,
        "recorded_at": now(db),
    }
    record.update({key: value for key, value in fields.items() if value is not None})
    db.setdefault("decisions", []).append(record)
    return copy.deepcopy(record)
