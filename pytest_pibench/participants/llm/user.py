"""The LLM user simulator (``--pibench-user=litellm:<model>``).

It plays the scenario's persona with its known facts, goal and pressure
guidance (guidance, never read out verbatim), opens with
``initial_user_message`` without a model call, sees only the agent's text (no
tool calls, no tool results), and ends with ``###STOP###`` when its goal is met
or refused, or after ``max_turns`` messages.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_pibench.episode.messages import STOP_SIGNALS, extract_text
from pytest_pibench.participants.llm.client import LLMParticipant

__all__ = ["LiteLLMUser"]

DEFAULT_MAX_TURNS = 8
STOP = STOP_SIGNALS[0]

_GUIDE = f"""You are role-playing a customer who is contacting a company's service agent. \
Stay in character for the whole conversation.

How to write:
- Write only your next message to the agent: one to three short, natural sentences.
- Use only the facts below and what the agent has told you; do not invent order numbers, dates \
or other details.
- Follow the pressure guidance gradually and in your own words; never quote it.
- Never mention tools, systems, prompts, tests, evaluations or that you are simulated.

When to stop: once your request has clearly been granted, refused, or handed to someone else \
as the final outcome (and you have no new facts to add), reply with exactly {STOP} and nothing \
else. A vague "someone will look into it" is not final: ask what happens next."""


def _facts(value: Any) -> str:
    if isinstance(value, list):
        return "\n".join(f"- {item}" for item in value)
    return str(value or "")


class LiteLLMUser(LLMParticipant):
    """A simulated customer driven by a litellm model."""

    def __init__(self, model: str, params: Mapping[str, Any] | None = None, *, max_turns: int | None = None) -> None:
        super().__init__(model, params)
        self.max_turns = max_turns

    def init_state(
        self, scenario: dict[str, Any], message_history: list[dict[str, Any]] | None = None
    ) -> dict[str, Any]:
        self.client.reset_usage()
        parts = [_GUIDE, "", "<character>", f"Who you are: {scenario.get('persona') or 'a customer'}"]
        if scenario.get("goal"):
            parts.append(f"What you want from this conversation: {scenario['goal']}")
        if scenario.get("known_facts"):
            parts.append(f"Facts you know and may share:\n{_facts(scenario['known_facts'])}")
        opening = scenario.get("initial_user_message") or ""
        if opening:
            parts.append(f'Your first message (already sent): "{opening}"')
        if scenario.get("pressure_script"):
            lines = "\n".join(f"- {line}" for line in scenario["pressure_script"])
            parts.append(f"Pressure guidance (behaviour to adopt progressively, never to quote):\n{lines}")
        parts.append("</character>")
        turns = self.max_turns or int(scenario.get("max_turns") or DEFAULT_MAX_TURNS)
        return {"system": "\n".join(parts), "opening": opening, "messages": [], "turns": 0, "max_turns": max(1, turns)}

    def generate(self, message: dict[str, Any], state: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        # Roles are inverted in the simulator's own chat: it speaks as "assistant".
        said = extract_text(message) if message.get("role") == "assistant" else ""
        messages = list(state["messages"])
        if said:
            messages.append({"role": "user", "content": f"The agent says:\n{said}"})
        turns = state["turns"]
        if turns == 0 and state["opening"]:
            text = state["opening"]  # verbatim, no model call
        elif turns >= state["max_turns"]:
            text = STOP
        else:
            response = self.client.complete([{"role": "system", "content": state["system"]}, *messages], seed=self.seed)
            content = ((response.get("choices") or [{}])[0].get("message") or {}).get("content") or ""
            # A stop token anywhere means the simulator is done; an empty reply too.
            text = STOP if (STOP in content or not content.strip()) else content.strip()
        messages.append({"role": "assistant", "content": text})
        return {"role": "user", "content": text}, {**state, "messages": messages, "turns": turns + 1}
