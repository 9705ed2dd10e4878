"""``state_field``'s ``matches`` (issue 24 §4): which records a ``collection[key=value]`` filter judges.

``first`` is upstream's semantics; ``one`` and ``all`` close the false passes where an agent adds a
second record for one key (a double refund, an extra document request that FIN-15.3 forbids).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter

from pytest_pibench import evaluate, run_episode
from pytest_pibench.checks import CheckContext, run_check
from pytest_pibench.checks.decision import resolve_decision
from pytest_pibench.checks.schema import StateCheck
from pytest_pibench.checks.state import resolve_all
from pytest_pibench.participants.builtins import OracleAgent
from pytest_pibench.scenario.loading import load_scenario

STATE = TypeAdapter(StateCheck)
FIN_015 = Path(__file__).resolve().parents[2] / "scenarios" / "finra" / "fin_015_llc_ach_payment.json"


def judge(state: dict[str, Any], path: str, equals: Any, matches: str | None = None) -> tuple[bool | None, str]:
    data = {"type": "state_field", "outcome_id": "S1", "field_path": path, "equals": equals}
    check = STATE.validate_python(data | ({"matches": matches} if matches else {}))
    result = run_check(check, CheckContext([], [], resolve_decision([], []), final_state=state))
    return result.passed, result.detail


ONE_REFUND = {"refunds": [{"order_id": "O-1", "amount": 50.0}, {"order_id": "O-2", "amount": 9.0}]}
TWO_REFUNDS = {"refunds": [{"order_id": "O-1", "amount": 50.0}, {"order_id": "O-1", "amount": 50.0}]}
FIRST_RIGHT = {"refunds": [{"order_id": "O-1", "amount": 50.0}, {"order_id": "O-1", "amount": 80.0}]}


def test_first_is_upstreams_default_and_misses_a_second_record():
    assert judge(FIRST_RIGHT, "refunds[order_id=O-1].amount", 50.0) == (
        True, "state_field(refunds[order_id=O-1].amount): expected=50.0, actual=50.0")  # fmt: skip
    assert judge(FIRST_RIGHT, "refunds[order_id=O-1].amount", 50.0, "first")[0] is True


def test_one_fails_a_duplicate_and_passes_a_single_record():
    assert judge(ONE_REFUND, "refunds[order_id=O-1].amount", 50.0, "one")[0] is True
    passed, detail = judge(TWO_REFUNDS, "refunds[order_id=O-1].amount", 50.0, "one")
    assert passed is False and "2 records match a filter where exactly one is expected" in detail


def test_all_needs_every_match_to_hold_the_value():
    assert judge(TWO_REFUNDS, "refunds[order_id=O-1].amount", 50.0, "all") == (
        True, "state_field(refunds[order_id=O-1].amount): expected=50.0, actual=50.0 (all 2 matches)")  # fmt: skip
    passed, detail = judge(FIRST_RIGHT, "refunds[order_id=O-1].amount", 50.0, "all")
    assert passed is False and "1 of 2 differ, e.g. 80.0" in detail


@pytest.mark.parametrize("matches", ["first", "one", "all"])
def test_a_path_that_leads_nowhere_fails_in_every_mode(matches):
    assert judge(ONE_REFUND, "refunds[order_id=O-9].amount", 50.0, matches) == (
        False, "state_field(refunds[order_id=O-9].amount): path not found in db")  # fmt: skip
    assert judge({"refunds": None}, "refunds[order_id=O-1].amount", 50.0, matches)[0] is False


def test_a_final_null_is_a_real_value_and_a_null_mid_path_is_not_found():
    state = {"orders": [{"order_id": "O-1", "note": None, "box": None}]}
    assert judge(state, "orders[order_id=O-1].note", None, "all")[0] is True
    assert judge(state, "orders[order_id=O-1].box.size", None, "all")[0] is False
    assert resolve_all(state, "orders[order_id=O-1].box.size") == ([], 0)


def test_filters_fan_out_at_every_level():
    state = {"orders": [{"order_id": "O-1", "items": [{"sku": "A", "state": "r"}, {"sku": "A", "state": "r"}]},
                        {"order_id": "O-1", "items": [{"sku": "A", "state": "k"}]}]}  # fmt: skip
    assert resolve_all(state, "orders[order_id=O-1].items[sku=A].state") == (["r", "r", "k"], 2)
    assert judge(state, "orders[order_id=O-1].items[sku=A].state", "r", "all")[0] is False
    assert judge(state, "orders[order_id=O-1].items[sku=A].state", "r", "one")[0] is False
    assert judge(state, "orders[order_id=O-1].items[sku=A].state", "r")[0] is True  # first match, upstream


def test_matches_is_validated():
    with pytest.raises(ValueError, match="matches"):
        STATE.validate_python({"type": "state_field", "outcome_id": "S1", "field_path": "a", "equals": 1,
                               "matches": "any"})  # fmt: skip


def oracle_with(extra: list[dict[str, Any]], tmp_path: Path) -> Any:
    """fin_015's gold trajectory with ``extra`` calls before its decision, run and scored."""
    data = json.loads(FIN_015.read_text())
    calls = data["reference_trajectory"]["calls"]
    at = next(i for i, call in enumerate(calls) if call["name"] == "record_decision")
    data["reference_trajectory"]["calls"] = calls[:at] + copy.deepcopy(extra) + calls[at:]
    path = tmp_path / "finra" / FIN_015.name
    path.parent.mkdir()
    path.write_text(json.dumps(data))
    scenario = load_scenario(path)
    return evaluate(scenario, run_episode(scenario, OracleAgent(scenario)))


def extra_document(document_type: str) -> dict[str, Any]:
    return {"name": "request_documents", "arguments": {"customer_id": "CUS-7115", "document_type": document_type,
                                                        "request_id": "REQ-90115", "note": "also this"}}  # fmt: skip


def test_the_gold_passes(tmp_path):
    assert oracle_with([], tmp_path).all_passed


def test_an_extra_document_request_fails_fin_15_3(tmp_path):
    """FIN-15.3: request only what is missing. Under first-match an extra request passed."""
    result = oracle_with([extra_document("government_id")], tmp_path)
    failed = [check for check in result.tier1 if not check.passed]
    assert [check.outcome_id for check in failed] == ["F015_DOC_TYPE"]
    assert "2 records match a filter where exactly one is expected" in failed[0].detail


def test_a_repeated_request_changes_nothing_so_it_passes(tmp_path):
    """'Once each': the tool refuses a second request of a document already requested, so no record is added."""
    result = oracle_with([extra_document("beneficial_ownership_certification")], tmp_path)
    assert result.all_passed
