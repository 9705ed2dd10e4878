"""Scenario time for domain tools: the clock, calendar dates in a time zone, windows, business days.

Tools never read the wall clock: "now" is the scenario's ``environment_setup.now``
(stored as ``db["now"]``), so an episode gives the same results whenever it runs.
Policies count days in a business's own time zone (a return window in Central
Time, a filing deadline in Eastern Time), so timestamps are converted with
:mod:`zoneinfo` (IANA data: the system's, or the ``tzdata`` package where the
platform has none) before their calendar date is taken. Daylight-saving time
is therefore always right, and no domain writes its own offset arithmetic.

Conventions, shared by every helper here:

* a plain ``YYYY-MM-DD`` value is already a local calendar date;
* a timestamp with an offset (or ``Z``) is converted to the zone;
* a timestamp without an offset is read as wall time in the zone;
* "day 0" is the start date: ``days_between(start, start) == 0``.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date, datetime, time, timedelta, tzinfo
from typing import NamedTuple
from zoneinfo import ZoneInfo

from pytest_pibench.toolkit.base import DB, ToolError

__all__ = [
    "holidays_of",
    "DEFAULT_NOW",
    "DateWindow",
    "add_business_days",
    "business_days_between",
    "days_between",
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
]

DEFAULT_NOW = "2026-01-01T00:00:00+00:00"
"""Clock value used when a scenario sets no ``environment_setup.now``."""

_WEEKEND = (5, 6)  # Saturday, Sunday (date.weekday())


# --------------------------------------------------------------------------- the scenario clock


def now(db: DB) -> str:
    """The scenario's current time as an ISO-8601 string (never the wall clock)."""
    value = db.get("now")
    return value if isinstance(value, str) and value else DEFAULT_NOW


def now_datetime(db: DB) -> datetime:
    """The scenario's current time as a :class:`datetime` (``ValueError`` if the clock is not ISO-8601)."""
    return datetime.fromisoformat(now(db))


def local_now(db: DB, tz: str | tzinfo) -> datetime:
    """The scenario's current time in ``tz``, as an aware datetime.

    Raises:
        ToolError: when the scenario clock is not an ISO-8601 timestamp.
    """
    try:
        moment = now_datetime(db)
    except ValueError:
        raise ToolError(f"The scenario clock {now(db)!r} is not an ISO-8601 timestamp.") from None
    return to_local(moment, tz)


def today(db: DB, tz: str | tzinfo) -> date:
    """The scenario's current calendar date in ``tz`` (see :func:`local_now`)."""
    return local_now(db, tz).date()


# --------------------------------------------------------------------------- time zones


def time_zone(tz: str | tzinfo) -> tzinfo:
    """``tz`` itself, or the IANA zone of that name (e.g. ``"America/Chicago"``).

    Raises:
        zoneinfo.ZoneInfoNotFoundError: for an unknown name, a bug in the domain, not the agent's fault.
    """
    return ZoneInfo(tz) if isinstance(tz, str) else tz


def to_local(moment: datetime, tz: str | tzinfo) -> datetime:
    """``moment`` in ``tz``: an aware one is converted (DST-aware); a naive one is taken as wall time there."""
    zone = time_zone(tz)
    if moment.tzinfo is None or moment.utcoffset() is None:
        return moment.replace(tzinfo=zone)
    return moment.astimezone(zone)


def local_datetime(value: object, tz: str | tzinfo, what: str) -> datetime:
    """A database date or timestamp as an aware datetime in ``tz`` (a plain date is its local midnight).

    ``value`` may be an ISO-8601 string, a :class:`date` or a :class:`datetime`;
    ``what`` names it in the error, e.g. ``"delivery_date of order 'ORD-1'"``.

    Raises:
        ToolError: when the value is missing or not an ISO-8601 date or timestamp.
    """
    zone = time_zone(tz)
    if isinstance(value, datetime):
        return to_local(value, zone)
    if isinstance(value, date):
        return datetime.combine(value, time(), zone)
    if not isinstance(value, str) or not value.strip():
        raise ToolError(f"{what} is missing or not a date (found {value!r}).")
    text = value.strip()
    try:
        if len(text) == 10:
            return datetime.combine(date.fromisoformat(text), time(), zone)
        return to_local(datetime.fromisoformat(text), zone)
    except ValueError:
        raise ToolError(f"{what} is not an ISO-8601 date or timestamp (found {text!r}).") from None


def local_date(value: object, tz: str | tzinfo, what: str) -> date:
    """The calendar date in ``tz`` of a database date or timestamp (see :func:`local_datetime`)."""
    return local_datetime(value, tz, what).date()


# --------------------------------------------------------------------------- calendar days and windows


def days_between(start: date, end: date) -> int:
    """Calendar days from ``start`` to ``end``: 0 on the start date itself, negative before it."""
    return (end - start).days


class DateWindow(NamedTuple):
    """A range of calendar dates, both ends included; ``day in window`` tests membership."""

    start: date
    end: date

    def __contains__(self, day: object) -> bool:
        return isinstance(day, date) and self.start <= day <= self.end


def trailing_days(end: date, days: int) -> DateWindow:
    """The window from ``days`` days before ``end`` up to ``end``, both included.

    ``trailing_days(today, 90)`` is "the last 90 days" as policies count it:
    a date exactly 90 days ago is inside, 91 days ago is outside.
    """
    return DateWindow(end - timedelta(days=days), end)


# --------------------------------------------------------------------------- business days


def is_business_day(day: date, holidays: Iterable[date] = ()) -> bool:
    """Monday to Friday and not one of ``holidays`` (the domain's own list, e.g. from its db constants)."""
    return day.weekday() not in _WEEKEND and day not in _as_set(holidays)


def add_business_days(start: date, count: int, holidays: Iterable[date] = ()) -> date:
    """The date ``count`` business days after ``start`` (before it when negative; ``start`` when 0).

    ``start`` itself need not be a business day: a case opened on Saturday and
    due "within 2 business days" is due on Tuesday.
    """
    closed = _as_set(holidays)
    step = timedelta(days=1 if count >= 0 else -1)
    day, left = start, abs(count)
    while left:
        day += step
        if is_business_day(day, closed):
            left -= 1
    return day


def business_days_between(start: date, end: date, holidays: Iterable[date] = ()) -> int:
    """Business days after ``start`` up to and including ``end``; minus those from ``end`` up to ``start`` when earlier.

    The inverse of :func:`add_business_days`:
    ``business_days_between(d, add_business_days(d, n)) == n`` for every ``n``.
    """
    closed = _as_set(holidays)
    if end >= start:
        days = (start + timedelta(offset) for offset in range(1, (end - start).days + 1))
        return sum(1 for day in days if is_business_day(day, closed))
    days = (end + timedelta(offset) for offset in range((start - end).days))
    return -sum(1 for day in days if is_business_day(day, closed))


def holidays_of(db: DB, tz: str | tzinfo) -> set[date]:
    """The closed days listed in ``db["constants"]["holidays"]`` (ISO dates, read in ``tz``)."""
    values = (db.get("constants") or {}).get("holidays") or []
    return {local_date(v, tz, "a holiday in constants.holidays") for v in values if isinstance(v, str)}


def _as_set(holidays: Iterable[date]) -> set[date] | frozenset[date]:
    return holidays if isinstance(holidays, set | frozenset) else set(holidays)
