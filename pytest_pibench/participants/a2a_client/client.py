"""The purple-agent adapter: ``--pibench-agent=a2a:<url>`` assesses a remote agent over A2A.

One :class:`A2AAgent` per episode. Its context id (a fresh uuid) is the A2A
``contextId`` of every message of the episode, so each episode is its own
context. The agent card is read once per process and URL from the standard
well-known path; when it declares :data:`~.wire.BOOTSTRAP_EXTENSION`, the
policy, task and tools go out once per episode (``init_state``) and later turns
carry only the conversation; otherwise every turn carries all of it.

Who is at fault decides how a failure ends the episode:

- the agent cannot be reached (connection refused, DNS, HTTP 429/502/503/504
  after :data:`RETRY_ATTEMPTS` tries) or drops the connection mid-turn:
  :class:`~pytest_pibench.episode.protocols.InfrastructureError`, an error row
  (reported apart, bounded by ``--pibench-max-error-rate``);
- anything the agent answered (a JSON-RPC error, a failed task, a reply with no
  usable part, malformed tool calls) or a reply slower than the per-request
  ``timeout``: an exception, so the episode ends as ``agent_error`` and counts
  against the agent.
"""

from __future__ import annotations

import json
import socket
import threading
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx
from a2a.client import A2AClientError, A2AClientTimeoutError, Client, ClientCallContext, ClientConfig, ClientFactory
from a2a.client.card_resolver import parse_agent_card
from a2a.client.service_parameters import ServiceParametersFactory, with_a2a_extensions
from a2a.types import a2a_pb2
from a2a.utils.constants import AGENT_CARD_WELL_KNOWN_PATH, PROTOCOL_VERSION_CURRENT, VERSION_HEADER
from google.protobuf.json_format import MessageToDict, ParseDict
from tenacity import AsyncRetrying, retry_if_exception, stop_after_attempt, wait_exponential

from pytest_pibench.episode.protocols import InfrastructureError
from pytest_pibench.participants.a2a_client import _loop, legacy
from pytest_pibench.participants.a2a_client.wire import (
    BOOTSTRAP_EXTENSION,
    A2AReplyError,
    bootstrap_context_id,
    card_declares_bootstrap,
    narrow_numbers,
    openai_messages,
    openai_tools,
    reply_message,
)

__all__ = ["DEFAULT_TIMEOUT", "RETRY_ATTEMPTS", "A2AAgent", "A2AAgentError", "RemoteAgent", "remote_agent"]

DEFAULT_TIMEOUT = 120.0
"""Seconds one request may take (``--pibench-agent-arg timeout=S``); slower is the agent's ``agent_error``."""
RETRY_ATTEMPTS = 3
"""Tries of a request that could not reach the agent before it becomes an infrastructure error."""
MAX_REPLY_BYTES = 16 * 1024 * 1024
"""Largest reply body read from an agent (a turn's reply is kilobytes)."""
MAX_CONNECTIONS = 512
"""Connections to one agent, at most (above any sensible episodes-in-flight count)."""
_RETRY_STATUS = {429, 502, 503, 504}


class A2AAgentError(RuntimeError):
    """The remote agent answered with an error or something unusable (the episode's ``agent_error``)."""


class _Unreachable(Exception):
    """The request did not reach the agent (or could not complete): retried, then infrastructure."""

    def __init__(self, message: str, *, retry: bool) -> None:
        super().__init__(message)
        self.retry = retry


