"""The pytest plugin, driven through pytester: collection, selection, subtests, options, xdist, files."""

from __future__ import annotations

import json

import pytest

ALLOW_ID = "TOY_001_ITEM_REFUND"
ESC_ID = "TOY_002_EXPENSIVE_REFUND"


def failed_items(result: pytest.RunResult) -> list[str]:
    """Items (not subtests) in the short summary as FAILED."""
    return [line.split()[1] for line in result.outlines if line.startswith("FAILED ")]


def results(pytester: pytest.Pytester, name: str = "pibench-results.json") -> dict:
    return json.loads((pytester.path / name).read_text())


def test_without_the_benchmark_json_files_are_ignored(toy_project):
    result = toy_project.runpytest("--co", "-q")
    result.assert_outcomes()
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    assert not (toy_project.path / "pibench-results.json").exists()


def test_collection_ids_trials_and_agents(toy_project):
    result = toy_project.runpytest(
        "scenarios", "--co", "-q", "--pibench-agent=oracle", "--pibench-agent=baseline:deny", "--pibench-trials=2"
    )
    ids = [line for line in result.outlines if "::" in line]
    assert len(ids) == 8
    assert f"scenarios/toyshop/toy_001_item_refund.json::{ALLOW_ID}[oracle-t0]" in ids
    assert f"scenarios/toyshop/toy_002_expensive_item_refund.json::{ESC_ID}[baseline:deny-t1]" in ids


def test_collect_only_runs_nothing_and_leaves_the_results_file_alone(toy_project):
    (toy_project.path / "pibench-results.json").write_text('{"earlier": "run"}')
    result = toy_project.runpytest("scenarios", "--co", "-q", "--pibench-agent=oracle")
    assert result.ret == 0
    assert "pi-bench summary" not in result.stdout.str()
    assert (toy_project.path / "pibench-results.json").read_text() == '{"earlier": "run"}'
    assert not (toy_project.path / "pibench-results.journal.jsonl").exists()


def test_other_json_in_the_tree_is_not_collected(toy_project):
    (toy_project.path / "scenarios" / "toyshop" / "settings.json").write_text('{"a": 1}')
    result = toy_project.runpytest("scenarios", "--co", "-q", "--pibench-agent=oracle")
    assert len([line for line in result.outlines if "::" in line]) == 2


def test_oracle_passes_and_checks_are_subtests(toy_project):
    result = toy_project.runpytest("scenarios", "--pibench-agent=oracle", "-v")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines([
        f"*toy_001_item_refund.json::{ALLOW_ID}?oracle-t0? SUBPASSED?E2?*",
        f"*{ALLOW_ID}?oracle-t0? PASSED*",
        "*pi-bench summary*",
        "*Full compliance*1.000*",
    ])
    data = results(toy_project)
    assert data["format"] == "pibench-results" and data["format_version"] == 1
    assert [r["scenario_id"] for r in data["rows"]] == [ALLOW_ID, ESC_ID]
    assert data["agents"]["oracle"]["metrics"]["compliance_rate"] == 1.0
    assert data["rows"][0]["transcript"]["messages"][1]["role"] == "user"


def test_failing_checks_carry_outcome_id_and_detail(toy_project):
    result = toy_project.runpytest("scenarios", "--pibench-agent=baseline:deny", "-k", "ALLOW")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines([
        "*E4*decision_equals*: decision: expected=ALLOW, actual=DENY*",
        "*Failed scenarios (1):*",
        f"*baseline:deny {ALLOW_ID} t0 ?ALLOW -> DENY? E1: tool_called(lookup_item)=False*",
    ])
    assert failed_items(result) == [f"scenarios/toyshop/toy_001_item_refund.json::{ALLOW_ID}[baseline:deny-t0]"]


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        (["-k", "TOY_002"], [ESC_ID]),
        (["-k", "toyshop and TOY_001"], [ALLOW_ID]),
        (["-m", "escalate"], [ESC_ID]),
        (["-m", "toyshop and not escalate"], [ALLOW_ID]),
        (["-m", "procedural_compliance"], [ALLOW_ID]),
        (["-m", "escalation_abstention"], [ESC_ID]),
    ],
)
def test_k_and_m_selection(toy_project, selector, expected):
    result = toy_project.runpytest("scenarios", "--pibench-agent=oracle", "-p", "no:randomly", *selector)
    assert result.ret == 0
    assert [r["scenario_id"] for r in results(toy_project)["rows"]] == expected


