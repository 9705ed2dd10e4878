"""Planning trials: how many scenarios or trials a paired comparison needs to detect a difference.

From one run's rows (the agent's full-pass outcomes by scenario and trial) the
variance splits in two: between scenarios (``sb2``, some scenarios are hard) and
within a scenario across trials (``sw2``, the agent's noise; from the trials'
sample variance, 0 with one trial each). A paired comparison of two agents like
this one averages T trials per scenario over G scenarios; its difference has
variance ``2 * (sb2 + sw2 / T) / G`` (two independent runs: no correlation is
assumed, which errs on the side of more data). It detects a difference D with
power P at two-sided level alpha when

    (z_{1 - alpha/2} + z_P) * sqrt(2 * (sb2 + sw2 / T) / G) <= D.

When every outcome was alike (an agent that passes or fails everything) no
variance was seen; the plan then assumes the Bernoulli variance of the rate
smoothed by half an outcome (``(k + 0.5) / (n + 1)``), all of it between
scenarios, which errs on the side of more data.

So for the present G the trials needed are the smallest T that satisfies it
(none, when the between-scenario part alone is too large: more scenarios are
the only way), and for the present T the scenarios needed are the smallest G.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from statistics import NormalDist
from typing import Any

__all__ = ["MAX_TRIALS", "plan_trials", "variance_components"]

MAX_TRIALS = 1000
"""Past this many trials per scenario the plan says more trials cannot do it."""


def variance_components(rows: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """``{"sb2", "sw2", "scenarios", "trials", "rate"}`` of the full-pass outcomes of completed rows."""
    outcomes: dict[str, list[float]] = defaultdict(list)
    for row in rows:
        if row.get("status", "completed") == "completed":
            outcomes[str(row.get("scenario_id"))].append(1.0 if row.get("all_passed") else 0.0)
    groups = [v for v in outcomes.values() if v]
    if len(groups) < 2:
        raise ValueError("planning needs completed rows of at least 2 scenarios")
    trials = sum(len(v) for v in groups) / len(groups)
    within = [sum((x - sum(v) / len(v)) ** 2 for x in v) / (len(v) - 1) for v in groups if len(v) > 1]
    sw2 = sum(within) / len(within) if within else 0.0
    means = [sum(v) / len(v) for v in groups]
    grand = sum(means) / len(means)
    spread = sum((m - grand) ** 2 for m in means) / (len(means) - 1)  # var of scenario means = sb2 + sw2/T
    sb2 = max(0.0, spread - sw2 / trials)
    if sb2 + sw2 == 0:  # every outcome alike: no variance seen, which says nothing about another agent's
        rows_seen = sum(len(v) for v in groups)
        smoothed = (sum(sum(v) for v in groups) + 0.5) / (rows_seen + 1)
        sb2 = smoothed * (1 - smoothed)  # a Bernoulli variance near the observed rate, all of it between scenarios
    return {"sb2": sb2, "sw2": sw2, "scenarios": float(len(groups)), "trials": trials, "rate": grand}


def plan_trials(
    rows: Sequence[Mapping[str, Any]], difference: float, *, power: float = 0.8, alpha: float = 0.05
) -> dict[str, Any]:
    """Trials (at the present scenario count) and scenarios (at the present trials) to detect ``difference``."""
    if not 0 < difference <= 1:
        raise ValueError(f"the difference to detect is a share of scenarios in (0, 1], got {difference}")
    if not 0.5 <= power < 1 or not 0 < alpha < 0.5:
        raise ValueError("power must be in [0.5, 1) and alpha in (0, 0.5)")
    parts = variance_components(rows)
    z = NormalDist().inv_cdf(1 - alpha / 2) + NormalDist().inv_cdf(power)
    budget = (difference / z) ** 2  # the largest variance of the difference that still detects it
    scenarios, trials = int(parts["scenarios"]), parts["trials"]
    sb2, sw2 = parts["sb2"], parts["sw2"]

    def variance(g: float, t: float) -> float:
        return 2 * (sb2 + sw2 / t) / g

    needed_trials: int | None = None
    if 2 * sb2 / scenarios < budget:
        needed_trials = 1 if sw2 == 0 else max(1, math.ceil(sw2 / (budget * scenarios / 2 - sb2)))
        if needed_trials > MAX_TRIALS:
            needed_trials = None
    needed_scenarios = max(2, math.ceil(variance(1, trials) / budget))
    return {
        "difference": difference,
        "power": power,
        "alpha": alpha,
        "observed": {k: round(v, 6) for k, v in parts.items()},
        "standard_error_now": math.sqrt(variance(scenarios, trials)),
        "trials_needed": needed_trials,
        "scenarios_needed": needed_scenarios,
        "method": (__doc__ or "").split("\n\n")[1].replace("\n", " "),
    }