def _classify(exc: A2AClientError) -> Exception:
    cause = exc.__cause__
    if isinstance(cause, httpx.PoolTimeout):  # our own connection pool was full: never the agent's fault
        return _Unreachable(f"no free connection to the agent: {cause}", retry=False)
    if isinstance(exc, A2AClientTimeoutError) or isinstance(cause, httpx.TimeoutException):
        if isinstance(cause, httpx.ConnectTimeout):
            return _Unreachable(f"connect timeout: {cause}", retry=True)
        return A2AAgentError(f"no reply within the request timeout ({exc})")
    if isinstance(cause, httpx.HTTPStatusError):
        status = cause.response.status_code
        if status in _RETRY_STATUS:
            return _Unreachable(f"HTTP {status}", retry=True)
        return A2AAgentError(f"HTTP {status} from the agent: {cause.response.text[:300]}")
    if isinstance(cause, httpx.ConnectError):
        return _Unreachable(f"cannot connect: {cause}", retry=True)
    if isinstance(cause, httpx.TransportError):  # dropped mid-request: never resent (the turn may have run)
        return _Unreachable(f"connection lost: {type(cause).__name__}: {cause}", retry=False)
    return A2AAgentError(str(exc))


@dataclass
class RemoteAgent:
    """A purple agent as this process knows it: its card (JSON), whether it bootstraps, an SDK client."""

    url: str
    card: dict[str, Any]
    bootstrap: bool
    client: Client
    timeout: float
    notes: tuple[str, ...] = ()
    """The legacy forms its card came in (:mod:`.legacy`): warnings of every row of this agent."""

    @property
    def name(self) -> str:
        return str(self.card.get("name") or self.url)

    def send(self, data: Mapping[str, Any], context_id: str, *, extension: bool = False) -> list[dict[str, Any]]:
        """Send one message with one data part; return the reply's parts as JSON (numbers narrowed)."""
        return self.send_noting(data, context_id, extension=extension)[0]

    def send_noting(
        self, data: Mapping[str, Any], context_id: str, *, extension: bool = False
    ) -> tuple[list[dict[str, Any]], list[str]]:
        """:meth:`send`, with the legacy forms the reply came in (warnings for the row)."""
        message = a2a_pb2.Message(
            message_id=uuid.uuid4().hex, context_id=context_id, role=a2a_pb2.Role.ROLE_USER
        )
        part = message.parts.add()
        ParseDict(json.loads(json.dumps(data, default=str)), part.data)
        part.media_type = "application/json"
        if extension:  # in the message and, as A2A servers read requested extensions, in the header
            message.extensions.append(BOOTSTRAP_EXTENSION)
        return _loop.run(self._send(message, extension), timeout=self.timeout * RETRY_ATTEMPTS + 30)

    async def _send(self, message: a2a_pb2.Message, extension: bool = False) -> tuple[list[dict[str, Any]], list[str]]:
        try:
            async for attempt in AsyncRetrying(
                retry=retry_if_exception(lambda e: isinstance(e, _Unreachable) and e.retry),
                stop=stop_after_attempt(RETRY_ATTEMPTS),
                wait=wait_exponential(multiplier=0.25, max=4),
                reraise=True,
            ):
                with attempt:
                    return await self._send_once(message, extension)
        except _Unreachable as exc:
            raise InfrastructureError(f"A2A agent at {self.url} unreachable: {exc}") from None
        raise AssertionError("unreachable: tenacity either returns or raises")  # pragma: no cover

    async def _send_once(self, message: a2a_pb2.Message, extension: bool) -> tuple[list[dict[str, Any]], list[str]]:
        request = a2a_pb2.SendMessageRequest(message=message)
        context = None
        if extension:
            parameters = ServiceParametersFactory.create([with_a2a_extensions([BOOTSTRAP_EXTENSION])])
            context = ClientCallContext(service_parameters=parameters)
        try:
            async for event in self.client.send_message(request, context=context):
                return _reply_parts(event), []
        except A2AClientError as exc:
            raise _classify(exc) from None
        except Exception as exc:  # a JSON-RPC error the SDK mapped to its A2AError types, or a bad envelope
            parts = legacy.status_message_parts(legacy.take_reply(message.message_id))
            if parts is not None:  # the reference example's reply shape: its message is the reply
                return parts, [legacy.STATUS_MESSAGE_REPLY]
            raise A2AAgentError(f"{type(exc).__name__}: {exc}") from None
        raise A2AAgentError("the agent sent no reply")


