"""The routine of the helpdesk pack: the standard look-ups of a contact and the generic action of each decision."""

import re
from typing import Any

from pytest_pibench.toolkit.routine import (
    Routine,
    RoutineCall,
    RoutineRequest,
    RoutineResult,
)

from ._common import (
    ApprovalType,
    EscalationType,
    RejectionReason,
    TicketCategory,
    TicketStatus,
)

# =========================================================================== routine
# The standard look-ups of a desk contact and the generic action of each
# decision, played by the baseline:routine-<decision> agents (DESIGN §4 rule 8).
# Opening the ticket is the first standard step of every contact (HD-1.1), so
# the routine's look-ups start with create_ticket: the action needs its id.
# Each code is the commonest of its label's hand-written gold trajectories
# (ties allowed; tests/participants/test_routine_baselines.py keeps them so).

ROUTINE_ESCALATION_TYPE: EscalationType = "it_security"
"""The generic escalation of the routine ESCALATE agent."""
ROUTINE_REJECTION_REASON: RejectionReason = "not_authorized"
"""The generic rejection reason of the routine DENY agent."""
ROUTINE_APPROVAL_TYPE: ApprovalType = "sponsor"
"""The generic approval the routine ALLOW-CONDITIONAL agent requests (from the subject's manager of record)."""

EMPLOYEE_ID_PATTERN = re.compile(r"\bEMP-\d+\b")
RESOURCE_ID_PATTERN = re.compile(r"\bRES-[A-Z0-9]+(?:-[A-Z0-9]+)*\b")
SOFTWARE_ID_PATTERN = re.compile(r"\bSW-\d+\b")
DATE_PATTERN = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
BADGE_PATTERN = re.compile(r"\bLB-\d+\b")

_CATEGORY_KEYWORDS: tuple[tuple[TicketCategory, tuple[str, ...]], ...] = (
    ("offboarding", ("offboard", "deactivat", "disable")),
    ("mfa_reset", ("mfa", "authenticator", "two-factor", "2fa")),
    ("account_unlock", ("locked", "unlock", "lockout")),
    ("password_reset", ("password",)),
    ("software_request", ("install", "software")),
    ("access_request", ("access", "vpn")),
)
"""Keywords of the first message that name the request, checked in this order."""

_ROUTINE_TICKET_STATUS: dict[str, TicketStatus] = {
    "ALLOW": "resolved",
    "ALLOW-CONDITIONAL": "pending_approval",
    "DENY": "rejected",
    "ESCALATE": "escalated",
}
"""The ticket status that goes with each decision (HD-17.2)."""


def _routine_category(message: str) -> TicketCategory:
    """The ticket category the first message suggests: an id it names, else its keywords, else "other"."""
    if RESOURCE_ID_PATTERN.search(message):
        return "access_request"
    if SOFTWARE_ID_PATTERN.search(message):
        return "software_request"
    lowered = message.lower()
    for category, words in _CATEGORY_KEYWORDS:
        if any(word in lowered for word in words):
            return category
    return "other"


def _routine_people(request: RoutineRequest) -> tuple[str | None, str | None]:
    """(requester, subject): the employee block or the first id named, and the first other id named or the requester."""
    named = list(dict.fromkeys(EMPLOYEE_ID_PATTERN.findall(request.message)))
    block_id = request.employee.get("employee_id")
    requester = block_id if isinstance(block_id, str) else (named[0] if named else None)
    others = [n for n in named if n != requester]
    return requester, (others[0] if others else requester)


def _routine_lookups(request: RoutineRequest) -> list[RoutineCall]:
    """Open the ticket; read the requester, the subject's accounts and tickets; verify; read what is asked for."""
    requester, subject = _routine_people(request)
    if requester is None or subject is None:
        return []
    category = _routine_category(request.message)
    ticket: dict[str, Any] = {
        "requester_id": requester,
        "category": category,
        "summary": request.message.strip()[:200] or "Request from the caller.",
    }
    if subject != requester:
        ticket["subject_employee_id"] = subject
    calls = [RoutineCall("create_ticket", ticket), RoutineCall("lookup_employee", {"employee_id": requester})]
    if subject != requester:
        calls.append(RoutineCall("lookup_employee", {"employee_id": subject}))
    calls += [
        RoutineCall("get_accounts", {"employee_id": subject}),
        RoutineCall("get_tickets", {"employee_id": subject}),
    ]
    factors = {}
    if (born := DATE_PATTERN.search(request.message)) is not None:
        factors["date_of_birth"] = born.group()
    if (badge := BADGE_PATTERN.search(request.message)) is not None:
        factors["badge_number"] = badge.group()
    if factors:
        calls.append(RoutineCall("verify_identity", {"employee_id": requester, **factors}))
    if category in ("access_request", "software_request"):
        calls.append(RoutineCall("get_approvals", {"employee_id": subject}))
    calls += [
        RoutineCall("get_access_policy", {"resource_id": r})
        for r in dict.fromkeys(RESOURCE_ID_PATTERN.findall(request.message))
    ]
    software = dict.fromkeys(SOFTWARE_ID_PATTERN.findall(request.message))
    calls += [RoutineCall("lookup_software", {"query": s}) for s in software]
    if category == "software_request":
        calls.append(RoutineCall("get_devices", {"employee_id": subject}))
    return calls


