"""Tools of the retail domain: Larkspur Home & Tech returns, refunds and exchanges.

The engine loads this file by path and reads ``TOOLS`` (catalog order: lookups,
then actions, ``record_decision`` last). Every tool takes the episode database
first; the rest of the signature and the Google-style docstring become the JSON
schema the agent sees.

The tools enforce data integrity only (ids exist, an item is not refunded twice,
amounts are positive and not above what was paid). They deliberately do not
enforce the return policy (windows, tiers, fees, thresholds, account flags):
whether the agent follows the policy is what the benchmark measures.

Time comes from the scenario clock (``now``); all calendar dates are Central Time
(America/Chicago), as the policy counts days. The generic parts (time zones,
money in cents, finding and appending records) come from
:mod:`pytest_pibench.toolkit`; this file holds only what is retail's own.

The tools live by area in the sibling modules (``_common``, ``_lookups``, ``_actions``,
``_routine``); this module is the pack's public face:
``TOOLS`` (the catalog) and ``ROUTINE``, loaded by the engine (the folder is imported as a
package, so the modules import each other).
"""

from ._actions import (
    deny_return,
    escalate_to_manager,
    flag_account,
    issue_refund,
    issue_store_credit,
    process_exchange,
    record_decision,
)
from ._common import (
    CENTRAL_TIME,
    DEFAULT_ELECTRONICS_WINDOW_DAYS,
    DEFAULT_GENERAL_WINDOW_DAYS,
    RETURN_HISTORY_LOOKBACK_DAYS,
    DenialReason,
    EscalationType,
    ExchangeReason,
    FlagType,
    RefundMethod,
    RefundReason,
    RestockingFeePercent,
    StoreCreditReason,
)
from ._lookups import (
    check_return_window,
    get_return_history,
    lookup_customer,
    lookup_order,
    lookup_product,
    verify_customer,
)
from ._routine import (
    EMAIL_PATTERN,
    ORDER_ID_PATTERN,
    ROUTINE,
    ROUTINE_CONDITIONAL_FEE_PERCENT,
    ROUTINE_CONDITIONAL_REFUND_REASON,
    ROUTINE_DENIAL_REASON,
    ROUTINE_ESCALATION_TYPE,
    ROUTINE_REFUND_REASON,
    SKU_PATTERN,
)

__all__ = [
    "CENTRAL_TIME",
    "DEFAULT_ELECTRONICS_WINDOW_DAYS",
    "DEFAULT_GENERAL_WINDOW_DAYS",
    "DenialReason",
    "EMAIL_PATTERN",
    "EscalationType",
    "ExchangeReason",
    "FlagType",
    "ORDER_ID_PATTERN",
    "RETURN_HISTORY_LOOKBACK_DAYS",
    "ROUTINE",
    "ROUTINE_CONDITIONAL_FEE_PERCENT",
    "ROUTINE_CONDITIONAL_REFUND_REASON",
    "ROUTINE_DENIAL_REASON",
    "ROUTINE_ESCALATION_TYPE",
    "ROUTINE_REFUND_REASON",
    "RefundMethod",
    "RefundReason",
    "RestockingFeePercent",
    "SKU_PATTERN",
    "StoreCreditReason",
    "TOOLS",
    "check_return_window",
    "deny_return",
    "escalate_to_manager",
    "flag_account",
    "get_return_history",
    "issue_refund",
    "issue_store_credit",
    "lookup_customer",
    "lookup_order",
    "lookup_product",
    "process_exchange",
    "record_decision",
    "verify_customer",
]

TOOLS = [
    lookup_order,
    lookup_customer,
    verify_customer,
    get_return_history,
    lookup_product,
    check_return_window,
    issue_refund,
    issue_store_credit,
    process_exchange,
    deny_return,
    escalate_to_manager,
    flag_account,
    record_decision,
]
