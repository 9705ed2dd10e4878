"""The remote user simulator: ``--pibench-user=a2a:<url>`` lets an A2A endpoint play the customer.

One context per episode, like the purple adapter; the user's state stays on the
server (its session), so each message carries only what is new:

- ``{"init": true, "scenario": <user_simulation>, "message_history": [...], "seed"?}`` answered by
  a data part ``{"ready": true}``;
- ``{"message": <the agent's message>, "trace": [...], "messages": [...]}`` answered by
  ``{"message": {"role": "user", "content": ...}}`` (``trace`` and ``messages`` are what a reactive
  user observes: the tool trace and the conversation so far);
- ``{"stop": true}`` at the end (best effort; a failure there loses nothing).

Failures follow the purple adapter: unreachable is an infrastructure error row;
anything else the endpoint answers ends the episode as ``user_error`` (an error
row too: the user simulator is not the agent under test).
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Sequence
from typing import Any

from pytest_pibench.participants.a2a_client.client import DEFAULT_TIMEOUT, A2AAgentError, remote_agent

__all__ = ["A2AUser", "A2AUserError"]


class A2AUserError(RuntimeError):
    """The remote user simulator answered with something that is not a user message."""


class A2AUser:
    """The user protocol over A2A, for one episode."""

    def __init__(self, url: str, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.url = url
        self.timeout = timeout
        self.seed: int | None = None
        self.context_id = uuid.uuid4().hex
        self._observed: dict[str, Any] = {}

    def set_seed(self, seed: int) -> None:
        self.seed = seed

    def _send(self, data: dict[str, Any]) -> dict[str, Any]:
        try:
            parts = remote_agent(self.url, self.timeout).send(data, self.context_id)
        except A2AAgentError as exc:
            raise A2AUserError(str(exc)) from None
        for part in parts:
            if isinstance(part.get("data"), dict):
                return dict(part["data"])
        raise A2AUserError(f"the user simulator's reply has no data part: {parts!r:.300}")

    def init_state(self, scenario: dict[str, Any], message_history: list[dict[str, Any]] | None = None) -> Any:
        data = {"init": True, "scenario": scenario, "message_history": list(message_history or [])}
        if self.seed is not None:
            data["seed"] = self.seed
        if self._send(data).get("ready") is not True:
            raise A2AUserError('the user simulator did not answer the init message with {"ready": true}')
        return {"context_id": self.context_id}

    def observe(self, trace: Sequence[Any], messages: list[dict[str, Any]]) -> None:
        self._observed = {"trace": [entry.to_dict() for entry in trace], "messages": messages}

    def generate(self, message: dict[str, Any], state: Any) -> tuple[dict[str, Any], Any]:
        reply = self._send({"message": message, **self._observed}).get("message")
        if not isinstance(reply, dict) or not isinstance(reply.get("content"), str):
            raise A2AUserError(f'the user simulator must answer {{"message": {{"content": str}}}}, got {reply!r:.300}')
        return {"role": "user", "content": reply["content"]}, state

    def is_stop(self, message: dict[str, Any]) -> bool:
        return False  # the loop's stop-token check applies

    def stop(self, message: dict[str, Any] | None, state: Any) -> None:
        with contextlib.suppress(Exception):  # the episode is over; a failure here changes nothing
            self._send({"stop": True})
