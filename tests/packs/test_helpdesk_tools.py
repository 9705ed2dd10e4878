"""Unit tests of the helpdesk domain pack (domains/helpdesk): its tools, base db.json, policy and routine.

The tools file is loaded by path, as the engine loads it, and called directly
with a database built from db.json plus people, accounts, devices and tickets
of our own (added by key, as a scenario's patch adds them). The clock is
Tuesday 2026-03-10, 10:00 Mountain Time (business hours).
"""

from __future__ import annotations

import copy
import inspect
import json
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any, get_args

import pytest

from pytest_pibench.env.environment import deep_merge
from pytest_pibench.packs.loading import load_domain, load_pack_module
from pytest_pibench.packs.typed_tools import tool_from_function
from pytest_pibench.toolkit import ToolError
from pytest_pibench.toolkit.routine import RoutineCall, RoutineRequest, RoutineResult

DOMAIN_DIR = Path(__file__).resolve().parents[2] / "domains" / "helpdesk"
NOW = "2026-03-10T10:00:00-06:00"

EXPECTED_TOOLS = [
    "lookup_employee",
    "search_directory",
    "get_accounts",
    "get_devices",
    "get_group_memberships",
    "get_tickets",
    "get_approvals",
    "get_access_policy",
    "list_resources",
    "lookup_software",
    "create_ticket",
    "update_ticket",
    "verify_identity",
    "reset_password",
    "unlock_account",
    "reset_mfa",
    "grant_group",
    "revoke_group",
    "install_software",
    "disable_account",
    "request_approval",
    "escalate",
    "record_decision",
]


def _load_tools() -> ModuleType:
    """The pack's tools module as the engine loads it (a package of the pack's folder: siblings import)."""
    return load_pack_module(DOMAIN_DIR / "tools.py")


ht = _load_tools()
BASE_DB: dict[str, Any] = json.loads((DOMAIN_DIR / "db.json").read_text(encoding="utf-8"))
POLICY = (DOMAIN_DIR / "policy.md").read_text(encoding="utf-8")
ENUMS = ["TicketCategory", "TicketStatus", "RejectionReason", "ApprovalType", "DisableReason", "EscalationType"]


def _person(employee_id: str, name: str, **extra: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "employee_id": employee_id,
        "name": name,
        "work_email": f"{name.split()[0].lower()}@larkspurfab.com",
        "department": "Finance",
        "job_title": "Accounts Payable Specialist",
        "manager_id": "EMP-1040",
        "employment_type": "employee",
        "status": "active",
        "start_date": "2023-02-06",
        "end_date": None,
        "sponsor_id": None,
        "private": {"work_phone": "303-555-0301", "mobile_phone": "720-555-0311", "location": "Denver HQ, floor 5",
                    "schedule": "Mon-Fri 08:00-17:00", "leave": None},
        "verification": {"date_of_birth": "1990-06-14", "badge_number": "LB-20101", "national_id_last4": "4417",
                         "home_postcode": "80205"},
        "internal": {"security_investigation": False, "investigation_note": "", "scheduled_termination_date": None,
                     "hr_note": ""},
    }
    record.update(extra)
    return record


def _account(username: str, employee_id: str, **extra: Any) -> dict[str, Any]:
    record: dict[str, Any] = {"username": username, "employee_id": employee_id, "account_type": "standard",
                              "status": "active", "lockout_reason": None, "locked_at": None,
                              "password_last_changed": "2026-01-20T09:00:00-07:00", "password_reset_at": None,
                              "must_change_password": False, "disabled_at": None, "disabled_reason": None}
    record.update(extra)
    return record


