"""The run layer every front end shares: limits and config checked once, the plan, the executor's whole-run loop."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from conftest import TOY_ALLOW, TOY_ESCALATE
from pytest_pibench import AgentSpec, OracleAgent, bundled_scenarios_dir, discover_scenarios, run_suite
from pytest_pibench.inputs import InputError
from pytest_pibench.results.document import Journal
from pytest_pibench.results.resume import ResumeIndex
from pytest_pibench.run import EpisodeLimits, Executor, RunConfig

RETAIL = sorted(discover_scenarios(bundled_scenarios_dir() / "retail"))[:6]


def _without_timing(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if k != "duration"} for r in rows]


@pytest.mark.parametrize(
    ("changes", "fragment"),
    [
        ({"max_steps": 0}, "max_steps must be a whole number of at least 1"),
        ({"max_tool_calls": True}, "max_tool_calls must be a whole number"),
        ({"timeout": float("nan")}, "timeout must be a positive, finite number"),
        ({"timeout": -1}, "timeout must be a positive, finite number"),
        ({"cost_limit": float("inf")}, "cost_limit must be a positive, finite amount"),
        ({"observer_mode": "strict"}, "observer_mode must be one of ['audit_only', 'hard_gate']"),
    ],
)
def test_episode_limits_refuse_values_out_of_range(changes, fragment):
    with pytest.raises(InputError) as info:
        EpisodeLimits(**changes)
    assert fragment in str(info.value)


def test_limits_from_a_mapping_keep_defaults_and_refuse_unknown_names():
    limits = EpisodeLimits.from_mapping({"max_steps": 12})
    assert limits.max_steps == 12 and limits.max_tool_calls == EpisodeLimits().max_tool_calls
    with pytest.raises(InputError, match=r"unknown episode limit\(s\) \['max_turns'\]"):
        EpisodeLimits.from_mapping({"max_turns": 3})


@pytest.mark.parametrize(
    ("changes", "fragment"),
    [
        ({"trials": 0}, "trials must be a whole number of at least 1"),
        ({"concurrency": 0}, "concurrency must be a whole number of at least 1"),
        ({"trial_mode": "adaptive"}, "trial_mode must be one of"),
        ({"trial_mode": "sequential"}, "sequential trials need a K-of-N pass rule"),
    ],
)
def test_run_config_refuses_values_out_of_range(changes, fragment):
    with pytest.raises(InputError) as info:
        RunConfig(**changes)
    assert fragment in str(info.value)


def test_the_settings_dict_keeps_its_keys_so_earlier_runs_stay_resumable():
    """Run keys hash this dict: a key that appeared in every run would make every earlier row stale."""
    assert set(RunConfig().to_dict()) == {
        "agents", "user", "trials", "seed", "max_steps", "max_tool_calls_per_message", "max_tool_calls",
        "observer_mode", "judge_votes", "domain_paths", "timeout", "judge", "agent_args", "user_args",
        "trial_mode", "min_pass",
    }  # fmt: skip
    changed = RunConfig(limits=EpisodeLimits(cost_limit=0.5, max_errors=3), agent_args={"api_key": "sk-1"}).to_dict()
    assert changed["episode_cost_limit"] == 0.5 and changed["max_errors"] == 3
    assert changed["agent_args"] == {"api_key": "***"}  # no secret reaches a results file


def test_the_plan_gives_every_item_its_seed_and_run_key_once():
    executor = Executor(RunConfig(agents=("oracle",), trials=2, seed=5))
    items = executor.plan([TOY_ALLOW, TOY_ESCALATE])
    assert [(i.scenario_id, i.trial) for i in items] == [
        ("TOY_001_ITEM_REFUND", 0), ("TOY_001_ITEM_REFUND", 1), ("TOY_002_EXPENSIVE_REFUND", 0),
        ("TOY_002_EXPENSIVE_REFUND", 1),
    ]  # fmt: skip
    assert len({i.seed for i in items}) == 4  # each (scenario, trial) its own seed
    again = Executor(RunConfig(agents=("oracle",), trials=2, seed=5)).plan([TOY_ALLOW, TOY_ESCALATE])
    assert [(i.seed, i.key) for i in items] == [(i.seed, i.key) for i in again]
    other_seed = Executor(RunConfig(agents=("oracle",), trials=2, seed=6)).plan([TOY_ALLOW])
    assert other_seed[0].seed != items[0].seed


def test_concurrency_changes_nothing_but_the_wall_time():
    one = Executor(RunConfig(agents=("oracle",), trials=2))
    rows_one = one.run(one.plan(RETAIL)).in_plan_order()
    four = Executor(RunConfig(agents=("oracle",), trials=2, concurrency=4))
    outcome = four.run(four.plan(RETAIL))
    assert outcome.complete and len(outcome.rows) == 12
    assert _without_timing(outcome.in_plan_order()) == _without_timing(rows_one)
    assert all(r["all_passed"] for r in rows_one)


class _PricedOracle(OracleAgent):
    """The oracle, reporting one dollar per episode."""

    def usage(self) -> dict[str, Any]:
        return {"cost_usd": 1.0}


def test_the_run_cost_limit_stops_new_episodes_and_says_so():
    executor = Executor(RunConfig(cost_limit=2.5))
    spec = AgentSpec("priced", _PricedOracle)
    outcome = executor.run(executor.plan(RETAIL, [spec]))
    assert len(outcome.rows) == 3  # the third reached $3.00 >= $2.50: nothing after it started
    assert outcome.ended_by == "stopped early: cost limit reached: $3.0000 of $2.5 spent"
    document = executor.document(outcome)
    assert document["complete"] is False and document["planned_items"] == len(RETAIL)


def test_sequential_trials_stop_once_the_verdict_is_settled():
    executor = Executor(RunConfig(agents=("oracle",), trials=3, trial_mode="sequential", min_pass=(1, 3)))
    outcome = executor.run(executor.plan(RETAIL[:2]))
    assert outcome.complete and outcome.settled == 4  # one pass settles 1-of-3: trials 1 and 2 never run
    assert sorted((r["scenario_id"], r["trial"], r["trial_mode"]) for r in outcome.rows) == sorted(
        (r["scenario_id"], 0, "sequential") for r in outcome.rows
    )


def test_rows_reach_the_journal_and_on_row_as_they_finish(tmp_path: Path):
    journal = Journal(tmp_path / "run.journal")
    journal.open({"note": "test"})
    seen: list[tuple[int, int]] = []
    executor = Executor(RunConfig(agents=("oracle",), concurrency=3))
    record = lambda _, done, total: seen.append((done, total))  # noqa: E731
    outcome = executor.run(executor.plan(RETAIL), journal=journal, on_row=record)
    lines = [json.loads(line) for line in (tmp_path / "run.journal").read_text().splitlines()]
    journaled = [line["row"] for line in lines if "row" in line]
    assert sorted(r["scenario_id"] for r in journaled) == sorted(r["scenario_id"] for r in outcome.rows)
    assert seen == [(n, len(RETAIL)) for n in range(1, len(RETAIL) + 1)]


def test_a_stop_request_starts_nothing_new_and_the_outcome_is_partial():
    stop = threading.Event()
    executor = Executor(RunConfig(agents=("oracle",)))
    outcome = executor.run(executor.plan(RETAIL), on_row=lambda *_: stop.set(), stop=stop)
    assert len(outcome.rows) == 1 and outcome.ended_by == "cancelled by the caller"


def test_resume_reuses_rows_whose_run_key_matches():
    config = RunConfig(agents=("oracle",))
    first = Executor(config)
    earlier = first.run(first.plan(RETAIL[:2])).rows
    resumed = Executor(config, resume=ResumeIndex("earlier.json", earlier))
    rows = resumed.run(resumed.plan(RETAIL[:2])).rows
    assert all(r["resume"] == {"reused": True, "source": "earlier.json"} for r in rows)
    other = Executor(config.with_(limits=EpisodeLimits(max_steps=12)), resume=ResumeIndex("earlier.json", earlier))
    replayed = other.run(other.plan(RETAIL[:2])).rows
    assert all(r["resume"]["reused"] is False and "max_steps" in r["resume"]["reason"] for r in replayed)


def test_run_suite_runs_through_the_executor_with_the_config_and_limit_changes():
    rows = run_suite([TOY_ALLOW], ["oracle"], trials=2, config=RunConfig(seed=9), max_steps=3)
    assert [r["trial"] for r in rows] == [0, 1]
    assert all(r["termination_reason"] == "max_steps" and r["step_count"] == 3 for r in rows)
    key = rows[0]["fingerprint"]["key"]
    assert key["settings"]["max_steps"] == 3 and key["seed"] == rows[0]["seed"]


def test_episodes_leave_no_participant_thread_behind():
    """Each episode with a timeout runs its participant calls on a thread of its own; it ends with the episode."""
    import time

    before = {t.ident for t in threading.enumerate()}
    executor = Executor(RunConfig(agents=("oracle",), trials=3))  # the default 600 s timeout: calls on a thread
    assert len(executor.run(executor.plan(RETAIL)).rows) == 18
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        left = [t for t in threading.enumerate() if t.ident not in before and t.name == "pibench-participant"]
        if not left:
            break
        time.sleep(0.05)
    assert not left, f"{len(left)} participant threads outlived their episodes"
