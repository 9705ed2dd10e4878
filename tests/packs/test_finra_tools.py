"""Unit tests of the finra domain pack (domains/finra): its tools, base db.json, policy and routine.

The tools file is loaded by path, as the engine loads it, and called directly
with a database built from db.json plus customers, accounts and requests of
our own. The clock is Friday 2026-03-06, 10:00 Eastern.
"""

from __future__ import annotations

import copy
import inspect
import json
import re
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from pytest_pibench.packs.loading import load_domain, load_pack_module
from pytest_pibench.packs.typed_tools import tool_from_function
from pytest_pibench.toolkit import ToolError
from pytest_pibench.toolkit.routine import RoutineCall, RoutineRequest, RoutineResult

DOMAIN_DIR = Path(__file__).resolve().parents[2] / "domains" / "finra"
NOW = "2026-03-06T10:00:00-05:00"

EXPECTED_TOOLS = [
    "lookup_customer",
    "lookup_account",
    "lookup_request",
    "get_transaction_history",
    "get_alerts_and_cases",
    "screen_watchlist",
    "get_trusted_contact",
    "get_approvals",
    "check_security_restrictions",
    "process_disbursement",
    "process_journal",
    "execute_trade",
    "place_hold",
    "release_hold",
    "open_case",
    "file_report",
    "request_documents",
    "route_for_approval",
    "notify_trusted_contact",
    "decline_request",
    "escalate",
    "record_decision",
]


def _load_tools() -> ModuleType:
    """The pack's tools module as the engine loads it (a package of the pack's folder: siblings import)."""
    return load_pack_module(DOMAIN_DIR / "tools.py")


ft = _load_tools()
BASE_DB: dict[str, Any] = json.loads((DOMAIN_DIR / "db.json").read_text(encoding="utf-8"))
POLICY = (DOMAIN_DIR / "policy.md").read_text(encoding="utf-8")


def _customer(customer_id: str, name: str, **extra: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "customer_id": customer_id,
        "name": name,
        "customer_type": "individual",
        "date_of_birth": "1970-05-01",
        "country": "US",
        "address": "12 Elm Row, Albany, NY",
        "occupation": "Engineer",
        "source_of_funds": "salary",
        "expected_monthly_activity_usd": 8000.0,
        "risk_tolerance": "moderate",
        "pep": False,
        "impairment_on_file": False,
        "cip_status": "verified",
        "edd_status": "not_required",
        "edd_reviewed_on": None,
        "documents": [],
        "trusted_contact": None,
        "affiliate_of": [],
        "internal": {"risk_rating": "low", "risk_score": 14, "monitoring_notes": ""},
    }
    record.update(extra)
    return record


def _request(request_id: str, kind: str, account_id: str, amount: float | None, **details: Any) -> dict[str, Any]:
    return {
        "request_id": request_id,
        "request_type": kind,
        "account_id": account_id,
        "amount": amount,
        "submitted_by": {"person_id": "CUS-7001", "name": "Ada Whitcombe", "role": "owner"},
        "received_via": "client portal",
        "received_at": "2026-03-06T09:12:00-05:00",
        "status": "pending",
        "details": details,
    }


def _cash(txn_id: str, account_id: str, day: str, amount: float, kind: str = "cash_deposit") -> dict[str, Any]:
    return {"txn_id": txn_id, "account_id": account_id, "date": day, "type": kind, "amount": amount, "cash": True,
            "counterparty": None, "ctr_id": None}


WIRE = {
    "originator": {"name": "Ada Whitcombe", "address": "12 Elm Row, Albany, NY", "account_number": "ACC-51001"},
    "beneficiary": {"name": "Ada Whitcombe", "account_number": "889104", "bank": "Hudson Mutual Bank", "country": "US"},
}