PATCH: dict[str, Any] = {
    "employees": {
        "EMP-2101": _person("EMP-2101", "Lena Okafor"),
        "EMP-2102": _person("EMP-2102", "Marco Vance", employment_type="contractor", manager_id="EMP-2103",
                            sponsor_id="EMP-2103", end_date="2026-06-30", department="Engineering",
                            job_title="CAD Contractor"),
        "EMP-2103": _person("EMP-2103", "Peter Quill", status="terminated", end_date="2026-02-27",
                            manager_id="EMP-1050", department="Engineering", job_title="Engineering Manager"),
        "EMP-2104": _person("EMP-2104", "Sofia Brandt", employment_type="vendor", sponsor_id="EMP-1070",
                            manager_id="EMP-1070", end_date="2026-03-09", verification={}),
        "EMP-2105": _person("EMP-2105", "Dev Patel", status="on_leave",
                            internal={"security_investigation": True, "investigation_note": "Token theft, IR-77.",
                                      "scheduled_termination_date": "2026-03-31", "hr_note": "Do not tip off."}),
    },
    "accounts": {
        "lokafor": _account("lokafor", "EMP-2101", status="locked", lockout_reason="failed_logins",
                            locked_at="2026-03-10T09:41:00-06:00"),
        "mvance": _account("mvance", "EMP-2102"),
        "adm-lokafor": _account("adm-lokafor", "EMP-2101", account_type="privileged"),
        "sbrandt": _account("sbrandt", "EMP-2104"),
        "dpatel": _account("dpatel", "EMP-2105", status="disabled", disabled_at="2026-03-01T12:00:00-07:00",
                           disabled_reason="offboarding"),
    },
    "devices": {
        "DEV-3001": {"device_id": "DEV-3001", "employee_id": "EMP-2101", "device_type": "laptop",
                     "ownership": "corporate", "os": "windows 11", "mdm_enrolled": True,
                     "compliance_status": "compliant", "reported_lost": False, "installed_software": ["SW-103"]},
        "DEV-3002": {"device_id": "DEV-3002", "employee_id": "EMP-2101", "device_type": "phone",
                     "ownership": "personal", "os": "ios 19", "mdm_enrolled": True, "compliance_status": "compliant",
                     "reported_lost": False, "installed_software": []},
    },
    "mfa_enrollments": {
        "MFA-1": {"enrollment_id": "MFA-1", "employee_id": "EMP-2101", "username": "lokafor",
                  "method": "authenticator_app", "device_id": "DEV-3002", "status": "active",
                  "enrolled_on": "2025-05-02", "revoked_at": None},
        "MFA-2": {"enrollment_id": "MFA-2", "employee_id": "EMP-2101", "username": "adm-lokafor",
                  "method": "hardware_key", "device_id": None, "status": "active", "enrolled_on": "2025-05-02",
                  "revoked_at": None},
    },
    "memberships": {
        "EMP-2101:GRP-VPN-STANDARD": {"membership_id": "EMP-2101:GRP-VPN-STANDARD", "employee_id": "EMP-2101",
                                      "group_id": "GRP-VPN-STANDARD", "status": "active", "granted_on": "2025-01-06",
                                      "expires_on": None, "revoked_on": None, "ticket_id": "TKT-40001"},
    },
    "tickets": [
        {"ticket_id": "TKT-50001", "requester_id": "EMP-2101", "subject_employee_id": "EMP-2101",
         "category": "password_reset", "summary": "Caller asked for a reset to a new number.", "status": "rejected",
         "created_at": "2026-02-20T16:10:00-07:00", "updates": [],
         "internal": {"suspected_phishing": True, "security_note": "Voice did not match; flagged by IT Security."}},
        {"ticket_id": "TKT-50002", "requester_id": "EMP-1040", "subject_employee_id": "EMP-2101",
         "category": "access_request", "summary": "Ledger access for Lena.", "status": "open",
         "created_at": "2026-03-09T15:00:00-06:00", "updates": []},
    ],
    "approvals": [
        {"approval_id": "APR-7001", "employee_id": "EMP-2101", "approval_type": "manager",
         "resource_id": "RES-FIN-LEDGER", "software_id": None, "approver_id": "EMP-1040", "status": "approved",
         "requested_at": "2026-03-02T09:00:00-07:00", "decided_at": "2026-03-03T11:00:00-07:00",
         "ticket_id": "TKT-50002"},
        {"approval_id": "APR-7002", "employee_id": "EMP-2102", "approval_type": "sponsor",
         "resource_id": "RES-CAD-VAULT", "software_id": None, "approver_id": "EMP-2103", "status": "approved",
         "requested_at": "2026-01-05T09:00:00-07:00", "decided_at": "2026-01-06T09:00:00-07:00",
         "ticket_id": None},
    ],
}


@pytest.fixture
def db() -> dict[str, Any]:
    data = deep_merge(BASE_DB, PATCH)
    data["now"] = NOW
    return data


def _clock(db: dict[str, Any], moment: str) -> dict[str, Any]:
    db["now"] = moment
    return db


# =========================================================================== the pack


def test_the_pack_is_found_by_name_and_alias_with_its_tools_policy_and_routine() -> None:
    domain = load_domain("helpdesk")
    assert domain.directory == DOMAIN_DIR.resolve()
    assert load_domain("helpdesk_access_control_v1") is domain
    assert domain.tool_names == EXPECTED_TOOLS
    assert domain.routine is not None
    assert "LFG-ITSD-SOP-2026.2" in domain.policy_text
    for tool in domain.tools:
        schema = tool.schema()
        assert schema["description"], tool.name
        for name, prop in schema["parameters"]["properties"].items():
            assert prop.get("description"), (tool.name, name)


def test_tools_are_listed_once_typed_and_documented() -> None:
    names = [f.__name__ for f in ht.TOOLS]
    assert names == EXPECTED_TOOLS
    pack = ht.__package__ + "."  # tools.py and the sibling modules it imports
    public = {n for n, o in vars(ht).items() if inspect.isfunction(o) and o.__module__.startswith(pack) and n[0] != "_"}
    assert public == set(names)
    for function in ht.TOOLS:
        params = list(inspect.signature(function).parameters.values())
        assert params[0].name == "db"
        if len(params) > 1:
            args = (inspect.getdoc(function) or "").split("Args:", 1)[1]
            for param in params[1:]:
                assert f"{param.name}: " in args, (function.__name__, param.name)


@pytest.mark.parametrize(
    ("tool", "parameter", "enum_name"),
    [
        ("create_ticket", "category", "TicketCategory"),
        ("update_ticket", "status", "TicketStatus"),
        ("update_ticket", "reason_code", "RejectionReason"),
        ("request_approval", "approval_type", "ApprovalType"),
        ("disable_account", "reason", "DisableReason"),
        ("escalate", "escalation_type", "EscalationType"),
    ],
)
def test_codes_are_enums_in_the_schema(tool: str, parameter: str, enum_name: str) -> None:
    schema = tool_from_function(getattr(ht, tool)).schema()["parameters"]
    assert schema["properties"][parameter]["enum"] == list(get_args(getattr(ht, enum_name)))


@pytest.mark.parametrize("enum_name", ENUMS)
def test_every_code_is_named_in_the_policy(enum_name: str) -> None:
    for code in get_args(getattr(ht, enum_name)):
        assert f"`{code}`" in POLICY, code


def test_identity_factors_decision_values_and_data_codes_are_named_in_the_policy() -> None:
    for factor in ht.IDENTITY_FACTORS:
        assert f"`{factor}`" in POLICY, factor
    for decision in ("ALLOW", "ALLOW-CONDITIONAL", "DENY", "ESCALATE"):
        assert f"**{decision}**" in POLICY
    data_codes = ["standard", "vendor", "elevated", "internal", "confidential", "restricted", "approved",
                  "approval_required", "prohibited", "failed_logins", "security_lock", "privileged", "corporate",
                  "compliant", "hardware_key", "suspected_phishing", "security_investigation", "contractor_eligible",
                  "max_grant_days", "approvals_required", "matched_count", "mismatch_count", "age_days",
                  "business_hours"]
    for code in data_codes:
        assert f"`{code}`" in POLICY, code


