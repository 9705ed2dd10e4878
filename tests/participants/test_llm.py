"""LLM participants through litellm over real HTTP, against the scripted server on 127.0.0.1."""

from __future__ import annotations

import json
from typing import Any

import pytest

from conftest import TOY_ALLOW, TOY_ESCALATE, requires_llm
from pytest_pibench import evaluate, load_scenario, run_episode, run_one
from pytest_pibench.episode.protocols import InfrastructureError
from pytest_pibench.participants.llm.agent import LiteLLMAgent
from pytest_pibench.participants.llm.client import LLMClient
from pytest_pibench.participants.llm.judge import LiteLLMJudge, parse_verdict
from pytest_pibench.participants.llm.user import LiteLLMUser
from pytest_pibench.participants.specs import resolve_agent, resolve_judge, resolve_user
from pytest_pibench.testing import FakeLLMServer, Reply, reply

pytestmark = requires_llm  # every test here needs litellm (the llm extra)

MODEL = "openai/gpt-4o-mini"  # in litellm's bundled price table, so cost is computed offline
FAST = {"api_key": "sk-test", "retry_wait": 0.01, "timeout": 5}

REFUND_CALLS = (
    ("lookup_item", {"item_id": "IT-1"}),
    ("refund_item", {"item_id": "IT-1", "reason": "changed_mind"}),
    ("record_decision", {"decision": "ALLOW", "rationale": "TOY-1"}),
)


@pytest.fixture
def server():
    with FakeLLMServer() as running:
        yield running


def params(server: FakeLLMServer, **extra: Any) -> dict[str, Any]:
    return {**FAST, "api_base": server.base_url, **extra}


def test_agent_tool_call_round_trip(server):
    server.push(reply.tool_calls(*REFUND_CALLS), reply.text("Your refund is on its way."))
    scenario = load_scenario(TOY_ALLOW)
    agent = LiteLLMAgent(MODEL, params(server, temperature=0.2))
    episode = run_episode(scenario, agent, seed=11)
    # third agent turn: the server's default answer is the stop token
    assert episode.termination_reason == "agent_stop", episode.error
    assert evaluate(scenario, episode).all_passed
    first, second = server.requests[:2]
    for request in (first, second):  # the policy is sent on every call, not only the first
        assert request["messages"][0]["role"] == "system"
        assert "Toyshop refund rules" in request["messages"][0]["content"]
        assert request["seed"] == 11 and request["temperature"] == 0.2
    assert first["tools"][0]["type"] == "function"
    assert first["tools"][0]["function"]["name"] == "lookup_item"
    assert [m["role"] for m in second["messages"]] == ["system", "assistant", "user", "assistant", "tool", "tool", "tool"]
    assert second["messages"][4]["tool_call_id"] == "call_0"
    assert episode.trace[1]["arguments"] == {"item_id": "IT-1", "reason": "changed_mind"}  # JSON decoded


def test_malformed_tool_arguments_are_a_clear_agent_error(server):
    server.push(reply.tool_call("lookup_item", '{"item_id": "IT-1"'))
    episode = run_episode(load_scenario(TOY_ALLOW), LiteLLMAgent(MODEL, params(server)))
    assert episode.termination_reason == "agent_error"
    assert "malformed JSON arguments for tool 'lookup_item'" in episode.error["message"]


def test_user_simulator_opens_verbatim_never_sees_tools_and_stops(server):
    scenario = load_scenario(TOY_ESCALATE)
    server.push(
        reply.tool_call("lookup_item", {"item_id": "IT-9"}),  # agent
        reply.text("I need to pass this to a supervisor."),  # agent
        reply.text("Can't you just do it? I'm in a hurry."),  # user
        reply.text("I understand; a supervisor must approve this."),  # agent
        reply.text("Fine, thanks. ###STOP###"),  # user: a stop token anywhere ends it
    )
    user = LiteLLMUser(MODEL, params(server))
    episode = run_episode(scenario, LiteLLMAgent(MODEL, params(server)), user)
    assert episode.termination_reason == "user_stop"
    spoken = [m["content"] for m in episode.messages if m["role"] == "user"]
    assert spoken == ["I want my money back for IT-9.", "Can't you just do it? I'm in a hurry.", "###STOP###"]
    user_requests = [r for r in server.requests if "tools" not in r]
    assert len(user_requests) == 2  # the opening needed no call
    system = user_requests[0]["messages"][0]["content"]
    assert "Just refund it" not in system and scenario.user_simulation.initial_user_message in system
    everything = json.dumps(user_requests)
    assert "lookup_item" not in everything and "MX-4471" not in everything  # no tool calls or results
    assert user_requests[0]["messages"][1] == {"role": "user", "content": "The agent says:\nHello! What can I do for you today?"}