@pytest.fixture
def db() -> dict[str, Any]:
    data = copy.deepcopy(BASE_DB)
    data["now"] = NOW
    data["customers"] = [
        _customer("CUS-7001", "Ada Whitcombe", documents=[
            {"document_type": "letter_of_authorization", "status": "received", "received_on": "2026-03-01"}]),
        _customer("CUS-7002", "Walter Pruitt", date_of_birth="1941-03-07", risk_tolerance="conservative",
                  trusted_contact={"name": "Joan Pruitt", "relationship": "daughter", "phone": "555-0142",
                                   "confirmed_on": "2025-06-01"},
                  internal={"risk_rating": "medium", "risk_score": 47, "monitoring_notes": "Elder watch."}),
        _customer("CUS-7003", "Brightwater Fabrication LLC", customer_type="legal_entity", date_of_birth=None,
                  affiliate_of=["HLQX"], beneficial_owners=[{"name": "Omar Reyes", "ownership_percent": 60}]),
    ]
    data["accounts"] = [
        {"account_id": "ACC-51001", "account_type": "individual", "owners": ["CUS-7001"], "authorized_persons": [],
         "representative_id": "EMP-301", "status": "active", "escheatment_status": "none",
         "last_customer_contact_on": "2026-02-20", "cash_balance": 90000.0,
         "activity_metrics": {"turnover_ratio_12m": 1.2, "cost_to_equity_percent_12m": 2.5},
         "positions": [
             {"symbol": "HLQX", "quantity": 300, "lots": [
                 {"lot_id": "LOT-1", "quantity": 100, "acquired_on": "2025-09-06", "restricted_legend": True},
                 {"lot_id": "LOT-2", "quantity": 100, "acquired_on": "2025-09-07", "restricted_legend": True},
                 {"lot_id": "LOT-3", "quantity": 100, "acquired_on": "2024-01-10", "restricted_legend": False}]},
             {"symbol": "HLTF", "quantity": 100}]},
        {"account_id": "ACC-51002", "account_type": "individual", "owners": ["CUS-7001"], "authorized_persons": [],
         "status": "active", "cash_balance": 500.0, "positions": []},
        {"account_id": "ACC-51003", "account_type": "individual", "owners": ["CUS-7002"], "authorized_persons": [],
         "status": "active", "cash_balance": 20000.0, "positions": []},
        {"account_id": "ACC-51004", "account_type": "entity", "owners": ["CUS-7003"], "authorized_persons": [],
         "status": "active", "cash_balance": 1000.0, "positions": [
             {"symbol": "PKST", "quantity": 50, "lots": [
                 {"lot_id": "LOT-9", "quantity": 50, "acquired_on": "2025-08-31", "restricted_legend": True}]},
             {"symbol": "HLQX", "quantity": 10, "lots": []}]},
    ]
    data["requests"] = [
        _request("REQ-90001", "wire_out", "ACC-51001", 12000.0, **WIRE),
        _request("REQ-90002", "wire_out", "ACC-51001", 4000.0,
                 originator={"name": "Ada Whitcombe"}, beneficiary={"name": "Nils Berg", "bank": "Fjord Bank"}),
        _request("REQ-90003", "journal", "ACC-51001", 1500.0, to_account_id="ACC-51002"),
        _request("REQ-90004", "journal", "ACC-51001", None, to_account_id="ACC-51003", symbol="HLTF", quantity=40),
        _request("REQ-90005", "trade_sell", "ACC-51001", None, symbol="HLQX", quantity=150, solicited=False),
        _request("REQ-90006", "trade_buy", "ACC-51001", None, symbol="CDRW", quantity=200, solicited=True),
        _request("REQ-90007", "check_out", "ACC-51003", 15000.0, payee_name="Darren Sloane"),
        _request("REQ-90008", "hold_release", "ACC-51003", None, hold_id="HLD-3001"),
        _request("REQ-90009", "annuity_exchange", "ACC-51003", None, symbol="SGVA", quantity=1, solicited=True),
    ]
    data["transactions"] = [
        _cash("TXN-1", "ACC-51001", "2026-02-28", 6000.0),  # Saturday: business day Monday 2026-03-02
        _cash("TXN-2", "ACC-51002", "2026-03-02", 4500.0),
        _cash("TXN-3", "ACC-51001", "2026-03-03", 9000.0),
        _cash("TXN-4", "ACC-51001", "2026-03-03", 2000.0, "cash_withdrawal"),
        _cash("TXN-5", "ACC-51001", "2026-02-16", 3000.0),  # holiday: business day 2026-02-17
        {"txn_id": "TXN-6", "account_id": "ACC-51001", "date": "2025-10-01", "type": "wire_in", "amount": 30000.0,
         "cash": False, "counterparty": "Hudson Mutual Bank"},
    ]
    data["alerts"] = [{"alert_id": "ALT-2001", "customer_id": "CUS-7001", "account_id": "ACC-51001",
                       "alert_type": "cash_velocity", "status": "open", "raised_on": "2026-03-04",
                       "description": "Cash deposits on consecutive business days."}]
    data["cases"] = [{"case_id": "CASE-4001", "customer_id": "CUS-7002", "case_type": "rapid_movement",
                      "status": "open", "detected_on": "2026-02-10", "sar_decision": "file", "sar_filed": False}]
    data["approvals"] = [{"approval_id": "APR-1", "request_id": "REQ-90001", "approval_type": "second_authorization",
                          "status": "approved", "approver_id": "EMP-220", "approver_name": "Lena Ortiz",
                          "approver_role": "principal", "decided_at": "2026-03-06T09:40:00-05:00"}]
    data["holds"] = [{"hold_id": "HLD-3001", "account_id": "ACC-51003", "request_id": None,
                      "hold_type": "senior_exploitation", "reason": "Romance-scam payee.", "status": "active",
                      "placed_on": "2026-03-02", "expires_on": "2026-03-23"}]
    return data


def _find(db: dict[str, Any], collection: str, key: str, value: str) -> dict[str, Any]:
    return next(r for r in db[collection] if r[key] == value)


# =========================================================================== the pack


