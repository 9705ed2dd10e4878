"""What participants report spending, read between turns for the per-episode LLM budget.

A participant that calls a model reports its spend through ``usage()`` (a
mapping, or an object with ``to_dict()``, with ``cost_usd`` and
``unpriced_calls``; see :class:`~pytest_pibench.episode.protocols.AgentProtocol`).
Calls a model did not price cost nothing in the sum; they are counted beside
it, so a budget that could not see them says so.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Spend", "reported_spend"]


@dataclass
class Spend:
    """The sum of what some participants reported: dollars, unpriced calls, and reports that failed."""

    usd: float = 0.0
    unpriced_calls: int = 0
    problems: list[str] = field(default_factory=list)


def reported_spend(participants: Iterable[Any]) -> Spend:
    """What ``participants`` have spent so far; one whose ``usage()`` raises is noted, not fatal."""
    spend = Spend()
    for participant in participants:
        report = getattr(participant, "usage", None)
        if not callable(report):
            continue
        try:
            data = report()
            data = data.to_dict() if hasattr(data, "to_dict") else data
        except Exception as exc:  # bookkeeping: it must not end the episode
            spend.problems.append(f"usage() raised {type(exc).__name__}: {exc}")
            continue
        if isinstance(data, dict):
            spend.usd += float(data.get("cost_usd") or 0)
            spend.unpriced_calls += int(data.get("unpriced_calls") or 0)
    return spend
