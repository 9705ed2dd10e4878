"""Test helpers: a scripted OpenAI-compatible server on 127.0.0.1 (no network, real HTTP).

Use it to exercise LLM agents, users and judges offline, like httpx's
``MockTransport`` but over a real socket, so litellm's whole stack runs::

    from pytest_pibench.testing import FakeLLMServer, reply

    with FakeLLMServer() as server:
        server.push(reply.tool_call("lookup_order", {"order_id": "ORD-1"}), reply.text("Done."))
        # point litellm at it: model "openai/test-model", api_base=server.base_url, api_key="x"
        ...
        assert len(server.requests) == 2

Replies are consumed in order; when the queue is empty, ``default`` answers
(``reply.text("###STOP###")`` unless set). ``handler`` may instead compute a
reply from each request body. ``fault_rate`` injects 429/500 answers at random
(seeded), ``latency`` delays every answer.
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["FakeLLMServer", "Reply", "reply"]


@dataclass(frozen=True)
class Reply:
    """One scripted answer: a status, a body (dict or raw text) and an optional delay."""

    status: int = 200
    body: Any = None
    delay: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)


class _Replies:
    """Constructors for :class:`Reply` (``reply.text``, ``reply.tool_call``, ...)."""

    @staticmethod
    def _completion(message: dict[str, Any], finish: str, usage: tuple[int, int]) -> dict[str, Any]:
        return {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": 1_700_000_000,
            "model": "fake-model",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": sum(usage)},
        }

    def text(self, content: str, *, usage: tuple[int, int] = (100, 20), delay: float = 0.0) -> Reply:
        message = {"role": "assistant", "content": content}
        return Reply(body=self._completion(message, "stop", usage), delay=delay)

    def tool_calls(
        self, *calls: tuple[str, Any], content: str | None = None, usage: tuple[int, int] = (120, 30)
    ) -> Reply:
        """Tool calls; a dict of arguments is JSON-encoded, a string is sent as-is (for malformed JSON)."""
        items = [
            {
                "id": f"call_{i}",
                "type": "function",
                "function": {"name": name, "arguments": args if isinstance(args, str) else json.dumps(args)},
            }
            for i, (name, args) in enumerate(calls)
        ]
        message = {"role": "assistant", "content": content, "tool_calls": items}
        return Reply(body=self._completion(message, "tool_calls", usage))

    def tool_call(self, name: str, arguments: Any, **kwargs: Any) -> Reply:
        return self.tool_calls((name, arguments), **kwargs)

    def error(self, status: int, message: str = "fake failure", *, retry_after: float | None = None) -> Reply:
        headers = {"Retry-After": str(retry_after)} if retry_after is not None else {}
        return Reply(
            status=status, body={"error": {"message": message, "type": "fake", "code": status}}, headers=headers
        )

    def raw(self, text: str, status: int = 200) -> Reply:
        """A body that is not what a client expects (malformed output)."""
        return Reply(status=status, body=text)

    def hang(self, seconds: float) -> Reply:
        """Answer only after ``seconds`` (longer than the client timeout: a timeout)."""
        return Reply(body=self._completion({"role": "assistant", "content": "late"}, "stop", (1, 1)), delay=seconds)


reply = _Replies()


class FakeLLMServer:
    """A threaded HTTP server answering ``POST /v1/chat/completions`` from a script."""

    def __init__(
        self,
        *,
        handler: Callable[[dict[str, Any]], Reply] | None = None,
        default: Reply | None = None,
        latency: float = 0.0,
        fault_rate: float = 0.0,
        seed: int = 0,
    ) -> None:
        self.handler = handler
        self.default = default or reply.text("###STOP###")
        self.latency = latency
        self.fault_rate = fault_rate
        self.requests: list[dict[str, Any]] = []
        self.faults = 0
        self.in_flight = 0
        self.peak_in_flight = 0
        """The most requests the server was answering at once (what a provider limit caps)."""
        self._queue: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._random = random.Random(seed)
        self._server: ThreadingHTTPServer | None = None

    def push(self, *replies: Reply) -> None:
        with self._lock:
            self._queue.extend(replies)

    @property
    def base_url(self) -> str:
        assert self._server is not None, "start the server first"
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def _next(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            self.requests.append(body)
            if self.fault_rate and self._random.random() < self.fault_rate:
                self.faults += 1
                return reply.error(self._random.choice([429, 500, 503]))
            if self._queue:
                return self._queue.popleft()
        return self.handler(body) if self.handler else self.default

    def start(self) -> FakeLLMServer:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body go out as separate writes: without this, Nagle's algorithm and the
            # client's delayed ACK add about 40 ms to every answer, on top of the configured latency.
            disable_nagle_algorithm = True

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                return

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                except ValueError:
                    body = {}
                answer = owner._next(body)
                with owner._lock:
                    owner.in_flight += 1
                    owner.peak_in_flight = max(owner.peak_in_flight, owner.in_flight)
                try:
                    if owner.latency or answer.delay:
                        time.sleep(owner.latency + answer.delay)
                finally:
                    with owner._lock:
                        owner.in_flight -= 1
                payload = answer.body if isinstance(answer.body, str) else json.dumps(answer.body)
                data = payload.encode()
                try:
                    self.send_response(answer.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for key, value in answer.headers.items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout)
                    pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, name="fake-llm", daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
