"""Certification of the shipped scenario set: CI keeps every bundled scenario sound (DESIGN §4)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from pytest_pibench import (
    BaselineAgent,
    OracleAgent,
    bind_scenario,
    bundled_scenarios_dir,
    discover_scenarios,
    evaluate,
    load_scenario,
    run_episode,
    validate,
)
from pytest_pibench.participants.specs import BASELINE_DECISIONS
from pytest_pibench.validation import validate_scenario
from pytest_pibench.vocab import COLUMNS

FILES = sorted(discover_scenarios(bundled_scenarios_dir()))
RETAIL = [f for f in FILES if f.parent.name == "retail"]
FINRA = [f for f in FILES if f.parent.name == "finra"]
HELPDESK = [f for f in FILES if f.parent.name == "helpdesk"]
DOMAIN_SETS = {"retail": RETAIL, "finra": FINRA, "helpdesk": HELPDESK}


@pytest.mark.slow
def test_the_shipped_set_passes_the_validator():
    report = validate(bundled_scenarios_dir())
    assert report.ok, report.format()


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_each_scenario_is_certified(path: Path):
    scenario = load_scenario(path)
    assert validate_scenario(scenario) == []
    oracle = evaluate(scenario, run_episode(scenario, OracleAgent(scenario)))
    assert oracle.all_passed and oracle.decision.canonical_decision == scenario.label
    for kind, decision in BASELINE_DECISIONS.items():
        result = evaluate(scenario, run_episode(scenario, BaselineAgent(decision)))
        if decision != scenario.label:
            assert not result.all_passed, f"baseline:{kind} passes {scenario.scenario_id}"


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_no_hidden_information_reaches_the_agent(path: Path):
    scenario = load_scenario(path)
    binding = bind_scenario(scenario)
    episode = run_episode(scenario, OracleAgent(scenario), binding=binding)
    seen = json.dumps(binding.benchmark_context()) + json.dumps(binding.tool_schemas)
    seen += json.dumps([m for m in episode.messages if m["role"] in ("user", "tool", "multi_tool")])
    hidden = [scenario.meta.notes, scenario.label + " because", json.dumps(scenario.reference_trajectory.model_dump())]
    hidden += [c.outcome_id for c in scenario.evaluation_criteria.policy_checks if len(c.outcome_id) >= 8]
    hidden += [c.judge_question for c in scenario.evaluation_criteria.nl_judge_checks]
    hidden += scenario.user_simulation.pressure_script
    hidden += [f.fact for f in scenario.meta.decisive_facts if len(f.fact) >= 8]  # issue 24 §3: hidden, like notes
    for text in hidden:
        assert text not in seen, text[:80]
    patch = scenario.environment_setup.initial_state_patch
    context = json.dumps(binding.benchmark_context())
    for customer in patch.get("customers", []):  # private records reach the agent only through tools
        assert customer.get("email", "@@") not in context


# Issue 10 (retail): 36 or more, each label at least 7, each of the 9 columns at least 4.
# Issue 11 (finra): 30 or more, each label at least 5, ESCALATE at most 40%, each column at least 3.
# Issue 12 (helpdesk): 30 or more (generated variants included), each label at least 5, each column at least 3.
COVERAGE = {"retail": (36, 7, 4, 1.0), "finra": (30, 5, 3, 0.4), "helpdesk": (30, 5, 3, 1.0)}


@pytest.mark.parametrize("domain", sorted(COVERAGE))
def test_each_domain_set_covers_labels_and_columns(domain: str):
    least_scenarios, least_per_label, least_per_column, most_escalate = COVERAGE[domain]
    scenarios = [load_scenario(p) for p in DOMAIN_SETS[domain]]
    labels = Counter(s.label for s in scenarios)
    columns = Counter(s.leaderboard.primary for s in scenarios)
    assert len(scenarios) >= least_scenarios
    assert {s.meta.domain for s in scenarios} == {domain}
    assert set(labels) == {"ALLOW", "ALLOW-CONDITIONAL", "DENY", "ESCALATE"}
    assert min(labels.values()) >= least_per_label, labels
    assert labels["ESCALATE"] <= most_escalate * len(scenarios), labels
    assert set(columns) == set(COLUMNS), set(COLUMNS) - set(columns)
    assert min(columns.values()) >= least_per_column, columns


@pytest.mark.parametrize("domain", sorted(DOMAIN_SETS))
def test_baselines_show_the_expected_failure_shapes(domain: str):
    scenarios = [load_scenario(p) for p in DOMAIN_SETS[domain]]
    flags: dict[str, Counter[str]] = {}
    for kind, decision in BASELINE_DECISIONS.items():
        counter: Counter[str] = Counter()
        for scenario in scenarios:
            result = evaluate(scenario, run_episode(scenario, BaselineAgent(decision)))
            counter.update(k for k, v in result.event_flags.items() if v)
            counter["no_decision"] += result.decision.canonical_decision is None
        flags[kind] = counter
    allowing = sum(s.label in ("ALLOW", "ALLOW-CONDITIONAL") for s in scenarios)
    denying = sum(s.label == "DENY" for s in scenarios)
    assert flags["deny"]["OR_r"] == allowing  # over-refusal on every grantable case
    assert flags["escalate"]["OR_r"] == allowing
    assert flags["allow"]["UR_r"] == denying  # under-refusal on every DENY case
    assert flags["allow"]["EA_r"] == flags["deny"]["EA_r"] == 0  # missed escalations
    assert flags["silent"]["no_decision"] == len(scenarios)


class ProvisionalThenGold(OracleAgent):
    """Records a provisional (wrong) decision first, then plays the gold trajectory: the last decision counts."""

    def generate(self, message, state):
        if not state.get("provisional_done"):
            wrong = next(label for label in ("DENY", "ALLOW") if label != self.final_decision)
            call = {"id": "provisional", "name": "record_decision",
                    "arguments": {"decision": wrong, "rationale": "provisional, pending review"}}
            # The opening message is still the customer's turn 0 for the gold path that follows.
            heard = state["customer_turns"] + (message.get("role") == "user")
            return {"role": "assistant", "tool_calls": [call]}, {
                **state, "customer_turns": heard, "provisional_done": True
            }
        reply, new_state = super().generate(message, state)
        return reply, {**new_state, "provisional_done": True}


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_a_provisional_decision_before_the_gold_path_is_judged_on_the_final_one(path: Path):
    """The agent is told the last valid decision counts; ordering checks must agree (issue 10, DESIGN §4.6)."""
    scenario = load_scenario(path)
    agent = ProvisionalThenGold(scenario)
    agent.final_decision = scenario.label
    result = evaluate(scenario, run_episode(scenario, agent))
    ordering = [r for r in result.tier1 if r.type.startswith(("tool_before", "tool_after"))]
    assert all(r.passed for r in ordering), [(r.outcome_id, r.detail) for r in ordering if not r.passed]
    assert result.decision.canonical_decision == scenario.label



@pytest.mark.parametrize("domain", sorted(DOMAIN_SETS))
def test_customers_react_and_every_reactive_turn_declares_the_gold_branch(domain: str):
    """Our customers react: any turn after the opening whose line depends on an outcome is a branch (issue 10)."""
    from pytest_pibench.scenario.script import ScriptedTurn

    reactive = 0
    for path in DOMAIN_SETS[domain]:
        for turn in load_scenario(path).user_simulation.scripted_turns:
            if isinstance(turn, ScriptedTurn):
                reactive += 1
                assert turn.oracle is not None, path.name
    assert reactive >= len(DOMAIN_SETS[domain])  # at least one reacting turn per scenario on average


def test_helpdesk_ships_at_least_twelve_hand_written_bases_and_their_variants():
    scenarios = [load_scenario(p) for p in HELPDESK]
    bases = {s.scenario_id for s in scenarios if s.meta.variant is None}
    variants = [s for s in scenarios if s.meta.variant is not None]
    assert len(bases) >= 12
    assert variants, "issue 12: generated variants ship alongside the bases"
    assert {v.meta.variant.base for v in variants} <= bases  # every variant's base ships too
    assert len({v.meta.variant.style for v in variants}) >= 4  # several pressure styles, not one


@pytest.mark.parametrize("path", [f for f in FILES if "__" in f.stem], ids=lambda p: p.stem)
def test_each_shipped_variant_is_what_the_generator_makes_of_its_base(path: Path):
    """Reproducible and untouched by hand: regenerating from the recorded base, style and seed gives the file."""
    from pytest_pibench.generation import get_style, make_variant

    variant = json.loads(path.read_text(encoding="utf-8"))
    info = variant["meta"]["variant"]
    base_path = path.with_name(path.stem.split("__")[0] + ".json")
    base = json.loads(base_path.read_text(encoding="utf-8"))
    assert base["meta"]["scenario_id"] == info["base"]
    assert make_variant(base, get_style(info["style"]), info["seed"]) == variant
