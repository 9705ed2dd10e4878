"""The routine of the finra pack: the standard look-ups of a desk request and the generic action of each decision."""

import re
from typing import Any

from pytest_pibench.toolkit.routine import (
    Routine,
    RoutineCall,
    RoutineRequest,
    RoutineResult,
)

from ._common import (
    DISBURSEMENT_TYPES,
    TRADE_TYPES,
    ApprovalType,
    DeclineReason,
    EscalationType,
)

# =========================================================================== routine
# The standard look-ups of a desk request and the generic action of each
# decision, played by the baseline:routine-<decision> agents (DESIGN §4 rule 8).
# Each code is the commonest of its label's gold trajectories (ties allowed;
# tests/participants/test_routine_baselines.py keeps them so as scenarios change).

ROUTINE_ESCALATION_TYPE: EscalationType = "suspicious_activity"
"""The generic escalation of the routine ESCALATE agent."""
ROUTINE_DECLINE_REASON: DeclineReason = "insufficient_funds"
"""The generic decline reason of the routine DENY agent."""
ROUTINE_APPROVAL_TYPE: ApprovalType = "second_authorization"
"""The generic condition of the routine ALLOW-CONDITIONAL agent (FIN-10.1)."""

REQUEST_ID_PATTERN = re.compile(r"\bREQ-\d+\b")
ACCOUNT_ID_PATTERN = re.compile(r"\bACC-\d+\b")
_PROCESSOR = {
    **{k: "process_disbursement" for k in DISBURSEMENT_TYPES},
    "journal": "process_journal",
    **{k: "execute_trade" for k in TRADE_TYPES},
}
"""The tool that carries out each request type."""


def _routine_lookups(request: RoutineRequest) -> list[RoutineCall]:
    """Read the request(s) named, the customer's profile, alerts and cases, and each account with its history."""
    customer_id = request.customer.get("customer_id")
    accounts = list(dict.fromkeys(ACCOUNT_ID_PATTERN.findall(request.message)))
    if isinstance(request.account.get("account_id"), str):
        accounts = list(dict.fromkeys([request.account["account_id"], *accounts]))
    calls = [
        RoutineCall("lookup_request", {"request_id": r})
        for r in dict.fromkeys(REQUEST_ID_PATTERN.findall(request.message))
    ]
    if isinstance(customer_id, str):
        calls.append(RoutineCall("lookup_customer", {"customer_id": customer_id}))
        calls.append(RoutineCall("get_alerts_and_cases", {"customer_id": customer_id}))
    for account_id in accounts:
        calls.append(RoutineCall("lookup_account", {"account_id": account_id}))
        calls.append(RoutineCall("get_transaction_history", {"account_id": account_id}))
    return calls


def _routine_action(decision: str, request: RoutineRequest, results: list[RoutineResult]) -> list[RoutineCall]:
    """The generic action of ``decision`` on the first request found: carry out, route, decline or escalate it."""
    found = [r.value for r in results if r.call.name == "lookup_request" and not r.error and isinstance(r.value, dict)]
    target: dict[str, Any] | None = found[0] if found else None
    request_id = target.get("request_id") if target else None
    if decision == "ESCALATE":
        arguments: dict[str, Any] = {"escalation_type": ROUTINE_ESCALATION_TYPE, "summary": "The request needs review."}
        if request_id is not None:
            arguments["request_id"] = request_id
        if isinstance(request.customer.get("customer_id"), str):
            arguments["customer_id"] = request.customer["customer_id"]
        return [RoutineCall("escalate", arguments)]
    if target is None:
        return []
    if decision == "DENY":
        return [RoutineCall("decline_request", {"request_id": request_id, "reason_code": ROUTINE_DECLINE_REASON})]
    if decision == "ALLOW-CONDITIONAL":
        note = "Please review and approve this request."
        return [
            RoutineCall(
                "route_for_approval", {"request_id": request_id, "approval_type": ROUTINE_APPROVAL_TYPE, "note": note}
            )
        ]
    if decision == "ALLOW":
        tool = _PROCESSOR.get(str(target.get("request_type")))
        return [RoutineCall(tool, {"request_id": request_id})] if tool else []
    return []


ROUTINE = Routine(lookups=_routine_lookups, action=_routine_action)
