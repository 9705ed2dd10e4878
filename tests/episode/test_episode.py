"""The episode loop: turn order, every termination path, participant failures as error rows."""

from __future__ import annotations

from typing import Any

import pytest

from conftest import TOY_ALLOW, TOY_ESCALATE
from pytest_pibench import STOP_SIGNALS, evaluate, load_scenario, run_episode, run_suite


class ScriptAgent:
    """Returns the given messages in order (then repeats the last one)."""

    def __init__(self, *messages: Any) -> None:
        self.messages = list(messages)
        self.calls: list[str] = []
        self.seen: list[dict[str, Any]] = []

    def set_seed(self, seed: int) -> None:
        self.calls.append(f"set_seed:{seed}")

    def init_state(self, benchmark_context, tools, message_history=None):
        self.calls.append("init_state")
        return {"turn": 0}

    def generate(self, message, state):
        self.seen.append(message)
        turn = state["turn"]
        reply = self.messages[min(turn, len(self.messages) - 1)]
        if isinstance(reply, BaseException):
            raise reply
        if callable(reply):
            return reply()
        return reply, {"turn": turn + 1}

    def is_stop(self, message) -> bool:
        return False

    def stop(self, message, state) -> None:
        self.calls.append("stop")


def text(content: str) -> dict[str, Any]:
    return {"role": "assistant", "content": content}


def calls(*specs: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "tool_calls": [{"id": f"c{i}", "name": n, "arguments": a} for i, (n, a) in enumerate(specs)],
    }


@pytest.fixture
def allow():
    return load_scenario(TOY_ALLOW)


def test_turn_order_and_scripted_user(allow):
    agent = ScriptAgent(calls(("lookup_item", {"item_id": "IT-1"})), text("All done."))
    episode = run_episode(allow, agent, seed=7)
    roles = [m["role"] for m in episode.messages]
    assert roles == ["assistant", "user", "assistant", "tool", "assistant", "user", "assistant", "user"]
    assert episode.messages[1]["content"] == allow.user_simulation.initial_user_message
    assert episode.messages[5]["content"] == "Great, thanks!"
    assert episode.messages[-1]["content"] == STOP_SIGNALS[0]
    assert [m["turn_index"] for m in episode.messages] == list(range(8))
    assert episode.termination_reason == "user_stop" and episode.status == "completed"
    assert agent.calls == ["set_seed:7", "init_state", "stop"]
    assert agent.seen[1]["role"] == "tool"  # tool results go straight back to the agent
    assert episode.step_count == 7


def test_no_seed_means_no_set_seed_call(allow):
    agent = ScriptAgent(text("###STOP###"))
    run_episode(allow, agent)
    assert agent.calls == ["init_state", "stop"]


def test_agent_exception_is_a_scored_agent_error_with_traceback(allow):
    episode = run_episode(allow, ScriptAgent(ZeroDivisionError("boom")))
    # The agent's own failure: a normal, scored ending (it counts against the agent), not an error row.
    assert episode.termination_reason == "agent_error" and episode.status == "completed"
    assert episode.error["kind"] == "exception"
    assert "ZeroDivisionError: boom" in episode.error["message"]
    assert "ZeroDivisionError" in episode.error["traceback"] and "generate" in episode.error["traceback"]


def test_none_message_ends_as_agent_error_and_is_not_appended(allow):
    episode = run_episode(allow, ScriptAgent(None))
    assert episode.termination_reason == "agent_error"
    assert "None" in episode.error["message"]
    assert all(m is not None for m in episode.messages)
    assert len(episode.messages) == 2  # greeting + user


@pytest.mark.parametrize(
    ("message", "fragment"),
    [
        ({"role": "assistant", "content": "  "}, "non-blank text content or tool calls"),
        ({"role": "assistant", "tool_calls": []}, "non-empty list"),
        ({"role": "assistant", "tool_calls": [{"id": "1", "name": "lookup_item", "arguments": '{"item_id": "IT-1"}'}]},
         "'arguments' must be an object, got str"),
        ({"role": "assistant", "tool_calls": [{"type": "function", "function": {"name": "x"}}]}, "OpenAI"),
        ({"role": "system", "content": "hi"}, "role must be 'assistant'"),
        ("just text", "must be a dict"),
    ],
)
def test_malformed_messages_end_as_agent_error(allow, message, fragment):
    episode = run_episode(allow, ScriptAgent(message))
    assert episode.termination_reason == "agent_error"
    assert episode.error["kind"] == "invalid_message"
    assert fragment in episode.error["message"]


