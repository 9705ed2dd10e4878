"""The pi-bench hooks (plugin/hookspec.py), each implemented by a real conftest.py, with and without xdist."""

from __future__ import annotations

import json
import textwrap

import pytest

ALLOW_ID = "TOY_001_ITEM_REFUND"


def results(pytester: pytest.Pytester, name: str = "pibench-results.json") -> dict:
    return json.loads((pytester.path / name).read_text())


def conftest(pytester: pytest.Pytester, source: str) -> None:
    pytester.makeconftest(textwrap.dedent(source))


def process_name_source(config: str) -> str:
    """Python source naming the process a hook runs in: an xdist worker id, or "main"."""
    return f'getattr({config}, "workerinput", {{}}).get("workerid", "main")'


ROW_HOOK = f"""
    def pytest_pibench_row(row, item, scenario):
        return {{
            "worker": {process_name_source("item.config")},
            "ticket": f"{{scenario.meta.domain}}/{{row['scenario_id']}}",
            "item_name": item.name,
        }}
"""


def test_hookspecs_are_registered_and_documented(pytester):
    from pytest_pibench.plugin import hookspec

    config = pytester.parseconfig()
    for name in hookspec.__all__:
        assert hasattr(config.hook, name), name
        doc = getattr(hookspec, name).__doc__
        assert "Example" in doc and ":return:" in doc and "Called" in doc, name


def test_row_hook_adds_fields_on_the_workers(toy_project):
    conftest(toy_project, ROW_HOOK)
    result = toy_project.runpytest_subprocess("scenarios", "--pibench-agent=oracle", "-n", "2")
    result.assert_outcomes(passed=2)
    rows = results(toy_project)["rows"]
    assert {r["extra"]["worker"] for r in rows} <= {"gw0", "gw1"}, rows  # ran where the item ran, then crossed to the controller
    assert [r["extra"]["ticket"] for r in rows] == ["toyshop/TOY_001_ITEM_REFUND", "toyshop/TOY_002_EXPENSIVE_REFUND"]
    assert rows[0]["extra"]["item_name"] == f"{ALLOW_ID}[oracle-t0]"
    assert rows[0]["all_passed"] is True  # the built-in fields are untouched


def test_row_hook_fields_reach_json_report_metadata(toy_project):
    conftest(toy_project, ROW_HOOK)
    result = toy_project.runpytest("scenarios", "--pibench-agent=oracle", "--json-report", "--json-report-file=r.json")
    result.assert_outcomes(passed=2)
    tests = json.loads((toy_project.path / "r.json").read_text())["tests"]
    assert [t["metadata"]["pibench"]["extra"]["worker"] for t in tests] == ["main", "main"]


@pytest.mark.parametrize(
    ("returned", "message"),
    [
        ('{"when": object()}', "pytest_pibench_row returned 'when' = <object object"),
        ('["not", "a", "dict"]', "pytest_pibench_row returned ['not', 'a', 'dict']: expected a dict of new fields"),
    ],
)
def test_a_row_hook_must_return_json_fields(toy_project, returned, message):
    conftest(toy_project, f"def pytest_pibench_row(row):\n    return {returned}\n")
    result = toy_project.runpytest("scenarios", "--pibench-agent=oracle", "-k", "ALLOW")
    result.assert_outcomes(failed=1)
    assert message in result.stdout.str()
    (row,) = results(toy_project)["rows"]
    assert row["status"] == "error" and row.get("all_passed") is not True  # an error row, never a changed pass


def test_two_implementations_returning_one_field_is_an_error(toy_project):
    conftest(toy_project, 'def pytest_pibench_row():\n    return {"team": "a"}\n')
    (toy_project.path / "scenarios" / "conftest.py").write_text('def pytest_pibench_row():\n    return {"team": "b"}\n')
    result = toy_project.runpytest("scenarios", "--pibench-agent=oracle", "-k", "ALLOW")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*pytest_pibench_row returned 'team', which the row's ?extra? already has*"])


