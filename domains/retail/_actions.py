"""The retail actions: refunds step by step, exchanges, denials, store credit, flags, escalations, the decision."""

from decimal import Decimal
from typing import Any, NamedTuple

from pytest_pibench.toolkit import (
    DB,
    ZERO,
    Decision,
    ToolError,
    allocate,
    append_decision,
    append_record,
    find_record,
    find_records,
    format_money,
    money,
    money_float,
    new_record,
    percent_of,
    positive_amount,
    require_text,
    sum_money,
)

from ._common import (
    _SHIPPING_REFUND_REASONS,
    DenialReason,
    EscalationType,
    ExchangeReason,
    FlagType,
    RefundMethod,
    RefundReason,
    RestockingFeePercent,
    StoreCreditReason,
    _get_customer,
    _get_item,
    _get_order,
    _get_product,
    _item_value,
    _order_shipping,
    _prior_adjustment,
    _refund_for_item,
)

# =========================================================================== actions


def issue_refund(
    db: DB,
    order_id: str,
    item_ids: list[str],
    reason_code: RefundReason,
    refund_method: RefundMethod,
    restocking_fee_percent: RestockingFeePercent,
    amount: float | None = None,
) -> dict[str, Any]:
    """Refund items of an order (or pay a price adjustment) and mark them in the order.

    Without amount, the refund is the price paid for the items (price x
    quantity) less the restocking fee; for damaged_in_transit and wrong_item it
    also includes the order's original shipping charge (once per order). With
    amount, exactly that is refunded; it may not exceed what the items can still
    return after the fee. For reason price_adjustment, amount (the price
    difference) is required, the fee must be 0, the customer keeps the item and
    each item can be adjusted once. Refunded items get return_status
    "refunded" ("price_adjusted" for price adjustments); store_credit refunds
    raise the customer's store_credit_balance. Returns the refund record
    (refund_id, amount, restocking_fee_amount, shipping_refunded, ...); the fee
    and the shipping are the tool's own split when it computed the amount, and
    null when you gave the amount (your amount then holds them; under
    damaged_in_transit or wrong_item the order's shipping counts as paid back).
    Issue it only when the
    policy allows it: this tool does not check windows, tiers, limits or
    approvals.

    Args:
        order_id: The order id, e.g. "ORD-1001".
        item_ids: Ids of the order's items to refund, e.g. ["ORD-1001-1"].
        reason_code: Why the refund is due, e.g. "within_window".
        refund_method: "original_payment" (the order's payment method) or "store_credit".
        restocking_fee_percent: Restocking fee percent deducted: 0, 10 or 15.
        amount: Exact USD amount to refund, e.g. 37.50; required for price_adjustment.
    """
    order = _get_order(db, order_id)
    items = _items_to_refund(order, item_ids)
    adjustment = reason_code == "price_adjustment"
    _check_refundable(db, order_id, items, adjustment=adjustment)
    if adjustment:
        quote = _price_adjustment_quote(items, item_ids, restocking_fee_percent, amount)
        _apply_price_adjustment(order, items, quote)
    else:
        quote = _refund_quote(order_id, order, items, item_ids, reason_code, restocking_fee_percent, amount)
        _apply_refund(order, items, quote)

    customer_id = order.get("customer_id")
    record = new_record(
        db,
        "refund_id",
        "REF",
        order_id=order_id,
        customer_id=customer_id,
        item_ids=list(item_ids),
        amount=money_float(quote.amount),
        restocking_fee_percent=restocking_fee_percent,
        # With an amount given, the fee's base is the agent's (a discounted net price, RET-11.7): not ours to restate.
        restocking_fee_amount=money_float(quote.fee) if amount is None else None,
        shipping_refunded=money_float(quote.shipping) if amount is None else None,
        refund_method=refund_method,
        paid_to=order.get("payment_method") if refund_method == "original_payment" else "store_credit",
        reason_code=reason_code,
    )
    if refund_method == "store_credit" and isinstance(customer_id, str):
        balance = _credit_customer_balance(db, customer_id, quote.amount)
        if balance is not None:
            record["store_credit_balance_after"] = money_float(balance)
    return append_record(db, "refunds", record)


# --------------------------------------------------------------------------- issue_refund, step by step


class _Quote(NamedTuple):
    """What a refund pays, computed and checked before anything changes."""

    values: list[Decimal]
    """Per item: what it can still return (price paid less earlier price adjustments)."""
    value: Decimal
    """The items' total value."""
    fee: Decimal
    """The restocking fee deducted."""
    shipping: Decimal
    """The original shipping charge refunded with the items."""
    amount: Decimal
    """What is paid back."""


