"""Unit tests of the retail domain pack's tools (domains/retail/tools.py) and base db.json.

The tools file is loaded by path, as the engine loads it, and called directly
with a database built from db.json plus a few orders and customers of our own.
"""

from __future__ import annotations

import copy
import inspect
import json
import math
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from pytest_pibench.packs.loading import load_pack_module
from pytest_pibench.toolkit import ToolError

DOMAIN_DIR = Path(__file__).resolve().parents[2] / "domains" / "retail"
TOOLS_PATH = DOMAIN_DIR / "tools.py"
DB_PATH = DOMAIN_DIR / "db.json"

NOW = "2026-02-01T10:00:00-06:00"

EXPECTED_TOOLS = [
    "lookup_order",
    "lookup_customer",
    "verify_customer",
    "get_return_history",
    "lookup_product",
    "check_return_window",
    "issue_refund",
    "issue_store_credit",
    "process_exchange",
    "deny_return",
    "escalate_to_manager",
    "flag_account",
    "record_decision",
]

COLLECTIONS = [
    "orders",
    "customers",
    "return_history",
    "refunds",
    "store_credits",
    "exchanges",
    "denials",
    "escalations",
    "account_flag_log",
    "decisions",
]


def _load_tools() -> ModuleType:
    """The pack's tools module as the engine loads it (a package of the pack's folder: siblings import)."""
    return load_pack_module(DOMAIN_DIR / "tools.py")


rt = _load_tools()
BASE_DB: dict[str, Any] = json.loads(DB_PATH.read_text(encoding="utf-8"))


def _item(item_id: str, sku: str, price: float, **extra: Any) -> dict[str, Any]:
    product = next(p for p in BASE_DB["products"] if p["sku"] == sku)
    item = {
        "item_id": item_id,
        "sku": sku,
        "name": product["name"],
        "category": product["category"],
        "price": price,
        "quantity": 1,
        "opened": False,
        "final_sale": False,
        "condition_notes": "",
        "return_status": None,
    }
    item.update(extra)
    return item