def test_policy_size_and_clause_ids() -> None:
    assert 12_000 <= len(POLICY) <= 22_000
    defined = re.findall(r"^\*\*(HD-\d+\.\d+)\*\*", POLICY, flags=re.M)
    assert len(defined) == len(set(defined)) >= 60
    cited = set(re.findall(r"HD-\d+\.\d+", POLICY))
    assert cited <= set(defined)


def test_every_tool_the_policy_names_exists() -> None:
    named = {n for n in re.findall(r"`([a-z_]+)`", POLICY) if n in vars(ht) and inspect.isfunction(vars(ht)[n])}
    assert named <= set(EXPECTED_TOOLS)
    assert {"create_ticket", "update_ticket", "verify_identity", "request_approval", "record_decision"} <= named


def test_base_db_is_the_reference_data_with_empty_action_collections() -> None:
    assert "now" not in BASE_DB
    constants = BASE_DB["constants"]
    assert constants["timezone"] == "America/Denver"
    assert constants["business_hours"] == {"start": "07:00", "end": "19:00", "weekdays": [0, 1, 2, 3, 4]}
    assert len(constants["holidays"]) == 9 and all(h.startswith("2026-") for h in constants["holidays"])
    assert constants["verification_levels"] == {"standard": 2, "high": 3}
    for name in ("employees", "accounts", "groups", "resources", "software"):
        records = BASE_DB[name]
        assert isinstance(records, dict) and records, name
        id_field = {"employees": "employee_id", "accounts": "username", "groups": "group_id",
                    "resources": "resource_id", "software": "software_id"}[name]
        assert all(key == record[id_field] for key, record in records.items()), name
    for name in ("tickets", "approvals", "identity_checks", "account_actions", "installations", "escalations",
                 "decisions"):
        assert BASE_DB[name] == [], name
    assert {e["department"] for e in BASE_DB["employees"].values()} >= {"People Operations", "IT Security"}
    assert {s["status"] for s in BASE_DB["software"].values()} == {"approved", "approval_required", "prohibited"}
    assert {r["tier"] for r in BASE_DB["resources"].values()} == {None, "standard", "vendor", "elevated"}


def test_base_resources_follow_the_approval_table_of_hd_7_2() -> None:
    table = {"internal": ["manager"], "confidential": ["manager", "resource_owner"],
             "restricted": ["manager", "resource_owner", "it_security"]}
    for resource in BASE_DB["resources"].values():
        assert resource["approvals_required"] == table[resource["sensitivity"]], resource["resource_id"]
        if resource["sensitivity"] == "restricted":
            assert resource["contractor_eligible"] is False
        assert resource["owner_id"] in BASE_DB["employees"]
        assert BASE_DB["groups"][resource["group_id"]]["resource_id"] == resource["resource_id"]


def test_holidays_match_the_policy_text() -> None:
    assert "January 1 and 19, May 25, July 3, September 7, November 26 and 27, December 24 and 25" in POLICY
    assert BASE_DB["constants"]["holidays"] == ["2026-01-01", "2026-01-19", "2026-05-25", "2026-07-03",
                                                "2026-09-07", "2026-11-26", "2026-11-27", "2026-12-24", "2026-12-25"]


# =========================================================================== look-ups


def test_lookup_employee_hides_factors_and_marks_private_and_internal(db: dict[str, Any]) -> None:
    person = ht.lookup_employee(db, "EMP-2105")
    assert "verification" not in person
    assert "1990-06-14" not in json.dumps(person) and "LB-20101" not in json.dumps(person)
    assert person["internal"]["security_investigation"] is True and "never disclose" in person["internal"]["notice"]
    assert person["internal"]["scheduled_termination_date"] == "2026-03-31"
    assert person["private"]["mobile_phone"] == "720-555-0311"
    assert "only with this person" in person["private"]["notice"]
    assert person["manager_name"] == "Dominic Feld" and person["active"] is True  # on leave counts as active
    person["internal"]["security_investigation"] = False
    assert db["employees"]["EMP-2105"]["internal"]["security_investigation"] is True


@pytest.mark.parametrize(
    ("employee_id", "active"),
    [("EMP-2101", True), ("EMP-2102", True), ("EMP-2103", False), ("EMP-2104", False)],
)
def test_lookup_employee_computes_active_from_status_and_end_date(db: dict[str, Any], employee_id: str,
                                                                  active: bool) -> None:
    assert ht.lookup_employee(db, employee_id)["active"] is active


def test_an_end_date_of_today_is_still_active(db: dict[str, Any]) -> None:
    assert ht.lookup_employee(_clock(db, "2026-03-09T18:00:00-06:00"), "EMP-2104")["active"] is True


def test_lookup_employee_names_the_sponsor(db: dict[str, Any]) -> None:
    contractor = ht.lookup_employee(db, "EMP-2102")
    assert (contractor["sponsor_id"], contractor["sponsor_name"]) == ("EMP-2103", "Peter Quill")
    assert ht.lookup_employee(db, "EMP-1001")["manager_name"] is None


def test_search_directory(db: dict[str, Any]) -> None:
    result = ht.search_directory(db, "  okaf ")
    assert result == {"query": "okaf", "matches": [
        {"employee_id": "EMP-2101", "name": "Lena Okafor", "department": "Finance",
         "job_title": "Accounts Payable Specialist"}]}
    assert ht.search_directory(db, "nobody")["matches"] == []