def test_the_pack_loads_with_its_tools_policy_and_routine() -> None:
    domain = load_domain("finra")
    assert domain.tool_names == EXPECTED_TOOLS
    assert domain.routine is not None
    assert "HLS-WSP-AML-2026.1" in domain.policy_text
    for tool in domain.tools:
        schema = tool.schema()
        assert schema["description"], tool.name
        for name, prop in schema["parameters"]["properties"].items():
            assert prop.get("description"), (tool.name, name)


def test_tools_are_listed_once_typed_and_documented() -> None:
    names = [f.__name__ for f in ft.TOOLS]
    assert names == EXPECTED_TOOLS
    # every public function of the pack (tools.py and the sibling modules it imports) is a tool
    pack = ft.__package__ + "."
    public = {n for n, o in vars(ft).items() if inspect.isfunction(o) and o.__module__.startswith(pack) and n[0] != "_"}
    assert public == set(names)
    for function in ft.TOOLS:
        params = list(inspect.signature(function).parameters.values())
        assert params[0].name == "db"
        args = (inspect.getdoc(function) or "").split("Args:", 1)[1]
        for param in params[1:]:
            assert f"{param.name}: " in args, (function.__name__, param.name)


@pytest.mark.parametrize(
    ("tool", "parameter", "values"),
    [
        ("place_hold", "hold_type", ["aml_review", "sanctions", "senior_exploitation", "trading_restriction"]),
        ("open_case", "case_type", ["structuring", "rapid_movement", "profile_inconsistency", "reporting_evasion"]),
        ("file_report", "report_type", ["CTR", "SAR"]),
        ("route_for_approval", "approval_type", ["second_authorization", "principal_approval", "compliance_clearance"]),
        ("record_decision", "decision", ["ALLOW", "ALLOW-CONDITIONAL", "DENY", "ESCALATE"]),
    ],
)
def test_codes_are_enums_in_the_schema(tool: str, parameter: str, values: list[str]) -> None:
    schema = tool_from_function(getattr(ft, tool)).schema()["parameters"]
    assert schema["properties"][parameter]["enum"] == values


@pytest.mark.parametrize("enum_name", ["DeclineReason", "EscalationType", "CaseType", "HoldType", "DocumentType"])
def test_every_code_is_named_in_the_policy(enum_name: str) -> None:
    for code in getattr(ft, enum_name).__args__:
        assert f"`{code}`" in POLICY, code


def test_policy_clause_ids_are_unique_and_every_cited_clause_exists() -> None:
    defined = re.findall(r"^\*\*(FIN-\d+\.\d+)\*\*", POLICY, flags=re.M)
    assert len(defined) == len(set(defined)) >= 70
    cited = set(re.findall(r"FIN-\d+\.\d+", POLICY))
    assert cited <= set(defined)
    assert 15_000 <= len(POLICY) <= 27_000  # a full procedure, still readable in one sitting (FIN-17.2 grew in issue 24)


def test_base_db_has_the_reference_data_and_empty_collections() -> None:
    assert "now" not in BASE_DB
    constants = BASE_DB["constants"]
    assert constants["timezone"] == "America/New_York"
    assert constants["ctr_threshold_usd"] == 10000.0 and constants["dual_authorization_threshold_usd"] == 50000.0
    symbols = [s["symbol"] for s in BASE_DB["securities"]]
    assert len(symbols) == len(set(symbols)) >= 10
    assert any(s["on_restricted_list"] for s in BASE_DB["securities"])
    assert any(s["lockup_ends_on"] for s in BASE_DB["securities"])
    assert len(BASE_DB["watchlist"]) >= 6
    for name in ("customers", "accounts", "requests", "transactions", "holds", "cases", "decisions"):
        assert BASE_DB[name] == [], name


# =========================================================================== look-ups


def test_lookup_customer_marks_internal_data_and_computes_age(db: dict[str, Any]) -> None:
    profile = ft.lookup_customer(db, "CUS-7002")
    assert profile["age"] == 84  # born 1941-03-07: turns 85 tomorrow
    assert profile["internal"]["risk_score"] == 47 and "never disclose" in profile["internal"]["notice"]
    assert "risk_score" not in {k for k in profile if k != "internal"}
    assert "trusted_contact" not in profile and profile["has_trusted_contact"] is True
    assert profile["account_ids"] == ["ACC-51003"]
    profile["internal"]["risk_score"] = 0
    assert _find(db, "customers", "customer_id", "CUS-7002")["internal"]["risk_score"] == 47


def test_lookup_account_values_positions_and_shows_active_holds(db: dict[str, Any]) -> None:
    account = ft.lookup_account(db, "ACC-51001")
    assert account["owner_names"] == ["Ada Whitcombe"]
    assert [p["market_value"] for p in account["positions"]] == [14475.0, 10235.0]
    assert account["total_value"] == 114710.0
    assert all("lots" not in p for p in account["positions"])
    held = ft.lookup_account(db, "ACC-51003")["active_holds"]
    assert held == [{"hold_id": "HLD-3001", "hold_type": "senior_exploitation", "placed_on": "2026-03-02",
                     "expires_on": "2026-03-23", "request_id": None}]


