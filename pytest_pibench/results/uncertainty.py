"""Standard errors and 95% intervals of the leaderboard numbers, clustered by scenario.

Trials of one scenario are not independent (the same hard scenario fails every
trial), so the unit of sampling is the scenario: a mean over rows gets the
cluster-robust (sandwich) variance

    Var(m) = G / (G - 1) * sum_g (sum_i (y_gi - m))^2 / n^2

over G scenarios and n rows; with one trial per scenario it is the familiar
``s^2 / n`` with the small-sample factor ``G / (G - 1)``. A column score is such a
mean (partial credit of the column's rows); a group score and the overall score
are means of column scores over disjoint scenarios, so their variances add:
``Var(mean of k columns) = sum Var(column) / k^2``. Intervals are the estimate
plus or minus 1.96 standard errors, cut to [0, 1]; with fewer than 2 scenarios
there is no standard error (None).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pytest_pibench.vocab import GROUPS

__all__ = ["Z95", "clustered_mean", "interval", "judge_reliability", "krippendorff_alpha_nominal", "metric_uncertainty"]

Z95 = 1.959963984540054
"""The two-sided 95% normal quantile."""


def clustered_mean(clusters: Mapping[Any, Sequence[float]]) -> tuple[float, float | None]:
    """``(mean over every value, its cluster-robust standard error)``; the error is None under 2 clusters."""
    values = [v for group in clusters.values() for v in group]
    if not values:
        return 0.0, None
    n, mean = len(values), sum(values) / len(values)
    groups = [g for g in clusters.values() if g]
    if len(groups) < 2:
        return mean, None
    spread = sum(sum(v - mean for v in group) ** 2 for group in groups)
    return mean, math.sqrt(len(groups) / (len(groups) - 1) * spread) / n


def interval(estimate: float, se: float | None) -> list[float] | None:
    """The 95% interval ``estimate +- 1.96 se``, cut to [0, 1]; None without a standard error."""
    if se is None:
        return None
    return [max(0.0, estimate - Z95 * se), min(1.0, estimate + Z95 * se)]


def _entry(estimate: float | None, se: float | None, clusters: int) -> dict[str, Any]:
    """One estimate; None (no value, no interval) when no scenario was scored."""
    if estimate is None:
        return {"estimate": None, "se": None, "ci95": None, "scenarios": 0}
    return {"estimate": estimate, "se": se, "ci95": interval(estimate, se), "scenarios": clusters}


def _combined(parts: Iterable[tuple[float, float | None, int]]) -> dict[str, Any]:
    """The mean of independent estimates: its variance is the sum of theirs over k squared."""
    items = list(parts)
    if not items:
        return _entry(None, None, 0)
    estimate = sum(e for e, _, _ in items) / len(items)
    errors = [se for _, se, _ in items if se is not None]
    if len(errors) < len(items):
        return _entry(estimate, None, sum(c for _, _, c in items))
    return _entry(estimate, math.sqrt(sum(se**2 for se in errors)) / len(items), sum(c for _, _, c in items))


def metric_uncertainty(rows: Sequence[Mapping[str, Any]], credit: Any) -> dict[str, Any]:
    """Clustered standard errors and intervals of compliance, overall, each group and column.

    ``rows`` are the completed rows of one agent; ``credit(row)`` is a row's
    partial credit (the column score's unit).
    """
    passes: dict[str, list[float]] = defaultdict(list)
    by_column: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for row in rows:
        scenario = str(row.get("scenario_id"))
        passes[scenario].append(1.0 if row.get("all_passed") else 0.0)
        column = row.get("leaderboard_primary")
        if column:
            by_column[str(column)][scenario].append(float(credit(row)))
    compliance, compliance_se = clustered_mean(passes)
    columns: dict[str, dict[str, Any]] = {}
    parts: dict[str, tuple[float, float | None, int]] = {}
    for column, clusters in by_column.items():
        estimate, se = clustered_mean(clusters)
        parts[column] = (estimate, se, len(clusters))
        columns[column] = _entry(estimate, se, len(clusters))
    groups = {
        group: _combined(parts[c] for c in members if c in parts)
        for group, members in GROUPS.items()
        if any(c in parts for c in members)
    }
    return {
        "method": "cluster-robust standard errors by scenario; 95% intervals: estimate +- 1.96 se, cut to [0, 1]",
        "compliance": _entry(compliance if passes else None, compliance_se, len(passes)),
        "overall": _combined(parts.values()),
        "groups": groups,
        "columns": columns,
    }


def krippendorff_alpha_nominal(units: Sequence[Sequence[str]]) -> float | None:
    """Krippendorff's alpha for nominal answers: ``1 - D_o / D_e`` from the coincidence matrix.

    Each unit is one question's answers (two or more; units with fewer are not
    pairable and left out). None when the answers never vary at all (no expected
    disagreement to compare with).
    """
    coincidences: dict[tuple[str, str], float] = defaultdict(float)
    for unit in units:
        if len(unit) < 2:
            continue
        for i, first in enumerate(unit):
            for j, second in enumerate(unit):
                if i != j:
                    coincidences[(first, second)] += 1 / (len(unit) - 1)
    totals: dict[str, float] = defaultdict(float)
    for (first, _), weight in coincidences.items():
        totals[first] += weight
    n = sum(totals.values())
    if n <= 1:
        return None
    observed = sum(w for (a, b), w in coincidences.items() if a != b) / n
    expected = sum(totals[a] * totals[b] for a in totals for b in totals if a != b) / (n * (n - 1))
    return None if expected == 0 else 1 - observed / expected


def judge_reliability(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """Agreement of a judge asked several times per question (``--pibench-judge-votes``), or None."""
    units = [list(v["votes"]) for r in rows for v in r.get("judge_votes") or [] if len(v.get("votes") or []) > 1]
    if not units:
        return None
    split = sum(1 for unit in units if len(set(unit)) > 1)
    return {
        "questions": len(units),
        "votes_per_question": max(len(u) for u in units),
        "split_vote_share": split / len(units),
        "krippendorff_alpha": krippendorff_alpha_nominal(units),
    }
