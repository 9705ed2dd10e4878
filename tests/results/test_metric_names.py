"""Gates name metrics; each name reads its value from the typed payload, and an unknown name says what is known."""

from __future__ import annotations

import pytest

from pytest_pibench import compute_metrics
from pytest_pibench.results.metric_types import gateable_metric, metric_value, unknown_metric
from pytest_pibench.vocab import COLUMNS, GROUPS


def _row(scenario: str, trial: int, passed: bool, column: str) -> dict:
    check = {"outcome_id": "c", "type": "decision_equals", "passed": passed, "detail": "", "tier": 1,
             "dimension": "decision"}  # fmt: skip
    return {"scenario_id": scenario, "trial": trial, "agent": "a", "status": "completed", "all_passed": passed,
            "label": "DENY", "leaderboard_primary": column, "outcome_checks": [check]}  # fmt: skip


def test_every_gateable_name_reads_its_own_value():
    first, second = list(COLUMNS)[:2]
    rows = [_row("A", 0, True, first), _row("A", 1, False, first), _row("B", 0, True, second),
            _row("B", 1, True, second)]  # fmt: skip
    metrics = compute_metrics(rows)
    assert metric_value(metrics, "compliance") == metric_value(metrics, "Full compliance") == 0.75
    assert metric_value(metrics, "overall") == pytest.approx((0.5 + 1.0) / 2)
    assert metric_value(metrics, first) == 0.5 and metric_value(metrics, second) == 1.0
    assert metric_value(metrics, "pass^2") == 0.5  # B passed both trials, A one of two
    assert metric_value(metrics, "pass^3") is None  # nobody ran 3 trials: absent, not 0
    group = next(g for g, columns in GROUPS.items() if first in columns)
    assert metric_value(metrics, group) == metrics["by_group"][group]
    assert gateable_metric("pass^2").name == "pass^2" and gateable_metric(first).name == first


def test_an_unknown_name_is_refused_with_the_known_ones():
    assert gateable_metric("accuracy") is None
    problem = unknown_metric("accuracy")
    assert problem is not None and "compliance" in problem and "pass^K" in problem
    assert unknown_metric("Policy Activation") is None and unknown_metric("pass^4") is None