def test_lookup_request_derives_travel_rule_gaps_third_parties_and_concentration(db: dict[str, Any]) -> None:
    assert ft.lookup_request(db, "REQ-90001")["missing_fields"] == []
    assert ft.lookup_request(db, "REQ-90001")["to_third_party"] is False
    gappy = ft.lookup_request(db, "REQ-90002")
    assert gappy["missing_fields"] == ["originator.address", "originator.account_number", "beneficiary.account_number"]
    assert gappy["to_third_party"] is True
    assert ft.lookup_request(db, "REQ-90003")["same_owners"] is True
    assert ft.lookup_request(db, "REQ-90004")["to_third_party"] is True
    assert ft.lookup_request(db, "REQ-90007")["to_third_party"] is True
    assert ft.lookup_request(db, "REQ-90006")["post_trade_issuer_concentration_percent"] == 19.54  # 22,420 of 114,710


def test_a_completed_purchase_shows_no_post_trade_concentration(db: dict[str, Any]) -> None:
    ft.execute_trade(db, "REQ-90006")  # the bought shares are in the position now: counting them again would double
    assert "post_trade_issuer_concentration_percent" not in ft.lookup_request(db, "REQ-90006")


def test_transaction_history_assigns_cash_to_business_days(db: dict[str, Any]) -> None:
    history = ft.get_transaction_history(db, "ACC-51001", 30)
    assert history["as_of_date"] == "2026-03-06" and history["from_date"] == "2026-02-04"
    assert [t["txn_id"] for t in history["transactions"]] == ["TXN-5", "TXN-1", "TXN-3", "TXN-4"]
    assert history["cash_by_business_day"] == [
        {"business_date": "2026-02-17", "cash_in": 3000.0, "cash_out": 0.0},
        {"business_date": "2026-03-02", "cash_in": 6000.0, "cash_out": 0.0},
        {"business_date": "2026-03-03", "cash_in": 9000.0, "cash_out": 2000.0},
    ]
    assert [t["txn_id"] for t in ft.get_transaction_history(db, "ACC-51001")["transactions"]][-1] == "TXN-4"
    assert "TXN-6" in [t["txn_id"] for t in ft.get_transaction_history(db, "ACC-51001", 365)["transactions"]]


def test_alerts_and_cases_are_internal_with_sar_due_dates(db: dict[str, Any]) -> None:
    result = ft.get_alerts_and_cases(db, "CUS-7002")
    assert set(result) == {"customer_id", "internal"}
    (case,) = result["internal"]["cases"]
    assert case["sar_due_on"] == "2026-03-12"  # 30 days after 2026-02-10
    assert ft.get_alerts_and_cases(db, "CUS-7001")["internal"]["alerts"][0]["alert_id"] == "ALT-2001"


@pytest.mark.parametrize(
    ("name", "party_type", "country", "result", "risk"),
    [
        ("petra IVANOVA", "individual", "US", "match", "standard"),
        ("Ivanova, Petra", "individual", None, "match", "unknown"),
        ("Petra Ivanov", "individual", "DE", "potential_match", "standard"),
        ("Kestrel Maritime Holdings", "entity", "ae", "potential_match", "standard"),
        ("Ada Whitcombe", "individual", "IR", "clear", "high"),
    ],
)
def test_screen_watchlist(db: dict[str, Any], name: str, party_type: str, country: str | None, result: str,
                          risk: str) -> None:
    screened = ft.screen_watchlist(db, name, party_type, country)
    assert screened["internal"]["result"] == result
    assert screened["internal"]["jurisdiction_risk"] == risk
    if result != "clear":
        assert screened["internal"]["matches"][0]["entry_id"] in {"WL-1001", "WL-1002"}


def test_trusted_contact_and_approvals(db: dict[str, Any]) -> None:
    assert ft.get_trusted_contact(db, "CUS-7002")["trusted_contact"]["name"] == "Joan Pruitt"
    assert ft.get_trusted_contact(db, "CUS-7001") == {"customer_id": "CUS-7001", "trusted_contact": None}
    approvals = ft.get_approvals(db, "REQ-90001")
    assert approvals["submitted_by"]["person_id"] == "CUS-7001"
    assert [a["approval_id"] for a in approvals["approvals"]] == ["APR-1"]
    assert ft.get_approvals(db, "REQ-90002")["approvals"] == []