def _reply_parts(event: a2a_pb2.StreamResponse) -> list[dict[str, Any]]:
    if event.HasField("message"):
        parts = list(event.message.parts)
    elif event.HasField("task"):
        task = event.task
        state = a2a_pb2.TaskState.Name(task.status.state)
        parts = [p for artifact in task.artifacts for p in artifact.parts] + list(task.status.message.parts)
        if task.status.state in (a2a_pb2.TASK_STATE_FAILED, a2a_pb2.TASK_STATE_REJECTED, a2a_pb2.TASK_STATE_CANCELED):
            texts = [p.text for p in parts if p.text]
            raise A2AAgentError(f"the agent's task ended {state}: {' '.join(texts)[:300]}")
    else:
        raise A2AAgentError("the reply holds neither a message nor a task")
    return [narrow_numbers(MessageToDict(part)) for part in parts]


_remotes: dict[tuple[str, float], RemoteAgent] = {}
_remotes_lock = threading.Lock()


async def _connect(url: str, timeout: float) -> RemoteAgent:
    # TCP_NODELAY: a request goes out as headers then body; with Nagle's algorithm and the peer's
    # delayed ACK each turn would wait about 40 ms for nothing.
    transport = httpx.AsyncHTTPTransport(
        socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)],
        limits=httpx.Limits(max_connections=MAX_CONNECTIONS, max_keepalive_connections=64),
    )
    http = httpx.AsyncClient(
        transport=transport,
        timeout=timeout,
        headers={VERSION_HEADER: PROTOCOL_VERSION_CURRENT},
        event_hooks={"response": [_bounded_reply, legacy.capture_reply]},
    )
    notes: list[str] = []
    card_url = url.rstrip("/") + AGENT_CARD_WELL_KNOWN_PATH
    try:
        response = await http.get(card_url)
        if response.status_code == 404:  # A2A 0.3's path, where agents built from the reference serve it
            card_url = url.rstrip("/") + legacy.LEGACY_CARD_PATH
            response = await http.get(card_url)
            notes.append(legacy.LEGACY_CARD_PATH_USED)
    except httpx.TransportError as exc:
        await http.aclose()
        raise InfrastructureError(f"A2A agent at {url} unreachable: {type(exc).__name__}: {exc}") from None
    try:
        response.raise_for_status()
        card = response.json()
        if not isinstance(card, dict):
            raise ValueError("the agent card is not a JSON object")
        card, completed = legacy.complete_card(card, url)
        notes += completed
        parsed = parse_agent_card(json.loads(json.dumps(card)))
        _pin_origin(parsed, url)
        client = ClientFactory(ClientConfig(streaming=False, httpx_client=http)).create(parsed)
    except Exception as exc:  # not JSON, wrong field types (protobuf's ParseError), no JSON-RPC interface...
        await http.aclose()
        raise InfrastructureError(f"no usable A2A agent card at {card_url}: {type(exc).__name__}: {exc}") from None
    return RemoteAgent(url, card, card_declares_bootstrap(card), client, timeout, tuple(notes))


async def _bounded_reply(response: httpx.Response) -> None:
    """Refuse a declared reply body over :data:`MAX_REPLY_BYTES` before reading it (the agent's error)."""
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_REPLY_BYTES:
        raise A2AAgentError(f"the agent's reply declares {declared} bytes, over the {MAX_REPLY_BYTES} accepted")


def _pin_origin(card: a2a_pb2.AgentCard, url: str) -> None:
    """Send every request to the origin the user named, whatever the card advertises.

    A card behind a proxy or in a container often names an address the caller
    cannot reach (``http://0.0.0.0:9019``), and a card must never make the
    benchmark call a host nobody named (the green server's promise): the
    interface's path is kept, its scheme, host and port are the named URL's.
    """
    named = urlsplit(url)
    for interface in card.supported_interfaces:
        advertised = urlsplit(interface.url)
        if (advertised.scheme, advertised.netloc) != (named.scheme, named.netloc):
            path = advertised.path if advertised.netloc else named.path
            interface.url = urlunsplit((named.scheme, named.netloc, path or named.path, advertised.query, ""))


