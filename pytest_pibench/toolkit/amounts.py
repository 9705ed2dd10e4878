"""Money for domain tools: exact :class:`~decimal.Decimal` amounts, rounded to cents half-up.

Binary floats cannot hold 0.10 exactly, so sums, fees and shares computed in
floats drift by a cent now and then, and a state check that demands 212.49
fails on 212.48999999. Tools therefore read every amount into a ``Decimal``
rounded to cents (:func:`money` for database values, :func:`positive_amount`
for what the agent asks), compute in ``Decimal``, and hand JSON back as floats
rounded to cents (:func:`money_float`). Rounding is half-up (0.005 -> 0.01), as
in a shop's till, not Python's default half-even.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from decimal import ROUND_HALF_UP, Decimal

from pytest_pibench.toolkit.base import ToolError

__all__ = [
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
]

CENT = Decimal("0.01")
"""The smallest amount: every amount is a whole number of cents."""

ZERO = Decimal("0.00")
"""No money, with cents: the start of a sum."""


def round_cents(value: Decimal) -> Decimal:
    """``value`` rounded to cents, half-up."""
    return value.quantize(CENT, rounding=ROUND_HALF_UP)


def money(value: object) -> Decimal:
    """A database amount (int, float, numeric string or Decimal) in cents; an unreadable one is 0.00.

    Lenient on purpose: database amounts are written by scenario authors, and a
    missing ``shipping_cost`` or ``store_credit_balance`` means none. Use
    :func:`positive_amount` for amounts the agent passes.
    """
    if isinstance(value, bool) or not isinstance(value, int | float | str | Decimal):
        return ZERO
    try:
        amount = Decimal(str(value))
    except ArithmeticError:
        return ZERO
    if not amount.is_finite():
        return ZERO
    return round_cents(amount)


def positive_amount(amount: float, what: str = "amount", unit: str = "US dollars") -> Decimal:
    """An amount the agent passed, in cents; it must be finite and greater than 0 after rounding.

    Raises:
        ToolError: naming ``what`` (the parameter), e.g. "amount must be greater than 0 (got 0.001)."
    """
    if isinstance(amount, float) and not math.isfinite(amount):
        raise ToolError(f"{what} must be a finite number of {unit}, e.g. 42.50.")
    value = money(amount)
    if value <= 0:
        raise ToolError(f"{what} must be greater than 0 (got {amount!r}).")
    return value


def money_float(value: Decimal) -> float:
    """``value`` rounded to cents as a float, for tool results and database fields (JSON has no Decimal)."""
    return float(round_cents(value))


def format_money(value: Decimal) -> str:
    """``value`` with exactly two decimals, e.g. ``"1234.50"``, for messages the agent reads."""
    return f"{round_cents(value):.2f}"


def sum_money(values: Iterable[Decimal]) -> Decimal:
    """The sum of ``values`` (0.00 when there are none)."""
    return sum(values, ZERO)


def percent_of(value: Decimal, percent: int | Decimal) -> Decimal:
    """``percent`` % of ``value``, rounded to cents: ``percent_of(Decimal("427.99"), 15) == Decimal("64.20")``."""
    return round_cents(value * Decimal(percent) / 100)


def allocate(total: Decimal, weights: Sequence[Decimal]) -> list[Decimal]:
    """Split ``total`` over ``weights`` pro rata, in cents, so that the shares add up to ``total`` exactly.

    Every share but the last is rounded to cents; the last takes what is left,
    so rounding never creates or loses a cent. Example: 44.00 over 89.99 and
    349.99 is [9.00, 35.00].

    Raises:
        ValueError: when ``weights`` is empty, or sums to zero with more than one share.
    """
    if not weights:
        raise ValueError("allocate needs at least one weight")
    whole = sum_money(weights)
    if len(weights) > 1 and whole == 0:
        raise ValueError("allocate cannot split by weights that sum to zero")
    shares: list[Decimal] = []
    remaining = total
    for weight in weights[:-1]:
        share = round_cents(total * weight / whole)
        shares.append(share)
        remaining -= share
    shares.append(remaining)
    return shares
