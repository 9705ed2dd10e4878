"""The AgentBeats leaderboard artifact (upstream-evaluation.md §8.4) from result rows.

Each :class:`~pytest_pibench.results.types.ResultRow` becomes one entry of
``scenario_details``: upstream's keys (:class:`~pytest_pibench.results.types.ScenarioDetail`)
with upstream's defaults for missing ones, and none of ours.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Literal

from pytest_pibench.results.document import validity
from pytest_pibench.results.metrics import compute_metrics
from pytest_pibench.results.row_checks import row_checks, row_dimensions
from pytest_pibench.results.types import ResultRow, ResultsDocument
from pytest_pibench.vocab import BENCHMARK_VERSION, NORMAL_TERMINATIONS

__all__ = ["leaderboard_path", "run_artifacts", "to_leaderboard"]

_DETAIL_KEYS = (
    "scenario_id",
    "trial",
    "domain",
    "domain_name",
    "leaderboard_primary",
    "label",
    "status",
    "reward",
    "all_passed",
    "semantic_score",
    "canonical_decision",
    "decision_channel",
    "decision_valid",
    "decision_error",
    "event_flags",
)
"""Upstream's keys every ``scenario_details`` entry has (``ScenarioDetail``'s required keys), in order."""
_OptionalKey = Literal["benchmark_version", "error", "seed", "duration", "tool_calls", "dimensions"]
_OPTIONAL_KEYS: tuple[_OptionalKey, ...] = (
    "benchmark_version",
    "error",
    "seed",
    "duration",
    "tool_calls",
    "dimensions",
)
"""Upstream's keys an entry has only when the row's value is truthy (``outcome_checks`` is rebuilt apart)."""


def _reward(row: ResultRow) -> float:
    value = row.get("reward")
    if isinstance(value, int | float):
        return float(value)
    return 1.0 if row.get("all_passed") else 0.0


_NO_FLAGS = {"V_r": False, "UR_r": False, "OR_r": False, "EA_r": False, "AT_r": False}
_ERROR_STATUSES = ("error", "validation_error")


def _semantic_score(row: ResultRow) -> float | None:
    """The reference's ``semantic_score`` of a detail (upstream-evaluation.md §7.3, the leaderboard's Semantic column).

    An error row or an abnormal ending: 0.0. A scored row: its judged Tier-2 share;
    1.0 when the scenario has no Tier-2 check at all. A row whose Tier-2 checks went
    unjudged (no judge in the run) keeps None: nothing was measured.
    """
    reason = row.get("termination_reason")
    if row.get("status") != "completed" or (reason is not None and reason not in NORMAL_TERMINATIONS):
        return 0.0
    score = row.get("semantic_score")
    if isinstance(score, int | float):
        return float(score)
    if not any(c.get("tier") == 2 for c in row_checks(row)):
        return 1.0
    return None


def _detail(row: ResultRow, benchmark_version: str) -> dict[str, Any]:
    """The ``scenario_details`` entry of one row, with the reference's field semantics.

    ``semantic_score`` as :func:`_semantic_score`; an error row's event flags all
    false (nothing the agent did was scored); ``benchmark_version`` always there;
    outcome checks with upstream's empty ``dimension``.
    """
    defaults: dict[str, Any] = {"canonical_decision": "", "status": "unknown", "event_flags": {}}
    detail = {key: row.get(key, defaults.get(key)) for key in _DETAIL_KEYS}
    detail["reward"] = _reward(row)
    detail["semantic_score"] = _semantic_score(row)
    if row.get("status") in _ERROR_STATUSES:
        detail["event_flags"] = dict(_NO_FLAGS)
    detail["benchmark_version"] = row.get("benchmark_version") or benchmark_version
    for key in _OPTIONAL_KEYS:
        value = row_dimensions(row) if key == "dimensions" else row.get(key)
        if value and key != "benchmark_version":
            detail[key] = value
    checks = row.get("outcome_checks")
    if checks:
        detail["outcome_checks"] = [
            {
                "outcome_id": c.get("outcome_id"),
                "type": c.get("type"),
                "passed": c.get("passed"),
                "detail": c.get("detail"),
                "dimension": "",
            }
            for c in checks
        ]
    return detail


def to_leaderboard(
    rows: Iterable[ResultRow],
    *,
    agent_id: str = "agent",
    domain: str = "policy_compliance",
    time_used: float = 0.0,
    benchmark_version: str = BENCHMARK_VERSION,
) -> dict[str, Any]:
    """Build ``{"participants": ..., "results": [...]}`` from the rows of one agent.

    ``benchmark_version`` is the version of the scenario set the rows were run on
    (a row's own wins), stamped on every detail as the reference does.

    Rows are sorted by ``(scenario_id, trial)``; ``score`` sums rewards over
    every row (error rows count 0) and ``pass_rate`` is a percentage, as upstream.
    """
    ordered = sorted(rows, key=lambda r: (str(r.get("scenario_id", "")), int(r.get("trial") or 0)))
    rewards = [_reward(r) for r in ordered]
    counts = Counter(str(r.get("scenario_id")) for r in ordered)
    by_id: dict[str, float] = {}
    for row, reward in zip(ordered, rewards, strict=True):
        sid = str(row.get("scenario_id"))
        key = f"{sid}#trial_{int(row.get('trial') or 0)}" if counts[sid] > 1 else sid
        by_id[key] = reward
    label_breakdown: dict[str, dict[str, int]] = {}
    for row in ordered:
        entry = label_breakdown.setdefault(str(row.get("label") or ""), {"total": 0, "passed": 0})
        entry["total"] += 1
        entry["passed"] += int(bool(row.get("all_passed")))
    metrics = compute_metrics(ordered)
    score = sum(rewards)
    return {
        "participants": {"agent": agent_id},
        "results": [
            {
                "domain": domain,
                "score": score,
                "max_score": float(len(ordered)),
                "pass_rate": score / len(ordered) * 100 if ordered else 0.0,
                "time_used": time_used,
                "task_rewards": {str(i): r for i, r in enumerate(rewards)},
                "task_rewards_by_scenario_id": by_id,
                "metrics": metrics,
                "flag_summary": dict(metrics["event_flag_rates"]),
                "label_breakdown": label_breakdown,
                "scenario_details": [_detail(r, benchmark_version) for r in ordered],
            }
        ],
    }


def leaderboard_path(path: str | Path, agent: str, *, several: bool) -> Path:
    """Where an agent's artifact goes: ``path`` itself, or ``<stem>.<agent>.json`` when several agents ran."""
    target = Path(path)
    if not several:
        return target
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", agent).strip("_")
    return target.with_name(f"{target.stem}.{safe}{target.suffix}")


def run_artifacts(
    document: ResultsDocument,
    *,
    max_error_rate: float | None = None,
    agent_ids: Mapping[str, str] | None = None,
    domain: str = "policy_compliance",
) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """The leaderboard artifact of every agent of one run, and what keeps them from being published.

    Each artifact is :func:`to_leaderboard` of the agent's rows plus ``pibench_validity``
    (error budget, completeness, a lone shard). ``max_error_rate`` defaults to the
    run's own; ``agent_ids`` renames agents for ``participants`` (a leaderboard id
    instead of the agent spec) and defaults to the run's own (``settings.agent_ids``, which the
    green server records). ``pi report`` and the green server both publish this.
    """
    if agent_ids is None:
        recorded_ids = (document.get("settings") or {}).get("agent_ids")
        agent_ids = recorded_ids if isinstance(recorded_ids, Mapping) else None
    rows = list(document.get("rows") or [])
    wall = float(document.get("wall_time") or 0.0)
    if max_error_rate is None:
        recorded = document.get("validity")
        max_error_rate = float((recorded.get("max_error_rate") if recorded else None) or 0.0)
    complete = document.get("complete") is not False
    artifacts: dict[str, dict[str, Any]] = {}
    problems: list[str] = []
    for agent in dict.fromkeys(str(r.get("agent", "agent")) for r in rows):
        mine = [r for r in rows if r.get("agent", "agent") == agent]
        agent_id = (agent_ids or {}).get(agent, agent)
        version = str(document.get("benchmark_version") or BENCHMARK_VERSION)
        artifact = to_leaderboard(mine, agent_id=agent_id, domain=domain, time_used=round(wall, 3),
                                  benchmark_version=version)  # fmt: skip
        artifact["pibench_validity"] = validity(
            mine, max_error_rate=max_error_rate, complete=complete, ended_by=document.get("ended_by")
        )
        shard = document.get("shard")
        if shard:  # one shard alone is not the run
            artifact["pibench_validity"]["problems"].append(
                f"shard {shard['index']} of {shard['count']} only: merge every shard's results"
            )
            artifact["pibench_validity"]["valid"] = False
        problems += [p for p in artifact["pibench_validity"]["problems"] if p not in problems]
        artifacts[agent] = artifact
    return artifacts, problems
