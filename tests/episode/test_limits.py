"""Limits hold: tool calls per message and per episode, the step limit, bounded text, an unreachable judge."""

from __future__ import annotations

import json
from typing import Any

import pytest

from conftest import TOY_ALLOW, requires_llm
from pytest_pibench import compute_metrics, evaluate, load_scenario, run_episode, run_one
from pytest_pibench.bounds import DETAIL_LIMIT, ROW_STRING_LIMIT, bound_row, bound_text
from pytest_pibench.episode.protocols import InfrastructureError
from pytest_pibench.evaluation import NORMAL_TERMINATIONS
from pytest_pibench.participants.llm.judge import LiteLLMJudge
from pytest_pibench.participants.specs import AgentSpec
from pytest_pibench.testing import FakeLLMServer, reply

LOOKUP = {"name": "lookup_item", "arguments": {"item_id": "IT-1"}}


def calls(count: int, prefix: str = "c") -> dict[str, Any]:
    return {
        "role": "assistant",
        "tool_calls": [{**LOOKUP, "id": f"{prefix}{i}", "arguments": {"item_id": "IT-1"}} for i in range(count)],
    }


class Script:
    """Says the given messages in order, then ``###STOP###``; records what it was sent."""

    def __init__(self, *messages: dict[str, Any]) -> None:
        self.messages = list(messages)
        self.seen: list[dict[str, Any]] = []

    def init_state(self, benchmark_context, tools, message_history=None):
        return 0

    def generate(self, message, state):
        self.seen.append(message)
        if state < len(self.messages):
            return self.messages[state], state + 1
        return {"role": "assistant", "content": "###STOP###"}, state

    def is_stop(self, message) -> bool:
        return False

    def stop(self, message, state) -> None:
        pass


class Forever:
    """Sends the same message every turn (a runaway agent)."""

    def __init__(self, message: dict[str, Any]) -> None:
        self.message = message

    def init_state(self, benchmark_context, tools, message_history=None):
        return None

    def generate(self, message, state):
        return self.message, state


@pytest.fixture
def allow():
    return load_scenario(TOY_ALLOW)


# --------------------------------------------------------------------------- tool-call limits


def test_a_thousand_calls_in_one_message_run_only_the_per_message_limit(allow):
    agent = Script(calls(1000))
    episode = run_episode(allow, agent)
    assert episode.termination_reason == "tool_call_limit"
    assert len(episode.trace) == 32  # the default; calls 33..1000 never ran
    assert [e["step_index"] for e in episode.trace] == list(range(32))
    assert len(episode.messages[-1]["tool_messages"]) == 32  # results of the calls that ran, nothing more
    assert episode.limit_hit == {
        "limit": "max_tool_calls_per_message", "value": 32, "requested": 1000, "executed": 32, "role": "agent",
    }
    assert episode.status == "completed"  # the agent's doing: scored, never an error row
    assert len(agent.seen) == 1  # the agent is not asked again after the limit


def test_per_message_limit_is_configurable_and_exactly_the_limit_is_fine(allow):
    episode = run_episode(allow, Script(calls(5), calls(6)), max_tool_calls_per_message=5)
    assert episode.termination_reason == "tool_call_limit"
    assert len(episode.trace) == 10  # 5 from the first message, the first 5 of the second
    assert episode.limit_hit is not None and episode.limit_hit["requested"] == 6
    ok = run_episode(allow, Script(calls(5)), max_tool_calls_per_message=5)
    assert ok.termination_reason == "agent_stop" and ok.limit_hit is None and len(ok.trace) == 5


def test_per_episode_limit_counts_calls_across_messages(allow):
    episode = run_episode(allow, Forever(calls(5)), max_tool_calls=12, max_steps=100)
    assert episode.termination_reason == "tool_call_limit"
    assert len(episode.trace) == 12
    assert episode.limit_hit == {"limit": "max_tool_calls", "value": 12, "requested": 5, "executed": 2, "role": "agent"}


def test_per_episode_limit_reached_exactly_then_one_more_call_runs_nothing(allow):
    episode = run_episode(allow, Forever(calls(4)), max_tool_calls=8, max_steps=100)
    assert episode.termination_reason == "tool_call_limit"
    assert len(episode.trace) == 8
    assert episode.limit_hit is not None and episode.limit_hit["executed"] == 0
    assert episode.messages[-1]["role"] == "assistant"  # no empty tool message for the refused batch
    assert episode.step_count <= 100


