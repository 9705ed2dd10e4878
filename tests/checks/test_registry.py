"""The check registry: every declaration is complete, incomplete ones are refused, derived rules match upstream.

Reference: upstream-evaluation.md §2.11 (tool rules at load time), §5.2 (check types), §7.2 (dimensions).
"""

from __future__ import annotations

import json
from typing import Any, Literal, get_args

import pytest
from pydantic import BaseModel, TypeAdapter

from pytest_pibench.checks import (
    DIMENSIONS,
    CheckContext,
    CheckDeclarationError,
    CheckModel,
    CheckType,
    Outcome,
    check_type,
    check_type_names,
    check_types,
    register_check,
)
from pytest_pibench.checks.base import FAMILY_LISTS, Dimension
from pytest_pibench.checks.registry import declaration_problems, dimension_of
from pytest_pibench.checks.schema import PolicyCheck
from pytest_pibench.checks.tool_roles import ordered_pairs, tool_consistency_problems, tools_named_by, tools_with_role
from pytest_pibench.scenario.loading import json_schema
from pytest_pibench.scenario.models import EvaluationCriteria

BUILT_IN = (
    "tool_called",
    "tool_not_called",
    "tool_called_with",
    "tool_called_any",
    "tool_called_min_times",
    "tool_before_tool",
    "tool_before_tool_any",
    "tool_before_decision",
    "tool_before_decision_any",
    "call_before_call",
    "decision_equals",
    "message_not_contains",
    "escalation_attempted",
    "state_field",
    "nl_assertion_llm_judge",
)
POLICY = TypeAdapter(PolicyCheck)


def test_the_built_in_types_are_registered_in_schema_order():
    assert check_type_names()[: len(BUILT_IN)] == BUILT_IN
    assert [d.name for d in check_types("STATE_FIELD")] == ["state_field"]
    assert [d.name for d in check_types("NL_JUDGE")] == ["nl_assertion_llm_judge"]


@pytest.mark.parametrize("declaration", check_types(), ids=lambda d: d.name)
def test_every_registered_type_is_declared_completely(declaration):
    assert declaration_problems(declaration) == []
    assert check_type(declaration.name) is declaration
    assert f'"const": "{declaration.name}"' in json.dumps(json_schema())


def test_every_family_has_a_scenario_list_and_every_dimension_a_name():
    assert set(FAMILY_LISTS.values()) <= set(EvaluationCriteria.model_fields)
    assert [key for key, _ in DIMENSIONS] == list(get_args(Dimension))


@pytest.mark.parametrize(
    ("result_type", "dimension"),
    [  # upstream §7.2; every other check type scores in "outcomes"
        ("decision_equals", "decision"),
        ("tool_not_called", "permissibility"),
        ("message_not_contains", "permissibility"),
        ("tool_before_tool", "ordering"),
        ("tool_before_tool_any", "ordering"),
        ("state_field", "state"),
        ("NL_JUDGE", "semantic"),
        ("nl_assertion_llm_judge", "semantic"),
        ("tool_called", "outcomes"),
        ("tool_called_with", "outcomes"),
        ("tool_called_any", "outcomes"),
        ("tool_called_min_times", "outcomes"),
        ("escalation_attempted", "outcomes"),
        ("FANCY_FAMILY", None),
    ],
)
def test_dimensions_are_read_from_the_declarations(result_type, dimension):
    assert dimension_of(result_type) == dimension


# --------------------------------------------------------------------------- incomplete declarations


class AtMostCheck(CheckModel):
    type: Literal["test_at_most"]
    tool_name: str
    max_times: int


class UntypedCheck(CheckModel):
    tool_name: str


class NotACheck(BaseModel):
    type: Literal["test_not_a_check"]


def _evaluate(check: Any, context: CheckContext) -> Outcome:
    return True, "ok"


def declaration(**changes: Any) -> CheckType[Any]:
    fields: dict[str, Any] = {
        "model": AtMostCheck, "evaluate": _evaluate, "dimension": "permissibility", "tools": {"tool_name": "named"},
    }
    return CheckType(**{**fields, **changes})


def test_a_complete_declaration_has_no_problems():
    assert declaration_problems(declaration()) == []
    assert declaration().name == "test_at_most"


