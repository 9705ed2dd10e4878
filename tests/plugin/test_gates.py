"""Gates compare like with like: baseline rows matched by (agent, scenario, trial), named baseline agents."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_pibench.plugin.gates import check_gates, parse_baseline_spec
from pytest_pibench.plugin.settings import Gate, Settings
from pytest_pibench.results.metrics import compute_metrics

ALLOW_ID = "TOY_001_ITEM_REFUND"
ESC_ID = "TOY_002_EXPENSIVE_REFUND"


# ---------------------------------------------------------------- PATH::AGENT


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("main.json", ("main.json", None)),
        ("main.json::oracle", ("main.json", "oracle")),
        ("runs/main.json::mymod:Agent", ("runs/main.json", "mymod:Agent")),
        ("C:\\runs\\main.json", ("C:\\runs\\main.json", None)),
        ("C:\\runs\\main.json::baseline:deny", ("C:\\runs\\main.json", "baseline:deny")),
        ("odd::name.json::oracle", ("odd::name.json", "oracle")),  # the last '::' separates
    ],
    ids=["path", "agent", "module-agent", "windows-path", "windows-path-agent", "double-colon-path"],
)
def test_baseline_spec_splits_on_the_last_double_colon(text, expected):
    assert parse_baseline_spec(text) == expected


@pytest.mark.parametrize("text", ["::oracle", "main.json::", "  "], ids=["no-path", "no-agent", "blank"])
def test_baseline_spec_needs_a_path_and_a_nonempty_agent(text):
    with pytest.raises(ValueError, match="PATH::AGENT"):
        parse_baseline_spec(text)


# ---------------------------------------------------------------- check_gates on plain rows


def row(sid: str, passed: bool, credit: float = 1.0, agent: str = "a", trial: int = 0, status: str = "completed"):
    """A result row with ``credit`` as its share of passed checks (10 checks)."""
    good = round(credit * 10)
    return {
        "scenario_id": sid,
        "trial": trial,
        "agent": agent,
        "status": status,
        "all_passed": passed,
        "label": "ALLOW",
        "leaderboard_primary": "Policy Activation",
        "outcome_checks": [{"passed": i < good} for i in range(10)],
    }


def baseline_of(rows: list[dict[str, Any]]) -> dict[str, Any]:
    agents = sorted({r["agent"] for r in rows})
    return {
        "format": "pibench-results",
        "agents": {a: {"metrics": compute_metrics(r for r in rows if r["agent"] == a)} for a in agents},
        "rows": rows,
    }


def gate(rows, base_rows, *, spec: str = "base.json", **settings: Any):
    agents = sorted({r["agent"] for r in rows})
    metrics = {a: compute_metrics(r for r in rows if r["agent"] == a) for a in agents}
    return check_gates(Settings(baseline=spec, **settings), metrics, rows, baseline_of(base_rows))


def test_a_subset_run_is_compared_on_the_rows_both_runs_have():
    # The baseline's other scenario (passed) is out of this run: it must not lower "now" or raise "before".
    verdict = gate([row("B", False, 0.5)], [row("A", True), row("B", False, 0.5)])
    assert verdict.passed, verdict.lines
    assert verdict.lines[0] == (
        "info a: 1 row compared by (agent, scenario, trial) with the baseline; left out: 0 of this run's 1 "
        "(not in the baseline), 1 of the baseline's 2 (not in this run), "
        "0 rows with an error (0 now, 0 in the baseline)"
    )
    assert "ok   a: compliance 0.0000 vs baseline 0.0000 (tolerance 0)" in verdict.lines
    assert "ok   a: overall 0.5000 vs baseline 0.5000 (tolerance 0)" in verdict.lines


def test_new_scenarios_cannot_hide_a_drop_on_the_shared_ones():
    # B got worse (0.5 -> 0.2); a new scenario C at 1.0 lifts the whole-run overall above the baseline's.
    verdict = gate([row("B", False, 0.2), row("C", True)], [row("B", False, 0.5)])
    assert not verdict.passed
    assert "FAIL a: overall 0.2000 vs baseline 0.5000 (tolerance 0)" in verdict.lines
    assert any("left out: 1 of this run's 2 (not in the baseline), 0 of the baseline's 1" in line
               for line in verdict.lines)


def test_trials_are_matched_one_by_one():
    base = [row("A", True, trial=0), row("A", True, trial=1)]
    verdict = gate([row("A", True, trial=0), row("A", False, 0.9, trial=2)], base)
    assert verdict.passed, verdict.lines  # trial 2 has no counterpart: left out, not a regression
    assert "left out: 1 of this run's 2 (not in the baseline), 1 of the baseline's 2" in verdict.lines[0]
    worse = gate([row("A", True, trial=0), row("A", False, 0.9, trial=1)], base)
    assert "FAIL a: A trial 1 passed in the baseline and fails now" in worse.lines


def test_error_rows_are_left_out_of_the_comparison_and_counted():
    now = [row("A", False, 0.0, status="error"), row("B", True), row("C", True)]
    base = [row("A", True), row("B", True), row("C", False, 0.3, status="error")]
    verdict = gate(now, base)
    assert verdict.passed, verdict.lines  # A errored now (not a policy regression); C errored before
    assert "1 row compared" in verdict.lines[0]
    assert "2 rows with an error (1 now, 1 in the baseline)" in verdict.lines[0]
    assert "ok   a: compliance 1.0000 vs baseline 1.0000 (tolerance 0)" in verdict.lines


def test_nothing_in_common_fails_with_a_clear_message():
    verdict = gate([row("A", True)], [row("B", True)])
    assert not verdict.passed
    assert "FAIL a: nothing to compare: no (scenario, trial) of this run is in the baseline" in verdict.lines
    only_errors = gate([row("A", False, status="error")], [row("A", True)])
    assert "FAIL a: nothing to compare: no (scenario, trial) of this run is in the baseline without an error" in (
        only_errors.lines
    )


def test_another_agent_is_not_compared_unless_named():
    verdict = gate([row("A", True, agent="mymod:Agent")], [row("A", True, agent="oracle")])
    assert not verdict.passed
    assert verdict.lines == [
        "FAIL mymod:Agent: no run of this agent in the baseline (has: oracle); "
        "to compare with another agent, name it: --pibench-baseline=PATH::AGENT"
    ]
    named = gate([row("A", True, agent="mymod:Agent")], [row("A", True, agent="oracle")], spec="base.json::oracle")
    assert named.passed, named.lines
    assert named.lines[0].startswith("info mymod:Agent (baseline agent oracle): 1 row compared")


def test_each_agent_is_compared_with_itself():
    now = [row("A", True, agent="x"), row("A", False, 0.1, agent="y")]
    base = [row("A", True, agent="y"), row("A", False, 0.1, agent="x")]
    verdict = gate(now, base)
    assert "FAIL y: A trial 0 passed in the baseline and fails now" in verdict.lines
    assert not any(line.startswith("FAIL x") for line in verdict.lines)


def test_a_named_baseline_agent_with_several_agents_fails():
    # Agents from a parametrized pibench_agent fixture are only known at the end: the gate says so.
    now = [row("A", True, agent="x"), row("A", True, agent="y")]
    verdict = gate(now, [row("A", True, agent="oracle")], spec="base.json::oracle")
    assert not verdict.passed
    assert verdict.lines == [
        "FAIL baseline agent 'oracle' named, but 2 agents ran (x, y); name a baseline agent only for a run of one agent"
    ]


def test_thresholds_still_read_the_whole_run():
    verdict = gate([row("A", True), row("B", False, 0.0)], [row("A", True)],
                   fail_under=(Gate("compliance", 0.6),))
    assert "FAIL a: compliance = 0.5000 < 0.6" in verdict.lines
    assert "ok   a: compliance 1.0000 vs baseline 1.0000 (tolerance 0)" in verdict.lines


# ---------------------------------------------------------------- through pytest


def results(pytester: pytest.Pytester, name: str) -> dict[str, Any]:
    return json.loads((pytester.path / name).read_text())


def test_k_subset_against_a_full_baseline_says_what_was_compared(toy_project):
    toy_project.runpytest("scenarios", "--pibench-agent=oracle", "--pibench-results=base.json")
    result = toy_project.runpytest("scenarios", "--pibench-agent=oracle", "-k", "ALLOW",
                                   "--pibench-baseline=base.json", "--pibench-results=")
    assert result.ret == 0
    result.stdout.fnmatch_lines([
        "Gate: PASSED",
        "  info oracle: 1 row compared by (agent, scenario, trial) with the baseline; left out: 0 of this run's 1 "
        "(not in the baseline), 1 of the baseline's 2 (not in this run), 0 rows with an error*",
        "  ok   oracle: compliance 1.0000 vs baseline 1.0000 (tolerance 0)",
    ])


def test_baseline_over_other_scenarios_fails(toy_project):
    toy_project.runpytest("scenarios", "--pibench-agent=oracle", "-k", "ALLOW", "--pibench-results=base.json")
    result = toy_project.runpytest("scenarios", "--pibench-agent=oracle", "-k", "ESCALATE",
                                   "--pibench-baseline=base.json", "--pibench-results=")
    assert result.ret == 8
    result.stdout.fnmatch_lines(
        ["*FAIL oracle: nothing to compare: no (scenario, trial) of this run is in the baseline"]
    )


def test_other_agent_fails_unless_the_baseline_agent_is_named(toy_project):
    toy_project.runpytest("scenarios", "--pibench-agent=oracle", "--pibench-results=base.json")
    other = toy_project.runpytest("scenarios", "--pibench-agent=baseline:allow", "--pibench-baseline=base.json",
                                  "--pibench-results=")
    assert other.ret == 8
    other.stdout.fnmatch_lines(["*FAIL baseline:allow: no run of this agent in the baseline (has: oracle)*PATH::AGENT"])
    named = toy_project.runpytest("scenarios", "--pibench-agent=baseline:allow", "--pibench-baseline=base.json::oracle",
                                  "--pibench-results=")
    assert named.ret == 8
    named.stdout.fnmatch_lines([
        "*info baseline:allow (baseline agent oracle): 2 rows compared*",
        f"*FAIL baseline:allow (baseline agent oracle): {ALLOW_ID} trial 0 passed in the baseline and fails now",
    ])


def test_several_agents_each_match_their_own_rows(toy_project):
    toy_project.runpytest("scenarios", "--pibench-agent=oracle", "--pibench-agent=baseline:deny",
                          "--pibench-results=base.json")
    result = toy_project.runpytest("scenarios", "--pibench-agent=oracle", "--pibench-agent=baseline:deny",
                                   "--pibench-baseline=base.json", "--pibench-results=")
    assert result.ret == 0
    result.stdout.fnmatch_lines(["*info oracle: 2 rows compared*", "*info baseline:deny: 2 rows compared*"])


@pytest.mark.parametrize(
    ("agents", "spec", "message"),
    [
        (["oracle"], "base.json::nobody", "*--pibench-baseline: no agent 'nobody' in baseline base.json (has: oracle)"),
        (["oracle", "baseline:deny"], "base.json::oracle", "*names one baseline agent but 2 agents run*"),
        (["oracle"], "base.json::", "*no agent after '::'*"),
        (["oracle"], "missing.json::oracle", "*cannot read baseline missing.json*"),
    ],
    ids=["unknown-agent", "several-agents", "empty-agent", "missing-file"],
)
def test_bad_baseline_agents_are_usage_errors(toy_project, agents, spec, message):
    toy_project.runpytest("scenarios", "--pibench-agent=oracle", "--pibench-results=base.json")
    result = toy_project.runpytest("scenarios", *(f"--pibench-agent={a}" for a in agents),
                                   f"--pibench-baseline={spec}", "--pibench-results=")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])
    assert not (toy_project.path / "pibench-results.json").exists()