def test_a_conftest_row_hook_applies_beneath_its_folder_only(toy_project):
    other = toy_project.path / "scenarios" / "other"
    other.mkdir()
    (other / "toy_escalate.json").write_text(
        (toy_project.path / "scenarios/toyshop/toy_002_expensive_item_refund.json").read_text()
    )
    (toy_project.path / "scenarios/toyshop/toy_002_expensive_item_refund.json").unlink()
    (other / "conftest.py").write_text('def pytest_pibench_row():\n    return {"folder": "other"}\n')
    toy_project.runpytest("scenarios", "--pibench-agent=oracle").assert_outcomes(passed=2)
    rows = {r["scenario_id"]: r for r in results(toy_project)["rows"]}
    assert rows["TOY_002_EXPENSIVE_REFUND"]["extra"]["folder"] == "other"
    assert "extra" not in rows[ALLOW_ID]


def test_rows_reused_by_resume_keep_the_fields_they_were_written_with(toy_project):
    conftest(toy_project, 'def pytest_pibench_row():\n    return {"run": "first"}\n')
    toy_project.runpytest("scenarios", "--pibench-agent=oracle", "--pibench-results=first.json").assert_outcomes(
        passed=2
    )
    conftest(toy_project, 'def pytest_pibench_row():\n    return {"run": "second"}\n')
    result = toy_project.runpytest("scenarios", "--pibench-agent=oracle", "--pibench-resume=first.json")
    result.assert_outcomes(passed=2)
    rows = results(toy_project)["rows"]
    assert [r["resume"]["reused"] for r in rows] == [True, True]
    assert [r["extra"]["run"] for r in rows] == ["first", "first"]


METRICS_HOOK = f"""
    def pytest_pibench_metrics(metrics, rows, agent, config):
        assert {process_name_source("config")} == "main"  # the controller only
        scored = [r for r in rows if r["status"] == "completed"]
        return {{"mean_steps": sum(r["step_count"] for r in scored) / len(scored), "seen_by": agent,
                "rows_seen": len(rows), "compliance_copy": metrics["compliance_rate"]}}
"""


def test_metrics_hook_adds_extended_entries_on_the_controller(toy_project):
    conftest(toy_project, METRICS_HOOK)
    result = toy_project.runpytest_subprocess(
        "scenarios",
        "--pibench-agent=oracle",
        "--pibench-agent=baseline:deny",
        "-n",
        "2",
        "--pibench-leaderboard=lb.json",
        "--json-report",
        "--json-report-file=r.json",
    )
    result.assert_outcomes(passed=2, failed=2)
    agents = results(toy_project)["agents"]
    for agent, expected_compliance in (("oracle", 1.0), ("baseline:deny", 0.0)):
        extended = agents[agent]["metrics"]["extended"]
        assert extended["seen_by"] == agent and extended["rows_seen"] == 2
        assert extended["compliance_copy"] == expected_compliance
        assert extended["mean_steps"] > 0
        assert "tier1_overall_score" in extended  # the built-in entries stay
    board = json.loads((toy_project.path / "lb.oracle.json").read_text())
    assert board["results"][0]["metrics"]["extended"]["seen_by"] == "oracle"
    block = json.loads((toy_project.path / "r.json").read_text())["pibench"]
    assert block["agents"]["baseline:deny"]["metrics"]["extended"]["seen_by"] == "baseline:deny"


def test_a_metrics_hook_cannot_replace_a_metric_and_the_results_file_survives(toy_project):
    conftest(toy_project, 'def pytest_pibench_metrics():\n    return {"tier1_overall_score": 1.0}\n')
    result = toy_project.runpytest_subprocess("scenarios", "--pibench-agent=baseline:allow")
    assert result.ret != pytest.ExitCode.OK  # a plugin bug fails the run, as in pytest
    result.stderr.fnmatch_lines(
        [
            "ValueError: pytest_pibench_metrics returned 'tier1_overall_score', which metrics?\"extended\"? of "
            "baseline:allow already has: hooks add fields, never replace"
        ]
    )
    data = results(toy_project)  # written all the same, with the true metrics
    assert len(data["rows"]) == 2 and data["complete"] is True
    assert data["agents"]["baseline:allow"]["metrics"]["extended"]["tier1_overall_score"] < 1.0


SUMMARY_HOOK = """
    def pytest_pibench_metrics(rows):
        return {"rows_seen": len(rows)}

    def pytest_pibench_summary_rows(document):
        agents = document["agents"].values()
        return [("Rows seen by hook", [str(a["metrics"]["extended"]["rows_seen"]) for a in agents])]
"""


