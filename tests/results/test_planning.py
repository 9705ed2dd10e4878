"""pi plan: variance components and the trials or scenarios a comparison needs, against values worked by hand."""

from __future__ import annotations

import subprocess
import sys

import pytest

from pytest_pibench.results.document import atomic_write_json, results_document
from pytest_pibench.results.planning import plan_trials, variance_components


def _rows(outcomes: list[list[int]]) -> list[dict]:
    return [{"agent": "a", "scenario_id": f"S{s}", "trial": t, "status": "completed", "all_passed": bool(p)}
            for s, trials in enumerate(outcomes) for t, p in enumerate(trials)]  # fmt: skip


ROWS = _rows([[1, 1], [1, 0], [0, 0], [1, 0]])


def test_variance_components_by_hand():
    parts = variance_components(ROWS)
    assert parts["sw2"] == pytest.approx(0.25)  # sample variances 0, .5, 0, .5
    assert parts["sb2"] == pytest.approx(0.5 / 3 - 0.25 / 2)  # var of means minus sw2 / T
    assert (parts["scenarios"], parts["trials"], parts["rate"]) == (4, 2, 0.5)


def test_a_large_difference_needs_more_trials_a_small_one_more_scenarios():
    big = plan_trials(ROWS, 0.5)
    assert big["trials_needed"] == 12  # .25 / ((.5 / 2.8016)^2 * 4 / 2 - .041667) = 11.3
    small = plan_trials(ROWS, 0.3)
    assert small["trials_needed"] is None  # the scenarios alone vary too much: no number of trials suffices
    assert small["scenarios_needed"] == 30  # 2 * (.041667 + .25 / 2) / (.3 / 2.8016)^2 = 29.1


def test_no_variance_seen_is_planned_conservatively():
    parts = variance_components(_rows([[1], [1], [1]]))
    smoothed = 3.5 / 4
    assert parts["sb2"] == pytest.approx(smoothed * (1 - smoothed)) and parts["sw2"] == 0


def test_bad_plans_are_refused():
    with pytest.raises(ValueError, match="at least 2 scenarios"):
        variance_components(_rows([[1, 0]]))
    with pytest.raises(ValueError, match="difference to detect"):
        plan_trials(ROWS, 0)


def test_pi_plan(tmp_path):
    atomic_write_json(tmp_path / "r.json", results_document(ROWS, {"agents": ["a"]}, 1.0))
    out = subprocess.run([sys.executable, "-m", "pytest_pibench", "plan", "r.json", "--difference", "0.5"],
                         cwd=tmp_path, capture_output=True, text=True, check=False)  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "trials per scenario, with these 4 scenarios: 12" in out.stdout
    missing = subprocess.run([sys.executable, "-m", "pytest_pibench", "plan", "r.json", "--difference", "0.5",
                              "--agent", "zz"], cwd=tmp_path, capture_output=True, text=True, check=False)  # fmt: skip
    assert missing.returncode == 4 and "no agent 'zz'" in missing.stderr
