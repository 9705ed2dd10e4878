"""What a new user sees when something is missing or misspelt (issue 27): one line that says what to do."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_pibench.cli import main as pi_main

REPO = Path(__file__).resolve().parents[2]

NO_RATIONALE = """
class Agent:
    def init_state(self, benchmark_context, tools, message_history=None):
        return {"decided": False}
    def generate(self, message, state):
        if not state["decided"]:
            call = {"id": "c1", "name": "record_decision", "arguments": {"decision": "ALLOW"}}
            return {"role": "assistant", "tool_calls": [call]}, {"decided": True}
        return {"role": "assistant", "content": "Done."}, state
"""


def test_a_rejected_decision_shows_its_reason_in_the_summary_the_check_and_the_row(toy_project):
    toy_project.makepyfile(norationale=NO_RATIONALE)
    result = toy_project.runpytest_subprocess("scenarios", "--pibench-agent=norationale:Agent", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    reason = "record_decision failed: Error: Invalid arguments for record_decision: missing required argument 'rationale'."
    lines = result.stdout.lines
    failed = lines[lines.index("Failed scenarios (2):") + 1 :][:2]
    assert all(f"INVALID_DECISION: {reason}" in line for line in failed), failed
    rows = json.loads((toy_project.path / "pibench-results.json").read_text())["rows"]
    for row in rows:
        assert row["decision_error"] == "INVALID_DECISION"  # upstream's code, unchanged
        assert row["decision_error_detail"] == reason
        decision_check = next(c for c in row["outcome_checks"] if c["type"] == "decision_equals")
        assert decision_check["detail"].endswith(f"actual=INVALID:INVALID_DECISION ({reason})")


@pytest.mark.parametrize("selection", [["-k", "finra"], ["-m", "deny and not variant"], ["-k", "RET_004"]])
def test_selecting_scenarios_without_an_agent_says_how_to_run_the_benchmark(pytester, selection):
    result = pytester.runpytest_subprocess(*selection, "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    hint = [line for line in result.stdout.lines if line.startswith("pi-bench:")]
    assert hint == [
        f"pi-bench: scenarios are collected only for an agent; run the benchmark with pytest "
        f"--pibench-agent=oracle {selection[0]} {selection[1]!r} (or --pibench-agent=mymod:Agent)"
    ]


def test_inside_a_project_the_hint_comes_with_the_projects_own_tests_and_only_for_benchmark_names(pytester):
    pytester.makepyfile(test_mine="def test_finance_report():\n    assert True\n")
    named = pytester.runpytest_subprocess("-k", "finra", "-p", "no:cacheprovider")
    assert "pi-bench: scenarios are collected only for an agent" in named.stdout.str()
    own = pytester.runpytest_subprocess("-k", "finance", "-p", "no:cacheprovider")
    own.assert_outcomes(passed=1)
    assert "pi-bench:" not in own.stdout.str()


def test_pi_run_offers_close_scenario_names(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert pi_main(["run", "ret_001"]) == 4
    assert "(did you mean 'ret_001_lamp_return' or 'RET_001_LAMP_RETURN'?)" in capsys.readouterr().err
    assert pi_main(["run", "finar"]) == 4
    assert "(did you mean 'finra'?)" in capsys.readouterr().err


def test_pi_bench_green_without_the_a2a_extra_names_the_extra(tmp_path):
    # -S: no site-packages, so neither a2a-sdk nor starlette can be found; the package itself from the checkout.
    code = f"import sys; sys.path.insert(0, {str(REPO)!r}); from pytest_pibench.a2a.entry import green_main; green_main()"
    done = subprocess.run([sys.executable, "-S", "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 4
    assert done.stderr.startswith("pi-bench-green needs the a2a extra (missing: a2a, starlette")
    assert "pip install 'pytest-pibench[a2a]'" in done.stderr and "Traceback" not in done.stderr
