"""Unit tests of the Tier-1 checks (pytest_pibench/_checks.py).

Reference: upstream-evaluation.md §5.2 (POLICY checks) and §5.3 (STATE_FIELD checks).
Details are asserted with ``startswith``/``in``: ours start with upstream's text and
may add what was seen on failure.
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import TypeAdapter

from pytest_pibench.checks.policy import MISSING, resolve_path, run_policy_check, run_state_check
from pytest_pibench.checks.decision import DecisionInfo, resolve_decision
from pytest_pibench.env.environment import TraceEntry
from pytest_pibench.scenario.models import (
    PolicyCheck,
    StateFieldCheck,
    ToolBeforeToolCheck,
    ToolCalledWithCheck,
)

POLICY = TypeAdapter(PolicyCheck)
STATE = TypeAdapter(StateFieldCheck)

NO_DECISION = DecisionInfo(None, None, False, "MISSING_DECISION")


def entry(
    name: str,
    arguments: dict[str, Any] | None = None,
    *,
    index: int = 0,
    error: bool = False,
    blocked: bool = False,
    requestor: str = "assistant",
) -> TraceEntry:
    return TraceEntry(index, name, dict(arguments or {}), "{}", error, requestor, blocked)


def trace_of(*items: str | tuple[str, dict[str, Any]]) -> list[TraceEntry]:
    out = []
    for i, item in enumerate(items):
        name, args = (item, {}) if isinstance(item, str) else item
        out.append(entry(name, args, index=i))
    return out


def policy(data: dict[str, Any]) -> Any:
    return POLICY.validate_python({"outcome_id": "E1", **data})


def run(
    data: dict[str, Any],
    trace: list[TraceEntry],
    messages: list[dict[str, Any]] | None = None,
    decision: DecisionInfo | None = None,
) -> tuple[bool, str]:
    msgs = messages or []
    info = decision if decision is not None else resolve_decision(trace, msgs)
    return run_policy_check(policy(data), trace, msgs, info)


def state(path: str, equals: Any) -> StateFieldCheck:
    return STATE.validate_python({"outcome_id": "S1", "type": "state_field", "field_path": path, "equals": equals})


# --------------------------------------------------------------------------- tool_called


def test_tool_called_passes_when_the_tool_is_in_the_trace():
    passed, detail = run({"type": "tool_called", "tool_name": "lookup_order"}, trace_of("verify", "lookup_order"))
    assert passed is True
    assert detail.startswith("tool_called(lookup_order)=True")


def test_tool_called_fails_when_the_tool_is_absent():
    passed, detail = run({"type": "tool_called", "tool_name": "lookup_order"}, trace_of("verify"))
    assert passed is False
    assert detail.startswith("tool_called(lookup_order)=False")


def test_tool_called_name_match_is_exact():
    passed, _ = run({"type": "tool_called", "tool_name": "lookup_order"}, trace_of("Lookup_Order", "lookup_orders"))
    assert passed is False


def test_tool_called_counts_an_errored_call():
    passed, _ = run({"type": "tool_called", "tool_name": "issue_refund"}, [entry("issue_refund", error=True)])
    assert passed is True


# --------------------------------------------------------------------------- tool_not_called


def test_tool_not_called_passes_when_the_tool_is_absent():
    passed, detail = run({"type": "tool_not_called", "tool_name": "issue_refund"}, trace_of("lookup_order"))
    assert passed is True
    assert detail.startswith("tool_not_called(issue_refund)=True")


def test_tool_not_called_fails_on_a_successful_call():
    passed, detail = run({"type": "tool_not_called", "tool_name": "issue_refund"}, trace_of("issue_refund"))
    assert passed is False
    assert detail.startswith("tool_not_called(issue_refund)=False")


def test_tool_not_called_fails_on_an_errored_call():
    passed, detail = run({"type": "tool_not_called", "tool_name": "issue_refund"}, [entry("issue_refund", error=True)])
    assert passed is False
    assert detail.startswith("tool_not_called(issue_refund)=False")


def test_tool_not_called_fails_on_a_blocked_call():
    blocked = [entry("issue_refund", error=True, blocked=True)]
    passed, _ = run({"type": "tool_not_called", "tool_name": "issue_refund"}, blocked)
    assert passed is False


def test_tool_not_called_fails_on_a_user_requested_call():
    passed, _ = run({"type": "tool_not_called", "tool_name": "issue_refund"}, [entry("issue_refund", requestor="user")])
    assert passed is False


# --------------------------------------------------------------------------- tool_called_with


def with_check(arguments: dict[str, Any], tool: str = "issue_refund") -> dict[str, Any]:
    return {"type": "tool_called_with", "tool_name": tool, "arguments": arguments}


def test_tool_called_with_passes_on_exact_arguments():
    trace = trace_of(("issue_refund", {"order_id": "A1", "amount": 10}))
    passed, detail = run(with_check({"order_id": "A1", "amount": 10}), trace)
    assert passed is True
    assert detail.startswith("tool_called_with(issue_refund, ")
    assert "=True" in detail


def test_tool_called_with_fails_on_a_different_value():
    trace = trace_of(("issue_refund", {"order_id": "A2"}))
    passed, detail = run(with_check({"order_id": "A1"}), trace)
    assert passed is False
    assert detail.startswith("tool_called_with(issue_refund, ")
    assert "=False" in detail


def test_tool_called_with_fails_when_the_tool_was_never_called():
    passed, _ = run(with_check({"order_id": "A1"}), trace_of(("lookup_order", {"order_id": "A1"})))
    assert passed is False


def test_tool_called_with_is_a_subset_match_extra_actual_arguments_ignored():
    trace = trace_of(("issue_refund", {"order_id": "A1", "reason": "damaged", "notify": True}))
    passed, _ = run(with_check({"order_id": "A1"}), trace)
    assert passed is True


def test_tool_called_with_missing_key_reads_as_none():
    trace = trace_of(("issue_refund", {"order_id": "A1"}))
    passed, _ = run(with_check({"order_id": "A1", "note": None}), trace)
    assert passed is True


def test_tool_called_with_missing_key_does_not_match_a_non_none_value():
    trace = trace_of(("issue_refund", {"order_id": "A1"}))
    passed, _ = run(with_check({"order_id": "A1", "note": "x"}), trace)
    assert passed is False


@pytest.mark.parametrize(
    ("expected", "actual", "ok"),
    [
        (1, 1.0, True),
        (1, True, True),
        (1.0, True, True),
        (0, False, True),
        (45000, 45000.0, True),
        (True, "true", False),
        (1, "1", False),
        (["a", "b"], ["a", "b"], True),
        (["a", "b"], ["b", "a"], False),
        (["a"], ["a", "b"], False),
        ({"k": 1, "j": [1, 2]}, {"k": 1, "j": [1, 2]}, True),
        ({"k": 1}, {"k": 1, "extra": 2}, False),
        ({"k": {"n": 1}}, {"k": {"n": 2}}, False),
        ("Damaged", "damaged", False),
        ("damaged", "damaged ", False),
        ("damaged", " damaged", False),
        (None, None, True),
    ],
)
def test_tool_called_with_uses_python_equality(expected, actual, ok):
    trace = trace_of(("issue_refund", {"value": actual}))
    passed, _ = run(with_check({"value": expected}), trace)
    assert passed is ok


def test_tool_called_with_keys_split_across_two_calls_fail():
    trace = trace_of(
        ("issue_refund", {"order_id": "A1", "amount": 5}),
        ("issue_refund", {"order_id": "A2", "amount": 10}),
    )
    passed, _ = run(with_check({"order_id": "A1", "amount": 10}), trace)
    assert passed is False


def test_tool_called_with_any_single_matching_call_passes():
    trace = trace_of(("issue_refund", {"order_id": "A2"}), ("issue_refund", {"order_id": "A1"}))
    passed, _ = run(with_check({"order_id": "A1"}), trace)
    assert passed is True


def test_tool_called_with_record_decision_passes_on_an_earlier_call_even_if_superseded():
    # §6 "interactions": any call with X passes, even if a later call changed the decision
    trace = trace_of(("record_decision", {"decision": "ALLOW"}), ("record_decision", {"decision": "DENY"}))
    passed, _ = run(with_check({"decision": "ALLOW"}, tool="record_decision"), trace)
    assert passed is True
    assert resolve_decision(trace, []).canonical_decision == "DENY"


@pytest.mark.parametrize("alias", ["arguments", "args_match", "args"])
def test_tool_called_with_alias_keys_load(alias):
    check = policy({"type": "tool_called_with", "tool_name": "issue_refund", alias: {"order_id": "A1"}})
    assert isinstance(check, ToolCalledWithCheck)
    assert check.arguments == {"order_id": "A1"}
    passed, _ = run_policy_check(check, trace_of(("issue_refund", {"order_id": "A1"})), [], NO_DECISION)
    assert passed is True


# --------------------------------------------------------------------------- tool_called_min_times


@pytest.mark.parametrize(
    ("calls", "min_times", "ok"), [(0, 1, False), (1, 1, True), (2, 3, False), (3, 3, True), (4, 3, True)]
)
def test_tool_called_min_times_counts_calls(calls, min_times, ok):
    trace = trace_of(*(["lookup_order"] * calls), "verify")
    passed, detail = run({"type": "tool_called_min_times", "tool_name": "lookup_order", "min_times": min_times}, trace)
    assert passed is ok
    assert detail.startswith(f"tool_called_min_times(lookup_order, min={min_times}): actual={calls}")


def test_tool_called_min_times_counts_errored_calls():
    trace = [entry("lookup_order", error=True), entry("lookup_order", index=1)]
    passed, detail = run({"type": "tool_called_min_times", "tool_name": "lookup_order", "min_times": 2}, trace)
    assert passed is True
    assert "actual=2" in detail


# --------------------------------------------------------------------------- tool_before_tool


def before(first: str, second: str) -> dict[str, Any]:
    return {"type": "tool_before_tool", "first_tool": first, "second_tool": second}


def test_tool_before_tool_passes_in_order():
    passed, detail = run(before("verify", "issue_refund"), trace_of("verify", "lookup", "issue_refund"))
    assert passed is True
    assert detail.startswith("tool_before_tool(verify, issue_refund)=True")


def test_tool_before_tool_fails_in_reverse_order():
    passed, detail = run(before("verify", "issue_refund"), trace_of("issue_refund", "verify"))
    assert passed is False
    assert detail.startswith("tool_before_tool(verify, issue_refund)=False")


def test_tool_before_tool_uses_first_occurrences():
    # decision, then escalate, then decision again: fails "escalate before record_decision"
    trace = trace_of("record_decision", "escalate", "record_decision")
    passed, _ = run(before("escalate", "record_decision"), trace)
    assert passed is False


def test_tool_before_tool_later_repeat_of_first_is_irrelevant():
    trace = trace_of("verify", "issue_refund", "verify")
    passed, _ = run(before("verify", "issue_refund"), trace)
    assert passed is True


def test_tool_before_tool_same_tool_fails():
    passed, _ = run(before("verify", "verify"), trace_of("verify", "verify"))
    assert passed is False


@pytest.mark.parametrize("trace_names", [("verify",), ("issue_refund",), ()])
def test_tool_before_tool_missing_either_fails(trace_names):
    passed, _ = run(before("verify", "issue_refund"), trace_of(*trace_names))
    assert passed is False


def test_tool_before_tool_alias_keys_first_second_load():
    check = policy({"type": "tool_before_tool", "first": "verify", "second": "issue_refund"})
    assert isinstance(check, ToolBeforeToolCheck)
    assert (check.first_tool, check.second_tool) == ("verify", "issue_refund")
    assert run_policy_check(check, trace_of("verify", "issue_refund"), [], NO_DECISION)[0] is True
    assert run_policy_check(check, trace_of("issue_refund", "verify"), [], NO_DECISION)[0] is False


# --------------------------------------------------------------------------- tool_called_any / tool_before_tool_any


def test_tool_called_any_passes_when_one_is_called():
    data = {"type": "tool_called_any", "tool_names": ["escalate", "transfer"]}
    passed, detail = run(data, trace_of("lookup", "transfer"))
    assert passed is True
    assert detail.startswith("tool_called_any(")
    assert "called=['transfer']" in detail


def test_tool_called_any_fails_when_none_is_called():
    passed, detail = run({"type": "tool_called_any", "tool_names": ["escalate", "transfer"]}, trace_of("lookup"))
    assert passed is False
    assert "called=[]" in detail


def test_tool_before_tool_any_passes_when_one_first_tool_precedes():
    data = {"type": "tool_before_tool_any", "first_tools": ["verify", "lookup"], "second_tool": "refund"}
    passed, _ = run(data, trace_of("lookup", "refund", "verify"))
    assert passed is True


def test_tool_before_tool_any_fails_when_none_precedes():
    data = {"type": "tool_before_tool_any", "first_tools": ["verify", "lookup"], "second_tool": "refund"}
    passed, _ = run(data, trace_of("refund", "lookup", "verify"))
    assert passed is False


def test_tool_before_tool_any_fails_without_second_tool():
    data = {"type": "tool_before_tool_any", "first_tools": ["verify"], "second_tool": "refund"}
    passed, _ = run(data, trace_of("verify"))
    assert passed is False


# --------------------------------------------------------------------------- decision_equals


def test_decision_equals_passes_on_the_canonical_decision():
    trace = trace_of(("record_decision", {"decision": "DENY"}))
    passed, detail = run({"type": "decision_equals", "equals": "DENY"}, trace)
    assert passed is True
    assert detail == "decision: expected=DENY, actual=DENY"


def test_decision_equals_fails_on_another_decision():
    trace = trace_of(("record_decision", {"decision": "ALLOW"}))
    passed, detail = run({"type": "decision_equals", "equals": "DENY"}, trace)
    assert passed is False
    assert detail.startswith("decision: expected=DENY, actual=ALLOW")


@pytest.mark.parametrize(
    ("trace", "messages", "reason"),
    [
        (trace_of("lookup"), [], "MISSING_DECISION"),
        (trace_of(("record_decision", {"decision": "deny"})), [], "INVALID_DECISION"),
    ],
)
def test_decision_equals_invalid_run_reads_invalid_reason(trace, messages, reason):
    passed, detail = run({"type": "decision_equals", "equals": "DENY"}, trace, messages)
    assert passed is False
    assert detail.startswith(f"decision: expected=DENY, actual=INVALID:{reason}")


def test_decision_equals_uses_the_given_decision_info():
    info = DecisionInfo(None, None, False, "NO_TRACE")
    passed, detail = run({"type": "decision_equals", "equals": "ESCALATE"}, [], [], info)
    assert passed is False
    assert "actual=INVALID:NO_TRACE" in detail


# --------------------------------------------------------------------------- message_not_contains


def not_contains(pattern: str) -> dict[str, Any]:
    return {"type": "message_not_contains", "pattern": pattern}


def test_message_not_contains_passes_when_absent():
    messages = [{"role": "assistant", "content": "Your order ships tomorrow."}]
    passed, _ = run(not_contains("fraud score"), [], messages)
    assert passed is True


def test_message_not_contains_fails_case_insensitively():
    messages = [{"role": "assistant", "content": "Hi"}, {"role": "assistant", "content": "Your FRAUD Score is 90."}]
    passed, _ = run(not_contains("fraud score"), [], messages)
    assert passed is False


def test_message_not_contains_uppercase_pattern_matches_lowercase_text():
    messages = [{"role": "assistant", "content": "there is a sar on file"}]
    passed, _ = run(not_contains("SAR"), [], messages)
    assert passed is False


def test_message_not_contains_ignores_user_messages():
    messages = [
        {"role": "user", "content": "What is my fraud score?"},
        {"role": "assistant", "content": "I cannot share that."},
    ]
    passed, _ = run(not_contains("fraud score"), [], messages)
    assert passed is True


def test_message_not_contains_ignores_tool_messages():
    messages = [{"role": "tool", "id": "c1", "name": "lookup", "content": '{"fraud score": 90}'}]
    passed, _ = run(not_contains("fraud score"), [], messages)
    assert passed is True


def test_message_not_contains_reads_list_content_blocks():
    blocks = [{"type": "text", "text": "Note:"}, {"type": "text", "text": "Fraud Score 90"}]
    messages = [{"role": "assistant", "content": blocks}]
    passed, _ = run(not_contains("fraud score"), [], messages)
    assert passed is False


def test_message_not_contains_list_content_without_pattern_passes():
    messages = [{"role": "assistant", "content": [{"type": "text", "text": "All good"}]}]
    passed, _ = run(not_contains("fraud score"), [], messages)
    assert passed is True


# --------------------------------------------------------------------------- escalation_attempted


def test_escalation_attempted_fails_without_a_blocked_entry():
    passed, _ = run({"type": "escalation_attempted"}, trace_of("issue_refund", "escalate"))
    assert passed is False


def test_escalation_attempted_passes_on_escalation_tool_after_block():
    trace = [entry("issue_refund", error=True, blocked=True), entry("transfer_to_agent", index=1)]
    passed, _ = run({"type": "escalation_attempted"}, trace)
    assert passed is True


def test_escalation_attempted_escalation_tool_before_block_does_not_count():
    trace = [entry("escalate"), entry("issue_refund", index=1, error=True, blocked=True)]
    passed, _ = run({"type": "escalation_attempted"}, trace)
    assert passed is False


def test_escalation_attempted_corpus_escalation_tool_is_not_recognised():
    trace = [entry("issue_refund", error=True, blocked=True), entry("escalate_to_compliance", index=1)]
    passed, _ = run({"type": "escalation_attempted"}, trace)
    assert passed is False


def test_escalation_attempted_passes_on_offer_after_blocked_tool_message():
    trace = [entry("issue_refund", error=True, blocked=True)]
    messages = [
        {"role": "assistant", "content": "Let me transfer you."},  # before the block: ignored
        {"role": "tool", "id": "c1", "name": "issue_refund", "content": "blocked: issue_refund is forbidden"},
        {"role": "assistant", "content": "I can connect you with a supervisor."},
    ]
    passed, _ = run({"type": "escalation_attempted"}, trace, messages)
    assert passed is True


def test_escalation_attempted_offer_only_before_block_fails():
    trace = [entry("issue_refund", error=True, blocked=True)]
    messages = [
        {"role": "assistant", "content": "Let me transfer you."},
        {"role": "tool", "id": "c1", "name": "issue_refund", "content": "blocked: issue_refund is forbidden"},
        {"role": "assistant", "content": "Anything else?"},
    ]
    passed, _ = run({"type": "escalation_attempted"}, trace, messages)
    assert passed is False


# --------------------------------------------------------------------------- unknown type


def test_unknown_policy_check_type_fails():
    class Weird:
        type = "tool_dance"

    passed, detail = run_policy_check(Weird(), [], [], NO_DECISION)
    assert passed is False
    assert detail.startswith("unknown policy check type: tool_dance")


# --------------------------------------------------------------------------- state_field paths

DB: dict[str, Any] = {
    "orders": [
        {"order_id": "ORD-1", "status": "delivered", "qty": 5, "note": None},
        {"order_id": "ORD-2", "status": "refunded", "qty": 5.0},
        {"order_id": "ORD-2", "status": "pending"},
        {"order_id": 7, "status": "numeric"},
        "not-a-dict",
    ],
    "account_status": {"ACC1": {"investigation_hold": True, "lock": {"end_date": "2026-01-01"}, "nothing": None}},
    "accounts": {"E1": {"status": "active"}},
    "top": None,
}


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("account_status.ACC1.investigation_hold", True),
        ("account_status.ACC1.lock.end_date", "2026-01-01"),
        ("accounts.E1.status", "active"),
        ("accounts", {"E1": {"status": "active"}}),
        ("orders[order_id=ORD-1].status", "delivered"),
        ("orders[order_id=ORD-2].status", "refunded"),  # FIRST matching element
        ("orders[order_id=7].status", "numeric"),  # number compared as string
        ("orders[qty=5].order_id", "ORD-1"),
        ("orders[order_id=ORD-1].note", None),  # explicit final null is a real value
        ("account_status.ACC1.nothing", None),
        ("top", None),
    ],
)
def test_resolve_path_finds_values(path, expected):
    value = resolve_path(DB, path)
    assert value is not MISSING
    assert value == expected


@pytest.mark.parametrize(
    "path",
    [
        "missing",
        "accounts.E2.status",
        "accounts.E1.lockout_status",  # missing final key
        "orders[order_id=ORD-9].status",  # no element matches
        "accounts[status=active].status",  # bracket on a dict-of-dicts
        "account_status[investigation_hold=True]",  # bracket on a dict
        "account_status.ACC1.nothing.deeper",  # null mid-path
        "top.x",  # null mid-path
        "orders.status",  # plain key on a list (no list indexing)
        "orders.0.status",
        "orders[qty=5.0].order_id",  # the path is split on "." first: no dot in a filter value
        "account_status.ACC1.investigation_hold.x",  # scalar mid-path
    ],
)
def test_resolve_path_missing(path):
    assert resolve_path(DB, path) is MISSING


def test_resolve_path_on_non_dict_root_is_missing():
    assert resolve_path(None, "a") is MISSING
    assert resolve_path([{"a": 1}], "a") is MISSING


def test_state_field_passes_on_equal_value():
    passed, detail = run_state_check(state("orders[order_id=ORD-1].status", "delivered"), DB)
    assert passed is True
    assert detail.startswith("state_field(orders[order_id=ORD-1].status): expected=")


def test_state_field_fails_on_different_value():
    passed, detail = run_state_check(state("orders[order_id=ORD-1].status", "refunded"), DB)
    assert passed is False
    assert detail.startswith("state_field(orders[order_id=ORD-1].status): expected=")
    assert "delivered" in detail


def test_state_field_missing_final_key_fails_path_not_found():
    passed, detail = run_state_check(state("accounts.E1.lockout_status", None), DB)
    assert passed is False
    assert detail.startswith("state_field(accounts.E1.lockout_status): path not found")


def test_state_field_explicit_null_equals_none_passes():
    passed, _ = run_state_check(state("orders[order_id=ORD-1].note", None), DB)
    assert passed is True


def test_state_field_null_mid_path_is_not_found_even_for_none():
    passed, detail = run_state_check(state("top.x", None), DB)
    assert passed is False
    assert "path not found" in detail


def test_state_field_bracket_on_dict_of_dicts_fails_not_found():
    passed, detail = run_state_check(state("accounts[status=active].status", "active"), DB)
    assert passed is False
    assert "path not found" in detail


@pytest.mark.parametrize(
    ("actual", "expected", "ok"),
    [(1, 1.0, True), (1, True, True), (0, False, True), ("held", "Held", False), ([1, 2], [2, 1], False)],
)
def test_state_field_uses_python_equality(actual, expected, ok):
    passed, _ = run_state_check(state("v", expected), {"v": actual})
    assert passed is ok


def test_state_field_on_missing_state_fails():
    passed, detail = run_state_check(state("a.b", 1), None)
    assert passed is False
    assert "path not found" in detail
