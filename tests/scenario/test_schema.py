"""Scenario schema: loading, clear errors naming file and field, upstream compatibility, JSON Schema."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import DATA, TOY_ALLOW
from pytest_pibench import ScenarioError, discover_scenarios, json_schema, load_scenario
from pytest_pibench.checks.trace import ToolBeforeToolCheck, ToolCalledWithCheck

UPSTREAM_STYLE = DATA / "upstream" / "scen_900_upstream_shape.json"


def problems_of(path: Path) -> ScenarioError:
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    return info.value


def test_loads_a_scenario_with_our_fields():
    scenario = load_scenario(TOY_ALLOW)
    assert scenario.scenario_id == "TOY_001_ITEM_REFUND"
    assert scenario.label == "ALLOW"
    assert scenario.source_path == TOY_ALLOW.resolve()
    assert scenario.forbidden_tools == ["escalate"]
    assert [c.name for c in scenario.reference_trajectory.calls] == ["lookup_item", "refund_item", "record_decision"]
    assert scenario.user_simulation.scripted_turns == ["Great, thanks!"]
    assert scenario.environment_setup.channel == "chat"


def test_missing_field_names_file_and_json_path(toy_data, write_scenario):
    del toy_data["evaluation_criteria"]["policy_checks"][1]["tool_name"]
    path = write_scenario(toy_data)
    error = problems_of(path)
    assert str(path) in str(error)
    assert "evaluation_criteria.policy_checks[1].tool_name: Field required" in str(error)
    assert error.problems == [("evaluation_criteria.policy_checks[1].tool_name", "Field required")]


def test_every_bad_field_is_listed_in_one_error(toy_data, write_scenario):
    toy_data["label"] = "MAYBE"
    toy_data["evaluation_criteria"]["policy_checks"][3] = {"type": "tool_called_min_times", "tool_name": "x"}
    del toy_data["environment_setup"]
    error = problems_of(write_scenario(toy_data))
    paths = [p for p, _ in error.problems]
    assert "label" in paths
    assert "evaluation_criteria.policy_checks[3].min_times" in paths
    assert "environment_setup" in paths
    assert f"{len(error.problems)} problems" in str(error)


def test_unknown_check_type_is_named(toy_data, write_scenario):
    toy_data["evaluation_criteria"]["policy_checks"][0]["type"] = "tool_maybe_called"
    error = problems_of(write_scenario(toy_data))
    (path, message), *_ = error.problems
    assert path == "evaluation_criteria.policy_checks[0]"
    assert "unknown check type 'tool_maybe_called'" in message


def test_invalid_json_names_line_and_column(workspace):
    path = workspace / "scenarios" / "broken.json"
    path.write_text('{"schema_version": "pibench_scenario_v1",\n  "meta": {,}}')
    error = problems_of(path)
    assert "invalid JSON at line 2 column" in str(error)


def test_missing_file_is_a_scenario_error(tmp_path):
    error = problems_of(tmp_path / "nope.json")
    assert "cannot read file" in str(error)


@pytest.mark.parametrize(
    ("mutate", "path", "fragment"),
    [
        (lambda d: d["evaluation_criteria"]["policy_checks"].append({"type": "decision_equals", "equals": "ALLOW"}),
         "evaluation_criteria.policy_checks", "exactly one decision_equals"),
        (lambda d: d["evaluation_criteria"]["policy_checks"][3].update(equals="DENY"),
         "evaluation_criteria.policy_checks[3].equals", "differs from label"),
        (lambda d: d["evaluation_criteria"]["policy_checks"].append({"type": "tool_not_called", "tool_name": "lookup_item"}),
         "evaluation_criteria.policy_checks", "both required and forbidden"),
        (lambda d: d["evaluation_criteria"]["policy_checks"].append(
            {"type": "tool_before_tool", "first_tool": "escalate", "second_tool": "refund_item"}),
         "evaluation_criteria.policy_checks[5]", "'escalate' is ordered but no other check requires it"),
        (lambda d: d["evaluation_criteria"]["state_field_checks"][0].update(field_path="items[item_id IT-1].status"),
         "evaluation_criteria.state_field_checks[0].field_path", "collection[key=value]"),
        (lambda d: d["evaluation_criteria"]["state_field_checks"].append(
            {"type": "state_field", "field_path": "items[item_id=IT-1].status", "equals": "active"}),
         "evaluation_criteria.state_field_checks[1].equals", "conflicts"),
        (lambda d: d["evaluation_criteria"].update(state_field_checks=[]),
         "evaluation_criteria.state_field_checks", "must not be empty"),
        (lambda d: d["reference_trajectory"].update(decision="DENY"),
         "reference_trajectory.decision", "differs from label"),
    ],
)
def test_consistency_rules(toy_data, write_scenario, mutate, path, fragment):
    mutate(toy_data)
    error = problems_of(write_scenario(toy_data))
    assert any(p == path and fragment in m for p, m in error.problems), error.problems


def test_alias_keys_load(toy_data, write_scenario):
    checks = toy_data["evaluation_criteria"]["policy_checks"]
    checks[1] = {"type": "tool_called_with", "tool_name": "refund_item", "args_match": {"item_id": "IT-1"}}
    checks[2] = {"type": "tool_before_tool", "first": "lookup_item", "second": "refund_item"}
    scenario = load_scenario(write_scenario(toy_data))
    with_check, order_check = scenario.evaluation_criteria.policy_checks[1:3]
    assert isinstance(with_check, ToolCalledWithCheck) and with_check.arguments == {"item_id": "IT-1"}
    assert isinstance(order_check, ToolBeforeToolCheck)
    assert (order_check.first_tool, order_check.second_tool) == ("lookup_item", "refund_item")


def test_upstream_shaped_file_loads_unchanged():
    scenario = load_scenario(UPSTREAM_STYLE)
    assert scenario.meta.domain == "retail_refund_sop_v1"
    assert scenario.model_extra["decision_contract"]["canonical_decision_resolution"]["preferred_tool"] == (
        "record_decision"
    )
    assert scenario.evaluation_criteria.nl_judge_checks[0].expected_answer == "NO"  # "no" upper-cased
    assert scenario.evaluation_criteria.policy_checks[0].model_extra == {"axis": "refund"}
    assert scenario.user_simulation.scripted_turns == []
    assert scenario.reference_trajectory is None


def test_json_schema_export_covers_every_check_type():
    schema = json_schema()
    assert schema["$schema"].startswith("https://json-schema.org/")
    text = json.dumps(schema)
    for check_type in ("tool_called_with", "tool_before_tool_any", "message_not_contains", "state_field",
                       "nl_assertion_llm_judge", "escalation_attempted"):
        assert f'"const": "{check_type}"' in text
    assert "reference_trajectory" in schema["properties"]


def test_discovery_skips_other_json_and_archives_but_not_broken_files(workspace):
    root = workspace / "scenarios"
    (root / "notes.json").write_text('{"hello": 1}')
    (root / "broken.json").write_text("{")
    (root / "archive").mkdir()
    (root / "archive" / "old.json").write_text(TOY_ALLOW.read_text())
    found = [p.name for p in discover_scenarios(root)]
    assert found == ["broken.json", "toy_001_item_refund.json", "toy_002_expensive_item_refund.json"]  # broken: reported
    assert [p.name for p in discover_scenarios(root / "toyshop" / "toy_001_item_refund.json")] == [
        "toy_001_item_refund.json"
    ]