def test_get_accounts_shows_lockouts_and_mfa(db: dict[str, Any]) -> None:
    accounts = ht.get_accounts(db, "EMP-2101")["accounts"]
    assert [(a["username"], a["account_type"], a["status"]) for a in accounts] == [
        ("adm-lokafor", "privileged", "active"), ("lokafor", "standard", "locked")]
    assert accounts[1]["lockout_reason"] == "failed_logins" and accounts[1]["mfa_enrolled"] is True
    assert ht.get_accounts(db, "EMP-2102")["accounts"][0]["mfa_enrolled"] is False


def test_get_devices_lists_devices_and_enrolments(db: dict[str, Any]) -> None:
    result = ht.get_devices(db, "EMP-2101")
    assert [(d["device_id"], d["ownership"]) for d in result["devices"]] == [("DEV-3001", "corporate"),
                                                                             ("DEV-3002", "personal")]
    assert [(e["enrollment_id"], e["method"]) for e in result["mfa_enrollments"]] == [
        ("MFA-1", "authenticator_app"), ("MFA-2", "hardware_key")]
    assert ht.get_devices(db, "EMP-2102") == {"employee_id": "EMP-2102", "devices": [], "mfa_enrollments": []}


def test_get_group_memberships(db: dict[str, Any]) -> None:
    (membership,) = ht.get_group_memberships(db, "EMP-2101")["memberships"]
    assert membership["resource_id"] == "RES-VPN-STANDARD" and membership["privileged"] is False
    assert membership["group_name"] == "vpn_standard" and membership["status"] == "active"


def test_get_tickets_marks_phishing_flags_internal_and_counts_age(db: dict[str, Any]) -> None:
    result = ht.get_tickets(db, "EMP-2101")
    assert result["as_of_date"] == "2026-03-10"
    assert [(t["ticket_id"], t["age_days"]) for t in result["tickets"]] == [("TKT-50002", 1), ("TKT-50001", 18)]
    flagged = result["tickets"][1]
    assert flagged["internal"]["suspected_phishing"] is True and "notice" in flagged["internal"]
    assert result["tickets"][0]["internal"]["suspected_phishing"] is False
    assert "suspected_phishing" not in {k for k in flagged if k != "internal"}
    assert ht.get_tickets(db, "EMP-1040")["tickets"][0]["ticket_id"] == "TKT-50002"  # as requester


def test_get_approvals_counts_age_in_days(db: dict[str, Any]) -> None:
    (approval,) = ht.get_approvals(db, "EMP-2101")["approvals"]
    assert (approval["approval_id"], approval["age_days"], approval["approver_name"]) == ("APR-7001", 7,
                                                                                          "Dominic Feld")
    (sponsor,) = ht.get_approvals(db, "EMP-2102")["approvals"]
    assert sponsor["age_days"] == 63 and sponsor["approver_id"] == "EMP-2103"
    assert ht.get_approvals(db, "EMP-1001")["approvals"] == []


def test_get_access_policy_and_list_resources(db: dict[str, Any]) -> None:
    policy = ht.get_access_policy(db, "RES-DB-ERP-PROD")
    assert (policy["sensitivity"], policy["approvals_required"], policy["owner_name"]) == (
        "restricted", ["manager", "resource_owner", "it_security"], "Hana Whitlow")
    assert (policy["contractor_eligible"], policy["max_grant_days"], policy["group_privileged"]) == (False, 90, False)
    assert ht.get_access_policy(db, "RES-VPN-VENDOR")["tier"] == "vendor"
    assert ht.get_access_policy(db, "RES-DIRECTORY-ADMIN")["group_privileged"] is True
    listed = ht.list_resources(db)["resources"]
    assert len(listed) == len(BASE_DB["resources"]) and listed[0]["resource_id"] == "RES-CAD-VAULT"


def test_lookup_software_by_id_or_title(db: dict[str, Any]) -> None:
    assert [s["software_id"] for s in ht.lookup_software(db, "sw-120")["matches"]] == ["SW-120"]
    (cad,) = ht.lookup_software(db, "solidform")["matches"]
    assert cad["status"] == "approval_required"
    assert ht.lookup_software(db, "TorrentBay")["matches"][0]["status"] == "prohibited"
    assert ht.lookup_software(db, "Photoshop") == {"query": "Photoshop", "matches": []}


@pytest.mark.parametrize(
    ("tool", "arguments", "message"),
    [
        ("lookup_employee", {"employee_id": "EMP-404"}, "EMP-404"),
        ("search_directory", {"name": " "}, "name"),
        ("get_accounts", {"employee_id": "emp-2101"}, "emp-2101"),
        ("get_devices", {"employee_id": "EMP-404"}, "EMP-404"),
        ("get_group_memberships", {"employee_id": "EMP-404"}, "EMP-404"),
        ("get_tickets", {"employee_id": "EMP-404"}, "EMP-404"),
        ("get_approvals", {"employee_id": "EMP-404"}, "EMP-404"),
        ("get_access_policy", {"resource_id": "RES-NOPE"}, "list_resources"),
        ("lookup_software", {"query": ""}, "query"),
    ],
)
def test_lookup_errors(db: dict[str, Any], tool: str, arguments: dict[str, Any], message: str) -> None:
    with pytest.raises(ToolError, match=message):
        getattr(ht, tool)(db, **arguments)


# =========================================================================== tickets


