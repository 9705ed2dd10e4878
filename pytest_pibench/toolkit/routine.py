"""A domain's routine: the standard look-ups any agent makes first, and the generic action of each decision.

DESIGN §4 rule 8 asks that no *routine baseline* pass more than a third of the
scenarios of its own label: an agent that does the standard look-ups, then
takes one fixed decision with the action that decision usually implies, must
not score well. The ``baseline:routine-<decision>`` agents are that agent; a
domain pack describes its routine by defining ``ROUTINE`` in its ``tools.py``::

    from pytest_pibench.toolkit.routine import Routine, RoutineCall, RoutineRequest, RoutineResult

    def lookups(request: RoutineRequest) -> list[RoutineCall]:
        ids = re.findall(r"\\bIT-\\d+\\b", request.message)
        return [RoutineCall("lookup_item", {"item_id": i}) for i in dict.fromkeys(ids)]

    def action(decision: str, request: RoutineRequest, results: list[RoutineResult]) -> list[RoutineCall]:
        ...  # e.g. ESCALATE -> [RoutineCall("escalate", {...})]

    ROUTINE = Routine(lookups=lookups, action=action)

Both functions see only what an agent sees: the public context blocks of the
task (customer, account, employee), the user's first message and, for
``action``, the results of the look-ups. They must be deterministic. Calls to
tools a scenario does not expose are skipped by the agent, so a routine may
name every tool of its domain. ``record_decision`` is not part of the
routine: the agent records the decision itself, after the action.

This module sits in the toolkit (the bottom layer): it imports nothing else
from ``pytest_pibench``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Routine", "RoutineAction", "RoutineCall", "RoutineLookups", "RoutineRequest", "RoutineResult"]


@dataclass(frozen=True)
class RoutineRequest:
    """What an agent knows before its first tool call: the user's first message and the public context blocks."""

    message: str
    customer: Mapping[str, Any] = field(default_factory=dict)
    account: Mapping[str, Any] = field(default_factory=dict)
    employee: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class RoutineCall:
    """One tool call of a routine."""

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class RoutineResult:
    """A look-up and what it returned: the decoded JSON result, or the error text when ``error``."""

    call: RoutineCall
    value: Any
    error: bool = False


RoutineLookups = Callable[[RoutineRequest], list[RoutineCall]]
"""The standard look-ups of a request, in order."""

RoutineAction = Callable[[str, RoutineRequest, list[RoutineResult]], list[RoutineCall]]
"""The generic action a decision implies (``[]`` for none), given the request and the look-ups' results."""


@dataclass(frozen=True)
class Routine:
    """A domain's routine (see the module docstring): ``ROUTINE = Routine(lookups=..., action=...)`` in ``tools.py``."""

    lookups: RoutineLookups
    action: RoutineAction
