"""The noise-aware gate: pass, regressed (exit 8) and inconclusive (exit 10), and K-of-N per scenario."""

from __future__ import annotations

import pytest

from pytest_pibench.plugin.gates import check_gates
from pytest_pibench.plugin.settings import Settings
from pytest_pibench.run.config import RunConfig


def _rows(agent: str, passes: list[list[bool]]) -> list[dict]:
    return [
        {"agent": agent, "scenario_id": f"S{s}", "trial": t, "status": "completed", "all_passed": p,
         "leaderboard_primary": "Policy Activation", "outcome_checks": [{"passed": p}]}
        for s, trials in enumerate(passes) for t, p in enumerate(trials)
    ]  # fmt: skip


def _gate(before: list[dict], now: list[dict], **options) -> object:
    settings = Settings(run=RunConfig(agents=("a",)), baseline="base.json", gate_mode="statistical", **options)
    return check_gates(settings, {"a": {}}, now, {"agents": {"a": {}}, "rows": before})


def test_a_clear_drop_regresses():
    verdict = _gate(_rows("a", [[True]] * 30), _rows("a", [[True]] * 10 + [[False]] * 20))
    assert not verdict.passed and any("compliance" in line and "regressed" in line for line in verdict.lines)


def test_no_change_passes():
    verdict = _gate(_rows("a", [[True, False]] * 20), _rows("a", [[True, False]] * 20))
    assert verdict.passed and not verdict.inconclusive


def test_a_small_drop_on_few_scenarios_is_inconclusive_and_says_what_would_settle_it():
    before = _rows("a", [[True, True]] * 12)
    now = _rows("a", [[True, True]] * 11 + [[True, False]])
    verdict = _gate(before, now, tolerance=0.1)
    assert verdict.passed and verdict.inconclusive
    (line,) = [line for line in verdict.lines if line.startswith("????") and " compliance " in line]
    assert "inconclusive" in line and "x the present sample" in line


def test_min_pass_k_of_n():
    rows = _rows("a", [[True, True, True, False], [True, False, False, True], [True, True]])
    verdict = check_gates(Settings(run=RunConfig(agents=("a",), min_pass=(3, 4))), {"a": {}}, rows, None)
    assert not verdict.passed
    assert any("S1 passed 2 of 4 trials, fewer than 3" in line for line in verdict.lines)
    assert any("S2 ran 2 of the 4 trials" in line for line in verdict.lines)
    assert not any("S0" in line for line in verdict.lines if line.startswith("FAIL"))


@pytest.mark.parametrize(
    ("agent", "selection", "code", "line"),
    [
        ("oracle", "retail", 0, "*Gate: PASSED*"),
        ("baseline:deny", "retail", 8, "*FAIL baseline:deny (baseline agent oracle): compliance * regressed*"),
        ("baseline:deny", "RET_001", 10, "*Gate: INCONCLUSIVE (exit code 10)*"),
    ],
)
@pytest.mark.slow
def test_the_three_outcomes_end_to_end(pytester, agent, selection, code, line):
    pytester.runpytest("--pibench-agent=oracle", "-k", "retail", "--pibench-results=base.json", "-p", "no:cacheprovider")
    result = pytester.runpytest(f"--pibench-agent={agent}", "-k", selection, "--pibench-baseline=base.json::oracle",
                                "--pibench-gate-mode=statistical", "--pibench-results=", "-p", "no:cacheprovider")
    assert result.ret == code, result.stdout.str()[-2500:]
    result.stdout.fnmatch_lines([line])


def test_bad_gate_options_are_usage_errors(pytester):
    for option, message in (("--pibench-gate-mode=fuzzy", "choose exact or statistical"),
                            ("--pibench-confidence=1.5", "between 0.5 and 1"),
                            ("--pibench-min-pass=5/4", "K/N with 1 <= K <= N")):  # fmt: skip
        result = pytester.runpytest("--pibench-agent=oracle", option, "-p", "no:cacheprovider")
        assert result.ret == 4
        result.stderr.fnmatch_lines([f"*{message}*"])


def test_pass_hat_k_is_gated_on_paired_evidence():
    from pytest_pibench.plugin.settings import Gate

    before = _rows("a", [[True, True]] * 30)
    now = _rows("a", [[True, True]] * 10 + [[True, False]] * 20)
    verdict = _gate(before, now, fail_under=(Gate("pass^2", 0.0),))
    (line,) = [line for line in verdict.lines if "pass^2" in line and "vs baseline" in line]
    assert line.startswith("FAIL a: pass^2 -0.6667 vs baseline") and "regressed" in line
    steady = _gate(_rows("a", [[True, True]] * 30), _rows("a", [[True, True]] * 30), fail_under=(Gate("pass^2", 0.0),))
    (steady_line,) = [line for line in steady.lines if "pass^2" in line and "vs baseline" in line]
    assert steady_line.startswith("ok   a: pass^2 +0.0000") and not steady.inconclusive
    too_few = _gate(_rows("a", [[True]] * 30), _rows("a", [[True]] * 30), fail_under=(Gate("pass^3", 0.0),))
    assert any("pass^3 cannot be gated statistically here" in line for line in too_few.lines)
