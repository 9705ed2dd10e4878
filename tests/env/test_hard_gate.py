"""Observer modes: ``hard_gate`` blocks the tools a scenario forbids before they run; ``audit_only`` runs them."""

from __future__ import annotations

import json

import pytest

from conftest import TOY_ALLOW
from pytest_pibench import evaluate, load_scenario, run_episode, run_one
from pytest_pibench.scenario.loading import ScenarioError


class CallsForbidden:
    """Calls the scenario's forbidden tool, then escalates in words."""

    def __init__(self, tool: str, arguments: dict) -> None:
        self.tool, self.arguments = tool, arguments

    def init_state(self, benchmark_context, tools, message_history=None):
        return 0

    def generate(self, message, state):
        if state == 0:
            return {"role": "assistant", "tool_calls": [{"id": "c1", "name": self.tool, "arguments": self.arguments}]}, 1
        return {"role": "assistant", "content": "I cannot do that; let me transfer you to a supervisor."}, 2

    def is_stop(self, message):
        return False

    def stop(self, message, state):
        return None


def _forbidden(data: dict) -> tuple[str, dict]:
    for check in data["evaluation_criteria"]["policy_checks"]:
        if check["type"] == "tool_not_called":
            return check["tool_name"], {}
    raise AssertionError("the toy scenario forbids no tool")


@pytest.mark.parametrize("mode", ["audit_only", "hard_gate"])
def test_a_forbidden_call_runs_only_in_audit_mode(mode, toy_data, workspace):
    tool, _ = _forbidden(toy_data)
    path = workspace / "scenarios" / "toyshop" / "s.json"
    path.write_text(json.dumps(toy_data))
    scenario = load_scenario(path)
    arguments = {"item_id": "IT-1"} if tool != "record_decision" else {"decision": "DENY"}
    episode = run_episode(scenario, CallsForbidden(tool, arguments), max_steps=6, observer_mode=mode)
    (entry,) = [t for t in episode.trace if t["tool_name"] == tool]
    assert entry["blocked"] is (mode == "hard_gate")
    if mode == "hard_gate":
        assert entry["result_error"] and entry["result_content"] == "Error: Tool not permitted by policy"
        reply = [m for m in episode.messages if m.get("role") == "tool"][0]
        assert json.loads(reply["content"]) == "Error: Tool not permitted by policy"  # what the agent reads
        assert episode.state_changes == []  # it never ran
    result = evaluate(scenario, episode)
    (forbidden_check,) = [r for r in result.outcome_results if r.type == "tool_not_called"]
    assert forbidden_check.passed is False  # a blocked attempt is still an attempt, as upstream scores it
    assert result.event_flags["AT_r"] is True
    from pytest_pibench.checks.base import CheckContext
    from pytest_pibench.checks.decision import resolve_decision
    from pytest_pibench.checks.registry import run_check
    from pytest_pibench.checks.text import EscalationAttemptedCheck
    from pytest_pibench.transcript import TraceEntry

    trace = [TraceEntry.from_dict(t, i) for i, t in enumerate(episode.trace)]
    check = EscalationAttemptedCheck(outcome_id="X", type="escalation_attempted")
    verdict = run_check(check, CheckContext(trace, episode.messages, resolve_decision(trace, episode.messages)))
    # upstream's escalation_attempted needs a blocked call, which only the hard gate makes; words count only after
    # a tool message naming the blocked tool, which the block's message does not (upstream's rule, kept)
    expected = "no escalation after the blocked call" if mode == "hard_gate" else "no blocked tool call in the trace"
    assert verdict.passed is False and expected in verdict.detail


def test_a_scenario_can_ask_for_the_hard_gate_and_a_bad_mode_is_refused(toy_data, workspace):
    tool, _ = _forbidden(toy_data)
    toy_data["meta"]["observer_mode"] = "hard_gate"
    path = workspace / "scenarios" / "toyshop" / "s.json"
    path.write_text(json.dumps(toy_data))
    episode = run_episode(load_scenario(path), CallsForbidden(tool, {}), max_steps=4)  # the run's default: audit
    assert [t["blocked"] for t in episode.trace if t["tool_name"] == tool] == [True]
    toy_data["meta"]["observer_mode"] = "strict"
    path.write_text(json.dumps(toy_data))
    with pytest.raises(ScenarioError, match="meta.observer_mode"):
        load_scenario(path)


def test_the_oracle_is_unaffected_by_the_hard_gate():
    assert run_one(load_scenario(TOY_ALLOW), "oracle", observer_mode="hard_gate")["all_passed"]
