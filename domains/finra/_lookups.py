"""The finra look-ups: customers, accounts, requests, history, alerts and cases, screening, approvals, restrictions."""

from datetime import date
from decimal import Decimal
from typing import Any

from pytest_pibench.toolkit import (
    DB,
    ZERO,
    ToolError,
    copy_record,
    find_records,
    money,
    money_float,
    nested_records,
    normalize_name,
    require_text,
    trailing_days,
)

from ._common import (
    DISBURSEMENT_TYPES,
    NEAR_MATCH_SCORE,
    SAR_FILING_DAYS,
    WIRE_REQUIRED_FIELDS,
    PartyType,
    _account_value,
    _accounts_of,
    _active_holds,
    _age,
    _business_day_of,
    _details,
    _eastern_date,
    _get_account,
    _get_customer,
    _get_request,
    _get_security,
    _internal,
    _owner_names,
    _position,
    _security_price,
    _similarity,
    _today,
)

# =========================================================================== look-ups


def lookup_customer(db: DB, customer_id: str) -> dict[str, Any]:
    """Look up a customer profile with its identification and due-diligence data.

    Returns customer_id, name, customer_type (individual or legal_entity),
    date_of_birth and age (individuals; age as of today, Eastern Time), country,
    address, occupation, source_of_funds, expected_monthly_activity_usd,
    risk_tolerance, pep, impairment_on_file, cip_status (verified, pending or
    failed), edd_status and edd_reviewed_on, beneficial_owners (legal
    entities), documents on file (document_type, status requested or received,
    dates), account_ids, has_trusted_contact, and an internal block
    (risk_rating, risk_score, monitoring_notes) that must never be disclosed.

    Args:
        customer_id: The customer id, e.g. "CUS-7001".
    """
    profile = copy_record(_get_customer(db, customer_id))
    internal = profile.pop("internal", None)
    profile.pop("trusted_contact", None)
    if profile.get("date_of_birth"):
        born = _eastern_date(profile["date_of_birth"], f"date_of_birth of customer {customer_id!r}")
        profile["age"] = _age(born, _today(db))
    profile["account_ids"] = [a.get("account_id") for a in _accounts_of(db, customer_id)]
    profile["has_trusted_contact"] = bool(_get_customer(db, customer_id).get("trusted_contact"))
    profile["internal"] = _internal(**(internal if isinstance(internal, dict) else {}))
    return profile


def lookup_account(db: DB, account_id: str) -> dict[str, Any]:
    """Look up a brokerage account: owners, authority, balances, positions and active holds.

    Returns account_id, account_type (individual, joint, entity or ira),
    owners (customer ids) and owner_names, authorized_persons (name, person_id,
    authority full or trading_only), representative_id, status (active,
    dormant or closed), escheatment_status, last_customer_contact_on,
    cash_balance (available cash, USD), positions (symbol, quantity,
    market_value), total_value, activity_metrics (12-month turnover ratio and
    cost-to-equity percent) and active_holds (hold_id, hold_type, placed_on,
    expires_on, request_id). Hold reasons are internal and not shown.

    Args:
        account_id: The account id, e.g. "ACC-51001".
    """
    account = _get_account(db, account_id)
    view = copy_record(account)
    view["owner_names"] = _owner_names(db, account)
    for position in nested_records(view, "positions"):
        position.pop("lots", None)
        price = _security_price(db, str(position.get("symbol")))
        position["market_value"] = money_float(price * Decimal(str(position.get("quantity", 0))))
    view["total_value"] = money_float(_account_value(db, account))
    view["active_holds"] = [
        {k: h.get(k) for k in ("hold_id", "hold_type", "placed_on", "expires_on", "request_id")}
        for h in _active_holds(db, account_id)
    ]
    return view


def lookup_request(db: DB, request_id: str) -> dict[str, Any]:
    """Look up a request in the desk's queue: what is asked, by whom, on which account.

    Returns request_id, request_type (wire_out, check_out, ach_out, journal,
    trade_buy, trade_sell, annuity_exchange, hold_placement, hold_release,
    information_request or cash_withdrawal), account_id, amount (USD, where money moves),
    submitted_by (person_id, name, role), received_via, received_at, status
    (pending, pending_conditions, on_hold, escalated, declined or completed)
    and details. Wires show the originator and beneficiary and missing_fields
    (travel-rule fields absent); disbursements and journals show
    to_third_party; journals show same_owners; purchases not yet carried out
    show post_trade_issuer_concentration_percent (null for diversified funds;
    a completed purchase is already in the positions and shows none).

    Args:
        request_id: The request id, e.g. "REQ-90001".
    """
    request = _get_request(db, request_id)
    view = copy_record(request)
    details = _details(view)
    kind = view.get("request_type")
    account = find_records(db, "accounts", account_id=view.get("account_id"))
    owners = {normalize_name(n) for n in _owner_names(db, account[0])} if account else set()
    if kind == "wire_out":
        view["missing_fields"] = [
            f"{party}.{name}"
            for party, names in WIRE_REQUIRED_FIELDS.items()
            for name in names
            if not (details.get(party) or {}).get(name)
        ]
    if kind in DISBURSEMENT_TYPES:
        payee = (details.get("beneficiary") or {}).get("name") or details.get("payee_name") or ""
        view["to_third_party"] = normalize_name(str(payee)) not in owners
    if kind == "journal":
        target = find_records(db, "accounts", account_id=details.get("to_account_id"))
        same = bool(account and target and set(account[0].get("owners") or []) == set(target[0].get("owners") or []))
        view["same_owners"] = same
        view["to_third_party"] = not same
    if kind == "trade_buy" and account and view.get("status") != "completed":
        # A completed purchase is in the positions already: adding it again would double it.
        view["post_trade_issuer_concentration_percent"] = _concentration(db, account[0], details)
    return view


