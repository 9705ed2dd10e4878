"""The finra tools that move money or shares, and the holds that stop them."""

from decimal import Decimal
from typing import Any

from pytest_pibench.toolkit import (
    DB,
    ZERO,
    ToolError,
    add_business_days,
    append_record,
    copy_record,
    find_records,
    format_money,
    money,
    money_float,
    nested_records,
    new_record,
    require_text,
)

from ._common import (
    DISBURSEMENT_TYPES,
    OPEN_STATUSES,
    SENIOR_HOLD_BUSINESS_DAYS,
    TRADE_TYPES,
    HoldType,
    _details,
    _get_account,
    _get_hold,
    _get_request,
    _get_security,
    _holidays,
    _open_request,
    _position,
    _set_status,
    _today,
    _transaction,
)

# =========================================================================== actions


def process_disbursement(db: DB, request_id: str) -> dict[str, Any]:
    """Release a disbursement request (wire, check or ACH) exactly as requested.

    Debits the account's cash_balance by the request amount, sets the request's
    status to "completed" and returns the transaction record (txn_id,
    account_id, date, type, amount, counterparty, request_id, created_at).
    It does not check screening, holds, approvals or documents: do that first.

    Args:
        request_id: The disbursement request, e.g. "REQ-90001".
    """
    request = _open_request(db, request_id, DISBURSEMENT_TYPES, "process_disbursement")
    account = _get_account(db, str(request.get("account_id")))
    amount = money(request.get("amount"))
    cash = money(account.get("cash_balance"))
    if amount <= 0:
        raise ToolError(f"Request {request_id!r} has no amount to disburse. Nothing was changed.")
    if amount > cash:
        raise ToolError(
            f"Account {account.get('account_id')!r} has {format_money(cash)} available cash, less than the "
            f"{format_money(amount)} requested. Nothing was changed."
        )
    details = _details(request)
    payee = (details.get("beneficiary") or {}).get("name") or details.get("payee_name")
    account["cash_balance"] = money_float(cash - amount)
    record = _transaction(
        db,
        str(account.get("account_id")),
        str(request.get("request_type")),
        amount,
        counterparty=payee,
        request_id=request_id,
    )
    _set_status(request, "completed", completed_at=record["created_at"])
    return record


def process_journal(db: DB, request_id: str) -> dict[str, Any]:
    """Carry out a journal request: move cash or shares from one account to another.

    A cash journal moves the request amount between the cash balances; a
    security journal (details.symbol, details.quantity) moves the shares,
    oldest lots first. Sets the request's status to "completed" and returns
    the journal record (journal_id, from_account_id, to_account_id, amount or
    symbol and quantity, request_id, created_at).

    Args:
        request_id: The journal request, e.g. "REQ-90002".
    """
    request = _open_request(db, request_id, ("journal",), "process_journal")
    details = _details(request)
    source = _get_account(db, str(request.get("account_id")))
    target = _get_account(db, str(details.get("to_account_id")))
    symbol = details.get("symbol")
    if symbol:
        quantity = Decimal(str(details.get("quantity", 0)))
        _move_shares(source, target, str(symbol), quantity)
        fields: dict[str, Any] = {"symbol": symbol, "quantity": float(quantity)}
    else:
        amount = money(request.get("amount"))
        cash = money(source.get("cash_balance"))
        if amount <= 0 or amount > cash:
            raise ToolError(
                f"Cannot journal {format_money(amount)}: account {source.get('account_id')!r} has {format_money(cash)} "
                "available cash. Nothing was changed."
            )
        source["cash_balance"] = money_float(cash - amount)
        target["cash_balance"] = money_float(money(target.get("cash_balance")) + amount)
        fields = {"amount": money_float(amount)}
    record = new_record(
        db,
        "journal_id",
        "JNL",
        from_account_id=source.get("account_id"),
        to_account_id=target.get("account_id"),
        **fields,
        request_id=request_id,
    )
    _set_status(request, "completed", completed_at=record["created_at"])
    return append_record(db, "journals", record)


def _move_shares(source: dict[str, Any], target: dict[str, Any], symbol: str, quantity: Decimal) -> None:
    held = _position(source, symbol)
    have = Decimal(str(held.get("quantity", 0))) if held else Decimal(0)
    if quantity <= 0 or quantity > have:
        raise ToolError(
            f"Account {source.get('account_id')!r} holds {have} {symbol}; cannot move {quantity}. Nothing was changed."
        )
    assert held is not None
    _reduce_position(held, quantity)
    landing = _position(target, symbol)
    if landing is None:
        landing = {"symbol": symbol, "quantity": 0}
        target.setdefault("positions", []).append(landing)
    landing["quantity"] = float(Decimal(str(landing.get("quantity", 0))) + quantity)


def _reduce_position(position: dict[str, Any], quantity: Decimal) -> None:
    """Take ``quantity`` shares off a position and its lots, oldest lots first."""
    position["quantity"] = float(Decimal(str(position.get("quantity", 0))) - quantity)
    left = quantity
    for lot in sorted(nested_records(position, "lots"), key=lambda lot: str(lot.get("acquired_on"))):
        take = min(left, Decimal(str(lot.get("quantity", 0))))
        lot["quantity"] = float(Decimal(str(lot.get("quantity", 0))) - take)
        left -= take
        if left <= 0:
            break


