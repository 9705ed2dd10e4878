"""A third-party check type registered from outside the package works end to end.

It loads in a scenario (no model rebuilt), is exported in the JSON Schema, gets
the tool rules of binding from its declared tool roles, runs in an episode, is
scored in its declared dimension, and, once unregistered, is an unknown type again.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterator
from typing import Any, Literal

import pytest

from pytest_pibench import bind_scenario, evaluate, json_schema, load_scenario, run_one
from pytest_pibench.checks import CheckContext, CheckModel, CheckType, Outcome, register_check, unregister_check
from pytest_pibench.scenario.loading import ScenarioError


class ToolCalledAtMostCheck(CheckModel):
    """Passes iff ``tool_name`` was called at most ``max_times`` times."""

    type: Literal["tool_called_at_most"]
    tool_name: str
    max_times: int


def tool_called_at_most(check: ToolCalledAtMostCheck, context: CheckContext) -> Outcome:
    count = sum(1 for e in context.trace if e.tool_name == check.tool_name)
    return count <= check.max_times, f"tool_called_at_most({check.tool_name}, max={check.max_times}): actual={count}"


AT_MOST = CheckType(
    model=ToolCalledAtMostCheck,
    evaluate=tool_called_at_most,
    dimension="permissibility",
    tools={"tool_name": "named"},
)


@pytest.fixture
def at_most() -> Iterator[CheckType[ToolCalledAtMostCheck]]:
    yield register_check(AT_MOST)
    unregister_check("tool_called_at_most")


def with_at_most(data: dict[str, Any], tool: str = "lookup_item") -> dict[str, Any]:
    check = {"outcome_id": "X1", "type": "tool_called_at_most", "tool_name": tool, "max_times": 1}
    data["evaluation_criteria"]["policy_checks"].append(check)
    return data


def test_a_registered_type_loads_runs_and_scores_in_its_dimension(at_most, toy_data, write_scenario):
    path = write_scenario(with_at_most(toy_data))
    scenario = load_scenario(path)
    check = scenario.evaluation_criteria.policy_checks[-1]
    assert isinstance(check, ToolCalledAtMostCheck) and check.max_times == 1

    row = run_one(path, "oracle")  # a real episode: bound, run and scored
    assert row["all_passed"] is True
    assert {"outcome_id": "X1", "type": "tool_called_at_most", "passed": True, "tier": 1, "dimension": "permissibility",
            "detail": "tool_called_at_most(lookup_item, max=1): actual=1"} in row["outcome_checks"]

    transcript = json.loads(json.dumps(row["transcript"]))  # one more look-up: over the limit
    transcript["trace"].insert(0, {**transcript["trace"][0], "step_index": -1})
    result = evaluate(scenario, transcript)
    failed = [r.to_dict() for r in result.outcome_results if r.passed is False]
    assert failed == [{"outcome_id": "X1", "type": "tool_called_at_most", "passed": False,
                       "detail": "tool_called_at_most(lookup_item, max=1): actual=2"}]
    assert result.all_passed is False
    assert result.dimensions()["permissibility"]["failed_checks"] == failed
    assert result.event_flags["V_r"] is True


def test_its_tool_is_checked_against_the_domain(at_most, toy_data, write_scenario):
    scenario = load_scenario(write_scenario(with_at_most(toy_data, tool="teleport_item")))
    with pytest.raises(ScenarioError) as info:
        bind_scenario(scenario)
    ((where, message),) = info.value.problems
    assert where == "evaluation_criteria.policy_checks[5]"
    assert message.startswith("check X1 names tool 'teleport_item', which domain 'toyshop' does not have (domain ")
    assert "domains/toyshop" in message and "--pibench-domains" in message  # which pack it got, how to name another


def test_it_is_in_the_json_schema_only_while_registered(at_most):
    assert '"const": "tool_called_at_most"' in json.dumps(json_schema())
    unregister_check("tool_called_at_most")
    try:
        assert '"const": "tool_called_at_most"' not in json.dumps(json_schema())
    finally:
        register_check(AT_MOST)


def test_once_unregistered_it_is_an_unknown_check_type(at_most, toy_data, write_scenario):
    path = write_scenario(with_at_most(toy_data))
    assert load_scenario(path).scenario_id == "TOY_001_ITEM_REFUND"
    unregister_check("tool_called_at_most")
    try:
        with pytest.raises(ScenarioError) as info:
            load_scenario(path)
    finally:
        register_check(AT_MOST)
    (where, message), = info.value.problems
    assert where == "evaluation_criteria.policy_checks[5]"
    assert message.startswith("unknown check type 'tool_called_at_most'; expected one of tool_called, ")


@pytest.mark.slow
def test_a_conftest_registers_a_type_for_a_pytest_run(toy_project):
    """The documented way: register in conftest.py (each xdist worker imports it too)."""
    toy_project.makeconftest(textwrap.dedent('''
        from typing import Literal
        from pytest_pibench.checks import CheckModel, CheckType, register_check

        class NoEscalation(CheckModel):
            type: Literal["never_escalated"]

        def never_escalated(check, context):
            ok = all(e.tool_name != "escalate" for e in context.trace)
            return ok, f"never_escalated={ok}"

        register_check(CheckType(NoEscalation, never_escalated, dimension="permissibility", tools={}))
    '''))
    path = toy_project.path / "scenarios" / "toyshop" / "toy_001_item_refund.json"
    data = json.loads(path.read_text())
    data["evaluation_criteria"]["policy_checks"].append({"outcome_id": "X2", "type": "never_escalated"})
    path.write_text(json.dumps(data))
    result = toy_project.runpytest_subprocess("scenarios", "--pibench-agent=oracle", "-k", "ALLOW", "-n", "2")
    assert result.ret == 0, result.stdout.str()
    rows = json.loads((toy_project.path / "pibench-results.json").read_text())["rows"]
    (row,) = rows
    assert {"outcome_id": "X2", "type": "never_escalated", "passed": True, "tier": 1, "dimension": "permissibility",
            "detail": "never_escalated=True"} in row["outcome_checks"]
