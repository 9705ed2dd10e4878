"""The step-budget info line: scenarios an agent making one tool call per message cannot finish in the default."""

from __future__ import annotations

from pathlib import Path

from pytest_pibench import load_scenario, run_episode, validate
from pytest_pibench.participants.builtins import OracleAgent
from pytest_pibench.validation.step_rules import unbatched_steps
from pytest_pibench.vocab import DEFAULT_MAX_STEPS

SHIPPED = Path(__file__).resolve().parents[2] / "scenarios"
LONG = SHIPPED / "helpdesk" / "hd_031_reporting_data_follow_up.json"


def test_unbatched_steps_counts_a_turn_and_a_batch_per_call_and_two_steps_per_reply(toy_data, write_scenario):
    scenario = load_scenario(write_scenario(toy_data))
    episode = run_episode(scenario, OracleAgent(scenario))
    calls = len(episode.trace)
    replies = sum(1 for m in episode.messages if m.get("role") == "assistant" and not m.get("tool_calls"))
    assert calls >= 2 and replies >= 1
    assert unbatched_steps(episode) == 2 * calls + 2 * replies + 1
    assert episode.step_count < unbatched_steps(episode)  # the gold batches its calls


def test_a_long_scenario_is_named_with_its_steps_and_a_short_one_is_not(toy_data, write_scenario):
    (line,) = [i for i in validate(LONG).info if i.startswith("step budget:")]
    scenario = load_scenario(LONG)
    steps = unbatched_steps(run_episode(scenario, OracleAgent(scenario)))
    assert steps > DEFAULT_MAX_STEPS and f"{scenario.scenario_id} ({steps})" in line
    assert not [i for i in validate(write_scenario(toy_data)).info if i.startswith("step budget:")]
