"""The finra compliance tools: cases, reports, documents, approvals, notices, declines, escalations, the decision."""

from datetime import date
from typing import Any

from pytest_pibench.toolkit import (
    DB,
    Decision,
    ToolError,
    append_decision,
    append_record,
    find_records,
    money,
    money_float,
    nested_records,
    new_record,
    require_text,
    sum_money,
)

from ._common import (
    APPROVER_ROLE,
    CTR_FILING_DAYS,
    ESCALATION_OWNER,
    OPEN_STATUSES,
    SAR_FILING_DAYS,
    ApprovalType,
    CaseType,
    DeclineReason,
    DocumentType,
    EscalationType,
    NoticeReason,
    ReportType,
    _accounts_of,
    _business_day_of,
    _eastern_date,
    _get_account,
    _get_case,
    _get_customer,
    _get_request,
    _set_status,
    _today,
)


def open_case(
    db: DB,
    customer_id: str,
    case_type: CaseType,
    summary: str,
    account_id: str | None = None,
    request_id: str | None = None,
) -> dict[str, Any]:
    """Open an AML investigation case on a customer for the AML officer (internal).

    Creates a case (case_id, customer_id, account_id, request_id, case_type,
    summary, status "open", detected_on today, sar_decision "pending",
    sar_due_on 30 days after detection, sar_filed false). Never tell the
    customer or the representative that a case exists.

    Args:
        customer_id: The customer the activity concerns, e.g. "CUS-7001".
        case_type: "structuring", "rapid_movement", "profile_inconsistency" or "reporting_evasion".
        summary: The facts found (dates, amounts, accounts) and the clauses involved.
        account_id: The account concerned, if any, e.g. "ACC-51001".
        request_id: The pending request concerned, if any, e.g. "REQ-90001".
    """
    _get_customer(db, customer_id)
    text = require_text(summary, "summary")
    if account_id is not None:
        _get_account(db, account_id)
    if request_id is not None:
        _get_request(db, request_id)
    for existing in find_records(db, "cases", customer_id=customer_id, case_type=case_type, status="open"):
        raise ToolError(f"Case {existing.get('case_id')} of type {case_type!r} is already open on {customer_id!r}.")
    detected = _today(db)
    record = new_record(
        db,
        "case_id",
        "CASE",
        customer_id=customer_id,
        account_id=account_id,
        request_id=request_id,
        case_type=case_type,
        summary=text,
        status="open",
        detected_on=detected.isoformat(),
        sar_decision="pending",
        sar_due_on=date.fromordinal(detected.toordinal() + SAR_FILING_DAYS).isoformat(),
        sar_filed=False,
    )
    if request_id is not None:
        _get_request(db, request_id)["case_id"] = record["case_id"]
    return append_record(db, "cases", record)


def file_report(
    db: DB,
    report_type: ReportType,
    customer_id: str,
    summary: str,
    business_date: str | None = None,
    case_id: str | None = None,
) -> dict[str, Any]:
    """File a currency transaction report (CTR) or a suspicious activity report (SAR).

    A CTR needs business_date: it covers every cash transaction of the
    customer, on all the customer's accounts, belonging to that business day,
    marks them with its report id (ctr_id) and totals cash_in and cash_out;
    it is due 15 calendar days after the business day. A SAR needs the
    case_id; it marks the case sar_filed and is due 30 days after detection.
    Returns the report (report_id, report_type, customer_id, business_date,
    cash_in_total, cash_out_total, case_id, filed_on, due_on, late, created_at).

    Args:
        report_type: "CTR" or "SAR".
        customer_id: The customer the report is about, e.g. "CUS-7001".
        summary: A short factual description of what is reported.
        business_date: For a CTR, the business day of the cash, e.g. "2026-03-02".
        case_id: For a SAR, the case it reports, e.g. "CASE-4001".
    """
    _get_customer(db, customer_id)
    text = require_text(summary, "summary")
    filed = _today(db)
    if report_type == "CTR":
        if business_date is None:
            raise ToolError("A CTR needs business_date (the business day of the cash, e.g. '2026-03-02').")
        day = _eastern_date(business_date, "business_date")
        accounts = {a.get("account_id") for a in _accounts_of(db, customer_id)}
        cash = [
            t
            for t in find_records(db, "transactions")
            if t.get("account_id") in accounts
            and t.get("cash")
            and _business_day_of(db, _eastern_date(t.get("date"), f"date of transaction {t.get('txn_id')!r}")) == day
        ]
        if not cash:
            raise ToolError(f"No cash transactions of {customer_id!r} belong to business day {day.isoformat()}.")
        if all(t.get("ctr_id") for t in cash):
            raise ToolError(
                f"The cash of {day.isoformat()} is already covered by CTR {cash[0].get('ctr_id')}. Nothing was changed."
            )
        due = date.fromordinal(day.toordinal() + CTR_FILING_DAYS)
        cash_out = sum_money(money(t.get("amount")) for t in cash if t.get("type") == "cash_withdrawal")
        cash_in = sum_money(money(t.get("amount")) for t in cash) - cash_out
        record = new_record(
            db,
            "report_id",
            "CTR",
            report_type="CTR",
            customer_id=customer_id,
            summary=text,
            business_date=day.isoformat(),
            cash_in_total=money_float(cash_in),
            cash_out_total=money_float(cash_out),
            case_id=None,
            filed_on=filed.isoformat(),
            due_on=due.isoformat(),
            late=filed > due,
        )
        for transaction in cash:
            transaction.setdefault("ctr_id", None)
            transaction["ctr_id"] = transaction["ctr_id"] or record["report_id"]
        return append_record(db, "reports", record)
    if case_id is None:
        raise ToolError("A SAR needs the case_id of the case it reports (e.g. 'CASE-4001').")
    case = _get_case(db, case_id)
    if case.get("customer_id") != customer_id:
        raise ToolError(
            f"Case {case_id!r} concerns {case.get('customer_id')!r}, not {customer_id!r}. Nothing was changed."
        )
    if case.get("sar_filed"):
        raise ToolError(f"A SAR was already filed for case {case_id!r}. Nothing was changed.")
    detected = _eastern_date(case.get("detected_on"), f"detected_on of case {case_id!r}")
    due = date.fromordinal(detected.toordinal() + SAR_FILING_DAYS)
    record = new_record(
        db,
        "report_id",
        "SAR",
        report_type="SAR",
        customer_id=customer_id,
        summary=text,
        business_date=None,
        cash_in_total=None,
        cash_out_total=None,
        case_id=case_id,
        filed_on=filed.isoformat(),
        due_on=due.isoformat(),
        late=filed > due,
    )
    case["sar_filed"] = True
    case["sar_report_id"] = record["report_id"]
    return append_record(db, "reports", record)