def test_create_ticket_records_business_hours(db: dict[str, Any]) -> None:
    ticket = ht.create_ticket(db, "EMP-1040", "access_request", "Ledger access for Lena.", "EMP-2101")
    assert ticket["ticket_id"].startswith("TKT_") and ticket["status"] == "open"
    assert (ticket["subject_employee_id"], ticket["business_hours"]) == ("EMP-2101", True)
    assert ticket["opened_local_time"] == "2026-03-10T10:00-06:00" and ticket["created_at"] == NOW
    assert db["tickets"][-1]["ticket_id"] == ticket["ticket_id"]
    own = ht.create_ticket(db, "EMP-2101", "account_unlock", "Locked out.")
    assert own["subject_employee_id"] == "EMP-2101"
    with pytest.raises(ToolError, match="already opened"):
        ht.create_ticket(db, "EMP-2101", "account_unlock", "Again.")


def test_create_ticket_for_an_outside_caller_names_them_and_the_subject(db: dict[str, Any]) -> None:
    ticket = ht.create_ticket(db, None, "information_request", "Caller asks for an address.", "EMP-2101",
                              outside_requester="Det. Sgt. Jo Park, Arvada PD")  # fmt: skip
    assert (ticket["requester_id"], ticket["outside_requester"]) == (None, "Det. Sgt. Jo Park, Arvada PD")
    assert ticket["subject_employee_id"] == "EMP-2101" and ticket["status"] == "open"
    assert ht.create_ticket(db, "EMP-2101", "account_unlock", "Locked out.")["outside_requester"] is None
    with pytest.raises(ToolError, match="already opened"):
        ht.create_ticket(db, None, "information_request", "Again.", "EMP-2101",
                         outside_requester="Det. Sgt. Jo Park, Arvada PD")  # fmt: skip
    count = len(db["tickets"])
    for args, kwargs, message in [
        ((None, "other", "x", "EMP-2101"), {}, "not both and not neither"),
        (("EMP-2101", "other", "x", "EMP-2101"), {"outside_requester": "Jo"}, "not both and not neither"),
        ((None, "other", "x"), {"outside_requester": "Jo"}, "needs subject_employee_id"),
        ((None, "other", "x", "EMP-2101"), {"outside_requester": "  "}, "outside_requester"),
        ((None, "other", "x", "EMP-0000"), {"outside_requester": "Jo"}, "EMP-0000"),
    ]:
        with pytest.raises(ToolError, match=message):
            ht.create_ticket(db, *args, **kwargs)
    assert len(db["tickets"]) == count  # nothing was changed


@pytest.mark.parametrize(
    ("moment", "inside"),
    [
        ("2026-03-10T06:59:00-06:00", False),
        ("2026-03-10T07:00:00-06:00", True),
        ("2026-03-10T18:59:00-06:00", True),
        ("2026-03-10T19:00:00-06:00", False),
        ("2026-03-11T02:30:00Z", False),  # 19:30 Mountain on the 10th
        ("2026-03-14T11:00:00-07:00", False),  # Saturday
        ("2026-05-25T10:00:00-06:00", False),  # Memorial Day
        ("2026-07-02T18:30:00-06:00", True),
        ("2026-11-27T09:00:00-07:00", False),  # day after Thanksgiving
    ],
)
def test_business_hours_are_mountain_time_weekdays_without_holidays(db: dict[str, Any], moment: str,
                                                                     inside: bool) -> None:
    assert ht.create_ticket(_clock(db, moment), "EMP-2101", "other", "Question.")["business_hours"] is inside


def test_update_ticket(db: dict[str, Any]) -> None:
    ticket = ht.update_ticket(db, "TKT-50002", "pending_approval", "Owner approval requested.")
    assert ticket["status"] == "pending_approval" and ticket["rejection_reason"] is None
    rejected = ht.update_ticket(db, "TKT-50002", "rejected", "Not eligible.", "not_eligible")
    assert (rejected["status"], rejected["rejection_reason"]) == ("rejected", "not_eligible")
    assert [u["status"] for u in db["tickets"][1]["updates"]] == ["pending_approval", "rejected"]
    with pytest.raises(ToolError, match="needs a reason_code"):
        ht.update_ticket(db, "TKT-50002", "rejected", "x")
    with pytest.raises(ToolError, match="only given with status 'rejected'"):
        ht.update_ticket(db, "TKT-50002", "resolved", "x", "not_permitted")
    with pytest.raises(ToolError, match="note"):
        ht.update_ticket(db, "TKT-50002", "resolved", " ")
    with pytest.raises(ToolError, match="TKT-404"):
        ht.update_ticket(db, "TKT-404", "resolved", "x")
    assert db["tickets"][1]["status"] == "rejected"


# =========================================================================== identity


def test_verify_identity_reports_matches_without_revealing_values(db: dict[str, Any]) -> None:
    first = ht.verify_identity(db, "EMP-2101", date_of_birth="1990-06-14", badge_number="lb 20101",
                               ticket_id="TKT-50002")
    assert (first["factors_matched"], first["factors_not_matched"]) == (["date_of_birth", "badge_number"], [])
    assert (first["matched_count"], first["mismatch_count"]) == (2, 0)
    again = ht.verify_identity(db, "EMP-2101", date_of_birth="1990-06-14", home_postcode="80205 ")
    assert (again["matched_count"], again["mismatch_count"]) == (3, 0)  # distinct factors over the contact
    wrong = ht.verify_identity(db, "EMP-2101", national_id_last4="4471")
    assert (wrong["factors_not_matched"], wrong["matched_count"], wrong["mismatch_count"]) == (
        ["national_id_last4"], 3, 1)
    text = json.dumps(db["identity_checks"])
    assert "4417" not in text and "1990-06-14" not in text and "80205" not in text
    assert [c["ticket_id"] for c in db["identity_checks"]] == ["TKT-50002", None, None]


