"""``a2a:<url>`` against real a2a-sdk servers on 127.0.0.1: same rows as local, bootstrap, every fault's row."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterator
from typing import Any

import pytest
from a2a.helpers import new_message, new_url_part
from a2a.server.agent_execution import AgentExecutor
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore
from a2a_servers import CuttableProxy, bundled, oracle_for, serve  # skips this module without the a2a extra
from starlette.applications import Starlette

from conftest import TOY_ALLOW
from pytest_pibench import AgentSpecError, load_scenario, resolve_agent, run_one
from pytest_pibench.a2a.purple import purple_app, purple_card
from pytest_pibench.a2a.serving import ServerThread

ALL = bundled()
DOMAINS = sorted({s.meta.domain for s in ALL})


def same_row(remote: dict[str, Any], local: dict[str, Any]) -> None:
    assert remote["agent"].startswith("a2a:") and local["agent"] == "oracle"
    ignore = {"agent", "duration"}
    assert {k: v for k, v in remote.items() if k not in ignore} == {k: v for k, v in local.items() if k not in ignore}


@pytest.mark.parametrize("bootstrap", [True, False], ids=["bootstrap", "stateless"])
@pytest.mark.parametrize("domain", DOMAINS)
@pytest.mark.slow
def test_oracle_over_a2a_gives_the_local_rows_for_every_bundled_scenario(domain, bootstrap):
    scenarios = [s for s in ALL if s.meta.domain == domain]
    with serve(bootstrap=bootstrap) as url:
        remote, local = resolve_agent(f"a2a:{url}"), resolve_agent("oracle")
        for scenario in scenarios:
            row = run_one(scenario, remote, base_seed=11)
            assert row["all_passed"], (scenario.scenario_id, row.get("error"))
            same_row(row, run_one(scenario, local, base_seed=11))


class _Recorder:
    """An ASGI wrapper that keeps every JSON-RPC body the server receives."""

    def __init__(self, app: Any) -> None:
        self.app, self.bodies, self.headers = app, [], []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            return await self.app(scope, receive, send)
        self.headers.append({k.decode().lower(): v.decode() for k, v in scope["headers"]})
        chunks = []

        async def recording() -> Any:
            event = await receive()
            chunks.append(event.get("body", b""))
            if not event.get("more_body"):
                self.bodies.append(b"".join(chunks).decode())
            return event

        await self.app(scope, recording, send)


@pytest.mark.parametrize("bootstrap", [True, False], ids=["bootstrap", "stateless"])
def test_what_each_request_carries(bootstrap):
    import json

    from pytest_pibench.a2a.purple import purple_app

    scenario = next(s for s in ALL if s.meta.domain == "retail")
    recorder: list[_Recorder] = []

    def build(url: str) -> Any:
        recorder.append(_Recorder(purple_app(oracle_for, name="rec", url=url, bootstrap=bootstrap)))
        return recorder[0]

    with ServerThread(build) as server:
        row = run_one(scenario, resolve_agent(f"a2a:{server.url}"), base_seed=5)
    assert row["all_passed"]
    requests = [json.loads(body) for body in recorder[0].bodies]
    assert {r["method"] for r in requests} == {"SendMessage"}
    messages = [r["params"]["message"] for r in requests]
    assert len({m["contextId"] for m in messages}) == 1  # one context per episode
    assert len({m["messageId"] for m in messages}) == len(messages)
    assert all(m["role"] == "ROLE_USER" and list(m["parts"][0]) == ["data", "mediaType"] for m in messages)
    data = [m["parts"][0]["data"] for m in messages]
    with_policy = [d for d in data if "benchmark_context" in d]
    if bootstrap:
        assert data[0]["bootstrap"] is True and len(with_policy) == 1  # policy, task and tools once
        assert all(d["context_id"] == messages[0]["contextId"] for d in data[1:])
        assert all(m.get("extensions") == ["urn:pi-bench:policy-bootstrap:v1"] for m in messages)
    else:
        assert "bootstrap" not in data[0] and len(with_policy) == len(data)  # every turn carries all of it
    assert all(d["seed"] == data[0]["seed"] for d in data[1:] if "seed" in d)
    turns = data[1:] if bootstrap else data
    assert turns[-1]["messages"][0]["role"] == "assistant"  # the greeting opens the conversation
    from pytest_pibench.participants.a2a_client.wire import openai_messages

    for before, after in zip(turns, turns[1:], strict=False):  # the conversation only grows, by what happened
        assert after["messages"][: len(before["messages"])] == before["messages"]
    for turn in turns:  # and ends with the newest message, the same one sent losslessly
        newest = openai_messages(turn["message"])
        assert turn["messages"][-len(newest):] == newest
    headers = recorder[0].headers
    assert all(h.get("a2a-version") == "1.0" for h in headers)
    asked = [h.get("a2a-extensions", "") for h in headers]
    if bootstrap:
        assert all("urn:pi-bench:policy-bootstrap:v1" in a for a in asked)
    else:
        assert not any(asked)


@pytest.fixture(scope="module")
def oracle_url() -> Iterator[str]:
    with serve() as url:
        yield url


def test_two_episodes_are_two_contexts(oracle_url):
    scenario = next(s for s in ALL if s.meta.domain == "finra")
    agent = resolve_agent(f"a2a:{oracle_url}")
    first, second = run_one(scenario, agent, trial=0), run_one(scenario, agent, trial=1)
    assert first["all_passed"] and second["all_passed"] and first["seed"] != second["seed"]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_an_agent_that_is_down_is_an_infrastructure_error_row():
    row = run_one(load_scenario(TOY_ALLOW), resolve_agent(f"a2a:http://127.0.0.1:{_free_port()}"))
    assert row["termination_reason"] == "infra_error" and row["failure_cause"] == "infrastructure"
    assert "unreachable" in row["error"]


class _Misbehaving(AgentExecutor):
    def __init__(self, mode: str) -> None:
        self.mode = mode

    async def execute(self, context: Any, event_queue: Any) -> None:
        if self.mode == "slow":
            await asyncio.sleep(3)
        if self.mode == "fail":
            raise RuntimeError("the agent crashed")
        if self.mode == "huge":
            from a2a.helpers import new_text_message

            await event_queue.enqueue_event(new_text_message("x" * (17 * 1024 * 1024), context_id=context.context_id))
            return
        await event_queue.enqueue_event(new_message([new_url_part("http://example.invalid/x")],
                                                    context_id=context.context_id))

    async def cancel(self, context: Any, event_queue: Any) -> None:
        return None


@pytest.fixture
def misbehaving() -> Iterator[Any]:
    servers: list[ServerThread] = []

    def start(mode: str) -> str:
        def build(url: str) -> Any:
            card = purple_card("bad", url, bootstrap=False)
            handler = DefaultRequestHandler(agent_executor=_Misbehaving(mode), task_store=InMemoryTaskStore(),
                                            agent_card=card)
            return Starlette(routes=[*create_agent_card_routes(card), *create_jsonrpc_routes(handler, rpc_url="/")])

        servers.append(ServerThread(build).start())
        return servers[-1].url

    yield start
    for server in servers:
        server.stop()


@pytest.mark.parametrize(
    ("mode", "params", "fragment"),
    [
        ("garbage", {}, "no text and no pi-bench data part"),
        ("slow", {"timeout": "0.5"}, "no reply within the request timeout"),
        ("fail", {}, "the agent crashed"),
        ("huge", {}, "over the 16777216 accepted"),
    ],
)
@pytest.mark.slow
def test_what_the_agent_answers_counts_against_it(misbehaving, mode, params, fragment):
    url = misbehaving(mode)
    row = run_one(load_scenario(TOY_ALLOW), resolve_agent(f"a2a:{url}", params=params))
    assert row["termination_reason"] == "agent_error" and row["failure_cause"] == "agent"
    assert row["all_passed"] is False and fragment in row["error"]


@pytest.mark.parametrize("turn", [1, 3])
def test_an_agent_going_down_mid_episode_is_an_infrastructure_error_row(turn):
    proxies: list[CuttableProxy] = []
    turns = {"n": 0}

    def make(context: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
        agent = oracle_for(context, tools)
        generate = agent.generate

        def generate_then_go_down(message: dict[str, Any], agent_state: Any) -> Any:
            turns["n"] += 1
            if turns["n"] == turn:
                proxies[0].cut()  # the connection drops before this turn's answer gets out
            return generate(message, agent_state)

        agent.generate = generate_then_go_down
        return agent

    scenario = next(s for s in ALL if s.meta.domain == "retail")
    port = _free_port()
    proxies.append(CuttableProxy(port))  # the card names the proxy, so every request goes through it
    with ServerThread(lambda url: purple_app(make, name="dies", url=proxies[0].url), port=port):
        row = run_one(scenario, resolve_agent(f"a2a:{proxies[0].url}"))
    assert row["termination_reason"] == "infra_error" and row["failure_cause"] == "infrastructure"
    assert "unreachable" in row["error"] and turns["n"] == turn  # never resent: the turn ran once


@pytest.mark.parametrize(("bootstrap", "fragment"), [(True, "bootstrap first"), (False, "in mid-conversation")])
def test_a_forgotten_context_is_a_json_rpc_error_against_the_agent(bootstrap, fragment):
    scenario = next(s for s in ALL if s.meta.domain == "helpdesk")
    with serve(bootstrap=bootstrap, max_sessions=0) as url:  # drops every session: later turns name an unknown one
        row = run_one(scenario, resolve_agent(f"a2a:{url}"))
    assert row["termination_reason"] == "agent_error" and "unknown context" in row["error"] and fragment in row["error"]


@pytest.mark.parametrize(
    ("spec", "params", "fragment"),
    [
        ("a2a:", {}, "give the agent's base URL"),
        ("a2a:127.0.0.1:9009", {}, "give the agent's base URL"),
        ("a2a:ftp://host", {}, "give the agent's base URL"),
        ("a2a:http://127.0.0.1:9", {"timeout": "soon"}, "timeout must be a number"),
        ("a2a:http://127.0.0.1:9", {"timeout": "0"}, "timeout must be positive"),
    ],
)
def test_bad_specs_fail_at_start_up(spec, params, fragment):
    with pytest.raises(AgentSpecError) as info:
        resolve_agent(spec, params=params)
    assert fragment in str(info.value)
