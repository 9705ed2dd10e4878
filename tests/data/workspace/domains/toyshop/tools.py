"""A tiny domain for the engine's own tests."""

from __future__ import annotations

import copy
import re
from typing import Any, Literal

from pytest_pibench.toolkit import DB, Decision, ToolError, append_decision, find_record, next_id
from pytest_pibench.toolkit.routine import Routine, RoutineCall, RoutineRequest, RoutineResult


def lookup_item(db: DB, item_id: str) -> dict[str, Any]:
    """Look up a purchased toy.

    Args:
        item_id: The item id, e.g. "IT-1".
    """
    return copy.deepcopy(find_record(db, "items", "item_id", item_id))


def refund_item(db: DB, item_id: str, reason: Literal["changed_mind", "defective"]) -> dict[str, Any]:
    """Refund a toy.

    Args:
        item_id: The item to refund.
        reason: Why the toy is refunded.
    """
    item = find_record(db, "items", "item_id", item_id)
    if item.get("status") == "refunded":
        raise ToolError(f"Item {item_id} is already refunded.")
    item["status"] = "refunded"
    refund = {"refund_id": next_id(db, "REF"), "item_id": item_id, "reason": reason}
    db["refunds"].append(refund)
    return refund


def escalate(db: DB, reason: str, item_id: str | None = None) -> dict[str, Any]:
    """Hand the case to a supervisor.

    Args:
        reason: Why the case needs a supervisor.
        item_id: The item concerned, if any.
    """
    record = {"escalation_id": next_id(db, "ESC"), "reason": reason, "item_id": item_id}
    db["escalations"].append(record)
    return record


def record_decision(db: DB, decision: Decision, rationale: str, item_id: str | None = None) -> dict[str, Any]:
    """Record the final decision.

    Args:
        decision: ALLOW, ALLOW-CONDITIONAL, DENY or ESCALATE.
        rationale: One or two sentences citing the rules.
        item_id: The item concerned, if any.
    """
    return append_decision(db, decision, rationale=rationale, item_id=item_id)


def crash(db: DB) -> dict[str, Any]:
    """A tool with a bug (for tests)."""
    raise KeyError("missing")


TOOLS = [lookup_item, refund_item, escalate, record_decision, crash]


ITEM_ID = re.compile(r"\bIT-\d+\b")


def routine_lookups(request: RoutineRequest) -> list[RoutineCall]:
    """Look up every item the customer names."""
    return [RoutineCall("lookup_item", {"item_id": i}) for i in dict.fromkeys(ITEM_ID.findall(request.message))]


def routine_action(decision: str, request: RoutineRequest, results: list[RoutineResult]) -> list[RoutineCall]:
    """ALLOW refunds the first item found (changed_mind); ESCALATE hands it to a supervisor; others do nothing."""
    found = [r.value["item_id"] for r in results if r.call.name == "lookup_item" and not r.error]
    item = found[0] if found else None
    if decision in ("ALLOW", "ALLOW-CONDITIONAL") and item is not None:
        return [RoutineCall("refund_item", {"item_id": item, "reason": "changed_mind"})]
    if decision == "ESCALATE":
        return [RoutineCall("escalate", {"reason": "Needs a supervisor's review.", "item_id": item})]
    return []


ROUTINE = Routine(lookups=routine_lookups, action=routine_action)