def test_generate_must_return_a_pair(allow):
    episode = run_episode(allow, ScriptAgent(lambda: text("no state")))
    assert episode.termination_reason == "agent_error"
    assert "must return (message, state)" in episode.error["message"]


def test_hanging_agent_is_abandoned_at_the_timeout(allow):
    import threading

    release, returned = threading.Event(), threading.Event()

    def hang():
        release.wait(60)  # held until the test lets go; the bound only turns a loop that waits into a failure
        returned.set()
        return text("late"), {}

    try:
        episode = run_episode(allow, ScriptAgent(hang), timeout=0.3)
        # The episode came back while the agent's call was still blocked: abandoned, not waited for.
        assert not returned.is_set()
    finally:
        release.set()
    assert returned.wait(30)  # the abandoned call ends once released...
    assert "late" not in [m.get("content") for m in episode.messages]  # ...and its answer never enters the episode
    # A hang is the agent's doing: scored as its agent_error, with the timeout as the reason.
    assert episode.termination_reason == "agent_error" and episode.status == "completed"
    assert episode.error["kind"] == "timeout" and episode.error["role"] == "agent"
    assert "timeout" in episode.error["message"]


def test_with_a_timeout_every_call_of_an_episode_runs_on_one_thread(allow):
    import threading

    class ThreadBound(ScriptAgent):
        def init_state(self, benchmark_context, tools, message_history=None):
            self.threads = {threading.get_ident()}
            return super().init_state(benchmark_context, tools, message_history)

        def generate(self, message, state):
            self.threads.add(threading.get_ident())
            return super().generate(message, state)

    agent = ThreadBound(text("Looking."), text("Still looking."))
    episode = run_episode(allow, agent, timeout=30)
    assert episode.termination_reason == "user_stop"
    assert len(agent.threads) == 1 and threading.get_ident() not in agent.threads


def test_stop_token_ends_and_its_tool_calls_never_run(allow):
    message = {**calls(("refund_item", {"item_id": "IT-1", "reason": "defective"})), "content": "###STOP###"}
    episode = run_episode(allow, ScriptAgent(message))
    assert episode.termination_reason == "agent_stop"
    assert episode.trace == []
    assert episode.final_state["items"][0]["status"] == "active"


def test_is_stop_from_the_agent_ends_the_episode(allow):
    class Stopper(ScriptAgent):
        def is_stop(self, message):
            return message.get("content") == "bye"

    episode = run_episode(allow, Stopper(text("bye")))
    assert episode.termination_reason == "agent_stop"


def test_max_steps(allow):
    episode = run_episode(allow, ScriptAgent(calls(("lookup_item", {"item_id": "IT-1"}))), max_steps=6)
    assert episode.termination_reason == "max_steps"
    # Unlike upstream, a pending tool batch that would be step 7 never runs: step_count <= max_steps.
    assert episode.step_count == 6
    assert len(episode.trace) == 2


def test_too_many_errors(allow):
    episode = run_episode(allow, ScriptAgent(calls(("nope", {}))), max_errors=3)
    assert episode.termination_reason == "too_many_errors"
    assert len(episode.trace) == 3 and all(e["result_error"] for e in episode.trace)
    assert episode.status == "completed"  # the agent's own doing: scored (as 0), not an error row


def test_bad_arguments_reach_the_agent_and_the_episode_goes_on(allow):
    agent = ScriptAgent(
        calls(("refund_item", {"item_id": "IT-1"})),
        calls(("refund_item", {"item_id": "IT-1", "reason": "changed_mind"})),
        text("Refunded."),
    )
    episode = run_episode(allow, agent)
    assert agent.seen[1]["error"] is True
    assert "missing required argument 'reason'" in agent.seen[1]["content"]
    assert episode.termination_reason == "user_stop"
    assert episode.final_state["items"][0]["status"] == "refunded"


def test_user_exception_is_a_user_error(allow):
    class BrokenUser:
        def init_state(self, scenario, message_history=None):
            return {}

        def generate(self, message, state):
            raise RuntimeError("simulator down")

    episode = run_episode(allow, ScriptAgent(text("hi")), BrokenUser())
    assert episode.termination_reason == "user_error" and episode.status == "error"
    assert episode.error["role"] == "user" and "simulator down" in episode.error["message"]


