"""A2A test helpers: real a2a-sdk servers on 127.0.0.1 (uvicorn threads), serving the oracle or a misbehaving agent."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

_MISSING = [n for n in ("a2a", "uvicorn", "tenacity", "httpx") if importlib.util.find_spec(n) is None]
if _MISSING:
    pytest.skip(
        f"the a2a extra is not installed (no {', '.join(_MISSING)}): pip install 'pytest-pibench[a2a]'",
        allow_module_level=True,
    )

from a2a.client import ClientConfig, create_client
from a2a.types import a2a_pb2
from google.protobuf.json_format import MessageToDict

from pytest_pibench import OracleAgent, bind_scenario, bundled_scenarios_dir, discover_scenarios, load_scenario
from pytest_pibench.a2a.purple import purple_app
from pytest_pibench.a2a.serving import ServerThread
from pytest_pibench.scenario.models import Scenario

_BY_CONTEXT: dict[str, Scenario] = {}
_BY_CONTEXT_LOCK = __import__("threading").Lock()


def bundled() -> list[Scenario]:
    return [load_scenario(path) for path in discover_scenarios(bundled_scenarios_dir())]


def _context_key(context: list[dict[str, Any]]) -> str:
    """The context without the run's step budget (a run setting, not part of the scenario)."""
    nodes = [dict(n, content=str(n.get("content", "")).split("\nStep budget:")[0].rstrip()) for n in context]
    return json.dumps(nodes, sort_keys=True)


def oracle_for(context: list[dict[str, Any]], tools: list[dict[str, Any]]) -> OracleAgent:
    """The oracle of the bundled scenario whose policy and task the request carries (what the agent sees)."""
    with _BY_CONTEXT_LOCK:  # the server answers concurrent first requests: fill the map once, whole
        if not _BY_CONTEXT:
            filled = {_context_key(bind_scenario(s).benchmark_context()): s for s in bundled()}
            _BY_CONTEXT.update(filled)
    return OracleAgent(_BY_CONTEXT[_context_key(context)])


@contextmanager
def serve(make_agent: Callable[..., Any] = oracle_for, *, bootstrap: bool = True, **app_options: Any) -> Iterator[str]:
    """A purple agent server on a free port; yields its base URL."""
    with ServerThread(lambda url: purple_app(make_agent, name="test-purple", url=url, bootstrap=bootstrap,
                                             **app_options)) as server:
        yield server.url


class CuttableProxy:
    """A TCP proxy on 127.0.0.1 to ``target`` whose ``cut()`` drops every connection and stops listening.

    What a purple agent that goes down (or a network that fails) mid-episode looks like to the client.
    """

    def __init__(self, target_port: int) -> None:
        import socket
        import threading

        self.target_port = target_port
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.sockets: list[Any] = []
        self.cut_done = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        import socket
        import threading

        while not self.cut_done.is_set():
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.target_port))
            self.sockets += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(source: Any, sink: Any) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for s in (source, sink):
                try:
                    s.close()
                except OSError:
                    pass

    def cut(self) -> None:
        import socket

        self.cut_done.set()
        self.listener.close()
        for s in self.sockets:
            try:
                s.shutdown(socket.SHUT_RDWR)
                s.close()
            except OSError:
                pass


def assess(green_url: str, payload: dict[str, Any], *, as_text: bool) -> list[dict[str, Any]]:
    """Send one assessment request to a green server with the a2a-sdk client (streaming); every event as JSON."""

    async def go() -> list[dict[str, Any]]:
        client = await create_client(green_url, client_config=ClientConfig(streaming=True))
        message = a2a_pb2.Message(message_id=uuid.uuid4().hex, role=a2a_pb2.Role.ROLE_USER)
        part = message.parts.add()
        if as_text:  # how the AgentBeats gateway sends it
            part.text = json.dumps(payload)
        else:
            part.data.struct_value.update(payload)
        events = [MessageToDict(e) async for e in client.send_message(a2a_pb2.SendMessageRequest(message=message))]
        await client.close()
        return events

    return asyncio.run(go())
