"""How ``pi play`` shows a person what an agent receives: context nodes, tool schemas, messages.

Everything rendered here is built from the arguments an agent gets
(``init_state``'s ``benchmark_context`` and ``tools``, the messages handed to
``generate``) and nothing else: the scenario itself never reaches this module.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from pytest_pibench.episode.messages import STOP_SIGNALS

__all__ = [
    "render_context",
    "render_ending",
    "render_message",
    "render_messages",
    "render_tools",
    "since_last_action",
]


def render_context(nodes: Iterable[Mapping[str, Any]], kinds: tuple[str, ...] = ("policy", "task")) -> str:
    """The context nodes of ``kinds`` (policy, task), each under a heading, with the task id agents get."""
    parts = []
    for node in nodes:
        kind = str(node.get("kind", ""))
        if kind not in kinds:
            continue
        task_id = (node.get("metadata") or {}).get("scenario_id", "")
        heading = f"== {kind.upper()} ==" + (f"  (id {task_id})" if kind == "task" and task_id else "")
        parts.append(f"{heading}\n{str(node.get('content', '')).rstrip()}")
    return "\n\n".join(parts)


def _type_of(spec: Mapping[str, Any]) -> str:
    if spec.get("enum"):
        return "|".join(str(v) for v in spec["enum"])
    kind = spec.get("type")
    if isinstance(kind, list):
        return "|".join(str(k) for k in kind)
    if kind == "array" and isinstance(spec.get("items"), Mapping):
        return f"list of {_type_of(spec['items'])}"
    if not kind and spec.get("anyOf"):
        return "|".join(_type_of(option) for option in spec["anyOf"] if isinstance(option, Mapping))
    return str(kind or "any")


def render_tools(tools: Iterable[Mapping[str, Any]]) -> str:
    """Each tool with its description and parameters (type, required or optional, description)."""
    blocks = []
    for tool in tools:
        parameters = tool.get("parameters") or {}
        required = set(parameters.get("required") or ())
        properties = parameters.get("properties") or {}
        signature = " ".join(f"{name}=" if name in required else f"[{name}=]" for name in properties)
        lines = [f"{tool.get('name')} {signature}".rstrip()]
        lines += [f"    {line}" for line in str(tool.get("description") or "").strip().splitlines()]
        for name, spec in properties.items():
            need = "required" if name in required else "optional"
            note = str(spec.get("description") or "").strip().replace("\n", " ")
            lines.append(f"    - {name} ({_type_of(spec)}, {need})" + (f": {note}" if note else ""))
        blocks.append("\n".join(lines))
    return "== TOOLS ==\n" + "\n\n".join(blocks)


def _result_text(content: Any) -> str:
    try:
        value = json.loads(content)
    except (TypeError, ValueError):
        return str(content)
    return value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False)


def _tool_result(message: Mapping[str, Any]) -> str:
    what = "error from" if message.get("error") else "result of"
    body = _result_text(message.get("content")).replace("\n", "\n    ")
    return f"[{what} {message.get('name')}]\n    {body}"


def render_message(message: Mapping[str, Any]) -> str:
    """One message as a person reads it: the customer's words, your words or calls, tool results."""
    role = message.get("role")
    content = message.get("content")
    if role == "user":
        if content in STOP_SIGNALS:
            return "customer: (ends the conversation)"
        return f"customer: {content}"
    if role == "tool":
        return _tool_result(message)
    if role == "multi_tool":
        return "\n".join(_tool_result(m) for m in message.get("tool_messages") or [])
    if role == "assistant":
        calls = message.get("tool_calls") or []
        lines = [f"you: {content}"] if content else []
        lines += [f"you: call {c.get('name')} {json.dumps(c.get('arguments'), ensure_ascii=False)}" for c in calls]
        return "\n".join(lines) or "you: (nothing)"
    return f"{role}: {content}"


def render_messages(messages: Iterable[Mapping[str, Any]]) -> str:
    return "\n".join(render_message(m) for m in messages)


_ENDINGS = {
    "agent_stop": "You ended the conversation.",
    "user_stop": "The customer ended the conversation.",
    "max_steps": "The step limit was reached.",
    "too_many_errors": "Too many failed tool calls.",
    "tool_call_limit": "Too many tool calls.",
}


def render_ending(reason: str, decision: str | None) -> str:
    """How a play ended, and the player's own recorded decision (never the score)."""
    ending = _ENDINGS.get(reason, f"The episode ended ({reason}).")
    return f"== THE PLAY IS OVER ==\n{ending}\nYour recorded decision: {decision or 'none'}"


def since_last_action(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages after the player's last one (after the opening greeting when the player has not acted)."""
    last = max((i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=-1)
    return messages[last + 1 :]
