"""The per-episode LLM budget: the turn that reaches it ends the episode as ``cost_limit``, scored."""

from __future__ import annotations

from typing import Any

import pytest

from conftest import TOY_ALLOW
from pytest_pibench import evaluate, load_scenario, run_episode, run_one
from pytest_pibench.evaluation import NORMAL_TERMINATIONS
from pytest_pibench.participants.specs import AgentSpec
from pytest_pibench.participants.users import ScriptedUser

LOOKUP = {"role": "assistant", "tool_calls": [{"id": "c", "name": "lookup_item", "arguments": {"item_id": "IT-1"}}]}


class BilledAgent:
    """Looks the item up every turn; each turn costs ``price`` dollars (its ``usage()`` says so)."""

    def __init__(self, price: float, unpriced_per_turn: int = 0, talk: bool = False) -> None:
        self.price, self.unpriced_per_turn, self.turns, self.talk = price, unpriced_per_turn, 0, talk

    def init_state(self, benchmark_context, tools, message_history=None):
        return 0

    def generate(self, message, state):
        self.turns += 1
        if self.talk:  # asks the user again instead of looking anything up
            return {"role": "assistant", "content": "Could you say that again?"}, state
        return {**LOOKUP, "tool_calls": [{**LOOKUP["tool_calls"][0], "id": f"c{self.turns}"}]}, state

    def usage(self) -> dict[str, Any]:
        return {"calls": self.turns, "cost_usd": self.price * self.turns,
                "unpriced_calls": self.unpriced_per_turn * self.turns}  # fmt: skip


@pytest.fixture
def allow():
    return load_scenario(TOY_ALLOW)


def test_the_turn_that_reaches_the_budget_ends_the_episode_before_its_calls_run(allow):
    agent = BilledAgent(0.02)
    episode = run_episode(allow, agent, cost_limit=0.05)
    assert episode.termination_reason == "cost_limit" and episode.status == "completed"
    assert agent.turns == 3  # 0.02, 0.04, then 0.06 >= 0.05
    assert len(episode.trace) == 2  # the third turn's lookup never ran
    assert episode.limit_hit == {"limit": "episode_cost_limit", "value": 0.05, "spent_usd": 0.06,
                                 "unpriced_calls": 0, "role": "agent"}  # fmt: skip
    assert "cost_limit" in NORMAL_TERMINATIONS  # scored like max_steps: the agent ran into it


def test_without_a_budget_spending_ends_nothing(allow):
    episode = run_episode(allow, BilledAgent(5.0), max_steps=8)
    assert episode.termination_reason == "max_steps" and episode.limit_hit is None


class BilledUser(ScriptedUser):
    """The scripted user, reporting 0.03 dollars a turn."""

    turns = 0

    def generate(self, message, state):
        self.turns += 1
        return super().generate(message, state)

    def usage(self) -> dict[str, Any]:
        return {"cost_usd": 0.03 * self.turns}


def test_the_user_simulators_spend_counts_too(allow):
    episode = run_episode(allow, BilledAgent(0.0, talk=True), BilledUser(), cost_limit=0.05)
    assert episode.termination_reason == "cost_limit"
    assert episode.limit_hit is not None and episode.limit_hit["spent_usd"] == pytest.approx(0.06)
    assert episode.limit_hit["role"] == "user"


def test_unpriced_calls_are_reported_beside_the_spend(allow):
    episode = run_episode(allow, BilledAgent(0.03, unpriced_per_turn=1), cost_limit=0.05)
    assert episode.limit_hit is not None and episode.limit_hit["unpriced_calls"] == 2


class BrokenReport(BilledAgent):
    def usage(self) -> dict[str, Any]:
        raise RuntimeError("no meter")


def test_a_usage_report_that_raises_is_a_warning_not_an_ending(allow):
    episode = run_episode(allow, BrokenReport(1.0), cost_limit=0.05, max_steps=4)
    assert episode.termination_reason == "max_steps"
    assert episode.warnings == ["usage() could not be read (RuntimeError: no meter)"]


class GarbledReport(BilledAgent):
    def usage(self) -> dict[str, Any]:
        return {"cost_usd": "n/a"}


def test_a_usage_report_without_a_number_is_a_warning_and_the_episode_is_still_scored(allow):
    row = run_one(allow, AgentSpec("garbled", lambda scenario: GarbledReport(1.0)), cost_limit=0.05, max_steps=4)
    assert row["status"] == "completed" and row["termination_reason"] == "max_steps"  # scored, not an error row
    assert any("usage() could not be read (ValueError" in w for w in row["warnings"])
    assert "agent.usage() entries that are not finite numbers were left out: cost_usd" in row["warnings"]
    assert "usage" not in row  # nothing numeric to keep: the row's totals stay numbers


def test_a_usage_report_that_raises_never_costs_the_scored_row(allow):
    row = run_one(allow, AgentSpec("broken", lambda scenario: BrokenReport(1.0)), max_steps=4)
    assert row["status"] == "completed" and row["termination_reason"] == "max_steps"
    assert "agent.usage() raised RuntimeError: no meter" in row["warnings"]


def test_an_agent_reused_across_episodes_is_charged_only_what_each_episode_spends(allow):
    shared = BilledAgent(0.02)  # its usage() reports everything since it was made, like an LLM client's
    first = run_episode(allow, shared, cost_limit=0.05)
    second = run_episode(allow, shared, cost_limit=0.05)
    assert first.termination_reason == second.termination_reason == "cost_limit"
    assert len(first.trace) == len(second.trace) == 2  # the second episode got its own 0.05, not what was left
    assert second.limit_hit is not None and second.limit_hit["spent_usd"] == pytest.approx(0.06)


def test_a_budget_ending_is_scored_and_recorded_in_the_row(allow):
    episode = run_episode(allow, BilledAgent(0.02), cost_limit=0.05)
    result = evaluate(allow, episode)
    assert result.termination_reason == "cost_limit" and result.all_passed is False  # no decision was recorded
    row = run_one(allow, AgentSpec("billed", lambda scenario: BilledAgent(0.02)), cost_limit=0.05)
    assert row["status"] == "completed" and row["termination_reason"] == "cost_limit"
    assert row["limit_hit"]["limit"] == "episode_cost_limit" and row["usage"]["agent"]["cost_usd"] == 0.06


def test_a_reused_agents_row_reports_only_what_its_episode_spent(allow):
    shared = BilledAgent(0.02)

    def reuse(scenario):
        return shared

    reuse.pibench_shared = True  # what a module:instance spec builds: one object for every episode
    rows = [run_one(allow, AgentSpec("shared", reuse), trial=t, max_steps=4) for t in range(2)]
    # usage() reports its whole life (0.04 after one episode of two agent turns, 0.08 after two)
    assert [r["usage"]["agent"]["cost_usd"] for r in rows] == [pytest.approx(0.04), pytest.approx(0.04)]
    assert [r["usage"]["agent"]["calls"] for r in rows] == [2, 2]
    fresh = run_one(allow, AgentSpec("fresh", lambda scenario: BilledAgent(0.02)), max_steps=4)
    assert fresh["usage"]["agent"]["cost_usd"] == pytest.approx(0.04)  # a fresh agent keeps all it reports
