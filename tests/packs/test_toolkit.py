"""The domain author's toolkit (pytest_pibench.toolkit): clock and calendar, money, records."""

from __future__ import annotations

import math
import zoneinfo
from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal
from typing import Any

import pytest

import pytest_pibench.toolkit as toolkit
from pytest_pibench.toolkit import (
    DEFAULT_NOW,
    ToolError,
    add_business_days,
    allocate,
    append_decision,
    append_record,
    business_days_between,
    collection,
    constant,
    days_between,
    find_record,
    find_records,
    format_money,
    is_business_day,
    local_date,
    local_datetime,
    local_now,
    money,
    money_float,
    nested_records,
    new_record,
    next_id,
    now,
    now_datetime,
    percent_of,
    positive_amount,
    record_getter,
    require_text,
    round_cents,
    sum_money,
    time_zone,
    to_local,
    today,
    trailing_days,
)
from pytest_pibench.toolkit import amounts as amounts_module
from pytest_pibench.toolkit import clock as clock_module
from pytest_pibench.toolkit import names as names_module
from pytest_pibench.toolkit import records as records_module

CHICAGO = "America/Chicago"


def test_package_exports_exactly_its_modules_names():
    modules = [toolkit.base, clock_module, amounts_module, names_module, records_module]
    assert sorted(toolkit.__all__) == sorted(name for m in modules for name in m.__all__)
    for name in toolkit.__all__:
        assert getattr(toolkit, name) is not None, name


# =========================================================================== clock


def test_now_is_the_scenario_clock_or_the_default():
    assert now({}) == DEFAULT_NOW
    assert now({"now": ""}) == DEFAULT_NOW
    assert now({"now": 5}) == DEFAULT_NOW
    assert now({"now": "2026-02-01T10:00:00-06:00"}) == "2026-02-01T10:00:00-06:00"
    assert now_datetime({"now": "2026-02-01T10:00:00-06:00"}) == datetime(2026, 2, 1, 16, tzinfo=UTC)
    with pytest.raises(ValueError):
        now_datetime({"now": "soon"})


def test_local_now_and_today_convert_the_clock():
    db = {"now": "2026-01-25T04:30:00+00:00"}  # 22:30 CST on Jan 24
    assert local_now(db, CHICAGO).isoformat() == "2026-01-24T22:30:00-06:00"
    assert today(db, CHICAGO) == date(2026, 1, 24)
    assert today(db, "UTC") == date(2026, 1, 25)
    assert today(db, timezone(timedelta(hours=-6))) == date(2026, 1, 24)
    assert today({"now": "2026-01-21T00:01:00"}, CHICAGO) == date(2026, 1, 21)  # naive: wall time
    with pytest.raises(ToolError, match=r"scenario clock 'soon' is not an ISO-8601"):
        today({"now": "soon"}, CHICAGO)


def test_time_zone_and_to_local():
    assert time_zone(CHICAGO) is time_zone(CHICAGO)  # zoneinfo caches zones
    fixed = timezone(timedelta(hours=2))
    assert time_zone(fixed) is fixed
    with pytest.raises(zoneinfo.ZoneInfoNotFoundError):
        time_zone("America/Springfield")
    naive = datetime(2026, 3, 8, 2, 30)
    assert to_local(naive, CHICAGO).replace(tzinfo=None) == naive  # wall time kept, zone attached
    assert to_local(naive, CHICAGO).tzinfo is not None
    assert to_local(datetime(2026, 7, 1, 12, tzinfo=UTC), CHICAGO).isoformat() == "2026-07-01T07:00:00-05:00"


def _federal_central_offset(moment: datetime) -> timedelta:
    """US Central offset by the federal rule, written out independently of zoneinfo.

    Daylight time runs from the second Sunday of March, 08:00 UTC, to the first Sunday of November, 07:00 UTC.
    """

    def nth_sunday(year: int, month: int, n: int) -> date:
        first = date(year, month, 1)
        return first + timedelta(days=(6 - first.weekday()) % 7 + 7 * (n - 1))

    start = datetime.combine(nth_sunday(moment.year, 3, 2), datetime.min.time(), UTC) + timedelta(hours=8)
    end = datetime.combine(nth_sunday(moment.year, 11, 1), datetime.min.time(), UTC) + timedelta(hours=7)
    return timedelta(hours=-5 if start <= moment < end else -6)


