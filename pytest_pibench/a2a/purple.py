"""Serve a pi-bench agent as an A2A purple agent: an a2a-sdk server on Starlette.

Any object with the agent protocol (``init_state``, ``generate``, ...) can be
served, which is how the demo wraps the litellm reference agent and how the
tests serve the oracle::

    app = purple_app(lambda context, tools: LiteLLMAgent("openai/gpt-4o-mini", {}),
                     name="my-agent", url="http://127.0.0.1:8766")
    uvicorn.run(app, host="127.0.0.1", port=8766)

One session per A2A context (an episode): the agent object, its state, and a
lock, since turns of one context arrive in order. With ``bootstrap=True`` the
card declares :data:`~pytest_pibench.participants.a2a_client.wire.BOOTSTRAP_EXTENSION`
and the policy, task and tools arrive once; a stateless request (all of it,
every turn) opens the session on its first turn. Sessions are bounded
(``max_sessions``, oldest dropped first): a dropped context gets a JSON-RPC
error, never a wrong answer.
"""

from __future__ import annotations

import asyncio
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from a2a.helpers import new_data_message
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore
from a2a.types import a2a_pb2
from a2a.utils.errors import InvalidParamsError, UnsupportedOperationError
from google.protobuf.json_format import MessageToDict
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route

from pytest_pibench.participants.a2a_client.wire import (
    BOOTSTRAP_EXTENSION,
    narrow_numbers,
    openai_messages,
    reply_payload,
)

__all__ = ["AgentMaker", "PurpleExecutor", "purple_app", "purple_card"]

AgentMaker = Callable[[list[dict[str, Any]], list[dict[str, Any]]], Any]
"""``(benchmark_context, tools) -> agent``: makes the agent of one episode (tools in our schema format)."""


