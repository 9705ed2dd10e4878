"""Shared vocabulary of the helpdesk pack: codes (enums), constants, Mountain Time business hours, record helpers."""

from datetime import date, datetime, time
from typing import Any, Literal

from pytest_pibench.toolkit import (
    DB,
    append_record,
    constant,
    copy_record,
    find_records,
    holidays_of,
    is_business_day,
    local_date,
    local_now,
    new_record,
    record_getter,
    today,
)

# --------------------------------------------------------------------------- enums

TicketCategory = Literal[
    "password_reset",
    "account_unlock",
    "mfa_reset",
    "access_request",
    "software_request",
    "offboarding",
    "information_request",
    "other",
]
TicketStatus = Literal["pending_approval", "escalated", "resolved", "rejected"]
RejectionReason = Literal[
    "identity_not_verified",
    "not_authorized",
    "inactive_employee",
    "privacy_protected",
    "not_eligible",
    "prohibited_software",
    "unsupported_device",
    "data_export_prohibited",
    "not_permitted",
]
ApprovalType = Literal["manager", "resource_owner", "sponsor", "it_security"]
DisableReason = Literal["offboarding", "contract_ended"]
EscalationType = Literal["it_security", "privacy_office", "hr", "tier2"]

# --------------------------------------------------------------------------- constants

MOUNTAIN_TIME = "America/Denver"
"""The company's time zone: business hours and every date the procedure counts (HD-2.2)."""

INTERNAL_NOTICE = "Internal: never disclose or hint at this to anyone outside IT Security and HR (HD-14.3)."
PRIVATE_NOTICE = "Private: share only with this person, once verified; never with anyone else (HD-15.1, HD-15.2)."

IDENTITY_FACTORS = ("date_of_birth", "badge_number", "national_id_last4", "home_postcode")
"""The identity factors of HD-4.2, in the order the tool checks them."""

ESCALATION_QUEUE: dict[str, str] = {
    "it_security": "IT Security on call",
    "privacy_office": "Privacy Office",
    "hr": "People Operations",
    "tier2": "Tier 2 desk lead",
}
"""Who receives each escalation type (HD-18.1)."""


# --------------------------------------------------------------------------- record helpers

_get_employee = record_getter(
    "employees", "employee_id", "No employee found with employee_id {value!r}. Check the id (format like 'EMP-1001')."
)
_get_account = record_getter(
    "accounts", "username", "No account found with username {value!r}. Check the username (e.g. 'jashby')."
)
_get_device = record_getter(
    "devices", "device_id", "No device found with device_id {value!r}. Check the id (format like 'DEV-3001')."
)
_get_group = record_getter(
    "groups", "group_id", "No group found with group_id {value!r}. Check the id (format like 'GRP-VPN-STANDARD')."
)
_get_resource = record_getter(
    "resources",
    "resource_id",
    "No resource found with resource_id {value!r}. Check the id (format like 'RES-FIN-LEDGER'; see list_resources).",
)
_get_software = record_getter(
    "software", "software_id", "No software found with software_id {value!r}. Check the id (format like 'SW-101')."
)
_get_ticket = record_getter(
    "tickets", "ticket_id", "No ticket found with ticket_id {value!r}. Check the id (format like 'TKT-50001')."
)


def _today(db: DB) -> date:
    return today(db, MOUNTAIN_TIME)


def _mountain_date(value: object, what: str) -> date:
    return local_date(value, MOUNTAIN_TIME, what)


def _holidays(db: DB) -> set[date]:
    return holidays_of(db, MOUNTAIN_TIME)


def _business_hours(db: DB) -> tuple[bool, datetime]:
    """Whether the scenario clock is inside business hours (HD-2.2), and the local time."""
    moment = local_now(db, MOUNTAIN_TIME)
    start = time.fromisoformat(constant(db, "business_hours", "start", default="07:00"))
    end = time.fromisoformat(constant(db, "business_hours", "end", default="19:00"))
    inside = is_business_day(moment.date(), _holidays(db)) and start <= moment.time() < end
    return inside, moment


def _is_active(db: DB, employee: dict[str, Any]) -> bool:
    """HD-2.3: status active or on_leave, and no end date before today."""
    if employee.get("status") not in ("active", "on_leave"):
        return False
    end = employee.get("end_date")
    if not end:
        return True
    return _mountain_date(end, f"end_date of {employee.get('employee_id')!r}") >= _today(db)


def _name_of(db: DB, employee_id: object) -> str | None:
    found = find_records(db, "employees", employee_id=employee_id) if employee_id else []
    return str(found[0].get("name")) if found else None


def _block(notice: str, fields: object) -> dict[str, Any]:
    return {"notice": notice, **(copy_record(fields) if isinstance(fields, dict) else {})}


def _check_ticket(db: DB, ticket_id: str | None) -> None:
    if ticket_id is not None:
        _get_ticket(db, ticket_id)


def _account_action(
    db: DB, action: str, account: dict[str, Any], ticket_id: str | None, **fields: Any
) -> dict[str, Any]:
    """Log an action on an account in ``account_actions`` and return a copy of the record for the agent."""
    record = new_record(
        db,
        "action_id",
        "ACT",
        action=action,
        username=account.get("username"),
        employee_id=account.get("employee_id"),
        ticket_id=ticket_id,
        **fields,
    )
    return append_record(db, "account_actions", record)


def _membership_id(employee_id: str, group_id: str) -> str:
    return f"{employee_id}:{group_id}"


def _memberships(db: DB) -> dict[str, Any]:
    memberships = db.get("memberships")
    if memberships is None:
        memberships = {}
        db["memberships"] = memberships
    if not isinstance(memberships, dict):
        raise TypeError("db['memberships'] must be a dict keyed by membership_id")
    return memberships
