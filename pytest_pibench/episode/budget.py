"""What participants report spending, read between turns for the per-episode LLM budget.

A participant that calls a model reports its spend through ``usage()`` (a
mapping, or an object with ``to_dict()``, with ``cost_usd`` and
``unpriced_calls``). Calls a model did not price cost nothing in the sum; they
are counted beside it, so a budget that could not see them says so. A report
is bookkeeping: one that raises, hangs past the episode's deadline or holds no
number is noted as a problem, never an ending.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from pytest_pibench.episode.caller import ParticipantRaised, is_builtin

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
    each reader decides what a broken report means for it. Everything that
    runs the participant's code (the look-up, the call, ``to_dict()``) runs
    inside ``call``.
    """

    def read() -> Any:
        report = getattr(participant, "usage", None)
        if not callable(report):
            return None
        data = report()
        return data.to_dict() if hasattr(data, "to_dict") else data

    return call(read)


def _amounts(data: Any) -> tuple[float, int]:
    """``(cost_usd, unpriced_calls)`` of a report, each a finite number (else ValueError: a budget cannot see NaN)."""
    usd, unpriced = float(data.get("cost_usd") or 0), float(data.get("unpriced_calls") or 0)
    if not (math.isfinite(usd) and math.isfinite(unpriced)):
        raise ValueError(f"cost_usd={usd!r}, unpriced_calls={unpriced!r} are not finite numbers")
    return usd, int(unpriced)


def reported_spend(participants: Iterable[Any], call: Callable[..., Any] = _call) -> Spend:
    """What ``participants`` have spent so far, each ``usage()`` read through ``call`` (e.g. with a deadline)."""
    spend = Spend()
    for participant in participants:
        if participant is None:
            continue
        builtin = is_builtin(participant)  # trusted: read without a thread hop

        def read(participant: Any = participant) -> tuple[float, int] | None:
            data = usage_report(participant)
            return _amounts(dict(data)) if isinstance(data, dict) else None

        try:
            amounts = call(read, direct=builtin) if builtin else call(read)
        except ParticipantRaised as exc:  # raised, or not a number: the budget cannot see this participant
            spend.problems.append(f"usage() could not be read ({exc.type_name}: {exc.text})")
            continue
        except Exception as exc:  # timed out (CallTimeout), or raised through a plain call
            spend.problems.append(f"usage() could not be read ({type(exc).__name__}: {exc})"[:2_000])
            continue
        if amounts is not None:
            spend.usd += amounts[0]
            spend.unpriced_calls += amounts[1]
    return spend
