"""Purple agents in the legacy forms found in the wild (the reference example's dialect), served on 127.0.0.1.

Each wraps our purple adapter (which speaks 0.3's ``message/send`` too) in an ASGI layer that changes
one thing: the card only at ``/.well-known/agent.json`` (0.3's path, 0.3's fields), a card whose
``url`` is empty, a reply that is ``{"status": {"message": ...}}`` (neither a Task nor a Message), or a
bootstrap extension the card declares but the agent answers with an ordinary turn.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from a2a_servers import oracle_for

from pytest_pibench.a2a.purple import purple_app
from pytest_pibench.a2a.serving import ServerThread
from pytest_pibench.participants.a2a_client.wire import BOOTSTRAP_EXTENSION

LEGACY_FORMS = ("legacy_card_path", "empty_card_url", "status_message_reply", "ignored_bootstrap")
GARBAGE = "garbage_reply"
"""Not a legacy form: a reply whose result is neither a Task, a Message nor a status message."""


def _card_03(url: str, *, declare_bootstrap: bool) -> dict[str, Any]:
    extensions = [{"uri": BOOTSTRAP_EXTENSION, "required": False}] if declare_bootstrap else []
    return {
        "name": "legacy-purple", "description": "a purple agent in the reference example's dialect", "url": url,
        "version": "1.0.0", "protocolVersion": "0.3.0", "preferredTransport": "JSONRPC",
        "capabilities": {"streaming": False, "extensions": extensions}, "defaultInputModes": ["text"],
        "defaultOutputModes": ["text"], "skills": [],
    }  # fmt: skip


class _Legacy:
    """ASGI: the wrapped purple app, changed in one ``form``."""

    def __init__(self, app: Any, form: str, url: str) -> None:
        self.app, self.form, self.url = app, form, url

    async def __call__(self, scope: dict[str, Any], receive: Callable[..., Any], send: Callable[..., Any]) -> None:
        path = scope.get("path", "")
        if scope["type"] == "http" and path.startswith("/.well-known/"):
            if path != "/.well-known/agent.json" and self.form == "legacy_card_path":
                return await self._json(send, {"error": "not found"}, 404)
            card = _card_03("" if self.form == "empty_card_url" else self.url,
                            declare_bootstrap=self.form == "ignored_bootstrap")  # fmt: skip
            return await self._json(send, card, 200)
        if scope["type"] != "http" or self.form not in ("status_message_reply", "ignored_bootstrap", GARBAGE):
            return await self.app(scope, receive, send)
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        request = json.loads(body or b"{}")
        if self.form == "ignored_bootstrap" and _is_bootstrap(request):  # an ordinary turn, no context id
            reply = {"kind": "message", "role": "agent", "messageId": "m0",
                     "parts": [{"kind": "text", "text": "Hello! How can I help?"}]}  # fmt: skip
            return await self._json(send, {"jsonrpc": "2.0", "id": request.get("id"), "result": reply}, 200)
        answer = await _call(self.app, scope, body)
        if self.form == "status_message_reply" and isinstance(answer.get("result"), dict):
            answer = {**answer, "result": {"status": {"message": answer["result"]}}}
        if self.form == GARBAGE and isinstance(answer.get("result"), dict):
            answer = {**answer, "result": {"status": {"state": "working"}, "note": "no message anywhere"}}
        await self._json(send, answer, 200)

    @staticmethod
    async def _json(send: Callable[..., Any], data: Any, status: int) -> None:
        raw = json.dumps(data).encode()
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(raw)).encode())]})
        await send({"type": "http.response.body", "body": raw})  # fmt: skip


def _is_bootstrap(request: dict[str, Any]) -> bool:
    parts = ((request.get("params") or {}).get("message") or {}).get("parts") or []
    return any(isinstance(p.get("data"), dict) and p["data"].get("bootstrap") for p in parts)


async def _call(app: Any, scope: dict[str, Any], body: bytes) -> dict[str, Any]:
    sent: list[dict[str, Any]] = []
    delivered = False

    async def receive() -> dict[str, Any]:
        nonlocal delivered
        if delivered:
            return {"type": "http.disconnect"}
        delivered = True
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app(scope, receive, send)
    return json.loads(b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body"))


@contextmanager
def serve_legacy(form: str, make_agent: Callable[..., Any] = oracle_for) -> Iterator[str]:
    """A purple agent in legacy ``form`` (one of :data:`LEGACY_FORMS`) on a free port; yields its base URL."""
    assert form in (*LEGACY_FORMS, GARBAGE)
    with ServerThread(lambda url: _Legacy(purple_app(make_agent, name="legacy", url=url, bootstrap=False), form,
                                          url)) as server:  # fmt: skip
        yield server.url