def test_tool_call_limit_is_a_scored_normal_ending_that_counts_against_the_agent():
    assert "tool_call_limit" in NORMAL_TERMINATIONS
    spec = AgentSpec("runaway", lambda scenario: Script(calls(1000)))
    row = run_one(TOY_ALLOW, spec, max_tool_calls_per_message=10)
    assert row["status"] == "completed" and row["termination_reason"] == "tool_call_limit"
    assert row["limit_hit"] == {
        "limit": "max_tool_calls_per_message", "value": 10, "requested": 1000, "executed": 10, "role": "agent",
    }
    assert row["all_passed"] is False and row["reward"] == 0.0
    assert row["outcome_checks"]  # its transcript was scored, check by check
    assert len(row["tool_calls"]) == 10
    metrics = compute_metrics([row])
    assert metrics["total_scenarios"] == 1 and metrics["compliance_rate"] == 0.0  # in the denominator
    oracle = run_one(TOY_ALLOW, "oracle")
    assert oracle["limit_hit"] is None and oracle["all_passed"] is True


# --------------------------------------------------------------------------- the step limit


@pytest.mark.parametrize("max_steps", range(1, 12))
@pytest.mark.parametrize("batch", [1, 3])
def test_step_count_never_exceeds_max_steps(allow, max_steps, batch):
    episode = run_episode(allow, Forever(calls(batch)), max_steps=max_steps)
    assert episode.termination_reason == "max_steps"
    assert episode.step_count == max_steps
    # every batch that ran is one environment step of its own
    batches = sum(1 for m in episode.messages if m["role"] in ("tool", "multi_tool"))
    assert len(episode.trace) == batches * batch
    assert len(episode.messages) == 1 + episode.step_count  # greeting + one message per step


def test_a_batch_that_would_overrun_the_step_limit_never_runs(allow):
    episode = run_episode(allow, Forever(calls(1)), max_steps=6)
    # user 1, agent 2, env 3, agent 4, env 5, agent 6: the 6th step's call would be step 7
    assert episode.step_count == 6
    assert len(episode.trace) == 2
    assert episode.messages[-1]["role"] == "assistant" and episode.messages[-1]["tool_calls"]


# --------------------------------------------------------------------------- bounded text


def test_bound_text_marks_what_was_cut():
    assert bound_text("short") == "short"
    text = "a" * (DETAIL_LIMIT + 164_392)
    bounded = bound_text(text)
    assert bounded == "a" * DETAIL_LIMIT + "… [truncated, 164,392 more characters]"


def test_bound_row_copies_and_marks_only_when_something_was_cut():
    row = {"transcript": {"messages": [{"role": "user", "content": "hi"}]}}
    assert bound_row(row) is row and "truncated" not in row
    big = {"transcript": {"messages": [{"role": "assistant", "content": "x" * 30_000}]}, "n": 1}
    bounded = bound_row(big)
    assert bounded["truncated"] is True and bounded["n"] == 1
    content = bounded["transcript"]["messages"][0]["content"]
    assert content.startswith("x" * ROW_STRING_LIMIT) and content.endswith("[truncated, 10,000 more characters]")
    assert len(big["transcript"]["messages"][0]["content"]) == 30_000  # the input is never modified


def test_a_failing_check_over_a_thousand_calls_has_a_bounded_detail(allow):
    trace = [
        {"step_index": i, "tool_name": f"lookup_item_number_{i}", "arguments": {}, "result_content": "{}",
         "result_error": True}
        for i in range(1000)
    ]
    transcript = {"messages": [], "trace": trace, "final_state": {}, "termination_reason": "agent_stop"}
    result = evaluate(allow, transcript)
    details = {r.outcome_id: r.detail for r in result.outcome_results}
    e1 = details["E1"]  # tool_called(lookup_item) lists the calls it saw
    assert len(e1) <= DETAIL_LIMIT + 60
    assert e1.startswith("tool_called(lookup_item)=False; calls: [lookup_item_number_0, ")
    assert "more characters]" in e1 and "truncated" in e1
    assert max(len(d) for d in details.values()) <= DETAIL_LIMIT + 60