def test_security_restrictions_leave_the_holding_period_to_the_desk(db: dict[str, Any]) -> None:
    """FIN-13.3 is the desk's arithmetic: the look-up shows the lots as recorded, never "met" or an end date."""
    plain = ft.check_security_restrictions(db, "NVLT")
    assert plain["lockup_ends_on"] == "2026-05-12" and "lots" not in plain
    assert ft.check_security_restrictions(db, "TLMN")["on_restricted_list"] is True
    lots = ft.check_security_restrictions(db, "HLQX", "ACC-51001")
    assert lots["customer_is_affiliate"] is False
    assert [(x["lot_id"], x["restricted_legend"]) for x in lots["lots"]] == [
        ("LOT-1", True), ("LOT-2", True), ("LOT-3", False)]
    assert all(x["acquired_on"] for x in lots["lots"])
    computed = {"holding_period_months", "holding_period_ends_on", "holding_period_met"}
    assert not computed & {key for x in lots["lots"] for key in x}
    assert not computed & set(ft.check_security_restrictions(db, "PKST", "ACC-51004")["lots"][0])
    assert ft.check_security_restrictions(db, "HLQX", "ACC-51004")["customer_is_affiliate"] is True


@pytest.mark.parametrize(
    ("tool", "arguments", "message"),
    [
        ("lookup_customer", {"customer_id": "CUS-404"}, "CUS-404"),
        ("lookup_account", {"account_id": "ACC-404"}, "ACC-404"),
        ("lookup_request", {"request_id": "req-90001"}, "req-90001"),
        ("get_transaction_history", {"account_id": "ACC-51001", "days": 0}, "days"),
        ("get_alerts_and_cases", {"customer_id": "CUS-404"}, "CUS-404"),
        ("screen_watchlist", {"name": "  ", "party_type": "individual"}, "name"),
        ("get_trusted_contact", {"customer_id": "CUS-404"}, "CUS-404"),
        ("get_approvals", {"request_id": "REQ-404"}, "REQ-404"),
        ("check_security_restrictions", {"symbol": "ZZZZ"}, "ZZZZ"),
        ("check_security_restrictions", {"symbol": "HLQX", "account_id": "ACC-404"}, "ACC-404"),
    ],
)
def test_lookup_errors(db: dict[str, Any], tool: str, arguments: dict[str, Any], message: str) -> None:
    with pytest.raises(ToolError, match=message):
        getattr(ft, tool)(db, **arguments)


# =========================================================================== actions: processing


def test_process_disbursement(db: dict[str, Any]) -> None:
    record = ft.process_disbursement(db, "REQ-90001")
    assert record["amount"] == 12000.0 and record["counterparty"] == "Ada Whitcombe"
    assert _find(db, "accounts", "account_id", "ACC-51001")["cash_balance"] == 78000.0
    assert _find(db, "requests", "request_id", "REQ-90001")["status"] == "completed"
    assert db["transactions"][-1]["request_id"] == "REQ-90001"


def test_process_journal_of_cash_and_of_shares(db: dict[str, Any]) -> None:
    ft.process_journal(db, "REQ-90003")
    assert _find(db, "accounts", "account_id", "ACC-51002")["cash_balance"] == 2000.0
    record = ft.process_journal(db, "REQ-90004")
    assert (record["symbol"], record["quantity"]) == ("HLTF", 40.0)
    assert _find(db, "accounts", "account_id", "ACC-51003")["positions"] == [{"symbol": "HLTF", "quantity": 40.0}]
    assert _find(db, "accounts", "account_id", "ACC-51001")["positions"][1]["quantity"] == 60.0
    assert db["journals"][0]["amount"] == 1500.0


def test_execute_trade_sells_oldest_lots_first_and_buys(db: dict[str, Any]) -> None:
    sale = ft.execute_trade(db, "REQ-90005")
    assert (sale["side"], sale["amount"]) == ("sell", 7237.5)
    position = _find(db, "accounts", "account_id", "ACC-51001")["positions"][0]
    assert position["quantity"] == 150.0
    assert [lot["quantity"] for lot in position["lots"]] == [50.0, 100.0, 0.0]
    buy = ft.execute_trade(db, "REQ-90006")
    assert buy["amount"] == 22420.0
    assert _find(db, "accounts", "account_id", "ACC-51001")["cash_balance"] == 90000.0 + 7237.5 - 22420.0
    assert ft.execute_trade(db, "REQ-90009")["side"] == "exchange"
    assert _find(db, "requests", "request_id", "REQ-90009")["status"] == "completed"


@pytest.mark.parametrize(
    ("tool", "request_id", "patch", "message"),
    [
        ("process_disbursement", "REQ-90003", {}, "journal"),
        ("process_disbursement", "REQ-90001", {"status": "on_hold"}, "on_hold"),
        ("process_disbursement", "REQ-90001", {"amount": 95000.0}, "available cash"),
        ("process_journal", "REQ-90003", {"amount": 600.0, "account_id": "ACC-51002"}, "available cash"),
        ("process_journal", "REQ-90004", {"details": {"to_account_id": "ACC-51003", "symbol": "HLTF", "quantity": 101}},
         "holds 100"),
        ("execute_trade", "REQ-90005", {"details": {"symbol": "HLQX", "quantity": 301}}, "cannot sell"),
        ("execute_trade", "REQ-90006", {"details": {"symbol": "CDRW", "quantity": 1000}}, "costs"),
        ("execute_trade", "REQ-90001", {}, "wire_out"),
    ],
)
def test_processing_errors_change_nothing(db: dict[str, Any], tool: str, request_id: str, patch: dict[str, Any],
                                          message: str) -> None:
    _find(db, "requests", "request_id", request_id).update(patch)
    before = copy.deepcopy(db)
    with pytest.raises(ToolError, match=message):
        getattr(ft, tool)(db, request_id)
    assert db == before


