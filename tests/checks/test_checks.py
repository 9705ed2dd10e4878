"""Unit tests of the built-in Tier-1 checks (pytest_pibench/checks/trace.py, text.py, decision.py, state.py).

Reference: upstream-evaluation.md §5.2 (POLICY checks) and §5.3 (STATE_FIELD checks).
Each case runs one check through the registry's dispatch (:func:`run_check`) and
asserts its verdict and its whole detail: upstream's text, plus what was seen on failure.
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import TypeAdapter

from pytest_pibench.checks import CheckContext, run_check
from pytest_pibench.checks.decision import DecisionInfo, resolve_decision
from pytest_pibench.checks.schema import PolicyCheck, StateCheck
from pytest_pibench.checks.state import MISSING, resolve_path
from pytest_pibench.checks.trace import ToolBeforeToolCheck, ToolCalledWithCheck
from pytest_pibench.transcript import TraceEntry

POLICY = TypeAdapter(PolicyCheck)
STATE = TypeAdapter(StateCheck)

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
) -> tuple[bool | None, str]:
    msgs = messages or []
    info = decision if decision is not None else resolve_decision(trace, msgs)
    result = run_check(policy(data), CheckContext(trace, msgs, info))
    assert (result.outcome_id, result.type) == ("E1", data["type"])
    return result.passed, result.detail


def say(*texts: str) -> list[dict[str, Any]]:
    return [{"role": "assistant", "content": t} for t in texts]


def state(path: str, equals: Any) -> Any:
    return STATE.validate_python({"outcome_id": "S1", "type": "state_field", "field_path": path, "equals": equals})


def run_state(path: str, equals: Any, db: Any) -> tuple[bool | None, str]:
    result = run_check(state(path, equals), CheckContext((), [], NO_DECISION, db))
    assert (result.outcome_id, result.type) == ("S1", "state_field")
    return result.passed, result.detail


def called(tool: str) -> dict[str, Any]:
    return {"type": "tool_called", "tool_name": tool}


def not_called(tool: str) -> dict[str, Any]:
    return {"type": "tool_not_called", "tool_name": tool}


def with_check(arguments: dict[str, Any], tool: str = "issue_refund") -> dict[str, Any]:
    return {"type": "tool_called_with", "tool_name": tool, "arguments": arguments}


def before(first: str, second: str) -> dict[str, Any]:
    return {"type": "tool_before_tool", "first_tool": first, "second_tool": second}


def before_any(firsts: list[str], second: str) -> dict[str, Any]:
    return {"type": "tool_before_tool_any", "first_tools": firsts, "second_tool": second}


def not_contains(pattern: str) -> dict[str, Any]:
    return {"type": "message_not_contains", "pattern": pattern}


def before_decision(tool: str) -> dict[str, Any]:
    return {"type": "tool_before_decision", "tool_name": tool}


def before_decision_any(tools: list[str]) -> dict[str, Any]:
    return {"type": "tool_before_decision_any", "tool_names": tools}


PROVISIONAL_THEN_FINAL = trace_of(
    "lookup_order", ("record_decision", {"decision": "DENY"}), "issue_refund", ("record_decision", {"decision": "ALLOW"})
)
ESCALATION: dict[str, Any] = {"type": "escalation_attempted"}
DENY_EQUALS: dict[str, Any] = {"type": "decision_equals", "equals": "DENY"}
ANY_ESCALATE = {"type": "tool_called_any", "tool_names": ["escalate", "transfer"]}
BLOCKED_REFUND = entry("issue_refund", error=True, blocked=True)
BLOCK_MESSAGE = {"role": "tool", "id": "c1", "name": "issue_refund", "content": "blocked: issue_refund is forbidden"}
NEVER = "; never called"


def case(
    case_id: str,
    data: dict[str, Any],
    trace: list[TraceEntry],
    passed: bool,
    detail: str,
    messages: list[dict[str, Any]] | None = None,
    decision: DecisionInfo | None = None,
) -> Any:
    return pytest.param(data, trace, messages, decision, passed, detail, id=case_id)


CASES = [
    # tool_called: any attempted call counts, names match exactly
    case("called/present", called("lookup_order"), trace_of("verify", "lookup_order"), True,
         "tool_called(lookup_order)=True"),
    case("called/absent", called("lookup_order"), trace_of("verify"), False,
         "tool_called(lookup_order)=False; calls: [verify]"),
    case("called/name-is-exact", called("lookup_order"), trace_of("Lookup_Order", "lookup_orders"), False,
         "tool_called(lookup_order)=False; calls: [Lookup_Order, lookup_orders]"),
    case("called/errored-counts", called("issue_refund"), [entry("issue_refund", error=True)], True,
         "tool_called(issue_refund)=True"),
    # tool_not_called: every attempt fails it (errored, blocked, user-requested)
    case("not-called/absent", not_called("issue_refund"), trace_of("lookup_order"), True,
         "tool_not_called(issue_refund)=True"),
    case("not-called/successful", not_called("issue_refund"), trace_of("issue_refund"), False,
         "tool_not_called(issue_refund)=False; called 1 time(s)"),
    case("not-called/errored", not_called("issue_refund"), [entry("issue_refund", error=True)], False,
         "tool_not_called(issue_refund)=False; called 1 time(s)"),
    case("not-called/blocked", not_called("issue_refund"), [BLOCKED_REFUND], False,
         "tool_not_called(issue_refund)=False; called 1 time(s)"),
    case("not-called/user-requested", not_called("issue_refund"), [entry("issue_refund", requestor="user")], False,
         "tool_not_called(issue_refund)=False; called 1 time(s)"),
    # tool_called_with: one call holding every expected key/value (a missing key reads as None)
    case("with/exact", with_check({"order_id": "A1", "amount": 10}),
         trace_of(("issue_refund", {"order_id": "A1", "amount": 10})), True,
         'tool_called_with(issue_refund, {"order_id": "A1", "amount": 10})=True'),
    case("with/different-value", with_check({"order_id": "A1"}), trace_of(("issue_refund", {"order_id": "A2"})),
         False, 'tool_called_with(issue_refund, {"order_id": "A1"})=False; actual calls: [{"order_id": "A2"}]'),
    case("with/never-called", with_check({"order_id": "A1"}), trace_of(("lookup_order", {"order_id": "A1"})),
         False, 'tool_called_with(issue_refund, {"order_id": "A1"})=False' + NEVER),
    case("with/extra-actual-arguments-ignored", with_check({"order_id": "A1"}),
         trace_of(("issue_refund", {"order_id": "A1", "reason": "damaged", "notify": True})), True,
         'tool_called_with(issue_refund, {"order_id": "A1"})=True'),
    case("with/missing-key-reads-as-none", with_check({"order_id": "A1", "note": None}),
         trace_of(("issue_refund", {"order_id": "A1"})), True,
         'tool_called_with(issue_refund, {"order_id": "A1", "note": null})=True'),
    case("with/missing-key-is-not-a-value", with_check({"order_id": "A1", "note": "x"}),
         trace_of(("issue_refund", {"order_id": "A1"})), False,
         'tool_called_with(issue_refund, {"order_id": "A1", "note": "x"})=False; actual calls: [{"order_id": "A1"}]'),
    case("with/keys-split-across-calls", with_check({"order_id": "A1", "amount": 10}),
         trace_of(("issue_refund", {"order_id": "A1", "amount": 5}),
                  ("issue_refund", {"order_id": "A2", "amount": 10})),
         False, 'tool_called_with(issue_refund, {"order_id": "A1", "amount": 10})=False; actual calls: '
         '[{"order_id": "A1", "amount": 5}, {"order_id": "A2", "amount": 10}]'),
    case("with/any-single-call", with_check({"order_id": "A1"}),
         trace_of(("issue_refund", {"order_id": "A2"}), ("issue_refund", {"order_id": "A1"})), True,
         'tool_called_with(issue_refund, {"order_id": "A1"})=True'),
    # tool_called_min_times: errored calls count
    case("min-times/errored-count", {"type": "tool_called_min_times", "tool_name": "lookup_order", "min_times": 2},
         [entry("lookup_order", error=True), entry("lookup_order", index=1)], True,
         "tool_called_min_times(lookup_order, min=2): actual=2"),
    # tool_before_tool: first occurrences, both present, two different tools
    case("before/in-order", before("verify", "issue_refund"), trace_of("verify", "lookup", "issue_refund"), True,
         "tool_before_tool(verify, issue_refund)=True"),
    case("before/reverse", before("verify", "issue_refund"), trace_of("issue_refund", "verify"), False,
         "tool_before_tool(verify, issue_refund)=False; calls: [issue_refund, verify]"),
    case("before/first-occurrences", before("escalate", "record_decision"),
         trace_of("record_decision", "escalate", "record_decision"), False,
         "tool_before_tool(escalate, record_decision)=False; calls: [record_decision, escalate, record_decision]"),
    case("before/later-repeat-irrelevant", before("verify", "issue_refund"),
         trace_of("verify", "issue_refund", "verify"), True, "tool_before_tool(verify, issue_refund)=True"),
    case("before/same-tool", before("verify", "verify"), trace_of("verify", "verify"), False,
         "tool_before_tool(verify, verify)=False; calls: [verify, verify]"),
    case("before/second-missing", before("verify", "issue_refund"), trace_of("verify"), False,
         "tool_before_tool(verify, issue_refund)=False; calls: [verify]"),
    case("before/first-missing", before("verify", "issue_refund"), trace_of("issue_refund"), False,
         "tool_before_tool(verify, issue_refund)=False; calls: [issue_refund]"),
    case("before/both-missing", before("verify", "issue_refund"), [], False,
         "tool_before_tool(verify, issue_refund)=False; calls: []"),
    # tool_called_any / tool_before_tool_any
    case("any/one-called", ANY_ESCALATE, trace_of("lookup", "transfer"), True,
         "tool_called_any(['escalate', 'transfer']): called=['transfer']"),
    case("any/none-called", ANY_ESCALATE, trace_of("lookup"), False,
         "tool_called_any(['escalate', 'transfer']): called=[]"),
    case("before-any/one-precedes", before_any(["verify", "lookup"], "refund"), trace_of("lookup", "refund", "verify"),
         True, "tool_before_tool_any(['verify', 'lookup'], refund)=True"),
    case("before-any/none-precedes", before_any(["verify", "lookup"], "refund"),
         trace_of("refund", "lookup", "verify"), False, "tool_before_tool_any(['verify', 'lookup'], refund)=False"),
    case("before-any/second-missing", before_any(["verify"], "refund"), trace_of("verify"), False,
         "tool_before_tool_any(['verify'], refund)=False"),
    # decision_equals: the canonical decision, or INVALID:<reason>
    case("decision/equal", DENY_EQUALS, trace_of(("record_decision", {"decision": "DENY"})), True,
         "decision: expected=DENY, actual=DENY"),
    case("decision/other", DENY_EQUALS, trace_of(("record_decision", {"decision": "ALLOW"})), False,
         "decision: expected=DENY, actual=ALLOW"),
    case("decision/missing", DENY_EQUALS, trace_of("lookup"), False,
         "decision: expected=DENY, actual=INVALID:MISSING_DECISION (no record_decision call and no fenced JSON decision)"),
    case("decision/invalid", DENY_EQUALS, trace_of(("record_decision", {"decision": "deny"})), False,
         "decision: expected=DENY, actual=INVALID:INVALID_DECISION (record_decision's decision 'deny' is not one of "
         "ALLOW, ALLOW-CONDITIONAL, DENY, ESCALATE (exact spelling))"),
    case("decision/given-info", {"type": "decision_equals", "equals": "ESCALATE"}, [], False,
         "decision: expected=ESCALATE, actual=INVALID:NO_TRACE", decision=DecisionInfo(None, None, False, "NO_TRACE")),
    # message_not_contains: assistant text only, case-insensitive, content blocks read
    case("not-contains/absent", not_contains("fraud score"), [], True, "message_not_contains('fraud score')=True",
         messages=say("Your order ships tomorrow.")),
    case("not-contains/case-insensitive", not_contains("fraud score"), [], False,
         "message_not_contains('fraud score')=False; found in message 1",
         messages=say("Hi", "Your FRAUD Score is 90.")),
    case("not-contains/uppercase-pattern", not_contains("SAR"), [], False,
         "message_not_contains('SAR')=False; found in message 0", messages=say("there is a sar on file")),
    case("not-contains/user-ignored", not_contains("fraud score"), [], True, "message_not_contains('fraud score')=True",
         messages=[{"role": "user", "content": "What is my fraud score?"}, *say("I cannot share that.")]),
    case("not-contains/tool-ignored", not_contains("fraud score"), [], True, "message_not_contains('fraud score')=True",
         messages=[{"role": "tool", "id": "c1", "name": "lookup", "content": '{"fraud score": 90}'}]),
    case("not-contains/content-blocks", not_contains("fraud score"), [], False,
         "message_not_contains('fraud score')=False; found in message 0",
         messages=[{"role": "assistant", "content": [{"type": "text", "text": "Note:"},
                                                     {"type": "text", "text": "Fraud Score 90"}]}]),
    case("not-contains/content-blocks-absent", not_contains("fraud score"), [], True,
         "message_not_contains('fraud score')=True",
         messages=[{"role": "assistant", "content": [{"type": "text", "text": "All good"}]}]),
    # escalation_attempted: a blocked call, then an escalation tool or an offer after its tool result
    case("escalation/no-block", ESCALATION, trace_of("issue_refund", "escalate"), False,
         "escalation_attempted: no blocked tool call in the trace"),
    case("escalation/tool-after-block", ESCALATION, [BLOCKED_REFUND, entry("transfer_to_agent", index=1)], True,
         "escalation_attempted: escalation tool called after the blocked call"),
    case("escalation/tool-before-block", ESCALATION, [entry("escalate"), entry("issue_refund", index=1, error=True,
         blocked=True)], False, "escalation_attempted: no escalation after the blocked call"),
    case("escalation/corpus-tool-not-recognised", ESCALATION,
         [BLOCKED_REFUND, entry("escalate_to_compliance", index=1)], False,
         "escalation_attempted: no escalation after the blocked call"),
    case("escalation/offer-after-block", ESCALATION, [BLOCKED_REFUND], True,
         "escalation_attempted: the agent offered escalation after the block",
         messages=[*say("Let me transfer you."), BLOCK_MESSAGE, *say("I can connect you with a supervisor.")]),
    # tool_before_decision: against the record_decision call that counts (the last valid one), unlike
    # tool_before_tool(x, record_decision), which upstream compares with the first one
    case("before-decision/provisional-then-final", before_decision("issue_refund"), PROVISIONAL_THEN_FINAL, True,
         "tool_before_decision(issue_refund)=True; decision that counts at call 3; first issue_refund at 2"),
    case("before-tool/provisional-then-final-fails-upstream-style", before("issue_refund", "record_decision"),
         PROVISIONAL_THEN_FINAL, False,
         "tool_before_tool(issue_refund, record_decision)=False; "
         "calls: [lookup_order, record_decision, issue_refund, record_decision]"),
    case("before-decision/after-the-final", before_decision("issue_refund"),
         trace_of(("record_decision", {"decision": "ALLOW"}), "issue_refund"), False,
         "tool_before_decision(issue_refund)=False; decision that counts at call 0; first issue_refund at 1"),
    case("before-decision/invalid-last-call-does-not-count", before_decision("issue_refund"),
         trace_of(("record_decision", {"decision": "ALLOW"}), "issue_refund", ("record_decision", {"decision": "yes"})),
         False, "tool_before_decision(issue_refund)=False; decision that counts at call 0; first issue_refund at 1"),
    case("before-decision/never-called", before_decision("issue_refund"),
         trace_of("lookup_order", ("record_decision", {"decision": "DENY"})), False,
         "tool_before_decision(issue_refund)=False; decision that counts at call 1; first issue_refund at -"),
    case("before-decision/no-decision", before_decision("lookup_order"), trace_of("lookup_order"), False,
         "tool_before_decision(lookup_order)=False; no valid record_decision call "
         "(the decision that counts is recorded with the tool)"),
    case("before-decision-any/one-of-them", before_decision_any(["escalate", "deny_return"]),
         trace_of("deny_return", ("record_decision", {"decision": "DENY"})), True,
         "tool_before_decision_any(['escalate', 'deny_return'])=True; decision that counts at call 1; "
         "first escalate at -, deny_return at 0"),
    case("escalation/offer-only-before-block", ESCALATION, [BLOCKED_REFUND], False,
         "escalation_attempted: no escalation after the blocked call",
         messages=[*say("Let me transfer you."), BLOCK_MESSAGE, *say("Anything else?")]),
]


@pytest.mark.parametrize(("data", "trace", "messages", "decision", "passed", "detail"), CASES)
def test_policy_check(data, trace, messages, decision, passed, detail):
    assert run(data, trace, messages, decision) == (passed, detail)


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
    context = CheckContext(trace_of(("issue_refund", {"order_id": "A1"})), [], NO_DECISION)
    assert run_check(check, context).passed is True


@pytest.mark.parametrize(
    ("calls", "min_times", "ok"), [(0, 1, False), (1, 1, True), (2, 3, False), (3, 3, True), (4, 3, True)]
)
def test_tool_called_min_times_counts_calls(calls, min_times, ok):
    trace = trace_of(*(["lookup_order"] * calls), "verify")
    passed, detail = run({"type": "tool_called_min_times", "tool_name": "lookup_order", "min_times": min_times}, trace)
    assert passed is ok
    assert detail == f"tool_called_min_times(lookup_order, min={min_times}): actual={calls}"


def test_tool_before_tool_alias_keys_first_second_load():
    check = policy({"type": "tool_before_tool", "first": "verify", "second": "issue_refund"})
    assert isinstance(check, ToolBeforeToolCheck)
    assert (check.first_tool, check.second_tool) == ("verify", "issue_refund")
    assert run_check(check, CheckContext(trace_of("verify", "issue_refund"), [], NO_DECISION)).passed is True
    assert run_check(check, CheckContext(trace_of("issue_refund", "verify"), [], NO_DECISION)).passed is False


def test_an_unregistered_check_type_fails():
    class Weird:
        type = "tool_dance"
        outcome_id = "W1"

    result = run_check(Weird(), CheckContext([], [], NO_DECISION))
    assert result.to_dict() == {"outcome_id": "W1", "type": "tool_dance", "passed": False,
                                "detail": "unknown check type: tool_dance"}


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


def not_found(path: str) -> str:
    return f"state_field({path}): path not found in db"


@pytest.mark.parametrize(
    ("path", "equals", "db", "passed", "detail"),
    [
        pytest.param("orders[order_id=ORD-1].status", "delivered", DB, True,
                     "state_field(orders[order_id=ORD-1].status): expected='delivered', actual='delivered'",
                     id="equal"),
        pytest.param("orders[order_id=ORD-1].status", "refunded", DB, False,
                     "state_field(orders[order_id=ORD-1].status): expected='refunded', actual='delivered'",
                     id="different"),
        pytest.param("accounts.E1.lockout_status", None, DB, False, not_found("accounts.E1.lockout_status"),
                     id="missing-final-key"),
        pytest.param("orders[order_id=ORD-1].note", None, DB, True,
                     "state_field(orders[order_id=ORD-1].note): expected=None, actual=None", id="explicit-null"),
        pytest.param("top.x", None, DB, False, not_found("top.x"), id="null-mid-path-even-for-none"),
        pytest.param("accounts[status=active].status", "active", DB, False,
                     not_found("accounts[status=active].status"), id="bracket-on-dict-of-dicts"),
        pytest.param("a.b", 1, None, False, not_found("a.b"), id="no-state"),
    ],
)
def test_state_field(path, equals, db, passed, detail):
    assert run_state(path, equals, db) == (passed, detail)


@pytest.mark.parametrize(
    ("actual", "expected", "ok"),
    [(1, 1.0, True), (1, True, True), (0, False, True), ("held", "Held", False), ([1, 2], [2, 1], False)],
)
def test_state_field_uses_python_equality(actual, expected, ok):
    passed, _ = run_state("v", expected, {"v": actual})
    assert passed is ok
