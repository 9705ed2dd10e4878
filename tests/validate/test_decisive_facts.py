"""Decisive facts and clauses (issue 24 §3): hidden meta the validator checks, and the quarter rule over a set."""

from __future__ import annotations

import copy
import json

import pytest

from conftest import TOY_ESCALATE
from pytest_pibench import load_scenario, validate
from pytest_pibench.cli import main
from pytest_pibench.env.binding import bind_scenario
from pytest_pibench.participants.specs import OracleAgent
from pytest_pibench.runner import run_episode
from pytest_pibench.scenario.loading import ScenarioError
from pytest_pibench.validation import fact_coverage

OPENED = {"fact": "The toy IT-1 is still sealed in its box", "tool": "lookup_item", "field": "items[].opened"}
BOUGHT = {"fact": "It was bought five days before the request", "tool": "lookup_item", "field": "items[].purchased"}
REFUNDED = {"fact": "The refund went through for the full price", "tool": "refund_item", "field": "refunded_amount"}


def rules(report) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for problem in report.problems:
        out.setdefault(problem.rule, []).append(problem.message)
    return out


def annotate(data, facts, clauses=("TOY-1",), cohort=None):
    data = copy.deepcopy(data)
    data["meta"].update(decisive_facts=[dict(f) for f in facts], clauses=list(clauses))
    if cohort:
        data["meta"]["cohort"] = cohort
    return data


def test_a_sound_declaration_passes(toy_data, write_scenario):
    report = validate(write_scenario(annotate(toy_data, [OPENED, BOUGHT, REFUNDED], ["TOY-1", "TOY-4"])))
    assert report.ok, report.format()
    scenario = load_scenario(write_scenario(annotate(toy_data, [OPENED])))
    assert scenario.meta.decisive_facts[0].tool == "lookup_item"
    assert scenario.meta.decisive_facts[0].field == "items[].opened"
    assert scenario.meta.clauses == ["TOY-1"]


def test_the_fields_are_optional(toy_data, write_scenario):
    scenario = load_scenario(write_scenario(toy_data))
    assert scenario.meta.decisive_facts == [] and scenario.meta.clauses == []


def test_a_fact_tool_the_domain_lacks(toy_data, write_scenario):
    bad = dict(OPENED, tool="launch_rocket")
    found = rules(validate(write_scenario(annotate(toy_data, [bad]))))
    assert found["facts"] == ["meta.decisive_facts[0]: tool 'launch_rocket' is not a tool of domain 'toyshop'"]


def test_a_fact_tool_the_gold_trajectory_never_calls(toy_data, write_scenario):
    bad = dict(OPENED, tool="escalate", field="ticket_id")  # a tool of the domain, exposed, but not in the gold calls
    found = rules(validate(write_scenario(annotate(toy_data, [OPENED, bad]))))
    assert found["facts"] == [
        "meta.decisive_facts[1]: tool 'escalate' is never called in the reference trajectory, "
        "so the gold solution does not read the fact it turns on (ticket_id)"
    ]


def test_upstream_tool_sequence_counts_as_the_gold_trajectory(toy_data, write_scenario):
    toy_data["reference_trajectory"]["tool_sequence"] = ["lookup_item", "escalate"]
    found = rules(validate(write_scenario(annotate(toy_data, [dict(OPENED, tool="escalate")]))))
    assert "facts" not in found


@pytest.mark.parametrize("clause", ["TOY-9", "OY-1", "TOY-1.1", "toy"])
def test_a_clause_the_policy_does_not_hold(toy_data, write_scenario, clause):
    found = rules(validate(write_scenario(annotate(toy_data, [OPENED], ["TOY-3", clause]))))
    assert found["facts"] == [f"meta.clauses[1]: {clause!r} does not occur in the policy text"]


def test_a_clause_is_found_as_a_whole_id_in_the_scenarios_own_policy(toy_data, write_scenario, workspace):
    (workspace / "policy_v2.md").write_text("**TOY-1.10** Sealed toys ... **TOY-2** Defective toys ...\n")
    toy_data["policy_context"] = {"policy_text_ref": "policy_v2.md"}
    found = rules(validate(write_scenario(annotate(toy_data, [OPENED], ["TOY-1.10", "TOY-1", "TOY-2"]))))
    assert found["facts"] == ["meta.clauses[1]: 'TOY-1' does not occur in the policy text"]  # not within TOY-1.10


@pytest.mark.parametrize(
    ("facts", "clauses", "expected"),
    [
        ([OPENED], ["TOY-1"], ["from 1 tool(s)"]),
        ([OPENED, BOUGHT], ["TOY-1"], ["it declares 2 from 1 tool(s)"]),  # two facts, one record
        ([], ["TOY-1"], ["it declares 0 from 0 tool(s)"]),
        ([OPENED, REFUNDED], [], ["needs at least one clause id in meta.clauses"]),
        ([OPENED, REFUNDED], ["TOY-1"], []),
    ],
)
def test_a_hard_scenario_needs_two_facts_from_different_tools_and_a_clause(
    toy_data, write_scenario, facts, clauses, expected
):
    found = rules(validate(write_scenario(annotate(toy_data, facts, clauses, cohort="hard"))))
    messages = found.get("facts", [])
    assert len(messages) == len(expected), messages
    for message, fragment in zip(messages, expected, strict=True):
        assert fragment in message and "meta.cohort 'hard'" in message


def test_the_same_facts_without_the_hard_cohort_are_fine(toy_data, write_scenario):
    assert validate(write_scenario(annotate(toy_data, [OPENED], []))).ok


