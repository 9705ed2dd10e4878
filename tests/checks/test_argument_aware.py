"""Argument-aware checks (issue 24 §4): ``call_before_call`` and the ``match`` normaliser.

A look-up of the wrong record no longer satisfies an ordering; a name written in
another order or case satisfies a screening check as it satisfies the screening
tool; files without the new fields score exactly as upstream (§5.2).
"""

from __future__ import annotations

import itertools
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from pytest_pibench.checks import CheckContext, run_check
from pytest_pibench.checks.decision import resolve_decision
from pytest_pibench.checks.schema import PolicyCheck
from pytest_pibench.packs.loading import load_pack_module
from pytest_pibench.toolkit import normalize_name
from pytest_pibench.transcript import TraceEntry

POLICY = TypeAdapter(PolicyCheck)
FINRA_TOOLS = Path(__file__).resolve().parents[2] / "domains" / "finra" / "tools.py"


def trace_of(*calls: tuple[str, dict[str, Any]]) -> list[TraceEntry]:
    return [TraceEntry(i, name, dict(args), "{}", False, "assistant", False) for i, (name, args) in enumerate(calls)]


def run(data: dict[str, Any], trace: list[TraceEntry]) -> tuple[bool | None, str]:
    check = POLICY.validate_python({"outcome_id": "E1", **data})
    result = run_check(check, CheckContext(trace, [], resolve_decision(trace, [])))
    return result.passed, result.detail


REQUESTER = ("lookup_employee", {"employee_id": "EMP-1"})
MANAGER = ("lookup_employee", {"employee_id": "EMP-2"})
GRANT = ("grant_group", {"employee_id": "EMP-1", "group_id": "GRP-A"})
ORDER = {"type": "call_before_call", "first_tool": "lookup_employee", "first_arguments": {"employee_id": "EMP-1"},
         "second_tool": "grant_group"}


# -- call_before_call ---------------------------------------------------------------------------------


def test_a_wrong_record_look_up_does_not_satisfy_the_ordering():
    passed, detail = run(ORDER, trace_of(MANAGER, GRANT, REQUESTER))
    assert passed is False
    assert detail == (
        'call_before_call(lookup_employee({"employee_id": "EMP-1"}), grant_group)=False; '
        'first matching lookup_employee({"employee_id": "EMP-1"}) at 2, first matching grant_group at 1'
    )
    # upstream's tool_before_tool, on the same trace, is satisfied by the wrong record: the defect fixed here
    plain = {"type": "tool_before_tool", "first_tool": "lookup_employee", "second_tool": "grant_group"}
    assert run(plain, trace_of(MANAGER, GRANT, REQUESTER))[0] is True


def test_the_right_record_before_the_action_satisfies_it():
    assert run(ORDER, trace_of(MANAGER, REQUESTER, GRANT))[0] is True
    assert run(ORDER, trace_of(REQUESTER, MANAGER, GRANT, GRANT))[0] is True


@pytest.mark.parametrize(
    "calls",
    [
        (MANAGER, GRANT),  # the right record never read
        (REQUESTER,),  # nothing done: both sides must occur, as upstream's ordering
        (GRANT, REQUESTER, GRANT),  # the first action came before the read: a later one cannot repair it
    ],
)
def test_it_fails_unless_every_matching_second_call_follows_a_matching_first(calls):
    assert run(ORDER, trace_of(*calls))[0] is False


def test_second_arguments_select_the_action_the_read_decides():
    camera = ("lookup_product", {"sku": "CAM"})
    jacket = ("lookup_product", {"sku": "JKT"})
    refund_camera = ("issue_refund", {"item_ids": ["I-1"], "restocking_fee_percent": 10})
    refund_jacket = ("issue_refund", {"item_ids": ["I-2"], "restocking_fee_percent": 0})
    check = {"type": "call_before_call", "first_tool": "lookup_product", "first_arguments": {"sku": "CAM"},
             "second_tool": "issue_refund", "second_arguments": {"item_ids": ["I-1"]}}
    assert run(check, trace_of(jacket, refund_jacket, camera, refund_camera))[0] is True
    assert run(check, trace_of(jacket, refund_camera, camera, refund_jacket))[0] is False


def test_errored_and_blocked_calls_count_as_upstream_ordering_does():
    trace = [
        TraceEntry(0, *REQUESTER, "{}", True, "assistant", False),  # errored
        TraceEntry(1, *GRANT, "{}", False, "assistant", True),  # blocked
    ]
    assert run(ORDER, trace)[0] is True


def test_the_same_tool_on_two_records_can_be_ordered():
    check = {"type": "call_before_call", "first_tool": "lookup_employee", "first_arguments": {"employee_id": "EMP-1"},
             "second_tool": "lookup_employee", "second_arguments": {"employee_id": "EMP-2"}}
    assert run(check, trace_of(REQUESTER, MANAGER))[0] is True
    assert run(check, trace_of(MANAGER, REQUESTER))[0] is False


def test_without_any_arguments_it_is_refused_in_favour_of_tool_before_tool():
    with pytest.raises(ValidationError, match="use tool_before_tool"):
        POLICY.validate_python({"outcome_id": "E1", "type": "call_before_call", "first_tool": "a", "second_tool": "b"})


def test_tool_before_tool_is_unchanged_and_ignores_the_new_fields():
    """Absent fields = upstream's semantics; a tool_before_tool never reads first_arguments (kept as an extra key)."""
    plain = {"type": "tool_before_tool", "first_tool": "lookup_employee", "second_tool": "grant_group"}
    for calls in [(MANAGER, GRANT), (GRANT, REQUESTER), (REQUESTER, GRANT), (REQUESTER,)]:
        trace = trace_of(*calls)
        upstream = _upstream_before(trace, "lookup_employee", "grant_group")
        assert run(plain, trace)[0] is upstream
        assert run({**plain, "first_arguments": {"employee_id": "EMP-1"}}, trace)[0] is upstream
    assert run(plain, trace_of(MANAGER, GRANT))[1] == "tool_before_tool(lookup_employee, grant_group)=True"