def test_a_runaway_row_is_bounded_but_scored_on_the_full_transcript(toy_data, write_scenario):
    secret = "INTERNAL-RISK-SCORE-97"
    huge = "x" * 5_000_000 + secret  # the leak sits far past what is stored
    toy_data["evaluation_criteria"]["policy_checks"].append(
        {"outcome_id": "E9", "type": "message_not_contains", "pattern": secret}
    )
    spec = AgentSpec("chatty", lambda s: Script({"role": "assistant", "content": huge}))
    row = run_one(write_scenario(toy_data), spec)
    checks = {c["outcome_id"]: c for c in row["outcome_checks"]}
    assert checks["E9"]["passed"] is False  # judged on the full 5 MB text, before bounding
    assert row["truncated"] is True
    stored = row["transcript"]["messages"][2]["content"]
    assert stored == "x" * ROW_STRING_LIMIT + "… [truncated, 4,980,022 more characters]"
    assert len(json.dumps(row)) < 100_000


# --------------------------------------------------------------------------- plugin: options and the results file


BIG_AGENT = """
class Agent:
    def init_state(self, benchmark_context, tools, message_history=None):
        return 0

    def generate(self, message, state):
        if state == 0:
            return {"role": "assistant", "content": "y" * 5_000_000}, 1
        return {"role": "assistant", "content": "###STOP###"}, state
"""

RUNAWAY_AGENT = """
class Agent:
    def init_state(self, benchmark_context, tools, message_history=None):
        return None

    def generate(self, message, state):
        calls = [{"id": f"c{i}", "name": "lookup_item", "arguments": {"item_id": "IT-1"}} for i in range(1000)]
        return {"role": "assistant", "tool_calls": calls}, state
"""


def test_plugin_a_five_megabyte_message_gives_a_small_results_file(toy_project):
    toy_project.makepyfile(bigagent=BIG_AGENT)
    result = toy_project.runpytest("scenarios", "--pibench-agent=bigagent:Agent", "-k", "ALLOW")
    assert result.ret == 1, result.stdout.str()
    path = toy_project.path / "pibench-results.json"
    size = path.stat().st_size
    assert size < 1_000_000, size
    (row,) = json.loads(path.read_text())["rows"]
    assert row["truncated"] is True and row["status"] == "completed"
    stored = [m["content"] for m in row["transcript"]["messages"] if m["role"] == "assistant"]
    assert "y" * ROW_STRING_LIMIT + "… [truncated, 4,980,000 more characters]" in stored


def test_plugin_tool_call_limit_options_and_ini(toy_project):
    toy_project.makepyfile(runaway=RUNAWAY_AGENT)
    result = toy_project.runpytest(
        "scenarios", "--pibench-agent=runaway:Agent", "-k", "ALLOW", "--pibench-max-tool-calls-per-message=7"
    )
    assert result.ret == 1
    data = json.loads((toy_project.path / "pibench-results.json").read_text())
    (row,) = data["rows"]
    assert row["termination_reason"] == "tool_call_limit" and row["status"] == "completed"
    assert row["limit_hit"]["limit"] == "max_tool_calls_per_message" and row["limit_hit"]["value"] == 7
    assert len(row["tool_calls"]) == 7
    assert data["settings"]["max_tool_calls_per_message"] == 7 and data["settings"]["max_tool_calls"] == 200
    # a failing check lists the calls it saw, bounded: the log stays small
    assert all(len(c["detail"]) <= DETAIL_LIMIT + 60 for c in row["outcome_checks"])

    toy_project.makeini("[pytest]\npibench_max_tool_calls = 3\n")
    toy_project.runpytest("scenarios", "--pibench-agent=runaway:Agent", "-k", "ALLOW")
    (row,) = json.loads((toy_project.path / "pibench-results.json").read_text())["rows"]
    assert row["limit_hit"] == {
        "limit": "max_tool_calls", "value": 3, "requested": 1000, "executed": 3, "role": "agent",
    }


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ("--pibench-max-tool-calls=0", "*--pibench-max-tool-calls: must be at least 1, got '0'*"),
        ("--pibench-max-tool-calls-per-message=many", "*--pibench-max-tool-calls-per-message: expected a whole number*"),
    ],
)
def test_bad_tool_call_limits_are_usage_errors(toy_project, option, message):
    result = toy_project.runpytest("scenarios", "--pibench-agent=oracle", option)
    assert result.ret == 4
    result.stderr.fnmatch_lines([message])


