"""The generic engine of declarative packs: every built-in handler, the generic look-up, soft errors, ids."""

from __future__ import annotations

import copy

import pytest

from pytest_pibench.packs.engine import generic_tool
from pytest_pibench.packs.generic import find_record, next_id, same
from pytest_pibench.packs.loading import upstream_handlers

NOW = "2026-03-10T09:00:00-05:00"


def call(db, name, **arguments):
    return generic_tool(db, name, arguments, upstream_handlers())


def test_every_upstream_tool_name_has_a_handler():
    finra = {"lookup_customer_profile", "query_transaction_history", "lookup_account_events",
             "lookup_related_account_activity", "lookup_certificate_deposits", "lookup_security_info",
             "process_wire_transfer", "hold_transaction", "release_hold", "process_cash_deposit", "execute_trade",
             "journal_security_positions", "process_annuity_cancellation", "update_beneficiary_designation",
             "create_alert", "open_case", "escalate_to_compliance", "file_sar", "file_ctr", "dismiss_alert",
             "record_decision"}
    retail = {"lookup_order", "lookup_customer_profile", "check_return_eligibility", "process_refund",
              "process_exchange", "apply_store_credit", "deny_refund", "escalate_to_manager", "flag_account",
              "record_decision"}
    helpdesk = {"read_policy", "lookup_employee", "verify_identity", "check_approval_status", "reset_password",
                "unlock_account", "provision_vpn_access", "install_software", "create_access_request",
                "escalate_to_tier2", "escalate_to_it_security", "log_ticket", "record_decision"}
    assert (finra | retail | helpdesk | {"update_request_status"}) == set(upstream_handlers().names())


def test_ids_come_from_one_counter_shared_by_every_prefix():
    db: dict = {}
    first = call(db, "record_decision", decision="DENY", rationale="r")
    assert first["decision_record_id"] == "DEC_E33ED9F6" and db["_id_counter"] == 1  # upstream's first id
    assert call({"_id_counter": 1}, "record_decision", decision="X")["decision_record_id"] == "DEC_C10B53C2"
    call(db, "file_sar")  # another prefix moves the same counter
    assert call(db, "record_decision", decision="X")["decision_record_id"] == next_id({"_id_counter": 2}, "DEC")
    assert first["recorded_at"] == "2026-01-01T00:00:00+00:00" and first["rationale"] == "r"  # the default clock
    assert [d["decision"] for d in db["decisions"]] == ["DENY", "X"]  # never validated here


def test_the_db_hash_is_upstreams():
    import hashlib

    from pytest_pibench.checks.legacy import db_hash

    assert db_hash({"b": 1, "a": [1, "é"]}) == hashlib.sha256(b'{"a":[1,"\\u00e9"],"b":1}').hexdigest()


def test_look_ups_never_change_the_database(finra):
    db = copy.deepcopy(finra)
    del db["activity"]
    before = copy.deepcopy(db)
    call(db, "query_transaction_history", customer_id="CUS-1")
    call(db, "hold_transaction", request_id="R1", reason="x")  # an unknown request: nothing to hold
    call(db, "lookup_account_events", customer_id="CUS-1")
    assert db == before


def test_matching_rules_and_the_three_collection_shapes():
    assert same(" ORD-1 ", "ord-1") and same(None, None) and not same(None, "")
    listed = [{"order_id": "O1"}, {"order_id": "O2"}]
    keyed = {"C1": {"name": "Ann"}, "C2": {"customer_id": "C2", "name": "Bo"}}
    single = {"customer_id": "C9", "name": "Cy"}
    assert find_record(listed, "order_id", "o2") is listed[1]
    assert find_record(keyed, "customer_id", "c1") is keyed["C1"]  # by key, the live record
    assert find_record(single, "customer_id", "C9") is single and find_record(single, "customer_id", "C1") is None


def test_generic_lookup_and_soft_errors():
    db = {"widgets": [{"widget_id": "W1", "size": 3}], "gadgets": {"G1": {"colour": "red"}}}
    assert call(db, "lookup_widget", widget_id="w1") == {"widget_id": "W1", "size": 3}  # the record as stored
    assert call(db, "lookup_gadget", gadget_id="g1") == {"gadget_id": "G1", "colour": "red"}  # the stored key
    assert call(db, "lookup_widget")["message"] == "lookup_widget needs an id argument (a name ending in _id)."
    missing = call(db, "lookup_widget", widget_id="W9")
    assert missing["error"] is True and missing["criteria"] == {"widget_id": "W9"}
    assert call(db, "teleport") == {"error": True, "message": "No handler is registered for tool 'teleport'."}
    found = call({"orders": [{"order_id": "O1"}]}, "lookup_order", order_id="O1", surplus="ignored")
    assert found == {"order_id": "O1"}  # an unknown argument is ignored


