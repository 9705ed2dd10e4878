"""Serve a simulated user over A2A (the other side of ``--pibench-user=a2a:<url>``).

    app = user_app(lambda: ScriptedUser(), name="scripted-user", url="http://127.0.0.1:9020")

One session per A2A context (an episode), bounded like the purple server's.
"""

from __future__ import annotations

import asyncio
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
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

from pytest_pibench.participants.a2a_client.wire import narrow_numbers
from pytest_pibench.transcript import TraceEntry

__all__ = ["UserExecutor", "user_app"]


class _Session:
    def __init__(self, user: Any, state: Any) -> None:
        self.user, self.state, self.lock = user, state, threading.Lock()

    def turn(self, data: Mapping[str, Any]) -> dict[str, Any]:
        with self.lock:
            observe = getattr(self.user, "observe", None)
            if callable(observe) and "trace" in data:
                trace = [TraceEntry.from_dict(entry, i) for i, entry in enumerate(data.get("trace") or [])]
                observe(trace, list(data.get("messages") or []))
            reply, self.state = self.user.generate(dict(data.get("message") or {}), self.state)
            return {"role": "user", "content": str(reply.get("content") or "")}


class UserExecutor(AgentExecutor):
    """Runs the simulated users ``make_user`` makes, one per A2A context."""

    def __init__(self, make_user: Callable[[], Any], *, max_sessions: int = 4096) -> None:
        self.make_user = make_user
        self.max_sessions = max_sessions
        self._sessions: OrderedDict[str, _Session] = OrderedDict()

    def _open(self, data: Mapping[str, Any]) -> _Session:
        user = self.make_user()
        if isinstance(data.get("seed"), int) and hasattr(user, "set_seed"):
            user.set_seed(data["seed"])
        history = [dict(m) for m in data.get("message_history") or []]
        return _Session(user, user.init_state(dict(data.get("scenario") or {}), history))

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        received = context.message.parts if context.message else []
        data = next((narrow_numbers(MessageToDict(p.data)) for p in received if p.HasField("data")), None)
        if not isinstance(data, dict):
            raise InvalidParamsError(message="expected a data part (init, message or stop)")
        key = str(context.context_id or "")
        if data.get("init") is True:
            self._sessions[key] = await asyncio.to_thread(self._open, data)
            while len(self._sessions) > self.max_sessions:
                self._sessions.popitem(last=False)
            reply: dict[str, Any] = {"ready": True}
        elif data.get("stop") is True:
            self._sessions.pop(key, None)
            reply = {"stopped": True}
        else:
            session = self._sessions.get(key)
            if session is None:
                raise InvalidParamsError(message=f"unknown context {key!r}: send the init message first")
            reply = {"message": await asyncio.to_thread(session.turn, data)}
        await event_queue.enqueue_event(new_data_message(reply, context_id=key))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise UnsupportedOperationError(message="a turn cannot be cancelled")


def user_app(make_user: Callable[[], Any], *, name: str, url: str, max_sessions: int = 4096) -> Starlette:
    """A Starlette app serving the simulated users ``make_user`` makes."""
    card = a2a_pb2.AgentCard(
        name=name, description="A simulated customer or employee for pi-bench episodes.", version="1.0",
        default_input_modes=["application/json"], default_output_modes=["application/json"],
    )  # fmt: skip
    card.supported_interfaces.add(url=url, protocol_binding="JSONRPC", protocol_version="1.0")
    card.skills.add(id="simulated_user", name="Simulated user", description="Plays the scenario's user.", tags=["user"])
    handler = DefaultRequestHandler(
        agent_executor=UserExecutor(make_user, max_sessions=max_sessions),
        task_store=InMemoryTaskStore(),
        agent_card=card,
    )
    return Starlette(routes=[*create_agent_card_routes(card), *create_jsonrpc_routes(handler, rpc_url="/")])