def test_ini_options_are_read(toy_project):
    toy_project.makeini(
        "[pytest]\npibench_agent = oracle\n    baseline:escalate\npibench_trials = 2\n"
        "pibench_results = out/res.json\npibench_seed = 7\n"
    )
    toy_project.runpytest("scenarios")
    data = results(toy_project, "out/res.json")
    assert data["settings"]["agents"] == ["oracle", "baseline:escalate"]
    assert data["settings"]["seed"] == 7
    assert len(data["rows"]) == 8


def test_seeds_are_derived_per_file_and_trial(toy_project):
    toy_project.runpytest("scenarios", "--pibench-agent=oracle", "--pibench-trials=2", "--pibench-seed=42")
    from pytest_pibench import derive_seed

    seeds = {(r["scenario_id"], r["trial"]): r["seed"] for r in results(toy_project)["rows"]}
    assert seeds[(ALLOW_ID, 1)] == derive_seed(42, "toy_001_item_refund", 1)
    assert len(set(seeds.values())) == 4


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--pibench-agent=nosuchmodule_zz:Agent"], "*--pibench-agent: agent spec 'nosuchmodule_zz:Agent': no module*"),
        (["--pibench-agent=baseline:lenient"], "*unknown baseline 'baseline:lenient'*"),
        (["--pibench-agent=oracle", "--pibench-trials=zero"], "*--pibench-trials: expected a whole number, got 'zero'*"),
        (["--pibench-agent=oracle", "--pibench-trials=0"], "*--pibench-trials: must be at least 1*"),
        (["--pibench-agent=oracle", "--pibench-fail-under=happiness=0.5"], "*unknown metric 'happiness'*"),
        (["--pibench-agent=oracle", "--pibench-fail-under=compliance=80"], "*fractions between 0 and 1*"),
        (["--pibench-agent=oracle", "--pibench-baseline=missing.json"], "*cannot read baseline missing.json*"),
    ],
)
def test_bad_options_are_usage_errors(toy_project, args, message):
    result = toy_project.runpytest("scenarios", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])
    assert "Traceback" not in result.stderr.str()


def test_bad_scenario_file_is_an_error_for_that_file_only(toy_project):
    broken = json.loads((toy_project.path / "scenarios/toyshop/toy_001_item_refund.json").read_text())
    del broken["evaluation_criteria"]["policy_checks"][1]["tool_name"]
    (toy_project.path / "scenarios/toyshop/zz_broken.json").write_text(json.dumps(broken))
    result = toy_project.runpytest("scenarios", "--pibench-agent=oracle", "-p", "no:randomly", "-rf")
    result.assert_outcomes(passed=2, failed=1)
    assert failed_items(result) == ["scenarios/toyshop/zz_broken.json::zz_broken"]
    result.stdout.fnmatch_lines(["*zz_broken.json: evaluation_criteria.policy_checks[[]1[]].tool_name: Field required*"])
    rows = results(toy_project)["rows"]
    assert [(r["status"], r["scenario_id"]) for r in rows] == [
        ("completed", ALLOW_ID), ("completed", ESC_ID), ("error", "zz_broken")]
    assert "policy_checks[1].tool_name" in rows[2]["error"]