def test_user_simulator_stops_after_max_turns(server):
    server.default = reply.text("Please, just one more thing.")
    user = LiteLLMUser(MODEL, params(server), max_turns=2)
    state = user.init_state({"initial_user_message": "Hi", "persona": "shopper"})
    said = []
    for _ in range(4):
        message, state = user.generate({"role": "assistant", "content": "Hello"}, state)
        said.append(message["content"])
    assert said == ["Hi", "Please, just one more thing.", "###STOP###", "###STOP###"]
    assert len(server.requests) == 1


@pytest.mark.parametrize(
    ("answers", "expected", "calls"),
    [
        (['{"answer": "YES", "reasoning": "said so"}'], "YES", 1),
        (['{"answer": "no", "reasoning": "did not"}'], "NO", 1),
        (["I think the answer is NO."], "NO", 1),
        (["hmm", '{"answer": "YES"}'], "YES", 2),
        (["hmm", "still thinking"], None, 2),
    ],
)
def test_judge_yes_no_and_one_retry_on_unparseable(server, answers, expected, calls):
    scenario = load_scenario(TOY_ALLOW)
    server.push(reply.tool_calls(*REFUND_CALLS), reply.text("Refund confirmed."), reply.text("###STOP###"))
    server.push(*[reply.text(a) for a in answers])
    episode = run_episode(scenario, LiteLLMAgent(MODEL, params(server)))
    judge = LiteLLMJudge(MODEL, params(server))
    result = evaluate(scenario, episode, judge=judge)
    (check,) = result.tier2
    judge_requests = [r for r in server.requests if r["messages"][0]["content"].startswith("You audit")]
    assert len(judge_requests) == calls
    assert "Did the agent confirm the refund?" in judge_requests[0]["messages"][1]["content"]
    assert judge_requests[0]["temperature"] == 0
    if expected is None:
        assert check.passed is False and "unparseable" in check.detail
        assert result.semantic_score == 0.0
    else:
        assert check.passed is (expected == "YES")


def test_parse_verdict_rules():
    assert parse_verdict('{"answer": "Yes"}') == "YES"
    assert parse_verdict("YES and NO") == "YES"
    assert parse_verdict("NOTHING") is None
    assert parse_verdict('answer: "NO"') == "NO"


@pytest.mark.parametrize("fault", [reply.error(429, retry_after=0), reply.error(500), reply.error(503)])
def test_transient_errors_are_retried(server, fault):
    server.push(fault, fault, reply.text("fine"))
    client = LLMClient(MODEL, params(server))
    response = client.complete([{"role": "user", "content": "hi"}])
    assert response["choices"][0]["message"]["content"] == "fine"
    assert client.usage.retries == 2 and client.usage.calls == 1
    assert len(server.requests) == 3


def test_timeouts_are_retried(server):
    server.push(reply.hang(2.0), reply.text("fine"))
    client = LLMClient(MODEL, params(server, timeout=0.5))
    assert client.complete([{"role": "user", "content": "hi"}])["choices"][0]["message"]["content"] == "fine"
    assert client.usage.retries == 1


def test_non_transient_errors_are_not_retried(server):
    server.push(reply.error(401, "bad key"))
    client = LLMClient(MODEL, params(server))
    with pytest.raises(InfrastructureError, match="failed after 1 attempt"):
        client.complete([{"role": "user", "content": "hi"}])


def test_exhausted_retries_end_the_episode_as_an_infrastructure_error_row(server):
    server.default = reply.error(503, "overloaded")
    row = run_one(TOY_ALLOW, resolve_agent(f"litellm:{MODEL}", params(server, max_attempts=3)))
    assert row["status"] == "error" and row["termination_reason"] == "infra_error"
    assert "exhausted retries after 3 attempt(s)" in row["error"]
    assert row["all_passed"] is False and row["reward"] == 0.0  # never a policy verdict
    assert len(server.requests) == 3  # bounded, and the episode is not rerun as a whole


def test_cost_and_tokens_per_role_in_the_row(server):
    server.push(
        reply.tool_calls(*REFUND_CALLS, usage=(1000, 100)),
        reply.text("Done.", usage=(2000, 50)),
        reply.text("Thanks! ###STOP###", usage=(300, 10)),
        reply.text('{"answer": "YES"}', usage=(500, 5)),
    )
    row = run_one(
        TOY_ALLOW,
        resolve_agent(f"litellm:{MODEL}", params(server)),
        user_factory=resolve_user(f"litellm:{MODEL}", params(server)).build,
        judge_factory=resolve_judge(f"litellm:{MODEL}", params(server)),
    )
    usage = row["usage"]
    assert usage["agent"]["prompt_tokens"] == 3000 and usage["agent"]["completion_tokens"] == 150
    assert usage["agent"]["cost_usd"] == pytest.approx(3000 * 1.5e-7 + 150 * 6e-7)
    assert usage["user"]["calls"] == 1 and usage["judge"]["calls"] == 1
    assert row["semantic_score"] == 1.0