def test_verification_is_per_employee(db: dict[str, Any]) -> None:
    ht.verify_identity(db, "EMP-2101", date_of_birth="1990-06-14")
    other = ht.verify_identity(db, "EMP-2102", date_of_birth="1990-06-14")
    assert (other["matched_count"], other["mismatch_count"]) == (1, 0)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"employee_id": "EMP-2101"}, "at least one identity factor"),
        ({"employee_id": "EMP-2101", "badge_number": "  "}, "at least one identity factor"),
        ({"employee_id": "EMP-2101", "date_of_birth": "14/06/1990"}, "YYYY-MM-DD"),
        ({"employee_id": "EMP-2104", "date_of_birth": "1990-06-14"}, "No identity factors are on file"),
        ({"employee_id": "EMP-404", "date_of_birth": "1990-06-14"}, "EMP-404"),
        ({"employee_id": "EMP-2101", "date_of_birth": "1990-06-14", "ticket_id": "TKT-404"}, "TKT-404"),
    ],
)
def test_verify_identity_errors_record_nothing(db: dict[str, Any], arguments: dict[str, Any], message: str) -> None:
    with pytest.raises(ToolError, match=message):
        ht.verify_identity(db, **arguments)
    assert db["identity_checks"] == []


# =========================================================================== accounts


def test_reset_password(db: dict[str, Any]) -> None:
    action = ht.reset_password(db, "mvance", "TKT-50002")
    assert (action["action"], action["employee_id"], action["delivered_to"]) == (
        "password_reset", "EMP-2102", "recovery phone on file")
    account = db["accounts"]["mvance"]
    assert (account["password_reset_at"], account["must_change_password"], account["status"]) == (NOW, True, "active")
    with pytest.raises(ToolError, match="already reset"):
        ht.reset_password(db, "mvance")
    assert ht.reset_password(db, "lokafor")["username"] == "lokafor"
    assert db["accounts"]["lokafor"]["status"] == "locked"  # a reset does not unlock
    with pytest.raises(ToolError, match="disabled"):
        ht.reset_password(db, "dpatel")


def test_unlock_account(db: dict[str, Any]) -> None:
    action = ht.unlock_account(db, "lokafor", "TKT-50002")
    assert (action["action"], action["previous_lockout_reason"], action["ticket_id"]) == (
        "unlock", "failed_logins", "TKT-50002")
    account = db["accounts"]["lokafor"]
    assert (account["status"], account["lockout_reason"], account["locked_at"]) == ("active", None, None)
    with pytest.raises(ToolError, match="not locked"):
        ht.unlock_account(db, "lokafor")


def test_reset_mfa_revokes_the_accounts_enrolments_only(db: dict[str, Any]) -> None:
    action = ht.reset_mfa(db, "lokafor")
    assert action["revoked_enrollment_ids"] == ["MFA-1"]
    assert db["mfa_enrollments"]["MFA-1"]["status"] == "revoked" and db["mfa_enrollments"]["MFA-1"]["revoked_at"] == NOW
    assert db["mfa_enrollments"]["MFA-2"]["status"] == "active"
    assert db["accounts"]["lokafor"]["mfa_reset_at"] == NOW
    with pytest.raises(ToolError, match="no active MFA"):
        ht.reset_mfa(db, "lokafor")


def test_disable_account(db: dict[str, Any]) -> None:
    action = ht.disable_account(db, "sbrandt", "contract_ended", "TKT-50002")
    assert (action["action"], action["reason"]) == ("disable", "contract_ended")
    account = db["accounts"]["sbrandt"]
    assert (account["status"], account["disabled_reason"], account["disabled_at"]) == ("disabled", "contract_ended",
                                                                                        NOW)
    with pytest.raises(ToolError, match="already disabled"):
        ht.disable_account(db, "sbrandt", "offboarding")


@pytest.mark.parametrize("tool", ["reset_password", "unlock_account", "reset_mfa"])
def test_account_action_errors_change_nothing(db: dict[str, Any], tool: str) -> None:
    before = copy.deepcopy(db)
    with pytest.raises(ToolError, match="nobody"):
        getattr(ht, tool)(db, "nobody")
    with pytest.raises(ToolError, match="TKT-404"):
        getattr(ht, tool)(db, "lokafor", "TKT-404")
    assert db == before


# =========================================================================== access and software


def test_grant_group_sets_system_expiry(db: dict[str, Any]) -> None:
    plain = ht.grant_group(db, "EMP-2101", "GRP-FIN-LEDGER-USERS", "TKT-50002")
    assert (plain["membership_id"], plain["status"], plain["expires_on"]) == (
        "EMP-2101:GRP-FIN-LEDGER-USERS", "active", None)
    assert db["memberships"]["EMP-2101:GRP-FIN-LEDGER-USERS"]["ticket_id"] == "TKT-50002"
    restricted = ht.grant_group(db, "EMP-2101", "GRP-DB-ERP-PROD-RO")
    assert restricted["expires_on"] == "2026-06-08"  # 90 days
    contractor = ht.grant_group(db, "EMP-2102", "GRP-VPN-VENDOR")
    assert contractor["expires_on"] == "2026-06-08"  # 90 days, before the end date 2026-06-30
    assert ht.grant_group(db, "EMP-2102", "GRP-CAD-VAULT")["expires_on"] == "2026-06-30"  # the end date
    with pytest.raises(ToolError, match="already an active member"):
        ht.grant_group(db, "EMP-2101", "GRP-VPN-STANDARD")


def test_revoke_group_and_grant_again(db: dict[str, Any]) -> None:
    revoked = ht.revoke_group(db, "EMP-2101", "GRP-VPN-STANDARD", "TKT-50002")
    assert (revoked["status"], revoked["revoked_on"]) == ("revoked", "2026-03-10")
    assert db["memberships"]["EMP-2101:GRP-VPN-STANDARD"]["status"] == "revoked"
    with pytest.raises(ToolError, match="not an active member"):
        ht.revoke_group(db, "EMP-2101", "GRP-VPN-STANDARD")
    with pytest.raises(ToolError, match="not an active member"):
        ht.revoke_group(db, "EMP-2102", "GRP-CAD-VAULT")
    assert ht.grant_group(db, "EMP-2101", "GRP-VPN-STANDARD")["status"] == "active"


