"""What one episode produced: the messages, the trace, the final state and how it ended."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["ERROR_TERMINATIONS", "EpisodeResult"]

ERROR_TERMINATIONS = frozenset({"user_error", "infra_error"})
"""Endings caused outside the agent: the episode is an error row (kept out of every rate)."""


@dataclass
class EpisodeResult:
    """What happened in one episode. ``transcript()`` is what :func:`evaluate` scores."""

    scenario_id: str
    termination_reason: str
    messages: list[dict[str, Any]]
    trace: list[dict[str, Any]]
    final_state: dict[str, Any]
    step_count: int
    duration: float
    seed: int | None = None
    error: dict[str, str] | None = None
    warnings: list[str] = field(default_factory=list)
    limit_hit: dict[str, Any] | None = None
    """Which limit ended the episode: for ``tool_call_limit``, ``limit`` (the option's name),
    ``value``, ``requested`` (calls asked for), ``executed`` and ``role``; for ``cost_limit``,
    ``limit`` (``episode_cost_limit``), ``value`` and ``spent_usd``, ``unpriced_calls`` and
    ``role`` (whose turn reached it); else None."""
    state_changes: list[dict[str, Any]] = field(default_factory=list)
    """What the episode changed in the database (:func:`~pytest_pibench.statediff.state_changes`)."""

    @property
    def status(self) -> str:
        """``error`` when something outside the agent failed (user simulator, provider), else ``completed``."""
        return "error" if self.termination_reason in ERROR_TERMINATIONS else "completed"

    def transcript(self) -> dict[str, Any]:
        return {
            "messages": self.messages,
            "trace": self.trace,
            "final_state": self.final_state,
            "state_changes": self.state_changes,
            "termination_reason": self.termination_reason,
        }

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "status": self.status}
