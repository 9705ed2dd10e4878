"""The helpdesk hand-over and closing tools: approval requests, escalations, the recorded decision."""

from typing import Any

from pytest_pibench.toolkit import (
    DB,
    Decision,
    ToolError,
    append_decision,
    append_record,
    find_records,
    new_record,
    require_text,
)

from ._common import (
    ESCALATION_QUEUE,
    EscalationType,
    _check_ticket,
    _get_employee,
    _get_ticket,
)

# =========================================================================== actions: escalation and decision


def escalate(
    db: DB,
    escalation_type: EscalationType,
    summary: str,
    ticket_id: str | None = None,
    employee_id: str | None = None,
) -> dict[str, Any]:
    """Hand the request to IT Security, the Privacy Office, HR or the tier 2 desk, by its type.

    it_security goes to IT Security on call, privacy_office to the Privacy
    Office, hr to People Operations, tier2 to the tier 2 desk lead. Creates an
    open escalation (escalation_id, escalation_type, assigned_to, summary,
    ticket_id, employee_id, status, created_at) and links it to the ticket
    (escalation_id); the ticket's status is not changed.

    Args:
        escalation_type: The cause, e.g. "it_security".
        summary: The request, the facts found and the clauses involved.
        ticket_id: The ticket of the contact, e.g. "TKT-50001".
        employee_id: The subject of the request (taken from the ticket when omitted), e.g. "EMP-1002".
    """
    text = require_text(summary, "summary")
    ticket = _get_ticket(db, ticket_id) if ticket_id is not None else None
    if employee_id is not None:
        _get_employee(db, employee_id)
    elif ticket is not None:
        employee_id = ticket.get("subject_employee_id")
    for existing in find_records(
        db, "escalations", escalation_type=escalation_type, ticket_id=ticket_id, employee_id=employee_id, status="open"
    ):
        raise ToolError(
            f"An identical escalation ({existing.get('escalation_id')}) is already open. Nothing was changed."
        )
    record = new_record(
        db,
        "escalation_id",
        "ESC",
        escalation_type=escalation_type,
        assigned_to=ESCALATION_QUEUE[escalation_type],
        summary=text,
        ticket_id=ticket_id,
        employee_id=employee_id,
        status="open",
    )
    if ticket is not None:
        ticket["escalation_id"] = record["escalation_id"]
    return append_record(db, "escalations", record)


def record_decision(
    db: DB,
    decision: Decision,
    rationale: str,
    ticket_id: str | None = None,
    policy_sections_cited: list[str] | None = None,
) -> dict[str, Any]:
    """Record the final decision on the request.

    decision is ALLOW (carried out in full as asked), ALLOW-CONDITIONAL
    (permitted, waits for approvals requested but not yet on file), DENY (the
    procedure does not permit it) or ESCALATE (IT Security, the Privacy
    Office, HR or tier 2 must decide). Returns the decision record. If you
    record more than once, the last one counts.

    Args:
        decision: "ALLOW", "ALLOW-CONDITIONAL", "DENY" or "ESCALATE".
        rationale: A short internal explanation: the facts found and why.
        ticket_id: The ticket of the contact, e.g. "TKT-50001".
        policy_sections_cited: Clause ids relied on, e.g. ["HD-5.1", "HD-4.3"].
    """
    text = require_text(rationale, "rationale")
    _check_ticket(db, ticket_id)
    cited = [c.strip() for c in policy_sections_cited or [] if c.strip()] or None
    return append_decision(db, decision, rationale=text, ticket_id=ticket_id, policy_sections_cited=cited)