def test_agent_exception_fails_the_item_with_the_traceback(toy_project):
    toy_project.makepyfile(crashy="""
        class Agent:
            def init_state(self, ctx, tools, message_history=None):
                return {}
            def generate(self, message, state):
                raise RuntimeError("model endpoint unreachable")
    """)
    result = toy_project.runpytest("scenarios", "--pibench-agent=crashy:Agent", "-k", "ALLOW")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "*episode error (agent_error): agent.generate raised RuntimeError: model endpoint unreachable*",
        "*Traceback*", "*crashy.py*",
    ])
    (row,) = results(toy_project)["rows"]
    # The agent's own failure is scored (and fails), never kept apart as an error row.
    assert row["status"] == "completed" and row["failure_cause"] == "agent" and row["all_passed"] is False
    metrics = results(toy_project)["agents"]["crashy:Agent"]["metrics"]
    assert metrics["errors"] == 0 and metrics["completed"] == 1 and metrics["compliance_rate"] == 0.0


def test_conftest_fixture_agents_parametrized(toy_project):
    toy_project.makeconftest("""
        import pytest
        from pytest_pibench import BaselineAgent

        class Strict(BaselineAgent):
            pibench_name = "strict-v2"
            def __init__(self):
                super().__init__("DENY")

        @pytest.fixture(params=["oracle", Strict], ids=["gold", "strict"])
        def pibench_agent(request):
            return request.param
    """)
    toy_project.makeini("[pytest]\npibench_scenarios = scenarios\n")
    result = toy_project.runpytest("-p", "no:randomly")
    assert len(failed_items(result)) == 2
    ids = {r["nodeid"].split("::")[1] for r in results(toy_project)["rows"]}
    assert f"{ALLOW_ID}[t0-gold]" in ids or f"{ALLOW_ID}[gold-t0]" in ids
    assert set(results(toy_project)["agents"]) == {"oracle", "strict-v2"}


def test_scenario_paths_on_the_command_line_need_an_agent(toy_project):
    result = toy_project.runpytest("scenarios/toyshop/toy_001_item_refund.json")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*no agent to benchmark: pass --pibench-agent=SPEC or define a pibench_agent*"])


@pytest.mark.slow
def test_agent_without_paths_runs_the_bundled_scenarios(pytester):
    result = pytester.runpytest("--pibench-agent=oracle", "-q")
    assert result.ret == 0
    rows = results(pytester)["rows"]
    assert len(rows) >= 8 and all(r["all_passed"] for r in rows)
    assert {r["domain_name"] for r in rows} == {"retail", "finra", "helpdesk"}  # every bundled domain


def test_gates_and_exit_codes(toy_project):
    ok = toy_project.runpytest("scenarios", "--pibench-agent=oracle", "--pibench-fail-under=compliance=1.0",
                               "--pibench-fail-under=Escalation / Abstention=0.9")
    assert ok.ret == 0
    ok.stdout.fnmatch_lines(["*Gate: PASSED*", "*ok   oracle: compliance = 1.0000 >= 1*"])
    bad = toy_project.runpytest("scenarios", "--pibench-agent=baseline:escalate", "--pibench-fail-under=overall=0.9",
                                "--json-report", "--json-report-file=gate.json")
    assert bad.ret == 8
    report = json.loads((toy_project.path / "gate.json").read_text())
    assert report["exitcode"] == 8  # set before pytest-json-report records it
    assert report["pibench"]["gate"]["passed"] is False
    bad.stdout.fnmatch_lines(["*Gate: FAILED (exit code 8)*", "*FAIL baseline:escalate: overall = *< 0.9*"])
    lenient = toy_project.runpytest("scenarios", "--pibench-agent=baseline:escalate",
                                    "--pibench-fail-under=overall=0.1")
    assert lenient.ret == 0  # both scenarios fail, but the gate (not the scenarios) decides
    lenient.stdout.fnmatch_lines(["*failing scenarios do not fail the run when a gate is set*"])


