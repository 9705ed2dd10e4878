"""Every row the engine and the plugin produce has exactly the keys and value types ``ResultRow`` declares.

Code under test: ``pytest_pibench/results/types.py`` (the TypedDicts),
``results/rows.py`` and ``runner.py`` (the writers), the plugin (which adds
``fingerprint``, ``nodeid``, ``resume`` and crash rows) and
``results/leaderboard.py`` (upstream's ``scenario_details`` entries).

:func:`shape_problems` walks a value against a declared type with
``typing.get_type_hints`` and the TypedDicts' required/optional key sets: a
key the type does not declare, a required key missing or a value of the wrong
type is a problem. So a key added to a row without declaring it fails here.
"""

from __future__ import annotations

import json
import types
import typing
from pathlib import Path
from typing import Any

import pytest

from conftest import TOY_ALLOW, TOY_ESCALATE
from pytest_pibench.episode.protocols import InfrastructureError
from pytest_pibench.participants.specs import AgentSpec
from pytest_pibench.results import leaderboard
from pytest_pibench.results.document import load_baseline, read_results, results_document
from pytest_pibench.results.leaderboard import to_leaderboard
from pytest_pibench.results.metrics import compute_metrics
from pytest_pibench.results.rows import error_row
from pytest_pibench.results.types import FLAG_NAMES, EventFlags, ResultRow, ResultsDocument, ScenarioDetail
from pytest_pibench.runner import run_one

# --------------------------------------------------------------------------------------------------
# The checker
# --------------------------------------------------------------------------------------------------


def shape_problems(value: Any, expected: Any, where: str = "row") -> list[str]:
    """Why ``value`` is not a ``expected`` (empty when it is); ``where`` names the place in messages."""
    if expected is Any:
        return []
    if typing.is_typeddict(expected):
        if not isinstance(value, dict):
            return [f"{where}: {type(value).__name__}, expected a dict ({expected.__name__})"]
        hints = typing.get_type_hints(expected)
        problems = [f"{where}: key {key!r} is not declared by {expected.__name__}" for key in value if key not in hints]
        problems += [f"{where}: required key {key!r} missing" for key in expected.__required_keys__ if key not in value]
        for key, item in value.items():
            if key in hints:
                problems += shape_problems(item, hints[key], f"{where}[{key!r}]")
        return problems
    origin, args = typing.get_origin(expected), typing.get_args(expected)
    if origin in (typing.Union, types.UnionType):
        options = [shape_problems(value, option, where) for option in args]
        return [] if any(not found for found in options) else [f"{where}: {value!r:.80} is none of {expected}"]
    if origin is typing.Literal:
        return [] if value in args else [f"{where}: {value!r} is not one of {args}"]
    if origin is list:
        if not isinstance(value, list):
            return [f"{where}: {type(value).__name__}, expected a list"]
        return [p for index, item in enumerate(value) for p in shape_problems(item, args[0], f"{where}[{index}]")]
    if origin is dict:
        if not isinstance(value, dict):
            return [f"{where}: {type(value).__name__}, expected a dict"]
        return [
            p
            for key, item in value.items()
            for p in shape_problems(key, args[0], f"{where} key") + shape_problems(item, args[1], f"{where}[{key!r}]")
        ]
    if expected is type(None):
        return [] if value is None else [f"{where}: {value!r:.80}, expected None"]
    if expected is float:  # an int is a float (PEP 484), a bool is not
        ok = isinstance(value, int | float) and not isinstance(value, bool)
    elif expected is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    else:
        ok = isinstance(value, expected)
    return [] if ok else [f"{where}: {value!r:.80} is a {type(value).__name__}, expected {expected.__name__}"]


def assert_shape(value: Any, expected: Any) -> None:
    problems = shape_problems(value, expected)
    assert not problems, "\n".join(problems)


# --------------------------------------------------------------------------------------------------
# Participants that reach every optional key
# --------------------------------------------------------------------------------------------------


class Crashes:
    """An agent that raises on its first turn: the episode ends as its ``agent_error`` (scored)."""

    def init_state(self, benchmark_context, tools, message_history=None):
        return {}

    def generate(self, message, state):
        raise RuntimeError("the agent fell over")


class Rambles:
    """Says far too much, then looks the item up twice in one message; reports usage and fails to stop."""

    def init_state(self, benchmark_context, tools, message_history=None):
        return {"turn": 0}

    def generate(self, message, state):
        state["turn"] += 1
        if state["turn"] == 1:
            return {"role": "assistant", "content": "blah " * 5000}, state
        call = {"name": "lookup_item", "arguments": {"item_id": "IT-1"}}
        return {"role": "assistant", "tool_calls": [{"id": "a", **call}, {"id": "b", **call}]}, state

    def is_stop(self, message):
        return False

    def stop(self, message, state):
        raise RuntimeError("cannot stop")

    def usage(self):
        return {
            "calls": 2,
            "prompt_tokens": 10,
            "completion_tokens": 5,
            "cost_usd": 0.01,
            "retries": 0,
            "cache_hits": 0,
        }


