"""``--pibench-concurrency N`` (issue 13): episodes overlap within a process, results do not change,
and pytest's semantics (``-x``, ``-n``, shared agents) hold."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

SLOW_AGENT = """
import os
import threading
import time

_lock = threading.Condition()
_active = 0
_peak = 0


def _note(change):
    global _active, _peak
    with _lock:
        _active += change
        _peak = max(_peak, _active)
        with open(f"peak-{os.getpid()}.txt", "w") as out:
            out.write(str(_peak))
        _lock.notify_all()
        if change > 0 and os.path.exists("wait-for-a-peer"):
            # overlap by construction, not by timing: hold until a second episode is in flight
            _lock.wait_for(lambda: _active >= 2, timeout=60)


class Agent:
    '''Waits like a model would, then denies; notes how many of its episodes were in flight at once.'''

    def init_state(self, ctx, tools, message_history=None):
        _note(+1)
        return {"turn": 0}

    def generate(self, message, state):
        time.sleep(0.15)
        if state["turn"] == 0:
            call = {"id": "c1", "name": "record_decision", "arguments": {"decision": "DENY", "rationale": "no"}}
            return {"role": "assistant", "tool_calls": [call]}, {"turn": 1}
        return {"role": "assistant", "content": "Denied. ###STOP###"}, {"turn": 2}

    def is_stop(self, message):
        return "###STOP###" in (message.get("content") or "")

    def stop(self, message, state):
        _note(-1)


instance = Agent()
"""


@pytest.fixture
def slow_project(toy_project: pytest.Pytester) -> pytest.Pytester:
    toy_project.makepyfile(slowpoke=SLOW_AGENT)
    toy_project.syspathinsert()
    return toy_project


def peaks(path: Path) -> list[int]:
    return sorted(int(p.read_text()) for p in path.glob("peak-*.txt"))


def comparable(path: Path) -> str:
    data = json.loads(path.read_text())
    rows = [{k: v for k, v in row.items() if k not in ("duration", "nodeid")} for row in data["rows"]]
    return json.dumps(sorted(rows, key=lambda r: (r["agent"], r["scenario_id"], r["trial"])), sort_keys=True)


def test_episodes_overlap_up_to_the_concurrency(slow_project):
    (slow_project.path / "wait-for-a-peer").touch()  # each episode starts only once another is in flight
    result = slow_project.runpytest_subprocess("scenarios", "--pibench-agent=slowpoke:Agent", "--pibench-trials=4",
                                               "--pibench-concurrency=4")
    result.assert_outcomes(failed=8)  # a decision-only agent fails both toy scenarios, every trial
    (peak,) = peaks(slow_project.path)
    assert 2 <= peak <= 4  # episodes overlap (else the first would wait for a peer in vain), never more than 4


@pytest.mark.skipif(bool(os.environ.get("PIBENCH_TEST_CONCURRENCY")), reason="the option is set for every run")
def test_without_the_option_one_episode_at_a_time(slow_project):
    slow_project.runpytest_subprocess("scenarios", "--pibench-agent=slowpoke:Agent", "--pibench-trials=2")
    assert peaks(slow_project.path) == [1]


@pytest.mark.slow
def test_a_shared_agent_instance_never_runs_two_episodes_at_once(slow_project):
    slow_project.runpytest_subprocess("scenarios", "--pibench-agent=slowpoke:instance", "--pibench-trials=3",
                                      "--pibench-concurrency=4")
    assert peaks(slow_project.path) == [1]


@pytest.mark.slow
def test_results_are_identical_under_any_concurrency_and_workers(slow_project):
    args = ["scenarios", "--pibench-agent=oracle", "--pibench-agent=baseline:allow", "--pibench-agent=slowpoke:Agent",
            "--pibench-trials=3"]
    slow_project.runpytest_subprocess(*args, "--pibench-results=serial.json")
    slow_project.runpytest_subprocess(*args, "--pibench-concurrency=5", "--pibench-results=threads.json")
    both = slow_project.runpytest_subprocess(*args, "-n", "2", "--pibench-concurrency=3",
                                             "--pibench-results=both.json")
    both.stdout.fnmatch_lines(["*2 workers*"])
    slow_project.runpytest_subprocess(*args, "-n", "2", "--dist=worksteal", "--pibench-concurrency=4",
                                      "--pibench-results=steal.json")
    serial = comparable(slow_project.path / "serial.json")
    assert comparable(slow_project.path / "threads.json") == serial
    assert comparable(slow_project.path / "both.json") == serial
    assert comparable(slow_project.path / "steal.json") == serial  # stolen items' early episodes are dropped


def test_x_stops_the_run_and_keeps_only_the_items_that_ran(slow_project):
    result = slow_project.runpytest_subprocess("scenarios", "--pibench-agent=baseline:deny", "--pibench-trials=4",
                                               "--pibench-concurrency=4", "-x")
    result.assert_outcomes(failed=1)
    data = json.loads((slow_project.path / "pibench-results.json").read_text())
    assert len(data["rows"]) == 1 and data["complete"] is False
    assert "stopped early" in result.stdout.str()


def test_bad_concurrency_is_a_usage_error(toy_project):
    result = toy_project.runpytest("scenarios", "--pibench-agent=oracle", "--pibench-concurrency=0")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--pibench-concurrency: must be at least 1*"])


def test_pi_run_concurrency_is_the_plugin_option(toy_project):
    import argparse

    from pytest_pibench.cli import _pytest_args, _run_options  # one option table for both

    parser = argparse.ArgumentParser()
    _run_options(parser)
    args = parser.parse_args(["--concurrency", "8", "--workers", "2"])
    out = _pytest_args(args, ["scenarios"], [])
    assert "--pibench-concurrency=8" in out and out[-2:] == ["-n", "2"]


@pytest.mark.skipif(bool(os.environ.get("PIBENCH_TEST_CONCURRENCY")), reason="the option is set for every run")
@pytest.mark.slow
def test_with_workers_and_episodes_in_flight_xdist_steals_work_unless_told_otherwise(toy_project):
    args = ["scenarios", "--pibench-agent=oracle", "--pibench-trials=2", "-n", "2", "-v"]
    stealing = toy_project.runpytest_subprocess(*args, "--pibench-concurrency=2")
    stealing.stdout.fnmatch_lines(["*scheduling tests via WorkStealingScheduling*"])
    chosen = toy_project.runpytest_subprocess(*args, "--pibench-concurrency=2", "--dist=load")
    chosen.stdout.fnmatch_lines(["*scheduling tests via LoadScheduling*"])
    plain = toy_project.runpytest_subprocess(*args)
    plain.stdout.fnmatch_lines(["*scheduling tests via LoadScheduling*"])
