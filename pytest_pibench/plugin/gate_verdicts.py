"""What a gate's verdict becomes: the record the results file keeps, the run's exit status, and their words."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pytest_pibench.plugin.gates import ERROR_STATUSES, GateVerdict, keyed_rows, parse_baseline_spec, rows_of_baseline
from pytest_pibench.plugin.settings import (
    ERROR_BUDGET_EXIT_CODE,
    GATE_EXIT_CODE,
    INCONCLUSIVE_EXIT_CODE,
    Settings,
)
from pytest_pibench.results.types import ResultRow, ResultsDocument

__all__ = ["VERDICT_WORDS", "exit_status", "gate_record", "regressed_scenarios"]

VERDICT_WORDS = {
    "passed": "PASSED",
    "failed": "FAILED",
    "inconclusive": "INCONCLUSIVE: not a regression, not yet a pass",
}
"""How a gate's ``verdict`` (the results file's ``gate.verdict``) reads in ``pi gate``, the summary and the reports."""


def gate_record(
    settings: Settings, verdict: GateVerdict, rows: Sequence[ResultRow], baseline: ResultsDocument | None
) -> dict[str, Any]:
    """The gate's verdict as the results file keeps it (``"gate"``): what ``pi report --markdown`` shows.

    ``verdict`` is ``passed``, ``failed`` or ``inconclusive`` with the exit code it gives (the error
    budget, checked apart, can still make the run exit 9); ``regressed_scenarios`` lists each
    (agent, scenario) that passed fewer of its trials than in the baseline, on the trials both ran.
    """
    state = "failed" if not verdict.passed else "inconclusive" if verdict.inconclusive else "passed"
    code = {"failed": GATE_EXIT_CODE, "inconclusive": INCONCLUSIVE_EXIT_CODE, "passed": 0}[state]
    return {
        "verdict": state,
        "exit_code": code,
        "mode": settings.gate_mode if baseline is not None else None,
        "baseline": settings.baseline,
        "fail_under": [f"{g.metric}={g.value:g}" for g in settings.fail_under],
        "min_pass": None if settings.run.min_pass is None else "{}/{}".format(*settings.run.min_pass),
        "lines": list(verdict.lines),
        "regressed_scenarios": [] if baseline is None else regressed_scenarios(settings, rows, baseline),
    }


def regressed_scenarios(
    settings: Settings, rows: Sequence[ResultRow], baseline: ResultsDocument
) -> list[dict[str, Any]]:
    """Each (agent, scenario) that passed fewer trials now than in the baseline, over the trials both ran
    without an error row; the largest drops first."""
    _, named = parse_baseline_spec(settings.baseline or "")
    base_rows = rows_of_baseline(baseline)
    found: list[dict[str, Any]] = []
    for agent in dict.fromkeys(str(r.get("agent")) for r in rows):
        now, before = keyed_rows(rows, agent), keyed_rows(base_rows, named or agent)
        by_scenario: dict[str, list[int]] = {}
        for key in now.keys() & before.keys():
            if now[key].get("status") in ERROR_STATUSES or before[key].get("status") in ERROR_STATUSES:
                continue
            counts = by_scenario.setdefault(key[0], [0, 0, 0])
            counts[0] += bool(before[key].get("all_passed"))
            counts[1] += bool(now[key].get("all_passed"))
            counts[2] += 1
        found += [
            {"agent": agent, "scenario_id": sid, "passed_before": b, "passed_now": n, "trials": t}
            for sid, (b, n, t) in by_scenario.items()
            if n < b
        ]
    return sorted(found, key=lambda e: (e["passed_now"] - e["passed_before"], e["agent"], e["scenario_id"]))


def exit_status(exitstatus: int, verdict: GateVerdict | None, *, over_budget: bool, other_failures: int) -> int:
    """The run's exit status once the error budget and the gate have spoken (``exitstatus`` when they change nothing).

    The error budget comes first (9: the numbers are not valid, whatever the gate says), then a failed
    gate (8), an inconclusive one (10); with a gate that passed, failing scenarios alone do not fail
    the run (a benchmark rarely passes every scenario), but failures of other tests still do.
    """
    if over_budget:
        return ERROR_BUDGET_EXIT_CODE
    if verdict is None:
        return exitstatus
    if not verdict.passed:
        return GATE_EXIT_CODE
    if verdict.inconclusive:
        return INCONCLUSIVE_EXIT_CODE
    if exitstatus == 1 and not other_failures:  # pytest.ExitCode.TESTS_FAILED
        return 0
    return exitstatus
