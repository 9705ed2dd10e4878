"""DESIGN §4 rule 8: no naive or routine baseline passes more than a third of the scenarios of its own label."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from pytest_pibench import bundled_scenarios_dir, discover_scenarios, load_scenario, validate
from pytest_pibench.validation import BaselineReach, baseline_reach


def rules(report) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for problem in report.problems:
        found.setdefault(problem.rule, []).append(problem.message)
    return found


def allow_case(toy: dict[str, Any], n: int, *, broken: bool = False) -> dict[str, Any]:
    """The toy ALLOW scenario about item IT-<n>; a ``broken`` toy is refunded as defective, not changed_mind."""
    data = copy.deepcopy(toy)
    item, reason = f"IT-{n}", "defective" if broken else "changed_mind"
    data["meta"] = {"scenario_id": f"TOY_RETURN_{n}", "domain": "toyshop", "notes": f"case {n}"}
    data["environment_setup"]["initial_state_patch"]["items"][0]["item_id"] = item
    data["user_simulation"]["initial_user_message"] = (
        f"Hi, I'd like to return {item}, it arrived broken." if broken else f"Hi, I'd like to return {item}."
    )
    data["evaluation_criteria"]["policy_checks"][1]["arguments"] = {"item_id": item, "reason": reason}
    data["evaluation_criteria"]["state_field_checks"][0]["field_path"] = f"items[item_id={item}].status"
    calls = data["reference_trajectory"]["calls"]
    calls[0]["arguments"] = {"item_id": item}
    calls[1]["arguments"] = {"item_id": item, "reason": reason}
    calls[2]["arguments"]["item_id"] = item
    return data


def write_set(folder: Path, cases: list[dict[str, Any]]) -> Path:
    folder.mkdir(parents=True)
    for case in cases:
        (folder / f"{case['meta']['scenario_id'].lower()}.json").write_text(json.dumps(case, indent=1))
    return folder


def test_a_set_the_routine_solves_is_reported_with_the_scenarios_it_passes(toy_data, workspace):
    folder = write_set(workspace / "scenarios" / "easy", [allow_case(toy_data, n) for n in (1, 2, 3)])
    report = validate(folder)
    (problem,) = [p for p in report.problems if p.rule == "discriminative"]
    assert problem.file == str(folder)
    assert problem.message == (
        "baseline:routine-allow fully passes 3 of the 3 ALLOW scenarios of domain 'toyshop' (at most 1, a third): "
        "TOY_RETURN_1, TOY_RETURN_2, TOY_RETURN_3"
    )
    assert set(rules(report)) == {"discriminative"}  # the set is sound otherwise


def test_a_set_the_routine_solves_a_third_of_passes(toy_data, workspace):
    cases = [allow_case(toy_data, 1), allow_case(toy_data, 2, broken=True), allow_case(toy_data, 3, broken=True)]
    report = validate(write_set(workspace / "scenarios" / "good", cases))
    assert report.ok, report.format()
    (naive, routine) = baseline_reach(load_scenario(p) for p in discover_scenarios(workspace / "scenarios" / "good"))
    assert (naive.baseline, naive.passed) == ("baseline:allow", ())
    assert (routine.baseline, routine.passed, routine.allowed) == ("baseline:routine-allow", ("TOY_RETURN_1",), 1)


def test_a_set_the_naive_baseline_solves_is_reported_too(workspace):
    toy = json.loads((workspace / "scenarios" / "toyshop" / "toy_002_expensive_item_refund.json").read_text())
    cases = []
    for n in (1, 2, 3):
        case = copy.deepcopy(toy)
        case["meta"]["scenario_id"] = f"TOY_ESCALATE_{n}"
        case["evaluation_criteria"]["policy_checks"] = [
            {"outcome_id": "E4", "type": "decision_equals", "equals": "ESCALATE"},
            {"outcome_id": "E3", "type": "tool_not_called", "tool_name": "refund_item"},
        ]
        cases.append(case)
    found = rules(validate(write_set(workspace / "scenarios" / "naive", cases)))
    assert sorted(m.split()[0] for m in found["discriminative"]) == ["baseline:escalate", "baseline:routine-escalate"]
    assert all(m.endswith("TOY_ESCALATE_1, TOY_ESCALATE_2, TOY_ESCALATE_3") for m in found["discriminative"])


def test_labels_are_counted_per_domain_and_label(toy_data, workspace):
    cases = [allow_case(toy_data, n) for n in (1, 2)]  # two ALLOW cases: too few to certify
    write_set(workspace / "scenarios" / "mixed", cases)
    reach = baseline_reach(load_scenario(p) for p in discover_scenarios(workspace / "scenarios"))
    by_key = {(r.domain, r.label, r.baseline): r for r in reach}
    allow = by_key[("toyshop", "ALLOW", "baseline:routine-allow")]
    assert allow.scenarios == ("TOY_RETURN_1", "TOY_RETURN_2", "TOY_001_ITEM_REFUND") and len(allow.passed) == 3
    escalate = by_key[("toyshop", "ESCALATE", "baseline:routine-escalate")]
    assert escalate.scenarios == ("TOY_002_EXPENSIVE_REFUND",) and not escalate.over
    assert allow.over
    assert not any(r.over for r in reach if r.label == "ESCALATE")


@pytest.mark.parametrize(
    ("total", "passed", "over"),
    [(1, 1, False), (2, 2, False), (3, 1, False), (3, 2, True), (6, 2, False), (6, 3, True), (8, 2, False),
     (8, 3, True), (9, 3, False)],
)
def test_more_than_a_third_is_over_from_three_scenarios_on(total, passed, over):
    ids = tuple(f"S{i}" for i in range(total))
    assert BaselineReach("d", "DENY", "baseline:deny", ids, ids[:passed]).over is over


# --------------------------------------------------------------------------- the shipped set


@pytest.fixture(scope="module")
def shipped_reach() -> list[BaselineReach]:
    reach = baseline_reach(load_scenario(p) for p in discover_scenarios(bundled_scenarios_dir()))
    for row in reach:
        print(f"{row.domain} {row.label}: {row.baseline} passes {len(row.passed)}/{len(row.scenarios)} "
              f"(at most {row.allowed}) {', '.join(row.passed)}")
    return reach


def test_every_shipped_label_is_measured_with_its_naive_and_routine_baseline(shipped_reach):
    measured = {(r.domain, r.label, r.baseline) for r in shipped_reach}
    labels = {(r.domain, r.label) for r in shipped_reach}
    assert {label for _, label in labels if _ == "retail"} == {"ALLOW", "ALLOW-CONDITIONAL", "DENY", "ESCALATE"}
    for domain, label in labels:
        assert (domain, label, f"baseline:routine-{label.lower()}") in measured
        if label != "ALLOW-CONDITIONAL":
            assert (domain, label, f"baseline:{label.lower()}") in measured
    assert all(set(r.passed) <= set(r.scenarios) for r in shipped_reach)


def test_no_baseline_passes_more_than_a_third_of_its_shipped_label(shipped_reach):
    over = [f"{r.domain} {r.label}: {r.baseline} {len(r.passed)}/{len(r.scenarios)}" for r in shipped_reach if r.over]
    assert not over, over
