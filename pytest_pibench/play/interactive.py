"""Interactive mode: one play on a terminal (or any line stream), optionally recorded."""

from __future__ import annotations

from typing import IO

from pytest_pibench.play.agent import InteractivePlayer
from pytest_pibench.play.records import make_record, write_record
from pytest_pibench.play.view import render_ending, render_messages, since_last_action
from pytest_pibench.run.episode import run_episode
from pytest_pibench.scenario.models import Scenario

__all__ = ["play_interactive"]


def play_interactive(
    scenario: Scenario,
    lines: IO[str],
    out: IO[str],
    *,
    record: str | None,
    seed: int,
    player: str | None,
    blind: bool,
    max_steps: int,
) -> int:
    """Play ``scenario`` reading actions from ``lines``; 0 when the play ran to its end, 1 abandoned, 130 Ctrl-C."""
    agent = InteractivePlayer(lines, out)
    try:
        # No timeout: a person takes the time they need; the step limit still holds.
        episode = run_episode(scenario, agent, seed=seed, max_steps=max_steps, timeout=None)
    except KeyboardInterrupt:
        print("\n(interrupted: nothing recorded)", file=out)
        return 130
    if agent.abandoned:
        print("(abandoned: nothing recorded)", file=out)
        return 1
    if episode.termination_reason == "agent_error":  # the player's own tooling failed: say why, keep nothing
        print(f"the play failed: {(episode.error or {}).get('message')}", file=out)
        return 1
    new = since_last_action(episode.messages)
    if new:
        print(render_messages(new), file=out)
    actions = agent.actions[: sum(1 for m in episode.messages[1:] if m.get("role") == "assistant")]
    made = make_record(scenario, episode, actions, seed=seed, player=player, blind=blind, max_steps=max_steps)
    print("\n" + render_ending(episode.termination_reason, made["decision"]), file=out)
    if record:
        path = write_record(record, made)
        print(f"Recorded in {path}. Score it (after freezing your decision): pi play --score {path}", file=out)
    return 0
