"""What each participant of one episode spent, read from its own ``usage()`` report without trusting it."""

from __future__ import annotations

import math
from typing import Any, cast

from pytest_pibench.episode.budget import usage_report
from pytest_pibench.episode.caller import CallTimeout, ParticipantCaller, ParticipantRaised, is_builtin
from pytest_pibench.episode.reply import plain_copy
from pytest_pibench.results.types import ResultRow, UsageReport

__all__ = ["spent_before", "with_usage"]


def spent_before(caller: ParticipantCaller, agent: Any, user: Any, judge: Any) -> dict[str, UsageReport]:
    """What the reused participants given (the others are None) reported before the episode."""
    out: dict[str, UsageReport] = {}
    for role, participant in (("agent", agent), ("user", user), ("judge", judge)):
        spent = _usage(participant, caller)[0]
        if spent and any(spent.values()):
            out[role] = spent
    return out


def with_usage(
    row: ResultRow,
    caller: ParticipantCaller,
    agent: Any,
    user: Any,
    judge: Any,
    before: dict[str, UsageReport] | None = None,
) -> ResultRow:
    """The row with what each participant spent in this episode (``usage``, by role)."""
    usage: dict[str, UsageReport] = {}
    for role, participant in (("agent", agent), ("user", user), ("judge", judge)):
        spent, problem = _usage(participant, caller)
        earlier: dict[str, Any] = dict((before or {}).get(role) or {})
        if spent and earlier:
            spent = cast(UsageReport, {k: round(v - earlier.get(k, 0), 10) for k, v in spent.items()})
        if spent:
            usage[role] = spent
        if problem:
            row.setdefault("warnings", []).append(f"{role}.{problem}")
    if usage:
        row["usage"] = usage
    return row


def _usage(participant: Any, caller: ParticipantCaller) -> tuple[UsageReport | None, str | None]:
    """What an LLM-backed participant spent (``participant.usage()``), if it reports it, and what was wrong.

    The report is the participant's own code: run through ``caller`` with 5
    seconds to answer, and one that raises, hangs or holds values that are not
    finite numbers must not cost the scored row, so only finite numeric entries
    are kept and the rest is named in the row's warnings.
    """
    if participant is None:
        return None, None
    builtin = is_builtin(participant)  # trusted: read without a thread hop
    try:
        report: tuple[UsageReport | None, str | None] = caller(_read_usage, participant, limit=5.0, direct=builtin)
    except CallTimeout:
        return None, "usage() did not return within 5 seconds"
    except ParticipantRaised as exc:
        return None, f"usage() raised {exc.type_name}: {exc.text}"
    return report


def _read_usage(participant: Any) -> tuple[UsageReport | None, str | None]:
    data, _ = plain_copy(usage_report(participant))  # a plain copy: the report's own methods never run again
    if data is None:
        return None, None
    if not isinstance(data, dict):
        return None, f"usage() returned {type(data).__name__}, not a mapping"
    kept = {k: v for k, v in data.items() if type(v) in (int, float) and math.isfinite(v)}
    dropped = sorted(str(k)[:100] for k in data if k not in kept)
    problem = f"usage() entries that are not finite numbers were left out: {', '.join(dropped)}" if dropped else None
    return cast(UsageReport, kept), problem
