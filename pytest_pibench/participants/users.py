"""The deterministic scripted user."""

from __future__ import annotations

from typing import Any

from pytest_pibench.episode.messages import STOP_SIGNALS, is_stop_signal

__all__ = ["ScriptedUser"]


class ScriptedUser:
    """Says ``initial_user_message``, then each of ``scripted_turns`` in order, then stops.

    It replies once per agent text message and ignores what the agent said.
    ``pressure_script`` lines are stage directions for an LLM user and are
    never spoken.
    """

    model_name = "scripted"

    def set_seed(self, seed: int) -> None:
        """Scripted speech does not depend on the seed."""

    def init_state(
        self, scenario: dict[str, Any], message_history: list[dict[str, Any]] | None = None
    ) -> dict[str, Any]:
        turns = [scenario.get("initial_user_message") or ""]
        turns += [t for t in scenario.get("scripted_turns") or [] if isinstance(t, str) and t.strip()]
        return {"turns": turns, "turn_count": 0}

    def generate(self, message: dict[str, Any], state: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        index = state["turn_count"]
        turns: list[str] = state["turns"]
        text = turns[index] if index < len(turns) else STOP_SIGNALS[0]
        return {"role": "user", "content": text}, {**state, "turn_count": index + 1}

    def is_stop(self, message: dict[str, Any]) -> bool:
        return is_stop_signal(message)

    def stop(self, message: dict[str, Any] | None, state: Any) -> None:
        """Nothing to release."""