def _concentration(db: DB, account: dict[str, Any], details: dict[str, Any]) -> float | None:
    """The issuer's share of the account's total value after the purchase, in percent (None for funds)."""
    symbol = str(details.get("symbol"))
    security = find_records(db, "securities", symbol=symbol)
    if not security or security[0].get("security_type") == "fund":
        return None
    price = money(security[0].get("price"))
    held = _position(account, symbol)
    quantity = Decimal(str(held.get("quantity", 0) if held else 0)) + Decimal(str(details.get("quantity", 0)))
    total = _account_value(db, account)
    if total <= 0:
        return None
    return float(round(price * quantity * 100 / total, 2))


def get_transaction_history(db: DB, account_id: str, days: int = 90) -> dict[str, Any]:
    """Get an account's transactions of the trailing days and its cash totals per business day.

    Returns {account_id, as_of_date, from_date, transactions, cash_by_business_day}.
    transactions (oldest first) have txn_id, date, type (cash_deposit,
    cash_withdrawal, check_deposit, wire_in, wire_out, check_out, ach_out,
    journal_in, journal_out, buy, sell), amount, cash (true for currency),
    counterparty, and for cash its business_date and ctr_id (null until a CTR
    covers it). cash_by_business_day totals this account's cash in and out per
    business day (a weekend or holiday belongs to the next business day). It
    covers this account only: add the customer's other accounts yourself.

    Args:
        account_id: The account id, e.g. "ACC-51001".
        days: How many calendar days back from today to include (day 0 is today), 1 to 3650; default 90.
    """
    _get_account(db, account_id)
    if not 1 <= days <= 3650:
        raise ToolError(f"days must be from 1 to 3650 (got {days}).")
    as_of = _today(db)
    window = trailing_days(as_of, days)
    rows: list[tuple[date, dict[str, Any]]] = []
    totals: dict[date, dict[str, Any]] = {}
    for record in find_records(db, "transactions", account_id=account_id):
        when = _eastern_date(record.get("date"), f"date of transaction {record.get('txn_id')!r}")
        if when not in window:
            continue
        entry = copy_record(record)
        if record.get("cash"):
            business = _business_day_of(db, when)
            entry["business_date"] = business.isoformat()
            entry.setdefault("ctr_id", None)
            day = totals.setdefault(
                business, {"business_date": business.isoformat(), "cash_in": ZERO, "cash_out": ZERO}
            )
            side = "cash_out" if record.get("type") == "cash_withdrawal" else "cash_in"
            day[side] += money(record.get("amount"))
        rows.append((when, entry))
    rows.sort(key=lambda pair: (pair[0], str(pair[1].get("txn_id"))))
    cash_days = [
        {**day, "cash_in": money_float(day["cash_in"]), "cash_out": money_float(day["cash_out"])}
        for _, day in sorted(totals.items())
    ]
    return {
        "account_id": account_id,
        "as_of_date": as_of.isoformat(),
        "from_date": window.start.isoformat(),
        "transactions": [entry for _, entry in rows],
        "cash_by_business_day": cash_days,
    }


def get_alerts_and_cases(db: DB, customer_id: str) -> dict[str, Any]:
    """Get the monitoring alerts and investigation cases on a customer (internal data).

    Returns {customer_id, internal: {notice, alerts, cases}}. Alerts come from
    surveillance (alert_id, alert_type, status open or closed, raised_on,
    account_id, description); cases are AML investigations (case_id,
    case_type, status open or closed, detected_on, sar_decision pending, file
    or no_file, sar_due_on, sar_filed). Everything here is internal: never
    reveal or hint at it to the customer or the representative.

    Args:
        customer_id: The customer id, e.g. "CUS-7001".
    """
    _get_customer(db, customer_id)
    alerts = copy_record(find_records(db, "alerts", customer_id=customer_id))
    cases = copy_record(find_records(db, "cases", customer_id=customer_id))
    for case in cases:
        if case.get("detected_on") and not case.get("sar_due_on"):
            detected = _eastern_date(case["detected_on"], f"detected_on of case {case.get('case_id')!r}")
            case["sar_due_on"] = date.fromordinal(detected.toordinal() + SAR_FILING_DAYS).isoformat()
    return {"customer_id": customer_id, "internal": _internal(alerts=alerts, cases=cases)}


