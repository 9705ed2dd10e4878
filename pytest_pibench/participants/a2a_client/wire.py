"""The A2A payloads of pi-bench: what the benchmark sends a purple agent, and how its reply is read.

Pure functions over JSON values (no a2a-sdk import), shared by the client
(:mod:`pytest_pibench.participants.a2a_client.client`) and the servers of
:mod:`pytest_pibench.a2a`. The envelope is standard A2A 1.x (a ``Message``
with a message id, the episode's context id and a ``data`` part); the keys of
the data part follow upstream pi-bench, so a purple agent written for it reads
the same fields:

Turn request (one per agent turn)::

    {"messages": [...],            # the conversation so far, OpenAI chat format
     "message": {...},             # the newest incoming message, pi-bench wire format (lossless)
     "benchmark_context": [...],   # policy and task nodes   } stateless mode only: with the
     "tools": [...],               # OpenAI function tools   } bootstrap they were sent once
     "context_id": "...",          # bootstrap mode: the id the purple agent returned
     "seed": 7}                    # when the run has a seed

Bootstrap request (once per episode, when the agent card declares
:data:`BOOTSTRAP_EXTENSION`): ``{"bootstrap": true, "benchmark_context",
"tools", "message_history", "run_id", "domain"}``; the reply carries a data part
``{"bootstrapped": true, "context_id": "..."}``.

Reply: a data part ``{"content": str | null, "tool_calls": [...]}`` (each call
OpenAI-style ``{"id", "function": {"name", "arguments"}}`` or flat ``{"id",
"name", "arguments"}``), a data part ``{"content": ...}``, or text parts.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from pytest_pibench.episode.messages import STOP_SIGNALS
from pytest_pibench.participants.openai_format import openai_messages, openai_tools

__all__ = [
    "BOOTSTRAP_EXTENSION",
    "A2AReplyError",
    "bootstrap_context_id",
    "card_declares_bootstrap",
    "narrow_numbers",
    "openai_messages",
    "openai_tools",
    "reply_message",
    "reply_payload",
]

BOOTSTRAP_EXTENSION = "urn:pi-bench:policy-bootstrap:v1"
"""The extension URI a purple agent's card declares when it keeps the policy, task and tools per context."""


class A2AReplyError(ValueError):
    """A purple agent's reply that does not make a message: the agent's fault (scored as ``agent_error``)."""


def card_declares_bootstrap(card: Mapping[str, Any]) -> bool:
    """Whether an agent card (its JSON) declares the bootstrap extension.

    The standard place is ``capabilities.extensions[].uri``; the legacy
    top-level ``extensions`` list of URIs (upstream's purple agents) is accepted too.
    """
    capabilities = card.get("capabilities")
    declared = capabilities.get("extensions") if isinstance(capabilities, Mapping) else None
    for entry in declared if isinstance(declared, list) else []:
        if isinstance(entry, Mapping) and entry.get("uri") == BOOTSTRAP_EXTENSION:
            return True
    legacy = card.get("extensions")
    return isinstance(legacy, list) and BOOTSTRAP_EXTENSION in legacy


def narrow_numbers(value: Any) -> Any:
    """``value`` with whole floats made ints again.

    A2A data parts are protobuf ``Value``s, which hold every number as a
    double: ``2`` arrives as ``2.0``. Narrowing on receipt gives ids, counts and
    quantities back their JSON type (a price of ``20.0`` becomes ``20``, equal
    in every comparison and re-typed by the tools' argument validation).
    """
    if isinstance(value, float):
        return int(value) if value.is_integer() and abs(value) < 2**53 else value
    if isinstance(value, dict):
        return {key: narrow_numbers(item) for key, item in value.items()}
    if isinstance(value, list):
        return [narrow_numbers(item) for item in value]
    return value


def reply_payload(message: Mapping[str, Any]) -> dict[str, Any]:
    """The data part a purple agent answers with, for an assistant message in pi-bench wire format."""
    payload: dict[str, Any] = {"content": message.get("content")}
    calls = message.get("tool_calls")
    if calls:
        payload["tool_calls"] = [
            {
                "id": c.get("id"),
                "type": "function",
                "function": {"name": c.get("name"), "arguments": json.dumps(c.get("arguments") or {})},
            }
            for c in calls
        ]
    return payload


def _tool_call(raw: Any, index: int) -> dict[str, Any]:
    if not isinstance(raw, Mapping):
        raise A2AReplyError(f"tool call {index} is not an object: {raw!r:.200}")
    function = raw.get("function")
    source = function if isinstance(function, Mapping) else raw
    name, arguments = source.get("name"), source.get("arguments")
    if not isinstance(name, str) or not name:
        raise A2AReplyError(f"tool call {index} has no name: {raw!r:.200}")
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except ValueError as exc:
            problem = f"tool call {name!r} has malformed JSON arguments: {exc}: {arguments[:200]!r}"
            raise A2AReplyError(problem) from None
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise A2AReplyError(f"tool call {name!r} has non-object arguments: {arguments!r:.200}")
    call_id = raw.get("id")
    return {"id": str(call_id) if call_id else f"call_{index}", "name": name, "arguments": arguments}


def reply_message(parts: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The assistant message (pi-bench wire format) in a purple agent's reply parts (JSON form).

    The first data part with ``tool_calls`` or ``content`` decides; otherwise
    the text parts, joined. An empty reply is the stop signal (as for the
    reference LLM agent: nothing to say ends the episode).

    Raises:
        A2AReplyError: the parts hold neither a usable data part nor text.
    """
    for part in parts:
        data = part.get("data")
        if isinstance(data, Mapping) and ("tool_calls" in data or "content" in data):
            content = data.get("content")
            if content is not None and not isinstance(content, str):
                raise A2AReplyError(f"reply content must be a string or null, got {type(content).__name__}")
            raw_calls = data.get("tool_calls") or []
            if not isinstance(raw_calls, list):
                raise A2AReplyError(f"reply tool_calls must be a list, got {type(raw_calls).__name__}")
            calls = [_tool_call(raw, index) for index, raw in enumerate(raw_calls)]
            message: dict[str, Any] = {"role": "assistant", "content": content if content else None}
            if calls:
                message["tool_calls"] = calls
            elif not (content and content.strip()):
                message["content"] = STOP_SIGNALS[0]
            return message
    texts = [part["text"] for part in parts if isinstance(part.get("text"), str)]
    if texts:
        text = "\n".join(texts)
        return {"role": "assistant", "content": text if text.strip() else STOP_SIGNALS[0]}
    kinds = sorted({key for part in parts for key in part if key in ("data", "raw", "url", "text")})
    raise A2AReplyError(f"the reply has no text and no pi-bench data part (parts: {kinds or 'none'})")


def bootstrap_context_id(parts: Sequence[Mapping[str, Any]]) -> str | None:
    """The ``context_id`` of a bootstrap reply's ``{"bootstrapped": true, ...}`` data part, if any."""
    for part in parts:
        data = part.get("data")
        if isinstance(data, Mapping) and data.get("bootstrapped") is True:
            context_id = data.get("context_id")
            if isinstance(context_id, str) and context_id:
                return context_id
    return None
