"""Recorded plays (``pi play``) and the ``replay:PATH`` agent that plays them again.

A play record is one JSON file per play (written by :mod:`pytest_pibench.play`)::

    {"format": "pibench-play", "format_version": 1,
     "scenario": {"scenario_id", "path", "bundled", "sha256"},
     "player", "date", "seed", "blind", "status", "decision", "termination_reason",
     "actions": [{"content": "text"} | {"tool_calls": [{"name", "arguments"}]}],
     "transcript": [messages]}

The ``actions`` are the player's messages, one per agent turn, in order: all a
replay needs, since the scripted user and the environment are deterministic.
Call ids are derived from the action's position (:func:`action_message`), so a
replay's transcript equals the play's.

``replay:PATH`` names a record file or a folder of them (searched recursively).
Each episode replays the record whose ``scenario.scenario_id`` is the
episode's scenario, whatever its ``sha256``: replaying a play against a changed
scenario is how a play is re-scored. When the recorded actions run out, the
agent ends the episode (``###STOP###``). A folder holding no record of the
scenario gives an agent that stops at once (no action: scored, and failed, like
a player who never played it). A single record file for another scenario is
the spec's mistake: building the agent raises :class:`AgentSpecError`, which
the run scores as that episode's ``agent_error`` with the message.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pytest_pibench.episode.messages import STOP_SIGNALS, build_tool_call, is_stop_signal
from pytest_pibench.participants.schemes import AgentSpecError, ParticipantFactory, Scheme
from pytest_pibench.scenario.models import Scenario

__all__ = [
    "PLAY_FORMAT",
    "PLAY_FORMAT_VERSION",
    "REPLAY_SCHEME",
    "RecordError",
    "ReplayAgent",
    "action_message",
    "read_record",
    "read_records",
]

PLAY_FORMAT = "pibench-play"
PLAY_FORMAT_VERSION = 1


class RecordError(AgentSpecError):
    """A file that is not a readable play record (the message names the file and what is wrong)."""


def action_message(action: Mapping[str, Any], index: int) -> dict[str, Any]:
    """The assistant message of the player's ``index``-th action, with call ids fixed by the position."""
    calls = action.get("tool_calls")
    if calls:
        return {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                build_tool_call(str(c["name"]), dict(c.get("arguments") or {}), call_id=f"play-{index}-{k}")
                for k, c in enumerate(calls)
            ],
        }
    return {"role": "assistant", "content": str(action.get("content") or "")}


def _action_problem(action: Any) -> str | None:
    if not isinstance(action, dict):
        return "is not an object"
    calls = action.get("tool_calls")
    if calls is not None:
        if not isinstance(calls, list) or not calls:
            return "tool_calls is not a non-empty list"
        for call in calls:
            if not isinstance(call, dict) or not isinstance(call.get("name"), str):
                return "a tool call has no name"
            if not isinstance(call.get("arguments", {}), dict):
                return "a tool call's arguments are not an object"
        return None
    if not isinstance(action.get("content"), str):
        return "has neither tool_calls nor a text content"
    return None


def read_record(path: str | Path) -> dict[str, Any]:
    """Load and check one play record.

    Raises:
        RecordError: unreadable, not JSON, another format or version, or malformed actions.
    """
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise RecordError(f"{path}: cannot read a play record: {exc}") from None
    if not isinstance(data, dict) or data.get("format") != PLAY_FORMAT:
        raise RecordError(f"{path}: not a play record (no \"format\": \"{PLAY_FORMAT}\")")
    if data.get("format_version") != PLAY_FORMAT_VERSION:
        raise RecordError(
            f"{path}: play record format_version {data.get('format_version')!r}; "
            f"this version reads {PLAY_FORMAT_VERSION}"
        )
    scenario = data.get("scenario")
    if not isinstance(scenario, dict) or not isinstance(scenario.get("scenario_id"), str):
        raise RecordError(f"{path}: scenario.scenario_id is missing")
    actions = data.get("actions")
    if not isinstance(actions, list):
        raise RecordError(f"{path}: actions is not a list")
    for index, action in enumerate(actions):
        problem = _action_problem(action)
        if problem:
            raise RecordError(f"{path}: actions[{index}] {problem}")
    return data


def read_records(path: str | Path) -> dict[str, tuple[Path, dict[str, Any]]]:
    """The records of a file or folder, by scenario id.

    Raises:
        RecordError: a path that does not exist, a folder without records, a bad
            record, or two records of one scenario (one folder per player).
    """
    path = Path(path)
    if not path.exists():
        raise RecordError(f"no such play record or folder: {path}")
    files = sorted(path.rglob("*.json")) if path.is_dir() else [path]
    found: dict[str, tuple[Path, dict[str, Any]]] = {}
    for file in files:
        record = read_record(file)
        scenario_id = record["scenario"]["scenario_id"]
        if scenario_id in found:
            raise RecordError(
                f"two plays of scenario {scenario_id}: {found[scenario_id][0]} and {file} "
                "(keep one folder per player)"
            )
        found[scenario_id] = (file, record)
    if not found:
        raise RecordError(f"no play records (*.json) under {path}")
    return found


class ReplayAgent:
    """Says the recorded actions in order, one per turn, then ``###STOP###``.

    Subclasses decide what comes after the recorded actions by overriding
    :meth:`next_action` (``pi play`` asks a person there).
    """

    model_name = "replay"

    def __init__(self, actions: list[dict[str, Any]]) -> None:
        self.actions = [dict(a) for a in actions]

    def set_seed(self, seed: int) -> None:
        """A replay is deterministic."""

    def init_state(
        self,
        benchmark_context: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        message_history: list[dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        return {"index": 0}

    def next_action(self, message: dict[str, Any]) -> dict[str, Any]:
        """The action after the recorded ones: the end of the play."""
        return {"content": STOP_SIGNALS[0]}

    def generate(self, message: dict[str, Any], state: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        index = int(state["index"])
        if index >= len(self.actions):
            self.actions.append(dict(self.next_action(message)))
        return action_message(self.actions[index], index), {"index": index + 1}

    def is_stop(self, message: dict[str, Any]) -> bool:
        return is_stop_signal(message)

    def stop(self, message: dict[str, Any] | None, state: Any) -> None:
        """Nothing to release."""


def _replay(argument: str, params: Mapping[str, Any]) -> ParticipantFactory:
    if not argument:
        raise AgentSpecError("replay needs a play record or a folder of them: replay:PATH")
    records = read_records(argument)
    single = Path(argument).is_file()

    def build(scenario: Scenario) -> ReplayAgent:
        found = records.get(scenario.scenario_id)
        if found is None:
            if single:
                (only,) = records
                raise AgentSpecError(
                    f"replay:{argument} is a play of scenario {only}, not {scenario.scenario_id}: "
                    "run it on its own scenario, or name a folder of records"
                )
            return ReplayAgent([])  # not played: stops at once (documented above)
        return ReplayAgent(found[1]["actions"])

    return build


REPLAY_SCHEME = Scheme("replay", "replay:PATH", agent=_replay)
"""``--pibench-agent=replay:PATH``: replay recorded plays (a record file or a folder of them)."""