@pytest.fixture
def retail():
    return {
        "now": NOW,
        "orders": [
            {"order_id": "O1", "customer_id": "C1", "total_amount": 200.0, "delivery_date": "2026-03-01",
             "items": [{"category": "electronics"}], "status": "delivered"},
            {"order_id": "O2", "customer_id": "C2", "total_amount": 50.0, "purchase_date": "2026-01-01",
             "items": [{"category": "apparel"}], "flags": ["final_sale"]},
        ],
        "customer_profile": {"C1": {"customer_id": "C1", "loyalty_tier": "Gold"},
                             "C2": {"customer_id": "C2", "loyalty_tier": "silver", "account_flags": []}},
    }


def test_retail_handlers(retail):
    db = copy.deepcopy(retail)
    eligibility = call(db, "check_return_eligibility", order_id="O1")
    assert eligibility["eligible"] and eligibility["return_window_days"] == 21 and eligibility["days_since_delivery"] == 9
    assert eligibility["restocking_fee_percent"] == 0  # gold: no fee
    assert call(db, "check_return_eligibility", order_id="O2")["reason"] == "final_sale"
    assert call(db, "lookup_customer_profile", customer_id="c2")["loyalty_tier"] == "silver"
    refund = call(db, "process_refund", order_id="O1", refund_type="full", reason_code="within_window",
                  restocking_fee_applied=True)
    assert refund["amount_refunded"] == 200.0 and refund["restocking_fee_amount"] == 0.0  # the listed flag is ignored
    assert db["orders"][0]["status"] == "refunded"
    fee = call(db, "process_refund", order_id="O1", restocking_fee_percent=15)
    assert fee["amount_refunded"] == 170.0 and fee["restocking_fee_amount"] == 30.0
    assert call(db, "process_refund", order_id="NOPE")["amount_refunded"] is None  # succeeds without an order
    assert call(db, "deny_refund", order_id="O2", reason_code="final_sale")["status"] == "denied"
    assert call(db, "process_exchange", order_id="O1")["new_order_id"].startswith("ORD_")
    assert call(db, "apply_store_credit", customer_id="C2", amount=10)["expiry_date"] == "2027-02-26"
    escalation = call(db, "escalate_to_manager", reason="r", escalation_type="customer_request", order_id="O1")
    assert escalation["status"] == "pending_review" and escalation["order_id"] == "O1" and "reason" not in escalation
    call(db, "flag_account", customer_id="C2", flag_type="policy_abuse", notes="n")
    assert db["customer_profile"]["C2"]["account_flags"] == ["policy_abuse"]
    assert call(db, "lookup_order", order_id="o2")["order_id"] == "O2"
    one = {"now": NOW, "orders": [{"order_id": "O5", "delivery_date": "2026-01-20", "items": [{"category": "home"}]}],
           "customer_profile": {"loyalty_tier": "platinum", "account_flags": []}}  # one profile, no customer ids
    assert call(one, "check_return_eligibility", order_id="O5")["return_window_days"] == 60
    assert call(one, "process_refund", order_id="o5")["amount_refunded"] is None  # a mutator: exact id only
    assert "status" not in one["orders"][0]


@pytest.fixture
def helpdesk():
    return {
        "now": NOW,
        "_policy_text": "SOP text",
        "employee": {"employee_id": "E1", "name": "Ana Ruiz", "department": "Finance", "manager": "Li"},
        "accounts": {"E1": {"account_type": "admin", "lockout_status": "locked", "lockout_reason": "failed_login"},
                     "E2": {"lockout_status": "locked", "lockout_reason": "security_flag"}},
        "approvals": [{"employee_id": "E1", "ticket_id": "T-1", "resource_name": "VPN", "status": "Approved"}],
        "prohibited_software": ["TorrentX"],
    }