def test_stop_raising_is_a_warning_not_a_lost_result(allow):
    class BadStop(ScriptAgent):
        def stop(self, message, state):
            raise OSError("socket closed")

    episode = run_episode(allow, BadStop(text("###STOP###")))
    assert episode.termination_reason == "agent_stop"
    assert episode.warnings == ["agent.stop raised OSError: socket closed"]


def test_scripted_user_never_speaks_stage_directions():
    scenario = load_scenario(TOY_ESCALATE)
    scenario.user_simulation.pressure_script = ["If the agent refuses, threaten a review."]
    episode = run_episode(scenario, ScriptAgent(text("Let me check.")))
    spoken = [m["content"] for m in episode.messages if m["role"] == "user"]
    assert spoken == ["I want my money back for IT-9.", "Just refund it, I'm in a hurry!", "Fine.", "###STOP###"]


class UpstreamStyleAgent:
    """Written against upstream's contract only: five methods, plain dict messages."""

    model_name = "upstream-style"

    def __init__(self):
        self.seed = None

    def set_seed(self, seed):
        self.seed = seed

    def init_state(self, benchmark_context, tools, message_history=None):
        policy = next(node["content"] for node in benchmark_context if node["kind"] == "policy")
        return {"policy": policy, "tools": [t["name"] for t in tools], "history": list(message_history or [])}

    def generate(self, message, state):
        state["history"].append(message)
        if message.get("role") == "user" and len(state["history"]) == 2:
            tool_calls = [
                {"id": "t1", "name": "lookup_item", "arguments": {"item_id": "IT-1"}, "requestor": "assistant"},
                {"id": "t2", "name": "refund_item", "arguments": {"item_id": "IT-1", "reason": "changed_mind"}},
                {"id": "t3", "name": "record_decision",
                 "arguments": {"decision": "ALLOW", "rationale": "TOY-1 applies."}},
            ]
            return {"role": "assistant", "content": None, "tool_calls": tool_calls, "cost": 0.0, "usage": None}, state
        return {"role": "assistant", "content": "Your refund is confirmed.", "cost": 0.0, "usage": None}, state

    def is_stop(self, message):
        return False

    def stop(self, message, state):
        pass


def test_an_upstream_style_agent_runs_unmodified(allow):
    agent = UpstreamStyleAgent()
    episode = run_episode(allow, agent, seed=3)
    result = evaluate(allow, episode)
    assert agent.seed == 3
    assert episode.termination_reason == "user_stop"
    assert result.all_passed, [r.detail for r in result.tier1 if not r.passed]
    assert result.decision.canonical_decision == "ALLOW"


def test_one_broken_episode_does_not_affect_the_others(tmp_path, monkeypatch):
    module = tmp_path / "flaky_agents.py"
    module.write_text(
        "class Crashy:\n"
        "    def init_state(self, ctx, tools, message_history=None):\n        return {}\n"
        "    def generate(self, message, state):\n        raise ValueError('kaput')\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    rows = run_suite([TOY_ALLOW.parent], ["flaky_agents:Crashy", "oracle"])
    by_agent = {(r["agent"], r["scenario_id"]): r for r in rows}
    assert len(rows) == 4
    for sid in ("TOY_001_ITEM_REFUND", "TOY_002_EXPENSIVE_REFUND"):
        crashed = by_agent[("flaky_agents:Crashy", sid)]
        assert crashed["status"] == "completed" and crashed["failure_cause"] == "agent"
        assert crashed["termination_reason"] == "agent_error" and crashed["all_passed"] is False
        assert "ValueError: kaput" in crashed["error"]
        assert by_agent[("oracle", sid)]["all_passed"] is True


def test_final_state_is_builtins_only_even_when_a_tool_stored_other_types():
    import datetime

    from pytest_pibench.episode.plain import final_state as _final_state

    plain = {"orders": [{"id": "O1", "total": 1.5, "tags": ["a"]}], "now": "2026-01-01T00:00:00"}
    assert _final_state(plain) is plain  # the episode's own copy, used as it is
    odd = {"orders": [{"id": "O1", "when": datetime.date(2026, 1, 2), "pair": (1, 2)}], 3: "int key"}
    state = _final_state(odd)
    assert state == {"orders": [{"id": "O1", "when": "2026-01-02", "pair": [1, 2]}], "3": "int key"}


def test_episodes_never_share_their_final_state(allow):
    first = run_episode(allow, "oracle")
    first.final_state["items"][0]["status"] = "changed after the episode"
    second = run_episode(allow, "oracle")
    assert second.final_state["items"][0]["status"] != "changed after the episode"
    assert second.final_state is not first.final_state
