"""The validator's ordering-redundancy rule (issue 24 §4): an ordering check that can never fail alone."""

from __future__ import annotations

import pytest

from pytest_pibench import validate
from pytest_pibench.scenario.models import Scenario
from pytest_pibench.validation.ordering_rules import ordering_redundancy_problems

PLAIN = {"outcome_id": "E8", "type": "tool_before_tool", "first_tool": "lookup_item", "second_tool": "refund_item"}


def ordering(report) -> list[str]:
    return [p.message for p in report.problems if p.rule == "ordering"]


def test_the_toy_scenario_has_no_redundant_ordering(toy_data, write_scenario):
    assert ordering(validate(write_scenario(toy_data))) == []


def test_a_duplicate_ordering_pair_is_reported(toy_data, write_scenario):
    toy_data["evaluation_criteria"]["policy_checks"].append(PLAIN)
    report = validate(write_scenario(toy_data))
    assert ordering(report) == [
        "policy_checks[5] E8 duplicates policy_checks[2] E3 (lookup_item before refund_item): the two pass and fail "
        "together; make each argument-aware (call_before_call) for the record it means, or drop one"
    ]
    assert not report.ok


def test_an_ordering_implied_by_an_argument_aware_one_is_reported(toy_data, write_scenario):
    toy_data["evaluation_criteria"]["policy_checks"].append(
        {**PLAIN, "type": "call_before_call", "first_arguments": {"item_id": "IT-1"}}
    )
    messages = ordering(validate(write_scenario(toy_data)))
    assert len(messages) == 1
    assert messages[0].startswith(
        "policy_checks[2] E3 (lookup_item before refund_item) is implied by policy_checks[5] E8 "
        "(lookup_item{item_id=\"IT-1\"} before refund_item): it can never fail alone"
    )


def test_argument_aware_orderings_of_different_records_are_not_redundant(toy_data, write_scenario):
    checks = toy_data["evaluation_criteria"]["policy_checks"]
    checks[2] = {**PLAIN, "outcome_id": "E3", "type": "call_before_call", "first_arguments": {"item_id": "IT-1"}}
    checks.append({**PLAIN, "type": "call_before_call", "first_arguments": {"item_id": "IT-2"}})
    assert ordering(validate(write_scenario(toy_data))) == []


def _scenario(toy_data, *extra) -> Scenario:
    toy_data["evaluation_criteria"]["policy_checks"] += list(extra)
    return Scenario.model_validate(toy_data)


@pytest.mark.parametrize(
    ("extra", "found"),
    [
        # a narrower second side is a different constraint: the read must precede that action only
        ([{**PLAIN, "type": "call_before_call", "second_arguments": {"item_id": "IT-1"}}], 0),
        # the same argument-aware pair twice
        ([{**PLAIN, "type": "call_before_call", "first_arguments": {"item_id": "IT-1"}}] * 2, 2),  # + E3 implied
        # against the decision that counts
        ([{"outcome_id": "D1", "type": "tool_before_decision", "tool_name": "refund_item"},
          {"outcome_id": "D2", "type": "tool_before_decision", "tool_name": "refund_item"}], 1),
        # an "any" ordering implied by a single one among its tools
        ([{"outcome_id": "A1", "type": "tool_before_tool_any", "first_tools": ["lookup_item", "escalate"],
           "second_tool": "refund_item"}], 1),
    ],
)
def test_which_constraints_are_redundant(toy_data, extra, found):
    assert len(ordering_redundancy_problems(_scenario(toy_data, *extra))) == found