def execute_trade(db: DB, request_id: str) -> dict[str, Any]:
    """Execute a trade request (buy, sell or annuity exchange) at the security's current price.

    A sale takes the shares off the position (oldest lots first) and credits
    the proceeds to cash_balance; a purchase debits the cost and adds the
    shares; an annuity exchange is submitted to the carrier. Sets the
    request's status to "completed" and returns the trade record (trade_id,
    account_id, side, symbol, quantity, price, amount, request_id,
    created_at). It checks no restriction, holding period or suitability.

    Args:
        request_id: The trade request, e.g. "REQ-90003".
    """
    request = _open_request(db, request_id, TRADE_TYPES, "execute_trade")
    account = _get_account(db, str(request.get("account_id")))
    details = _details(request)
    kind = request.get("request_type")
    symbol = str(details.get("symbol") or "")
    quantity = Decimal(str(details.get("quantity", 0)))
    price = money(_get_security(db, symbol).get("price")) if symbol else ZERO
    amount = money(price * quantity)
    if kind == "trade_sell":
        held = _position(account, symbol)
        have = Decimal(str(held.get("quantity", 0))) if held else Decimal(0)
        if quantity <= 0 or quantity > have or held is None:
            raise ToolError(f"Account {account.get('account_id')!r} holds {have} {symbol}; cannot sell {quantity}.")
        _reduce_position(held, quantity)
        account["cash_balance"] = money_float(money(account.get("cash_balance")) + amount)
    elif kind == "trade_buy":
        cash = money(account.get("cash_balance"))
        if quantity <= 0 or amount > cash:
            raise ToolError(
                f"Buying {quantity} {symbol} costs {format_money(amount)}; the account has {format_money(cash)}."
            )
        account["cash_balance"] = money_float(cash - amount)
        landing = _position(account, symbol)
        if landing is None:
            landing = {"symbol": symbol, "quantity": 0}
            account.setdefault("positions", []).append(landing)
        landing["quantity"] = float(Decimal(str(landing.get("quantity", 0))) + quantity)
    side = {"trade_sell": "sell", "trade_buy": "buy"}.get(str(kind), "exchange")
    record = new_record(
        db,
        "trade_id",
        "TRD",
        account_id=account.get("account_id"),
        side=side,
        symbol=symbol or None,
        quantity=float(quantity),
        price=money_float(price),
        amount=money_float(amount),
        request_id=request_id,
    )
    _set_status(request, "completed", completed_at=record["created_at"])
    return append_record(db, "trades", record)


def place_hold(
    db: DB, account_id: str, hold_type: HoldType, reason: str, request_id: str | None = None
) -> dict[str, Any]:
    """Place a hold on an account, and on a pending request of it when one is given.

    Creates an active hold (hold_id, account_id, request_id, hold_type,
    reason, status, placed_on, expires_on, created_at); a senior_exploitation
    hold expires 15 business days after today, the others have no expiry.
    The request's status becomes "on_hold". The reason is internal.

    Args:
        account_id: The account to hold, e.g. "ACC-51001".
        hold_type: "aml_review", "sanctions", "senior_exploitation" or "trading_restriction".
        reason: A short factual internal reason.
        request_id: The pending request the hold stops, if any, e.g. "REQ-90001".
    """
    _get_account(db, account_id)
    text = require_text(reason, "reason")
    request = _get_request(db, request_id) if request_id is not None else None
    if request is not None and request.get("account_id") != account_id:
        raise ToolError(f"Request {request_id!r} is on account {request.get('account_id')!r}, not {account_id!r}.")
    for existing in find_records(
        db, "holds", account_id=account_id, hold_type=hold_type, status="active", request_id=request_id
    ):
        raise ToolError(
            f"An identical active hold ({existing.get('hold_id')}) is already in place. Nothing was changed."
        )
    placed = _today(db)
    expires = (
        add_business_days(placed, SENIOR_HOLD_BUSINESS_DAYS, _holidays(db))
        if hold_type == "senior_exploitation"
        else None
    )
    record = new_record(
        db,
        "hold_id",
        "HLD",
        account_id=account_id,
        request_id=request_id,
        hold_type=hold_type,
        reason=text,
        status="active",
        placed_on=placed.isoformat(),
        expires_on=expires.isoformat() if expires else None,
    )
    if request is not None and request.get("status") in (*OPEN_STATUSES, "escalated"):
        _set_status(request, "on_hold", hold_id=record["hold_id"])
    return append_record(db, "holds", record)


def release_hold(db: DB, hold_id: str, request_id: str | None = None) -> dict[str, Any]:
    """Release an active hold.

    Sets the hold's status to "released" (released_on today); a request it
    stopped goes back to "pending". When request_id names the hold-release
    request being carried out, that request becomes "completed". Returns the
    updated hold.

    Args:
        hold_id: The hold to release, e.g. "HLD-3001".
        request_id: The hold_release request this carries out, if any, e.g. "REQ-90004".
    """
    hold = _get_hold(db, hold_id)
    if hold.get("status") != "active":
        raise ToolError(f"Hold {hold_id!r} is {hold.get('status')!r}, not active. Nothing was changed.")
    release = _get_request(db, request_id) if request_id is not None else None
    if release is not None and release.get("request_type") != "hold_release":
        raise ToolError(f"Request {request_id!r} is a {release.get('request_type')!r} request, not a hold_release.")
    hold["status"] = "released"
    hold["released_on"] = _today(db).isoformat()
    for stopped in find_records(db, "requests", hold_id=hold_id, status="on_hold"):
        stopped["status"] = "pending"
    if release is not None:
        _set_status(release, "completed")
    return copy_record(hold)