def test_a_request_is_processed_once(db: dict[str, Any]) -> None:
    ft.process_disbursement(db, "REQ-90001")
    with pytest.raises(ToolError, match="completed"):
        ft.process_disbursement(db, "REQ-90001")


# =========================================================================== actions: holds, cases, reports


def test_place_hold_senior_expiry_counts_business_days(db: dict[str, Any]) -> None:
    hold = ft.place_hold(db, "ACC-51003", "senior_exploitation", "Unknown payee pressing.", "REQ-90007")
    assert hold["expires_on"] == "2026-03-27" and hold["status"] == "active"
    request = _find(db, "requests", "request_id", "REQ-90007")
    assert (request["status"], request["hold_id"]) == ("on_hold", hold["hold_id"])
    aml = ft.place_hold(db, "ACC-51001", "aml_review", "Structuring pattern.", "REQ-90001")
    assert aml["expires_on"] is None
    with pytest.raises(ToolError, match="identical"):
        ft.place_hold(db, "ACC-51001", "aml_review", "Again.", "REQ-90001")
    with pytest.raises(ToolError, match="ACC-51001"):
        ft.place_hold(db, "ACC-51003", "sanctions", "x", "REQ-90002")
    with pytest.raises(ToolError, match="reason"):
        ft.place_hold(db, "ACC-51003", "sanctions", " ")


def test_release_hold(db: dict[str, Any]) -> None:
    ft.place_hold(db, "ACC-51003", "aml_review", "Review.", "REQ-90007")
    hold_id = db["holds"][-1]["hold_id"]
    released = ft.release_hold(db, hold_id)
    assert (released["status"], released["released_on"]) == ("released", "2026-03-06")
    assert _find(db, "requests", "request_id", "REQ-90007")["status"] == "pending"
    ft.release_hold(db, "HLD-3001", "REQ-90008")
    assert _find(db, "requests", "request_id", "REQ-90008")["status"] == "completed"
    with pytest.raises(ToolError, match="not active"):
        ft.release_hold(db, "HLD-3001")
    with pytest.raises(ToolError, match="HLD-404"):
        ft.release_hold(db, "HLD-404")


def test_release_hold_needs_a_hold_release_request(db: dict[str, Any]) -> None:
    with pytest.raises(ToolError, match="not a hold_release"):
        ft.release_hold(db, "HLD-3001", "REQ-90007")
    assert _find(db, "holds", "hold_id", "HLD-3001")["status"] == "active"


def test_open_case(db: dict[str, Any]) -> None:
    case = ft.open_case(db, "CUS-7001", "structuring", "Three cash deposits.", "ACC-51001", "REQ-90001")
    assert case["status"] == "open" and case["detected_on"] == "2026-03-06" and case["sar_due_on"] == "2026-04-05"
    assert _find(db, "requests", "request_id", "REQ-90001")["case_id"] == case["case_id"]
    with pytest.raises(ToolError, match="already open"):
        ft.open_case(db, "CUS-7001", "structuring", "Again.")
    with pytest.raises(ToolError, match="summary"):
        ft.open_case(db, "CUS-7001", "rapid_movement", "")


def test_file_ctr_aggregates_the_customers_accounts_per_business_day(db: dict[str, Any]) -> None:
    report = ft.file_report(db, "CTR", "CUS-7001", "Cash over 10k.", business_date="2026-03-02")
    assert (report["cash_in_total"], report["cash_out_total"]) == (10500.0, 0.0)
    assert report["due_on"] == "2026-03-17" and report["late"] is False
    assert {t["txn_id"] for t in db["transactions"] if t.get("ctr_id") == report["report_id"]} == {"TXN-1", "TXN-2"}
    with pytest.raises(ToolError, match="already covered"):
        ft.file_report(db, "CTR", "CUS-7001", "Again.", business_date="2026-03-02")
    other = ft.file_report(db, "CTR", "CUS-7001", "Mixed day.", business_date="2026-03-03")
    assert (other["cash_in_total"], other["cash_out_total"]) == (9000.0, 2000.0)
    late = ft.file_report(db, "CTR", "CUS-7001", "Holiday cash.", business_date="2026-02-17")
    assert late["late"] is True and late["due_on"] == "2026-03-04"


