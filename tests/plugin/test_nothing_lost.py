"""Issue 23 (class 5): nothing finished is lost: resuming into the same path, two runs on one path, a full disk."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_pibench.results.document import read_results

POSIX = pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL, umask and RLIMIT_FSIZE are POSIX")
KILLED_IN_FLIGHT = pytest.mark.skipif(
    bool(os.environ.get("PIBENCH_TEST_CONCURRENCY")),
    reason="with episodes in flight, an agent that kills the process also kills the episodes not yet reported",
)
AGENT_ARG = "--pibench-agent=toyagent:Agent"

# Plays the toy ALLOW scenario's gold calls (so the ALLOW copies pass); on the ESCALATE scenario it does
# what TOY_AGENT_MODE says: "kill" SIGKILLs its own process (a deterministic early death), "big" sends
# 19,000-character messages (a large row), "wait" says AGENT-WAITING on stdout and waits for stdin.
AGENT = """
import json, os, signal

class Agent:
    def init_state(self, ctx, tools, message_history=None):
        return {"escalate": False, "calls": [
            {"id": "c1", "name": "lookup_item", "arguments": {"item_id": "IT-1"}},
            {"id": "c2", "name": "refund_item", "arguments": {"item_id": "IT-1", "reason": "changed_mind"}},
            {"id": "c3", "name": "record_decision",
             "arguments": {"decision": "ALLOW", "rationale": "TOY-1", "item_id": "IT-1"}},
        ]}

    def generate(self, message, state):
        if "IT-9" in json.dumps(message):
            state["escalate"] = True
        if state["escalate"]:
            mode = os.environ.get("TOY_AGENT_MODE", "")
            if mode == "kill":
                os.kill(os.getpid(), signal.SIGKILL)
            if mode == "big":
                return {"role": "assistant", "content": "y" * 19000}, state
            if mode == "wait":
                os.write(1, b"AGENT-WAITING\\n")
                os.read(0, 1)
        if state["calls"]:
            return {"role": "assistant", "tool_calls": [state["calls"].pop(0)]}, state
        return {"role": "assistant", "content": "Done."}, state

    def is_stop(self, message):
        return False
