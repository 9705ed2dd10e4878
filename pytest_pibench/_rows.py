"""Result rows: one builtins-only dict per (scenario, agent, trial), in upstream's ``scenario_details`` shape.

Rows are what crosses xdist, what the results file stores and what
:func:`compute_metrics` reads. Our extra keys (``agent``, ``error``,
``messages``...) are ignored by upstream tooling.
"""

from __future__ import annotations

from typing import Any

from ._episode import EpisodeResult
from ._evaluation import ScenarioResult
from ._schema import Scenario

__all__ = ["error_row", "scenario_row"]

_NO_FLAGS = {"V_r": False, "UR_r": False, "OR_r": False, "EA_r": False, "AT_r": False}


def _base(scenario: Scenario | None, scenario_id: str, trial: int, agent: str, domain_name: str) -> dict[str, Any]:
    return {
        "scenario_id": scenario.scenario_id if scenario else scenario_id,
        "trial": trial,
        "agent": agent,
        "domain": scenario.meta.domain if scenario else "",
        "domain_name": domain_name,
        "leaderboard_primary": scenario.leaderboard.primary if scenario else "",
        "label": scenario.label if scenario else "",
    }


def scenario_row(
    scenario: Scenario,
    result: ScenarioResult,
    episode: EpisodeResult | None = None,
    *,
    trial: int = 0,
    agent: str = "agent",
    domain_name: str = "",
    include_transcript: bool = True,
) -> dict[str, Any]:
    """The row of one evaluated episode.

    An episode that ended in an agent/user error or a timeout is an ``error``
    row: reward 0 and not compliant, whatever its checks said, and kept out of
    compliance denominators (its checks stay in the row for diagnosis).
    """
    status = episode.status if episode is not None else "completed"
    errored = status == "error"
    row = _base(scenario, scenario.scenario_id, trial, agent, domain_name)
    row.update(
        status=status,
        termination_reason=result.termination_reason,
        reward=0.0 if errored else result.reward,
        all_passed=False if errored else result.all_passed,
        semantic_score=result.semantic_score,
        canonical_decision=result.decision.canonical_decision or "NONE",
        decision_channel=result.decision.decision_channel,
        decision_valid=result.decision.decision_valid,
        decision_error=result.decision.decision_error,
        event_flags=dict(result.event_flags),
        dimensions=result.dimensions(),
        outcome_checks=[{**r.to_dict(), "tier": r.tier} for r in result.outcome_results],
    )
    if episode is not None:
        row.update(
            seed=episode.seed,
            duration=round(episode.duration, 6),
            step_count=episode.step_count,
            tool_calls=[entry["tool_name"] for entry in episode.trace],
            error=_error_text(episode.error),
            error_detail=episode.error,
            warnings=list(episode.warnings),
        )
        if include_transcript:
            row["transcript"] = episode.transcript()
    return row


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
) -> dict[str, Any]:
    """A row for an episode that could not run at all (bad scenario, domain, agent spec, crash)."""
    row = _base(scenario, scenario_id, trial, agent, domain_name)
    row.update(
        status="error",
        termination_reason="runtime_error",
        reward=0.0,
        all_passed=False,
        semantic_score=0.0,
        canonical_decision="NONE",
        decision_channel=None,
        decision_valid=False,
        decision_error="ASSESSMENT_ERROR",
        event_flags=dict(_NO_FLAGS),
        dimensions={},
        outcome_checks=[],
        seed=seed,
        error=message,
        error_detail={"role": "harness", "kind": "exception", "message": message, "traceback": traceback},
    )
    return row
