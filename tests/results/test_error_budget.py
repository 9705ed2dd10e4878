"""The error budget is read from the validity report's numbers, never from its problem text."""

from __future__ import annotations

from pytest_pibench.results.document import error_budget_exceeded, validity


def rows(agent: str, completed: int, errors: int) -> list[dict[str, object]]:
    return [{"agent": agent, "status": "completed"}] * completed + [{"agent": agent, "status": "error"}] * errors


def test_over_the_budget_for_one_agent_is_exceeded():
    report = validity(rows("a", 3, 1) + rows("b", 4, 0), max_error_rate=0.2)
    assert error_budget_exceeded(report) and not report["valid"]
    assert error_budget_exceeded(validity(rows("a", 3, 1), max_error_rate=0.25)) is False  # at the limit is allowed


def test_a_partial_run_whose_reason_mentions_error_rows_is_not_over_budget():
    report = validity(rows("a", 2, 0), max_error_rate=0.0, complete=False, ended_by="stopped early: 3 error rows")
    assert not report["valid"]  # invalid because partial...
    assert any("error rows" in problem for problem in report["problems"])  # ...with those words in its text...
    assert error_budget_exceeded(report) is False  # ...yet within the error budget
