"""The deterministic scripted user: its lines, and turns that react to what the agent did."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import TypeAdapter

from pytest_pibench.checks.decision import resolve_decision
from pytest_pibench.episode.messages import STOP_SIGNALS, is_stop_signal
from pytest_pibench.scenario.script import ScriptedTurn, TurnCondition
from pytest_pibench.transcript import TraceEntry, extract_text

__all__ = ["ScriptedUser"]

_TURN = TypeAdapter(str | ScriptedTurn)


class ScriptedUser:
    """Says ``initial_user_message``, then each of ``scripted_turns`` in order, then stops.

    It replies once per agent text message. A plain line is said as written; a
    reactive turn (:class:`~pytest_pibench.scenario.script.ScriptedTurn`) says
    the first branch whose conditions hold for the episode so far (the loop
    shows it the trace through :meth:`observe`), else its neutral default.
    ``path`` records the branch taken at each reactive turn. ``pressure_script``
    lines are stage directions for an LLM user and are never spoken.
    """

    pibench_builtin = True  # trusted by the episode loop (see episode.caller): a waiting subclass sets False

    model_name = "scripted"

    def __init__(self) -> None:
        self.path: list[tuple[int, str]] = []
        """``(turn index, branch id or "default")`` for every reactive turn said, in order."""
        self._trace: list[TraceEntry] = []
        self._messages: list[dict[str, Any]] = []

    def set_seed(self, seed: int) -> None:
        """Scripted speech does not depend on the seed."""

    def init_state(
        self, scenario: dict[str, Any], message_history: list[dict[str, Any]] | None = None
    ) -> dict[str, Any]:
        turns: list[str | ScriptedTurn] = [scenario.get("initial_user_message") or ""]
        for raw in scenario.get("scripted_turns") or []:
            turn = _TURN.validate_python(raw)
            if not isinstance(turn, str) or turn.strip():
                turns.append(turn)
        self.path = []
        return {"turns": turns, "turn_count": 0}

    def observe(self, trace: Sequence[TraceEntry], messages: Sequence[dict[str, Any]]) -> None:
        """What the episode did so far; the loop calls it before each of this user's turns."""
        self._trace = list(trace)
        self._messages = list(messages)

    def generate(self, message: dict[str, Any], state: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        index = state["turn_count"]
        turns: list[str | ScriptedTurn] = state["turns"]
        if index >= len(turns):
            text = STOP_SIGNALS[0]
        elif isinstance(turns[index], str):
            text = str(turns[index])
        else:
            text = self._react(index, turns[index], message)
        return {"role": "user", "content": text}, {**state, "turn_count": index + 1}

    def _react(self, index: int, turn: ScriptedTurn, message: dict[str, Any]) -> str:
        said = extract_text(message) if isinstance(message, dict) else ""
        for branch in turn.branches:
            if self._holds(branch.when, said):
                self.path.append((index, branch.id))
                return branch.say
        self.path.append((index, "default"))
        return turn.default

    def _holds(self, when: TurnCondition, said: str) -> bool:
        called = {e.tool_name for e in self._trace}
        if when.decision is not None:
            decided = resolve_decision(self._trace, self._messages).canonical_decision or "NONE"
            if decided != when.decision:
                return False
        if when.tool_called is not None and when.tool_called not in called:
            return False
        if when.tool_not_called is not None and when.tool_not_called in called:
            return False
        if when.said_any is not None and not any(p.lower() in said.lower() for p in when.said_any):
            return False
        return when.asked is None or ("?" in said) == when.asked

    def is_stop(self, message: dict[str, Any]) -> bool:
        return is_stop_signal(message)

    def stop(self, message: dict[str, Any] | None, state: Any) -> None:
        """Nothing to release."""
