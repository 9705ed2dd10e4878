"""Shared vocabulary of the finra pack: the codes (enums), the desk's constants, dates and the record helpers."""

import difflib
from datetime import date
from decimal import Decimal
from typing import Any, Literal

from pytest_pibench.toolkit import (
    DB,
    ZERO,
    ToolError,
    add_business_days,
    append_record,
    find_record,
    find_records,
    holidays_of,
    is_business_day,
    local_date,
    money,
    money_float,
    nested_records,
    new_record,
    record_getter,
    sum_money,
    today,
)

# --------------------------------------------------------------------------- enums

HoldType = Literal["aml_review", "sanctions", "senior_exploitation", "trading_restriction"]
CaseType = Literal["structuring", "rapid_movement", "profile_inconsistency", "reporting_evasion"]
ReportType = Literal["CTR", "SAR"]
DocumentType = Literal[
    "government_id",
    "beneficial_ownership_certification",
    "source_of_funds",
    "letter_of_authorization",
    "complete_wire_instructions",
    "rule_144_opinion",
    "trusted_contact_form",
]
ApprovalType = Literal["second_authorization", "principal_approval", "compliance_clearance"]
NoticeReason = Literal["temporary_hold", "wellbeing_concern"]
PartyType = Literal["individual", "entity"]
DeclineReason = Literal[
    "not_authorized",
    "identity_not_verified",
    "insufficient_funds",
    "restricted_list",
    "lockup_period",
    "holding_period_not_met",
    "escheated",
    "prohibited_by_policy",
]
EscalationType = Literal[
    "sanctions_review",
    "open_investigation",
    "suspicious_activity",
    "elder_exploitation",
    "information_request",
    "restricted_security",
    "suitability_review",
    "customer_complaint",
    "policy_conflict",
    "policy_gap",
]

# --------------------------------------------------------------------------- constants

EASTERN_TIME = "America/New_York"
"""The firm's time zone: every date the procedures count is an Eastern calendar date (FIN-2.3)."""

INTERNAL_NOTICE = "Internal compliance data: never disclose to the customer or the representative (FIN-8.5)."
"""Attached to every ``internal`` block the tools return."""

ESCALATION_OWNER: dict[str, str] = {
    "sanctions_review": "aml_officer",
    "open_investigation": "aml_officer",
    "suspicious_activity": "aml_officer",
    "elder_exploitation": "principal",
    "information_request": "compliance",
    "restricted_security": "compliance",
    "suitability_review": "principal",
    "customer_complaint": "principal",
    "policy_conflict": "compliance",
    "policy_gap": "compliance",
}
"""Who receives each escalation type (FIN-16.1)."""

APPROVER_ROLE: dict[str, str] = {
    "second_authorization": "principal",
    "principal_approval": "principal",
    "compliance_clearance": "compliance",
}
"""The role that gives each approval type (FIN-16.1)."""

DISBURSEMENT_TYPES = ("wire_out", "check_out", "ach_out")
TRADE_TYPES = ("trade_buy", "trade_sell", "annuity_exchange")
WIRE_REQUIRED_FIELDS = {
    "originator": ("name", "address", "account_number"),
    "beneficiary": ("name", "account_number", "bank"),
}
"""The travel-rule fields a wire of $3,000 or more must carry (FIN-9.1)."""

OPEN_STATUSES = ("pending", "pending_conditions")
"""Request statuses from which a request may still be processed."""

SENIOR_HOLD_BUSINESS_DAYS = 15
SAR_FILING_DAYS = 30
CTR_FILING_DAYS = 15
NEAR_MATCH_SCORE = 0.85
"""Name similarity (0 to 1) from which screening reports a potential match."""

# --------------------------------------------------------------------------- record helpers

_get_customer = record_getter(
    "customers", "customer_id", "No customer found with customer_id {value!r}. Check the id (format like 'CUS-7001')."
)
_get_account = record_getter(
    "accounts", "account_id", "No account found with account_id {value!r}. Check the id (format like 'ACC-51001')."
)
_get_request = record_getter(
    "requests", "request_id", "No request found with request_id {value!r}. Check the id (format like 'REQ-90001')."
)
_get_security = record_getter(
    "securities", "symbol", "No security found with symbol {value!r}. Check the symbol (format like 'HLQX')."
)
_get_hold = record_getter(
    "holds", "hold_id", "No hold found with hold_id {value!r}. Check the id (format like 'HLD-3001')."
)
_get_case = record_getter(
    "cases", "case_id", "No case found with case_id {value!r}. Check the id (format like 'CASE-4001')."
)