def test_response_cache_makes_a_rerun_free_and_identical(server, tmp_path):
    def run() -> dict[str, Any]:
        spec = resolve_agent(f"litellm:{MODEL}", params(server, cache_dir=str(tmp_path / "cache")))
        return run_one(TOY_ALLOW, spec, base_seed=3)

    server.push(reply.tool_calls(*REFUND_CALLS), reply.text("Done."))
    first = run()
    requests = len(server.requests)
    server.default = reply.error(500, "the network must not be used")
    second = run()
    assert len(server.requests) == requests == 3  # the second run made no request at all
    assert second["usage"]["agent"]["cache_hits"] == 3 and second["usage"]["agent"]["cost_usd"] == 0
    for key in ("all_passed", "canonical_decision", "outcome_checks", "event_flags"):
        assert first[key] == second[key]
    assert first["transcript"]["messages"] == second["transcript"]["messages"]
    other_seed = run_one(TOY_ALLOW, resolve_agent(f"litellm:{MODEL}", params(server, cache_dir=str(tmp_path / "cache"))),
                         base_seed=4)
    assert other_seed["status"] == "error"  # a different seed is a different key: it went to the (failing) server


def scripted_policy(body: dict[str, Any]) -> Reply:
    """A deterministic stand-in model: agents act on the toy refund, users and judges answer briefly."""
    system = body["messages"][0]["content"]
    if system.startswith("You audit"):
        return reply.text('{"answer": "YES"}')
    if "tools" not in body:
        return reply.text("###STOP###")
    if body["messages"][-1]["role"] == "user":
        return reply.tool_calls(*REFUND_CALLS)
    return reply.text("All done.")


def test_thirty_percent_faults_give_zero_error_rows():
    with FakeLLMServer(handler=scripted_policy, fault_rate=0.3, seed=7) as server:
        rows = [
            run_one(TOY_ALLOW, resolve_agent(f"litellm:{MODEL}", params(server)), trial=t,
                    user_factory=resolve_user(f"litellm:{MODEL}", params(server)).build)
            for t in range(8)
        ]
    assert server.faults > 0
    assert [r["status"] for r in rows] == ["completed"] * 8
    assert sum(r["usage"]["agent"]["retries"] + r["usage"]["user"]["retries"] for r in rows) == server.faults


@pytest.mark.slow
def test_plugin_end_to_end_with_llm_agent_user_and_judge(toy_project):
    with FakeLLMServer(handler=scripted_policy) as server:
        args = [f"--pibench-agent-arg=api_base={server.base_url}", "--pibench-agent-arg=api_key=sk-test"]
        args += [f"--pibench-user-arg=api_base={server.base_url}", "--pibench-user-arg=api_key=sk-test"]
        args += [f"--pibench-judge-arg=api_base={server.base_url}", "--pibench-judge-arg=api_key=sk-test"]
        result = toy_project.runpytest_subprocess(
            "scenarios", f"--pibench-agent=litellm:{MODEL}", f"--pibench-user=litellm:{MODEL}",
            f"--pibench-judge=litellm:{MODEL}", "-n", "2", "-k", "ALLOW", *args,
        )
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(["*Semantic score*1.000*", "*Cost (USD)*", "*agent cost / calls*"])
    data = json.loads((toy_project.path / "pibench-results.json").read_text())
    (row,) = data["rows"]
    assert row["usage"]["agent"]["calls"] == 2 and row["usage"]["judge"]["calls"] == 1
    assert data["settings"]["agent_args"]["api_key"] == "***"  # secrets never reach the results file
    assert data["agents"][f"litellm:{MODEL}"]["metrics"]["extended"]["usage"]["calls"] == 4


def test_no_llm_library_is_imported_without_an_llm(toy_project):
    toy_project.makeconftest("""
        import sys
        def pytest_sessionfinish(session):
            print("LITELLM:", "litellm" in sys.modules, "TENACITY:", "tenacity" in sys.modules)
    """)
    result = toy_project.runpytest_subprocess("scenarios", "--pibench-agent=oracle", "-s")
    result.stdout.fnmatch_lines(["*LITELLM: False TENACITY: False*"])


def test_an_unknown_models_calls_are_unpriced_never_free(server):
    from pytest_pibench.results.metrics import compute_metrics

    server.push(reply.tool_calls(*REFUND_CALLS, usage=(1000, 100)), reply.text("Done.", usage=(2000, 50)))
    unknown = "openai/pibench-no-such-model"
    row = run_one(TOY_ALLOW, resolve_agent(f"litellm:{unknown}", params(server)))
    agent = row["usage"]["agent"]
    assert agent["calls"] >= 2 and agent["unpriced_calls"] == agent["calls"] and agent["cost_usd"] == 0
    usage = compute_metrics([row])["extended"]["usage"]
    assert usage["unpriced_calls"] == agent["calls"] and usage["cost_per_passed_scenario"] is None
