"""Issue 8: results survive every ending (journal, atomic writes, SIGTERM, Ctrl-C, crashes) and runs resume."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pytest_pibench.cli import main as pi_main

KILLED_IN_FLIGHT = pytest.mark.skipif(
    bool(os.environ.get("PIBENCH_TEST_CONCURRENCY")),
    reason="with episodes in flight, an agent that kills the process also kills the episodes not yet reported "
    "(documented in the README; --pibench-resume re-runs them)",
)

# An agent that plays the toy ALLOW scenario's gold calls, and on the ESCALATE one does what
# the environment variable TOY_AGENT_MODE says: "exit" kills the process, "sleep" hangs.
AGENT = """
import json, os, time

class Agent:
    def init_state(self, ctx, tools, message_history=None):
        return {"escalate": False, "calls": [
            {"id": "c1", "name": "lookup_item", "arguments": {"item_id": "IT-1"}},
            {"id": "c2", "name": "refund_item", "arguments": {"item_id": "IT-1", "reason": "changed_mind"}},
            {"id": "c3", "name": "record_decision",
             "arguments": {"decision": "ALLOW", "rationale": "TOY-1", "item_id": "IT-1"}},
        ]}

    def generate(self, message, state):
        if "IT-9" in json.dumps(message):  # the ESCALATE scenario's customer asks about IT-9
            state["escalate"] = True
        if state["escalate"]:
            mode = os.environ.get("TOY_AGENT_MODE", "")
            if mode == "exit":
                os._exit(3)
            if mode == "sleep":
                open("agent-is-sleeping", "w").close()  # tells the test the episode is now inside the hang
                time.sleep(60)
        if state["calls"]:
            return {"role": "assistant", "tool_calls": [state["calls"].pop(0)]}, state
        return {"role": "assistant", "content": "Done."}, state

    def is_stop(self, message):
        return False