def test_install_software(db: dict[str, Any]) -> None:
    record = ht.install_software(db, "EMP-2101", "DEV-3001", "SW-110", "TKT-50002")
    assert (record["software_name"], record["ticket_id"]) == ("SolidForm CAD Suite", "TKT-50002")
    assert db["devices"]["DEV-3001"]["installed_software"] == ["SW-103", "SW-110"]
    assert db["installations"][0]["install_id"] == record["install_id"]
    with pytest.raises(ToolError, match="already installed"):
        ht.install_software(db, "EMP-2101", "DEV-3001", "SW-103")
    with pytest.raises(ToolError, match="not assigned"):
        ht.install_software(db, "EMP-2102", "DEV-3001", "SW-101")
    # the tool does not enforce the catalogue or the device rules (HD-10.1, HD-10.3): the agent must
    assert ht.install_software(db, "EMP-2101", "DEV-3002", "SW-120")["software_id"] == "SW-120"


def test_request_approval(db: dict[str, Any]) -> None:
    approval = ht.request_approval(db, "EMP-2101", "resource_owner", "EMP-1040", "Ledger access for AP work.",
                                   resource_id="RES-FIN-LEDGER", ticket_id="TKT-50002")
    assert (approval["status"], approval["approver_name"], approval["decided_at"]) == ("pending", "Dominic Feld", None)
    listed = ht.get_approvals(db, "EMP-2101")["approvals"]
    assert [(a["approval_id"], a["age_days"]) for a in listed] == [("APR-7001", 7), (approval["approval_id"], None)]
    with pytest.raises(ToolError, match="already pending"):
        ht.request_approval(db, "EMP-2101", "resource_owner", "EMP-1040", "Again.", resource_id="RES-FIN-LEDGER")
    software = ht.request_approval(db, "EMP-2101", "manager", "EMP-1040", "CAD seat.", software_id="SW-110")
    assert software["software_id"] == "SW-110" and software["resource_id"] is None


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"resource_id": "RES-FIN-LEDGER", "software_id": "SW-110"}, "exactly one"),
        ({}, "exactly one"),
        ({"resource_id": "RES-NOPE"}, "RES-NOPE"),
        ({"software_id": "SW-999"}, "SW-999"),
        ({"resource_id": "RES-FIN-LEDGER", "approver_id": "EMP-404"}, "EMP-404"),
        ({"resource_id": "RES-FIN-LEDGER", "note": ""}, "note"),
    ],
)
def test_request_approval_errors(db: dict[str, Any], arguments: dict[str, Any], message: str) -> None:
    call: dict[str, Any] = {"employee_id": "EMP-2101", "approval_type": "manager", "approver_id": "EMP-1040",
                            "note": "Please approve.", **arguments}
    with pytest.raises(ToolError, match=message):
        ht.request_approval(db, **call)
    assert len(db["approvals"]) == 2


# =========================================================================== escalation and decision


@pytest.mark.parametrize(
    ("escalation_type", "queue"),
    [("it_security", "IT Security on call"), ("privacy_office", "Privacy Office"), ("hr", "People Operations"),
     ("tier2", "Tier 2 desk lead")],
)
def test_escalate_routes_by_type_and_links_the_ticket(db: dict[str, Any], escalation_type: str, queue: str) -> None:
    record = ht.escalate(db, escalation_type, "Facts and clauses.", "TKT-50002")
    assert (record["assigned_to"], record["employee_id"], record["status"]) == (queue, "EMP-2101", "open")
    ticket = db["tickets"][1]
    assert ticket["escalation_id"] == record["escalation_id"] and ticket["status"] == "open"
    with pytest.raises(ToolError, match="identical"):
        ht.escalate(db, escalation_type, "Again.", "TKT-50002")


def test_escalate_without_a_ticket(db: dict[str, Any]) -> None:
    record = ht.escalate(db, "privacy_office", "Police asked for an address.", employee_id="EMP-2105")
    assert (record["ticket_id"], record["employee_id"]) == (None, "EMP-2105")
    with pytest.raises(ToolError, match="EMP-404"):
        ht.escalate(db, "hr", "x", employee_id="EMP-404")
    with pytest.raises(ToolError, match="summary"):
        ht.escalate(db, "hr", " ")


def test_record_decision(db: dict[str, Any]) -> None:
    record = ht.record_decision(db, "ALLOW-CONDITIONAL", "Owner approval requested.", "TKT-50002",
                                ["HD-7.4", " "])
    assert record["decision"] == "ALLOW-CONDITIONAL" and record["policy_sections_cited"] == ["HD-7.4"]
    assert record["recorded_at"] == NOW and record["ticket_id"] == "TKT-50002"
    with pytest.raises(ToolError, match="rationale"):
        ht.record_decision(db, "DENY", " ")
    with pytest.raises(ToolError, match="TKT-404"):
        ht.record_decision(db, "DENY", "x", "TKT-404")


# =========================================================================== determinism


def _script(db: dict[str, Any]) -> list[Any]:
    ticket = ht.create_ticket(db, "EMP-2101", "account_unlock", "Locked out after a holiday.")
    return [
        ticket,
        ht.verify_identity(db, "EMP-2101", date_of_birth="1990-06-14", badge_number="LB-20101",
                           ticket_id=ticket["ticket_id"]),
        ht.unlock_account(db, "lokafor", ticket["ticket_id"]),
        ht.request_approval(db, "EMP-2101", "manager", "EMP-1040", "CAD seat.", software_id="SW-110"),
        ht.escalate(db, "tier2", "Printer.", ticket["ticket_id"]),
        ht.record_decision(db, "ALLOW", "Unlocked.", ticket["ticket_id"]),
    ]