@pytest.mark.parametrize(("year", "month"), [(y, m) for y in (2025, 2026, 2027) for m in (3, 11)])
def test_central_time_follows_the_daylight_saving_rule_hour_by_hour(year: int, month: int):
    start = datetime(year, month, 1, tzinfo=UTC)
    for hour in range(24 * 14):
        moment = start + timedelta(hours=hour, minutes=30)
        assert to_local(moment, CHICAGO).utcoffset() == _federal_central_offset(moment), moment


@pytest.mark.parametrize(
    ("utc", "local"),
    [
        ("2026-03-08T07:59:00Z", "2026-03-08T01:59:00-06:00"),  # last minute of CST
        ("2026-03-08T08:00:00Z", "2026-03-08T03:00:00-05:00"),  # clocks spring forward
        ("2026-11-01T06:59:00Z", "2026-11-01T01:59:00-05:00"),  # last minute of CDT
        ("2026-11-01T07:00:00Z", "2026-11-01T01:00:00-06:00"),  # clocks fall back
    ],
)
def test_central_time_at_the_transitions(utc: str, local: str):
    assert to_local(datetime.fromisoformat(utc), CHICAGO).isoformat() == local


def test_zone_data_comes_from_tzdata_where_the_platform_has_none():
    pytest.importorskip("tzdata")  # a dependency: installed with the package
    try:
        zoneinfo.reset_tzpath(to=[])  # as on a platform without /usr/share/zoneinfo
        zone = zoneinfo.ZoneInfo.no_cache(CHICAGO)
        assert datetime(2026, 7, 1, 12, tzinfo=UTC).astimezone(zone).utcoffset() == timedelta(hours=-5)
    finally:
        zoneinfo.reset_tzpath()


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2026-01-08", date(2026, 1, 8)),  # a plain date is already local
        (" 2026-01-08 ", date(2026, 1, 8)),
        ("2026-01-10T03:15:00Z", date(2026, 1, 9)),  # 21:15 CST the day before
        ("2026-01-09T23:30:00-08:00", date(2026, 1, 10)),  # Los Angeles evening: Chicago next morning
        ("2026-01-20T23:59:00", date(2026, 1, 20)),  # naive: Central wall time
        ("2025-11-03T04:00:00Z", date(2025, 11, 2)),
        ("2026-10-20T04:30:00Z", date(2026, 10, 19)),  # CDT
        ("2026-11-03T05:30:00Z", date(2026, 11, 2)),  # CST
        ("20260105", date(2026, 1, 5)),
        (datetime(2026, 1, 10, 3, 15, tzinfo=UTC), date(2026, 1, 9)),
        (date(2026, 1, 10), date(2026, 1, 10)),
    ],
)
def test_local_date(value: Any, expected: date):
    assert local_date(value, CHICAGO, "delivery_date") == expected


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (None, r"delivery_date of order 'ORD-1' is missing or not a date \(found None\)"),
        ("  ", r"is missing or not a date"),
        (5, r"is missing or not a date \(found 5\)"),
        ("last tuesday", r"is not an ISO-8601 date or timestamp \(found 'last tuesday'\)"),
        ("2026-13-01", r"is not an ISO-8601 date or timestamp"),
    ],
)
def test_local_date_errors_name_the_value(value: Any, message: str):
    with pytest.raises(ToolError, match=message):
        local_date(value, CHICAGO, "delivery_date of order 'ORD-1'")


def test_local_datetime_of_a_plain_date_is_local_midnight():
    moment = local_datetime("2026-03-08", CHICAGO, "opened_at")
    assert moment.isoformat() == "2026-03-08T00:00:00-06:00"
    assert local_datetime("2026-07-01T12:00:00Z", "America/New_York", "x").isoformat() == "2026-07-01T08:00:00-04:00"