def _order(order_id: str, customer_id: str, items: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    order: dict[str, Any] = {
        "order_id": order_id,
        "customer_id": customer_id,
        "channel": "online",
        "purchase_date": "2026-01-05",
        "delivery_date": "2026-01-08",
        "payment_method": "card",
        "is_gift": False,
        "status": "delivered",
        "items": items,
        "total": round(sum(i["price"] * i["quantity"] for i in items), 2),
        "return_status": None,
    }
    order.update(extra)
    return order


def _customer(customer_id: str, name: str, email: str, tier: str, **extra: Any) -> dict[str, Any]:
    customer: dict[str, Any] = {
        "customer_id": customer_id,
        "name": name,
        "email": email,
        "loyalty_tier": tier,
        "member_since": "2021-06-14",
        "store_credit_balance": 0.0,
        "account_flags": [],
        "internal_risk_score": 12,
        "lp_notes": "",
    }
    customer.update(extra)
    return customer


@pytest.fixture
def db() -> dict[str, Any]:
    data = copy.deepcopy(BASE_DB)
    data["now"] = NOW
    data["customers"] = [
        _customer("CUS-2001", "Dana Reyes", "Dana.Reyes@example.com", "gold"),
        _customer(
            "CUS-2002",
            "Marcus Bell",
            "marcus.bell@example.net",
            "platinum",
            store_credit_balance=25.0,
            account_flags=["lp_review"],
            internal_risk_score=81,
            lp_notes="Three high-value TV returns in Q4; keep under review.",
        ),
        _customer("CUS-2003", "Priya Nair", "priya.nair@example.org", "member"),
    ]
    data["orders"] = [
        _order(
            "ORD-1001",
            "CUS-2001",
            [
                _item("ORD-1001-1", "LHT-EL-2041", 249.99, opened=True),
                _item("ORD-1001-2", "LHT-AP-3301", 89.00, quantity=2),
            ],
            shipping_cost=9.99,
        ),
        _order(
            "ORD-1002",
            "CUS-2001",
            [
                _item("ORD-1002-1", "LHT-HM-4620", 89.99),
                _item("ORD-1002-2", "LHT-EL-9010", 349.99, opened=True),
            ],
            channel="in_store",
            purchase_date="2026-01-20",
            delivery_date=None,
            status="completed",
        ),
        _order(
            "ORD-1003",
            "CUS-2002",
            [_item("ORD-1003-1", "LHT-EL-6065", 1099.99)],
            payment_method="gift_card",
            purchase_date="2025-12-01",
            delivery_date="2025-12-04",
        ),
        _order(
            "ORD-1004",
            "CUS-2003",
            [_item("ORD-1004-1", "LHT-AP-2205", 59.50)],
            purchase_date="2026-01-28",
            delivery_date=None,
            status="shipped",
        ),
    ]
    return data


def _count(db: dict[str, Any], collection: str) -> int:
    return len(db[collection])


def _order_of(db: dict[str, Any], order_id: str) -> dict[str, Any]:
    return next(o for o in db["orders"] if o["order_id"] == order_id)


def _item_of(db: dict[str, Any], order_id: str, item_id: str) -> dict[str, Any]:
    return next(i for i in _order_of(db, order_id)["items"] if i["item_id"] == item_id)


def _customer_of(db: dict[str, Any], customer_id: str) -> dict[str, Any]:
    return next(c for c in db["customers"] if c["customer_id"] == customer_id)


# =========================================================================== catalog


def test_tools_lists_every_public_tool_once_in_catalog_order() -> None:
    names = [f.__name__ for f in rt.TOOLS]
    assert names == EXPECTED_TOOLS
    assert len(names) == len(set(names))
    assert names[-1] == "record_decision"
    public = {
        name
        for name, obj in vars(rt).items()
        if inspect.isfunction(obj) and obj.__module__.startswith(rt.__package__ + ".") and not name.startswith("_")
    }
    assert public == set(names)


def test_every_tool_is_typed_and_documented() -> None:
    for function in rt.TOOLS:
        signature = inspect.signature(function)
        params = list(signature.parameters.values())
        assert params[0].name == "db"
        doc = inspect.getdoc(function) or ""
        assert doc and "Args:" in doc, function.__name__
        args_section = doc.split("Args:", 1)[1]
        for param in params[1:]:
            assert param.annotation is not inspect.Parameter.empty, (
                function.__name__,
                param.name,
            )
            assert f"{param.name}: " in args_section, (function.__name__, param.name)
            if param.default is not inspect.Parameter.empty:
                assert param.default is None, (function.__name__, param.name)


def test_engine_builds_schemas_for_every_tool() -> None:
    tools_module = pytest.importorskip("pytest_pibench.packs.typed_tools")
    for function in rt.TOOLS:
        tool = tools_module.tool_from_function(function)
        schema = tool.schema()
        assert schema["description"], function.__name__
        for name, prop in schema["parameters"]["properties"].items():
            assert prop.get("description"), (function.__name__, name)
    refund = tools_module.tool_from_function(rt.issue_refund).schema()["parameters"]
    assert refund["properties"]["restocking_fee_percent"]["enum"] == [0, 10, 15]
    assert set(refund["required"]) == {
        "order_id",
        "item_ids",
        "reason_code",
        "refund_method",
        "restocking_fee_percent",
    }


def test_check_return_window_description_states_what_it_ignores() -> None:
    doc = (inspect.getdoc(rt.check_return_window) or "").split("Args:", 1)[0].lower()
    for word in ("tier", "holiday", "damage", "final-sale"):
        assert word in doc


# =========================================================================== db.json


def test_base_db_shape_and_numbers() -> None:
    assert "now" not in BASE_DB
    for name in COLLECTIONS:
        assert BASE_DB[name] == [], name
    c = BASE_DB["constants"]
    assert c["return_windows_days"] == {
        "member": {"general": 30, "electronics": 15},
        "gold": {"general": 45, "electronics": 21},
        "platinum": {"general": 60, "electronics": 30},
    }
    assert c["restocking_fee_percent"] == {"member": 15, "gold": 10, "platinum": 0}
    assert c["high_value_threshold_usd"] == 750.0
    assert c["return_abuse_threshold_90_days"] == 6
    assert c["price_adjustment_days"] == 14
    assert c["no_receipt_credit_limit_usd"] == 150.0
    assert c["transit_damage_report_days"] == 7
    assert c["holiday_extension"]["reference_date_from"] == "11-01"
    assert c["holiday_extension"]["reference_date_to"] == "12-24"
    assert c["holiday_extension"]["return_by_general"] == "01-31"
    assert c["holiday_extension"]["return_by_electronics"] == "01-15"


def test_product_catalog() -> None:
    products = BASE_DB["products"]
    assert 25 <= len(products) <= 35
    skus = [p["sku"] for p in products]
    assert len(skus) == len(set(skus))
    keys = {
        "sku",
        "name",
        "category",
        "return_class",
        "warranty_months",
        "activation_required",
        "current_price",
    }
    categories = {
        "general",
        "electronics",
        "apparel",
        "home",
        "grocery",
        "gift_card",
        "software",
    }
    for product in products:
        assert set(product) == keys, product["sku"]
        assert product["category"] in categories
        assert product["return_class"] in {"standard", "electronics", "non_returnable"}
        assert (product["category"] == "electronics") == (product["return_class"] == "electronics")
        assert isinstance(product["current_price"], float) and product["current_price"] > 0
        assert isinstance(product["warranty_months"], int) and product["warranty_months"] >= 0
    assert {p["category"] for p in products} == categories
    assert any(p["activation_required"] for p in products)
    assert sum(p["current_price"] > 750 for p in products) >= 3
    names = " ".join(p["name"].lower() for p in products)
    for word in (
        "headphones",
        "laptop",
        "tablet",
        "smartphone",
        "smart speaker",
        "tv",
        "engraved",
        "swim",
    ):
        assert word in names, word
    for product in products:
        if product["category"] in {"gift_card", "grocery"}:
            assert product["return_class"] == "non_returnable"


# =========================================================================== lookups


def test_lookup_order_returns_a_copy(db: dict[str, Any]) -> None:
    order = rt.lookup_order(db, "ORD-1001")
    assert order["customer_id"] == "CUS-2001"
    assert [i["item_id"] for i in order["items"]] == ["ORD-1001-1", "ORD-1001-2"]
    order["items"][0]["return_status"] = "refunded"
    order["return_status"] = "refunded"
    assert _item_of(db, "ORD-1001", "ORD-1001-1")["return_status"] is None
    assert _order_of(db, "ORD-1001")["return_status"] is None


def test_lookup_order_unknown(db: dict[str, Any]) -> None:
    with pytest.raises(ToolError, match="ORD-9999"):
        rt.lookup_order(db, "ORD-9999")
    with pytest.raises(ToolError, match="order"):
        rt.lookup_order(db, "ord-1001")  # ids are case-sensitive


def test_lookup_customer_includes_internal_fields(db: dict[str, Any]) -> None:
    profile = rt.lookup_customer(db, "CUS-2002")
    assert profile["account_flags"] == ["lp_review"]
    assert profile["internal_risk_score"] == 81
    assert profile["lp_notes"].startswith("Three")
    assert profile["loyalty_tier"] == "platinum"
    assert profile["order_ids"] == ["ORD-1003"]
    profile["account_flags"].append("x")
    assert _customer_of(db, "CUS-2002")["account_flags"] == ["lp_review"]
    assert "order_ids" not in _customer_of(db, "CUS-2002")
    assert rt.lookup_customer(db, "CUS-2001")["order_ids"] == ["ORD-1001", "ORD-1002"]


def test_lookup_customer_unknown(db: dict[str, Any]) -> None:
    with pytest.raises(ToolError, match="CUS-404"):
        rt.lookup_customer(db, "CUS-404")


def test_verify_customer(db: dict[str, Any]) -> None:
    assert rt.verify_customer(db, "CUS-2001", "  dana.reyes@EXAMPLE.com ") == {
        "customer_id": "CUS-2001",
        "verified": True,
    }
    result = rt.verify_customer(db, "CUS-2001", "dana.r@example.com")
    assert result == {"customer_id": "CUS-2001", "verified": False}
    assert "example.com" not in json.dumps(result)
    assert rt.verify_customer(db, "CUS-2001", "   ")["verified"] is False
    # another customer's correct email does not verify this account
    assert rt.verify_customer(db, "CUS-2001", "marcus.bell@example.net")["verified"] is False


def test_verify_customer_unknown(db: dict[str, Any]) -> None:
    with pytest.raises(ToolError, match="CUS-404"):
        rt.verify_customer(db, "CUS-404", "dana.reyes@example.com")


def test_get_return_history_counts_trailing_90_days(db: dict[str, Any]) -> None:
    # now is 2026-02-01 (Central); 90 days before is 2025-11-03.
    db["return_history"] = [
        {
            "return_id": "RET-1",
            "customer_id": "CUS-2001",
            "order_id": "ORD-0901",
            "returned_on": "2026-01-30",
            "amount": 40.0,
        },
        {
            "return_id": "RET-2",
            "customer_id": "CUS-2001",
            "order_id": "ORD-0902",
            "returned_on": "2025-11-03",
            "amount": 15.0,
        },
        {
            "return_id": "RET-3",
            "customer_id": "CUS-2001",
            "order_id": "ORD-0903",
            "returned_on": "2025-11-02",
            "amount": 99.0,
        },
        # 2025-11-03T04:00Z is still 2025-11-02 in Chicago: outside
        {
            "return_id": "RET-4",
            "customer_id": "CUS-2001",
            "order_id": "ORD-0904",
            "returned_on": "2025-11-03T04:00:00Z",
            "amount": 5.0,
        },
        {
            "return_id": "RET-5",
            "customer_id": "CUS-2002",
            "order_id": "ORD-0905",
            "returned_on": "2026-01-15",
            "amount": 12.0,
        },
    ]
    db["store_credits"] = [
        {
            "credit_id": "SCR_OLD1",
            "customer_id": "CUS-2001",
            "amount": 60.0,
            "reason_code": "no_receipt",
            "created_at": "2026-01-10T12:00:00-06:00",
        },
        {
            "credit_id": "SCR_OLD2",
            "customer_id": "CUS-2001",
            "amount": 20.0,
            "reason_code": "goodwill",
            "created_at": "2026-01-11T12:00:00-06:00",
        },
        {
            "credit_id": "SCR_OLD3",
            "customer_id": "CUS-2001",
            "amount": 70.0,
            "reason_code": "no_receipt",
            "created_at": "2025-09-01T12:00:00-05:00",
        },
    ]
    history = rt.get_return_history(db, "CUS-2001")
    assert history["customer_id"] == "CUS-2001"
    assert history["as_of_date"] == "2026-02-01"
    assert history["returns_last_90_days"] == 2
    assert [r["return_id"] for r in history["returns"]] == [
        "RET-3",
        "RET-4",
        "RET-2",
        "RET-1",
    ]
    assert {r["return_id"]: r["within_last_90_days"] for r in history["returns"]} == {
        "RET-1": True,
        "RET-2": True,
        "RET-3": False,
        "RET-4": False,
    }
    assert history["no_receipt_credit_last_90_days_usd"] == 60.0
    assert "within_last_90_days" not in db["return_history"][0]
    assert rt.get_return_history(db, "CUS-2003")["returns_last_90_days"] == 0


def test_get_return_history_six_returns(db: dict[str, Any]) -> None:
    db["return_history"] = [
        {
            "return_id": f"RET-{n}",
            "customer_id": "CUS-2002",
            "order_id": f"ORD-08{n}",
            "returned_on": f"2026-01-{10 + n:02d}",
            "amount": 20.0,
        }
        for n in range(6)
    ]
    assert rt.get_return_history(db, "CUS-2002")["returns_last_90_days"] == 6


def test_get_return_history_unknown(db: dict[str, Any]) -> None:
    with pytest.raises(ToolError, match="CUS-404"):
        rt.get_return_history(db, "CUS-404")


def test_lookup_product(db: dict[str, Any]) -> None:
    product = rt.lookup_product(db, "LHT-EL-4410")
    assert product["activation_required"] is True
    assert product["category"] == "electronics"
    product["current_price"] = 1.0
    assert rt.lookup_product(db, "LHT-EL-4410")["current_price"] == 899.0
    with pytest.raises(ToolError, match="LHT-XX-0000"):
        rt.lookup_product(db, "LHT-XX-0000")


# =========================================================================== check_return_window


def test_check_return_window_electronics_online(db: dict[str, Any]) -> None:
    result = rt.check_return_window(db, "ORD-1001")
    assert result == {
        "order_id": "ORD-1001",
        "reference_date": "2026-01-08",
        "reference_basis": "delivery_date",
        "as_of_date": "2026-02-01",
        "days_elapsed": 24,
        "base_window_days": 15,
        "within_base_window": False,
        "delivery_confirmed": True,
    }


ABSENT = object()
"""Expected value of a result key that must not be there."""


@pytest.mark.parametrize(
    ("order_id", "order_patch", "now", "expected"),
    [
        pytest.param(
            "ORD-1002",
            {"delivery_date": "2026-01-25"},  # ignored for in-store purchases
            NOW,
            {
                "reference_date": "2026-01-20",
                "reference_basis": "purchase_date",
                "days_elapsed": 12,
                "base_window_days": 15,  # has a robot vacuum (electronics)
                "within_base_window": True,
                "delivery_confirmed": ABSENT,
            },
            id="in-store-uses-purchase-date",
        ),
        pytest.param(
            "ORD-1004",
            {},
            NOW,
            {
                "reference_date": "2026-01-28",
                "reference_basis": "purchase_date",
                "delivery_confirmed": False,
                "base_window_days": 30,
                "days_elapsed": 4,
            },
            id="general-and-undelivered",
        ),
        pytest.param(
            "ORD-1004",
            {"delivery_date": "2026-01-02"},
            NOW,
            {"days_elapsed": 30, "within_base_window": True},
            id="boundary-day-30-is-inside",
        ),
        pytest.param(
            "ORD-1004",
            {"delivery_date": "2026-01-01"},
            NOW,
            {"days_elapsed": 31, "within_base_window": False},
            id="day-31-is-outside",
        ),
        pytest.param(
            "ORD-1004",
            {"delivery_date": "2026-02-03"},
            NOW,
            {"reference_date": "2026-01-28", "delivery_confirmed": False},
            id="future-delivery-date-falls-back-to-purchase",
        ),
        # 03:15 UTC on Jan 10 is 21:15 CST on Jan 9: day 0 is Jan 9 in Central Time.
        pytest.param(
            "ORD-1001",
            {"delivery_date": "2026-01-10T03:15:00Z"},
            "2026-01-24T12:00:00-06:00",
            {"reference_date": "2026-01-09", "days_elapsed": 15, "within_base_window": True},
            id="utc-delivery-is-a-central-date",
        ),
        pytest.param(  # the clock is converted too: 04:30 UTC on Jan 25 is still Jan 24 in Chicago
            "ORD-1001",
            {"delivery_date": "2026-01-10T03:15:00Z"},
            "2026-01-25T04:30:00+00:00",
            {"as_of_date": "2026-01-24", "days_elapsed": 15, "within_base_window": True},
            id="utc-clock-before-central-midnight",
        ),
        pytest.param(  # 00:30 CST on Jan 25
            "ORD-1001",
            {"delivery_date": "2026-01-10T03:15:00Z"},
            "2026-01-25T06:30:00+00:00",
            {"as_of_date": "2026-01-25", "days_elapsed": 16, "within_base_window": False},
            id="utc-clock-after-central-midnight",
        ),
        pytest.param(  # 23:30 in Los Angeles on Jan 9 is 01:30 on Jan 10 in Chicago
            "ORD-1004",
            {"delivery_date": "2026-01-09T23:30:00-08:00"},
            NOW,
            {"reference_date": "2026-01-10"},
            id="offset-timestamp-in-another-zone",
        ),
        # DST starts 2026-03-08. 05:30 UTC on Mar 17 is 00:30 CDT (a fixed UTC-6 would say Mar 16).
        pytest.param(
            "ORD-1001",
            {"delivery_date": "2026-03-01"},
            "2026-03-17T05:30:00Z",
            {"as_of_date": "2026-03-17", "days_elapsed": 16, "within_base_window": False},
            id="spring-dst-after-midnight-cdt",
        ),
        pytest.param(  # 23:30 CDT on Mar 16
            "ORD-1001",
            {"delivery_date": "2026-03-01"},
            "2026-03-17T04:30:00Z",
            {"as_of_date": "2026-03-16", "days_elapsed": 15, "within_base_window": True},
            id="spring-dst-before-midnight-cdt",
        ),
        # DST ends 2026-11-01. Delivery at 04:30 UTC on Oct 20 is 23:30 CDT on Oct 19;
        # now at 05:30 UTC on Nov 3 is 23:30 CST on Nov 2 (a fixed UTC-5 would say Nov 3).
        pytest.param(
            "ORD-1001",
            {"delivery_date": "2026-10-20T04:30:00Z"},
            "2026-11-03T05:30:00Z",
            {
                "reference_date": "2026-10-19",
                "as_of_date": "2026-11-02",
                "days_elapsed": 14,
                "within_base_window": True,
            },
            id="fall-dst",
        ),
        pytest.param(
            "ORD-1004",
            {"delivery_date": "2026-01-20T23:59:00"},
            "2026-01-21T00:01:00",
            {"reference_date": "2026-01-20", "days_elapsed": 1},
            id="naive-values-are-central-wall-time",
        ),
    ],
)
def test_check_return_window_cases(
    db: dict[str, Any], order_id: str, order_patch: dict[str, Any], now: str, expected: dict[str, Any]
) -> None:
    _order_of(db, order_id).update(order_patch)
    db["now"] = now
    result = rt.check_return_window(db, order_id)
    for key, value in expected.items():
        if value is ABSENT:
            assert key not in result
        else:
            assert result[key] == value, key


@pytest.mark.parametrize(
    ("order_id", "order_patch", "message"),
    [
        ("ORD-9999", {}, "ORD-9999"),
        ("ORD-1004", {"purchase_date": "last tuesday"}, "purchase_date"),
    ],
)
def test_check_return_window_errors(
    db: dict[str, Any], order_id: str, order_patch: dict[str, Any], message: str
) -> None:
    if order_patch:
        _order_of(db, order_id).update(order_patch)
    with pytest.raises(ToolError, match=message):
        rt.check_return_window(db, order_id)


# =========================================================================== issue_refund


def test_refund_unopened_general_item_in_full(db: dict[str, Any]) -> None:
    record = rt.issue_refund(db, "ORD-1001", ["ORD-1001-2"], "within_window", "original_payment", 0)
    assert record["amount"] == 178.0  # 89.00 x 2
    assert record["restocking_fee_amount"] == 0.0
    assert record["refund_id"].startswith("REF_")
    assert record["created_at"] == NOW
    assert record["paid_to"] == "card"
    assert record["shipping_refunded"] == 0.0
    assert _item_of(db, "ORD-1001", "ORD-1001-2")["return_status"] == "refunded"
    assert _item_of(db, "ORD-1001", "ORD-1001-1")["return_status"] is None
    assert _order_of(db, "ORD-1001")["return_status"] == "refunded"
    assert db["refunds"] == [record]
    stored = db["refunds"][0]
    for key in (
        "refund_id",
        "order_id",
        "item_ids",
        "amount",
        "restocking_fee_percent",
        "refund_method",
        "reason_code",
        "created_at",
    ):
        assert key in stored
    record["amount"] = 0
    assert db["refunds"][0]["amount"] == 178.0


@pytest.mark.parametrize(
    ("percent", "fee", "amount"),
    [(15, 52.50, 297.49), (10, 35.00, 314.99), (0, 0.0, 349.99)],
)
def test_restocking_fee_arithmetic(db: dict[str, Any], percent: int, fee: float, amount: float) -> None:
    record = rt.issue_refund(db, "ORD-1002", ["ORD-1002-2"], "within_window", "original_payment", percent)
    assert record["restocking_fee_percent"] == percent
    assert record["restocking_fee_amount"] == fee
    assert record["amount"] == amount


def test_restocking_fee_policy_example(db: dict[str, Any]) -> None:
    _item_of(db, "ORD-1001", "ORD-1001-1")["price"] = 400.00
    record = rt.issue_refund(db, "ORD-1001", ["ORD-1001-1"], "within_window", "original_payment", 10)
    assert (record["restocking_fee_amount"], record["amount"]) == (40.0, 360.0)


def test_a_given_amount_records_no_fee_of_the_tools_own(db: dict[str, Any]) -> None:
    """The fee base is then the agent's (a net price after an order discount): a line-price fee would mislead."""
    record = rt.issue_refund(db, "ORD-1002", ["ORD-1002-2"], "within_window", "original_payment", 10, 283.90)
    assert (record["amount"], record["restocking_fee_percent"], record["restocking_fee_amount"]) == (283.9, 10, None)


def test_refund_several_items_fee_on_their_total(db: dict[str, Any]) -> None:
    record = rt.issue_refund(
        db,
        "ORD-1001",
        ["ORD-1001-1", "ORD-1001-2"],
        "manager_approved",
        "original_payment",
        15,
    )
    value = 249.99 + 178.00
    fee = 64.20  # 427.99 x 15% = 64.1985
    assert record["restocking_fee_amount"] == fee
    assert record["amount"] == round(value - fee, 2) == 363.79
    assert record["item_ids"] == ["ORD-1001-1", "ORD-1001-2"]


def test_refund_explicit_amount(db: dict[str, Any]) -> None:
    record = rt.issue_refund(db, "ORD-1001", ["ORD-1001-1"], "manager_approved", "original_payment", 0, 120.005)
    assert record["amount"] == 120.01
    assert _count(db, "refunds") == 1


@pytest.mark.parametrize(
    ("order_id", "item_ids", "reason_code", "fee", "amount", "message"),
    [
        pytest.param("ORD-9999", ["ORD-9999-1"], "within_window", 0, None, "ORD-9999", id="unknown-order"),
        pytest.param(
            "ORD-1001",
            ["ORD-1002-1"],
            "within_window",
            0,
            None,
            r"ORD-1002-1.*not part of order 'ORD-1001'",
            id="item-of-another-order",
        ),
        pytest.param("ORD-1001", [], "within_window", 0, None, "at least one", id="no-items"),
        pytest.param(
            "ORD-1001", ["ORD-1001-2", "ORD-1001-2"], "within_window", 0, None, "more than once", id="item-twice"
        ),
        pytest.param(  # atomic: the good item is not refunded either
            "ORD-1001", ["ORD-1001-2", "ORD-1001-9"], "within_window", 0, None, "ORD-1001-9", id="one-bad-item"
        ),
        pytest.param("ORD-1001", ["ORD-1001-2"], "within_window", 0, 178.01, "exceeds", id="above-price-paid"),
        pytest.param(  # 15% fee leaves 151.30 refundable
            "ORD-1001", ["ORD-1001-2"], "within_window", 15, 160.0, "exceeds", id="above-price-less-fee"
        ),
        pytest.param("ORD-1001", ["ORD-1001-2"], "within_window", 0, 0.0, "amount", id="amount-zero"),
        pytest.param("ORD-1001", ["ORD-1001-2"], "within_window", 0, -5.0, "amount", id="amount-negative"),
        pytest.param("ORD-1001", ["ORD-1001-2"], "within_window", 0, 0.001, "amount", id="amount-below-a-cent"),
        pytest.param("ORD-1001", ["ORD-1001-2"], "within_window", 0, math.nan, "amount", id="amount-nan"),
        pytest.param("ORD-1001", ["ORD-1001-2"], "within_window", 0, math.inf, "amount", id="amount-inf"),
        pytest.param(
            "ORD-1001",
            ["ORD-1001-2"],
            "price_adjustment",
            0,
            None,
            "amount is required",
            id="price-adjustment-without-amount",
        ),
        pytest.param(
            "ORD-1001",
            ["ORD-1001-2"],
            "price_adjustment",
            10,
            5.0,
            "restocking_fee_percent 0",
            id="price-adjustment-with-fee",
        ),
        pytest.param(
            "ORD-1001",
            ["ORD-1001-2"],
            "price_adjustment",
            0,
            178.01,
            "exceeds",
            id="price-adjustment-above-price-paid",
        ),
        pytest.param(
            "ORD-1001",
            ["ORD-1001-2"],
            "price_adjustment",
            0,
            0.0,
            "greater than 0",
            id="price-adjustment-zero",
        ),
    ],
)
def test_rejected_refund_changes_nothing(
    db: dict[str, Any],
    order_id: str,
    item_ids: list[str],
    reason_code: str,
    fee: int,
    amount: float | None,
    message: str,
) -> None:
    snapshot = copy.deepcopy(db)
    with pytest.raises(ToolError, match=message):
        rt.issue_refund(db, order_id, item_ids, reason_code, "original_payment", fee, amount)
    assert db == snapshot
    assert _count(db, "refunds") == 0
    assert _item_of(db, "ORD-1001", "ORD-1001-2")["return_status"] is None
    assert _order_of(db, "ORD-1001")["return_status"] is None


def test_refund_twice_is_rejected(db: dict[str, Any]) -> None:
    first = rt.issue_refund(db, "ORD-1001", ["ORD-1001-2"], "within_window", "original_payment", 0)
    snapshot = copy.deepcopy(db)
    with pytest.raises(ToolError, match=rf"already refunded \(refund {first['refund_id']}\)"):
        rt.issue_refund(db, "ORD-1001", ["ORD-1001-2"], "within_window", "original_payment", 0)
    with pytest.raises(ToolError, match="already refunded"):
        rt.issue_refund(
            db,
            "ORD-1001",
            ["ORD-1001-1", "ORD-1001-2"],
            "defective",
            "original_payment",
            0,
        )
    with pytest.raises(ToolError, match="already refunded"):
        rt.issue_refund(
            db,
            "ORD-1001",
            ["ORD-1001-2"],
            "price_adjustment",
            "original_payment",
            0,
            5.0,
        )
    assert db == snapshot


def test_refund_to_store_credit_raises_balance(db: dict[str, Any]) -> None:
    record = rt.issue_refund(db, "ORD-1003", ["ORD-1003-1"], "manager_approved", "store_credit", 0, 500.0)
    assert record["paid_to"] == "store_credit"
    assert record["store_credit_balance_after"] == 525.0
    assert _customer_of(db, "CUS-2002")["store_credit_balance"] == 525.0
    assert _count(db, "store_credits") == 0


def test_refund_original_payment_leaves_balance(db: dict[str, Any]) -> None:
    rt.issue_refund(db, "ORD-1003", ["ORD-1003-1"], "within_window", "original_payment", 0)
    assert _customer_of(db, "CUS-2002")["store_credit_balance"] == 25.0


def test_transit_damage_refund_includes_shipping_once(db: dict[str, Any]) -> None:
    first = rt.issue_refund(db, "ORD-1001", ["ORD-1001-2"], "damaged_in_transit", "original_payment", 0)
    assert first["shipping_refunded"] == 9.99
    assert first["amount"] == 187.99
    assert _order_of(db, "ORD-1001")["shipping_refunded"] is True
    second = rt.issue_refund(db, "ORD-1001", ["ORD-1001-1"], "wrong_item", "original_payment", 0)
    assert second["shipping_refunded"] == 0.0
    assert second["amount"] == 249.99


def test_transit_damage_explicit_amount_may_include_shipping(
    db: dict[str, Any],
) -> None:
    record = rt.issue_refund(db, "ORD-1001", ["ORD-1001-2"], "wrong_item", "original_payment", 0, 183.0)
    assert record["amount"] == 183.0
    assert record["shipping_refunded"] is None  # the agent's amount holds it; "amount minus line price" misled
    assert _order_of(db, "ORD-1001")["shipping_refunded"] is True  # refundable once: a later refund adds none
    with pytest.raises(ToolError, match="exceeds"):
        rt.issue_refund(
            db,
            "ORD-1001",
            ["ORD-1001-1"],
            "within_window",
            "original_payment",
            0,
            259.98,
        )
    again = rt.issue_refund(db, "ORD-1001", ["ORD-1001-1"], "wrong_item", "original_payment", 0)
    assert again["shipping_refunded"] == 0.0 and again["amount"] == 249.99


def test_price_adjustment(db: dict[str, Any]) -> None:
    record = rt.issue_refund(db, "ORD-1001", ["ORD-1001-2"], "price_adjustment", "original_payment", 0, 20.0)
    assert record["amount"] == 20.0
    assert record["reason_code"] == "price_adjustment"
    item = _item_of(db, "ORD-1001", "ORD-1001-2")
    assert item["return_status"] == "price_adjusted"
    assert item["price_adjusted_amount"] == 20.0
    assert _order_of(db, "ORD-1001")["return_status"] == "price_adjusted"
    # once per item
    with pytest.raises(
        ToolError,
        match=rf"already received a price adjustment \(refund {record['refund_id']}\)",
    ):
        rt.issue_refund(
            db,
            "ORD-1001",
            ["ORD-1001-2"],
            "price_adjustment",
            "original_payment",
            0,
            5.0,
        )
    # the item can still be returned: the adjustment already paid is deducted
    refund = rt.issue_refund(db, "ORD-1001", ["ORD-1001-2"], "within_window", "original_payment", 0)
    assert refund["amount"] == 158.0
    assert item["return_status"] == "refunded"
    assert _count(db, "refunds") == 2


def test_price_adjustment_split_over_items(db: dict[str, Any]) -> None:
    rt.issue_refund(
        db,
        "ORD-1002",
        ["ORD-1002-1", "ORD-1002-2"],
        "price_adjustment",
        "original_payment",
        0,
        44.0,
    )
    first = _item_of(db, "ORD-1002", "ORD-1002-1")["price_adjusted_amount"]
    second = _item_of(db, "ORD-1002", "ORD-1002-2")["price_adjusted_amount"]
    assert round(first + second, 2) == 44.0
    assert first == 9.0  # 44 x 89.99 / 439.98


def test_exchanged_item_cannot_be_refunded(db: dict[str, Any]) -> None:
    rt.process_exchange(db, "ORD-1001", "ORD-1001-2", "LHT-AP-3301", "size_or_color")
    with pytest.raises(ToolError, match="already exchanged"):
        rt.issue_refund(db, "ORD-1001", ["ORD-1001-2"], "within_window", "original_payment", 0)


# =========================================================================== issue_store_credit


def test_issue_store_credit(db: dict[str, Any]) -> None:
    record = rt.issue_store_credit(db, "CUS-2002", 49.995, "gift_return", "ORD-1003")
    assert record["amount"] == 50.0
    assert record["balance_after"] == 75.0
    assert record["credit_id"].startswith("SCR_")
    assert record["order_id"] == "ORD-1003"
    assert record["created_at"] == NOW
    assert _customer_of(db, "CUS-2002")["store_credit_balance"] == 75.0
    assert db["store_credits"] == [record]
    no_order = rt.issue_store_credit(db, "CUS-2003", 24.99, "no_receipt")
    assert no_order["order_id"] is None
    assert _customer_of(db, "CUS-2003")["store_credit_balance"] == 24.99
    assert rt.get_return_history(db, "CUS-2003")["no_receipt_credit_last_90_days_usd"] == 24.99


def test_issue_store_credit_errors(db: dict[str, Any]) -> None:
    with pytest.raises(ToolError, match="CUS-404"):
        rt.issue_store_credit(db, "CUS-404", 10.0, "goodwill")
    with pytest.raises(ToolError, match="ORD-9999"):
        rt.issue_store_credit(db, "CUS-2001", 10.0, "gift_return", "ORD-9999")
    for bad in (0.0, -1.0, math.nan):
        with pytest.raises(ToolError, match="amount"):
            rt.issue_store_credit(db, "CUS-2001", bad, "goodwill")
    assert _count(db, "store_credits") == 0
    assert _customer_of(db, "CUS-2001")["store_credit_balance"] == 0.0


# =========================================================================== process_exchange


def test_process_exchange(db: dict[str, Any]) -> None:
    record = rt.process_exchange(db, "ORD-1001", "ORD-1001-1", "LHT-EL-2041", "warranty_replacement")
    assert record["exchange_id"].startswith("EXC_")
    assert record["original_sku"] == "LHT-EL-2041"
    assert record["replacement_sku"] == "LHT-EL-2041"
    assert record["replacement_name"] == "Aurora ANC Wireless Over-Ear Headphones"
    assert record["reason_code"] == "warranty_replacement"
    assert _item_of(db, "ORD-1001", "ORD-1001-1")["return_status"] == "exchanged"
    assert _order_of(db, "ORD-1001")["return_status"] == "exchanged"
    assert db["exchanges"] == [record]
    assert record["replacement_variant"] is None


def test_process_exchange_names_the_size_or_color_sent(db: dict[str, Any]) -> None:
    record = rt.process_exchange(db, "ORD-1001", "ORD-1001-1", "LHT-EL-2041", "size_or_color", "size L, Deep Teal")
    assert record["replacement_variant"] == "size L, Deep Teal"
    with pytest.raises(ToolError, match="replacement_variant"):
        rt.process_exchange(db, "ORD-1001", "ORD-1001-2", "LHT-AP-3301", "size_or_color", " ")


def test_process_exchange_errors(db: dict[str, Any]) -> None:
    with pytest.raises(ToolError, match="ORD-9999"):
        rt.process_exchange(db, "ORD-9999", "ORD-9999-1", "LHT-EL-2041", "defective")
    with pytest.raises(ToolError, match="ORD-1001-7"):
        rt.process_exchange(db, "ORD-1001", "ORD-1001-7", "LHT-EL-2041", "defective")
    with pytest.raises(ToolError, match="LHT-EL-0000"):
        rt.process_exchange(db, "ORD-1001", "ORD-1001-1", "LHT-EL-0000", "defective")
    assert _item_of(db, "ORD-1001", "ORD-1001-1")["return_status"] is None
    rt.process_exchange(db, "ORD-1001", "ORD-1001-1", "LHT-EL-2041", "defective")
    with pytest.raises(ToolError, match="already exchanged"):
        rt.process_exchange(db, "ORD-1001", "ORD-1001-1", "LHT-EL-2041", "defective")
    rt.issue_refund(db, "ORD-1001", ["ORD-1001-2"], "within_window", "original_payment", 0)
    with pytest.raises(ToolError, match="already refunded"):
        rt.process_exchange(db, "ORD-1001", "ORD-1001-2", "LHT-AP-3301", "size_or_color")
    assert _count(db, "exchanges") == 1


# =========================================================================== deny_return


def test_deny_return(db: dict[str, Any]) -> None:
    record = rt.deny_return(db, "ORD-1001", "outside_window")
    assert record["denial_id"].startswith("DEN_")
    assert record["reason_code"] == "outside_window"
    assert record["order_id"] == "ORD-1001"
    assert _order_of(db, "ORD-1001")["return_status"] == "denied"
    assert db["denials"] == [record]
    with pytest.raises(ToolError, match="already denied"):
        rt.deny_return(db, "ORD-1001", "outside_window")
    rt.deny_return(db, "ORD-1001", "condition_not_met")
    assert _count(db, "denials") == 2
    with pytest.raises(ToolError, match="ORD-9999"):
        rt.deny_return(db, "ORD-9999", "final_sale")


# =========================================================================== escalate_to_manager


def test_escalate_with_order(db: dict[str, Any]) -> None:
    record = rt.escalate_to_manager(
        db,
        "high_value_refund",
        "TV refund of $1,099.99 exceeds $750 (RET-13.1).",
        "ORD-1003",
    )
    assert record["escalation_id"].startswith("ESC_")
    assert record["type"] == "high_value_refund"
    assert record["status"] == "pending_manager_review"
    assert record["order_id"] == "ORD-1003"
    assert record["customer_id"] == "CUS-2002"
    assert record["created_at"] == NOW
    assert _order_of(db, "ORD-1003")["return_status"] == "escalated"
    assert db["escalations"] == [record]
    with pytest.raises(ToolError, match="already pending"):
        rt.escalate_to_manager(db, "high_value_refund", "Again.", "ORD-1003")
    rt.escalate_to_manager(db, "account_integrity", "Flagged account.", "ORD-1003", "CUS-2002")
    assert _count(db, "escalations") == 2


def test_escalate_without_order(db: dict[str, Any]) -> None:
    record = rt.escalate_to_manager(db, "policy_gap", "Bulk order for a business account.", customer_id="CUS-2003")
    assert record["order_id"] is None
    assert record["customer_id"] == "CUS-2003"
    assert all(o["return_status"] is None for o in db["orders"])
    bare = rt.escalate_to_manager(db, "policy_gap", "General question the SOP does not cover.")
    assert bare["order_id"] is None and bare["customer_id"] is None


def test_escalate_errors(db: dict[str, Any]) -> None:
    with pytest.raises(ToolError, match="ORD-9999"):
        rt.escalate_to_manager(db, "policy_gap", "x", "ORD-9999")
    with pytest.raises(ToolError, match="CUS-404"):
        rt.escalate_to_manager(db, "account_integrity", "x", customer_id="CUS-404")
    with pytest.raises(ToolError, match="CUS-404"):
        rt.escalate_to_manager(db, "account_integrity", "x", "ORD-1001", "CUS-404")
    with pytest.raises(ToolError, match="summary"):
        rt.escalate_to_manager(db, "policy_gap", "   ", "ORD-1001")
    assert _count(db, "escalations") == 0
    assert _order_of(db, "ORD-1001")["return_status"] is None


# =========================================================================== flag_account


def test_flag_account(db: dict[str, Any]) -> None:
    record = rt.flag_account(db, "CUS-2001", "return_abuse", "7 returns in the trailing 90 days.")
    assert record["flag_id"].startswith("FLG_")
    assert record["added"] is True
    assert _customer_of(db, "CUS-2001")["account_flags"] == ["return_abuse"]
    again = rt.flag_account(db, "CUS-2001", "return_abuse", "Second note.")
    assert again["added"] is False
    assert _customer_of(db, "CUS-2001")["account_flags"] == ["return_abuse"]
    rt.flag_account(db, "CUS-2001", "identity_mismatch", "Three different emails tried.")
    assert _customer_of(db, "CUS-2001")["account_flags"] == [
        "return_abuse",
        "identity_mismatch",
    ]
    assert [r["flag_type"] for r in db["account_flag_log"]] == [
        "return_abuse",
        "return_abuse",
        "identity_mismatch",
    ]
    rt.flag_account(db, "CUS-2002", "suspected_fraud", "Serial number mismatch.")
    assert _customer_of(db, "CUS-2002")["account_flags"] == [
        "lp_review",
        "suspected_fraud",
    ]


def test_flag_account_errors(db: dict[str, Any]) -> None:
    with pytest.raises(ToolError, match="CUS-404"):
        rt.flag_account(db, "CUS-404", "suspected_fraud", "note")
    with pytest.raises(ToolError, match="note"):
        rt.flag_account(db, "CUS-2001", "suspected_fraud", "  ")
    assert _count(db, "account_flag_log") == 0
    assert _customer_of(db, "CUS-2001")["account_flags"] == []


def test_flag_account_creates_missing_flag_list(db: dict[str, Any]) -> None:
    del _customer_of(db, "CUS-2003")["account_flags"]
    rt.flag_account(db, "CUS-2003", "identity_mismatch", "Name does not match the account.")
    assert _customer_of(db, "CUS-2003")["account_flags"] == ["identity_mismatch"]


# =========================================================================== record_decision


def test_record_decision(db: dict[str, Any]) -> None:
    record = rt.record_decision(
        db,
        "ALLOW-CONDITIONAL",
        "Opened headphones, gold tier: 10% fee.",
        "ORD-1001",
        ["RET-7.3", " ", "RET-6.1"],
    )
    assert record["decision"] == "ALLOW-CONDITIONAL"
    assert record["order_id"] == "ORD-1001"
    assert record["policy_sections_cited"] == ["RET-7.3", "RET-6.1"]
    assert record["recorded_at"] == NOW
    assert db["decisions"] == [record]
    bare = rt.record_decision(db, "DENY", "Identity not verified.")
    assert "order_id" not in bare and "policy_sections_cited" not in bare
    assert [d["decision"] for d in db["decisions"]] == ["ALLOW-CONDITIONAL", "DENY"]


def test_record_decision_errors(db: dict[str, Any]) -> None:
    with pytest.raises(ToolError, match="ORD-9999"):
        rt.record_decision(db, "DENY", "No such order.", "ORD-9999")
    with pytest.raises(ToolError, match="rationale"):
        rt.record_decision(db, "DENY", "  ")
    assert _count(db, "decisions") == 0


# =========================================================================== determinism


def _script(db: dict[str, Any]) -> list[Any]:
    return [
        rt.issue_refund(db, "ORD-1001", ["ORD-1001-2"], "within_window", "original_payment", 0),
        rt.issue_store_credit(db, "CUS-2003", 10.0, "goodwill"),
        rt.process_exchange(db, "ORD-1001", "ORD-1001-1", "LHT-EL-2041", "defective"),
        rt.deny_return(db, "ORD-1004", "final_sale"),
        rt.escalate_to_manager(db, "high_value_refund", "TV.", "ORD-1003"),
        rt.flag_account(db, "CUS-2002", "return_abuse", "note"),
        rt.record_decision(db, "ESCALATE", "High value."),
    ]


def test_actions_are_deterministic(db: dict[str, Any]) -> None:
    other = copy.deepcopy(db)
    assert _script(db) == _script(other)
    assert db == other
    ids = [
        db["refunds"][0]["refund_id"],
        db["store_credits"][0]["credit_id"],
        db["decisions"][0]["decision_id"],
    ]
    assert len(set(ids)) == 3


def test_actions_create_missing_collections(db: dict[str, Any]) -> None:
    for name in (
        "refunds",
        "store_credits",
        "exchanges",
        "denials",
        "escalations",
        "account_flag_log",
        "decisions",
    ):
        del db[name]
    _script(db)
    for name in (
        "refunds",
        "store_credits",
        "exchanges",
        "denials",
        "escalations",
        "account_flag_log",
        "decisions",
    ):
        assert len(db[name]) == 1, name