def test_baseline_regressions(toy_project):
    toy_project.runpytest("scenarios", "--pibench-agent=oracle", "--pibench-results=base.json")
    same = toy_project.runpytest("scenarios", "--pibench-agent=oracle", "--pibench-baseline=base.json")
    assert same.ret == 0
    worse = toy_project.runpytest("scenarios", "--pibench-agent=baseline:escalate",
                                  "--pibench-baseline=base.json::oracle")
    assert worse.ret == 8
    who = "baseline:escalate (baseline agent oracle)"
    worse.stdout.fnmatch_lines([
        f"*FAIL {who}: compliance 0.0000 vs baseline 1.0000 (tolerance 0)*",
        f"*FAIL {who}: {ALLOW_ID} trial 0 passed in the baseline and fails now*",
    ])


def test_baseline_tolerance_applies_to_metric_drops(toy_project):
    toy_project.runpytest("scenarios", "--pibench-agent=oracle", "--pibench-results=base.json")
    base = results(toy_project, "base.json")
    for row in base["rows"]:  # keep the checks (overall = 1.0), but no scenario passed: only metrics compare
        row["all_passed"] = False
    (toy_project.path / "base.json").write_text(json.dumps(base))
    args = ["scenarios", "--pibench-agent=baseline:escalate", "--pibench-baseline=base.json::oracle",
            "--pibench-fail-under=overall=0"]
    assert toy_project.runpytest(*args, "--pibench-tolerance=0.5").ret == 8
    assert toy_project.runpytest(*args, "--pibench-tolerance=1").ret == 0


def test_leaderboard_artifact_and_pi_report_round_trip(toy_project):
    toy_project.runpytest("scenarios", "--pibench-agent=oracle", "--pibench-agent=baseline:deny",
                          "--pibench-leaderboard=lb.json", "--json-report", "--json-report-file=jr.json")
    boards = {name: json.loads((toy_project.path / name).read_text())
              for name in ("lb.oracle.json", "lb.baseline_deny.json")}
    assert boards["lb.oracle.json"]["results"][0]["metrics"]["compliance_rate"] == 1.0
    report = json.loads((toy_project.path / "jr.json").read_text())
    assert set(report["pibench"]["agents"]) == {"oracle", "baseline:deny"}
    assert all("pibench" in test["metadata"] for test in report["tests"])
    from pytest_pibench.cli import main

    for source in ("jr.json", "pibench-results.json"):
        assert main(["report", str(toy_project.path / source), "-o", str(toy_project.path / "again.json")]) == 0
        again = json.loads((toy_project.path / "again.oracle.json").read_text())["results"][0]
        first = boards["lb.oracle.json"]["results"][0]
        for key in ("metrics", "score", "task_rewards_by_scenario_id", "label_breakdown"):
            assert again[key] == first[key], key


def test_junitxml_has_a_testcase_per_item(toy_project):
    toy_project.runpytest("scenarios", "--pibench-agent=baseline:deny", "--junitxml=out.xml")
    xml = (toy_project.path / "out.xml").read_text()
    assert xml.count("<testcase ") >= 2
    assert "decision: expected=ALLOW, actual=DENY" in xml


def _comparable(data: dict) -> str:
    data = dict(data)
    data.pop("created")
    data.pop("wall_time")
    data["rows"] = [{k: v for k, v in row.items() if k != "duration"} for row in data["rows"]]
    return json.dumps(data, sort_keys=True)


@pytest.mark.slow
def test_results_identical_with_and_without_xdist(toy_project):
    args = ["scenarios", "--pibench-agent=oracle", "--pibench-agent=baseline:allow", "--pibench-trials=3"]
    toy_project.runpytest_subprocess(*args, "--pibench-results=serial.json", "--pibench-leaderboard=s.json")
    run = toy_project.runpytest_subprocess(*args, "-n", "2", "--pibench-results=par.json",
                                           "--pibench-leaderboard=p.json")
    run.stdout.fnmatch_lines(["*2 workers*"])
    assert _comparable(results(toy_project, "serial.json")) == _comparable(results(toy_project, "par.json"))
    for agent in ("oracle", "baseline_allow"):
        serial = json.loads((toy_project.path / f"s.{agent}.json").read_text())["results"][0]
        parallel = json.loads((toy_project.path / f"p.{agent}.json").read_text())["results"][0]
        assert serial["metrics"] == parallel["metrics"]