def test_days_between_and_trailing_windows():
    assert days_between(date(2026, 1, 8), date(2026, 1, 8)) == 0
    assert days_between(date(2026, 1, 8), date(2026, 2, 1)) == 24
    assert days_between(date(2026, 2, 1), date(2026, 1, 8)) == -24
    window = trailing_days(date(2026, 2, 1), 90)
    assert window == (date(2025, 11, 3), date(2026, 2, 1))
    assert date(2025, 11, 3) in window  # exactly 90 days ago: inside
    assert date(2025, 11, 2) not in window
    assert date(2026, 2, 1) in window
    assert date(2026, 2, 2) not in window
    assert "2026-01-01" not in window


SAT, SUN, MON, TUE = date(2026, 1, 3), date(2026, 1, 4), date(2026, 1, 5), date(2026, 1, 6)
FRI = date(2026, 1, 2)
MLK_DAY = date(2026, 1, 19)


def test_is_business_day():
    assert [is_business_day(FRI + timedelta(days=n)) for n in range(7)] == [True, False, False, True, True, True, True]
    assert not is_business_day(MLK_DAY, [MLK_DAY])
    assert is_business_day(MLK_DAY)


@pytest.mark.parametrize(
    ("start", "count", "holidays", "expected"),
    [
        (FRI, 0, (), FRI),
        (SAT, 0, (), SAT),
        (FRI, 1, (), MON),
        (SAT, 2, (), TUE),  # opened on Saturday, due within 2 business days: Tuesday
        (MON, 5, (), date(2026, 1, 12)),
        (date(2026, 1, 16), 1, (MLK_DAY,), date(2026, 1, 20)),  # Friday + 1 skips the weekend and the holiday
        (MON, -1, (), FRI),
        (SUN, -1, (), FRI),
    ],
)
def test_add_business_days(start: date, count: int, holidays: tuple[date, ...], expected: date):
    assert add_business_days(start, count, holidays) == expected


def test_business_days_between_inverts_add_business_days():
    holidays = frozenset({MLK_DAY, date(2026, 2, 16)})
    assert business_days_between(FRI, MON) == 1
    assert business_days_between(SAT, SUN) == 0
    assert business_days_between(MON, MON) == 0
    assert business_days_between(date(2026, 1, 16), date(2026, 1, 20), holidays) == 1
    for offset in range(40):
        start = date(2026, 1, 1) + timedelta(days=offset)
        for count in range(-12, 13):
            end = add_business_days(start, count, holidays)
            assert business_days_between(start, end, holidays) == count, (start, count)


# =========================================================================== money


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (178, "178.00"),
        (249.99, "249.99"),
        (0.005, "0.01"),  # half-up, not half-even
        (2.675, "2.68"),  # read through str(), so the float's decimal spelling counts
        (120.005, "120.01"),
        ("42.5", "42.50"),
        (Decimal("1.005"), "1.01"),
        (-3.333, "-3.33"),
        (True, "0.00"),
        (None, "0.00"),
        ("abc", "0.00"),
        (math.nan, "0.00"),
        (math.inf, "0.00"),
        ([1], "0.00"),
    ],
)
def test_money_reads_database_amounts_leniently(value: Any, expected: str):
    assert money(value) == Decimal(expected)
    assert str(money(value)) == expected


@pytest.mark.parametrize(
    ("amount", "message"),
    [
        (0.0, r"amount must be greater than 0 \(got 0.0\)"),
        (-5.0, r"greater than 0 \(got -5.0\)"),
        (0.004, r"greater than 0 \(got 0.004\)"),  # rounds to 0.00
        (math.nan, r"amount must be a finite number of US dollars, e.g. 42.50"),
        (math.inf, r"finite number"),
    ],
)
def test_positive_amount_rejects(amount: float, message: str):
    with pytest.raises(ToolError, match=message):
        positive_amount(amount)


def test_positive_amount_accepts_and_names_the_parameter():
    assert positive_amount(0.005) == Decimal("0.01")
    assert positive_amount(50) == Decimal("50.00")
    with pytest.raises(ToolError, match=r"^transfer_amount must be a finite number of euros"):
        positive_amount(math.nan, "transfer_amount", unit="euros")