def _items_to_refund(order: dict[str, Any], item_ids: list[str]) -> list[dict[str, Any]]:
    """The live item records named by ``item_ids``: at least one, no repeats, all in the order."""
    if not item_ids:
        raise ToolError("item_ids must list at least one item id of the order, e.g. ['ORD-1001-1'].")
    duplicates = sorted({i for i in item_ids if item_ids.count(i) > 1})
    if duplicates:
        raise ToolError(f"item_ids lists {', '.join(map(repr, duplicates))} more than once.")
    return [_get_item(order, item_id) for item_id in item_ids]


def _check_refundable(db: DB, order_id: str, items: list[dict[str, Any]], *, adjustment: bool) -> None:
    """No item refunded or exchanged before; for a price adjustment, none adjusted before."""
    for item in items:
        item_id = str(item.get("item_id"))
        status = item.get("return_status")
        if status == "refunded":
            earlier = _refund_for_item(db, order_id, item_id, adjustment=False)
            raise ToolError(
                f"Item {item_id!r} of order {order_id!r} was already refunded"
                + (f" (refund {earlier})" if earlier else "")
                + "; nothing was changed."
            )
        if status == "exchanged":
            raise ToolError(
                f"Item {item_id!r} of order {order_id!r} was already exchanged; "
                "it cannot also be refunded. Nothing was changed."
            )
        if adjustment and (status == "price_adjusted" or _prior_adjustment(item) > 0):
            earlier = _refund_for_item(db, order_id, item_id, adjustment=True)
            raise ToolError(
                f"Item {item_id!r} of order {order_id!r} already received a price adjustment"
                + (f" (refund {earlier})" if earlier else "")
                + "; an item can be price-adjusted only once. Nothing was changed."
            )


def _remaining_values(items: list[dict[str, Any]]) -> list[Decimal]:
    """What each item can still return: price paid less earlier price adjustments."""
    return [_item_value(item) - _prior_adjustment(item) for item in items]


def _price_adjustment_quote(
    items: list[dict[str, Any]], item_ids: list[str], restocking_fee_percent: int, amount: float | None
) -> _Quote:
    """A price adjustment pays the difference the agent names: required, no fee, at most the items' value."""
    values = _remaining_values(items)
    value = sum_money(values)
    if amount is None:
        raise ToolError(
            "amount is required for reason_code 'price_adjustment': pass the price "
            "difference (price paid minus current price, times quantity), e.g. 25.00."
        )
    if restocking_fee_percent != 0:
        raise ToolError("A price adjustment carries no restocking fee: pass restocking_fee_percent 0.")
    refund = positive_amount(amount)
    if refund > value:
        raise ToolError(
            f"amount {format_money(refund)} exceeds the {format_money(value)} paid for item(s) {', '.join(item_ids)}."
        )
    return _Quote(values, value, ZERO, ZERO, refund)


def _refund_quote(
    order_id: str,
    order: dict[str, Any],
    items: list[dict[str, Any]],
    item_ids: list[str],
    reason_code: str,
    restocking_fee_percent: int,
    amount: float | None,
) -> _Quote:
    """A refund pays the items' value less the fee, plus shipping once for transit damage or a wrong item.

    An explicit ``amount`` may be lower; under a shipping reason the order's shipping then counts as paid back
    (it is refundable once), and the record does not split the amount into items and shipping.
    """
    values = _remaining_values(items)
    value = sum_money(values)
    fee = percent_of(value, restocking_fee_percent)
    shipping = ZERO
    if reason_code in _SHIPPING_REFUND_REASONS and not order.get("shipping_refunded"):
        shipping = _order_shipping(order)
    cap = value - fee + shipping
    if amount is None:
        refund = cap
    else:
        refund = positive_amount(amount)
        if refund > cap:
            raise ToolError(
                f"amount {format_money(refund)} exceeds the {format_money(cap)} refundable "
                f"for item(s) {', '.join(item_ids)} (price paid {format_money(value)}, "
                f"restocking fee {format_money(fee)}"
                + (f", shipping {format_money(shipping)}" if shipping else "")
                + "). Nothing was changed."
            )
        # How much of a given amount is shipping is the agent's split (a discounted net price, RET-11.7, makes
        # "amount minus line price" wrong): the record leaves it open; the order's shipping counts as paid back.
    if refund <= 0:
        raise ToolError(f"Nothing is left to refund for item(s) {', '.join(item_ids)} of order {order_id!r}.")
    return _Quote(values, value, fee, shipping, refund)


