"""The reference LLM agent (``--pibench-agent=litellm:<model>``).

Unlike upstream's reference agent, the system prompt with the policy and the
task context is sent on every call, not only the first.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pytest_pibench.episode.messages import STOP_SIGNALS, extract_text
from pytest_pibench.participants.llm.client import LLMParticipant

__all__ = ["AgentOutputError", "LiteLLMAgent"]

_INTRO = (
    "You are a service agent who must follow the organisation's written policy exactly. "
    "Use the tools to look up facts and to act; never invent facts, ids or tool results. "
    "Everything you write is read by the person you are helping."
)


class AgentOutputError(ValueError):
    """The model produced something the agent cannot turn into a valid message."""


def openai_tools(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Our ``{name, description, parameters}`` schemas in OpenAI's function-tool envelope."""
    return [
        {
            "type": "function",
            "function": {
                "name": t["name"],
                "description": t.get("description", ""),
                "parameters": t.get("parameters") or {"type": "object", "properties": {}},
            },
        }
        for t in tools
    ]


def _to_openai(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A wire-format message as the OpenAI chat messages the model sees."""
    role = message.get("role")
    if role == "multi_tool":
        return [m for inner in message.get("tool_messages") or [] for m in _to_openai(inner)]
    if role == "tool":
        return [{"role": "tool", "tool_call_id": str(message.get("id", "")), "content": str(message.get("content"))}]
    out: dict[str, Any] = {
        "role": "assistant" if role == "assistant" else "user",
        "content": extract_text(dict(message)),
    }
    calls = message.get("tool_calls")
    if calls:
        out["tool_calls"] = [
            {
                "id": c["id"],
                "type": "function",
                "function": {"name": c["name"], "arguments": json.dumps(c.get("arguments") or {})},
            }
            for c in calls
        ]
        out["content"] = out["content"] or None
    return [out]


class LiteLLMAgent(LLMParticipant):
    """An agent backed by any litellm model id (``openai/gpt-4o-mini``, ``anthropic/...``).

    ``params`` go to ``litellm.completion`` (see :class:`LLMClient` for ours).
    """

    def init_state(
        self,
        benchmark_context: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        message_history: list[dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        self.client.reset_usage()
        sections = [_INTRO]
        for node in benchmark_context:
            if node.get("content"):
                kind = str(node.get("kind", "context"))
                sections.append(f"<{kind}>\n{node['content']}\n</{kind}>")
        history = [m for msg in message_history or [] for m in _to_openai(msg)]
        return {"system": "\n\n".join(sections), "tools": openai_tools(tools), "messages": history}

    def generate(self, message: dict[str, Any], state: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        messages = [*state["messages"], *_to_openai(message)]
        response = self.client.complete(
            [{"role": "system", "content": state["system"]}, *messages],  # the policy on every call
            tools=state["tools"] or None,
            seed=self.seed,
        )
        choice = (response.get("choices") or [{}])[0].get("message") or {}
        content = choice.get("content")
        calls: list[dict[str, Any]] = []
        for raw in choice.get("tool_calls") or []:
            function = raw.get("function") or {}
            name, arguments = function.get("name"), function.get("arguments")
            if isinstance(arguments, str):
                try:
                    arguments = json.loads(arguments) if arguments.strip() else {}
                except ValueError as exc:
                    raise AgentOutputError(
                        f"the model sent malformed JSON arguments for tool {name!r}: {exc}: {arguments[:200]!r}"
                    ) from None
            if not isinstance(arguments, dict):
                raise AgentOutputError(f"the model sent non-object arguments for tool {name!r}: {arguments!r}")
            calls.append({"id": raw.get("id") or f"call_{len(calls)}", "name": name, "arguments": arguments})
        out: dict[str, Any] = {"role": "assistant", "content": content if content else None}
        if calls:
            out["tool_calls"] = calls
        elif not (isinstance(content, str) and content.strip()):
            out["content"] = STOP_SIGNALS[0]  # an empty completion ends the episode
        messages += _to_openai(out)
        return out, {**state, "messages": messages}