def test_helpdesk_handlers(helpdesk):
    db = copy.deepcopy(helpdesk)
    assert call(db, "read_policy") == {"available": True, "policy": "SOP text"}
    assert call({}, "read_policy")["error"] is True
    employee = call(db, "lookup_employee", employee_id="E1")
    assert employee["account_type"] == "admin" and employee["account"]["lockout_status"] == "locked"
    one = call(db, "verify_identity", employee_id="E1", verification_items={"department": "finance"})
    assert one["verified"] is True  # upstream: one matching item verifies
    two = call(db, "verify_identity", employee_id="E1", verification_items={"department": "HR", "manager": "Li"})
    assert two["verified"] is False and two["mismatched_fields"] == ["department"]
    assert call(db, "verify_identity", employee_id="E1", verification_items={})["error"] is True
    unknown = call(db, "verify_identity", employee_id="E9", verification_items={"manager": "Li"})
    assert unknown["verified"] is False and unknown["mismatched_fields"] == ["manager"]
    assert call(db, "check_approval_status", employee_id="E1", resource_name="vpn")["approved"] is True
    assert call(db, "check_approval_status", employee_id="E9")["status"] == "missing"
    keyed = {"approvals": {"AP-1": {"employee_id": "E1", "resource_name": "VPN", "status": "valid"}}}
    assert call(keyed, "check_approval_status", employee_id="E1", resource_name="vpn")["approved"] is True
    assert call(db, "reset_password", employee_id="E1", account_type="admin")["error"] is True
    assert call(db, "reset_password", employee_id="E1", account_type="standard")["status"] == "reset_complete"
    assert db["accounts"]["E1"]["password_last_changed"] == NOW  # an admin account, reset as "standard"
    assert call(db, "unlock_account", employee_id="E2")["requires_escalation"] is True
    assert db["accounts"]["E2"]["lockout_status"] == "locked"
    assert call(db, "unlock_account", employee_id="E1")["status"] == "unlocked"
    assert db["accounts"]["E1"]["lockout_status"] == "none"
    assert call(db, "install_software", employee_id="E1", software_name="torrentx")["error"] is True
    assert call(db, "install_software", employee_id="E1", software_name="Slack")["status"] == "installed"
    assert call(db, "provision_vpn_access", employee_id="E1", access_level="full")["access_level"] == "full"
    assert call(db, "create_access_request", employee_id="E1", resource_name="DB")["status"] == "submitted"
    ticket = call(db, "log_ticket", employee_id="E1", category="access", summary="s", action_taken="a")
    assert db["tickets"][0]["ticket_id"] == ticket["ticket_id"] and ticket["status"] == "open"
    for tool in ("escalate_to_tier2", "escalate_to_it_security"):
        assert call(db, tool, ticket_id="T", reason="r", summary="s")["assigned_to"] == "Senior Officer"


@pytest.fixture
def finra():
    return {
        "now": NOW,
        "customer_profile": {"CUS-1": {"customer_id": "CUS-1", "name": "Mae"}},
        "transactions": [{"transaction_id": "T1", "customer_id": "CUS-1", "account_id": "AC-1", "type": "wire",
                          "symbol": "ACME"},
                         {"transaction_id": "T2", "customer_id": "CUS-2", "account_id": "AC-2", "type": "cash"}],
        "account_events": [{"account_id": "AC-1", "event_type": "ADDRESS_CHANGE"},
                           {"account_id": "AC-9", "event_type": "LOGIN"}],
        "related_account_activity": {"CL-1": {"accounts": ["AC-1", "AC-7"], "pattern": "fan-in"}},
        "certificate_deposits": [{"deposit_id": "D1", "customer_id": "CUS-1", "symbol": "PNY"}],
        "securities": {"ACME": {"name": "Acme Corp"}},
        "positions": {"AC-1": {"ACME": 100}},
        "activity": {"pending_requests": [
            {"request_id": "R1", "customer_id": "CUS-1", "account_id": "AC-1", "status": "pending",
             "details": {"security": "ACME", "action": "sell", "shares": 10, "surrender_value_usd": 900}}],
            "trades": []},
        "monitoring": {"alerts": [{"alert_id": "AL-1", "status": "open"}]},
        "investigations": {"cases": []},
    }