def _apply_price_adjustment(order: dict[str, Any], items: list[dict[str, Any]], quote: _Quote) -> None:
    """Split the adjustment over the items pro rata; they stay with the customer, marked price_adjusted."""
    for item, share in zip(items, allocate(quote.amount, quote.values), strict=True):
        item["price_adjusted_amount"] = money_float(share)
        item["return_status"] = "price_adjusted"
    order["return_status"] = "price_adjusted"


def _apply_refund(order: dict[str, Any], items: list[dict[str, Any]], quote: _Quote) -> None:
    """Mark the items and the order refunded, and the order's shipping when it was paid back."""
    for item in items:
        item["return_status"] = "refunded"
    order["return_status"] = "refunded"
    if quote.shipping > 0:
        order["shipping_refunded"] = True


def _credit_customer_balance(db: DB, customer_id: str, amount: Decimal) -> Decimal | None:
    """Raise the customer's store_credit_balance by ``amount``; the new balance (None if no such customer)."""
    try:
        customer = find_record(db, "customers", "customer_id", customer_id)
    except ToolError:
        return None
    balance = money(customer.get("store_credit_balance", 0)) + amount
    customer["store_credit_balance"] = money_float(balance)
    return balance


def issue_store_credit(
    db: DB,
    customer_id: str,
    amount: float,
    reason_code: StoreCreditReason,
    order_id: str | None = None,
) -> dict[str, Any]:
    """Add store credit to a customer's account.

    Raises the customer's store_credit_balance by amount and returns the credit
    record (credit_id, customer_id, amount, reason_code, order_id,
    balance_after, created_at). Use for no-receipt returns, gift returns to the
    recipient, and goodwill credit approved by a manager. This tool does not
    check policy limits or approvals.

    Args:
        customer_id: The customer to credit, e.g. "CUS-2001".
        amount: Credit in USD, greater than 0, e.g. 49.99.
        reason_code: "no_receipt", "gift_return" or "goodwill".
        order_id: The related order, if there is one, e.g. "ORD-1001".
    """
    customer = _get_customer(db, customer_id)
    credit = positive_amount(amount)
    if order_id is not None:
        _get_order(db, order_id)

    balance = money(customer.get("store_credit_balance", 0)) + credit
    customer["store_credit_balance"] = money_float(balance)
    record = new_record(
        db,
        "credit_id",
        "SCR",
        customer_id=customer_id,
        amount=money_float(credit),
        reason_code=reason_code,
        order_id=order_id,
        balance_after=money_float(balance),
    )
    return append_record(db, "store_credits", record)


def process_exchange(
    db: DB,
    order_id: str,
    item_id: str,
    replacement_sku: str,
    reason_code: ExchangeReason,
    replacement_variant: str | None = None,
) -> dict[str, Any]:
    """Exchange one item of an order for a replacement product (no money changes hands).

    Sets the item's and the order's return_status to "exchanged" and returns the
    exchange record (exchange_id, order_id, item_id, original_sku,
    replacement_sku, replacement_name, replacement_variant, reason_code,
    created_at). Use a like-for-like product for warranty_replacement and
    defective exchanges, or the same product in another size or color for
    size_or_color, naming the size or color in replacement_variant.

    Args:
        order_id: The order id, e.g. "ORD-1001".
        item_id: The item of that order to exchange, e.g. "ORD-1001-1".
        replacement_sku: Sku of the replacement product, e.g. "LHT-EL-2041".
        reason_code: "size_or_color", "defective", "warranty_replacement" or "wrong_item".
        replacement_variant: The size and/or color to send, e.g. "size L, Deep Teal" (null: as the original).
    """
    order = _get_order(db, order_id)
    item = _get_item(order, item_id)
    product = _get_product(db, replacement_sku)
    status = item.get("return_status")
    if status in ("refunded", "exchanged"):
        raise ToolError(
            f"Item {item_id!r} of order {order_id!r} was already {status}; it cannot be exchanged. Nothing was changed."
        )

    item["return_status"] = "exchanged"
    order["return_status"] = "exchanged"
    record = new_record(
        db,
        "exchange_id",
        "EXC",
        order_id=order_id,
        item_id=item_id,
        original_sku=item.get("sku"),
        replacement_sku=replacement_sku,
        replacement_name=product.get("name"),
        replacement_variant=require_text(replacement_variant, "replacement_variant")
        if replacement_variant is not None
        else None,
        reason_code=reason_code,
    )
    return append_record(db, "exchanges", record)


