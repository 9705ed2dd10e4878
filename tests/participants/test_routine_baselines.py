"""Routine baselines: a domain's standard look-ups, the generic action of one decision, then that decision."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from conftest import TOY_ALLOW, TOY_ESCALATE
from pytest_pibench import bundled_scenarios_dir, discover_scenarios, evaluate, load_scenario, run_episode
from pytest_pibench.packs.loading import DomainError, load_domain, load_domain_dir
from pytest_pibench.participants.builtins import ROUTINE_BASELINE_DECISIONS, RoutineAgent
from pytest_pibench.participants.specs import AgentSpecError, BaselineAgent, resolve_agent
from pytest_pibench.runner import run_one
from pytest_pibench.toolkit.routine import RoutineCall, RoutineRequest, RoutineResult

RETAIL = bundled_scenarios_dir() / "retail"
LAMP = RETAIL / "ret_001_lamp_return.json"
SPEAKER = RETAIL / "ret_009_smart_speaker_return.json"
NO_RECEIPT = RETAIL / "ret_024_jacket_without_receipt.json"


def request_of(path: Path) -> RoutineRequest:
    scenario = load_scenario(path)
    return RoutineRequest(scenario.user_simulation.initial_user_message, scenario.environment_setup.customer or {})


def calls_of(episode) -> list[tuple[str, dict]]:
    return [(entry["tool_name"], entry["arguments"]) for entry in episode.trace]


# --------------------------------------------------------------------------- the retail routine


def test_retail_lookups_use_the_ids_of_the_first_message_and_the_customer_block():
    routine = load_domain("retail").routine
    assert routine is not None
    assert routine.lookups(request_of(SPEAKER)) == [
        RoutineCall("verify_customer", {"customer_id": "CUS-3862", "email": "rosalind.baptiste@example.com"}),
        RoutineCall("lookup_customer", {"customer_id": "CUS-3862"}),
        RoutineCall("get_return_history", {"customer_id": "CUS-3862"}),
        RoutineCall("lookup_order", {"order_id": "ORD-74208"}),
        RoutineCall("check_return_window", {"order_id": "ORD-74208"}),
    ]


def test_retail_lookups_without_an_order_read_the_sku_on_the_tag():
    routine = load_domain("retail").routine
    assert routine is not None
    assert routine.lookups(request_of(NO_RECEIPT)) == [
        RoutineCall("verify_customer", {"customer_id": "CUS-3874", "email": "tomasz.okafor@example.com"}),
        RoutineCall("lookup_customer", {"customer_id": "CUS-3874"}),
        RoutineCall("get_return_history", {"customer_id": "CUS-3874"}),
        RoutineCall("lookup_product", {"sku": "LHT-AP-3410"}),
    ]


def test_retail_lookups_of_an_anonymous_message_name_each_order_once():
    routine = load_domain("retail").routine
    assert routine is not None
    request = RoutineRequest("Orders ORD-1 and ORD-2, and ORD-1 again.")
    assert [(c.name, c.arguments) for c in routine.lookups(request)] == [
        ("lookup_order", {"order_id": "ORD-1"}),
        ("lookup_order", {"order_id": "ORD-2"}),
        ("check_return_window", {"order_id": "ORD-1"}),
        ("check_return_window", {"order_id": "ORD-2"}),
    ]


def test_retail_actions_act_on_the_first_order_found():
    routine = load_domain("retail").routine
    assert routine is not None
    request = RoutineRequest("ORD-9 please", {"customer_id": "CUS-1"})
    order = {"order_id": "ORD-9", "items": [{"item_id": "ORD-9-1", "return_status": None},
                                           {"item_id": "ORD-9-2", "return_status": "refunded"}]}
    results = [
        RoutineResult(RoutineCall("lookup_order", {"order_id": "ORD-8"}), "Error: no such order", error=True),
        RoutineResult(RoutineCall("lookup_order", {"order_id": "ORD-9"}), order),
    ]
    (escalation,) = routine.action("ESCALATE", request, results)
    assert escalation.name == "escalate_to_manager"
    assert escalation.arguments["escalation_type"] == "account_integrity"
    assert (escalation.arguments["order_id"], escalation.arguments["customer_id"]) == ("ORD-9", "CUS-1")
    assert routine.action("DENY", request, results) == [
        RoutineCall("deny_return", {"order_id": "ORD-9", "reason_code": "outside_window"})
    ]
    (refund,) = routine.action("ALLOW-CONDITIONAL", request, results)
    assert refund.arguments == {"order_id": "ORD-9", "item_ids": ["ORD-9-1"], "reason_code": "within_window",
                                "refund_method": "original_payment",
                                "restocking_fee_percent": 0}  # the commonest gold fee since the partial grants (issue 24)
    assert routine.action("ALLOW", request, results)[0].arguments["restocking_fee_percent"] == 0
    assert routine.action("DENY", request, []) == []  # nothing to deny without an order
    assert routine.action("ESCALATE", request, [])[0].arguments.get("order_id") is None


def _gold_codes(label: str, tool: str, key: str) -> Counter[str]:
    codes: Counter[str] = Counter()
    for path in discover_scenarios(RETAIL):
        scenario = load_scenario(path)
        if scenario.label == label and scenario.reference_trajectory is not None:
            codes.update(str(c.arguments[key]) for c in scenario.reference_trajectory.calls
                         if c.name == tool and key in c.arguments)
    return codes


def _most_common(codes: Counter[str]) -> set[str]:
    top = max(codes.values())
    return {code for code, n in codes.items() if n == top}


@pytest.mark.parametrize(
    ("label", "tool", "key", "decision"),
    [
        ("ESCALATE", "escalate_to_manager", "escalation_type", "ESCALATE"),
        ("DENY", "deny_return", "reason_code", "DENY"),
        ("ALLOW", "issue_refund", "reason_code", "ALLOW"),
        ("ALLOW-CONDITIONAL", "issue_refund", "reason_code", "ALLOW-CONDITIONAL"),
        ("ALLOW-CONDITIONAL", "issue_refund", "restocking_fee_percent", "ALLOW-CONDITIONAL"),
    ],
)
def test_the_generic_actions_use_the_most_common_codes_of_the_gold_trajectories(label, tool, key, decision):
    """A routine baseline is the strongest guess: its codes are the commonest of its label (ties allowed)."""
    routine = load_domain("retail").routine
    assert routine is not None
    order = {"order_id": "ORD-9", "items": [{"item_id": "ORD-9-1", "return_status": None}]}
    results = [RoutineResult(RoutineCall("lookup_order", {"order_id": "ORD-9"}), order)]
    (call,) = routine.action(decision, RoutineRequest("ORD-9", {"customer_id": "CUS-1"}), results)
    assert call.name == tool
    assert str(call.arguments[key]) in _most_common(_gold_codes(label, tool, key))


# --------------------------------------------------------------------------- the agent


def test_routine_escalate_plays_lookups_then_action_then_decision_on_a_shipped_scenario():
    scenario = load_scenario(SPEAKER)
    agent = resolve_agent("baseline:routine-escalate").build(scenario)
    assert isinstance(agent, RoutineAgent) and agent.model_name == "baseline:routine-escalate"
    episode = run_episode(scenario, agent)
    names = [name for name, _ in calls_of(episode)]
    assert names == ["verify_customer", "lookup_customer", "get_return_history", "lookup_order",
                     "check_return_window", "escalate_to_manager", "record_decision"]
    assert calls_of(episode)[-1][1]["decision"] == "ESCALATE"
    assert not any(entry["result_error"] for entry in episode.trace)
    assert episode.messages[-2] == {"role": "assistant", "turn_index": len(episode.messages) - 2,
                                    "content": "My decision on your request is ESCALATE. Thank you for your patience."}


def test_routine_allow_refunds_every_item_of_the_order_it_looked_up():
    reason = _most_common(_gold_codes("ALLOW", "issue_refund", "reason_code"))  # what the routine is built to use
    scenario = load_scenario(LAMP)  # the order holds the lamp and a second item the customer keeps
    episode = run_episode(scenario, resolve_agent("baseline:routine-allow").build(scenario))
    refund = dict(calls_of(episode))["issue_refund"]
    assert refund == {"order_id": "ORD-30417", "item_ids": ["ORD-30417-1", "ORD-30417-2"],
                      "reason_code": refund["reason_code"],
                      "refund_method": "original_payment", "restocking_fee_percent": 0}
    assert refund["reason_code"] in reason
    assert episode.final_state["decisions"][-1]["decision"] == "ALLOW"


def test_the_routine_agent_is_deterministic():
    scenario = load_scenario(SPEAKER)
    runs = [run_episode(scenario, RoutineAgent(scenario, "DENY"), seed=seed) for seed in (1, 2)]
    assert json.dumps(calls_of(runs[0])) == json.dumps(calls_of(runs[1]))
    assert [m.get("content") for m in runs[0].messages] == [m.get("content") for m in runs[1].messages]


def test_the_toy_routine_passes_its_toy_scenarios():
    for path, decision in ((TOY_ALLOW, "ALLOW"), (TOY_ESCALATE, "ESCALATE")):
        scenario = load_scenario(path)
        assert evaluate(scenario, run_episode(scenario, RoutineAgent(scenario, decision))).all_passed
        assert not evaluate(scenario, run_episode(scenario, BaselineAgent(decision))).all_passed


def test_calls_to_tools_the_scenario_does_not_expose_are_left_out(toy_data, write_scenario):
    toy_data["available_tools"] = ["lookup_item", "record_decision"]
    scenario = load_scenario(write_scenario(toy_data))
    episode = run_episode(scenario, RoutineAgent(scenario, "ESCALATE"))
    assert [name for name, _ in calls_of(episode)] == ["lookup_item", "record_decision"]


def test_a_message_naming_nothing_goes_straight_to_the_action(toy_data, write_scenario):
    toy_data["user_simulation"]["initial_user_message"] = "Hello, I have a problem with a toy."
    scenario = load_scenario(write_scenario(toy_data))
    episode = run_episode(scenario, RoutineAgent(scenario, "ESCALATE"))
    assert calls_of(episode) == [
        ("escalate", {"reason": "Needs a supervisor's review.", "item_id": None}),
        ("record_decision", {"decision": "ESCALATE", "rationale": "Baseline policy: always ESCALATE."}),
    ]


# --------------------------------------------------------------------------- specs and packs


def test_every_routine_spec_resolves():
    scenario = load_scenario(TOY_ALLOW)
    for kind, decision in ROUTINE_BASELINE_DECISIONS.items():
        agent = resolve_agent(f"baseline:{kind}").build(scenario)
        assert isinstance(agent, RoutineAgent) and agent.decision == decision
        assert agent.model_name == f"baseline:{kind}"


def test_an_unknown_baseline_lists_the_routine_ones():
    with pytest.raises(AgentSpecError, match="baseline:routine-allow-conditional, baseline:routine-deny"):
        resolve_agent("baseline:routine-maybe")


def _without_routine(workspace: Path) -> Path:
    tools = workspace / "domains" / "toyshop" / "tools.py"
    text = tools.read_text()
    tools.write_text(text.replace("ROUTINE = Routine(lookups=routine_lookups, action=routine_action)", ""))
    assert "ROUTINE =" not in tools.read_text()
    return workspace / "scenarios" / "toyshop" / TOY_ALLOW.name


def test_a_domain_without_a_routine_has_no_routine_baselines(workspace):
    scenario = load_scenario(_without_routine(workspace))
    assert load_domain_dir(workspace / "domains" / "toyshop").routine is None
    with pytest.raises(AgentSpecError, match=r"domain 'toyshop' declares no ROUTINE in its tools\.py"):
        resolve_agent("baseline:routine-allow").build(scenario)
    row = run_one(scenario, "baseline:routine-allow")  # in a run: the agent's error, with the reason
    assert row["termination_reason"] == "agent_error" and "declares no ROUTINE" in row["error"]


def test_a_routine_of_the_wrong_type_is_a_domain_error(workspace):
    tools = workspace / "domains" / "toyshop" / "tools.py"
    tools.write_text(tools.read_text() + "\nROUTINE = (routine_lookups, routine_action)\n")
    with pytest.raises(DomainError, match=r"ROUTINE must be a pytest_pibench\.toolkit\.routine\.Routine, got tuple"):
        load_domain_dir(workspace / "domains" / "toyshop")


# --------------------------------------------------------------------------- in a pytest run


def test_the_plugin_runs_a_routine_baseline(toy_project):
    result = toy_project.runpytest("scenarios", "--pibench-agent=baseline:routine-escalate", "-p", "no:randomly")
    result.assert_outcomes(passed=1, failed=1)
    data = json.loads((toy_project.path / "pibench-results.json").read_text())
    rows = {r["scenario_id"]: r for r in data["rows"]}
    assert rows["TOY_002_EXPENSIVE_REFUND"]["all_passed"] and not rows["TOY_001_ITEM_REFUND"]["all_passed"]
    assert {r["agent"] for r in data["rows"]} == {"baseline:routine-escalate"}


# --------------------------------------------------------------------------- the finra routine

FINRA = bundled_scenarios_dir() / "finra"
FINRA_CODE_KEYS = {
    "escalate": "escalation_type",
    "decline_request": "reason_code",
    "route_for_approval": "approval_type",
    "request_documents": "document_type",
}


def _finra_gold_actions(label: str) -> Counter[tuple[str, str]]:
    """(tool, code) of every coded action in the gold trajectories of ``label``, once per scenario."""
    actions: Counter[tuple[str, str]] = Counter()
    for path in discover_scenarios(FINRA):
        scenario = load_scenario(path)
        if scenario.label == label and scenario.reference_trajectory is not None:
            actions.update({(c.name, str(c.arguments[FINRA_CODE_KEYS[c.name]]))
                            for c in scenario.reference_trajectory.calls if c.name in FINRA_CODE_KEYS})
    return actions


@pytest.mark.parametrize("decision", ["ESCALATE", "DENY", "ALLOW-CONDITIONAL"])
def test_the_finra_generic_actions_are_the_commonest_of_the_gold_trajectories(decision):
    """The finra routine's coded action for each decision is the commonest (tool, code) of that label (ties allowed)."""
    routine = load_domain("finra").routine
    assert routine is not None
    found = RoutineResult(RoutineCall("lookup_request", {"request_id": "REQ-1"}),
                          {"request_id": "REQ-1", "request_type": "wire_out"})
    (call,) = routine.action(decision, RoutineRequest("REQ-1", {"customer_id": "CUS-1"}), [found])
    gold = _finra_gold_actions(decision)
    assert (call.name, str(call.arguments[FINRA_CODE_KEYS[call.name]])) in _most_common(gold), gold