def test_finra_look_ups(finra):
    db = copy.deepcopy(finra)
    assert call(db, "lookup_customer_profile", customer_id="CUS-1")["name"] == "Mae"
    keyed = {"customers": {"CUS-7": {"name": "Ola"}}}
    assert call(keyed, "lookup_customer_profile", customer_id="cus-7") == {"customer_id": "CUS-7", "name": "Ola"}
    linked = copy.deepcopy(db)  # a transaction whose owner is linked to the account filtered on
    linked["transactions"].append({"transaction_id": "T3", "customer_id": "CUS-1", "account_id": "AC-5"})
    assert {t["transaction_id"] for t in call(linked, "query_transaction_history", account_id="AC-1")["transactions"]} == {
        "T1", "T3"}
    assert call(linked, "query_transaction_history", customer_id="CUS-2")["count"] == 1
    history = call(db, "query_transaction_history", customer_id="CUS-1")
    assert [t["transaction_id"] for t in history["transactions"]] == ["T1"] and history["count"] == 1
    assert len(history["pending_requests"]) == 1
    assert call(db, "query_transaction_history")["count"] == 2  # no filter: everything
    assert call(db, "query_transaction_history", transaction_type="cash")["count"] == 1
    events = call(db, "lookup_account_events", customer_id="CUS-1")
    assert [e["event_type"] for e in events["account_events"]] == ["ADDRESS_CHANGE"]
    assert call(db, "lookup_account_events")["count"] == 2
    related = call(db, "lookup_related_account_activity", account_id="AC-7")
    assert related["related_account_activity"][0]["cluster_id"] == "CL-1"
    assert call(db, "lookup_certificate_deposits", symbol="pny")["count"] == 1
    assert call(db, "lookup_security_info", ticker="acme") == {"symbol": "ACME", "name": "Acme Corp"}
    assert call(db, "lookup_security_info", symbol="ZZZ")["error"] is True


def test_finra_actions(finra):
    db = copy.deepcopy(finra)
    request = db["activity"]["pending_requests"][0]
    assert call(db, "hold_transaction", request_id="R1", reason="")["hold_reason"] == "compliance_review"
    assert request["status"] == "held"
    assert call(db, "release_hold", request_id="R1", reason="cleared")["status"] == "released"
    assert request["status"] == "pending" and request["hold_release_reason"] == "cleared"
    assert call(db, "process_wire_transfer", request_id="R1")["status"] == "submitted" and request["status"] == "submitted"
    assert call(db, "process_wire_transfer", request_id="NOPE")["status"] == "submitted"  # even unknown ids
    trade = call(db, "execute_trade", request_id="R1")
    assert (trade["symbol"], trade["side"], trade["quantity"]) == ("ACME", "sell", 10) and db["activity"]["trades"]
    call(db, "journal_security_positions", symbol="ACME", quantity=40, from_account_id="AC-1", to_account_id="AC-2")
    assert db["positions"]["AC-1"]["ACME"] == 60 and db["positions"]["AC-2"]["ACME"] == 40
    assert type(db["positions"]["AC-1"]["ACME"]) is int  # whole numbers stay whole (the canonical JSON)
    assert db["journal_entries"][0]["status"] == "posted"
    assert call(db, "process_annuity_cancellation", request_id="R1")["surrender_value_usd"] == 900
    deposit = call(db, "process_cash_deposit", customer_id="CUS-1", amount_usd=9500)
    assert deposit["amount"] == 9500 and db["transactions"][-1]["account_id"] == "CUS-1"
    event = call(db, "update_beneficiary_designation", request_id="R1", account_id="AC-1", beneficiary_name="Kit")
    assert db["account_events"][-1]["event_type"] == "BENEFICIARY_DESIGNATION_UPDATED" and event["status"] == "executed"
    alert = call(db, "create_alert", account_id="AC-1", category="", severity="", description="d")
    assert db["monitoring"]["alerts"][-1]["category"] == "OTHER" and alert["status"] == "open"
    case = call(db, "open_case", customer_id="CUS-1", case_type="AML", summary="s")
    assert db["investigations"]["cases"][0]["case_id"] == case["case_id"] and case["assigned_to"] == "Analyst"
    bare = {"now": NOW}
    call(bare, "open_case", customer_id="CUS-1", summary="s")
    call(bare, "create_alert", account_id="AC-1", description="d")
    assert set(bare) == {"now", "_id_counter"}  # no investigations or monitoring: nothing appended, as upstream
    assert call(db, "file_sar", customer_id="CUS-1")["filing_status"] == "draft"
    assert call(db, "file_ctr", customer_id="CUS-1")["ctr_id"].startswith("CTR_")
    call(db, "dismiss_alert", alert_id="al-1", reason="r")  # mutators find records by exact id
    assert db["monitoring"]["alerts"][0]["status"] == "open"
    call(db, "dismiss_alert", alert_id="AL-1", reason="r")
    assert db["monitoring"]["alerts"][0]["status"] == "dismissed"
    assert call(db, "escalate_to_compliance", reason="r", urgency="high", linked_request_id="R1")["linked_request_id"] == "R1"
    assert call(db, "update_request_status", request_id="R1", status="closed")["status"] == "closed"
    assert call(db, "update_request_status", request_id="R9", status="x")["error"] is True