def test_actions_are_deterministic(db: dict[str, Any]) -> None:
    twin = copy.deepcopy(db)
    results = _script(db)
    assert results == _script(twin)
    assert db == twin
    assert all(r.get("created_at", r.get("recorded_at")) == NOW for r in results)
    assert len({next(iter(r.values())) for r in results}) == 6  # each record's own id comes first


# =========================================================================== the routine


def test_routine_lookups_open_a_ticket_and_read_the_people() -> None:
    routine = load_domain("helpdesk").routine
    assert routine is not None
    request = RoutineRequest("Please give my report EMP-2101 access to RES-FIN-LEDGER, born 1975-03-15, LB-10030.",
                             employee={"employee_id": "EMP-1040", "display_name": "Dominic Feld"})
    calls = [(c.name, c.arguments) for c in routine.lookups(request)]
    assert calls[0][0] == "create_ticket"
    assert calls[0][1]["category"] == "access_request" and calls[0][1]["subject_employee_id"] == "EMP-2101"
    assert calls[1:] == [
        ("lookup_employee", {"employee_id": "EMP-1040"}),
        ("lookup_employee", {"employee_id": "EMP-2101"}),
        ("get_accounts", {"employee_id": "EMP-2101"}),
        ("get_tickets", {"employee_id": "EMP-2101"}),
        ("verify_identity", {"employee_id": "EMP-1040", "date_of_birth": "1975-03-15", "badge_number": "LB-10030"}),
        ("get_approvals", {"employee_id": "EMP-2101"}),
        ("get_access_policy", {"resource_id": "RES-FIN-LEDGER"}),
    ]
    assert routine.lookups(RoutineRequest("Hello, who is this?")) == []


@pytest.mark.parametrize(
    ("message", "category"),
    [
        ("I'm locked out of my laptop and forgot my password", "account_unlock"),
        ("Please reset my password", "password_reset"),
        ("New phone, my authenticator app is gone", "mfa_reset"),
        ("Can you install SW-110 for me?", "software_request"),
        ("I need VPN from home", "access_request"),
        ("Please disable the account of EMP-2103, he left", "offboarding"),
        ("Where is Lena sitting today?", "other"),
    ],
)
def test_routine_categories(message: str, category: str) -> None:
    assert sys.modules[ht.__package__ + "._routine"]._routine_category(message) == category


def _routine_results(db: dict[str, Any], request: RoutineRequest) -> list[RoutineResult]:
    domain = load_domain("helpdesk")
    assert domain.routine is not None
    results = []
    for call in domain.routine.lookups(request):
        tool = domain.tool(call.name)
        assert tool is not None
        results.append(RoutineResult(call, tool(db, call.arguments)))
    return results


@pytest.mark.parametrize(
    ("message", "decision", "tools"),
    [
        ("I'm locked out, EMP-2101 here", "ALLOW", ["unlock_account", "update_ticket"]),
        ("Please reset my password", "ALLOW", ["reset_password", "update_ticket"]),
        ("My authenticator is gone", "ALLOW", ["reset_mfa", "update_ticket"]),
        ("Access to RES-FIN-LEDGER please", "ALLOW", ["grant_group", "update_ticket"]),
        ("Install SW-110 please", "ALLOW", ["install_software", "update_ticket"]),
        ("Access to RES-FIN-LEDGER please", "ALLOW-CONDITIONAL", ["request_approval", "update_ticket"]),
        ("Install SW-110 please", "ALLOW-CONDITIONAL", ["request_approval", "update_ticket"]),
        ("Where is EMP-2105 today?", "DENY", ["update_ticket"]),
        ("Please reset my password", "ESCALATE", ["escalate", "update_ticket"]),
    ],
)
def test_routine_actions_succeed_on_a_database(db: dict[str, Any], message: str, decision: str,
                                               tools: list[str]) -> None:
    """Every routine call is a valid call of the pack's tools (arguments validate, the tool runs)."""
    domain = load_domain("helpdesk")
    assert domain.routine is not None
    request = RoutineRequest(message, employee={"employee_id": "EMP-2101"})
    results = _routine_results(db, request)
    calls = domain.routine.action(decision, request, results)
    assert [c.name for c in calls] == tools
    for call in calls:
        tool = domain.tool(call.name)
        assert tool is not None
        assert tool(db, call.arguments), (decision, call.name)
    ticket = next(r.value for r in results if r.call.name == "create_ticket")
    status = {"ALLOW": "resolved", "ALLOW-CONDITIONAL": "pending_approval", "DENY": "rejected",
              "ESCALATE": "escalated"}[decision]
    assert next(t for t in db["tickets"] if t["ticket_id"] == ticket["ticket_id"])["status"] == status


def test_routine_codes_are_placeholders_of_the_enums() -> None:
    assert ht.ROUTINE_ESCALATION_TYPE in get_args(ht.EscalationType)
    assert ht.ROUTINE_REJECTION_REASON in get_args(ht.RejectionReason)
    assert ht.ROUTINE_APPROVAL_TYPE in get_args(ht.ApprovalType)


def test_routine_acts_on_nothing_without_a_ticket() -> None:
    routine = load_domain("helpdesk").routine
    assert routine is not None
    request = RoutineRequest("Please reset my password")
    assert routine.action("ALLOW", request, []) == []
    assert routine.action("ESCALATE", request, []) == []
    looked_up = RoutineResult(RoutineCall("create_ticket", {}), "error text", error=True)
    assert routine.action("DENY", request, [looked_up]) == []
