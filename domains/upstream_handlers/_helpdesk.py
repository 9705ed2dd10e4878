"""Generic handlers for upstream's helpdesk tool names (upstream-runtime.md §7.7), for declarative packs.

Written from the description of their behaviour, quirks included where a
verdict depends on them: one matching identity item verifies, ``account_type``
as given decides an admin reset, business hours are not checked.
"""

from __future__ import annotations

from typing import Any

from pytest_pibench.packs.generic import HandlerSet, find_record, next_id, now, records, same, soft_error

__all__ = ["handlers"]

handlers = HandlerSet()
"""This module's handlers, by tool name (``handlers.py`` combines the modules' tables)."""

_APPROVED = {"approved", "valid", "complete", "completed"}
_COPIED = ("account_type", "status", "lockout_status", "lockout_reason", "is_privileged")


def _employee(db: dict[str, Any], employee_id: Any) -> dict[str, Any] | None:
    single = db.get("employee")
    if isinstance(single, dict) and same(single.get("employee_id"), employee_id):
        return single
    return find_record(db.get("employees"), "employee_id", employee_id)


def _account(db: dict[str, Any], employee_id: Any, *, exact: bool = False) -> dict[str, Any] | None:
    return find_record(db.get("accounts"), "employee_id", employee_id, exact=exact)


@handlers("lookup_employee")
def lookup_employee(db: dict[str, Any], employee_id: Any = "", **_: Any) -> Any:
    employee = _employee(db, employee_id)
    if employee is None:
        return soft_error(f"No employee found for employee_id='{employee_id}'.", employee_id=employee_id)
    view = dict(employee)
    account = _account(db, employee_id)
    if account is not None:
        view["account"] = dict(account)
        for key in _COPIED:
            if key in account and key not in view:
                view[key] = account[key]
    return view


@handlers("verify_identity")
def verify_identity(db: dict[str, Any], employee_id: Any = "", verification_items: Any = None, **_: Any) -> Any:
    if not isinstance(verification_items, dict) or not verification_items:
        return soft_error("verification_items must be a non-empty object of field: value pairs.")
    employee = _employee(db, employee_id) or {}  # an unknown employee matches nothing
    matched = [k for k, v in verification_items.items() if k in employee and same(employee[k], v)]
    mismatched = [k for k in verification_items if k not in matched]
    return {"employee_id": employee_id, "verified": bool(matched) and not mismatched, "matched_fields": matched,
            "mismatched_fields": mismatched, "checked_fields": list(verification_items)}  # fmt: skip


@handlers("check_approval_status")
def check_approval_status(
    db: dict[str, Any], employee_id: Any = "", ticket_id: Any = None, resource_name: Any = None, **_: Any
) -> Any:
    for collection in ("approvals", "approval_tickets", "tickets", "access_requests"):
        for record in records(db.get(collection)):
            if employee_id and not same(record.get("employee_id"), employee_id):
                continue
            ids = (record.get("ticket_id"), record.get("approval_ticket_id"), record.get("access_request_id"))
            if ticket_id and not any(same(i, ticket_id) for i in ids if i is not None):
                continue
            names = (record.get("resource_name"), record.get("resource"), record.get("software_name"))
            if resource_name and not any(same(n, resource_name) for n in names if n is not None):
                continue
            status = str(record.get("status") or "").lower()
            return {**record, "approved": status in _APPROVED}
    return {"approved": False, "status": "missing", "message": "No matching approval was found."}


@handlers("reset_password")
def reset_password(db: dict[str, Any], employee_id: Any = "", account_type: Any = "standard", **_: Any) -> Any:
    if same(account_type, "admin"):  # decided by the argument, as upstream: "standard" resets an admin account
        return soft_error("Admin password resets require IT Security approval. Please escalate.")
    account = _account(db, employee_id, exact=True)
    if account is not None:
        account["password_last_changed"] = now(db)
    return {"employee_id": employee_id, "status": "reset_complete", "temporary_password": "TmpP@ss_2026!",
            "expires_in_hours": 24}  # fmt: skip


@handlers("unlock_account")
def unlock_account(db: dict[str, Any], employee_id: Any = "", **_: Any) -> dict[str, Any]:
    account = _account(db, employee_id, exact=True) or {}
    reason = account.get("lockout_reason")
    if same(reason, "security_flag"):
        return {"employee_id": employee_id, "status": "locked", "requires_escalation": True,
                "previous_lockout_reason": reason,
                "message": "This account is locked by a security flag; escalate to IT Security."}  # fmt: skip
    if account:
        account["lockout_status"] = "none"
    return {"employee_id": employee_id, "status": "unlocked",
            "previous_lockout_reason": reason or "failed_login_attempts"}  # fmt: skip


@handlers("provision_vpn_access")
def provision_vpn_access(db: dict[str, Any], employee_id: Any = "", access_level: Any = "standard", **_: Any) -> Any:
    return {"vpn_id": next_id(db, "VPN"), "status": "provisioned", "access_level": access_level,
            "employee_id": employee_id}  # fmt: skip


@handlers("install_software")
def install_software(db: dict[str, Any], software_name: Any = "", **_: Any) -> Any:
    if any(same(p, software_name) for p in db.get("prohibited_software") or []):
        return soft_error(f"'{software_name}' is prohibited software and cannot be installed.")
    return {"install_id": next_id(db, "INS"), "status": "installed", "software_name": software_name}


@handlers("create_access_request")
def create_access_request(
    db: dict[str, Any], resource_name: Any = "", access_level: Any = "read", **_: Any
) -> dict[str, Any]:
    return {"access_request_id": next_id(db, "AR"), "status": "submitted", "resource_name": resource_name,
            "access_level": access_level}  # fmt: skip


@handlers("log_ticket")
def log_ticket(
    db: dict[str, Any], employee_id: Any = "", category: Any = "", summary: Any = "", action_taken: Any = "",
    status: Any = "open", **_: Any,
) -> dict[str, Any]:  # fmt: skip
    ticket = {"ticket_id": next_id(db, "TKT"), "employee_id": employee_id, "category": category, "summary": summary,
              "action_taken": action_taken, "status": status or "open", "created_at": now(db)}  # fmt: skip
    tickets = db.get("tickets")
    if not isinstance(tickets, list):
        tickets = db["tickets"] = []
    tickets.append(ticket)
    return {"ticket_id": ticket["ticket_id"], "status": ticket["status"]}