def test_summary_rows_hook_adds_a_row_per_agent_column(toy_project):
    conftest(toy_project, SUMMARY_HOOK)
    result = toy_project.runpytest_subprocess(
        "scenarios", "--pibench-agent=oracle", "--pibench-agent=baseline:deny", "--pibench-trials=2", "-n", "2"
    )
    result.assert_outcomes(passed=4, failed=4)
    result.stdout.re_match_lines([r"^Rows seen by hook\s+4\s+4$"])
    lines = result.stdout.lines
    assert lines.index(next(line for line in lines if line.startswith("Rows seen by hook"))) < lines.index(
        next(line for line in lines if line.startswith("Wall time"))
    )  # inside the table, before the footer


def test_summary_rows_with_the_wrong_number_of_cells_are_an_error(toy_project):
    conftest(toy_project, 'def pytest_pibench_summary_rows():\n    return [("Two cells", ["a", "b"])]\n')
    result = toy_project.runpytest_subprocess("scenarios", "--pibench-agent=oracle")
    assert result.ret != pytest.ExitCode.OK
    result.stderr.fnmatch_lines(
        ["ValueError: pytest_pibench_summary_rows: row 'Two cells' has 2 cells for 1 agent column?s?"]
    )
    assert "pi-bench summary" not in result.stdout.str()  # no half table
    assert results(toy_project)["agents"]["oracle"]["metrics"]["compliance_rate"] == 1.0


SCHEME_HOOK = f"""
    from pytest_pibench import BaselineAgent
    from pytest_pibench.participants.schemes import AgentSpecError, Scheme

    class Stubborn(BaselineAgent):
        pass

    def _stubborn(argument, params):
        if argument.upper() not in ("ALLOW", "DENY", "ESCALATE"):
            raise AgentSpecError(f"stubborn needs a decision, got {{argument!r}}")
        return lambda scenario: Stubborn(argument.upper())

    def pytest_pibench_participant_schemes(config):
        process = {process_name_source("config")}
        with open(f"schemes-{{process}}.txt", "w") as log:
            log.write("called")
        return [Scheme("stubborn", "stubborn:<decision>", agent=_stubborn)]
"""


@pytest.mark.slow
def test_scheme_hook_adds_an_agent_scheme_on_every_process(toy_project):
    conftest(toy_project, SCHEME_HOOK)
    result = toy_project.runpytest_subprocess("scenarios", "--pibench-agent=stubborn:escalate", "-n", "2")
    result.assert_outcomes(failed=2)  # a naive agent: it escalates without looking anything up
    rows = results(toy_project)["rows"]
    assert [(r["agent"], r["status"], r["canonical_decision"]) for r in rows] == [
        ("stubborn:escalate", "completed", "ESCALATE")
    ] * 2
    logs = sorted(p.name for p in toy_project.path.glob("schemes-*.txt"))
    assert logs == ["schemes-gw0.txt", "schemes-gw1.txt", "schemes-main.txt"]


def test_a_bad_scheme_argument_is_a_usage_error(toy_project):
    conftest(toy_project, SCHEME_HOOK)
    result = toy_project.runpytest("scenarios", "--pibench-agent=stubborn:maybe")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--pibench-agent: stubborn needs a decision, got 'maybe'*"])


def test_a_scheme_named_like_a_builtin_is_a_usage_error_naming_both(toy_project):
    conftest(
        toy_project,
        """
        from pytest_pibench.participants.schemes import Scheme

        def _mine(argument, params):
            return lambda scenario: None

        def pytest_pibench_participant_schemes():
            return Scheme("oracle", "oracle", agent=_mine)  # one scheme, not in a list
    """,
    )
    result = toy_project.runpytest("scenarios", "--pibench-agent=oracle")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "*participant scheme 'oracle' is defined twice: by pytest-pibench (built in) and by "
            "the pytest_pibench_participant_schemes hook in conftest*"
        ]
    )


def test_a_row_hook_cannot_rewrite_a_result_field(toy_project):
    """Hook fields live under ``row["extra"]``: a hook returning a result key changes nothing of the result."""
    conftest(toy_project, 'def pytest_pibench_row():\n    return {"all_passed": False}\n')
    toy_project.runpytest("scenarios", "--pibench-agent=oracle", "-k", "ALLOW").assert_outcomes(passed=1)
    (row,) = results(toy_project)["rows"]
    assert row["all_passed"] is True and row["extra"] == {"all_passed": False}
