"""Result rows: one builtins-only dict per (scenario, agent, trial), in upstream's ``scenario_details`` shape.

Rows are what crosses xdist, what the results file stores and what
:func:`compute_metrics` reads. Their keys and types are declared by
:class:`~pytest_pibench.results.types.ResultRow`; our extra keys
(``agent``, ``error_detail``, ``transcript``...) are ignored by upstream tooling.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from pytest_pibench.bounds import bound_row
from pytest_pibench.checks.result import CheckResult
from pytest_pibench.episode.loop import EpisodeResult
from pytest_pibench.evaluation import ScenarioResult
from pytest_pibench.results.types import (
    CheckEntry,
    ErrorDetail,
    EventFlags,
    LimitHit,
    ResultRow,
    Transcript,
)
from pytest_pibench.scenario.models import Scenario

__all__ = ["error_row", "scenario_row"]


_CAUSES = {"agent_error": "agent", "user_error": "user_simulator", "infra_error": "infrastructure"}
"""``failure_cause`` of a row by termination reason; only ``agent`` failures are scored."""


def _flags(flags: Mapping[str, bool]) -> EventFlags:
    return {
        "V_r": flags["V_r"],
        "UR_r": flags["UR_r"],
        "OR_r": flags["OR_r"],
        "EA_r": flags["EA_r"],
        "AT_r": flags["AT_r"],
    }


def _check_entry(result: CheckResult, notes: str | None = None) -> CheckEntry:
    entry: CheckEntry = {
        "outcome_id": result.outcome_id,
        "type": result.type,
        "passed": result.passed,
        "detail": result.detail,
        "tier": result.tier,
        "dimension": result.dimension,
    }
    if notes:
        entry["notes"] = notes
    return entry


def _check_notes(scenario: Scenario) -> dict[str, str]:
    """Each check's author note by outcome id (it cites the clause the check enforces)."""
    criteria = scenario.evaluation_criteria
    checks = [*criteria.policy_checks, *criteria.state_field_checks, *criteria.nl_judge_checks]
    return {str(c.outcome_id): str(notes) for c in checks if (notes := getattr(c, "notes", None))}


def scenario_row(
    scenario: Scenario,
    result: ScenarioResult,
    episode: EpisodeResult | None = None,
    *,
    trial: int = 0,
    agent: str = "agent",
    domain_name: str = "",
    include_transcript: bool = True,
) -> ResultRow:
    """The row of one evaluated episode.

    An episode the agent broke (``agent_error``: an exception, a malformed
    message, a hang past the timeout) is scored like any other, as upstream
    does: ``failure_cause`` says ``agent`` and ``error`` says why. An episode
    that something outside the agent broke (the user simulator, the model
    provider) is an ``error`` row: reward 0 and not compliant, whatever its
    checks said, and kept out of every rate (its checks stay for diagnosis).
    """
    status = episode.status if episode is not None else "completed"
    errored = status == "error"
    notes = _check_notes(scenario)
    row: ResultRow = {
        "scenario_id": scenario.scenario_id,
        "trial": trial,
        "agent": agent,
        "domain": scenario.meta.domain,
        "domain_name": domain_name,
        "leaderboard_primary": scenario.leaderboard.primary,
        "label": scenario.label,
        "status": status,
        "failure_cause": _CAUSES.get(result.termination_reason),
        "termination_reason": result.termination_reason,
        "reward": 0.0 if errored else result.reward,
        "all_passed": False if errored else result.all_passed,
        "semantic_score": result.semantic_score,
        "canonical_decision": result.decision.canonical_decision or "NONE",
        "decision_channel": result.decision.decision_channel,
        "decision_valid": result.decision.decision_valid,
        "decision_error": result.decision.decision_error,
        "decision_error_detail": result.decision.detail,
        # An error row scores nothing, so it flags nothing (as the reference's error rows).
        "event_flags": _flags({k: False for k in result.event_flags} if errored else result.event_flags),
        "outcome_checks": [_check_entry(r, notes.get(r.outcome_id)) for r in result.outcome_results],
    }
    if result.judge_votes:
        row["judge_votes"] = [dict(v) for v in result.judge_votes]
    if scenario.meta.variant is not None:
        row["pressure_style"] = scenario.meta.variant.style
        row["variant_of"] = scenario.meta.variant.base
    if episode is not None:
        row["seed"] = episode.seed
        row["duration"] = round(episode.duration, 6)
        row["step_count"] = episode.step_count
        row["tool_calls"] = [entry["tool_name"] for entry in episode.trace]
        row["error"] = _error_text(episode.error)
        row["error_detail"] = cast(ErrorDetail | None, episode.error)
        row["warnings"] = list(episode.warnings)
        row["limit_hit"] = None if episode.limit_hit is None else cast(LimitHit, dict(episode.limit_hit))
        if include_transcript:
            row["transcript"] = cast(Transcript, episode.transcript())
    # bounded for storage ("truncated" / "sanitized" set when something changed); scoring ran on everything before
    return cast(ResultRow, bound_row(cast(dict[str, Any], row)))


def _error_text(error: dict[str, str] | None) -> str | None:
    return None if error is None else error.get("message")


def error_row(
    scenario_id: str,
    message: str,
    *,
    scenario: Scenario | None = None,
    trial: int = 0,
    agent: str = "agent",
    domain_name: str = "",
    seed: int | None = None,
    traceback: str = "",
    cause: str = "harness",
    termination_reason: str = "runtime_error",
) -> ResultRow:
    """A row for an episode that could not run or be scored (bad scenario, crash, judge outage).

    ``cause`` says whose failure it was (``harness``, ``scenario``,
    ``infrastructure``, ``interrupted``...); never the agent's: agent failures are scored.
    """
    no_flags: EventFlags = {"V_r": False, "UR_r": False, "OR_r": False, "EA_r": False, "AT_r": False}
    row: ResultRow = {
        "scenario_id": scenario.scenario_id if scenario else scenario_id,
        "trial": trial,
        "agent": agent,
        "domain": scenario.meta.domain if scenario else "",
        "domain_name": domain_name,
        "leaderboard_primary": scenario.leaderboard.primary if scenario else "",
        "label": scenario.label if scenario else "",
        "status": "error",
        "failure_cause": cause,
        "termination_reason": termination_reason,
        "reward": 0.0,
        "all_passed": False,
        "semantic_score": None,
        "canonical_decision": "NONE",
        "decision_channel": None,
        "decision_valid": False,
        "decision_error": "ASSESSMENT_ERROR",
        "event_flags": no_flags,
        "outcome_checks": [],
        "seed": seed,
        "error": message,
        "error_detail": {"role": cause, "kind": "exception", "message": message, "traceback": traceback},
    }
    return cast(ResultRow, bound_row(cast(dict[str, Any], row)))  # a message can hold anything an exception said