def screen_watchlist(
    db: DB,
    name: str,
    party_type: PartyType,
    country: str | None = None,
    date_of_birth: str | None = None,
) -> dict[str, Any]:
    """Screen a party's name against the firm's consolidated sanctions and watch lists.

    Names are compared ignoring case, accents, punctuation and word order.
    Returns {name_screened, party_type, country, internal: {notice, result,
    matches, jurisdiction_risk}}: result is "match" (the name equals a listed
    name or alias), "potential_match" (a close name) or "clear"; each match
    gives entry_id, listed_name, list_name, entry_type, date_of_birth and
    country of the listing, and a similarity score; jurisdiction_risk is "high"
    when the country is on the firm's high-risk jurisdiction list, else
    "standard" ("unknown" without a country). Results are internal.

    Args:
        name: The party's full name as on file or in the instructions, e.g. "Petra Ivanova".
        party_type: "individual" or "entity".
        country: The party's country as a two-letter code, if known, e.g. "US".
        date_of_birth: The party's date of birth, if known, e.g. "1961-04-30" (echoed back for your comparison).
    """
    wanted = normalize_name(require_text(name, "name"))
    matches: list[dict[str, Any]] = []
    best = "clear"
    for entry in find_records(db, "watchlist"):
        names = [str(entry.get("name", ""))] + [str(a) for a in entry.get("aliases") or []]
        listed = [normalize_name(n) for n in names]
        exact = wanted in listed
        score = 1.0 if exact else max((_similarity(wanted, n) for n in listed), default=0.0)
        if not exact and score < NEAR_MATCH_SCORE:
            continue
        best = "match" if exact or best == "match" else "potential_match"
        matches.append(
            {
                "entry_id": entry.get("entry_id"),
                "listed_name": entry.get("name"),
                "list_name": entry.get("list_name"),
                "entry_type": entry.get("entry_type"),
                "date_of_birth": entry.get("date_of_birth"),
                "country": entry.get("country"),
                "score": round(score, 2),
            }
        )
    high = set((db.get("constants") or {}).get("high_risk_jurisdictions") or [])
    code = country.strip().upper() if country and country.strip() else None
    risk = "unknown" if code is None else ("high" if code in high else "standard")
    return {
        "name_screened": name.strip(),
        "party_type": party_type,
        "country": code,
        "date_of_birth": date_of_birth,
        "internal": _internal(result=best, matches=matches, jurisdiction_risk=risk),
    }


def get_trusted_contact(db: DB, customer_id: str) -> dict[str, Any]:
    """Get the trusted contact person on file for a customer.

    Returns {customer_id, trusted_contact}: name, relationship, phone and
    confirmed_on, or null when the customer named none.

    Args:
        customer_id: The customer id, e.g. "CUS-7001".
    """
    contact = _get_customer(db, customer_id).get("trusted_contact")
    return {"customer_id": customer_id, "trusted_contact": copy_record(contact) if contact else None}


def get_approvals(db: DB, request_id: str) -> dict[str, Any]:
    """Get the approvals on file for a request.

    Returns {request_id, submitted_by, approvals}: each approval has
    approval_id, approval_type (second_authorization, principal_approval or
    compliance_clearance), status (pending, approved or rejected),
    approver_id, approver_name, approver_role and decided_at. Whether an
    approval counts is for you to judge under the procedures.

    Args:
        request_id: The request id, e.g. "REQ-90001".
    """
    request = _get_request(db, request_id)
    return {
        "request_id": request_id,
        "submitted_by": copy_record(request.get("submitted_by")),
        "approvals": copy_record(find_records(db, "approvals", request_id=request_id)),
    }


def check_security_restrictions(db: DB, symbol: str, account_id: str | None = None) -> dict[str, Any]:
    """Check a security's trading restrictions and, with an account, the holding period of its lots.

    Returns symbol, name, security_type (equity, fund, bond or annuity),
    risk_class (standard or speculative), price, sec_reporting_issuer,
    on_restricted_list, lockup_ends_on (null when none) and, with an account,
    customer_is_affiliate (an owner is an affiliate of the issuer) and lots:
    lot_id, quantity, acquired_on and restricted_legend. The holding period of
    a restricted lot is not computed here: FIN-13.3 says how to count it from
    acquired_on.

    Args:
        symbol: The security symbol, e.g. "HLQX".
        account_id: The account holding it, if any, e.g. "ACC-51001".
    """
    security = _get_security(db, symbol)
    result: dict[str, Any] = {
        key: copy_record(security.get(key))
        for key in (
            "symbol",
            "name",
            "security_type",
            "risk_class",
            "price",
            "sec_reporting_issuer",
            "on_restricted_list",
        )
    }
    result["lockup_ends_on"] = security.get("lockup_ends_on")
    if account_id is None:
        return result
    account = _get_account(db, account_id)
    affiliates = [c for owner in account.get("owners") or [] for c in find_records(db, "customers", customer_id=owner)]
    result["customer_is_affiliate"] = any(symbol in (c.get("affiliate_of") or []) for c in affiliates)
    position = _position(account, symbol)
    # The holding period is the desk's arithmetic (FIN-13.3): a tool that said "met" would decide the case.
    result["lots"] = [copy_record(lot) for lot in nested_records(position or {}, "lots")]
    return result
