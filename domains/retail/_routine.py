"""The routine of the retail pack: the standard look-ups of a return request and the generic action of each decision."""

import re
from typing import Any

from pytest_pibench.toolkit.routine import (
    Routine,
    RoutineCall,
    RoutineRequest,
    RoutineResult,
)

from ._common import (
    DenialReason,
    EscalationType,
    RefundReason,
    RestockingFeePercent,
    _order_items,
)

# =========================================================================== routine
# The standard look-ups of a retail request and the generic action of each
# decision, played by the baseline:routine-<decision> agents (DESIGN §4 rule 8:
# no such routine may pass more than a third of the scenarios of its label).
# The codes are the most common ones in the retail gold trajectories of each
# label (tests/participants/test_routine_baselines.py keeps them so).

ROUTINE_ESCALATION_TYPE: EscalationType = "account_integrity"
"""The most common escalation type of the ESCALATE gold trajectories."""
ROUTINE_DENIAL_REASON: DenialReason = "outside_window"
"""The most common denial reason of the DENY gold trajectories."""
ROUTINE_REFUND_REASON: RefundReason = "loyalty_extension"
"""The most common refund reason of the ALLOW gold refunds."""

ROUTINE_CONDITIONAL_REFUND_REASON: RefundReason = "within_window"
"""The most common refund reason of the ALLOW-CONDITIONAL gold refunds."""
ROUTINE_CONDITIONAL_FEE_PERCENT: RestockingFeePercent = 0
"""The restocking fee of the routine ALLOW-CONDITIONAL refund: the most common fee of those gold refunds (RET-7.3)."""

ORDER_ID_PATTERN = re.compile(r"\bORD-\d+\b")
"""An order id as customers write it, e.g. ORD-30417."""
SKU_PATTERN = re.compile(r"\bLHT-[A-Z]{2}-\d{4}\b")
"""A product sku as printed on a tag, e.g. LHT-AP-3410."""
EMAIL_PATTERN = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
"""An email address in the customer's message."""


def _routine_lookups(request: RoutineRequest) -> list[RoutineCall]:
    """The standard look-ups of a retail request, from the customer block and the first message.

    Verify the customer with the email they gave, read the profile and the
    return history, look up every order and sku the message names, and check
    each order's return window.
    """
    customer_id = request.customer.get("customer_id")
    orders = list(dict.fromkeys(ORDER_ID_PATTERN.findall(request.message)))
    skus = list(dict.fromkeys(SKU_PATTERN.findall(request.message)))
    email = EMAIL_PATTERN.search(request.message)
    calls: list[RoutineCall] = []
    if isinstance(customer_id, str):
        if email is not None:
            calls.append(RoutineCall("verify_customer", {"customer_id": customer_id, "email": email.group()}))
        calls.append(RoutineCall("lookup_customer", {"customer_id": customer_id}))
        calls.append(RoutineCall("get_return_history", {"customer_id": customer_id}))
    calls += [RoutineCall("lookup_order", {"order_id": order_id}) for order_id in orders]
    calls += [RoutineCall("lookup_product", {"sku": sku}) for sku in skus]
    calls += [RoutineCall("check_return_window", {"order_id": order_id}) for order_id in orders]
    return calls


def _routine_action(decision: str, request: RoutineRequest, results: list[RoutineResult]) -> list[RoutineCall]:
    """The generic action of ``decision`` on the first order found: escalate it, deny it, or refund its items."""
    orders = [r.value for r in results if r.call.name == "lookup_order" and not r.error and isinstance(r.value, dict)]
    order: dict[str, Any] | None = orders[0] if orders else None
    customer_id = request.customer.get("customer_id")
    if decision == "ESCALATE":
        arguments: dict[str, Any] = {
            "escalation_type": ROUTINE_ESCALATION_TYPE,
            "summary": "The customer's request needs a manager's review.",
        }
        if order is not None:
            arguments["order_id"] = order.get("order_id")
        if isinstance(customer_id, str):
            arguments["customer_id"] = customer_id
        return [RoutineCall("escalate_to_manager", arguments)]
    if order is None:
        return []
    if decision == "DENY":
        return [RoutineCall("deny_return", {"order_id": order.get("order_id"), "reason_code": ROUTINE_DENIAL_REASON})]
    if decision in ("ALLOW", "ALLOW-CONDITIONAL"):
        items = [i.get("item_id") for i in _order_items(order) if i.get("return_status") is None]
        fee = ROUTINE_CONDITIONAL_FEE_PERCENT if decision == "ALLOW-CONDITIONAL" else 0
        reason = ROUTINE_CONDITIONAL_REFUND_REASON if decision == "ALLOW-CONDITIONAL" else ROUTINE_REFUND_REASON
        arguments = {
            "order_id": order.get("order_id"),
            "item_ids": items,
            "reason_code": reason,
            "refund_method": "original_payment",
            "restocking_fee_percent": fee,
        }
        return [RoutineCall("issue_refund", arguments)] if items else []
    return []


ROUTINE = Routine(lookups=_routine_lookups, action=_routine_action)