@pytest.mark.slow
def test_crashed_worker_item_becomes_an_error_row(toy_project):
    toy_project.makepyfile(dies="""
        import os

        class Agent:
            def init_state(self, ctx, tools, message_history=None):
                return {}
            def generate(self, message, state):
                os._exit(3)
    """)
    result = toy_project.runpytest_subprocess("scenarios", "--pibench-agent=dies:Agent", "--pibench-agent=oracle",
                                              "-n", "2", "-p", "no:randomly")
    rows = results(toy_project)["rows"]
    mine = [r for r in rows if r["agent"] == "dies:Agent"]
    assert len(rows) == 4, result.stdout.str()
    assert all(r["status"] == "error" and "crashed" in r["error"] for r in mine)
    assert {r["scenario_id"] for r in mine} == {ALLOW_ID, ESC_ID}
    assert all(r["all_passed"] for r in rows if r["agent"] == "oracle")


@pytest.mark.slow
def test_crash_rows_come_from_the_planned_item_not_from_its_node_id(toy_project):
    """An agent file named like a trial id (``-t1-``) once made a regex over node ids read the wrong trial."""
    agents = toy_project.path / "agents"
    agents.mkdir()
    (agents / "dies-t1-fast.py").write_text(
        "import os\n\nclass Agent:\n    def init_state(self, ctx, tools, message_history=None):\n        return {}\n"
        "    def generate(self, message, state):\n        os._exit(3)\n"
    )
    result = toy_project.runpytest_subprocess("scenarios", "--pibench-agent=agents/dies-t1-fast.py:Agent",
                                              "--pibench-trials=2", "-n", "2", "-p", "no:randomly")  # fmt: skip
    rows = results(toy_project)["rows"]
    assert len(rows) == 4, result.stdout.str()
    assert all(r["status"] == "error" and "crashed" in r["error"] for r in rows)
    assert {r["agent"] for r in rows} == {"agents/dies-t1-fast.py:Agent"}
    assert sorted((r["scenario_id"], r["trial"]) for r in rows) == sorted(
        [(ALLOW_ID, 0), (ALLOW_ID, 1), (ESC_ID, 0), (ESC_ID, 1)]
    )


def test_plugin_import_is_light(pytester):
    pytester.makeconftest("""
        import sys
        def pytest_sessionfinish(session):
            heavy = sorted(m for m in ("pydantic", "litellm", "a2a", "rich", "docstring_parser") if m in sys.modules)
            print("HEAVY:", heavy)
    """)
    pytester.makepyfile("def test_nothing():\n    pass\n")
    result = pytester.runpytest_subprocess("-s", "-p", "no:randomly")
    assert "HEAVY: []" in result.stdout.str()
    assert "pibench" in result.stdout.str()  # the plugin is loaded ("plugins: ... pibench")


def test_a_judge_class_fills_tier2_without_failing_items(toy_project):
    toy_project.makepyfile(strict_judge="""
        class AlwaysNo:
            def judge(self, question, text):
                return "NO"
    """)
    result = toy_project.runpytest("scenarios", "--pibench-agent=oracle", "--pibench-judge=strict_judge:AlwaysNo",
                                   "-k", "ALLOW", "-v")
    assert result.ret == 0  # a failed Tier-2 check is reported, not gating
    result.stdout.fnmatch_lines(["*SUBXFAIL*E7*", "*Semantic score*0.000*"])
    (row,) = results(toy_project)["rows"]
    assert row["all_passed"] is True and row["semantic_score"] == 0.0


def test_k_and_m_select_one_bundled_domain(pytester):
    for selector in (["-k", "finra"], ["-m", "finra"]):
        result = pytester.runpytest("--pibench-agent=oracle", "-q", *selector, "--co")
        ids = [line for line in result.outlines if "::" in line]
        assert ids and all(line.startswith("finra/fin_") for line in ids), ids