def test_file_sar_marks_the_case(db: dict[str, Any]) -> None:
    report = ft.file_report(db, "SAR", "CUS-7002", "Rapid movement.", case_id="CASE-4001")
    assert (report["due_on"], report["late"]) == ("2026-03-12", False)
    case = _find(db, "cases", "case_id", "CASE-4001")
    assert case["sar_filed"] is True and case["sar_report_id"] == report["report_id"]
    with pytest.raises(ToolError, match="already filed"):
        ft.file_report(db, "SAR", "CUS-7002", "Again.", case_id="CASE-4001")


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"report_type": "CTR", "customer_id": "CUS-7001", "summary": "x"}, "business_date"),
        ({"report_type": "CTR", "customer_id": "CUS-7001", "summary": "x", "business_date": "2026-03-04"}, "No cash"),
        ({"report_type": "SAR", "customer_id": "CUS-7002", "summary": "x"}, "case_id"),
        ({"report_type": "SAR", "customer_id": "CUS-7001", "summary": "x", "case_id": "CASE-4001"}, "concerns"),
        ({"report_type": "SAR", "customer_id": "CUS-7002", "summary": "x", "case_id": "CASE-9"}, "CASE-9"),
    ],
)
def test_file_report_errors(db: dict[str, Any], arguments: dict[str, Any], message: str) -> None:
    with pytest.raises(ToolError, match=message):
        ft.file_report(db, **arguments)
    assert db["reports"] == []


# =========================================================================== actions: conditions, decline, escalate


def test_request_documents_parks_the_request(db: dict[str, Any]) -> None:
    record = ft.request_documents(db, "CUS-7001", "government_id", "Please upload a photo ID.", "REQ-90002")
    assert record["document_type"] == "government_id"
    assert _find(db, "requests", "request_id", "REQ-90002")["status"] == "pending_conditions"
    documents = _find(db, "customers", "customer_id", "CUS-7001")["documents"]
    assert documents[-1] == {"document_type": "government_id", "status": "requested", "requested_on": "2026-03-06"}
    with pytest.raises(ToolError, match="already requested"):
        ft.request_documents(db, "CUS-7001", "government_id", "Again.")
    with pytest.raises(ToolError, match="already received"):
        ft.request_documents(db, "CUS-7001", "letter_of_authorization", "LOA.")


def test_route_for_approval(db: dict[str, Any]) -> None:
    approval = ft.route_for_approval(db, "REQ-90007", "second_authorization", "Third-party check.")
    assert (approval["approver_role"], approval["status"]) == ("principal", "pending")
    assert _find(db, "requests", "request_id", "REQ-90007")["status"] == "pending_conditions"
    assert ft.route_for_approval(db, "REQ-90005", "compliance_clearance", "Rule 144.")["approver_role"] == "compliance"
    with pytest.raises(ToolError, match="already pending"):
        ft.route_for_approval(db, "REQ-90007", "second_authorization", "Again.")
    ft.decline_request(db, "REQ-90003", "not_authorized")
    with pytest.raises(ToolError, match="declined"):
        ft.route_for_approval(db, "REQ-90003", "principal_approval", "x")


def test_notify_trusted_contact(db: dict[str, Any]) -> None:
    notice = ft.notify_trusted_contact(db, "CUS-7002", "temporary_hold", "We have a concern about your father.")
    assert notice["contact_name"] == "Joan Pruitt"
    assert db["trusted_contact_notices"][0]["reason"] == "temporary_hold"
    with pytest.raises(ToolError, match="no trusted contact"):
        ft.notify_trusted_contact(db, "CUS-7001", "wellbeing_concern", "Hello.")


def test_decline_request(db: dict[str, Any]) -> None:
    record = ft.decline_request(db, "REQ-90005", "holding_period_not_met")
    assert record["reason_code"] == "holding_period_not_met"
    request = _find(db, "requests", "request_id", "REQ-90005")
    assert (request["status"], request["decline_reason"]) == ("declined", "holding_period_not_met")
    with pytest.raises(ToolError, match="already declined"):
        ft.decline_request(db, "REQ-90005", "lockup_period")


@pytest.mark.parametrize(
    ("escalation_type", "assigned_to"),
    [("sanctions_review", "aml_officer"), ("suspicious_activity", "aml_officer"), ("elder_exploitation", "principal"),
     ("suitability_review", "principal"), ("information_request", "compliance"), ("policy_gap", "compliance")],
)
def test_escalate_routes_by_type(db: dict[str, Any], escalation_type: str, assigned_to: str) -> None:
    record = ft.escalate(db, escalation_type, "Facts and clauses.", "REQ-90007")
    assert (record["assigned_to"], record["customer_id"], record["status"]) == (assigned_to, "CUS-7002", "open")
    request = _find(db, "requests", "request_id", "REQ-90007")
    assert (request["status"], request["escalation_id"]) == ("escalated", record["escalation_id"])
    with pytest.raises(ToolError, match="identical"):
        ft.escalate(db, escalation_type, "Again.", "REQ-90007")


def test_escalate_keeps_a_held_request_on_hold(db: dict[str, Any]) -> None:
    ft.place_hold(db, "ACC-51001", "aml_review", "Pattern.", "REQ-90001")
    ft.escalate(db, "suspicious_activity", "Pattern found.", "REQ-90001")
    assert _find(db, "requests", "request_id", "REQ-90001")["status"] == "on_hold"
    caller = ft.escalate(db, "information_request", "Caller asked for balances.", customer_id="CUS-7001")
    assert caller["request_id"] is None
    with pytest.raises(ToolError, match="CUS-404"):
        ft.escalate(db, "policy_gap", "x", customer_id="CUS-404")


