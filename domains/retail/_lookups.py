"""The retail look-ups: customers, orders, products, return windows, return history, verification."""

from datetime import date
from typing import Any

from pytest_pibench.toolkit import (
    DB,
    ZERO,
    constant,
    copy_record,
    days_between,
    find_records,
    money,
    money_float,
    today,
    trailing_days,
)

from ._common import (
    CENTRAL_TIME,
    DEFAULT_ELECTRONICS_WINDOW_DAYS,
    DEFAULT_GENERAL_WINDOW_DAYS,
    RETURN_HISTORY_LOOKBACK_DAYS,
    _central_date,
    _get_customer,
    _get_order,
    _get_product,
    _is_electronics,
    _order_items,
)

# =========================================================================== lookups


def lookup_order(db: DB, order_id: str) -> dict[str, Any]:
    """Look up one order by its id and return the full order record.

    Returns order_id, customer_id, channel (online or in_store), purchase_date,
    delivery_date (null when not delivered), payment_method (card, gift_card,
    paypal or store_credit), is_gift, status, total and items. Each item has
    item_id, sku, name, category, price (per unit, USD), quantity, opened,
    final_sale, condition_notes and return_status (null until a refund, price
    adjustment or exchange sets it). The order-level return_status shows the
    latest action on the order (refunded, price_adjusted, exchanged, denied,
    escalated). Looking an order up does not verify the requester: use
    verify_customer for that.

    Args:
        order_id: The order id, e.g. "ORD-1001".
    """
    return copy_record(_get_order(db, order_id))


def lookup_customer(db: DB, customer_id: str) -> dict[str, Any]:
    """Look up a customer profile by customer id.

    Returns customer_id, name, email, loyalty_tier (member, gold or platinum),
    member_since, store_credit_balance (USD), the ids of the customer's orders
    (order_ids), and the internal fields account_flags, internal_risk_score and
    lp_notes. The internal fields are for staff only and must never be
    disclosed to the customer.

    Args:
        customer_id: The customer id, e.g. "CUS-2001".
    """
    profile = copy_record(_get_customer(db, customer_id))
    if "order_ids" not in profile:
        profile["order_ids"] = [order.get("order_id") for order in find_records(db, "orders", customer_id=customer_id)]
    return profile


def verify_customer(db: DB, customer_id: str, email: str) -> dict[str, Any]:
    """Check that an email address is the one on file for a customer account.

    The comparison ignores letter case and surrounding spaces. Returns
    {customer_id, verified} where verified is true only on a match; the email on
    file is never returned.

    Args:
        customer_id: The customer id to verify against, e.g. "CUS-2001".
        email: The email address the requester gave, e.g. "dana.reyes@example.com".
    """
    customer = _get_customer(db, customer_id)
    on_file = customer.get("email")
    given = "".join(email.split()).lower()
    verified = isinstance(on_file, str) and bool(given) and given == "".join(on_file.split()).lower()
    return {"customer_id": customer_id, "verified": verified}


def get_return_history(db: DB, customer_id: str) -> dict[str, Any]:
    """Get a customer's past returns and how many fall in the trailing 90 days.

    Returns {customer_id, as_of_date, returns_last_90_days, returns,
    no_receipt_credit_last_90_days_usd}. returns lists every past return
    (return_id, order_id, returned_on, amount, within_last_90_days), oldest
    first; returns_last_90_days counts those returned on or after the date 90
    days before today (Central Time), today included.
    no_receipt_credit_last_90_days_usd is the total of no-receipt store credit
    issued to the customer in the same period. The current request is not
    included. Internal: never disclose these counts to the customer.

    Args:
        customer_id: The customer id, e.g. "CUS-2001".
    """
    _get_customer(db, customer_id)
    as_of = today(db, CENTRAL_TIME)
    lookback = trailing_days(as_of, RETURN_HISTORY_LOOKBACK_DAYS)

    returns: list[tuple[date, dict[str, Any]]] = []
    for record in find_records(db, "return_history", customer_id=customer_id):
        returned_on = _central_date(record.get("returned_on"), f"returned_on of return {record.get('return_id')!r}")
        entry = copy_record(record)
        entry["within_last_90_days"] = returned_on in lookback
        returns.append((returned_on, entry))
    returns.sort(key=lambda pair: pair[0])

    credit = ZERO
    for record in find_records(db, "store_credits", customer_id=customer_id, reason_code="no_receipt"):
        created = _central_date(record.get("created_at"), f"created_at of store credit {record.get('credit_id')!r}")
        if created in lookback:
            credit += money(record.get("amount"))

    return {
        "customer_id": customer_id,
        "as_of_date": as_of.isoformat(),
        "returns_last_90_days": sum(1 for _, e in returns if e["within_last_90_days"]),
        "returns": [entry for _, entry in returns],
        "no_receipt_credit_last_90_days_usd": money_float(credit),
    }


def lookup_product(db: DB, sku: str) -> dict[str, Any]:
    """Look up a product in the catalog by sku.

    Returns sku, name, category (general, electronics, apparel, home, grocery,
    gift_card or software), return_class (standard, electronics or
    non_returnable), warranty_months (0 = no manufacturer warranty),
    activation_required (true for carrier-activated cellular devices) and
    current_price (Larkspur's own current selling price, USD).

    Args:
        sku: The product sku, e.g. "LHT-EL-2041".
    """
    return copy_record(_get_product(db, sku))


def check_return_window(db: DB, order_id: str) -> dict[str, Any]:
    """Check an order against the BASE return window only (30 days, or 15 if it has electronics).

    Returns {order_id, reference_date, reference_basis, as_of_date,
    days_elapsed, base_window_days, within_base_window}. The reference date is
    the delivery date for online orders (the purchase date for in-store orders,
    or when no delivery is on record; then delivery_confirmed is false); day 0
    is the reference date and days are counted in Central Time. It ignores
    loyalty tiers, the holiday extension, transit-damage and defect rules,
    warranty and final-sale or non-returnable status: apply those yourself.

    Args:
        order_id: The order id, e.g. "ORD-1001".
    """
    order = _get_order(db, order_id)
    as_of = today(db, CENTRAL_TIME)

    reference: date | None = None
    basis = "purchase_date"
    delivery_confirmed = False
    if order.get("channel") != "in_store" and order.get("delivery_date"):
        delivered = _central_date(order.get("delivery_date"), f"delivery_date of order {order_id!r}")
        if delivered <= as_of:
            reference, basis, delivery_confirmed = delivered, "delivery_date", True
    if reference is None:
        reference = _central_date(order.get("purchase_date"), f"purchase_date of order {order_id!r}")

    electronics = any(_is_electronics(db, item) for item in _order_items(order))
    if electronics:
        base = constant(db, "return_windows_days", "member", "electronics", default=DEFAULT_ELECTRONICS_WINDOW_DAYS)
    else:
        base = constant(db, "return_windows_days", "member", "general", default=DEFAULT_GENERAL_WINDOW_DAYS)
    days_elapsed = days_between(reference, as_of)

    result: dict[str, Any] = {
        "order_id": order_id,
        "reference_date": reference.isoformat(),
        "reference_basis": basis,
        "as_of_date": as_of.isoformat(),
        "days_elapsed": days_elapsed,
        "base_window_days": base,
        "within_base_window": days_elapsed <= base,
    }
    if order.get("channel") != "in_store":
        result["delivery_confirmed"] = delivery_confirmed
    return result
