"""Generic handlers for upstream's retail tool names (upstream-runtime.md §7.6), for declarative packs.

Written from the description of their behaviour, quirks included where a
verdict depends on them (the restocking fee taken only from an unlisted
``restocking_fee_percent`` argument, a refund that succeeds without an order).
"""

from __future__ import annotations

from datetime import date
from typing import Any

from pytest_pibench.packs.generic import HandlerSet, find_record, find_with_id, next_id, now, soft_error

__all__ = ["handlers"]

handlers = HandlerSet()
"""This module's handlers, by tool name (``handlers.py`` combines the modules' tables)."""

_WINDOWS = {"electronics": (15, 21, 30), "other": (30, 45, 60)}
"""Return window in days by category, for silver-or-other / gold / platinum customers."""


def _order(db: dict[str, Any], order_id: Any, *, exact: bool = False) -> dict[str, Any] | None:
    return find_record(db.get("orders"), "order_id", order_id, exact=exact)


def _profile(db: dict[str, Any], customer_id: Any) -> dict[str, Any] | None:
    """The customer's profile; a single-record ``customer_profile`` is the profile whatever its id (upstream)."""
    single = db.get("customer_profile")
    if isinstance(single, dict) and single and not all(isinstance(v, dict) for v in single.values()):
        return single  # one record (its values are fields, not records)
    for collection in ("customer_profile", "customers"):
        found = find_record(db.get(collection), "customer_id", customer_id)
        if found is not None:
            return found
    return None


@handlers("lookup_order")
def lookup_order(db: dict[str, Any], order_id: Any = "", **_: Any) -> Any:
    order = find_with_id(db.get("orders"), "order_id", order_id)
    if order is None:
        return soft_error(f"No order found for order_id='{order_id}'.", order_id=order_id)
    return order


def _category(order: dict[str, Any]) -> str:
    items = [i for i in order.get("items") or [] if isinstance(i, dict)]
    categories = [str(i.get("category") or "").lower() for i in items]
    if "electronics" in categories:
        return "electronics"
    return next((c for c in categories if c), "") or str(order.get("category") or "general").lower()


def _final_sale(order: dict[str, Any]) -> bool:
    flags = order.get("flags") or []
    return bool(order.get("is_final_sale")) or "final_sale" in flags or order.get("sale_type") == "final_sale"


def _day(value: Any) -> date | None:
    try:
        return date.fromisoformat(str(value)[:10])
    except ValueError:
        return None


@handlers("check_return_eligibility")
def check_return_eligibility(db: dict[str, Any], order_id: Any = "", **_: Any) -> Any:
    order = _order(db, order_id)
    if order is None:
        return soft_error(f"No order found for order_id='{order_id}'.", order_id=order_id)
    customer_id = order.get("customer_id")
    profile = _profile(db, customer_id) or {}
    tier = str(profile.get("loyalty_tier") or "silver").lower()
    category = _category(order)
    windows = _WINDOWS["electronics" if category == "electronics" else "other"]
    window = windows[1] if tier == "gold" else windows[2] if tier == "platinum" else windows[0]
    fee = 15 if category == "electronics" and tier not in ("gold", "platinum") else 0
    delivered = next(
        (order[k] for k in ("delivery_date", "delivered_at", "purchase_date", "purchased_at") if order.get(k)), None
    )
    today, start = _day(now(db)), _day(delivered) if delivered else None
    days = max(0, (today - start).days) if today and start else None
    result: dict[str, Any] = {
        "order_id": order_id,
        "customer_id": customer_id,
        "return_window_days": window,
        "days_since_delivery": days,
        "restocking_fee_applicable": fee > 0,
        "restocking_fee_percent": fee,
    }
    if _final_sale(order):
        return {**result, "eligible": False, "reason": "final_sale"}
    if days is None:
        return {**result, "eligible": False, "reason": "no delivery or purchase date on record"}
    if days > window:
        return {**result, "eligible": False, "reason": "outside_return_window"}
    return {**result, "eligible": True, "reason": "within_return_window"}


@handlers("process_refund")
def process_refund(
    db: dict[str, Any], order_id: Any = "", amount: Any = None, restocking_fee_percent: Any = None, **_: Any
) -> Any:
    order = _order(db, order_id, exact=True)  # a mutator: exact id
    refund_id = next_id(db, "REF")
    if order is not None:
        order["status"] = "refunded"
    total = amount if amount is not None else (order or {}).get("total_amount")
    fee = 0.0
    if restocking_fee_percent and isinstance(total, int | float):  # only this unlisted argument applies a fee
        fee = round(float(total) * float(restocking_fee_percent) / 100, 2)
        total = round(float(total) - fee, 2)
    return {"refund_id": refund_id, "status": "processed", "amount_refunded": total,
            "refund_method": "original_payment", "restocking_fee_amount": fee}  # fmt: skip


@handlers("process_exchange")
def process_exchange(db: dict[str, Any], **_: Any) -> dict[str, Any]:
    return {"exchange_id": next_id(db, "EXC"), "status": "processed", "price_difference": 0,
            "new_order_id": next_id(db, "ORD")}  # fmt: skip


@handlers("apply_store_credit")
def apply_store_credit(db: dict[str, Any], customer_id: Any = "", amount: Any = 0, **_: Any) -> dict[str, Any]:
    return {"credit_id": next_id(db, "CRD"), "amount": amount, "customer_id": customer_id, "expiry_date": "2027-02-26"}


@handlers("deny_refund")
def deny_refund(db: dict[str, Any], reason_code: Any = "", **_: Any) -> dict[str, Any]:
    return {"denial_id": next_id(db, "DEN"), "status": "denied", "reason_code": reason_code}


@handlers("flag_account")
def flag_account(db: dict[str, Any], customer_id: Any = "", flag_type: Any = "", **_: Any) -> dict[str, Any]:
    profile = _profile(db, customer_id)
    if profile is not None:
        flags = profile.get("account_flags")
        if not isinstance(flags, list):
            flags = profile["account_flags"] = []
        flags.append(flag_type)
    return {"flag_id": next_id(db, "FLG"), "customer_id": customer_id, "flag_type": flag_type, "status": "active"}
