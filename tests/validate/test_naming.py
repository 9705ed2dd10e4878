"""Rule ``naming`` (issue 24 §4): a scenario's id and file name (which players, reviewers and reports see) never
state its outcome."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_pibench import validate
from pytest_pibench.scenario.loading import discover_scenarios, load_scenario
from pytest_pibench.validation.naming_rules import naming_problems

SHIPPED = Path(__file__).resolve().parents[2] / "scenarios"


def naming(report) -> list[str]:
    return [p.message for p in report.problems if p.rule == "naming"]


@pytest.mark.parametrize(
    ("scenario_id", "stem", "words"),
    [
        ("TOY_010_ALLOW", "toy_010_refund", "allow"),
        ("TOY_011_REFUND", "toy_011_owner_approval_missing", "missing"),
        ("TOY_012_REFUND", "toy_012_camera_exactly_750", "exactly"),
        ("TOY_013_EDD_LAPSED_BY_ONE_DAY", "toy_013_wire", "lapsed"),
        ("TOY_014_REFUND", "toy_014_holding-period-met", "met"),
        ("toy_015_escalated_policy_gap", "toy_015_journal", "escalated, policy_gap"),
    ],
)  # fmt: skip
def test_an_id_or_file_name_that_states_the_outcome_is_a_problem(toy_data, write_scenario, workspace, scenario_id,
                                                                 stem, words):  # fmt: skip
    toy_data["meta"]["scenario_id"] = scenario_id
    write_scenario(toy_data, f"{stem}.json")
    found = naming(validate(workspace / "scenarios" / "toyshop" / f"{stem}.json"))
    assert found and all(f"({words})" in message for message in found if scenario_id in message or stem in message)
    assert any("states the outcome" in message for message in found)


@pytest.mark.parametrize("stem", ["toy_020_metro_pass_refund", "toy_021_allowance_card", "toy_022_kitchen_order",
                                  "toy_023_denim_jacket", "toy_024_escalator_part"])  # fmt: skip
def test_words_only_count_whole(toy_data, write_scenario, workspace, stem):
    toy_data["meta"]["scenario_id"] = stem.upper()
    path = write_scenario(toy_data, f"{stem}.json")
    assert naming_problems(load_scenario(path)) == []
    assert naming(validate(path)) == []


def test_every_shipped_scenario_has_a_neutral_id_and_file_name():
    files = list(discover_scenarios(SHIPPED))
    assert len(files) >= 103
    assert {str(f): naming_problems(load_scenario(f)) for f in files if naming_problems(load_scenario(f))} == {}
