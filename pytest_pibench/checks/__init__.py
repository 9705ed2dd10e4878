"""The checks: a registry with one declaration per check type, and the built-in types.

Each check type is one :class:`CheckType` (its model, evaluator, dimension,
family and tool roles) registered with :func:`register_check`; the scenario
schema, dispatch, dimensions and tool rules are derived from the registry.
Built-in types live one family per module (``trace``, ``ordering``, ``decision``, ``text``,
``state``, ``judge``; ``legacy`` holds upstream's keyless families) and are
registered when this package is imported. Third-party types register the same
way; see :class:`CheckType` for an example.
"""

from __future__ import annotations

from pytest_pibench.checks.base import (
    DIMENSIONS,
    CheckContext,
    CheckModel,
    CheckType,
    DecisionInfo,
    Dimension,
    Family,
    Outcome,
    ToolRole,
)
from pytest_pibench.checks.registry import (
    CheckDeclarationError,
    check_type,
    check_type_names,
    check_types,
    register_check,
    run_check,
    unregister_check,
)
from pytest_pibench.checks.result import CheckResult

# isort: off
# The built-in declarations, imported for their registration, in the order `pi schema` lists them.
from pytest_pibench.checks import trace, ordering, decision, text, state, judge  # noqa: F401
# isort: on

__all__ = [
    "DIMENSIONS",
    "CheckContext",
    "CheckDeclarationError",
    "CheckModel",
    "CheckResult",
    "CheckType",
    "DecisionInfo",
    "Dimension",
    "Family",
    "Outcome",
    "ToolRole",
    "check_type",
    "check_type_names",
    "check_types",
    "register_check",
    "run_check",
    "unregister_check",
]