def deny_return(db: DB, order_id: str, reason_code: DenialReason) -> dict[str, Any]:
    """Record that a return, refund or adjustment request on an order is declined.

    Sets the order's return_status to "denied" and returns the denial record
    (denial_id, order_id, reason_code, created_at). Tell the customer the reason
    in plain language.

    Args:
        order_id: The order id, e.g. "ORD-1001".
        reason_code: Why the request is declined, e.g. "outside_window".
    """
    order = _get_order(db, order_id)
    if order.get("return_status") == "denied":
        for existing in find_records(db, "denials", order_id=order_id, reason_code=reason_code):
            raise ToolError(
                f"Order {order_id!r} is already denied with reason {reason_code!r} "
                f"(denial {existing.get('denial_id')}); nothing was changed."
            )

    order["return_status"] = "denied"
    record = new_record(
        db, "denial_id", "DEN", order_id=order_id, customer_id=order.get("customer_id"), reason_code=reason_code
    )
    return append_record(db, "denials", record)


def escalate_to_manager(
    db: DB,
    escalation_type: EscalationType,
    summary: str,
    order_id: str | None = None,
    customer_id: str | None = None,
) -> dict[str, Any]:
    """Hand a case to a store manager for review.

    Creates an escalation with status "pending_manager_review" and, when an
    order is given, sets that order's return_status to "escalated". Returns the
    escalation record (escalation_id, type, summary, order_id, customer_id,
    status, created_at). Do not refund, credit or exchange while it is open.

    Args:
        escalation_type: Why a manager must decide, e.g. "high_value_refund".
        summary: What was asked, the facts found and the clauses involved.
        order_id: The order concerned, if any, e.g. "ORD-1001".
        customer_id: The customer concerned, if any, e.g. "CUS-2001".
    """
    text = require_text(summary, "summary")
    order = _get_order(db, order_id) if order_id is not None else None
    if customer_id is not None:
        _get_customer(db, customer_id)
    elif order is not None and isinstance(order.get("customer_id"), str):
        customer_id = order["customer_id"]

    if order_id is not None or customer_id is not None:
        pending = find_records(
            db,
            "escalations",
            status="pending_manager_review",
            type=escalation_type,
            order_id=order_id,
            customer_id=customer_id,
        )
        for existing in pending:
            raise ToolError(
                f"An identical escalation ({existing.get('escalation_id')}, type "
                f"{escalation_type!r}) is already pending manager review; nothing was changed."
            )

    if order is not None:
        order["return_status"] = "escalated"
    record = new_record(
        db,
        "escalation_id",
        "ESC",
        type=escalation_type,
        summary=text,
        order_id=order_id,
        customer_id=customer_id,
        status="pending_manager_review",
    )
    return append_record(db, "escalations", record)


def flag_account(db: DB, customer_id: str, flag_type: FlagType, note: str) -> dict[str, Any]:
    """Put an internal integrity flag on a customer account.

    Adds flag_type to the customer's account_flags (once; flagging again only
    logs the note) and returns the log record (flag_id, customer_id, flag_type,
    note, added, created_at). Flags are internal: never tell the customer.

    Args:
        customer_id: The customer to flag, e.g. "CUS-2001".
        flag_type: "return_abuse", "suspected_fraud" or "identity_mismatch".
        note: A short factual reason for the flag.
    """
    customer = _get_customer(db, customer_id)
    text = require_text(note, "note")
    flags = customer.get("account_flags")
    if not isinstance(flags, list):
        flags = []
        customer["account_flags"] = flags
    added = flag_type not in flags
    if added:
        flags.append(flag_type)
    record = new_record(db, "flag_id", "FLG", customer_id=customer_id, flag_type=flag_type, note=text, added=added)
    return append_record(db, "account_flag_log", record)


def record_decision(
    db: DB,
    decision: Decision,
    rationale: str,
    order_id: str | None = None,
    policy_sections_cited: list[str] | None = None,
) -> dict[str, Any]:
    """Record the final decision on the customer's request.

    decision is ALLOW (granted in full as asked), ALLOW-CONDITIONAL (granted in
    a modified form: fee deducted, store credit or exchange instead of refund,
    partial), DENY (the policy blocks it) or ESCALATE (a manager must decide).
    Returns the decision record. Record one decision per request; if you record
    more than once, the last one counts.

    Args:
        decision: "ALLOW", "ALLOW-CONDITIONAL", "DENY" or "ESCALATE".
        rationale: A short internal explanation of the decision and the facts behind it.
        order_id: The order the decision is about, if any, e.g. "ORD-1001".
        policy_sections_cited: Clause ids relied on, e.g. ["RET-7.3", "RET-6.1"].
    """
    text = require_text(rationale, "rationale")
    if order_id is not None:
        _get_order(db, order_id)
    cited = [c.strip() for c in policy_sections_cited or [] if c.strip()] or None
    return append_decision(
        db,
        decision,
        rationale=text,
        order_id=order_id,
        policy_sections_cited=cited,
    )
