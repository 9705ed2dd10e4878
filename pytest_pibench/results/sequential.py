"""Sequential trials: a scenario's trials stop once its K-of-N outcome is settled.

With ``--pibench-min-pass K/N --pibench-trial-mode sequential`` each (agent,
scenario) runs its N trials in order and stops as soon as the rest cannot
change its verdict (curtailed sampling):

- **met** once K trials passed (the rest cannot take a pass away);
- **not met** once more than N - K trials failed (K passes are out of reach).

The verdict is therefore exactly the one all N trials would give, with fewer
episodes. Error rows (failures outside the agent) are neither a pass nor a
failure: a scenario that runs out of trials unsettled reports ``unsettled``.

What it does not give is an unbiased pass rate over rows: a scenario that
settles early leaves fewer rows, and passing takes K trials to settle while
failing takes N - K + 1, so rates over rows (compliance, columns) weight
scenarios by the trials they needed. A sequential run is read by its verdicts;
its row rates are not comparable with a fixed-trial run's, and pass^k needs
every trial (it is not computed).
"""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["RULE", "SequentialTrials", "sequential_summary", "settled_verdict"]

RULE = (
    "curtailed K-of-N: a scenario's trials run in order and stop once K have passed (met) or more than N-K have "
    "failed (not met); the verdict equals the one all N trials would give; error rows count as neither"
)
_ERRORS = ("error", "validation_error")


def settled_verdict(passes: int, failures: int, needed: int, trials: int) -> str | None:
    """``"met"`` or ``"not met"`` once the K-of-N outcome can no longer change, else None."""
    if passes >= needed:
        return "met"
    if failures > trials - needed:
        return "not met"
    return None


def _outcome(row: Mapping[str, Any]) -> bool | None:
    """A row's trial outcome: passed, failed, or None for an error row (outside the agent)."""
    return None if row.get("status") in _ERRORS else bool(row.get("all_passed"))


class SequentialTrials:
    """The trial outcomes seen so far in this process, per (agent, scenario); thread-safe.

    Episodes finish on worker threads (``--pibench-concurrency``), so outcomes
    are recorded as they finish and read before the next trial starts.
    """

    def __init__(self, needed: int, trials: int) -> None:
        self.needed, self.trials = needed, trials
        self._seen: dict[tuple[str, str], dict[int, bool | None]] = defaultdict(dict)
        self._lock = threading.Lock()

    def record(self, agent: str, scenario: str, trial: int, row: Mapping[str, Any]) -> None:
        with self._lock:
            self._seen[(agent, scenario)][trial] = _outcome(row)

    def verdict(self, agent: str, scenario: str) -> str | None:
        """The settled verdict of (agent, scenario) from the trials recorded so far, or None."""
        with self._lock:
            outcomes = list(self._seen.get((agent, scenario), {}).values())
        return settled_verdict(outcomes.count(True), outcomes.count(False), self.needed, self.trials)

    def settled_reason(self, agent: str, scenario: str, trial: int) -> str | None:
        """Why ``trial`` need not run (its scenario is settled), or None when it must run."""
        with self._lock:
            outcomes = dict(self._seen.get((agent, scenario), {}))
        if trial in outcomes:
            return None
        values = list(outcomes.values())
        verdict = settled_verdict(values.count(True), values.count(False), self.needed, self.trials)
        if verdict is None:
            return None
        return (
            f"settled: {verdict} {self.needed}/{self.trials} after {len(values)} trials "
            f"({values.count(True)} passed, {values.count(False)} failed); trial {trial} not needed"
        )

    def earlier_recorded(self, agent: str, scenario: str, trial: int) -> bool:
        """Whether every trial before ``trial`` has an outcome here (so running it is not speculative)."""
        with self._lock:
            seen = self._seen.get((agent, scenario), {})
            return all(t in seen for t in range(trial))


def sequential_summary(
    rows: Iterable[Mapping[str, Any]], skipped: Iterable[Mapping[str, Any]], needed: int, trials: int
) -> dict[str, Any]:
    """The ``sequential`` block of the results: the rule, every scenario's verdict, the trials saved."""
    runs: dict[tuple[str, str], list[bool | None]] = defaultdict(list)
    for row in rows:
        runs[(str(row.get("agent")), str(row.get("scenario_id")))].append(_outcome(row))
    not_run: dict[tuple[str, str], int] = defaultdict(int)
    for entry in skipped:
        not_run[(str(entry.get("agent")), str(entry.get("scenario_id")))] += 1
    scenarios: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    counts = {"met": 0, "not met": 0, "unsettled": 0}
    by_agent: dict[str, dict[str, int]] = {}
    for agent, scenario in sorted(set(runs) | set(not_run)):
        outcomes = runs.get((agent, scenario), [])
        passes, failures = outcomes.count(True), outcomes.count(False)
        verdict = settled_verdict(passes, failures, needed, trials) or "unsettled"
        counts[verdict] += 1
        by_agent.setdefault(agent, dict.fromkeys(counts, 0))[verdict] += 1
        scenarios[agent][scenario] = {
            "run": len(outcomes),
            "passed": passes,
            "failed": failures,
            "errors": outcomes.count(None),
            "not_run": not_run.get((agent, scenario), 0),
            "verdict": verdict,
        }
    planned = sum(len(v) for v in scenarios.values()) * trials
    ran = sum(len(v) for v in runs.values())
    return {
        "rule": RULE,
        "min_pass": f"{needed}/{trials}",
        "trials_planned": planned,
        "trials_run": ran,
        "trials_saved": sum(not_run.values()),
        "verdicts": counts,
        "verdicts_by_agent": by_agent,
        "scenarios": dict(scenarios),
        "note": "rates over rows weight each scenario by the trials it needed: read the verdicts, and compare "
        "with fixed-trial runs only through them",
    }