def test_record_decision(db: dict[str, Any]) -> None:
    record = ft.record_decision(db, "ALLOW-CONDITIONAL", "Awaiting second authorization.", "REQ-90007",
                                ["FIN-10.1", " "])
    assert record["decision"] == "ALLOW-CONDITIONAL" and record["policy_sections_cited"] == ["FIN-10.1"]
    assert record["recorded_at"] == NOW
    with pytest.raises(ToolError, match="rationale"):
        ft.record_decision(db, "DENY", " ")
    with pytest.raises(ToolError, match="REQ-404"):
        ft.record_decision(db, "DENY", "x", "REQ-404")


# =========================================================================== determinism


def _script(db: dict[str, Any]) -> list[Any]:
    return [
        ft.place_hold(db, "ACC-51001", "aml_review", "Pattern.", "REQ-90002"),
        ft.open_case(db, "CUS-7001", "structuring", "Deposits.", "ACC-51001", "REQ-90002"),
        ft.file_report(db, "CTR", "CUS-7001", "Cash.", business_date="2026-03-02"),
        ft.escalate(db, "suspicious_activity", "Pattern.", "REQ-90002"),
        ft.process_disbursement(db, "REQ-90001"),
        ft.record_decision(db, "ESCALATE", "Referred.", "REQ-90002"),
    ]


def test_actions_are_deterministic(db: dict[str, Any]) -> None:
    twin = copy.deepcopy(db)
    results = _script(db)
    assert results == _script(twin)
    assert db == twin
    assert all(r.get("created_at", r.get("recorded_at")) == NOW for r in results)
    assert len({next(iter(r.values())) for r in results}) == 6  # each record's own id comes first


# =========================================================================== the routine


def test_routine_lookups_read_the_request_customer_and_accounts() -> None:
    routine = load_domain("finra").routine
    assert routine is not None
    request = RoutineRequest("Please send REQ-90001 from ACC-51001 today.", {"customer_id": "CUS-7001"},
                             {"account_id": "ACC-51002"})
    assert [(c.name, c.arguments) for c in routine.lookups(request)] == [
        ("lookup_request", {"request_id": "REQ-90001"}),
        ("lookup_customer", {"customer_id": "CUS-7001"}),
        ("get_alerts_and_cases", {"customer_id": "CUS-7001"}),
        ("lookup_account", {"account_id": "ACC-51002"}),
        ("get_transaction_history", {"account_id": "ACC-51002"}),
        ("lookup_account", {"account_id": "ACC-51001"}),
        ("get_transaction_history", {"account_id": "ACC-51001"}),
    ]


@pytest.mark.parametrize(
    ("decision", "kind", "tool"),
    [
        ("ALLOW", "wire_out", "process_disbursement"),
        ("ALLOW", "journal", "process_journal"),
        ("ALLOW", "trade_sell", "execute_trade"),
        ("ALLOW-CONDITIONAL", "wire_out", "route_for_approval"),
        ("DENY", "trade_sell", "decline_request"),
        ("ESCALATE", "wire_out", "escalate"),
    ],
)
def test_routine_actions(decision: str, kind: str, tool: str) -> None:
    routine = load_domain("finra").routine
    assert routine is not None
    request = RoutineRequest("REQ-1", {"customer_id": "CUS-1"})
    looked_up = RoutineResult(RoutineCall("lookup_request", {"request_id": "REQ-1"}),
                              {"request_id": "REQ-1", "request_type": kind})
    (call,) = routine.action(decision, request, [looked_up])
    assert call.name == tool and call.arguments["request_id"] == "REQ-1"
    assert routine.action("ESCALATE", request, [])[0].arguments == {
        "escalation_type": "suspicious_activity", "summary": "The request needs review.", "customer_id": "CUS-1"}
    if decision != "ESCALATE":  # nothing to act on without a request
        assert routine.action(decision, request, []) == []


def test_routine_calls_succeed_on_a_database(db: dict[str, Any]) -> None:
    """Every routine call is a valid call of the pack's tools (arguments validate, the tool runs)."""
    domain = load_domain("finra")
    assert domain.routine is not None
    request = RoutineRequest("About REQ-90001 on ACC-51001", {"customer_id": "CUS-7001"})
    results = []
    for call in domain.routine.lookups(request):
        tool = domain.tool(call.name)
        assert tool is not None
        results.append(RoutineResult(call, tool(db, call.arguments)))
    for decision in ("ALLOW", "ALLOW-CONDITIONAL", "DENY", "ESCALATE"):
        for call in domain.routine.action(decision, request, results):
            tool = domain.tool(call.name)
            assert tool is not None
            assert tool(copy.deepcopy(db), call.arguments), (decision, call.name)
