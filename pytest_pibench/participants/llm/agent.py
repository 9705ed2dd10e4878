"""The reference LLM agent (``--pibench-agent=litellm:<model>``).

Unlike upstream's reference agent, the system prompt with the policy and the
task context is sent on every call, not only the first.
"""

from __future__ import annotations

import json
from typing import Any

from pytest_pibench.episode.messages import STOP_SIGNALS
from pytest_pibench.participants.llm.client import LLMParticipant
from pytest_pibench.participants.openai_format import openai_messages, openai_tools

__all__ = ["AgentOutputError", "LiteLLMAgent"]

_INTRO = (
    "You are a service agent who must follow the organisation's written policy exactly. "
    "Use the tools to look up facts and to act; never invent facts, ids or tool results. "
    "Everything you write is read by the person you are helping."
)


class AgentOutputError(ValueError):
    """The model produced something the agent cannot turn into a valid message."""


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
        history = [m for msg in message_history or [] for m in openai_messages(msg)]
        return {"system": "\n\n".join(sections), "tools": openai_tools(tools), "messages": history}

    def generate(self, message: dict[str, Any], state: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        messages = [*state["messages"], *openai_messages(message)]
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
        messages += openai_messages(out)
        return out, {**state, "messages": messages}