def test_the_finra_routine_reads_the_request_profile_alerts_and_each_account():
    routine = load_domain("finra").routine
    assert routine is not None
    request = RoutineRequest("Please send REQ-90118 from ACC-51118 today.", {"customer_id": "CUS-7118"},
                             {"account_id": "ACC-51118"})
    assert [(c.name, c.arguments) for c in routine.lookups(request)] == [
        ("lookup_request", {"request_id": "REQ-90118"}),
        ("lookup_customer", {"customer_id": "CUS-7118"}),
        ("get_alerts_and_cases", {"customer_id": "CUS-7118"}),
        ("lookup_account", {"account_id": "ACC-51118"}),
        ("get_transaction_history", {"account_id": "ACC-51118"}),
    ]


# --------------------------------------------------------------------------- the helpdesk routine

HELPDESK = bundled_scenarios_dir() / "helpdesk"
HELPDESK_CODE_KEYS = {"escalate": "escalation_type", "request_approval": "approval_type"}


def _helpdesk_gold_codes(label: str) -> Counter[tuple[str, str]]:
    """(tool, code) of the coded actions and rejection reasons of ``label``'s gold trajectories, once per scenario."""
    codes: Counter[tuple[str, str]] = Counter()
    for path in discover_scenarios(HELPDESK):
        scenario = load_scenario(path)
        if scenario.label != label or scenario.reference_trajectory is None or scenario.meta.variant is not None:
            continue
        found = {(c.name, str(c.arguments[HELPDESK_CODE_KEYS[c.name]]))
                 for c in scenario.reference_trajectory.calls if c.name in HELPDESK_CODE_KEYS}
        found |= {("update_ticket", str(c.arguments["reason_code"])) for c in scenario.reference_trajectory.calls
                  if c.name == "update_ticket" and c.arguments.get("reason_code")}
        codes.update(found)
    return codes


