"""The message wire format shared with upstream (plain dicts), and its validation.

Participant messages (``assistant``/``user``)::

    {"role": "assistant", "content": "text"}
    {"role": "assistant", "content": None,
     "tool_calls": [{"id": "c1", "name": "lookup_order", "arguments": {"order_id": "A1"}}]}

Tool results produced by the environment::

    {"role": "tool", "id": "c1", "name": "lookup_order", "content": "<JSON string>",
     "requestor": "assistant", "error": False}
    {"role": "multi_tool", "tool_messages": [<tool message>, ...]}
"""

from __future__ import annotations

import uuid
from typing import Any

from pytest_pibench.transcript import extract_text  # re-exported: its home moved down for the checks

__all__ = [
    "STOP_SIGNALS",
    "build_tool_call",
    "extract_text",
    "is_stop_signal",
    "message_problem",
]

STOP_SIGNALS: tuple[str, ...] = ("###STOP###", "###TRANSFER###", "###OUT-OF-SCOPE###")
"""A message whose whole content is one of these ends the episode."""

_TOOL_CALL_KEYS = {"id", "name", "arguments", "requestor"}


def build_tool_call(
    name: str, arguments: dict[str, Any] | None = None, *, call_id: str | None = None
) -> dict[str, Any]:
    """A tool call in the wire format (``id`` defaults to a fresh uuid)."""
    return {"id": call_id or uuid.uuid4().hex, "name": name, "arguments": dict(arguments or {})}


def is_stop_signal(message: dict[str, Any]) -> bool:
    """True iff the content is exactly one of :data:`STOP_SIGNALS` (no trimming)."""
    content = message.get("content")
    return isinstance(content, str) and content in STOP_SIGNALS


def message_problem(message: Any, role: str = "assistant") -> str | None:
    """Why ``message`` is not a valid participant message, or None when it is.

    The rules are upstream's (strict): a dict with the expected ``role`` and
    either non-blank text or a non-empty ``tool_calls`` list; each call has a
    non-blank ``id`` and ``name`` and ``arguments`` as an object (a JSON
    string is rejected).
    """
    if message is None:
        return "returned None instead of a message"
    if not isinstance(message, dict):
        return f"a message must be a dict, got {type(message).__name__}"
    if message.get("role") != role:
        return f"role must be {role!r}, got {message.get('role')!r}"
    calls = message.get("tool_calls")
    if calls is not None:
        if not isinstance(calls, list) or not calls:
            return "tool_calls must be a non-empty list when present"
        for index, call in enumerate(calls):
            problem = _tool_call_problem(call)
            if problem:
                return f"tool_calls[{index}]: {problem}"
        return None
    content = message.get("content")
    if isinstance(content, list):
        content = extract_text(message)
    if not isinstance(content, str) or not content.strip():
        return "a message needs non-blank text content or tool calls"
    return None


def _tool_call_problem(call: Any) -> str | None:
    if not isinstance(call, dict):
        return f"a tool call must be a dict, got {type(call).__name__}"
    extra = set(call) - _TOOL_CALL_KEYS
    if extra:
        return f"unexpected keys {sorted(extra)} (use {{id, name, arguments}}, not OpenAI's envelope)"
    for key in ("id", "name"):
        value = call.get(key)
        if not isinstance(value, str) or not value.strip():
            return f"{key!r} must be a non-blank string"
    if not isinstance(call.get("arguments"), dict):
        kind = type(call.get("arguments")).__name__
        return f"'arguments' must be an object, got {kind} (decode JSON strings first)"
    if call.get("requestor") not in (None, "assistant", "user"):
        return "'requestor' must be 'assistant' or 'user'"
    return None