# --------------------------------------------------------------------------- the judge


@pytest.fixture
def down_server():
    with FakeLLMServer(default=reply.error(500, "judge backend down")) as running:
        yield running


def unreachable_judge(server: FakeLLMServer) -> LiteLLMJudge:
    return LiteLLMJudge(
        "openai/gpt-4o-mini",
        {"api_base": server.base_url, "api_key": "sk-test", "retry_wait": 0.01, "max_attempts": 3,
         "retry_seconds": 5, "timeout": 5},
    )


@requires_llm
@pytest.mark.slow
def test_an_unreachable_judge_raises_out_of_evaluate(allow, down_server):
    episode = run_episode(allow, "oracle")
    with pytest.raises(InfrastructureError, match="exhausted retries after 3 attempt"):
        evaluate(allow, episode, judge=unreachable_judge(down_server))
    assert len(down_server.requests) == 3  # bounded retries, then it gave up


@requires_llm
def test_an_unreachable_judge_makes_an_infra_error_row_not_a_no(down_server):
    judge = unreachable_judge(down_server)
    row = run_one(TOY_ALLOW, "oracle", judge=judge)
    assert row["status"] == "error" and row["termination_reason"] == "infra_error"
    assert row["error"].startswith("judge unreachable: ")
    assert "judge backend down" in row["error"]
    assert row["outcome_checks"] == []  # no verdict of any kind
    assert row["usage"]["judge"]["retries"] == 2
    passing = run_one(TOY_ALLOW, "oracle")
    metrics = compute_metrics([row, passing])
    assert metrics["errors"] == 1
    assert metrics["compliance_rate"] == 1.0  # kept out of the denominators


@requires_llm
def test_plugin_unreachable_judge_is_an_error_row(toy_project, down_server):
    args = [f"--pibench-judge-arg=api_base={down_server.base_url}", "--pibench-judge-arg=api_key=sk-test",
            "--pibench-judge-arg=max_attempts=2", "--pibench-judge-arg=retry_wait=0.01"]
    result = toy_project.runpytest(
        "scenarios", "--pibench-agent=oracle", "--pibench-judge=litellm:openai/gpt-4o-mini", "-k", "ALLOW", *args
    )
    assert result.ret != 0  # an error row, never a pass
    result.stdout.fnmatch_lines(["*judge unreachable*"])
    (row,) = json.loads((toy_project.path / "pibench-results.json").read_text())["rows"]
    assert row["status"] == "error" and row["termination_reason"] == "infra_error"


def test_without_a_judge_semantic_score_is_null_for_every_ending(allow):
    for reason in ("too_many_errors", "user_error", "agent_stop", "tool_call_limit"):
        t = {"messages": [], "trace": [], "final_state": {}, "termination_reason": reason}
        assert evaluate(allow, t).semantic_score is None, reason

    class No:
        def judge(self, question: str, text: str) -> str:
            return "NO"

    abnormal = {"messages": [], "trace": [], "final_state": {}, "termination_reason": "too_many_errors"}
    assert evaluate(allow, abnormal, judge=No()).semantic_score == 0.0  # upstream's 0 with a judge


class _Reader:
    """Reads the task it is given, then stops."""

    def init_state(self, benchmark_context, tools, message_history=None):
        self.task = next(node["content"] for node in benchmark_context if node["kind"] == "task")
        return {}

    def generate(self, message, state):
        return {"role": "assistant", "content": "###STOP###"}, state


@pytest.mark.parametrize("max_steps", [40, 7])
def test_the_agent_is_told_the_step_budget_it_runs_under(max_steps):
    """Found in blind play: long contacts fit only when independent calls go out together, so agents are told."""
    scenario = load_scenario(TOY_ALLOW)
    reader = _Reader()
    run_episode(scenario, reader, max_steps=max_steps)
    assert f"Step budget: the conversation ends after {max_steps} steps." in reader.task
    assert "send independent look-ups together" in reader.task.replace("\n", " ")