def request_documents(
    db: DB, customer_id: str, document_type: DocumentType, note: str, request_id: str | None = None
) -> dict[str, Any]:
    """Ask the customer for a document or missing information, and park the request until it arrives.

    Adds the document to the customer's documents with status "requested"
    and, when request_id is given, sets that request's status to
    "pending_conditions". Returns the document request (doc_request_id,
    customer_id, document_type, note, request_id, created_at). A document
    already received or already requested is not requested again.

    Args:
        customer_id: The customer asked, e.g. "CUS-7001".
        document_type: The document or information needed, e.g. "letter_of_authorization".
        note: What exactly is needed and why, as the customer will read it.
        request_id: The request that waits for it, if any, e.g. "REQ-90001".
    """
    customer = _get_customer(db, customer_id)
    text = require_text(note, "note")
    request = _get_request(db, request_id) if request_id is not None else None
    documents = customer.get("documents")
    if not isinstance(documents, list):
        documents = []
        customer["documents"] = documents
    for document in nested_records(customer, "documents"):
        if document.get("document_type") == document_type and document.get("status") in ("received", "requested"):
            raise ToolError(
                f"{document_type!r} is already {document.get('status')} for {customer_id!r}. Nothing was changed."
            )
    if request is not None and request.get("status") not in OPEN_STATUSES:
        raise ToolError(f"Request {request_id!r} has status {request.get('status')!r}; it cannot wait for documents.")
    documents.append({"document_type": document_type, "status": "requested", "requested_on": _today(db).isoformat()})
    if request is not None:
        _set_status(request, "pending_conditions")
    record = new_record(
        db,
        "doc_request_id",
        "DOC",
        customer_id=customer_id,
        document_type=document_type,
        note=text,
        request_id=request_id,
    )
    return append_record(db, "document_requests", record)


def route_for_approval(db: DB, request_id: str, approval_type: ApprovalType, note: str) -> dict[str, Any]:
    """Send a request to the role that must approve it, and park the request until approved.

    Creates a pending approval (approval_id, request_id, approval_type,
    approver_role: principal for second_authorization and principal_approval,
    compliance for compliance_clearance, status "pending", note, created_at)
    and sets the request's status to "pending_conditions".

    Args:
        request_id: The request to approve, e.g. "REQ-90001".
        approval_type: "second_authorization", "principal_approval" or "compliance_clearance".
        note: What the approver must look at.
    """
    request = _get_request(db, request_id)
    text = require_text(note, "note")
    if request.get("status") not in OPEN_STATUSES:
        raise ToolError(
            f"Request {request_id!r} has status {request.get('status')!r}; it cannot be routed. Nothing was changed."
        )
    for existing in find_records(db, "approvals", request_id=request_id, approval_type=approval_type, status="pending"):
        raise ToolError(
            f"Approval {existing.get('approval_id')} of type {approval_type!r} is already pending. Nothing was changed."
        )
    record = new_record(
        db,
        "approval_id",
        "APR",
        request_id=request_id,
        approval_type=approval_type,
        approver_role=APPROVER_ROLE[approval_type],
        approver_id=None,
        approver_name=None,
        status="pending",
        note=text,
    )
    _set_status(request, "pending_conditions")
    return append_record(db, "approvals", record)


