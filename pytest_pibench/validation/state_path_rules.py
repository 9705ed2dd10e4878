"""Rule ``state-path`` (issue 24 §4): a ``state_field`` filter that can select several records says which count.

A ``collection[key=value]`` filter with the default ``"matches": "first"`` judges only the first
record it finds. Where the agent's actions add records to that collection (a refund, an escalation, a
ticket), an agent that adds two for one key (a double refund) is judged on whichever comes first: a
false pass, or a verdict that depends on call order. So a filter whose collection grows during the
gold trajectory, or that selects more than one record in the initial or the gold's final state, must
say ``"matches": "one"`` (a duplicate fails) or ``"all"`` (every match must hold the value).
Upstream-format packs keep upstream's first-match semantics; the rule is about our scenario files.
"""

from __future__ import annotations

from typing import Any

from pytest_pibench.checks.state import BRACKET_SEGMENT, StateFieldCheck, resolve_all
from pytest_pibench.scenario.models import Scenario

__all__ = ["state_path_problems"]


def _filters(path: str) -> list[tuple[str, str]]:
    """Each filter segment of ``path``: (the path to its collection, the segment)."""
    out: list[tuple[str, str]] = []
    before: list[str] = []
    for segment in path.split("."):
        match = BRACKET_SEGMENT.match(segment)
        if match:
            out.append((".".join([*before, match.group(1)]), segment))
        before.append(segment)
    return out


def _sizes(state: dict[str, Any], collection_path: str) -> int:
    """How many records the collection(s) at ``collection_path`` hold (filters before it fan out)."""
    lists, _ = resolve_all(state, collection_path)
    return sum(len(items) for items in lists if isinstance(items, list))


def state_path_problems(scenario: Scenario, initial: dict[str, Any], final: dict[str, Any]) -> list[str]:
    """The ``state_field`` checks whose first-match filter can select more than one record."""
    problems = []
    for check in scenario.evaluation_criteria.state_field_checks:
        if not isinstance(check, StateFieldCheck) or check.matches != "first":
            continue
        for collection, segment in _filters(check.field_path):
            grows = _sizes(final, collection) > _sizes(initial, collection)
            prefix = check.field_path.split(segment)[0] + segment
            several = max(resolve_all(initial, prefix)[1], resolve_all(final, prefix)[1]) > 1
            if grows or several:
                why = "the gold trajectory adds records to it" if grows else "several records match it"
                problems.append(
                    f"{check.outcome_id}: {check.field_path}: filter {segment} judges only the first match, and "
                    f"{why}; say \"matches\": \"one\" (a duplicate fails) or \"all\" (every match must hold)"
                )
                break
    return problems
