"""Paired comparison of two agents on the same scenarios: differences, intervals, exact tests, a verdict.

Both agents ran the same scenarios, so every difference is paired by scenario
(trials of a scenario are averaged first: they are not independent). For each
metric, B minus A:

- full compliance: per-scenario pass-rate differences; the test is McNemar's
  exact test when every difference is 0 or +-1 (one trial each), otherwise an
  exact sign-flip permutation test (Monte Carlo with a fixed seed past 16
  non-zero differences);
- each capability column: per-scenario partial-credit differences in that
  column, the same sign-flip test; Holm's correction across the columns;
- each group and the overall score: means of column differences, the same test
  on the per-scenario contributions;
- pass^k for each k from 2 to the trials both agents ran on every paired
  scenario: per-scenario differences of ``C(c, k) / C(n, k)`` (the chance that k
  trials drawn from the scenario's n all pass), the same sign-flip test.

The mean difference comes with a 95% interval (1.96 paired standard errors),
and the verdict is ``better`` or ``worse`` when the (corrected) p-value is under
``alpha``, else ``not distinguishable`` at this sample size.
"""

from __future__ import annotations

import itertools
import math
import random
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pytest_pibench.results.uncertainty import Z95
from pytest_pibench.vocab import COLUMNS, GROUPS

__all__ = ["EXACT_LIMIT", "compare_rows", "holm", "mcnemar_exact", "sign_flip_p"]

EXACT_LIMIT = 16
"""Non-zero differences up to which the sign-flip test enumerates every sign pattern."""
_DRAWS = 20000


def mcnemar_exact(better: int, worse: int) -> float:
    """Two-sided exact McNemar p-value for ``better`` and ``worse`` discordant pairs."""
    n = better + worse
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, k) for k in range(min(better, worse) + 1)) / 2**n
    return float(min(1.0, 2 * tail))


def sign_flip_p(differences: Sequence[float], seed: int = 0) -> float:
    """Two-sided p-value of the paired sign-flip test of ``sum(differences) == 0``."""
    values = [d for d in differences if d != 0]
    if not values:
        return 1.0
    observed = abs(sum(values)) - 1e-12
    if len(values) <= EXACT_LIMIT:
        hits = sum(
            1 for signs in itertools.product((1, -1), repeat=len(values))
            if abs(sum(s * v for s, v in zip(signs, values, strict=True))) >= observed
        )  # fmt: skip
        return float(hits / 2 ** len(values))
    rng = random.Random(seed)
    hits = sum(1 for _ in range(_DRAWS) if abs(sum(v if rng.random() < 0.5 else -v for v in values)) >= observed)
    return (hits + 1) / (_DRAWS + 1)


def holm(p_values: Mapping[str, float]) -> dict[str, float]:
    """Holm's step-down adjusted p-values (monotone, capped at 1)."""
    ordered = sorted(p_values.items(), key=lambda item: item[1])
    adjusted: dict[str, float] = {}
    running = 0.0
    for rank, (name, p) in enumerate(ordered):
        running = max(running, min(1.0, (len(ordered) - rank) * p))
        adjusted[name] = running
    return adjusted


def _per_scenario(rows: Sequence[Mapping[str, Any]], value: Callable[[Mapping[str, Any]], float]) -> dict[str, float]:
    groups: dict[str, list[float]] = defaultdict(list)
    for row in rows:
        if row.get("status", "completed") == "completed":
            groups[str(row.get("scenario_id"))].append(value(row))
    return {sid: sum(v) / len(v) for sid, v in groups.items()}


def _test(differences: Sequence[float], weights: Sequence[float] | None = None, seed: int = 0) -> dict[str, Any]:
    weights = list(weights) if weights is not None else [1 / len(differences)] * len(differences)
    contributions = [w * d for w, d in zip(weights, differences, strict=True)]
    estimate = sum(contributions)
    unit = all(d in (-1.0, 0.0, 1.0) for d in differences) and len(set(weights)) == 1
    if unit:
        p = mcnemar_exact(sum(1 for d in differences if d > 0), sum(1 for d in differences if d < 0))
        test = "McNemar exact"
    else:
        p, test = sign_flip_p(contributions, seed), "sign-flip permutation"
    n = len(differences)
    se = None
    if n > 1:
        mean = sum(differences) / n
        spread = sum((d - mean) ** 2 for d in differences) / (n - 1)
        se = math.sqrt(sum(w * w for w in weights) * spread)
    interval = None if se is None else [estimate - Z95 * se, estimate + Z95 * se]
    return {"difference": estimate, "ci95": interval, "p": p, "test": test, "scenarios": n}


