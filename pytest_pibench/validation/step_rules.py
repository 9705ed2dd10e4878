"""Step budget (found by blind play in issue 24): can an agent that makes one tool call per message finish?

The episode loop counts a step per participant turn and per tool batch, and ends the episode at the
step limit (default :data:`~pytest_pibench.vocab.DEFAULT_MAX_STEPS`, upstream's A2A default). The gold
trajectory batches its calls, so it always fits; an agent that calls one tool per message needs about
``2 x calls + 2 x replies + 1`` steps for the same work, and on a long scenario it is cut off before it
can finish (blind players were, on the volume drafts). The validator reports, as an ``info:`` line,
the scenarios whose gold would not fit the default limit played that way: the scenario is not wrong,
but its score depends on the agent batching its calls.
"""

from __future__ import annotations

from collections.abc import Iterable

from pytest_pibench.env.binding import Binding
from pytest_pibench.episode.result import EpisodeResult
from pytest_pibench.participants.builtins import OracleAgent
from pytest_pibench.run.episode import run_episode
from pytest_pibench.scenario.models import Scenario
from pytest_pibench.vocab import DEFAULT_MAX_STEPS

__all__ = ["step_budget_info", "unbatched_steps"]


def unbatched_steps(episode: EpisodeResult) -> int:
    """The steps the episode's work takes with one tool call per agent message (and the same replies)."""
    calls = len(episode.trace)
    replies = sum(1 for m in episode.messages if m.get("role") == "assistant" and not m.get("tool_calls"))
    return 2 * calls + 2 * replies + 1


def step_budget_info(loaded: Iterable[tuple[str, Scenario, Binding]], limit: int = DEFAULT_MAX_STEPS) -> list[str]:
    """One info line: the scenarios whose gold, one call per message, needs more than ``limit`` steps."""
    over = []
    for _name, scenario, binding in loaded:
        if scenario.reference_trajectory is None:
            continue
        steps = unbatched_steps(run_episode(scenario, OracleAgent(scenario), binding=binding, max_steps=1000))
        if steps > limit:
            over.append(f"{scenario.scenario_id} ({steps})")
    if not over:
        return []
    return [
        f"step budget: {len(over)} scenario(s) need more than the default {limit} steps for an agent that makes "
        f"one tool call per message (the gold batches its calls): {', '.join(sorted(over))}"
    ]
