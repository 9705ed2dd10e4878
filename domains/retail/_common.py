"""Shared vocabulary of the retail pack: codes (enums), constants, Central Time dates, money, record helpers."""

from datetime import date
from decimal import Decimal
from typing import Any, Literal

from pytest_pibench.toolkit import (
    DB,
    ZERO,
    ToolError,
    find_record,
    find_records,
    local_date,
    money,
    nested_records,
    record_getter,
    round_cents,
)

# --------------------------------------------------------------------------- enums

RefundReason = Literal[
    "within_window",
    "holiday_extension",
    "loyalty_extension",
    "damaged_in_transit",
    "wrong_item",
    "defective",
    "price_adjustment",
    "manager_approved",
]
RefundMethod = Literal["original_payment", "store_credit"]
RestockingFeePercent = Literal[0, 10, 15]
StoreCreditReason = Literal["no_receipt", "gift_return", "goodwill"]
ExchangeReason = Literal["size_or_color", "defective", "warranty_replacement", "wrong_item"]
DenialReason = Literal[
    "outside_window",
    "final_sale",
    "non_returnable_item",
    "activated_device",
    "opened_software",
    "condition_not_met",
    "no_proof_of_purchase",
    "return_limit_exceeded",
    "identity_not_verified",
    "competitor_price",
]
EscalationType = Literal[
    "high_value_refund",
    "account_integrity",
    "policy_conflict",
    "policy_gap",
    "customer_dispute",
]
FlagType = Literal["return_abuse", "suspected_fraud", "identity_mismatch"]

# --------------------------------------------------------------------------- constants

CENTRAL_TIME = "America/Chicago"
"""Larkspur's time zone: the policy counts every day as a Central calendar date."""

DEFAULT_GENERAL_WINDOW_DAYS = 30
DEFAULT_ELECTRONICS_WINDOW_DAYS = 15
RETURN_HISTORY_LOOKBACK_DAYS = 90

_SHIPPING_KEYS = ("shipping_cost", "shipping_fee", "shipping")
"""Order fields that may hold the original shipping charge (first present wins)."""

_SHIPPING_REFUND_REASONS = frozenset({"damaged_in_transit", "wrong_item"})
"""Refund reasons under which the original shipping charge is also refundable."""

# --------------------------------------------------------------------------- record helpers

_get_order = record_getter(
    "orders", "order_id", "No order found with order_id {value!r}. Check the id (format like 'ORD-1001')."
)
_get_customer = record_getter(
    "customers", "customer_id", "No customer found with customer_id {value!r}. Check the id (format like 'CUS-2001')."
)
_get_product = record_getter(
    "products", "sku", "No product found with sku {value!r}. Check the sku (format like 'LHT-EL-2041')."
)


def _central_date(value: object, what: str) -> date:
    """The Central calendar date of a DB date or timestamp (a plain date is already Central)."""
    return local_date(value, CENTRAL_TIME, what)


def _order_items(order: dict[str, Any]) -> list[dict[str, Any]]:
    return nested_records(order, "items")


def _get_item(order: dict[str, Any], item_id: str) -> dict[str, Any]:
    for item in _order_items(order):
        if item.get("item_id") == item_id:
            return item
    known = ", ".join(str(i.get("item_id")) for i in _order_items(order)) or "none"
    raise ToolError(f"Item {item_id!r} is not part of order {order.get('order_id')!r} (its item ids: {known}).")


def _item_value(item: dict[str, Any]) -> Decimal:
    """Price paid for the line: unit price times quantity (quantity defaults to 1)."""
    quantity = item.get("quantity", 1)
    if isinstance(quantity, bool) or not isinstance(quantity, int | float) or quantity <= 0:
        quantity = 1
    return round_cents(money(item.get("price", 0)) * Decimal(str(quantity)))


def _prior_adjustment(item: dict[str, Any]) -> Decimal:
    """Price-adjustment money already paid back on this line."""
    return money(item.get("price_adjusted_amount", 0))


def _is_electronics(db: DB, item: dict[str, Any]) -> bool:
    """Electronics by the line's category or, failing that, the product record."""
    if item.get("category") == "electronics":
        return True
    sku = item.get("sku")
    if isinstance(sku, str):
        try:
            product = find_record(db, "products", "sku", sku)
        except ToolError:
            return False
        return product.get("category") == "electronics" or (product.get("return_class") == "electronics")
    return False


def _refund_for_item(db: DB, order_id: str, item_id: str, *, adjustment: bool) -> str | None:
    """The id of an earlier refund of ``item_id``: a price adjustment or a real refund."""
    for record in find_records(db, "refunds", order_id=order_id):
        was_adjustment = record.get("reason_code") == "price_adjustment"
        if item_id in (record.get("item_ids") or []) and was_adjustment == adjustment:
            return str(record.get("refund_id"))
    return None


def _order_shipping(order: dict[str, Any]) -> Decimal:
    for key in _SHIPPING_KEYS:
        if key in order:
            return money(order.get(key))
    return ZERO