@dataclass
class _Session:
    agent: Any
    state: Any
    lock: threading.Lock = field(default_factory=threading.Lock)

    def turn(self, message: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            reply, self.state = self.agent.generate(message, self.state)
            return dict(reply)


def _our_tools(tools: Any) -> list[dict[str, Any]]:
    """OpenAI function tools (what the request carries) back in our ``{name, description, parameters}`` form."""
    out = []
    for tool in tools if isinstance(tools, list) else []:
        function = tool.get("function") if isinstance(tool, Mapping) else None
        source = function if isinstance(function, Mapping) else tool
        if isinstance(source, Mapping) and source.get("name"):
            out.append(
                {
                    "name": source["name"],
                    "description": source.get("description", ""),
                    "parameters": source.get("parameters") or {"type": "object", "properties": {}},
                }
            )
    return out


def _incoming(data: Mapping[str, Any]) -> dict[str, Any]:
    """The newest incoming message: ours when sent (lossless), else rebuilt from the OpenAI conversation."""
    message = data.get("message")
    if isinstance(message, Mapping):
        return dict(message)
    tail: list[Mapping[str, Any]] = []
    for item in reversed(data.get("messages") or []):
        if not isinstance(item, Mapping) or item.get("role") == "assistant":
            break
        tail.insert(0, item)
    if not tail:
        raise InvalidParamsError(message="the request carries no new user or tool message")
    if tail[-1].get("role") != "tool":
        return {"role": "user", "content": str(tail[-1].get("content") or "")}
    tools = [
        {"role": "tool", "id": str(m.get("tool_call_id", "")), "content": str(m.get("content")),
         "requestor": "assistant"}
        for m in tail
        if m.get("role") == "tool"
    ]
    return tools[0] if len(tools) == 1 else {"role": "multi_tool", "tool_messages": tools}


def _mid_conversation(data: Mapping[str, Any]) -> bool:
    """Whether the agent already spoke in this conversation (past the history it was opened with)."""
    history = len([m for item in data.get("message_history") or [] for m in openai_messages(item)])
    later = (data.get("messages") or [])[history:]
    return any(isinstance(m, Mapping) and m.get("role") == "assistant" for m in later)


class PurpleExecutor(AgentExecutor):
    """Runs one agent turn per A2A message (the agent's own calls run on a worker thread)."""

    def __init__(self, make_agent: AgentMaker, *, max_sessions: int = 4096) -> None:
        self.make_agent = make_agent
        self.max_sessions = max_sessions
        self._sessions: OrderedDict[str, _Session] = OrderedDict()

    def _open(self, data: Mapping[str, Any]) -> _Session:
        context = list(data.get("benchmark_context") or [])
        tools = _our_tools(data.get("tools"))
        agent = self.make_agent(context, tools)
        seed = data.get("seed")
        if isinstance(seed, int) and hasattr(agent, "set_seed"):
            agent.set_seed(seed)
        history = [dict(m) for m in data.get("message_history") or [] if isinstance(m, Mapping)]
        return _Session(agent, agent.init_state(context, tools, history))

    def _keep(self, key: str, session: _Session) -> None:
        self._sessions[key] = session
        while len(self._sessions) > self.max_sessions:
            self._sessions.popitem(last=False)

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        message = context.message
        received = message.parts if message else []
        parts = [narrow_numbers(MessageToDict(p.data)) for p in received if p.HasField("data")]
        data = next((p for p in parts if isinstance(p, dict)), None)
        if data is None:
            raise InvalidParamsError(message="expected a data part with the pi-bench payload")
        key = str(context.context_id or "")
        if data.get("bootstrap") is True:
            self._keep(key, await asyncio.to_thread(self._open, data))
            reply: dict[str, Any] = {"bootstrapped": True, "context_id": key}
        else:
            session_key = str(data.get("context_id") or key)
            session = self._sessions.get(session_key)
            if session is None:
                if "benchmark_context" not in data:
                    raise InvalidParamsError(message=f"unknown context {session_key!r}: bootstrap first")
                if _mid_conversation(data):  # its state is gone: answering would be answering blind
                    raise InvalidParamsError(message=f"unknown context {session_key!r} in mid-conversation")
                session = await asyncio.to_thread(self._open, data)
                self._keep(session_key, session)
            else:
                self._sessions.move_to_end(session_key)
            reply = reply_payload(await asyncio.to_thread(session.turn, _incoming(data)))
        await event_queue.enqueue_event(new_data_message(reply, media_type="application/json", context_id=key))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise UnsupportedOperationError(message="a turn cannot be cancelled")


def purple_card(name: str, url: str, *, bootstrap: bool = True, description: str = "") -> a2a_pb2.AgentCard:
    """The agent card of a served agent: JSON-RPC at ``url``, the bootstrap extension when ``bootstrap``."""
    card = a2a_pb2.AgentCard(
        name=name,
        description=description or "A policy-following service agent, served for pi-bench over A2A.",
        version="1.0",
        default_input_modes=["application/json"],
        default_output_modes=["application/json"],
    )
    card.supported_interfaces.add(url=url, protocol_binding="JSONRPC", protocol_version="1.0")
    card.supported_interfaces.add(url=url, protocol_binding="JSONRPC", protocol_version="0.3")  # 0.3 clients too
    card.capabilities.streaming = False
    if bootstrap:
        card.capabilities.extensions.add(
            uri=BOOTSTRAP_EXTENSION, description="Policy, task and tools once per context", required=False
        )
    card.skills.add(
        id="policy_compliant_service",
        name="Policy-compliant service",
        description="Handles a customer's or employee's request under the organisation's written policy.",
        tags=["policy", "compliance"],
    )
    return card


def purple_app(
    make_agent: AgentMaker, *, name: str, url: str, bootstrap: bool = True, max_sessions: int = 4096
) -> Starlette:
    """A Starlette app serving the agents ``make_agent`` makes: the card, JSON-RPC at ``/``, ``/health``."""
    card = purple_card(name, url, bootstrap=bootstrap)
    handler = DefaultRequestHandler(
        agent_executor=PurpleExecutor(make_agent, max_sessions=max_sessions),
        task_store=InMemoryTaskStore(),
        agent_card=card,
    )

    async def health(request: Any) -> JSONResponse:
        return JSONResponse({"status": "ok", "name": name})

    routes = [
        *create_agent_card_routes(card),
        *create_jsonrpc_routes(handler, rpc_url="/", enable_v0_3_compat=True),  # message/send of 0.3 clients too
        Route("/health", health, methods=["GET"]),
    ]
    return Starlette(routes=routes)