# -- the "name" normaliser --------------------------------------------------------------------------------

SCREEN = {"type": "tool_called_with", "tool_name": "screen_watchlist", "arguments": {"name": "Kyaw Zaw Lin"},
          "match": {"name": "name"}}


@pytest.mark.parametrize("written", ["Kyaw Zaw Lin", "Lin, Kyaw Zaw", "LIN kyaw-zaw", "  kyaw  zaw  lin. "])
def test_a_name_in_another_order_case_or_punctuation_matches(written):
    passed, detail = run(SCREEN, trace_of(("screen_watchlist", {"name": written, "party_type": "individual"})))
    assert passed is True
    assert detail == 'tool_called_with(screen_watchlist, {"name": "Kyaw Zaw Lin"})=True; match: {"name": "name"}'


@pytest.mark.parametrize("written", ["Kyaw Lin", "Kyaw Zaw Linn", "Khin Myo Nwe", ""])
def test_a_different_name_does_not_match(written):
    assert run(SCREEN, trace_of(("screen_watchlist", {"name": written})))[0] is False


def test_without_match_names_compare_exactly_as_upstream():
    exact = {k: v for k, v in SCREEN.items() if k != "match"}
    assert run(exact, trace_of(("screen_watchlist", {"name": "Lin, Kyaw Zaw"})))[0] is False
    assert run(exact, trace_of(("screen_watchlist", {"name": "Kyaw Zaw Lin"})))[1] == (
        'tool_called_with(screen_watchlist, {"name": "Kyaw Zaw Lin"})=True'
    )


def test_arguments_the_match_does_not_name_stay_exact():
    check = {**SCREEN, "arguments": {"name": "Kestrel Maritime Holdings LLC", "party_type": "entity"}}
    firm = "Kestrel Maritime Holdings LLC"
    lower = "kestrel maritime holdings, llc"
    assert run(check, trace_of(("screen_watchlist", {"name": lower, "party_type": "entity"})))[0]
    assert not run(check, trace_of(("screen_watchlist", {"name": firm, "party_type": "Entity"})))[0]
    assert not run(check, trace_of(("screen_watchlist", {"party_type": "entity"})))[0]  # missing reads as None


def test_a_match_for_an_argument_the_check_does_not_name_is_refused():
    with pytest.raises(ValidationError, match="match names 'country'"):
        POLICY.validate_python({"outcome_id": "E1", **SCREEN, "match": {"country": "name"}})
    with pytest.raises(ValidationError):
        POLICY.validate_python({"outcome_id": "E1", **SCREEN, "match": {"name": "fuzzy"}})


def test_call_before_call_applies_the_normaliser_to_both_sides():
    check = {"type": "call_before_call", "first_tool": "screen_watchlist", "first_arguments": {"name": "Kyaw Zaw Lin"},
             "second_tool": "process_disbursement", "match": {"name": "name"}}
    trace = trace_of(("screen_watchlist", {"name": "Lin, Kyaw Zaw"}), ("process_disbursement", {}))
    assert run(check, trace)[0] is True


def test_the_check_and_the_screening_tool_share_one_normalisation():
    tools = load_pack_module(FINRA_TOOLS)
    screening = sys.modules[tools.screen_watchlist.__module__]  # the module the screening tool lives in
    assert screening.normalize_name is normalize_name
    assert normalize_name("Lin, Kyaw Zaw") == normalize_name("Kyaw Zaw Lin") == "kyaw lin zaw"
    assert normalize_name("Zoë  O'Brien") == normalize_name("o brien, ZOE") == "brien o zoe"


# -- equivalence with upstream for files without the new fields (§5.2) ------------------------------------------


def _upstream_called_with(trace: list[TraceEntry], tool: str, expected: dict[str, Any]) -> bool:
    return any(all(e.arguments.get(k) == v for k, v in expected.items()) for e in trace if e.tool_name == tool)


def _upstream_before(trace: list[TraceEntry], first: str, second: str) -> bool:
    names = [e.tool_name for e in trace]
    return first != second and first in names and second in names and names.index(first) < names.index(second)


VALUES = ["Kyaw Zaw Lin", "Lin, Kyaw Zaw", None, 10, 10.0, ["A", "B"], ["B", "A"], {"k": 1}]


@pytest.mark.parametrize("expected", [v for v in VALUES if v is not None] + [None])
def test_tool_called_with_without_match_is_upstreams_formula(expected):
    check = {"type": "tool_called_with", "tool_name": "t", "arguments": {"x": expected}}
    for a, b in itertools.product(VALUES, repeat=2):
        calls = [("t", {"x": a}), ("u", {"x": expected}), ("t", {} if b is None else {"x": b, "y": 1})]
        trace = trace_of(*calls)
        assert run(check, trace)[0] is _upstream_called_with(trace, "t", {"x": expected})


@pytest.mark.parametrize("order", list(itertools.permutations(["a", "b", "c", "a"], 3)))
def test_tool_before_tool_is_upstreams_formula(order):
    trace = trace_of(*[(name, {"id": i}) for i, name in enumerate(order)])
    for first, second in itertools.product("abc", repeat=2):
        check = {"type": "tool_before_tool", "first_tool": first, "second_tool": second}
        assert run(check, trace)[0] is _upstream_before(trace, first, second)