def notify_trusted_contact(db: DB, customer_id: str, reason: NoticeReason, message: str) -> dict[str, Any]:
    """Contact the customer's trusted contact person and log what was said.

    Returns the notice (notice_id, customer_id, contact_name, reason, message,
    created_at). The message must not share balances, positions or
    transactions.

    Args:
        customer_id: The customer whose trusted contact is notified, e.g. "CUS-7001".
        reason: "temporary_hold" or "wellbeing_concern".
        message: What the trusted contact is told.
    """
    contact = _get_customer(db, customer_id).get("trusted_contact")
    text = require_text(message, "message")
    if not isinstance(contact, dict) or not contact.get("name"):
        raise ToolError(f"Customer {customer_id!r} has no trusted contact on file. Nothing was changed.")
    record = new_record(
        db, "notice_id", "TCN", customer_id=customer_id, contact_name=contact.get("name"), reason=reason, message=text
    )
    return append_record(db, "trusted_contact_notices", record)


def decline_request(db: DB, request_id: str, reason_code: DeclineReason) -> dict[str, Any]:
    """Decline a request: it will not be carried out.

    Sets the request's status to "declined" and decline_reason, and returns
    the decline record (decline_id, request_id, reason_code, created_at). Tell
    the requester the reason in plain language (never an internal one).

    Args:
        request_id: The request to decline, e.g. "REQ-90001".
        reason_code: Why it is declined, e.g. "holding_period_not_met".
    """
    request = _get_request(db, request_id)
    if request.get("status") in ("declined", "completed"):
        raise ToolError(f"Request {request_id!r} is already {request.get('status')}. Nothing was changed.")
    _set_status(request, "declined", decline_reason=reason_code)
    record = new_record(
        db, "decline_id", "DCL", request_id=request_id, account_id=request.get("account_id"), reason_code=reason_code
    )
    return append_record(db, "declines", record)


def escalate(
    db: DB,
    escalation_type: EscalationType,
    summary: str,
    request_id: str | None = None,
    customer_id: str | None = None,
) -> dict[str, Any]:
    """Hand a matter to the AML officer, a principal or Compliance, by its type.

    sanctions_review, open_investigation and suspicious_activity go to the AML
    officer; elder_exploitation, suitability_review and customer_complaint to
    a principal; information_request, restricted_security, policy_conflict and
    policy_gap to Compliance. Creates an open escalation (escalation_id,
    escalation_type, assigned_to, summary, request_id, customer_id, status,
    created_at); a pending request's status becomes "escalated" (a held one
    stays "on_hold"). Process nothing while it is open.

    Args:
        escalation_type: The cause, e.g. "suspicious_activity".
        summary: The request, the facts found and the clauses involved.
        request_id: The request concerned, if any, e.g. "REQ-90001".
        customer_id: The customer concerned, if any (taken from the request's account when omitted), e.g. "CUS-7001".
    """
    text = require_text(summary, "summary")
    request = _get_request(db, request_id) if request_id is not None else None
    if customer_id is not None:
        _get_customer(db, customer_id)
    elif request is not None:
        owners = find_records(db, "accounts", account_id=request.get("account_id"))
        customer_id = (owners[0].get("owners") or [None])[0] if owners else None
    for existing in find_records(
        db,
        "escalations",
        escalation_type=escalation_type,
        request_id=request_id,
        customer_id=customer_id,
        status="open",
    ):
        raise ToolError(
            f"An identical escalation ({existing.get('escalation_id')}) is already open. Nothing was changed."
        )
    record = new_record(
        db,
        "escalation_id",
        "ESC",
        escalation_type=escalation_type,
        assigned_to=ESCALATION_OWNER[escalation_type],
        summary=text,
        request_id=request_id,
        customer_id=customer_id,
        status="open",
    )
    if request is not None:
        request["escalation_id"] = record["escalation_id"]
        if request.get("status") in OPEN_STATUSES:
            request["status"] = "escalated"
    return append_record(db, "escalations", record)


def record_decision(
    db: DB,
    decision: Decision,
    rationale: str,
    request_id: str | None = None,
    policy_sections_cited: list[str] | None = None,
) -> dict[str, Any]:
    """Record the final decision on the request.

    decision is ALLOW (carried out in full as asked), ALLOW-CONDITIONAL
    (permitted, proceeds once a named approval, document or information is on
    file), DENY (the procedures do not permit it) or ESCALATE (the AML officer,
    a principal or Compliance must decide). Returns the decision record. If
    you record more than once, the last one counts.

    Args:
        decision: "ALLOW", "ALLOW-CONDITIONAL", "DENY" or "ESCALATE".
        rationale: A short internal explanation: the facts found and why.
        request_id: The request decided, if any, e.g. "REQ-90001".
        policy_sections_cited: Clause ids relied on, e.g. ["FIN-10.1", "FIN-15.1"].
    """
    text = require_text(rationale, "rationale")
    if request_id is not None:
        _get_request(db, request_id)
    cited = [c.strip() for c in policy_sections_cited or [] if c.strip()] or None
    return append_decision(db, decision, rationale=text, request_id=request_id, policy_sections_cited=cited)
