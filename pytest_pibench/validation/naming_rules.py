"""Neutral names (issue 24 §4, DESIGN §4 rule 4): a scenario's id and file name never state its outcome.

Agents get an opaque task id (a hash of the scenario id), but people do not: a human player or a
reviewer handed a scenario, and anyone reading a report or a ``-k`` selection, sees its id and file
name, and a name such as ``..._approval_missing`` or ``..._exactly_750`` hands them the deciding fact
(and would reach any agent driver that passes ids through). A name says what the customer asks for
(``ret_040_kitchen_order_return``). The rule is a vocabulary check: the words below name a decision,
a verdict on a condition, or the trap itself. It cannot prove a name neutral (``..._41_days_old``
passes it), so reviewers still read names, but it catches the usual ways a name gives the answer away.
"""

from __future__ import annotations

import re

from pytest_pibench.scenario.models import Scenario

__all__ = ["OUTCOME_WORDS", "naming_problems"]

OUTCOME_WORDS: tuple[str, ...] = (
    # decisions and their synonyms
    "allow", "allowed", "deny", "denied", "denial", "escalate", "escalated", "escalation", "conditional",
    "approved", "rejected", "refused", "declined", "blocked",
    # verdicts on a condition the agent must establish
    "missing", "lapsed", "expired", "exceeds", "exceeded", "over_limit", "under_limit", "unverified", "verified",
    "ineligible", "eligible", "exactly", "met", "not_met", "too_late", "too_early", "policy_gap", "invalid",
    "forged", "fake", "stale", "fraud", "fraudulent", "structuring", "trap", "loophole",
)  # fmt: skip
"""Words (whole ``_``-separated words, case-insensitive) a scenario id or file stem must not contain."""

_WORDS = sorted(OUTCOME_WORDS, key=len, reverse=True)
_PATTERN = re.compile(r"(?:^|_)(" + "|".join(re.escape(w) for w in _WORDS) + r")(?=_|$)", re.IGNORECASE)


def _outcome_words(name: str) -> list[str]:
    return sorted({match.group(1).lower() for match in _PATTERN.finditer(name.replace("-", "_"))})


def naming_problems(scenario: Scenario) -> list[str]:
    """The id or file name words that state the outcome (one message per name)."""
    names = [("meta.scenario_id", scenario.scenario_id)]
    if scenario.source_path is not None:
        names.append(("file name", scenario.source_path.stem))
    messages = []
    for where, name in names:
        words = _outcome_words(name)
        if words:
            messages.append(
                f"{where} {name!r} states the outcome ({', '.join(words)}): players, reviewers and reports see it; "
                "name what the customer asks for instead"
            )
    return messages
