"""The domain author's toolkit: what ``domains/<name>/tools.py`` builds on.

A domain pack's ``tools.py`` defines plain, typed Python functions. The first
parameter of every tool is the episode database (a ``dict``); the remaining
parameters are what the agent passes. The JSON schema the agent sees is
generated from the signature and the Google-style docstring, so the function is
the single source of truth::

    import copy
    from typing import Any

    from pytest_pibench.toolkit import DB, ToolError, append_record, new_record, record_getter

    _get_order = record_getter(
        "orders", "order_id", "No order found with order_id {value!r}. Check the id (format like 'ORD-1001')."
    )

    def lookup_order(db: DB, order_id: str) -> dict[str, Any]:
        \"\"\"Look up an order by its id.

        Args:
            order_id: The order id, e.g. "ORD-1001".
        \"\"\"
        return copy.deepcopy(_get_order(db, order_id))

    TOOLS = [lookup_order, ...]   # catalog order, record_decision last

A tool reports a problem by raising :class:`ToolError` before it changes
anything; the environment turns it into an error result for the agent (the
episode goes on). Tools must be deterministic: time comes from the scenario
clock (:func:`now`, :func:`today` in the business's time zone), ids from
:func:`next_id`, money is ``Decimal`` in cents (:func:`money`).

The toolkit has four parts, each a module of its own:

* :mod:`~pytest_pibench.toolkit.clock`: the scenario clock, calendar dates in a
  time zone (:mod:`zoneinfo`), trailing windows, business days;
* :mod:`~pytest_pibench.toolkit.amounts`: exact amounts rounded to cents half-up;
* :mod:`~pytest_pibench.toolkit.records`: finding records by id with loud
  errors, appending action records with deterministic ids and timestamps,
  reading ``db["constants"]``;
* :mod:`~pytest_pibench.toolkit.names`: :func:`normalize_name`, the name
  comparison of a screening desk (case, accents, punctuation, word order).

It sits in the package's bottom layer: it imports nothing else from
``pytest_pibench``, so a domain pack depends on this API alone.
"""

from __future__ import annotations

from pytest_pibench.toolkit.amounts import (
    CENT,
    ZERO,
    allocate,
    format_money,
    money,
    money_float,
    percent_of,
    positive_amount,
    round_cents,
    sum_money,
)
from pytest_pibench.toolkit.base import DB, Decision, ToolError
from pytest_pibench.toolkit.clock import (
    DEFAULT_NOW,
    DateWindow,
    add_business_days,
    business_days_between,
    days_between,
    holidays_of,
    is_business_day,
    local_date,
    local_datetime,
    local_now,
    now,
    now_datetime,
    time_zone,
    to_local,
    today,
    trailing_days,
)
from pytest_pibench.toolkit.names import normalize_name
from pytest_pibench.toolkit.records import (
    append_decision,
    append_record,
    collection,
    constant,
    copy_record,
    find_record,
    find_records,
    nested_records,
    new_record,
    next_id,
    record_getter,
    require_text,
)

__all__ = [
    # the basics
    "DB",
    "Decision",
    "ToolError",
    # clock and calendar
    "DEFAULT_NOW",
    "DateWindow",
    "add_business_days",
    "business_days_between",
    "days_between",
    "holidays_of",
    "is_business_day",
    "local_date",
    "local_datetime",
    "local_now",
    "now",
    "now_datetime",
    "time_zone",
    "to_local",
    "today",
    "trailing_days",
    # amounts (money)
    "CENT",
    "ZERO",
    "allocate",
    "format_money",
    "money",
    "money_float",
    "percent_of",
    "positive_amount",
    "round_cents",
    "sum_money",
    # records
    "append_decision",
    "append_record",
    "collection",
    "constant",
    "copy_record",
    "find_record",
    "find_records",
    "nested_records",
    "new_record",
    "next_id",
    "record_getter",
    "require_text",
    # names
    "normalize_name",
]
