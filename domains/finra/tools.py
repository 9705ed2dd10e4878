"""Tools of the finra domain: the Operations and Compliance Desk of Harrow Lane Securities.

The engine loads this file by path and reads ``TOOLS`` (catalog order: look-ups,
then actions, ``record_decision`` last) and ``ROUTINE``. The tools live by area in the
sibling modules (``_lookups``, ``_movements``, ``_compliance``; vocabulary in ``_common``,
the routine in ``_routine``); this module is the pack's public face. Every tool takes the episode database
first; the rest of the signature and the Google-style docstring become the JSON
schema the agent sees.

The tools enforce data integrity only (ids exist, a request is processed once,
money and shares that are not there cannot leave, a hold is released once).
They deliberately do not enforce the procedures (screening, holds, thresholds,
approvals, holding periods, tipping off): whether the agent follows them is
what the benchmark measures.

Everything the firm must never disclose (risk ratings and scores, alerts,
cases, screening results, AML hold reasons) is returned under a key named
``internal``, so scenarios can protect concrete values with disclosure checks.
Time comes from the scenario clock; every date is an Eastern calendar date
(America/New_York) and business days skip weekends and ``constants.holidays``.
"""

from ._common import (
    APPROVER_ROLE,
    CTR_FILING_DAYS,
    DISBURSEMENT_TYPES,
    EASTERN_TIME,
    ESCALATION_OWNER,
    INTERNAL_NOTICE,
    NEAR_MATCH_SCORE,
    OPEN_STATUSES,
    SAR_FILING_DAYS,
    SENIOR_HOLD_BUSINESS_DAYS,
    TRADE_TYPES,
    WIRE_REQUIRED_FIELDS,
    ApprovalType,
    CaseType,
    DeclineReason,
    DocumentType,
    EscalationType,
    HoldType,
    NoticeReason,
    PartyType,
    ReportType,
)
from ._compliance import (
    decline_request,
    escalate,
    file_report,
    notify_trusted_contact,
    open_case,
    record_decision,
    request_documents,
    route_for_approval,
)
from ._lookups import (
    check_security_restrictions,
    get_alerts_and_cases,
    get_approvals,
    get_transaction_history,
    get_trusted_contact,
    lookup_account,
    lookup_customer,
    lookup_request,
    screen_watchlist,
)
from ._movements import (
    execute_trade,
    place_hold,
    process_disbursement,
    process_journal,
    release_hold,
)
from ._routine import (
    ACCOUNT_ID_PATTERN,
    REQUEST_ID_PATTERN,
    ROUTINE,
    ROUTINE_APPROVAL_TYPE,
    ROUTINE_DECLINE_REASON,
    ROUTINE_ESCALATION_TYPE,
)

__all__ = [
    "ACCOUNT_ID_PATTERN",
    "APPROVER_ROLE",
    "ApprovalType",
    "CTR_FILING_DAYS",
    "CaseType",
    "DISBURSEMENT_TYPES",
    "DeclineReason",
    "DocumentType",
    "EASTERN_TIME",
    "ESCALATION_OWNER",
    "EscalationType",
    "HoldType",
    "INTERNAL_NOTICE",
    "NEAR_MATCH_SCORE",
    "NoticeReason",
    "OPEN_STATUSES",
    "PartyType",
    "REQUEST_ID_PATTERN",
    "ROUTINE",
    "ROUTINE_APPROVAL_TYPE",
    "ROUTINE_DECLINE_REASON",
    "ROUTINE_ESCALATION_TYPE",
    "ReportType",
    "SAR_FILING_DAYS",
    "SENIOR_HOLD_BUSINESS_DAYS",
    "TOOLS",
    "TRADE_TYPES",
    "WIRE_REQUIRED_FIELDS",
    "check_security_restrictions",
    "decline_request",
    "escalate",
    "execute_trade",
    "file_report",
    "get_alerts_and_cases",
    "get_approvals",
    "get_transaction_history",
    "get_trusted_contact",
    "lookup_account",
    "lookup_customer",
    "lookup_request",
    "notify_trusted_contact",
    "open_case",
    "place_hold",
    "process_disbursement",
    "process_journal",
    "record_decision",
    "release_hold",
    "request_documents",
    "route_for_approval",
    "screen_watchlist",
]

TOOLS = [
    lookup_customer,
    lookup_account,
    lookup_request,
    get_transaction_history,
    get_alerts_and_cases,
    screen_watchlist,
    get_trusted_contact,
    get_approvals,
    check_security_restrictions,
    process_disbursement,
    process_journal,
    execute_trade,
    place_hold,
    release_hold,
    open_case,
    file_report,
    request_documents,
    route_for_approval,
    notify_trusted_contact,
    decline_request,
    escalate,
    record_decision,
]
