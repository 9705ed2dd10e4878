"""The ``decision_equals`` check: the canonical decision (:mod:`~pytest_pibench.checks.canonical_decision`)
against the label; the resolution is re-exported here, where it always was."""

from __future__ import annotations

from typing import Literal

from pytest_pibench.checks.base import CheckContext, CheckModel, CheckType, DecisionInfo, Outcome
from pytest_pibench.checks.canonical_decision import canonical_decision_index, resolve_decision
from pytest_pibench.checks.registry import register_check

__all__ = ["DecisionEqualsCheck", "DecisionInfo", "canonical_decision_index", "resolve_decision"]


class DecisionEqualsCheck(CheckModel):
    """Passes iff the canonical decision equals ``equals``."""

    type: Literal["decision_equals"]
    equals: str


def _decision_equals(check: DecisionEqualsCheck, context: CheckContext) -> Outcome:
    actual = context.decision.as_check_value
    why = f" ({context.decision.detail})" if context.decision.detail else ""
    return actual == check.equals, f"decision: expected={check.equals}, actual={actual}{why}"


register_check(CheckType(DecisionEqualsCheck, _decision_equals, dimension="decision", tools={}))
