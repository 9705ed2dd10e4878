"""Generic handlers for upstream's finra tool names (upstream-runtime.md §7.5), for declarative packs.

"The request" is ``db["activity"]["pending_requests"]`` by ``request_id``.
Written from the description of their behaviour, quirks included where a
verdict depends on them (a wire "submits" even an unknown request; filings and
escalations only return a confirmation).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pytest_pibench.packs.generic import HandlerSet, find_record, find_with_id, next_id, now, same, soft_error

__all__ = ["handlers"]

handlers = HandlerSet()
"""This module's handlers, by tool name (``handlers.py`` combines the modules' tables)."""

_HOLD_EXPIRY = "2026-03-01T10:00:00-05:00"


def _activity(db: dict[str, Any]) -> dict[str, Any]:
    """``db["activity"]`` to read (never created: a look-up must not change the database)."""
    activity = db.get("activity")
    return activity if isinstance(activity, dict) else {}


def _request(db: dict[str, Any], request_id: Any) -> dict[str, Any] | None:
    """The pending request by exact id (upstream's mutators compare exactly), in activity, else top level."""
    found = find_record(_activity(db).get("pending_requests"), "request_id", request_id, exact=True)
    if found is None:
        found = find_record(db.get("pending_requests"), "request_id", request_id, exact=True)
    return found


def _append(container: dict[str, Any], key: str, record: dict[str, Any]) -> dict[str, Any]:
    items = container.get(key)
    if not isinstance(items, list):
        items = container[key] = []
    items.append(record)
    return record


@handlers("lookup_customer_profile")  # shared with retail: customer_profile first, then customers
def lookup_customer_profile(db: dict[str, Any], customer_id: Any = "", **_: Any) -> Any:
    for collection in ("customer_profile", "customers"):
        found = find_with_id(db.get(collection), "customer_id", customer_id)
        if found is not None:
            return found
    return soft_error(f"No customer found for customer_id='{customer_id}'.", customer_id=customer_id)


def _linked_accounts(db: dict[str, Any], customer_id: Any) -> set[str]:
    """Accounts a customer is linked to, inferred from transactions, requests and certificate deposits."""
    out: set[str] = set()
    sources: list[Any] = [db.get("transactions"), _activity(db).get("pending_requests"), db.get("certificate_deposits")]
    for collection in sources:
        for record in collection if isinstance(collection, list) else []:
            owners = ("customer_id", "requested_by_customer_id")
            if isinstance(record, dict) and record.get("account_id") and any(
                same(record.get(k), customer_id) for k in owners
            ):
                out.add(str(record["account_id"]).strip().lower())
    return out


@handlers("query_transaction_history")
def query_transaction_history(
    db: dict[str, Any], customer_id: Any = "", account_id: Any = "", transaction_type: Any = "", symbol: Any = "",
    **_: Any,
) -> dict[str, Any]:  # fmt: skip
    def keep(record: dict[str, Any]) -> bool:
        if customer_id and not (
            same(record.get("customer_id"), customer_id) or same(record.get("requested_by_customer_id"), customer_id)
        ):
            return False
        owner = record.get("customer_id") or record.get("requested_by_customer_id")
        if account_id and not (
            any(same(record.get(k), account_id) for k in ("account_id", "customer_id", "requested_by_customer_id"))
            or (owner and str(account_id).strip().lower() in _linked_accounts(db, owner))  # the owner's account
        ):  # fmt: skip
            return False
        if transaction_type and not same(record.get("type"), transaction_type):
            return False
        return not symbol or any(same(record.get(k), symbol) for k in ("symbol", "ticker", "security"))

    transactions = [dict(t) for t in db.get("transactions") or [] if isinstance(t, dict) and keep(t)]
    pending = [dict(r) for r in _activity(db).get("pending_requests") or [] if isinstance(r, dict) and keep(r)]
    return {"transactions": transactions, "pending_requests": pending, "count": len(transactions)}


@handlers("lookup_account_events")
def lookup_account_events(
    db: dict[str, Any], account_id: Any = "", customer_id: Any = "", event_type: Any = "", **_: Any
) -> dict[str, Any]:
    accounts = ({str(account_id).strip().lower()} if account_id else set()) | (
        _linked_accounts(db, customer_id) if customer_id else set()
    )
    events = [
        dict(e) for e in db.get("account_events") or []
        if isinstance(e, dict) and (not accounts or str(e.get("account_id") or "").strip().lower() in accounts)
        and (not event_type or same(e.get("event_type"), event_type))
    ]  # fmt: skip
    return {"account_events": events, "count": len(events)}


def _mentions(value: Any, account_ids: set[str]) -> bool:
    if isinstance(value, dict):
        return any(_mentions(v, account_ids) for v in value.values())
    if isinstance(value, list):
        return any(_mentions(v, account_ids) for v in value)
    return str(value).strip().lower() in account_ids


@handlers("lookup_related_account_activity")
def lookup_related_account_activity(
    db: dict[str, Any], account_id: Any = "", customer_id: Any = "", cluster_id: Any = "",
    related_group_id: Any = "", **_: Any,
) -> dict[str, Any]:  # fmt: skip
    cluster = cluster_id or related_group_id
    accounts = ({str(account_id).strip().lower()} if account_id else set()) | (
        _linked_accounts(db, customer_id) if customer_id else set()
    )
    activity = db.get("related_account_activity")
    found = [
        {"cluster_id": key, **value} for key, value in (activity.items() if isinstance(activity, dict) else [])
        if isinstance(value, dict) and (not cluster or same(key, cluster))
        and (not accounts or _mentions(value, accounts))
    ]  # fmt: skip
    return {"related_account_activity": found, "count": len(found)}


@handlers("lookup_certificate_deposits")
def lookup_certificate_deposits(db: dict[str, Any], **filters: Any) -> dict[str, Any]:
    wanted = {k: v for k, v in filters.items() if k in ("customer_id", "account_id", "symbol", "certificate_id",
                                                          "deposit_id") and v}  # fmt: skip
    deposits = [
        dict(d) for d in db.get("certificate_deposits") or []
        if isinstance(d, dict) and all(same(d.get(k), v) for k, v in wanted.items())
    ]  # fmt: skip
    return {"certificate_deposits": deposits, "count": len(deposits)}


@handlers("lookup_security_info")
def lookup_security_info(db: dict[str, Any], symbol: Any = "", ticker: Any = "", security: Any = "", **_: Any) -> Any:
    wanted = symbol or ticker or security
    securities = db.get("securities")
    if isinstance(securities, dict):
        for key, record in securities.items():
            if isinstance(record, dict) and (
                same(key, wanted) or same(record.get("symbol"), wanted) or same(record.get("ticker"), wanted)
            ):
                return {"symbol": key, **record}
    return soft_error(f"No security found for symbol='{wanted}'.", symbol=wanted)


@handlers("process_wire_transfer")
def process_wire_transfer(db: dict[str, Any], request_id: Any = "", **_: Any) -> dict[str, Any]:
    request = _request(db, request_id)
    if request is not None:
        request["status"] = "submitted"
    return {"wire_id": next_id(db, "WIRE"), "status": "submitted", "confirmation_number": next_id(db, "CNF"),
            "timestamp": now(db)}  # fmt: skip


@handlers("hold_transaction")
def hold_transaction(db: dict[str, Any], request_id: Any = "", reason: Any = "", **_: Any) -> dict[str, Any]:
    request = _request(db, request_id)
    hold_reason = reason or "compliance_review"
    if request is not None:
        request["status"], request["hold_reason"] = "held", hold_reason
    return {"request_id": request_id, "status": "held", "hold_reason": hold_reason, "hold_expiry": _HOLD_EXPIRY}


@handlers("release_hold")
def release_hold(db: dict[str, Any], request_id: Any = "", reason: Any = None, **_: Any) -> dict[str, Any]:
    request = _request(db, request_id)
    if request is not None:
        request["status"], request["hold_released_at"] = "pending", now(db)
        if reason:
            request["hold_release_reason"] = reason
    return {"request_id": request_id, "status": "released", "released_at": now(db), "reason": reason}


@handlers("process_cash_deposit")
def process_cash_deposit(
    db: dict[str, Any], customer_id: Any = "", amount: Any = None, account_id: Any = "", ctr_exemption: Any = False,
    request_id: Any = "", amount_usd: Any = None, **_: Any,
) -> dict[str, Any]:  # fmt: skip
    value = amount if amount is not None else amount_usd
    request = _request(db, request_id) if request_id else None
    if request is not None:
        request["status"] = "processed"
    deposit_id = next_id(db, "TXN")
    _append(db, "transactions", {"transaction_id": deposit_id, "customer_id": customer_id,
                                 "account_id": account_id or customer_id, "type": "cash_deposit", "amount": value,
                                 "timestamp": now(db), "ctr_exemption_applied": bool(ctr_exemption)})  # fmt: skip
    return {"deposit_id": deposit_id, "status": "processed", "amount": value, "timestamp": now(db)}


def _detail(request: dict[str, Any] | None, *keys: str) -> Any:
    details = (request or {}).get("details") or {}
    return next((details[k] for k in keys if isinstance(details, dict) and details.get(k) is not None), None)


@handlers("execute_trade")
def execute_trade(
    db: dict[str, Any], request_id: Any = "", symbol: Any = None, side: Any = None, quantity: Any = None, **_: Any
) -> dict[str, Any]:
    request = _request(db, request_id)
    if request is not None:
        request["status"] = "executed"
    activity = db.get("activity")
    if not isinstance(activity, dict):
        activity = db["activity"] = {}
    trade = {"trade_id": next_id(db, "TRD"), "request_id": request_id,
             "symbol": symbol or _detail(request, "security", "symbol"),
             "side": side or _detail(request, "action", "side"),
             "quantity": quantity if quantity is not None else _detail(request, "shares", "quantity"),
             "executed_at": now(db), "status": "executed"}  # fmt: skip
    return dict(_append(activity, "trades", trade))


@handlers("journal_security_positions")
def journal_security_positions(
    db: dict[str, Any], symbol: Any = "", quantity: Any = 0, from_account_id: Any = "", to_account_id: Any = "",
    **_: Any,
) -> dict[str, Any]:  # fmt: skip
    positions = db.get("positions")
    if not isinstance(positions, dict):
        positions = db["positions"] = {}
    amount = quantity if isinstance(quantity, int | float) and not isinstance(quantity, bool) else 0
    for account, sign in ((from_account_id, -1), (to_account_id, 1)):
        holding = positions.setdefault(str(account), {})
        if isinstance(holding, dict):  # whole numbers stay whole: the canonical JSON (expected_db) sees it
            holding[str(symbol)] = holding.get(str(symbol), 0) + sign * amount
    entry = {"journal_id": next_id(db, "JRN"), "symbol": symbol, "quantity": quantity,
             "from_account_id": from_account_id, "to_account_id": to_account_id, "status": "posted",
             "posted_at": now(db)}  # fmt: skip
    return dict(_append(db, "journal_entries", entry))


@handlers("process_annuity_cancellation")
def process_annuity_cancellation(
    db: dict[str, Any], request_id: Any = "", surrender_value_usd: Any = None, **_: Any
) -> dict[str, Any]:
    request = _request(db, request_id)
    if request is not None:
        request["status"] = "executed"
    value = surrender_value_usd if surrender_value_usd is not None else _detail(request, "surrender_value_usd")
    return {"cancellation_id": next_id(db, "ANN"), "request_id": request_id, "status": "processed",
            "surrender_value_usd": value, "processed_at": now(db)}  # fmt: skip


@handlers("update_beneficiary_designation")
def update_beneficiary_designation(
    db: dict[str, Any], request_id: Any = "", account_id: Any = "", **details: Any
) -> dict[str, Any]:
    request = _request(db, request_id)
    if request is not None:
        request["status"] = "executed"
    event_id = next_id(db, "EVT")
    _append(db, "account_events", {"event_id": event_id, "account_id": account_id,
                                   "event_type": "BENEFICIARY_DESIGNATION_UPDATED", "details": details,
                                   "timestamp": now(db)})  # fmt: skip
    return {"request_id": request_id, "status": "executed", "event_id": event_id, "updated_at": now(db)}


@handlers("create_alert")
def create_alert(
    db: dict[str, Any], account_id: Any = "", category: Any = "", severity: Any = "", description: Any = "", **_: Any
) -> dict[str, Any]:
    alert = {"alert_id": next_id(db, "ALT"), "account_id": account_id, "category": category or "OTHER",
             "severity": severity or "medium", "status": "open", "created_at": now(db), "description": description}
    monitoring = db.get("monitoring")
    if isinstance(monitoring, dict):  # only where the scenario has monitoring, as upstream
        _append(monitoring, "alerts", alert)
    return {"alert_id": alert["alert_id"], "status": "open", "created_at": alert["created_at"]}


@handlers("open_case")
def open_case(
    db: dict[str, Any], customer_id: Any = "", case_type: Any = "", summary: Any = "", **_: Any
) -> dict[str, Any]:
    case = {"case_id": next_id(db, "CASE"), "customer_id": customer_id, "case_type": case_type or "OTHER",
            "status": "open", "assigned_to": "Analyst", "opened_at": now(db), "summary": summary}  # fmt: skip
    investigations = db.get("investigations")
    if isinstance(investigations, dict):  # only where the scenario has investigations, as upstream
        _append(investigations, "cases", case)
    return {"case_id": case["case_id"], "status": "open", "assigned_to": "Analyst", "created_at": case["opened_at"]}


@handlers("file_sar")
def file_sar(db: dict[str, Any], **_: Any) -> dict[str, Any]:
    return {"sar_id": next_id(db, "SAR"), "filing_status": "draft", "filed_at": now(db)}


@handlers("file_ctr")
def file_ctr(db: dict[str, Any], **_: Any) -> dict[str, Any]:
    return {"ctr_id": next_id(db, "CTR"), "filing_status": "draft", "filed_at": now(db)}


@handlers("dismiss_alert")
def dismiss_alert(db: dict[str, Any], alert_id: Any = "", reason: Any = "", **_: Any) -> dict[str, Any]:
    monitoring = db.get("monitoring")
    for alert in _alerts(monitoring):
        if alert.get("alert_id") == alert_id:  # a mutator: exact
            alert["status"] = "dismissed"
    return {"alert_id": alert_id, "status": "dismissed", "dismissed_at": now(db)}


def _alerts(monitoring: Any) -> Iterator[dict[str, Any]]:
    alerts = monitoring.get("alerts") if isinstance(monitoring, dict) else None
    yield from (a for a in alerts or [] if isinstance(a, dict))