"""

# Runs pytest under a file size limit: writes past it fail with EFBIG, as writes to a full disk fail
# with ENOSPC (SIGXFSZ, which would kill the process instead, is ignored).
LIMITED = """
import resource, signal, sys
import pytest
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
limit = int(sys.argv[1])
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
sys.exit(pytest.main(sys.argv[2:]))
"""

FIRST_RUN = {"TOY_001_ITEM_REFUND", "TOY_101_ALLOW_COPY", "TOY_102_ALLOW_COPY"}
"""What ``-k "not escalate"`` runs: the toy ALLOW scenario and two copies (files sorted after the ESCALATE one)."""


@pytest.fixture
def project(toy_project: pytest.Pytester) -> Path:
    toy_project.makepyfile(toyagent=AGENT)
    folder = toy_project.path / "scenarios" / "toyshop"
    for number in (1, 2):
        data = json.loads((folder / "toy_001_item_refund.json").read_text())
        data["meta"]["scenario_id"] = f"TOY_10{number}_ALLOW_COPY"
        (folder / f"zz_allow_copy_{number}.json").write_text(json.dumps(data))
    return toy_project.path


def command(*args: str) -> list[str]:
    return [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "scenarios", *args]


def run(
    project: Path, *args: str, mode: str = "", limit: int | None = None, **kwargs: object
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TOY_AGENT_MODE": mode, "PYTHONPATH": str(project), "PYTHONDONTWRITEBYTECODE": "1"}
    argv = command(*args)
    if limit is not None:
        argv = [sys.executable, "-c", LIMITED, str(limit), *argv[3:]]
    return subprocess.run(argv, cwd=project, env=env, capture_output=True, text=True, timeout=120, **kwargs)


def ids(path: Path) -> set[str]:
    """The scenarios whose rows ``path`` holds, read the way ``--pibench-resume`` and ``pi report`` read it."""
    return {str(r["scenario_id"]) for r in read_results(path)["rows"]}


def reused(project: Path, source: str) -> set[str]:
    """Resume from ``source`` into a fresh file: the scenarios whose earlier row was reused."""
    out = run(project, AGENT_ARG, "-k", "not escalate", f"--pibench-resume={source}", "--pibench-results=check.json")
    assert out.returncode == 0, out.stdout + out.stderr
    rows = json.loads((project / "check.json").read_text())["rows"]
    return {r["scenario_id"] for r in rows if r["resume"]["reused"]}


# ---------------------------------------------------------------------------------------------- resume


@POSIX
@pytest.mark.parametrize(
    "case",
    [
        pytest.param("explicit", id="--pibench-resume=X --pibench-results=X"),
        pytest.param("default", id="--pibench-resume=<the default results path>"),
        pytest.param("journal", id="--pibench-resume=<the journal of a killed run>", marks=KILLED_IN_FLIGHT),
    ],
)
@pytest.mark.slow
def test_a_resume_into_its_own_results_path_killed_early_keeps_every_finished_row(project, case):
    results = project / ("mine.json" if case == "explicit" else "pibench-results.json")
    target = [f"--pibench-results={results.name}"] if case == "explicit" else []
    if case == "journal":  # killed on the ESCALATE scenario: the ALLOW row before it is in the journal
        first = run(project, AGENT_ARG, mode="kill")
        assert first.returncode == -signal.SIGKILL, first.stdout
        source = "pibench-results.journal.jsonl"
        finished = {"TOY_001_ITEM_REFUND"}
    else:
        first = run(project, AGENT_ARG, "-k", "not escalate", *target)
        assert first.returncode == 0, first.stdout + first.stderr
        source = results.name
        finished = FIRST_RUN
    assert ids(project / source) == finished

    # The resumed run re-runs only the ESCALATE scenario, into the very files it resumes from, and dies in it.
    second = run(project, AGENT_ARG, "-k", "escalate", f"--pibench-resume={source}", *target, mode="kill")
    assert second.returncode == -signal.SIGKILL, second.stdout + second.stderr

    assert ids(results) == finished  # the placeholder names the journal, which carries the earlier rows
    assert ids(project / source) == finished
    assert reused(project, source) == finished  # a further resume gets every one of them back


@POSIX
@pytest.mark.slow
def test_a_partial_resume_into_its_own_path_keeps_the_rows_it_did_not_redo(project):
    first = run(project, AGENT_ARG, "-k", "not escalate")
    assert first.returncode == 0, first.stdout + first.stderr
    # -x stops at the failing ESCALATE re-run, before the two copies' items are reached.
    second = run(project, AGENT_ARG, "--pibench-resume=pibench-results.json", "-x")
    assert second.returncode == 1, second.stdout + second.stderr
    results = project / "pibench-results.json"
    document = json.loads(results.read_text())
    assert document["complete"] is False and document["ended_by"].startswith("stopped early")
    mine = {r["scenario_id"] for r in document["rows"]}
    assert "TOY_002_EXPENSIVE_REFUND" in mine and mine != FIRST_RUN | {"TOY_002_EXPENSIVE_REFUND"}
    assert document["journal"] == "pibench-results.journal.jsonl"  # kept: it holds the rows not redone
    assert (project / "pibench-results.journal.jsonl").is_file()
    assert ids(results) == FIRST_RUN | {"TOY_002_EXPENSIVE_REFUND"}
    assert reused(project, "pibench-results.json") == FIRST_RUN


def test_a_complete_resume_into_its_own_path_leaves_no_journal(project):
    assert run(project, AGENT_ARG, "-k", "not escalate").returncode == 0
    again = run(project, AGENT_ARG, "--pibench-resume=pibench-results.json")
    assert again.returncode == 1, again.stdout + again.stderr  # the toy agent fails ESCALATE
    assert "Resume: reused 3 of 4 rows from pibench-results.json; re-ran 1: 1 not in the earlier run" in again.stdout
    assert json.loads((project / "pibench-results.json").read_text())["complete"] is True
    assert not (project / "pibench-results.journal.jsonl").exists()
    assert not (project / "pibench-results.json.lock").exists()


# ---------------------------------------------------------------------------------------------- one writer


def test_a_second_run_on_the_same_results_path_is_refused_before_any_episode(project):
    env = {**os.environ, "TOY_AGENT_MODE": "wait", "PYTHONPATH": str(project), "PYTHONDONTWRITEBYTECODE": "1"}
    holder = subprocess.Popen(
        command(AGENT_ARG, "-s"), cwd=project, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    assert holder.stdout is not None and holder.stdin is not None
    try:
        for line in holder.stdout:  # the event: the first run is inside its ESCALATE episode
            if "AGENT-WAITING" in line:
                break
        else:
            raise AssertionError("the first run never reached its agent")
        journal = project / "pibench-results.journal.jsonl"
        before = (project / "pibench-results.json").read_bytes(), journal.read_bytes()

        second = run(project, "--pibench-agent=oracle")
        assert second.returncode == pytest.ExitCode.USAGE_ERROR, second.stdout + second.stderr
        assert f"--pibench-results: pibench-results.json is being written by another run (pid {holder.pid} " in (
            second.stderr
        )
        assert "pi-bench summary" not in second.stdout
        assert (project / "pibench-results.json").read_bytes() == before[0]  # the first run's placeholder
        assert journal.read_bytes().startswith(before[1])  # its journal, only ever appended to (episodes in flight)
    finally:
        holder.stdin.write("go")
        holder.stdin.close()
        rest = holder.stdout.read()
        holder.wait(timeout=60)
    assert holder.returncode == 1, rest  # it finished as usual (the toy agent fails ESCALATE)
    assert ids(project / "pibench-results.json") == FIRST_RUN | {"TOY_002_EXPENSIVE_REFUND"}
    assert not (project / "pibench-results.json.lock").exists()


@pytest.mark.slow
def test_xdist_workers_leave_the_lock_to_the_controller_and_a_dead_runs_lock_is_taken_over(project):
    # A lock a killed run left behind on this host (its process is gone, so its OS lock is free).
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    note = {"pid": int(gone.stdout), "host": __import__("socket").gethostname(), "started": "2026-01-01T00:00:00+0000"}
    (project / "pibench-results.json.lock").write_text(json.dumps(note))
    out = run(project, "--pibench-agent=oracle", "-n", "2")
    assert out.returncode == 0, out.stdout + out.stderr
    assert f"took over the lock left by a run that is no longer running (pid {note['pid']} " in out.stdout
    assert ids(project / "pibench-results.json") == FIRST_RUN | {"TOY_002_EXPENSIVE_REFUND"}
    assert not (project / "pibench-results.json.lock").exists()


# ---------------------------------------------------------------------------------------------- full disk


@POSIX
@pytest.mark.slow
def test_a_full_disk_at_the_end_keeps_the_journal_prints_the_summary_and_exits_4(project, toy_project):
    # A metrics hook makes the final results file far larger than the journal: only the final write fails.
    toy_project.makeconftest("""
        def pytest_pibench_metrics(metrics, rows, agent, config):
            return {"padding": "p" * 300_000}
    """)
    out = run(project, AGENT_ARG, "-k", "not escalate", limit=150_000)
    assert out.returncode == pytest.ExitCode.USAGE_ERROR, out.stdout + out.stderr
    assert "pi-bench summary" in out.stdout and "Scenarios passed / failed" in out.stdout
    assert (
        "ERROR (exit code 4): cannot write pibench-results.json: File too large; the finished rows are in "
        "pibench-results.journal.jsonl (--pibench-resume it)"
    ) in out.stdout
    assert "Results: pibench-results.json" not in out.stdout
    placeholder = json.loads((project / "pibench-results.json").read_text())
    assert placeholder["complete"] is False and placeholder["journal"] == "pibench-results.journal.jsonl"
    assert ids(project / "pibench-results.journal.jsonl") == FIRST_RUN
    toy_project.makeconftest("")
    assert reused(project, "pibench-results.json") == FIRST_RUN


@POSIX
def test_a_full_disk_mid_run_stops_the_run_and_keeps_what_finished(project):
    # The ALLOW row fits in the journal; the ESCALATE row (19,000-character messages) does not.
    out = run(project, AGENT_ARG, mode="big", limit=30_000)
    assert out.returncode == pytest.ExitCode.USAGE_ERROR, out.stdout + out.stderr
    assert "ERROR (exit code 4): cannot write pibench-results.journal.jsonl: File too large" in out.stdout
    assert "ERROR (exit code 4): cannot write pibench-results.json: File too large" in out.stdout
    assert "pi-bench summary" in out.stdout
    assert "PARTIAL RUN: 2 of 4 items finished" in out.stdout  # stopped: the copies never ran
    assert ids(project / "pibench-results.json") == {"TOY_001_ITEM_REFUND"}  # placeholder + journal
    assert reused(project, "pibench-results.json") == {"TOY_001_ITEM_REFUND"}


# ---------------------------------------------------------------------------------------------- umask


@POSIX
@pytest.mark.parametrize(("umask", "expected"), [(0o022, 0o644), (0o027, 0o640)])
def test_results_leaderboard_and_html_files_honour_the_umask(project, umask, expected):
    out = run(
        project, "--pibench-agent=oracle", "--pibench-results=out/r.json", "--pibench-leaderboard=out/lb.json",
        "--pibench-html=out/r.html", umask=umask,
    )  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in (project / "out").iterdir()}
    assert modes == {"r.json": expected, "lb.json": expected, "r.html": expected}
