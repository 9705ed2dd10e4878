"""What participants report spending, read between turns for the per-episode LLM budget.

A participant that calls a model reports its spend through ``usage()`` (a
mapping, or an object with ``to_dict()``, with ``cost_usd`` and
``unpriced_calls``). Calls a model did not price cost nothing in the sum; they
are counted beside it, so a budget that could not see them says so. A report
is bookkeeping: one that raises, hangs past the episode's deadline or holds no
number is noted as a problem, never an ending.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Spend", "reported_spend", "usage_report"]


@dataclass
class Spend:
    """The sum of what some participants reported: dollars, unpriced calls, and reports that failed."""

    usd: float = 0.0
    unpriced_calls: int = 0
    problems: list[str] = field(default_factory=list)

    def since(self, start: Spend) -> Spend:
        """What was spent after ``start`` (a participant reused across episodes reports its whole life)."""
        return Spend(self.usd - start.usd, self.unpriced_calls - start.unpriced_calls, self.problems)


def _call(fn: Callable[[], Any]) -> Any:
    return fn()


def usage_report(participant: Any, call: Callable[[Callable[[], Any]], Any] = _call) -> Any:
    """What ``participant.usage()`` returns, as a mapping when it has ``to_dict()``; None without ``usage()``.

    The one place a participant's report is read (the budget between turns, the
    row after the episode). Raises whatever ``usage()`` (or ``call``) raises:
    each reader decides what a broken report means for it.
    """
    report = getattr(participant, "usage", None)
    if not callable(report):
        return None
    data = call(report)
    return data.to_dict() if hasattr(data, "to_dict") else data


def reported_spend(participants: Iterable[Any], call: Callable[[Callable[[], Any]], Any] = _call) -> Spend:
    """What ``participants`` have spent so far, each ``usage()`` run through ``call`` (e.g. with a deadline)."""
    spend = Spend()
    for participant in participants:
        try:
            data = usage_report(participant, call)
            if isinstance(data, dict):
                usd, unpriced = float(data.get("cost_usd") or 0), int(data.get("unpriced_calls") or 0)
                spend.usd += usd
                spend.unpriced_calls += unpriced
        except Exception as exc:  # raised, timed out, or not a number: the budget cannot see this participant
            spend.problems.append(f"usage() could not be read ({type(exc).__name__}: {exc})")
    return spend
