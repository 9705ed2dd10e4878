"""A customer who reacts: reactive scripted turns, the oracle acting after the customer agrees, and their checks."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from pytest_pibench import OracleAgent, ScenarioError, ScriptedUser, evaluate, load_scenario, run_episode
from pytest_pibench.validation import validate_scenario

REACTIVE_TURN: dict[str, Any] = {
    "branches": [
        {"id": "pushback", "when": {"decision": "DENY"}, "say": "That can't be right, it's still sealed."},
        {"id": "thanks", "when": {"tool_called": "refund_item"}, "say": "Thank you, that's all I needed."},
        {"id": "answer", "when": {"asked": True, "decision": "NONE"}, "say": "It's item IT-1, bought five days ago."},
    ],
    "default": "Okay. What happens now?",
    "oracle": "thanks",
}


def reactive(toy_data: dict[str, Any], **changes: Any) -> dict[str, Any]:
    data = copy.deepcopy(toy_data)
    data["user_simulation"]["scripted_turns"] = [copy.deepcopy(REACTIVE_TURN)]
    for key, value in changes.items():
        data["user_simulation"]["scripted_turns"][0][key] = value
    return data


def said_by_customer(episode: Any) -> list[str]:
    return [m["content"] for m in episode.messages if m["role"] == "user"]


class Scripted:
    """An agent that plays fixed messages, one per turn."""

    def __init__(self, *messages: dict[str, Any]) -> None:
        self.messages = list(messages)

    def init_state(self, ctx: Any, tools: Any, message_history: Any = None) -> int:
        return 0

    def generate(self, message: dict[str, Any], state: int) -> tuple[dict[str, Any], int]:
        reply = self.messages[min(state, len(self.messages) - 1)]
        return reply, state + 1


def text(content: str) -> dict[str, Any]:
    return {"role": "assistant", "content": content}


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"role": "assistant", "tool_calls": [{"id": name, "name": name, "arguments": arguments}]}


DENY = call("record_decision", decision="DENY", rationale="opened")


@pytest.mark.parametrize(
    ("agent", "expected"),
    [
        pytest.param(Scripted(DENY, text("I can't refund this.")), ("pushback",), id="decision-deny"),
        pytest.param(
            Scripted(call("refund_item", item_id="IT-1", reason="changed_mind"), text("Refunded.")),
            ("thanks",),
            id="tool-called",
        ),
        pytest.param(Scripted(text("Which item is it?")), ("answer",), id="asked-and-undecided"),
        pytest.param(Scripted(text("Let me check.")), ("default",), id="neutral-default"),
    ],
)
def test_a_reactive_turn_says_the_first_branch_that_holds(toy_data, write_scenario, agent, expected):
    scenario = load_scenario(write_scenario(reactive(toy_data)))
    customer = ScriptedUser()
    episode = run_episode(scenario, agent, customer)
    assert [branch for _, branch in customer.path] == list(expected)
    lines = {b["id"]: b["say"] for b in REACTIVE_TURN["branches"]} | {"default": REACTIVE_TURN["default"]}
    assert said_by_customer(episode)[1] == lines[expected[0]]


def test_said_any_matches_phrases_in_the_agents_latest_message(toy_data, write_scenario):
    turn = {"branches": [{"id": "manager", "when": {"said_any": ["Manager", "supervisor"]}, "say": "Fine, escalate."}],
            "default": "Hm.", "oracle": "default"}
    scenario = load_scenario(write_scenario(reactive(toy_data, **turn)))
    customer = ScriptedUser()
    episode = run_episode(scenario, Scripted(text("I'll ask my MANAGER about it.")), customer)
    assert customer.path == [(1, "manager")] and said_by_customer(episode)[1] == "Fine, escalate."


def test_the_oracle_acts_after_the_customer_agrees(toy_data, write_scenario):
    data = copy.deepcopy(toy_data)
    data["user_simulation"]["scripted_turns"] = ["Yes please, go ahead with the refund."]
    calls = data["reference_trajectory"]["calls"]
    calls[1]["after_turn"] = 1  # refund_item only after the customer's first scripted turn
    calls[2]["after_turn"] = 1
    data["reference_trajectory"]["replies"] = ["It is eligible for a refund. Shall I go ahead?"]
    scenario = load_scenario(write_scenario(data))
    episode = run_episode(scenario, OracleAgent(scenario))
    order = [(m["role"], m.get("content") or [c["name"] for c in m.get("tool_calls", [])]) for m in episode.messages]
    agreed = order.index(("user", "Yes please, go ahead with the refund."))
    refunded = next(i for i, (role, what) in enumerate(order) if role == "assistant" and what == ["refund_item",
                                                                                                     "record_decision"])
    assert order[agreed - 1] == ("assistant", "It is eligible for a refund. Shall I go ahead?")
    assert agreed < refunded
    assert evaluate(scenario, episode).all_passed


def test_the_validator_checks_the_oracles_path(toy_data, write_scenario):
    good = load_scenario(write_scenario(reactive(toy_data)))
    assert [p for p in validate_scenario(good) if p.rule == "script"] == []
    wrong = load_scenario(write_scenario(reactive(toy_data, oracle="pushback"), "wrong.json"))
    (problem,) = [p.message for p in validate_scenario(wrong) if p.rule == "script"]
    assert problem == "scripted_turns[0]: the gold trajectory takes 'thanks', not the declared 'pushback'"
    undeclared = load_scenario(write_scenario(reactive(toy_data, oracle=None), "undeclared.json"))
    assert any("say which branch the gold trajectory takes" in p.message for p in validate_scenario(undeclared))


def test_the_validator_finds_unreachable_branches_and_unknown_tools(toy_data, write_scenario):
    branches = [
        {"id": "any-deny", "when": {"decision": "DENY"}, "say": "No way."},
        {"id": "deny-and-ask", "when": {"decision": "DENY", "asked": True}, "say": "Why?"},
        {"id": "typo", "when": {"tool_called": "refund_itme"}, "say": "Thanks."},
    ]
    scenario = load_scenario(write_scenario(reactive(toy_data, branches=branches, oracle="default")))
    messages = sorted(p.message for p in validate_scenario(scenario) if p.rule == "script")
    assert messages == [
        "scripted_turns[0] branch 'deny-and-ask' is never said: 'any-deny' before it always applies",
        "scripted_turns[0] branch 'typo': tool_called 'refund_itme' is not a tool of this scenario",
    ]


@pytest.mark.parametrize(
    ("turn", "message"),
    [
        ({"branches": [{"id": "a", "when": {}, "say": "x"}], "default": "y"}, "needs at least one of decision"),
        ({"branches": [{"id": "a", "when": {"asked": True}, "say": "x"}], "default": "y", "oracle": "b"},
         "oracle 'b' names no branch"),
        ({"branches": [{"id": "default", "when": {"asked": True}, "say": "x"}], "default": "y"},
         "branch ids must be unique and not 'default'"),
        ({"branches": [{"id": "a", "when": {"decision": "MAYBE"}, "say": "x"}], "default": "y"}, "decision"),
        ({"branches": [{"id": "a", "when": {"asked": True}, "say": "x", "tone": "angry"}], "default": "y"},
         "tone"),
    ],
)
def test_malformed_reactive_turns_are_scenario_errors(toy_data, write_scenario, turn, message):
    data = copy.deepcopy(toy_data)
    data["user_simulation"]["scripted_turns"] = [turn]
    with pytest.raises(ScenarioError, match="user_simulation.scripted_turns") as error:
        load_scenario(write_scenario(data))
    assert message in str(error.value)


def test_a_custom_user_with_observe_sees_the_trace_before_its_turn(toy_data, write_scenario):
    seen: list[list[str]] = []

    class Watching(ScriptedUser):
        def observe(self, trace, messages):
            seen.append([e.tool_name for e in trace])
            super().observe(trace, messages)

    scenario = load_scenario(write_scenario(toy_data))
    run_episode(scenario, OracleAgent(scenario), Watching())
    assert seen[0] == [] and seen[1] == ["lookup_item", "refund_item", "record_decision"]
