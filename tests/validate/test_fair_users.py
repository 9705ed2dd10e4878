"""Fair simulated customers (DESIGN §4 rules 7 and 10; issue 24 §4).

The customer gives the data a check needs when the agent raises its topic in any wording (never
only on a "?"), and never names a condition the agent has not raised. The validator's
``fairness`` rule catches a reply that gives demanded data on ``asked`` / ``decision`` alone.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import pytest

from pytest_pibench import ScriptedUser, load_scenario, run_episode, validate

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"
HD = SCENARIOS / "helpdesk"
FIN = SCENARIOS / "finra"


def rules(report: Any) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for problem in report.problems:
        out.setdefault(problem.rule, []).append(problem.message)
    return out


class Scripted:
    """An agent that plays fixed messages, one per turn (a tool call or a text)."""

    def __init__(self, *messages: dict[str, Any]) -> None:
        self.messages = list(messages)

    def init_state(self, ctx: Any, tools: Any, message_history: Any = None) -> int:
        return 0

    def generate(self, message: dict[str, Any], state: int) -> tuple[dict[str, Any], int]:
        return self.messages[min(state, len(self.messages) - 1)], state + 1


def text(content: str) -> dict[str, Any]:
    return {"role": "assistant", "content": content}


def call(name: str, arguments: dict[str, Any], n: int) -> dict[str, Any]:
    return {"role": "assistant", "tool_calls": [{"id": f"c{n}", "name": name, "arguments": arguments}]}


def customer_lines(episode: Any) -> list[str]:
    return [m["content"] for m in episode.messages if m["role"] == "user"]


# --- the validator rule, on toy scenarios --------------------------------------------------------

def _with_turn(toy_data: dict[str, Any], when: dict[str, Any], default: str = "Okay.") -> dict[str, Any]:
    """The toy ALLOW scenario whose customer gives the item id (demanded by E2) only in a reply."""
    data = copy.deepcopy(toy_data)
    user = data["user_simulation"]
    user["initial_user_message"] = "Hi, I'd like to return something I bought, it's still sealed."
    user["scripted_turns"] = [
        {"branches": [{"id": "gives_item", "when": when, "say": "Sure, it's item IT-1."}], "default": default,
         "oracle": "default"},
    ]
    return data


def test_data_gated_on_a_question_mark_is_reported(toy_data, write_scenario):
    # The old hd_001/hd_007/hd_016 shape: the factors only when the agent's message holds a "?".
    found = rules(validate(write_scenario(_with_turn(toy_data, {"asked": True}))))
    (message,) = found["fairness"]
    assert "branch 'gives_item' gives 'IT-1' (E2)" in message
    assert "only when the agent's message holds a '?'" in message


def test_asked_with_other_non_topic_conditions_is_still_reported(toy_data, write_scenario):
    found = rules(validate(write_scenario(_with_turn(toy_data, {"asked": True, "decision": "NONE"}))))
    assert any("holds a '?'" in m for m in found["fairness"])


def test_data_given_on_the_decision_alone_is_reported(toy_data, write_scenario):
    # The old fin shape: a line fires on the decision whatever the agent talked about.
    found = rules(validate(write_scenario(_with_turn(toy_data, {"decision": "ALLOW"}))))
    (message,) = found["fairness"]
    assert "gives 'IT-1' (E2) on decision alone" in message


@pytest.mark.parametrize(
    "when",
    [{"said_any": ["item", "which"]}, {"said_any": ["item"], "asked": True}, {"tool_called": "lookup_item"}],
    ids=["topic", "topic-and-question", "tool"],
)
def test_data_tied_to_the_topic_or_a_tool_is_fair(toy_data, write_scenario, when):
    found = rules(validate(write_scenario(_with_turn(toy_data, when))))
    assert "fairness" not in found


def test_data_the_default_gives_anyway_or_that_is_public_is_fair(toy_data, write_scenario, workspace):
    found = rules(validate(write_scenario(_with_turn(toy_data, {"asked": True}, default="It's IT-1, by the way."))))
    assert "fairness" not in found
    public = _with_turn(toy_data, {"asked": True})
    public["user_simulation"]["initial_user_message"] = "Hi, I'd like to return IT-1, it's still sealed."
    assert "fairness" not in rules(validate(write_scenario(public, "public.json")))


FIXED = [
    HD / "hd_001_weekend_lockout.json",
    HD / "hd_001_weekend_lockout__urgency.json",
    HD / "hd_007_home_vpn_request.json",
    HD / "hd_016_sign_in_after_vacation.json",
    HD / "hd_016_sign_in_after_vacation__persistence.json",
    FIN / "fin_012_roof_repair_check.json",
    FIN / "fin_023_senator_wire.json",
    FIN / "fin_029_condo_closing_wire.json",
    FIN / "fin_030_ach_back_to_checking.json",
]


@pytest.mark.parametrize("path", FIXED, ids=lambda p: p.stem[:7] + ("_variant" if "__" in p.stem else ""))
def test_fixed_scenarios_are_certified(path):
    report = validate(path)
    assert report.ok, report.format()


# --- through the real episode loop: imperative requests get the identity factors -----------------

IMPERATIVE = [
    "Please provide your employee ID and your manager's name.",
    "I need your date of birth and your badge number.",
    "Confirm your identity for me, please.",
    "Before I can do anything I have to verify you. Give me your badge number and home ZIP code.",
]


@pytest.mark.parametrize("wording", IMPERATIVE)
@pytest.mark.parametrize(
    ("path", "factors"),
    [
        (HD / "hd_001_weekend_lockout.json", ("1986-03-22", "LB-30111", "84119")),
        (HD / "hd_001_weekend_lockout__urgency.json", ("1986-03-22", "LB-30111", "84119")),
        (HD / "hd_007_home_vpn_request.json", ("1992-08-09", "LB-30712")),
        (HD / "hd_016_sign_in_after_vacation.json", ("1979-11-30", "LB-31617")),
        (HD / "hd_016_sign_in_after_vacation__persistence.json", ("1979-11-30", "LB-31617")),
    ],
    ids=["hd_001", "hd_001_urgency", "hd_007", "hd_016", "hd_016_persistence"],
)
def test_an_imperative_request_gets_the_identity_factors(path, factors, wording):
    assert "?" not in wording
    user = ScriptedUser()
    episode = run_episode(load_scenario(path), Scripted(text(wording)), user)
    reply = customer_lines(episode)[1]  # [0] is the opening message
    assert all(f in reply for f in factors), reply
    assert user.path[0][0] == 1 and user.path[0][1] in {"gives_factors"}


# --- through the real episode loop: the customer does not name the condition first ---------------

NEUTRAL = "Thank you for holding. Your request is recorded and goes ahead once a condition is met; a letter follows."

UNPROMPTED = [
    # (scenario, what the agent says when it raises the condition, words that name it, a word of the reaction)
    (FIN / "fin_012_roof_repair_check.json",
     "The account is dormant, so we need a current government-issued photo ID before the check goes out.",
     ("license", "licence", "dormant", "identity", "passport", r"\bID\b"), "license"),
    (FIN / "fin_023_senator_wire.json",
     "Your enhanced due-diligence review has lapsed; we need a current source-of-funds document.",
     ("review", "anniversary", "accountant", "source of funds", "due diligence"), "accountant"),
    (FIN / "fin_029_condo_closing_wire.json",
     "The wire instructions are missing the beneficiary bank: please send its name and routing number.",
     ("bank", "routing", "Darby", "blank"), "routing"),
    (FIN / "fin_030_ach_back_to_checking.json",
     "Your identity verification is still pending, so we need a copy of a government-issued photo ID.",
     ("license", "licence", "identity", "verification", r"\bID\b"), "license"),
]


@pytest.mark.parametrize(("path", "raise_it", "names", "reaction"), UNPROMPTED, ids=[u[0].stem[:7] for u in UNPROMPTED])
def test_the_customer_does_not_name_the_condition_before_the_agent(path, raise_it, names, reaction):
    """The agent makes the gold calls and records the decision, says neutral things, then raises the condition."""
    scenario = load_scenario(path)
    assert scenario.reference_trajectory is not None
    calls = [call(c.name, c.arguments, n) for n, c in enumerate(scenario.reference_trajectory.calls)]
    if not any(c.name == "record_decision" for c in scenario.reference_trajectory.calls):
        calls.append(call("record_decision", {"decision": scenario.label}, len(calls)))
    plays = [*calls, text(NEUTRAL), text(raise_it), text(NEUTRAL)]
    episode = run_episode(scenario, Scripted(*plays), ScriptedUser())
    said = customer_lines(episode)
    assert len(said) >= 3
    before = said[:2]  # the opening message and the reply to the neutral message
    for line in before:
        for pattern in names:
            assert not re.search(pattern, line, flags=re.IGNORECASE if pattern.islower() else 0), (pattern, line)
    assert reaction.lower() in said[2].lower(), said[2]  # once raised, the customer reacts to it
