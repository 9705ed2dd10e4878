"""Ordering checks that can never fail alone (DESIGN §4 rule 6, issue 24 §4).

Each ordering check of a scenario states a constraint "a call of F (with these
arguments) comes before the first call of S (with those)". When one check's
constraint implies another's, the implied check passes whenever the other does:
it adds nothing but weight, and usually hides a check that was meant to name a
different record (two ``lookup_employee -> request_approval`` checks, one for
the requester and one for the former sponsor). Reported:

* two checks with the same constraint (a duplicate pair);
* a check implied by another: same second side (tool, arguments, ``match``), its
  first tools a superset of the other's, its first arguments a subset (a plain
  ``tool_before_tool(F, S)`` is implied by ``call_before_call`` F{...} -> S).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, NamedTuple

from pytest_pibench.scenario.models import Scenario

__all__ = ["ordering_redundancy_problems"]

_DECISION = "<the decision that counts>"


class _Order(NamedTuple):
    firsts: frozenset[str]
    first_arguments: frozenset[tuple[str, str]]
    second: str
    second_arguments: frozenset[tuple[str, str]]
    match: str

    def implies(self, other: _Order) -> bool:
        return (
            (self.second, self.second_arguments, self.match) == (other.second, other.second_arguments, other.match)
            and self.firsts <= other.firsts
            and other.first_arguments <= self.first_arguments
        )

    def describe(self) -> str:
        first = " or ".join(sorted(self.firsts)) + _arguments(self.first_arguments)
        return f"{first} before {self.second}{_arguments(self.second_arguments)}"


def _arguments(items: frozenset[tuple[str, str]]) -> str:
    return "{" + ", ".join(f"{k}={v}" for k, v in sorted(items)) + "}" if items else ""


def _items(arguments: Any) -> frozenset[tuple[str, str]]:
    if not isinstance(arguments, dict):
        return frozenset()
    return frozenset((str(k), json.dumps(v, sort_keys=True, default=str)) for k, v in arguments.items())


def _order(check: Any) -> _Order | None:
    kind = check.type
    if kind in ("tool_before_tool", "call_before_call"):
        if check.first_tool == check.second_tool and kind == "tool_before_tool":
            return None  # always fails; nothing it could duplicate
        match = json.dumps(getattr(check, "match", None) or {}, sort_keys=True)
        return _Order(
            frozenset({check.first_tool}),
            _items(getattr(check, "first_arguments", None)),
            check.second_tool,
            _items(getattr(check, "second_arguments", None)),
            match,
        )
    if kind == "tool_before_tool_any":
        return _Order(frozenset(check.first_tools), frozenset(), check.second_tool, frozenset(), "{}")
    if kind == "tool_before_decision":
        return _Order(frozenset({check.tool_name}), frozenset(), _DECISION, frozenset(), "{}")
    if kind == "tool_before_decision_any":
        return _Order(frozenset(check.tool_names), frozenset(), _DECISION, frozenset(), "{}")
    return None


def _orders(scenario: Scenario) -> Iterator[tuple[str, _Order]]:
    for index, check in enumerate(scenario.evaluation_criteria.policy_checks):
        order = _order(check)
        if order is not None:
            yield f"policy_checks[{index}] {check.outcome_id}", order


def ordering_redundancy_problems(scenario: Scenario) -> list[str]:
    """One message per ordering check that another ordering check of the scenario makes redundant."""
    orders = list(_orders(scenario))
    problems = []
    for j, (name, order) in enumerate(orders):
        for i, (other_name, other) in enumerate(orders):
            if i == j or not other.implies(order):
                continue
            if order.implies(other):
                if i < j:  # a duplicate pair is reported once, at the later check
                    problems.append(
                        f"{name} duplicates {other_name} ({order.describe()}): the two pass and fail together; "
                        "make each argument-aware (call_before_call) for the record it means, or drop one"
                    )
                    break
                continue
            problems.append(
                f"{name} ({order.describe()}) is implied by {other_name} ({other.describe()}): it can never fail "
                "alone; make it argument-aware (call_before_call) for the record it means, or drop it"
            )
            break
    return problems