def _first_result(results: list[RoutineResult], tool: str, **arguments: Any) -> dict[str, Any] | None:
    """The first successful result of ``tool`` whose call had ``arguments``."""
    for result in results:
        call = result.call
        matches = all(call.arguments.get(k) == v for k, v in arguments.items())
        if call.name == tool and not result.error and isinstance(result.value, dict) and matches:
            return result.value
    return None


def _routine_carry_out(category: str, subject: str, ticket_id: str, results: list[RoutineResult]) -> list[RoutineCall]:
    """The action that carries out a request of ``category`` for ``subject`` (ALLOW), or [] when it cannot be built."""
    accounts = (_first_result(results, "get_accounts", employee_id=subject) or {}).get("accounts") or []
    standard = [a for a in accounts if a.get("account_type") == "standard"] or accounts
    username = standard[0].get("username") if standard else None
    base = {"ticket_id": ticket_id}
    if category in ("password_reset", "account_unlock", "mfa_reset") and username:
        tool = {"password_reset": "reset_password", "account_unlock": "unlock_account", "mfa_reset": "reset_mfa"}
        return [RoutineCall(tool[category], {"username": username, **base})]
    if category == "offboarding" and username:
        return [RoutineCall("disable_account", {"username": username, "reason": "offboarding", **base})]
    if category == "access_request":
        policy = _first_result(results, "get_access_policy")
        if policy and policy.get("group_id"):
            return [RoutineCall("grant_group", {"employee_id": subject, "group_id": policy["group_id"], **base})]
    if category == "software_request":
        software = ((_first_result(results, "lookup_software") or {}).get("matches") or [None])[0]
        devices = (_first_result(results, "get_devices", employee_id=subject) or {}).get("devices") or []
        corporate = [d for d in devices if d.get("ownership") == "corporate"]
        if software and corporate:
            arguments = {"employee_id": subject, "device_id": corporate[0].get("device_id"), **base}
            return [RoutineCall("install_software", {**arguments, "software_id": software.get("software_id")})]
    return []


def _routine_action(decision: str, request: RoutineRequest, results: list[RoutineResult]) -> list[RoutineCall]:
    """The generic action of ``decision`` on the contact's ticket, then the ticket update that goes with it."""
    ticket = _first_result(results, "create_ticket")
    if ticket is None or decision not in _ROUTINE_TICKET_STATUS:
        return []
    ticket_id, subject = str(ticket.get("ticket_id")), str(ticket.get("subject_employee_id"))
    calls: list[RoutineCall] = []
    if decision == "ALLOW":
        calls = _routine_carry_out(str(ticket.get("category")), subject, ticket_id, results)
    elif decision == "ALLOW-CONDITIONAL":
        manager = (_first_result(results, "lookup_employee", employee_id=subject) or {}).get("manager_id")
        policy = _first_result(results, "get_access_policy")
        software = ((_first_result(results, "lookup_software") or {}).get("matches") or [None])[0]
        target = (
            {"resource_id": policy.get("resource_id")}
            if policy
            else ({"software_id": software.get("software_id")} if software else None)
        )
        if isinstance(manager, str) and target is not None:
            arguments = {"employee_id": subject, "approval_type": ROUTINE_APPROVAL_TYPE, "approver_id": manager}
            note = "Please approve this request."
            calls = [RoutineCall("request_approval", {**arguments, "note": note, **target, "ticket_id": ticket_id})]
    elif decision == "ESCALATE":
        summary = "The request needs review."
        arguments = {"escalation_type": ROUTINE_ESCALATION_TYPE, "summary": summary, "ticket_id": ticket_id}
        calls = [RoutineCall("escalate", {**arguments, "employee_id": subject})]
    update: dict[str, Any] = {"ticket_id": ticket_id, "status": _ROUTINE_TICKET_STATUS[decision]}
    update["note"] = f"Outcome: {decision}."
    if decision == "DENY":
        update["reason_code"] = ROUTINE_REJECTION_REASON
    return [*calls, RoutineCall("update_ticket", update)]


ROUTINE = Routine(lookups=_routine_lookups, action=_routine_action)