@pytest.mark.parametrize(
    ("fact", "path"),
    [
        ({"fact": "sealed", "tool_name": "lookup_item", "field": "opened"}, "meta.decisive_facts[0].tool"),
        (dict(OPENED, fact=""), "meta.decisive_facts[0].fact"),
        (dict(OPENED, note="typo-proof: extra keys are refused"), "meta.decisive_facts[0].note"),
    ],
)
def test_a_malformed_fact_is_a_schema_problem(toy_data, write_scenario, fact, path):
    with pytest.raises(ScenarioError) as info:
        load_scenario(write_scenario(annotate(toy_data, [fact])))
    assert any(where == path for where, _ in info.value.problems), info.value.problems


# ----------------------------------------------------------------- hidden


def test_a_fact_that_reaches_the_agent_is_a_hidden_text_problem(toy_data, write_scenario):
    data = annotate(toy_data, [OPENED])
    data["user_simulation"]["scripted_turns"].append(OPENED["fact"])
    found = rules(validate(write_scenario(data)))
    assert any(m.startswith("hidden text meta.decisive_facts[0].fact reaches the agent") for m in found["hidden"])


def test_the_declarations_never_reach_the_agent(toy_data, write_scenario):
    facts = [
        OPENED,
        REFUNDED,
        {"fact": "No supervisor approval is on file", "tool": "lookup_item", "field": "approvals[].granted_by"},
    ]
    scenario = load_scenario(write_scenario(annotate(toy_data, facts, ["TOY-1", "TOY-4"], cohort="hard")))
    binding = bind_scenario(scenario)
    episode = run_episode(scenario, OracleAgent(scenario), binding=binding)
    seen = json.dumps(binding.benchmark_context()) + json.dumps(binding.tool_schemas) + binding.task_text()
    seen += json.dumps([m for m in episode.messages if m["role"] in ("user", "tool", "multi_tool")])
    for fact in facts:
        assert fact["fact"] not in seen and fact["field"] not in seen
    assert "decisive_facts" not in seen and '"clauses"' not in seen and "cohort" not in seen
    assert json.dumps(scenario.meta.clauses) not in seen


# ----------------------------------------------------------------- the quarter rule over a set


def write_set(toy_data, write_scenario, single: int, total: int = 4, annotated: int | None = None):
    """``total`` toy scenarios, ESCALATE and ALLOW in turn (two of a label at most: rule 8 stays out of it).

    The first ``annotated`` declare decisive facts; the first ``single`` of those from one tool only.
    """
    annotated = total if annotated is None else annotated
    escalate = json.loads(TOY_ESCALATE.read_text())
    for index in range(total):
        data = copy.deepcopy(escalate if index % 2 == 0 else toy_data)
        second = dict(REFUNDED, tool="escalate", field="ticket_id") if index % 2 == 0 else REFUNDED
        if index >= 2:
            data["meta"]["scenario_id"] += f"_COPY{index}"
        if index < annotated:
            data = annotate(
                data, [OPENED] if index < single else [OPENED, second], ["TOY-3" if index % 2 == 0 else "TOY-1"]
            )
        names = [TOY_ESCALATE.name, "toy_001_item_refund.json"]
        write_scenario(data, names[index] if index < 2 else f"copy_{index}.json")


def test_at_most_a_quarter_single_fact_once_every_scenario_declares_facts(toy_data, write_scenario, workspace):
    write_set(toy_data, write_scenario, single=1)
    report = validate(workspace / "scenarios")
    assert report.ok, report.format()
    assert report.info == [
        "decisive facts, domain 'toyshop': 4 of 4 scenario(s) declare them, 1 single-fact (25% of those); "
        "at most a quarter (1) may be single-fact"
    ]
    write_set(toy_data, write_scenario, single=2)
    found = rules(validate(workspace / "scenarios"))
    assert found == {
        "single-fact": [
            "2 of the 4 scenarios of domain 'toyshop' are settled by one fact (fewer than two decisive facts from "
            "different tools; at most 1, a quarter): TOY_001_ITEM_REFUND, TOY_002_EXPENSIVE_REFUND"
        ]
    }


def test_the_quarter_rule_waits_until_the_domain_is_annotated(toy_data, write_scenario, workspace, capsys):
    write_set(toy_data, write_scenario, single=3, annotated=3)
    report = validate(workspace / "scenarios")
    assert report.ok, report.format()
    (row,) = fact_coverage([(s, bind_scenario(s)) for s in map(load_scenario, report.files)])
    assert (len(row.scenarios), len(row.annotated), len(row.single_fact), row.enforced) == (4, 3, 3, False)
    assert row.share == 1.0
    assert main(["validate", str(workspace / "scenarios")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[-2:] == [
        "info: decisive facts, domain 'toyshop': 3 of 4 scenario(s) declare them, 3 single-fact (100% of those); "
        "the at-most-a-quarter rule applies once all 4 declare them",
        "4 scenario file(s), 0 problem(s)",
    ]


def test_a_set_without_declarations_reports_zero(workspace):
    report = validate(workspace / "scenarios")
    assert report.ok and report.info == [
        "decisive facts, domain 'toyshop': 0 of 2 scenario(s) declare them, 0 single-fact (0% of those); "
        "the at-most-a-quarter rule applies to 4 scenarios or more"
    ]


def test_a_small_set_never_fails_the_quarter_rule(toy_data, write_scenario, workspace):
    write_set(toy_data, write_scenario, single=3, total=3)  # a quarter of three is not one scenario
    report = validate(workspace / "scenarios")
    assert report.ok, report.format()
    assert validate(write_scenario(annotate(toy_data, [OPENED]), "one_draft.json")).ok
