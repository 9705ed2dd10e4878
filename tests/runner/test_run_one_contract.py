"""What ``run_one`` promises: failures once the spec resolves are rows; a bad spec and a stop still raise."""

from __future__ import annotations

import pytest

from conftest import TOY_ALLOW
from pytest_pibench import AgentSpec, AgentSpecError, run_one, run_suite


class Interrupted:
    """An agent whose turn is cut short by Ctrl-C."""

    def init_state(self, benchmark_context, tools, message_history=None):
        return {}

    def generate(self, message, state):
        raise KeyboardInterrupt


class Explodes:
    def __init__(self) -> None:
        raise RuntimeError("cannot build me")


def test_an_unresolvable_spec_string_raises_before_anything_runs():
    with pytest.raises(AgentSpecError, match="no module named"):
        run_one(TOY_ALLOW, "no_such_module_for_pibench:Agent")
    with pytest.raises(AgentSpecError):
        run_suite([TOY_ALLOW], ["oracle", "no_such_module_for_pibench:Agent"])


def test_a_stop_propagates_instead_of_becoming_a_row():
    with pytest.raises(KeyboardInterrupt):
        run_one(TOY_ALLOW, AgentSpec("interrupted", lambda scenario: Interrupted()))


def test_failures_after_resolution_are_rows(tmp_path):
    missing = run_one(tmp_path / "missing.json", "oracle")
    assert missing["status"] == "error" and missing["termination_reason"] == "scenario_error"
    unbuildable = run_one(TOY_ALLOW, AgentSpec("explodes", lambda scenario: Explodes()))
    assert unbuildable["status"] == "completed" and unbuildable["termination_reason"] == "agent_error"
    assert "cannot build me" in unbuildable["error"]

    def broken_user(scenario):
        raise RuntimeError("user simulator down")

    user_down = run_one(TOY_ALLOW, "oracle", user_factory=broken_user)  # the user is not the agent: an error row
    assert user_down["status"] == "error" and user_down["termination_reason"] == "user_error"
    assert user_down["failure_cause"] == "user_simulator" and "user simulator down" in user_down["error"]
