"""Clustered standard errors and intervals: the formulas against values worked out by hand."""

from __future__ import annotations

import math

import pytest

from pytest_pibench.results.uncertainty import Z95, clustered_mean, interval, metric_uncertainty


def test_clustered_mean_by_hand():
    mean, se = clustered_mean({"a": [1, 0], "b": [1, 1], "c": [0]})
    # mean 0.6; residual sums -0.2, 0.8, -0.6; 3/2 * 1.04 / 25 = 0.0624
    assert mean == pytest.approx(0.6) and se == pytest.approx(math.sqrt(0.0624))


def test_one_trial_per_scenario_is_the_usual_standard_error_with_the_small_sample_factor():
    mean, se = clustered_mean({"a": [1], "b": [0], "c": [1], "d": [0]})
    assert mean == 0.5 and se == pytest.approx(math.sqrt(0.25 / 4 * 4 / 3))


def test_trials_of_one_scenario_do_not_count_as_independent():
    repeated = {"a": [1, 1, 1, 1], "b": [0, 0, 0, 0]}  # 8 rows but only 2 scenarios
    independent = {str(i): [v] for i, v in enumerate([1, 1, 1, 1, 0, 0, 0, 0])}
    assert clustered_mean(repeated)[1] > clustered_mean(independent)[1]  # wider: the truth about 2 scenarios
    # residual sums: a 4 * 0.5 = 2, b -2; 2/1 * (4 + 4) / 64 = 0.25, se 0.5
    assert clustered_mean(repeated)[1] == pytest.approx(0.5)


def test_under_two_scenarios_there_is_no_standard_error():
    assert clustered_mean({"a": [1, 0, 1]}) == (pytest.approx(2 / 3), None)
    assert clustered_mean({}) == (0.0, None)
    assert interval(0.5, None) is None


def test_intervals_are_cut_to_the_unit_range():
    assert interval(0.9, 0.1) == [pytest.approx(0.9 - Z95 * 0.1), 1.0]
    assert interval(0.02, 0.05) == [0.0, pytest.approx(0.02 + Z95 * 0.05)]


def test_groups_and_overall_add_the_variances_of_their_columns():
    rows = [
        {"scenario_id": f"{column}-{i}", "leaderboard_primary": column, "all_passed": passed, "credit": credit}
        for column, cases in {
            "Policy Activation": [(True, 1.0), (False, 0.5)],
            "Policy Interpretation": [(True, 1.0), (True, 0.75), (False, 0.25)],
        }.items()
        for i, (passed, credit) in enumerate(cases)
    ]
    result = metric_uncertainty(rows, lambda r: r["credit"])
    activation = result["columns"]["Policy Activation"]
    interpretation = result["columns"]["Policy Interpretation"]
    assert activation["estimate"] == 0.75 and activation["se"] == pytest.approx(math.sqrt(2 * 0.125 / 4))
    group = result["groups"]["Policy Understanding"]
    assert group["estimate"] == pytest.approx((0.75 + 2 / 3) / 2)
    assert group["se"] == pytest.approx(math.sqrt(activation["se"] ** 2 + interpretation["se"] ** 2) / 2)
    assert result["overall"]["se"] == pytest.approx(group["se"])  # the same two columns
    assert result["compliance"]["estimate"] == pytest.approx(3 / 5) and result["compliance"]["scenarios"] == 5
