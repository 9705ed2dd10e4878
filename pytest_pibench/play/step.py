"""Step mode: one action per ``pi play`` invocation, the play kept in a state file.

The state file is a play record (scenario reference, seed, the actions so far).
Each invocation replays the episode from the start with the recorded actions
plus the new ones (:class:`~pytest_pibench.play.agent.StepPlayer`), then prints
only what came after the player's last message, and rewrites the file. The
replay is exact, so the episode is the one a single long-running play would
have had.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_pibench.participants.replay import RecordError, read_record
from pytest_pibench.play.agent import StepPlayer
from pytest_pibench.play.records import make_record, record_scenario_path, scenario_reference, write_record
from pytest_pibench.play.syntax import Action, CommandError, parse_line
from pytest_pibench.play.view import render_ending, render_messages, since_last_action
from pytest_pibench.run.episode import run_episode
from pytest_pibench.scenario.loading import load_scenario
from pytest_pibench.scenario.models import Scenario

__all__ = ["continue_play", "start_play"]


def _play(scenario: Scenario, actions: list[dict[str, Any]], seed: int, max_steps: int) -> tuple[StepPlayer, Any]:
    agent = StepPlayer(actions)
    # No timeout: a person takes the time they need (and a replay is fast); the step limit still holds.
    episode = run_episode(scenario, agent, seed=seed, max_steps=max_steps, timeout=None)
    return agent, episode


def _report(agent: StepPlayer, episode: Any, record: dict[str, Any], state: Path) -> None:
    new = since_last_action(episode.messages)
    if new:
        print(render_messages(new))
    if not agent.paused:
        print("\n" + render_ending(episode.termination_reason, record["decision"]))
        print(f"Score it (after freezing your decision): pi play --score {state}")


def start_play(scenario: Scenario, state: Path, *, seed: int, player: str | None, blind: bool, max_steps: int) -> int:
    """Start a play: print the policy, the task, the tools and the customer's opening; write the state file."""
    if state.exists():
        raise RecordError(f"{state} already exists: continue it with --state {state} --act ..., or pick another file")
    agent, episode = _play(scenario, [], seed, max_steps)
    print(agent.show("policy") + "\n\n" + agent.show("task") + "\n\n" + agent.show("tools") + "\n")
    print(render_messages(episode.messages[:1]))
    record = make_record(scenario, episode, [], seed=seed, player=player, blind=blind, max_steps=max_steps)
    _report(agent, episode, record, state)
    write_record(state, record)
    return 0


def continue_play(state: Path, acts: list[str], show: str | None) -> int:
    """Apply ``acts`` (in the ``pi play`` syntax) to the play in ``state``, or show a view of it."""
    record = read_record(state)
    path = record_scenario_path(record)
    if not path.is_file():
        raise RecordError(f"the play's scenario file is gone: {path}")
    scenario = load_scenario(path)
    if scenario_reference(scenario)["sha256"] != record["scenario"].get("sha256"):
        print("note: the scenario changed since this play started; the replay follows the current file")
    if acts and record.get("status") == "finished":
        raise RecordError(f"this play is over: score it with pi play --score {state}")
    seed, max_steps = int(record.get("seed") or 0), int(record.get("max_steps") or 40)
    actions = list(record["actions"])
    if acts:
        agent, _ = _play(scenario, actions, seed, max_steps)  # the tools as the agent is shown them
        for text in acts:
            actions.append(_action(text, agent))
    agent, episode = _play(scenario, actions, seed, max_steps)
    taken = sum(1 for m in episode.messages[1:] if m.get("role") == "assistant")
    if taken < len(actions):
        print(f"({len(actions) - taken} action(s) not taken: the episode had ended)")
        actions = actions[:taken]
    updated = make_record(scenario, episode, actions, seed=seed, player=record.get("player"),
                          blind=bool(record.get("blind")), max_steps=max_steps, date=record.get("date"))  # fmt: skip
    if show:
        print(agent.show(show))
    elif acts or not agent.paused:
        _report(agent, episode, updated, state)
    else:  # no action given: what the player is answering
        print(render_messages(since_last_action(episode.messages)) or "(nothing new)")
    if acts:
        write_record(state, updated)
    return 0


def _action(text: str, agent: StepPlayer) -> dict[str, Any]:
    try:
        command = parse_line(text, agent.tools_by_name)
    except CommandError as exc:
        raise RecordError(f"--act {text!r}: {exc}") from None
    if not isinstance(command, Action):
        raise RecordError(f"--act {text!r} is not an action (views: --show policy|task|tools|history)")
    return command.message