def test_money_out():
    assert money_float(Decimal("212.485")) == 212.49
    assert isinstance(money_float(Decimal("1")), float)
    assert format_money(Decimal("1234.5")) == "1234.50"
    assert format_money(Decimal("0.004")) == "0.00"
    assert round_cents(Decimal("64.1985")) == Decimal("64.20")
    assert sum_money([]) == Decimal("0.00")
    assert sum_money([money(0.1), money(0.2)]) == Decimal("0.30")  # 0.1 + 0.2 in floats is not 0.3


@pytest.mark.parametrize(
    ("value", "percent", "expected"),
    [("427.99", 15, "64.20"), ("349.99", 15, "52.50"), ("349.99", 10, "35.00"), ("349.99", 0, "0.00")],
)
def test_percent_of(value: str, percent: int, expected: str):
    assert percent_of(Decimal(value), percent) == Decimal(expected)


@pytest.mark.parametrize(
    ("total", "weights", "expected"),
    [
        ("44.00", ["89.99", "349.99"], ["9.00", "35.00"]),
        ("10.00", ["1", "1", "1"], ["3.33", "3.33", "3.34"]),  # the last share takes the rounding
        ("20.00", ["178.00"], ["20.00"]),
        ("0.01", ["5", "5"], ["0.01", "0.00"]),
    ],
)
def test_allocate_splits_pro_rata_without_losing_a_cent(total: str, weights: list[str], expected: list[str]):
    shares = allocate(Decimal(total), [Decimal(w) for w in weights])
    assert shares == [Decimal(e) for e in expected]
    assert sum(shares) == Decimal(total)


def test_allocate_errors():
    with pytest.raises(ValueError, match="at least one"):
        allocate(Decimal("1.00"), [])
    with pytest.raises(ValueError, match="sum to zero"):
        allocate(Decimal("1.00"), [Decimal(0), Decimal(0)])


# =========================================================================== records


def _db() -> dict[str, Any]:
    return {
        "now": "2026-02-01T10:00:00-06:00",
        "orders": [
            {"order_id": "ORD-1", "customer_id": "CUS-1", "items": [{"item_id": "ORD-1-1"}, "junk"]},
            {"order_id": "ORD-2", "customer_id": "CUS-1", "status": "open"},
            {"order_id": "ORD-3", "customer_id": "CUS-2"},
            "not a record",
        ],
        "accounts": {"ACC-1": {"account_id": "ACC-1", "kind": "cash"}, "ACC-2": {"account_id": "ACC-2"}},
        "constants": {"windows": {"general": 30, "flag": True, "limit": 750, "name": "x"}},
    }


def test_next_id_is_deterministic_per_episode():
    first, second = {}, {}
    ids = [next_id(first, "REF"), next_id(first, "ESC"), next_id(first, "REF")]
    assert ids == [next_id(second, "REF"), next_id(second, "ESC"), next_id(second, "REF")]
    assert len(set(ids)) == 3
    assert first["_id_counters"] == {"REF": 2, "ESC": 1}
    assert next_id({}, "ESC") == ids[1]  # an id depends only on the ids of its own kind before it
    assert ids[0].startswith("REF_") and len(ids[0]) == len("REF_") + 8


def test_find_record_in_lists_and_dicts():
    db = _db()
    assert find_record(db, "orders", "order_id", "ORD-2")["status"] == "open"
    assert find_record(db, "accounts", "account_id", "ACC-1")["kind"] == "cash"
    find_record(db, "orders", "order_id", "ORD-2")["status"] = "closed"  # the live record
    assert db["orders"][1]["status"] == "closed"
    with pytest.raises(ToolError, match=r"No record in 'orders' has order_id='ord-2'"):
        find_record(db, "orders", "order_id", "ord-2")  # ids are case-sensitive
    with pytest.raises(ToolError, match="tickets"):
        find_record(db, "tickets", "ticket_id", "T-1")


def test_record_getter_tells_the_agent_what_an_id_looks_like():
    get_order = record_getter("orders", "order_id", "No order found with order_id {value!r} (format like 'ORD-1').")
    db = _db()
    assert get_order(db, "ORD-3")["customer_id"] == "CUS-2"
    with pytest.raises(ToolError, match=r"^No order found with order_id 'ORD-9' \(format like 'ORD-1'\)\.$"):
        get_order(db, "ORD-9")
    assert get_order.__name__ == "get_order_id"