@pytest.mark.parametrize(("decision", "tool", "key"), [
    ("ESCALATE", "escalate", "escalation_type"),
    ("DENY", "update_ticket", "reason_code"),
    ("ALLOW-CONDITIONAL", "request_approval", "approval_type"),
])
def test_the_helpdesk_generic_actions_are_the_commonest_of_the_hand_written_gold_trajectories(decision, tool, key):
    routine = load_domain("helpdesk").routine
    assert routine is not None
    results = [
        RoutineResult(RoutineCall("create_ticket", {}), {"ticket_id": "TKT_1", "subject_employee_id": "EMP-1",
                                                        "category": "access_request"}),
        RoutineResult(RoutineCall("lookup_employee", {"employee_id": "EMP-1"}),
                      {"employee_id": "EMP-1", "manager_id": "EMP-2"}),
        RoutineResult(RoutineCall("get_access_policy", {"resource_id": "RES-1"}), {"resource_id": "RES-1"}),
    ]
    calls = routine.action(decision, RoutineRequest("RES-1", {}, {}, {"employee_id": "EMP-1"}), results)
    (call,) = [c for c in calls if c.name == tool]
    gold = _helpdesk_gold_codes(decision)
    codes = {code for (name, code) in _most_common(Counter({k: v for k, v in gold.items() if k[0] == tool}))}
    assert str(call.arguments[key]) in codes, gold
