"""The helpdesk tools for tickets and identity: open and update tickets, verify the requester."""

import re
from datetime import date
from typing import Any

from pytest_pibench.toolkit import (
    DB,
    ToolError,
    append_record,
    copy_record,
    find_records,
    new_record,
    now,
    require_text,
)

from ._common import (
    IDENTITY_FACTORS,
    RejectionReason,
    TicketCategory,
    TicketStatus,
    _business_hours,
    _check_ticket,
    _get_employee,
    _get_ticket,
)

# =========================================================================== actions: tickets and identity


def create_ticket(
    db: DB,
    requester_id: str | None,
    category: TicketCategory,
    summary: str,
    subject_employee_id: str | None = None,
    outside_requester: str | None = None,
) -> dict[str, Any]:
    """Open a ticket for this contact.

    Creates a ticket with status "open" and returns it: ticket_id,
    requester_id, outside_requester, subject_employee_id (the requester when
    omitted), category, summary, status, business_hours (whether it was opened
    in business hours, Mountain Time), opened_local_time, updates, created_at.
    A contact from outside the company has no employee id: give requester_id
    null, the caller's name and organisation as outside_requester, and the
    employee the request is about as subject_employee_id.

    Args:
        requester_id: The employee id of the person contacting the desk, e.g. "EMP-1002"; null for an outside caller.
        category: The kind of request (HD-3.1), e.g. "password_reset" or "access_request".
        summary: What is asked, in one or two factual sentences (never a verification answer or a password).
        subject_employee_id: The employee the request is about, when not the requester, e.g. "EMP-1001".
        outside_requester: Who is contacting the desk when it is not an employee, e.g. "Jo Park, Acme Audit LLP".
    """
    if (requester_id is None) == (outside_requester is None):
        raise ToolError(
            "Give either requester_id (an employee) or outside_requester (a caller from outside the company), "
            "not both and not neither. Nothing was changed."
        )
    if requester_id is not None:
        _get_employee(db, requester_id)
        subject = subject_employee_id if subject_employee_id is not None else requester_id
        outside = None
    else:
        if subject_employee_id is None:
            raise ToolError("An outside caller's ticket needs subject_employee_id. Nothing was changed.")
        subject = subject_employee_id
        outside = require_text(outside_requester or "", "outside_requester")
    _get_employee(db, subject)
    text = require_text(summary, "summary")
    for existing in find_records(
        db, "tickets", requester_id=requester_id, outside_requester=outside, subject_employee_id=subject,
        category=category, created_at=now(db),
    ):  # fmt: skip
        raise ToolError(f"Ticket {existing.get('ticket_id')} was already opened for this contact. Nothing was changed.")
    inside, moment = _business_hours(db)
    record = new_record(
        db,
        "ticket_id",
        "TKT",
        requester_id=requester_id,
        outside_requester=outside,
        subject_employee_id=subject,
        category=category,
        summary=text,
        status="open",
        business_hours=inside,
        opened_local_time=moment.isoformat(timespec="minutes"),
        updates=[],
    )
    return append_record(db, "tickets", record)


def update_ticket(
    db: DB,
    ticket_id: str,
    status: TicketStatus,
    note: str,
    reason_code: RejectionReason | None = None,
) -> dict[str, Any]:
    """Update a ticket with the outcome of the contact and a work note.

    Sets the ticket's status (and rejection_reason for "rejected") and
    appends {status, note, reason_code, at} to its updates. Returns the
    ticket. reason_code is required with status "rejected" and only allowed
    with it.

    Args:
        ticket_id: The ticket, e.g. "TKT-50001".
        status: The outcome (HD-3.3): "resolved", "pending_approval", "rejected" or "escalated".
        note: What was done or decided and why (factual; never a verification answer or a password).
        reason_code: Why the request is rejected, e.g. "identity_not_verified" (with status "rejected" only).
    """
    ticket = _get_ticket(db, ticket_id)
    text = require_text(note, "note")
    if status == "rejected" and reason_code is None:
        raise ToolError("A rejected ticket needs a reason_code, e.g. 'identity_not_verified'. Nothing was changed.")
    if status != "rejected" and reason_code is not None:
        raise ToolError(f"reason_code is only given with status 'rejected', not {status!r}. Nothing was changed.")
    updates = ticket.get("updates")
    if not isinstance(updates, list):
        updates = []
        ticket["updates"] = updates
    updates.append({"status": status, "note": text, "reason_code": reason_code, "at": now(db)})
    ticket["status"] = status
    ticket["rejection_reason"] = reason_code
    ticket["updated_at"] = now(db)
    return copy_record(ticket)


def _factor_value(factor: str, value: str) -> str:
    """A factor's value in canonical form: dates as YYYY-MM-DD, others without spaces or dashes, upper case."""
    cleaned = value.strip()
    if factor == "date_of_birth":
        try:
            return date.fromisoformat(cleaned).isoformat()
        except ValueError:
            raise ToolError(f"date_of_birth must be a date as YYYY-MM-DD (got {value!r}). Nothing checked.") from None
    return re.sub(r"[\s-]+", "", cleaned).upper()


def verify_identity(
    db: DB,
    employee_id: str,
    date_of_birth: str | None = None,
    badge_number: str | None = None,
    national_id_last4: str | None = None,
    home_postcode: str | None = None,
    ticket_id: str | None = None,
) -> dict[str, Any]:
    """Check identity factors a caller gave against those on file for the employee they claim to be.

    Pass only the factors the caller actually gave, exactly as given. Returns
    check_id, employee_id, factors_matched and factors_not_matched (this
    call), matched_count (distinct factors matched for this employee over the
    contact) and mismatch_count (factors that did not match over the
    contact). The values on file are never returned.

    Args:
        employee_id: The employee the caller claims to be, e.g. "EMP-1002".
        date_of_birth: The date of birth the caller gave, as YYYY-MM-DD.
        badge_number: The badge number the caller gave (format like "LB-12345").
        national_id_last4: The last four digits of the national id number the caller gave.
        home_postcode: The home postcode (five-digit ZIP code) the caller gave.
        ticket_id: The ticket of the contact, e.g. "TKT-50001".
    """
    employee = _get_employee(db, employee_id)
    _check_ticket(db, ticket_id)
    given = {
        factor: value
        for factor, value in zip(
            IDENTITY_FACTORS, (date_of_birth, badge_number, national_id_last4, home_postcode), strict=True
        )
        if value is not None and value.strip()
    }
    if not given:
        raise ToolError(f"Give at least one identity factor: {', '.join(IDENTITY_FACTORS)}.")
    on_file = employee.get("verification")
    if not isinstance(on_file, dict) or not any(on_file.get(f) for f in IDENTITY_FACTORS):
        raise ToolError(f"No identity factors are on file for {employee_id!r}; the desk cannot verify this person.")
    matched: list[str] = []
    not_matched: list[str] = []
    for factor, value in given.items():
        stored = on_file.get(factor)
        same = stored is not None and _factor_value(factor, value) == _factor_value(factor, str(stored))
        (matched if same else not_matched).append(factor)
    record = new_record(
        db,
        "check_id",
        "IDV",
        employee_id=employee_id,
        ticket_id=ticket_id,
        factors_checked=list(given),
        factors_matched=matched,
        factors_not_matched=not_matched,
    )
    checks = [*find_records(db, "identity_checks", employee_id=employee_id), record]
    record["matched_count"] = len({f for c in checks for f in c.get("factors_matched") or []})
    record["mismatch_count"] = sum(len(c.get("factors_not_matched") or []) for c in checks)
    return append_record(db, "identity_checks", record)