class BrokenUser:
    """A user simulator that fails: the episode is an error row, not the agent's failure."""

    def init_state(self, benchmark_context, tools, message_history=None):
        return {}

    def generate(self, message, state):
        raise RuntimeError("the user simulator fell over")


class YesJudge:
    def judge(self, question: str, text: str) -> str | None:
        return "YES"


class UnreachableJudge:
    def judge(self, question: str, text: str) -> str | None:
        raise InfrastructureError("judge endpoint refused the connection")


def spec(name: str, agent: type) -> AgentSpec:
    return AgentSpec(name, lambda scenario: agent())


@pytest.fixture(scope="module")
def engine_rows() -> dict[str, ResultRow]:
    """One row of every kind the runner writes, by what made it."""
    return {
        "oracle": run_one(TOY_ALLOW, "oracle", judge=YesJudge()),
        "baseline": run_one(TOY_ESCALATE, "baseline:deny"),
        "agent crash": run_one(TOY_ALLOW, spec("crashes", Crashes)),
        "limits, truncation, usage": run_one(TOY_ALLOW, spec("rambles", Rambles), max_tool_calls_per_message=1),
        "user crash": run_one(TOY_ALLOW, "oracle", user_factory=lambda scenario: BrokenUser()),
        "judge outage": run_one(TOY_ALLOW, "oracle", judge=UnreachableJudge()),
        "missing scenario": run_one(Path("no/such/scenario.json"), "oracle"),
        "error row": error_row("SCEN_X", "worker crashed", trial=2, agent="a", traceback="Traceback ..."),
    }


# --------------------------------------------------------------------------------------------------
# Rows
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kind",
    [
        "oracle",
        "baseline",
        "agent crash",
        "limits, truncation, usage",
        "user crash",
        "judge outage",
        "missing scenario",
        "error row",
    ],
)
def test_every_engine_row_matches_the_declared_keys_and_types(engine_rows, kind):
    row = engine_rows[kind]
    assert_shape(row, ResultRow)
    assert_shape(json.loads(json.dumps(row)), ResultRow)  # and so does what the results file stores


def test_the_rows_reach_the_optional_keys_they_are_meant_to(engine_rows):
    """The parametrized check above is only as good as the keys the rows carry: prove they carry them."""
    assert engine_rows["oracle"]["all_passed"] is True and engine_rows["oracle"]["semantic_score"] == 1.0
    assert engine_rows["baseline"]["all_passed"] is False
    crash = engine_rows["agent crash"]
    assert crash["status"] == "completed" and crash["failure_cause"] == "agent"
    assert crash["error_detail"] is not None and "fell over" in crash["error_detail"]["message"]
    rambles = engine_rows["limits, truncation, usage"]
    assert rambles["limit_hit"] is not None and rambles["limit_hit"]["limit"] == "max_tool_calls_per_message"
    assert rambles.get("truncated") is True and rambles["warnings"] and rambles["usage"]["agent"]["calls"] == 2
    assert engine_rows["user crash"]["status"] == "error" and engine_rows["user crash"]["transcript"]["messages"]
    outage = engine_rows["judge outage"]
    assert outage["termination_reason"] == "infra_error" and outage["step_count"] > 0
    assert engine_rows["missing scenario"]["termination_reason"] == "scenario_error"
    assert engine_rows["error row"]["error_detail"] == {
        "role": "harness",
        "kind": "exception",
        "message": "worker crashed",
        "traceback": "Traceback ...",
    }
    # Every key our writers always set is there in every row (upstream rows may lack them).
    for kind, row in engine_rows.items():
        missing = {"agent", "failure_cause", "termination_reason", "outcome_checks"} - set(row)
        assert not missing, f"{kind}: {missing}"
        assert "dimensions" not in row  # each check is stored once, in outcome_checks (with its dimension)
        assert all({"tier", "dimension"} <= set(c) for c in row["outcome_checks"])


def test_the_checker_rejects_an_undeclared_key_and_a_wrong_type(engine_rows):
    row = engine_rows["oracle"]
    assert shape_problems({**row, "surprise": 1}, ResultRow) == ["row: key 'surprise' is not declared by ResultRow"]
    bad_check = {**row["outcome_checks"][0], "weight": 2}
    assert shape_problems({**row, "outcome_checks": [bad_check]}, ResultRow) == [
        "row['outcome_checks'][0]: key 'weight' is not declared by CheckEntry"
    ]
    assert shape_problems({**row, "trial": "0"}, ResultRow) == ["row['trial']: '0' is a str, expected int"]
    assert shape_problems({**row, "reward": True}, ResultRow) == ["row['reward']: True is a bool, expected float"]
    without_label = {k: v for k, v in row.items() if k != "label"}
    assert shape_problems(without_label, ResultRow) == ["row: required key 'label' missing"]


