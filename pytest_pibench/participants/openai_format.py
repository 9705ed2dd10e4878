"""Our messages and tool schemas in OpenAI's chat format: what the litellm agent and the A2A adapter send.

One conversion for both, so an agent behind A2A sees exactly what the reference agent's model sees.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from pytest_pibench.episode.messages import extract_text

__all__ = ["openai_messages", "openai_tools"]


def openai_tools(tools: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
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


def openai_messages(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One pi-bench wire message as OpenAI chat messages (a ``multi_tool`` becomes several)."""
    role = message.get("role")
    if role == "multi_tool":
        return [m for inner in message.get("tool_messages") or [] for m in openai_messages(inner)]
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