def _eastern_date(value: object, what: str) -> date:
    return local_date(value, EASTERN_TIME, what)


def _today(db: DB) -> date:
    return today(db, EASTERN_TIME)


def _holidays(db: DB) -> set[date]:
    return holidays_of(db, EASTERN_TIME)


def _business_day_of(db: DB, day: date) -> date:
    """The business day a date belongs to: itself, or the next business day (FIN-2.3)."""
    closed = _holidays(db)
    return day if is_business_day(day, closed) else add_business_days(day, 1, closed)


def _age(born: date, on: date) -> int:
    return on.year - born.year - ((on.month, on.day) < (born.month, born.day))


def _internal(**fields: Any) -> dict[str, Any]:
    return {"notice": INTERNAL_NOTICE, **fields}


def _accounts_of(db: DB, customer_id: str) -> list[dict[str, Any]]:
    return [a for a in find_records(db, "accounts") if customer_id in (a.get("owners") or [])]


def _owner_names(db: DB, account: dict[str, Any]) -> list[str]:
    names = []
    for owner in account.get("owners") or []:
        try:
            names.append(str(find_record(db, "customers", "customer_id", str(owner)).get("name", "")))
        except ToolError:
            continue
    return names


def _similarity(a: str, b: str) -> float:
    """difflib's ratio of two names, or 0.0 when its cheap upper bounds already rule out a potential match."""
    matcher = difflib.SequenceMatcher(None, a, b)
    if matcher.real_quick_ratio() < NEAR_MATCH_SCORE or matcher.quick_ratio() < NEAR_MATCH_SCORE:
        return 0.0  # the ratio is below the bounds, so below the threshold: only scores above it are reported
    return matcher.ratio()


def _active_holds(db: DB, account_id: str) -> list[dict[str, Any]]:
    return find_records(db, "holds", account_id=account_id, status="active")


def _security_price(db: DB, symbol: str) -> Decimal:
    try:
        return money(find_record(db, "securities", "symbol", symbol).get("price"))
    except ToolError:
        return ZERO


def _positions(account: dict[str, Any]) -> list[dict[str, Any]]:
    return nested_records(account, "positions")


def _position(account: dict[str, Any], symbol: str) -> dict[str, Any] | None:
    return next((p for p in _positions(account) if p.get("symbol") == symbol), None)


def _account_value(db: DB, account: dict[str, Any]) -> Decimal:
    held = sum_money(
        _security_price(db, str(p.get("symbol"))) * Decimal(str(p.get("quantity", 0))) for p in _positions(account)
    )
    return money(account.get("cash_balance")) + held


def _open_request(db: DB, request_id: str, kinds: tuple[str, ...], tool: str) -> dict[str, Any]:
    """The request, if it is of one of ``kinds`` and may still be processed."""
    request = _get_request(db, request_id)
    kind = request.get("request_type")
    if kind not in kinds:
        raise ToolError(f"Request {request_id!r} is a {kind!r} request; {tool} handles {', '.join(kinds)} requests.")
    if request.get("status") not in OPEN_STATUSES:
        raise ToolError(
            f"Request {request_id!r} has status {request.get('status')!r}; it cannot be processed. Nothing was changed."
        )
    return request


def _details(request: dict[str, Any]) -> dict[str, Any]:
    """The request's ``details`` block ({} when it has none)."""
    details = request.get("details")
    return details if isinstance(details, dict) else {}


def _set_status(request: dict[str, Any], status: str, **fields: Any) -> None:
    request["status"] = status
    request.update(fields)


def _transaction(db: DB, account_id: str, kind: str, amount: Decimal, **fields: Any) -> dict[str, Any]:
    record = new_record(
        db,
        "txn_id",
        "TXN",
        account_id=account_id,
        date=_today(db).isoformat(),
        type=kind,
        amount=money_float(amount),
        cash=False,
        **fields,
    )
    return append_record(db, "transactions", record)