"""


@pytest.fixture
def project(toy_project: pytest.Pytester) -> Path:
    toy_project.makepyfile(toyagent=AGENT)
    return toy_project.path


def run(project: Path, *args: str, mode: str = "", **kwargs: object) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TOY_AGENT_MODE": mode, "PYTHONPATH": str(project)}
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "scenarios", *args]
    return subprocess.run(command, cwd=project, env=env, capture_output=True, text=True, timeout=120, **kwargs)


def start(project: Path, *args: str, mode: str) -> subprocess.Popen[str]:
    env = {**os.environ, "TOY_AGENT_MODE": mode, "PYTHONPATH": str(project)}
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "scenarios", *args]
    return subprocess.Popen(command, cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def wait_for_rows(journal: Path, count: int, limit: float = 60) -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if journal.exists() and journal.read_text().count('"row":') >= count:
            return
        time.sleep(0.05)
    raise AssertionError(f"the journal never had {count} row(s)")


@KILLED_IN_FLIGHT
def test_an_agent_that_kills_the_process_leaves_every_finished_row_on_disk(project):
    out = run(project, "--pibench-agent=toyagent:Agent", mode="exit")
    assert out.returncode == 3, out.stdout + out.stderr
    results = json.loads((project / "pibench-results.json").read_text())
    assert results["complete"] is False and results["planned_items"] == 2  # never mistaken for a full run
    journal = project / results["journal"]
    assert journal.name == "pibench-results.journal.jsonl"
    lines = [json.loads(line) for line in journal.read_text().splitlines()]
    assert [line["row"]["scenario_id"] for line in lines if "row" in line] == ["TOY_001_ITEM_REFUND"]
    # pi report folds the journal in, writes the artifact marked partial, and exits 9: not publishable.
    assert pi_main(["report", str(project / "pibench-results.json"), "-o", str(project / "lb.json")]) == 9
    board = json.loads((project / "lb.json").read_text())
    assert [d["scenario_id"] for d in board["results"][0]["scenario_details"]] == ["TOY_001_ITEM_REFUND"]
    assert board["pibench_validity"]["complete"] is False


@pytest.mark.parametrize(("signum", "name"), [(signal.SIGTERM, "SIGTERM"), (signal.SIGINT, "SIGINT")])
@pytest.mark.slow
def test_a_stop_signal_mid_episode_writes_a_partial_results_file_and_the_summary(project, signum, name):
    # A timeout makes the episode wait on a thread: the interrupted wait must not become an agent error.
    process = start(project, "--pibench-agent=toyagent:Agent", "--pibench-timeout=50", mode="sleep")
    wait_for_rows(project / "pibench-results.journal.jsonl", 1)
    marker = project / "agent-is-sleeping"
    deadline = time.monotonic() + 60
    while not marker.exists() and time.monotonic() < deadline:  # the second episode reaches the hang
        time.sleep(0.05)
    assert marker.exists(), "the agent never started its hang"
    process.send_signal(signum)
    output, _ = process.communicate(timeout=30)
    assert process.returncode == pytest.ExitCode.INTERRUPTED, output
    assert "pi-bench summary" in output and "PARTIAL RUN: 1 of 2 items finished" in output
    results = json.loads((project / "pibench-results.json").read_text())
    assert results["complete"] is False and results["ended_by"] == f"interrupted by {name}"
    assert [r["scenario_id"] for r in results["rows"]] == ["TOY_001_ITEM_REFUND"]
    assert all(r["termination_reason"] != "agent_error" for r in results["rows"])
    assert results["validity"]["valid"] is False
    assert not (project / "pibench-results.journal.jsonl").exists()  # folded into the results file


def test_maxfail_makes_a_partial_run(project):
    out = run(project, "--pibench-agent=baseline:deny", "-x")
    results = json.loads((project / "pibench-results.json").read_text())
    assert out.returncode == 1
    assert results["complete"] is False and results["ended_by"].startswith("stopped early")


@KILLED_IN_FLIGHT  # the first run is killed by its agent: see the mark
@pytest.mark.slow
def test_resume_reuses_unchanged_rows_and_reruns_the_rest(project):
    first = run(project, "--pibench-agent=toyagent:Agent", mode="exit")
    assert first.returncode == 3
    journal = project / "pibench-results.journal.jsonl"
    saved = project / "interrupted.journal.jsonl"
    saved.write_text(journal.read_text())
    out = run(project, "--pibench-agent=toyagent:Agent", f"--pibench-resume={saved.name}")
    assert out.returncode == 1, out.stdout  # the toy agent fails the ESCALATE scenario, but it ran
    assert "Resume: reused 1 of 2 rows from interrupted.journal.jsonl; re-ran 1: 1 not in the earlier run" in out.stdout
    results = json.loads((project / "pibench-results.json").read_text())
    assert results["complete"] is True
    by_id = {r["scenario_id"]: r for r in results["rows"]}
    assert by_id["TOY_001_ITEM_REFUND"]["resume"]["reused"] is True
    assert by_id["TOY_002_EXPENSIVE_REFUND"]["resume"] == {
        "reused": False, "reason": "not in the earlier run", "source": saved.name
    }

    # Resume from that full results file: a changed scenario file and changed limits are re-run.
    done = project / "done.json"
    done.write_text((project / "pibench-results.json").read_text())
    scenario = project / "scenarios" / "toyshop" / "toy_002_expensive_item_refund.json"
    edited = json.loads(scenario.read_text())
    edited["meta"]["notes"] = "edited after the first run"
    scenario.write_text(json.dumps(edited))
    again = run(project, "--pibench-agent=toyagent:Agent", "--pibench-resume=done.json")
    assert "re-ran 1: 1 scenario file changed" in again.stdout, again.stdout
    steps = run(project, "--pibench-agent=toyagent:Agent", "--pibench-resume=done.json", "--pibench-max-steps=7")
    assert "re-ran 2: 1 scenario file changed; 1 settings differ: max_steps" in steps.stdout, steps.stdout


@pytest.mark.slow
def test_resume_reruns_error_rows(project, toy_project):
    toy_project.makepyfile(downuser="""
        class User:
            def init_state(self, scenario, message_history=None):
                return {}
            def generate(self, message, state):
                raise ConnectionError("down")
    """)
    first = run(project, "--pibench-agent=oracle", "--pibench-user=downuser:User", "--pibench-results=first.json")
    assert first.returncode == 9
    out = run(project, "--pibench-agent=oracle", "--pibench-resume=first.json", "-n", "2")
    assert out.returncode == 0, out.stdout
    assert "re-ran 2: 2 error row in the earlier run" in out.stdout


@pytest.mark.slow
def test_resume_with_xdist_gives_the_same_rows(project):
    run(project, "--pibench-agent=oracle", "--pibench-results=base.json")
    out = run(project, "--pibench-agent=oracle", "--pibench-resume=base.json", "-n", "2")
    assert "Resume: reused 2 of 2 rows from base.json" in out.stdout, out.stdout
    base = json.loads((project / "base.json").read_text())
    now = json.loads((project / "pibench-results.json").read_text())
    assert base["agents"] == now["agents"]


def test_a_bad_resume_file_is_a_usage_error(project):
    (project / "junk.json").write_text("{}")
    out = run(project, "--pibench-agent=oracle", "--pibench-resume=junk.json")
    assert out.returncode == 4
    assert "--pibench-resume: junk.json: neither a pi-bench results file nor a pytest-json-report file" in out.stderr


def test_a_resume_file_with_a_malformed_row_is_refused_naming_file_row_and_field(project):
    run(project, "--pibench-agent=oracle", "--pibench-results=base.json")
    data = json.loads((project / "base.json").read_text())
    data["rows"][1]["trial"] = "zero"  # would crash the resume index, or reuse a row under the wrong key
    (project / "base.json").write_text(json.dumps(data))
    out = run(project, "--pibench-agent=oracle", "--pibench-resume=base.json")
    assert out.returncode == 4, out.stdout
    assert "--pibench-resume: base.json: row 1 (agent \"oracle\"" in out.stderr and "field 'trial'" in out.stderr


def test_last_failed_still_selects_the_failed_scenarios_and_resume_composes(toy_project):
    first = toy_project.runpytest("scenarios", "--pibench-agent=baseline:deny", "-k", "ALLOW or ESCALATE")
    assert first.ret == pytest.ExitCode.TESTS_FAILED
    toy_project.path.joinpath("first.json").write_text(toy_project.path.joinpath("pibench-results.json").read_text())
    again = toy_project.runpytest("scenarios", "--pibench-agent=baseline:deny", "--lf", "--pibench-resume=first.json")
    again.stdout.fnmatch_lines(["*run-last-failure*", "*Resume: reused 2 of 2 rows from first.json*"])
    rows = json.loads(toy_project.path.joinpath("pibench-results.json").read_text())["rows"]
    assert len(rows) == 2 and all(r["resume"]["reused"] for r in rows)


def test_pi_run_resume(project):
    run(project, "--pibench-agent=oracle", "--pibench-results=base.json")
    out = subprocess.run(
        [sys.executable, "-m", "pytest_pibench", "run", "scenarios", "--agent", "oracle", "--resume", "base.json"],
        cwd=project, capture_output=True, text=True, timeout=120,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Resume: reused 2 of 2 rows from base.json" in out.stdout