_connect_locks: dict[tuple[str, float], threading.Lock] = {}


def remote_agent(url: str, timeout: float = DEFAULT_TIMEOUT) -> RemoteAgent:
    """The purple agent at ``url`` (card read once per process; later calls reuse it)."""
    key = (url, timeout)
    with _remotes_lock:
        known = _remotes.get(key)
        lock = _connect_locks.setdefault(key, threading.Lock())
    if known is not None:
        return known
    with lock:  # one card read per agent, however many episodes start at once
        with _remotes_lock:
            known = _remotes.get(key)
        if known is not None:
            return known
        remote = _loop.run(_connect(url, timeout), timeout=timeout + 30)
        with _remotes_lock:
            _remotes[key] = remote
        return remote


class A2AAgent:
    """The agent protocol over A2A: one episode of the remote agent at ``url``."""

    def __init__(self, url: str, timeout: float = DEFAULT_TIMEOUT, domain: str = "") -> None:
        self.url = url
        self.timeout = timeout
        self.domain = domain
        self.seed: int | None = None
        self.notes: list[str] = []

    def protocol_warnings(self) -> list[str]:
        """The legacy forms this episode's agent used (:mod:`.legacy`), for the row's warnings."""
        return list(dict.fromkeys(self.notes))

    def set_seed(self, seed: int) -> None:
        self.seed = seed

    def init_state(
        self,
        benchmark_context: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        message_history: list[dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        remote = remote_agent(self.url, self.timeout)
        self.notes += remote.notes
        history = [dict(m) for m in message_history or []]
        state: dict[str, Any] = {
            "context_id": uuid.uuid4().hex,
            "messages": [m for msg in history for m in openai_messages(msg)],
            "benchmark_context": benchmark_context,
            "tools": openai_tools(tools),
            "message_history": history,
            "bootstrapped": None,
        }
        if remote.bootstrap:
            data = {
                "bootstrap": True,
                "benchmark_context": benchmark_context,
                "tools": state["tools"],
                "message_history": history,
                "run_id": state["context_id"],
                "domain": self.domain,
                **({"seed": self.seed} if self.seed is not None else {}),
            }
            parts, notes = remote.send_noting(data, state["context_id"], extension=True)
            self.notes += notes
            bootstrapped = bootstrap_context_id(parts)
            if bootstrapped is None:  # the extension left inactive: every turn will carry the whole context
                self.notes.append(legacy.IGNORED_BOOTSTRAP)
            state["bootstrapped"] = bootstrapped
        return state

    def generate(self, message: dict[str, Any], state: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        remote = remote_agent(self.url, self.timeout)
        messages = [*state["messages"], *openai_messages(message)]
        data: dict[str, Any] = {"messages": messages, "message": message}
        if state["bootstrapped"] is not None:
            data["context_id"] = state["bootstrapped"]
        else:
            data.update(
                benchmark_context=state["benchmark_context"],
                tools=state["tools"],
                message_history=state["message_history"],
            )
        if self.seed is not None:
            data["seed"] = self.seed
        parts, notes = remote.send_noting(data, state["context_id"], extension=state["bootstrapped"] is not None)
        self.notes += notes
        try:
            reply = reply_message(parts)
        except A2AReplyError as exc:
            raise A2AAgentError(str(exc)) from None
        return reply, {**state, "messages": [*messages, *openai_messages(reply)]}

    def is_stop(self, message: dict[str, Any]) -> bool:
        return False  # the loop's stop-token check applies to every agent

    def stop(self, message: dict[str, Any] | None, state: dict[str, Any] | None) -> None:
        return None
