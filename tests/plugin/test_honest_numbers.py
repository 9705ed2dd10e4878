"""Issue 8: agent failures count against the agent, error rows are bounded, plain counts, ini config."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import BROKEN_USER

CRASH_UNLESS_ADA = """
import json

from pytest_pibench import resolve_agent

class Agent:
    '''Replays the gold calls on the scenario whose customer is Ada; raises on every other one.'''

    def init_state(self, ctx, tools, message_history=None):
        if "Crash" in json.dumps(ctx):
            raise RuntimeError("model returned garbage")
        return {"calls": [
            {"id": "c1", "name": "lookup_item", "arguments": {"item_id": "IT-1"}},
            {"id": "c2", "name": "refund_item", "arguments": {"item_id": "IT-1", "reason": "changed_mind"}},
            {"id": "c3", "name": "record_decision",
             "arguments": {"decision": "ALLOW", "rationale": "TOY-1", "item_id": "IT-1"}},
        ]}

    def generate(self, message, state):
        if state["calls"]:
            return {"role": "assistant", "tool_calls": [state["calls"].pop(0)]}, state
        return {"role": "assistant", "content": "Done."}, state

    def is_stop(self, message):
        return False
"""


def results(pytester: pytest.Pytester, name: str = "pibench-results.json") -> dict:
    return json.loads((pytester.path / name).read_text())


@pytest.fixture
def crash_set(toy_project: pytest.Pytester) -> pytest.Pytester:
    """Five ALLOW scenarios: the original (customer Ada) and four copies whose customer is 'Crash'."""
    folder = toy_project.path / "scenarios" / "toyshop"
    (folder / "toy_002_expensive_item_refund.json").unlink()
    original = json.loads((folder / "toy_001_item_refund.json").read_text())
    for index in range(4):
        copy = json.loads(json.dumps(original))
        copy["meta"]["scenario_id"] = f"TOY_1{index}_CRASH"
        copy["environment_setup"]["customer"]["display_name"] = f"Crash {index}"
        (folder / f"toy_crash_{index}.json").write_text(json.dumps(copy))
    toy_project.makepyfile(crashing=CRASH_UNLESS_ADA)
    return toy_project


def test_an_agent_that_crashes_on_all_but_one_scenario_scores_that(crash_set):
    result = crash_set.runpytest("scenarios", "--pibench-agent=crashing:Agent", "--pibench-leaderboard=lb.json")
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # no error rows: the failures are the agent's, and scored
    data = results(crash_set)
    metrics = data["agents"]["crashing:Agent"]["metrics"]
    assert metrics["compliance_rate"] == pytest.approx(0.2)  # 1 of 5, never 1.000
    assert metrics["completed"] == 5 and metrics["errors"] == 0
    crashed = [r for r in data["rows"] if r["scenario_id"].endswith("_CRASH")]
    assert len(crashed) == 4
    for row in crashed:
        assert row["status"] == "completed" and row["failure_cause"] == "agent"
        assert row["termination_reason"] == "agent_error" and row["all_passed"] is False
        assert "model returned garbage" in row["error"]
    board = json.loads((crash_set.path / "lb.json").read_text())
    assert board["results"][0]["metrics"]["compliance_rate"] == pytest.approx(0.2)
    assert board["pibench_validity"]["valid"] is True
    result.stdout.fnmatch_lines([
        "*Full compliance*0.200*",
        "*Scenarios passed / failed*1 / 4*",
        "*agent failures (scored)*4*",
        "*Error rows (not scored)*0*",
    ])
    # pytest's own last line keeps scenarios and checks apart.
    assert "4 failed, 1 passed" in result.outlines[-1] and "checks failed" in result.outlines[-1]


def test_a_failing_agent_item_says_why_and_lists_its_failed_checks(crash_set):
    result = crash_set.runpytest("scenarios", "--pibench-agent=crashing:Agent", "-k", "TOY_10")
    result.stdout.fnmatch_lines([
        "*5 of 6 checks failed ?ALLOW -> NONE?",
        "*E1 ?tool_called?: tool_called(lookup_item)=False*",
        "*episode error (agent_error): agent.init_state raised RuntimeError: model returned garbage*",
    ])




def test_error_rows_are_kept_apart_and_bounded_by_the_error_budget(toy_project):
    toy_project.makepyfile(brokenuser=BROKEN_USER)
    args = ["scenarios", "--pibench-agent=oracle", "--pibench-user=brokenuser:User", "--pibench-leaderboard=lb.json"]
    result = toy_project.runpytest(*args)
    assert result.ret == 9  # any error row: invalid for the leaderboard, its own exit code
    data = results(toy_project)
    assert {r["status"] for r in data["rows"]} == {"error"}
    assert {r["failure_cause"] for r in data["rows"]} == {"user_simulator"}
    assert data["validity"]["valid"] is False
    assert "2 error rows of 2" in data["validity"]["problems"][0]
    board = json.loads((toy_project.path / "lb.json").read_text())
    assert board["pibench_validity"]["valid"] is False
    result.stdout.fnmatch_lines([
        "*NOT VALID FOR THE LEADERBOARD: oracle: 2 error rows of 2 (100.0%) > --pibench-max-error-rate 0*",
        "*Error rows (not scored)*2*",
        "*Error budget: EXCEEDED (exit code 9)*",
    ])
    # A budget that allows them: the run is valid; the error items still fail.
    again = toy_project.runpytest(*args, "--pibench-max-error-rate=1")
    assert again.ret == pytest.ExitCode.TESTS_FAILED
    assert results(toy_project)["validity"]["valid"] is True


def test_the_error_budget_is_a_fraction(toy_project):
    result = toy_project.runpytest("scenarios", "--pibench-agent=oracle", "--pibench-max-error-rate=2")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--pibench-max-error-rate: a fraction between 0 and 1*"])


def test_crash_rows_keep_the_agent_name_of_a_failing_fixture(toy_project):
    toy_project.makeconftest("""
        import pytest

        class Mine:
            pibench_name = "mine"
            def init_state(self, ctx, tools, message_history=None):
                return {}
            def generate(self, message, state):
                return {"role": "assistant", "content": "###STOP###"}, state

        @pytest.fixture
        def pibench_agent(request):
            if "TOY_002" in request.node.name:
                raise RuntimeError("could not start the agent server")
            return Mine()
    """)
    result = toy_project.runpytest("scenarios")
    assert result.ret == 9
    rows = results(toy_project)["rows"]
    assert {r["agent"] for r in rows} == {"mine"}  # no phantom "agent"
    (crash,) = [r for r in rows if r["status"] == "error"]
    assert crash["scenario_id"] == "TOY_002_EXPENSIVE_REFUND" and "could not start the agent server" in crash["error"]


def test_crash_rows_of_a_parametrized_fixture_keep_the_param_name(toy_project):
    toy_project.makeconftest("""
        import pytest

        @pytest.fixture(params=["oracle", "exploding"])
        def pibench_agent(request):
            if request.param == "exploding":
                raise RuntimeError("boom in setup")
            return request.param
    """)
    toy_project.runpytest("scenarios")
    data = results(toy_project)
    assert set(data["agents"]) == {"oracle", "exploding"}
    assert {r["status"] for r in data["rows"] if r["agent"] == "exploding"} == {"error"}


def test_an_ini_agent_never_hides_the_projects_own_tests(toy_project):
    toy_project.makeini("[pytest]\npibench_agent = oracle\n")
    toy_project.makepyfile(test_own="def test_mine():\n    assert True\n")
    result = toy_project.runpytest()
    result.assert_outcomes(passed=1)
    assert not (toy_project.path / "pibench-results.json").exists()


def test_ini_scenario_folders_without_an_agent_leave_tests_and_results_alone(toy_project):
    toy_project.makeini("[pytest]\npibench_scenarios = scenarios\n")
    toy_project.makepyfile(test_own="def test_mine():\n    assert True\n")
    earlier = toy_project.path / "pibench-results.json"
    earlier.write_text('{"format": "pibench-results", "rows": ["from an earlier run"]}')
    result = toy_project.runpytest()
    assert result.ret == pytest.ExitCode.OK
    result.assert_outcomes(passed=1, deselected=2)
    assert "from an earlier run" in earlier.read_text()


def test_ini_scenario_folders_with_an_ini_agent_run_the_benchmark_and_the_tests(toy_project):
    toy_project.makeini("[pytest]\npibench_scenarios = scenarios\npibench_agent = oracle\n")
    toy_project.makepyfile(test_own="def test_mine():\n    assert True\n")
    result = toy_project.runpytest()
    result.assert_outcomes(passed=3)
    assert len(results(toy_project)["rows"]) == 2


@pytest.mark.parametrize("target", ["adir", "afile.txt/results.json", "/sys/pibench-results.json"])
@pytest.mark.parametrize("option", ["results", "leaderboard"])
def test_an_unwritable_output_path_is_a_usage_error_before_any_episode(toy_project, option, target):
    (toy_project.path / "adir").mkdir()
    (toy_project.path / "afile.txt").write_text("not a folder")
    result = toy_project.runpytest("scenarios", "--pibench-agent=oracle", f"--pibench-{option}={target}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert f"--pibench-{option}:" in result.stderr.str()
    assert "pi-bench summary" not in result.stdout.str()


def test_the_results_file_says_the_run_was_complete_and_leaves_no_journal(toy_project):
    toy_project.runpytest("scenarios", "--pibench-agent=oracle")
    data = results(toy_project)
    assert data["complete"] is True and data["planned_items"] == 2 and data["ended_by"] is None
    assert sorted(p.name for p in Path(toy_project.path).iterdir() if "pibench" in p.name) == ["pibench-results.json"]


@pytest.mark.parametrize("workers", [[], ["-n", "2"]])
def test_the_last_line_counts_scenarios_and_checks_apart_under_xdist_too(toy_project, workers):
    result = toy_project.runpytest_subprocess("scenarios", "--pibench-agent=baseline:deny", *workers)
    last = result.outlines[-1]
    assert "2 failed" in last and "checks failed" in last and "checks passed" in last, last
    assert "subtests" not in last
