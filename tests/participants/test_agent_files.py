"""``path/to/file.py:Class`` specs: the file is executed once per process, however often the spec resolves."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from conftest import TOY_ALLOW
from pytest_pibench import load_scenario, resolve_agent, run_one
from pytest_pibench.participants.specs import AgentSpecError, resolve_judge

AGENT_FILE = textwrap.dedent("""
    from pathlib import Path

    with (Path(__file__).parent / "loads.log").open("a") as log:  # a module-level side effect
        log.write("loaded\\n")


    class Agent:
        def init_state(self, benchmark_context, tools, message_history=None):
            return {}

        def generate(self, message, state):
            call = {"id": "c0", "name": "record_decision", "arguments": {"decision": "ALLOW", "rationale": "r"}}
            return {"role": "assistant", "content": None, "tool_calls": [call]}, state


    class Judge:
        def judge(self, question, text):
            return "YES"
""")


def write_agent(folder: Path, name: str = "file_agent.py") -> Path:
    path = folder / name
    path.write_text(AGENT_FILE)
    return path


def loads(folder: Path) -> int:
    log = folder / "loads.log"
    return len(log.read_text().splitlines()) if log.exists() else 0


def test_resolving_and_building_again_does_not_execute_the_file_again(tmp_path):
    path = write_agent(tmp_path)
    first = resolve_agent(f"{path}:Agent")  # the start-up check
    second = resolve_agent(f"{path}:Agent")  # where it is used
    scenario = load_scenario(TOY_ALLOW)
    agents = [first.build(scenario), second.build(scenario)]
    resolve_judge(f"{path}:Judge")()  # another name from the same file
    assert loads(tmp_path) == 1
    assert type(agents[0]) is type(agents[1])  # one class, not one per execution
    assert agents[0] is not agents[1]  # still a fresh agent per episode
    row = run_one(TOY_ALLOW, first)
    assert row["status"] == "completed" and row["canonical_decision"] == "ALLOW", row.get("error")


def test_a_file_that_fails_to_load_fails_again_next_time(tmp_path):
    path = tmp_path / "broken_agent.py"
    path.write_text("raise RuntimeError('broken on purpose')\n")
    for _ in range(2):  # the module's own error and line, each time: a failed load is not kept
        with pytest.raises(AgentSpecError, match="failed with RuntimeError: broken on purpose") as info:
            resolve_agent(f"{path}:Agent")
        assert f'File "{path}", line 1, in <module>' in str(info.value)


def test_the_plugin_executes_the_agent_file_once(toy_project):
    path = write_agent(toy_project.path)
    result = toy_project.runpytest_subprocess(
        "scenarios", f"--pibench-agent={path}:Agent", f"--pibench-judge={path}:Judge", "--pibench-trials=2",
        "-p", "no:xdist",
    )
    rows = json.loads((toy_project.path / "pibench-results.json").read_text())["rows"]
    assert len(rows) == 4 and all(r["status"] == "completed" for r in rows), result.stdout.str()
    assert loads(toy_project.path) == 1
