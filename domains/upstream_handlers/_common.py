"""The handlers every upstream-format pack shares (upstream-runtime.md §7.4), by tool name.

The domain-specific ones (upstream's finra, retail and helpdesk tool names) are
in the sibling modules; ``handlers.py`` combines the four tables.
"""

from __future__ import annotations

from typing import Any

from pytest_pibench.packs.generic import HandlerSet, find_record, next_id, now, soft_error

__all__ = ["handlers"]

handlers = HandlerSet()
"""This module's handlers, by tool name (``handlers.py`` combines the modules' tables)."""

_ESCALATIONS = ("escalate_to_compliance", "escalate_to_manager", "escalate_to_tier2", "escalate_to_it_security")
"""Upstream's escalation tools: a confirmation only, nothing stored (but the id counter moves)."""


def _escalate(db: dict[str, Any], **arguments: Any) -> dict[str, Any]:
    extra = {k: v for k, v in arguments.items() if k not in ("reason", "summary")}
    return {"escalation_id": next_id(db, "ESC"), "status": "pending_review", "assigned_to": "Senior Officer",
            "created_at": now(db), **extra}  # fmt: skip


for _name in _ESCALATIONS:
    handlers(_name)(_escalate)


@handlers("record_decision")
def record_decision(db: dict[str, Any], decision: Any = "", **arguments: Any) -> dict[str, Any]:
    """Append the decision (never validated here: decision resolution judges it later) and return it."""
    record = {"decision_record_id": next_id(db, "DEC"), "decision": decision, "recorded_at": now(db), **arguments}
    decisions = db.get("decisions")
    if not isinstance(decisions, list):
        decisions = db["decisions"] = []
    decisions.append(record)
    return record


@handlers("read_policy")
def read_policy(db: dict[str, Any], **arguments: Any) -> dict[str, Any]:
    text = db.get("_policy_text")
    if not text:
        return soft_error("No policy text is available.")
    return {"available": True, "policy": text}


@handlers("update_request_status")
def update_request_status(db: dict[str, Any], request_id: Any = "", status: Any = "", **arguments: Any) -> Any:
    activity = db.get("activity")
    pending = activity.get("pending_requests") if isinstance(activity, dict) else None
    request = find_record(pending, "request_id", request_id)
    if request is None:
        return soft_error(f"No request found for request_id='{request_id}'.", request_id=request_id)
    request["status"] = status
    return {"request_id": request_id, "status": status}
