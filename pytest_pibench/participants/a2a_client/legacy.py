"""The legacy forms of purple agents found in the wild, read as what they mean, each with a warning.

Most purple agents were built from the reference example, which speaks an older, looser A2A
dialect. Each form below is accepted and named in the row's warnings; anything else a reply
holds that is neither a Task nor a Message stays the agent's error.

- the card only at 0.3's path, ``/.well-known/agent.json`` (:data:`LEGACY_CARD_PATH`);
- a card whose ``url`` is empty (the reference example's default): the URL the user named serves;
- a reply ``{"result": {"status": {"message": {...}}}}``: the message is the reply;
- a card that declares the bootstrap extension whose agent answers the handshake with an ordinary
  turn (A2A lets a server leave a requested extension inactive): the episode is played stateless.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Mapping
from typing import Any

import httpx

from pytest_pibench.participants.a2a_client.wire import narrow_numbers

__all__ = [
    "EMPTY_CARD_URL",
    "IGNORED_BOOTSTRAP",
    "LEGACY_CARD_PATH",
    "LEGACY_CARD_PATH_USED",
    "STATUS_MESSAGE_REPLY",
    "capture_reply",
    "complete_card",
    "status_message_parts",
    "take_reply",
]

LEGACY_CARD_PATH = "/.well-known/agent.json"
LEGACY_CARD_PATH_USED = "legacy form: the agent card is only at /.well-known/agent.json (A2A 0.3's path)"
EMPTY_CARD_URL = 'legacy form: the agent card\'s "url" is empty; the URL the run named was used'
STATUS_MESSAGE_REPLY = (
    'legacy form: a reply {"status": {"message": ...}} (neither a Task nor a Message) was read as its message'
)
IGNORED_BOOTSTRAP = (
    "legacy form: the card declares the bootstrap extension but the agent answered the handshake with an "
    "ordinary turn; the episode was played stateless (every turn carries the policy, task and tools)"
)

_kept: deque[tuple[bytes, bytes]] = deque(maxlen=256)
"""Recent replies that may be the status-message form, with their requests' bodies (one event loop writes it)."""


def complete_card(card: dict[str, Any], url: str) -> tuple[dict[str, Any], list[str]]:
    """``card`` with the named ``url`` where it has no interface and an empty ``url``; the notes of what changed."""
    if card.get("supportedInterfaces") or card.get("url"):
        return card, []
    return {**card, "url": url}, [EMPTY_CARD_URL]


async def capture_reply(response: httpx.Response) -> None:
    """An httpx response hook: keep a JSON-RPC reply that mentions ``status`` (read again only if the SDK fails).

    On the hot path this is one byte search: nothing is parsed here. A Message reply
    (the common one) holds no ``"status"`` key and is not kept.
    """
    if response.request.method != "POST":
        return
    body = await response.aread()  # the SDK reads the same cached bytes
    if b'"status"' in body:
        _kept.append((response.request.content, body))


def take_reply(message_id: str) -> Any:
    """The reply to the request that carried ``message_id``, parsed (None if none is kept)."""
    needle = message_id.encode()
    for request, body in reversed(_kept):
        if needle in request:
            try:
                return json.loads(body)
            except ValueError:
                return None
    return None


def status_message_parts(body: Any) -> list[dict[str, Any]] | None:
    """The parts of a ``{"result": {"status": {"message": ...}}}`` reply, as the SDK gives parts; None otherwise."""
    result = body.get("result") if isinstance(body, Mapping) else None
    status = result.get("status") if isinstance(result, Mapping) else None
    message = status.get("message") if isinstance(status, Mapping) else None
    raw_parts = message.get("parts") if isinstance(message, Mapping) else None
    if not isinstance(raw_parts, list) or not raw_parts:
        return None
    parts: list[dict[str, Any]] = []
    for part in raw_parts:
        if not isinstance(part, Mapping):
            return None
        if isinstance(part.get("text"), str):
            parts.append({"text": part["text"]})
        elif isinstance(part.get("data"), Mapping):
            parts.append({"data": narrow_numbers(dict(part["data"]))})
        else:
            return None  # a part of no known kind: not this form
    return parts
