"""The run's cost limit: LLM spend summed over rows as they finish, against ``RunConfig.cost_limit``.

One meter per run, on the process that sees every row: the executor's own
loop, or the plugin's controller (under xdist the workers' rows reach it).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

__all__ = ["CostMeter", "row_cost_usd"]


def row_cost_usd(row: Mapping[str, Any]) -> float:
    """What a row's participants spent, in US dollars (0 when they report nothing)."""
    usage = row.get("usage")
    if not isinstance(usage, Mapping):
        return 0.0
    return sum(float(u.get("cost_usd") or 0) for u in usage.values() if isinstance(u, Mapping))


class CostMeter:
    """Adds up what rows cost; says why to stop once the limit is reached (never with no limit)."""

    def __init__(self, limit: float | None) -> None:
        self.limit = limit
        self.spent_usd = 0.0
        self._lock = threading.Lock()

    def charge(self, row: Mapping[str, Any]) -> str | None:
        """Add ``row``'s cost; the reason to start no further episode, or None."""
        with self._lock:
            self.spent_usd += row_cost_usd(row)
            spent = self.spent_usd
        if self.limit is not None and spent >= self.limit:
            return f"cost limit reached: ${spent:.4f} of ${self.limit:g} spent"
        return None