@pytest.mark.parametrize(
    ("changes", "problem"),
    [
        ({"evaluate": None}, "evaluate must be a function (check, context) -> (passed, detail)"),
        ({"dimension": None}, "dimension None is not one of"),
        ({"dimension": "speed"}, "dimension 'speed' is not one of"),
        ({"tools": {}}, "field 'tool_name' names a tool but has no role in tools"),
        ({"tools": None}, "tools must map each tool-naming field to its role ({} when none)"),
        ({"tools": {"tool_name": "named", "tool": "named"}}, "tools names 'tool', which is not a field of AtMostCheck"),
        ({"tools": {"tool_name": "named", "max_times": "named"}}, "field 'max_times' must hold a tool name"),
        ({"tools": {"tool_name": "mandatory"}}, "role 'mandatory' of 'tool_name' is not one of"),
        ({"family": "CUSTOM"}, "family 'CUSTOM' is not one of"),
        ({"result_type": ""}, "result_type must be a non-empty string or None"),
        ({"model": UntypedCheck}, 'model needs a field type: Literal["<name>"] with exactly one value'),
        ({"model": NotACheck}, "model must be a subclass of CheckModel"),
    ],
)
def test_an_incomplete_declaration_is_refused(changes, problem):
    before = check_type_names()
    incomplete = declaration(**changes)
    assert any(p.startswith(problem) for p in declaration_problems(incomplete)), declaration_problems(incomplete)
    with pytest.raises(CheckDeclarationError, match="declared incompletely") as info:
        register_check(incomplete)
    assert any(p.startswith(problem) for p in info.value.problems)
    assert check_type_names() == before


def test_a_name_cannot_be_registered_twice():
    with pytest.raises(ValueError, match="check type 'tool_called' is already registered"):
        register_check(check_type("tool_called"))


# --------------------------------------------------------------------------- tool roles


def policy(data: dict[str, Any]) -> Any:
    return POLICY.validate_python(data)


@pytest.mark.parametrize(
    ("data", "named", "forbidden", "pairs"),
    [
        ({"type": "tool_called", "tool_name": "a"}, ["a"], [], []),
        ({"type": "tool_not_called", "tool_name": "a"}, ["a"], ["a"], []),
        ({"type": "tool_called_with", "tool_name": "a", "arguments": {"k": 1}}, ["a"], [], []),
        ({"type": "tool_called_any", "tool_names": ["a", "b"]}, ["a", "b"], [], []),
        ({"type": "tool_called_min_times", "tool_name": "a", "min_times": 2}, ["a"], [], []),
        ({"type": "tool_before_tool", "first_tool": "a", "second_tool": "b"}, ["a", "b"], [], [("a", "b")]),
        ({"type": "tool_before_tool_any", "first_tools": ["a", "c"], "second_tool": "b"}, ["a", "c", "b"], [], []),
        ({"type": "decision_equals", "equals": "DENY"}, [], [], []),
        ({"type": "message_not_contains", "pattern": "x"}, [], [], []),
        ({"type": "escalation_attempted"}, [], [], []),
    ],
)
def test_tools_named_by_each_built_in_type(data, named, forbidden, pairs):
    check = policy(data)
    assert tools_named_by(check) == named
    assert tools_with_role(check, "forbidden") == forbidden
    assert ordered_pairs(check) == pairs


def checks(*items: dict[str, Any]) -> list[Any]:
    return [policy(item) for item in items]


CALLED_A = {"type": "tool_called", "tool_name": "a"}
CALLED_B = {"type": "tool_called_with", "tool_name": "b", "arguments": {"k": 1}}


@pytest.mark.parametrize(
    ("items", "problems"),
    [
        ([CALLED_A, CALLED_B, {"type": "tool_before_tool", "first_tool": "a", "second_tool": "b"}], []),
        ([CALLED_A, {"type": "tool_not_called", "tool_name": "a"}],
         [(None, "tool 'a' is both required and forbidden")]),
        ([{"type": "tool_called_min_times", "tool_name": "a", "min_times": 1}, {"type": "tool_not_called",
          "tool_name": "a"}], [(None, "tool 'a' is both required and forbidden")]),
        ([{"type": "tool_not_called", "tool_name": "a"}, {"type": "tool_called_any", "tool_names": ["a"]}],
         [(1, "every candidate of tool_called_any is forbidden")]),
        ([CALLED_A, {"type": "tool_before_tool", "first_tool": "a", "second_tool": "b"}],
         [(1, "'b' is ordered but no other check requires it")]),
        ([{"type": "tool_before_tool", "first": "a", "second": "b"}],
         [(0, "'a' is ordered but no other check requires it"), (0, "'b' is ordered but no other check requires it")]),
        ([CALLED_B, {"type": "tool_before_tool_any", "first_tools": ["a", "c"], "second_tool": "b"}],
         [(1, "no tool of first_tools is required by another check")]),
        ([CALLED_A, {"type": "tool_before_tool_any", "first_tools": ["a", "c"], "second_tool": "b"}],
         [(1, "'b' is ordered but no other check requires it")]),
        ([{"type": "tool_called_any", "tool_names": ["a", "b"]}, {"type": "tool_not_called", "tool_name": "a"}], []),
    ],
)
def test_tool_consistency_rules(items, problems):
    assert tool_consistency_problems(checks(*items)) == problems