def test_find_records_filters_live_records():
    db = _db()
    assert [o["order_id"] for o in find_records(db, "orders")] == ["ORD-1", "ORD-2", "ORD-3"]
    assert [o["order_id"] for o in find_records(db, "orders", customer_id="CUS-1")] == ["ORD-1", "ORD-2"]
    assert [o["order_id"] for o in find_records(db, "orders", customer_id="CUS-1", status=None)] == ["ORD-1"]
    assert find_records(db, "accounts", kind="cash") == [db["accounts"]["ACC-1"]]
    assert find_records(db, "tickets") == []
    find_records(db, "orders", order_id="ORD-3")[0]["status"] = "held"
    assert db["orders"][2]["status"] == "held"
    db["tickets"] = "oops"
    with pytest.raises(TypeError, match=r"db\['tickets'\] is a str"):
        find_records(db, "tickets")


def test_nested_records():
    db = _db()
    assert nested_records(db["orders"][0], "items") == [{"item_id": "ORD-1-1"}]
    assert nested_records(db["orders"][1], "items") == []


def test_collection_creates_missing_lists_and_refuses_others():
    db: dict[str, Any] = {"refunds": None, "bad": {"a": 1}}
    assert collection(db, "refunds") == [] and db["refunds"] == []
    assert collection(db, "escalations") is db["escalations"]
    with pytest.raises(TypeError, match=r"db\['bad'\] is a dict"):
        collection(db, "bad")
    assert db["bad"] == {"a": 1}


def test_new_record_and_append_record():
    db = _db()
    record = new_record(db, "refund_id", "REF", order_id="ORD-1", amount=10.0)
    assert list(record) == ["refund_id", "order_id", "amount", "created_at"]
    assert record["refund_id"] == next_id({}, "REF")
    assert record["created_at"] == "2026-02-01T10:00:00-06:00"
    assert "refunds" not in db  # not stored yet
    record["store_credit_balance_after"] = 35.0
    returned = append_record(db, "refunds", record)
    assert db["refunds"] == [returned]
    returned["amount"] = 0
    assert db["refunds"][0]["amount"] == 10.0  # the agent's copy does not alias the state
    named = new_record(db, "x_id", "X", db="a field called db", prefix="and one called prefix")
    assert named["db"] == "a field called db" and named["prefix"] == "and one called prefix"


def test_append_decision():
    db = _db()
    record = append_decision(db, "DENY", rationale="No receipt.", order_id=None, cited=["RET-1"])
    assert list(record) == ["decision_id", "decision", "recorded_at", "rationale", "cited"]
    assert record["recorded_at"] == "2026-02-01T10:00:00-06:00"
    assert db["decisions"] == [record]
    record["decision"] = "ALLOW"
    assert db["decisions"][0]["decision"] == "DENY"


def test_require_text():
    assert require_text("  why  ", "rationale") == "why"
    with pytest.raises(ToolError, match=r"^rationale must not be empty\.$"):
        require_text(" \n ", "rationale")


def test_constant_reads_typed_values_with_a_default():
    db = _db()
    assert constant(db, "windows", "general", default=15) == 30
    assert constant(db, "windows", "missing", default=15) == 15
    assert constant(db, "nowhere", "general", default=15) == 15
    assert constant(db, "windows", "general", "deeper", default=15) == 15
    assert constant(db, "windows", "flag", default=15) == 15  # a bool is not an int
    assert constant(db, "windows", "flag", default=False) is True
    assert constant(db, "windows", "limit", default=0.0) == 750.0  # an int is a float
    assert isinstance(constant(db, "windows", "limit", default=0.0), float)
    assert constant(db, "windows", "name", default=3) == 3
    assert constant(db, "windows", "name", default="y") == "x"
    assert constant({}, "windows", default=1) == 1


def test_holidays_of_reads_the_constants_in_the_zone():
    from pytest_pibench.toolkit import holidays_of

    db = {"constants": {"holidays": ["2026-07-03", "2026-12-25", 7]}}
    assert holidays_of(db, "America/Denver") == {date(2026, 7, 3), date(2026, 12, 25)}  # non-strings ignored
    assert holidays_of({}, "America/Denver") == set()
