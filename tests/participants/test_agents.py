"""Agent specs: built-ins, module:Class, module:factory, instances, files, and clear errors."""

from __future__ import annotations

import pytest

from conftest import TOY_ALLOW
from pytest_pibench import AgentSpecError, BaselineAgent, OracleAgent, ScenarioError, load_scenario, resolve_agent

AGENT_MODULE = """
class Agent:
    instances = 0

    def __init__(self):
        Agent.instances += 1

    def init_state(self, benchmark_context, tools, message_history=None):
        return {}

    def generate(self, message, state):
        return {"role": "assistant", "content": "hello"}, state


def make_agent():
    return Agent()


def make_nothing():
    return 42


shared = Agent()


class NotAnAgent:
    pass
"""


@pytest.fixture
def agent_module(tmp_path, monkeypatch):
    (tmp_path / "my_agents.py").write_text(AGENT_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path / "my_agents.py"


@pytest.fixture
def scenario():
    return load_scenario(TOY_ALLOW)


def test_builtins(scenario):
    assert isinstance(resolve_agent("oracle").build(scenario), OracleAgent)
    for kind, decision in (("allow", "ALLOW"), ("deny", "DENY"), ("escalate", "ESCALATE"), ("silent", None)):
        agent = resolve_agent(f"baseline:{kind}").build(scenario)
        assert isinstance(agent, BaselineAgent) and agent.decision == decision


def test_class_spec_builds_a_fresh_agent_per_episode(agent_module, scenario):
    spec = resolve_agent("my_agents:Agent")
    first, second = spec.build(scenario), spec.build(scenario)
    assert first is not second
    assert spec.name == "my_agents:Agent"


def test_factory_and_instance_specs(agent_module, scenario):
    made = resolve_agent("my_agents:make_agent").build(scenario)
    assert type(made).__name__ == "Agent"
    spec = resolve_agent("my_agents:shared")
    assert spec.build(scenario) is spec.build(scenario)


def test_file_path_spec(agent_module, scenario):
    agent = resolve_agent(f"{agent_module}:Agent").build(scenario)
    assert agent.generate({}, {})[0]["content"] == "hello"


@pytest.mark.parametrize(
    ("spec", "fragment"),
    [
        ("baseline:maybe", "unknown baseline 'baseline:maybe'; choose one of baseline:allow"),
        ("gpt", "use module:Class, module:factory, or a built-in (oracle, baseline:allow"),
        ("no_such_module_xyz:Agent", "no module named 'no_such_module_xyz'"),
        ("my_agents:Missing", "'my_agents' has no attribute 'Missing'"),
        ("my_agents:NotAnAgent", "NotAnAgent has no init_state() method"),
        ("missing_file.py:Agent", "file missing_file.py not found"),
    ],
)
def test_bad_specs_say_what_is_wrong(agent_module, spec, fragment):
    with pytest.raises(AgentSpecError) as info:
        resolve_agent(spec)
    assert fragment in str(info.value)


def test_factory_returning_a_non_agent_fails_at_start_up(agent_module, scenario):
    with pytest.raises(AgentSpecError, match=r"\(the factory make_nothing\(\) returned 42\): int has no init_state"):
        resolve_agent("my_agents:make_nothing")


def test_baseline_fills_required_decision_arguments_from_the_schema():
    agent = BaselineAgent("DENY")
    tools = [{"name": "record_decision", "parameters": {
        "type": "object",
        "properties": {"decision": {"type": "string"}, "order_id": {"type": "string"},
                       "cited": {"type": "array"}, "severity": {"type": "string", "enum": ["low", "high"]}},
        "required": ["decision", "order_id", "cited", "severity"],
    }}]
    state = agent.init_state([], tools)
    message, state = agent.generate({"role": "user", "content": "hi"}, state)
    (call,) = message["tool_calls"]
    assert call["name"] == "record_decision"
    assert call["arguments"]["decision"] == "DENY"
    assert call["arguments"]["cited"] == [] and call["arguments"]["severity"] == "low"
    assert isinstance(call["arguments"]["order_id"], str)
    follow_up, _ = agent.generate({"role": "user", "content": "why?"}, state)
    assert follow_up == {"role": "assistant", "content": "My decision on your request is DENY."}


def test_oracle_needs_a_reference_trajectory(scenario):
    scenario.reference_trajectory = None
    with pytest.raises(ScenarioError, match=r"reference_trajectory: missing: the oracle replays the gold trajectory"):
        OracleAgent(scenario)
