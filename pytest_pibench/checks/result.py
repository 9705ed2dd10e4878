"""The outcome of one check, as reported in results (upstream's ``{outcome_id, type, passed, detail}``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pytest_pibench.bounds import DETAIL_LIMIT, bound_text

__all__ = ["CheckResult"]


@dataclass(frozen=True, slots=True)
class CheckResult:
    """One check's outcome. ``passed`` is None when the check was skipped (no judge).

    ``tier`` and ``dimension`` are what the check's type declares (see
    :class:`~pytest_pibench.checks.base.CheckType`).

    ``detail`` is bounded to :data:`DETAIL_LIMIT` characters (with a truncation
    marker), so a check over a runaway trace cannot flood the log.
    """

    outcome_id: str
    type: str
    passed: bool | None
    detail: str
    tier: int = 1
    dimension: str = "outcomes"

    def __post_init__(self) -> None:
        if isinstance(self.detail, str) and len(self.detail) > DETAIL_LIMIT:
            object.__setattr__(self, "detail", bound_text(self.detail, DETAIL_LIMIT))

    def to_dict(self) -> dict[str, Any]:
        return {"outcome_id": self.outcome_id, "type": self.type, "passed": self.passed, "detail": self.detail}