def _outcomes(rows: Sequence[Mapping[str, Any]]) -> dict[str, list[bool]]:
    groups: dict[str, list[bool]] = defaultdict(list)
    for row in rows:
        if row.get("status", "completed") == "completed":
            groups[str(row.get("scenario_id"))].append(bool(row.get("all_passed")))
    return groups


def _pass_hat_k_tests(
    rows_a: Sequence[Mapping[str, Any]], rows_b: Sequence[Mapping[str, Any]], paired: Sequence[str], seed: int
) -> dict[str, dict[str, Any]]:
    """``pass^k`` B minus A per paired scenario, for k = 2 .. the fewest trials of any paired scenario."""
    a, b = _outcomes(rows_a), _outcomes(rows_b)
    fewest = min(min(len(a[s]), len(b[s])) for s in paired)

    def hat(outcomes: list[bool], k: int) -> float:
        return math.comb(sum(outcomes), k) / math.comb(len(outcomes), k)

    return {
        f"pass^{k}": _test([hat(b[s], k) - hat(a[s], k) for s in paired], seed=seed) for k in range(2, fewest + 1)
    }


def _verdict(entry: dict[str, Any], alpha: float) -> dict[str, Any]:
    p = entry.get("p_adjusted", entry["p"])
    word = "not distinguishable" if p >= alpha else "better" if entry["difference"] > 0 else "worse"
    return {**entry, "verdict": word}


def compare_rows(
    rows_a: Sequence[Mapping[str, Any]],
    rows_b: Sequence[Mapping[str, Any]],
    credit: Callable[[Mapping[str, Any]], float],
    *,
    alpha: float = 0.05,
    seed: int = 0,
) -> dict[str, Any]:
    """B against A on the scenarios both completed: compliance, overall, groups, columns (Holm-corrected).

    Raises:
        ValueError: for rows of sequential trials (``trial_mode``), whose rates over rows are skewed by
            when each scenario settled.
    """
    if any(r.get("trial_mode") == "sequential" for r in [*rows_a, *rows_b]):
        raise ValueError(
            "rows of sequential trials (--pibench-trial-mode sequential) cannot be compared as rates: a scenario "
            "leaves as many rows as it took to settle; compare their K-of-N verdicts, or runs of fixed trials"
        )
    pass_a = _per_scenario(rows_a, lambda r: 1.0 if r.get("all_passed") else 0.0)
    pass_b = _per_scenario(rows_b, lambda r: 1.0 if r.get("all_passed") else 0.0)
    paired = sorted(set(pass_a) & set(pass_b))
    result: dict[str, Any] = {
        "alpha": alpha,
        "paired_scenarios": len(paired),
        "only_a": len(set(pass_a) - set(pass_b)),
        "only_b": len(set(pass_b) - set(pass_a)),
        "method": __doc__.split("\n\n")[1].replace("\n", " ") if __doc__ else "",
    }
    if not paired:
        return {**result, "metrics": {}}
    credit_a, credit_b = _per_scenario(rows_a, credit), _per_scenario(rows_b, credit)
    column_of = {str(r.get("scenario_id")): str(r.get("leaderboard_primary") or "") for r in [*rows_a, *rows_b]}
    metrics: dict[str, dict[str, Any]] = {
        "compliance": _test([pass_b[s] - pass_a[s] for s in paired], seed=seed),
    }
    members: dict[str, list[str]] = defaultdict(list)
    for sid in paired:
        if column_of.get(sid):
            members[column_of[sid]].append(sid)
    columns = {c: members[c] for c in COLUMNS if members.get(c)}
    column_tests = {c: _test([credit_b[s] - credit_a[s] for s in sids], seed=seed) for c, sids in columns.items()}
    for column, adjusted in holm({c: t["p"] for c, t in column_tests.items()}).items():
        column_tests[column]["p_adjusted"] = adjusted

    def combined(names: Sequence[str]) -> dict[str, Any]:
        sids = [s for c in names for s in columns[c]]
        weights = [1 / (len(columns[column_of[s]]) * len(names)) for s in sids]
        return _test([credit_b[s] - credit_a[s] for s in sids], weights, seed=seed)

    if columns:
        metrics["overall"] = combined(list(columns))
        for group, group_columns in GROUPS.items():
            present = [c for c in group_columns if c in columns]
            if present:
                metrics[group] = combined(present)
    metrics.update(column_tests)
    metrics.update(_pass_hat_k_tests(rows_a, rows_b, paired, seed))
    return {**result, "metrics": {name: _verdict(entry, alpha) for name, entry in metrics.items()}}
