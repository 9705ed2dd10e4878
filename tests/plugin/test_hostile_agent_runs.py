"""Issue 23 §1-2 through the plugin: an agent's own Ctrl-C, exit or garbage is scored; the run and its files survive."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

HOSTILE = '''
import json


class Agent:
    """On the ALLOW toy scenario: raises KeyboardInterrupt. On the other: says a lone surrogate, then exits."""

    def init_state(self, ctx, tools, message_history=None):
        return {"allow": "Ada" in json.dumps(ctx), "turn": 0}

    def generate(self, message, state):
        state["turn"] += 1
        if state["allow"]:
            raise KeyboardInterrupt  # the agent's own, not a Ctrl-C
        if state["turn"] == 1:
            return {"role": "assistant", "content": "Checking \\ud800 now"}, state
        raise SystemExit(2)
'''


def _strictly_parsed(path: Path) -> object:
    """The file as a strict JSON reader sees it: Node's JSON.parse where Node is installed, else Python's, strict."""
    text = path.read_text(encoding="utf-8")
    node = shutil.which("node")
    if node:
        script = "const fs = require('fs'); JSON.parse(fs.readFileSync(process.argv[1], 'utf8')); console.log('ok')"
        done = subprocess.run([node, "-e", script, str(path)], capture_output=True, text=True, check=False)
        assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr

    def refuse(constant: str) -> object:
        raise AssertionError(f"{path.name} holds a bare {constant}")

    return json.loads(text, parse_constant=refuse)


@pytest.mark.parametrize(
    "extra",
    [(), ("--pibench-timeout=0",), ("-n", "2")],
    ids=["deadline", "no-deadline-main-thread", "xdist"],
)
@pytest.mark.slow
def test_an_agents_own_interrupt_exit_and_garbage_are_scored_and_every_output_survives(toy_project, extra):
    toy_project.makepyfile(hostile=HOSTILE)
    result = toy_project.runpytest_subprocess(
        "scenarios",
        "--pibench-agent=hostile:Agent",
        "--pibench-html=report.html",
        "--pibench-leaderboard=lb.json",
        "--pibench-fail-under=compliance=0.5",
        *extra,
    )
    out = result.stdout.str()
    assert result.ret == 8, out  # the gate's verdict, not "interrupted" (2) or an internal error (3)
    assert "pi-bench summary" in out and "PARTIAL RUN" not in out
    assert not re.search(r"!+ KeyboardInterrupt !+", out) and "interrupted" not in out.splitlines()[-1]
    data = _strictly_parsed(toy_project.path / "pibench-results.json")
    assert isinstance(data, dict)
    rows = {row["scenario_id"]: row for row in data["rows"]}
    assert len(rows) == 2
    for row in rows.values():  # both scored against the agent, neither an error row
        assert row["status"] == "completed" and row["failure_cause"] == "agent", row
        assert row["termination_reason"] == "agent_error"
    allow, escalate = rows["TOY_001_ITEM_REFUND"], rows["TOY_002_EXPENSIVE_REFUND"]
    assert allow["error"] == "agent.generate raised KeyboardInterrupt: "
    assert escalate["error"] == "agent.generate raised SystemExit: 2"
    said = [m for m in escalate["transcript"]["messages"] if m["role"] == "assistant"][-1]
    assert said["content"] == "Checking \ufffd now"  # a lone surrogate, stored as U+FFFD
    assert escalate["sanitized"] is True
    assert data["agents"]["hostile:Agent"]["metrics"]["extended"]["error_rows"] == []
    _strictly_parsed(toy_project.path / "lb.json")
    html = (toy_project.path / "report.html").read_text(encoding="utf-8")
    assert "TOY_002_EXPENSIVE_REFUND" in html


def test_a_collection_error_beside_the_scenarios_is_named_not_reported_as_ctrl_c(toy_project):
    toy_project.makepyfile(test_broken="import no_such_module_anywhere\n")
    result = toy_project.runpytest("scenarios", "test_broken.py", "--pibench-agent=oracle")
    assert result.ret == pytest.ExitCode.INTERRUPTED  # pytest's own rule: collection errors stop the run
    data = json.loads((toy_project.path / "pibench-results.json").read_text())
    assert data["complete"] is False
    assert data["ended_by"] == "interrupted: 1 error(s) during collection"