def test_an_upstream_scenario_details_row_is_a_result_row_and_scores():
    """upstream-evaluation.md §8.4: none of our keys, a check with ``dimension``; metrics read it."""
    upstream = {
        "scenario_id": "SCEN_010",
        "trial": 0,
        "domain": "finra",
        "domain_name": "finra",
        "leaderboard_primary": "Evidence Grounding",
        "label": "DENY",
        "status": "completed",
        "reward": 1.0,
        "all_passed": True,
        "semantic_score": 0.75,
        "canonical_decision": "DENY",
        "decision_channel": "tool",
        "decision_valid": True,
        "decision_error": None,
        "event_flags": {"V_r": False, "UR_r": False, "OR_r": False, "EA_r": False, "AT_r": False},
        "benchmark_version": "0.1.0",
        "seed": 3408167560520354549,
        "duration": 37.7,
        "tool_calls": ["record_decision"],
        "outcome_checks": [
            {
                "outcome_id": "E5",
                "type": "tool_called",
                "passed": True,
                "detail": "tool_called(record_decision)=True",
                "dimension": "",
            }
        ],
    }
    assert_shape(upstream, ResultRow)
    assert compute_metrics([upstream])["by_column"]["Evidence Grounding"]["score"] == 1.0


def test_event_flag_names_are_the_declared_flags():
    assert tuple(typing.get_type_hints(EventFlags)) == FLAG_NAMES


# --------------------------------------------------------------------------------------------------
# What the plugin adds, and the documents
# --------------------------------------------------------------------------------------------------

BROKEN_FILE = "{ not json"


def test_rows_and_documents_the_plugin_writes_match_the_declared_types(toy_project):
    (toy_project.path / "scenarios" / "toyshop" / "broken.json").write_text(BROKEN_FILE)  # a crash row
    first = toy_project.runpytest("scenarios", "--pibench-agent=oracle", "--pibench-results=first.json")
    first.assert_outcomes(passed=2, failed=1)
    resumed = toy_project.runpytest(
        "scenarios", "--pibench-agent=oracle", "--pibench-results=second.json", "--pibench-resume=first.json"
    )
    resumed.assert_outcomes(passed=2, failed=1)
    for name in ("first.json", "second.json"):
        document = read_results(toy_project.path / name)
        assert_shape(document, ResultsDocument)
        assert_shape(load_baseline(str(toy_project.path / name)), ResultsDocument)
        rows = document["rows"]
        assert len(rows) == 3 and all("nodeid" in row for row in rows)
        assert [row["status"] for row in rows].count("error") == 1
        assert all("fingerprint" in row for row in rows if row["status"] == "completed")
    completed = [row for row in read_results(toy_project.path / "second.json")["rows"] if row["status"] == "completed"]
    assert len(completed) == 2 and all(row["resume"]["reused"] for row in completed)


def test_a_fresh_results_document_matches_its_declared_type(engine_rows):
    rows = list(engine_rows.values())
    document = results_document(rows, {"agents": ["oracle"], "trials": 1}, 1.5, complete=False, ended_by="stopped")
    assert_shape(document, ResultsDocument)
    assert_shape(json.loads(json.dumps(document)), ResultsDocument)


# --------------------------------------------------------------------------------------------------
# Upstream's scenario_details
# --------------------------------------------------------------------------------------------------


def test_leaderboard_key_lists_are_scenario_details_declared_keys():
    """The artifact writes what ``ScenarioDetail`` declares: its required keys in order, then the optional ones."""
    required = [key for key in typing.get_type_hints(ScenarioDetail) if key in ScenarioDetail.__required_keys__]
    assert list(leaderboard._DETAIL_KEYS) == required
    assert {*leaderboard._OPTIONAL_KEYS, "outcome_checks"} == set(ScenarioDetail.__optional_keys__)


def test_every_scenario_details_entry_is_an_upstream_detail(engine_rows):
    for kind, row in engine_rows.items():
        artifact = to_leaderboard([row], agent_id=str(row.get("agent")))
        (detail,) = artifact["results"][0]["scenario_details"]
        problems = shape_problems(detail, ScenarioDetail)
        assert not problems, f"{kind}: {problems}"
        assert not set(detail) - set(typing.get_type_hints(ScenarioDetail)), kind  # none of our keys
