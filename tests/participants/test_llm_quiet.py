"""litellm's own pricing and logging stand aside for our calls only, and only while nothing reads them (issue 27)."""

from __future__ import annotations

import time
from typing import Any

import pytest

from conftest import requires_llm
from pytest_pibench.testing import FakeLLMServer, reply

MODEL = "openai/gpt-4o-mini"

pytestmark = requires_llm


def _call(litellm: Any, server: FakeLLMServer) -> Any:
    server.push(reply.text("hello"))
    return litellm.completion(model=MODEL, messages=[{"role": "user", "content": "hi"}], api_key="sk-test",
                              api_base=server.base_url, num_retries=0, max_retries=0)  # fmt: skip


def test_our_calls_are_not_priced_by_litellm_but_others_are():
    from pytest_pibench.participants.llm import quiet
    from pytest_pibench.participants.llm.client import _litellm

    litellm = _litellm()
    with FakeLLMServer() as server:
        with quiet.quiet_call(litellm):
            ours = _call(litellm, server)
        theirs = _call(litellm, server)  # someone else's call in the same process
    assert ours.choices[0].message.content == "hello"
    assert ours._hidden_params.get("response_cost") is None  # we price it ourselves (LLMClient.usage)
    assert theirs._hidden_params.get("response_cost", 0) > 0


def test_with_a_litellm_callback_registered_our_calls_are_logged_and_priced_as_before(monkeypatch):
    from pytest_pibench.participants.llm import quiet
    from pytest_pibench.participants.llm.client import _litellm

    litellm = _litellm()
    seen: list[float] = []

    def on_success(kwargs: dict[str, Any], response: Any, start: Any, end: Any) -> None:
        seen.append(kwargs.get("response_cost") or 0.0)

    monkeypatch.setattr(litellm, "success_callback", [on_success])
    with FakeLLMServer() as server, quiet.quiet_call(litellm):
        ours = _call(litellm, server)
    assert ours._hidden_params.get("response_cost", 0) > 0
    deadline = time.monotonic() + 60  # the success callback runs on litellm's logging thread: wait for it
    while not seen and time.monotonic() < deadline:
        time.sleep(0.01)
    assert seen and seen[0] > 0


def test_the_client_still_prices_every_response_once():
    from pytest_pibench.participants.llm.client import LLMClient

    with FakeLLMServer() as server:
        server.push(reply.text("hello"))
        client = LLMClient(MODEL, {"api_key": "sk-test", "api_base": server.base_url, "retry_wait": 0.01})
        client.complete([{"role": "user", "content": "hi"}])
    assert client.usage.calls == 1 and client.usage.cost_usd > 0
