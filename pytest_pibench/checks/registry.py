"""The check registry: every check type, built-in or third-party, by name.

The scenario schema (which ``type`` values each ``evaluation_criteria`` list
accepts and how each validates), dispatch (:func:`run_check`), the dimension
of each result type (:func:`dimension_of`) and the tool rules
(:mod:`pytest_pibench.checks.tool_roles`) all read this registry, so registering a
:class:`~pytest_pibench.checks.base.CheckType` is all it takes to add a check
type. A type registered after scenarios were loaded validates from then on
(no model is rebuilt).
"""

from __future__ import annotations

import typing
from collections.abc import Mapping
from typing import Any, TypeVar, get_args, get_origin

from pytest_pibench.checks.base import (
    DIMENSIONS,
    FAMILY_LISTS,
    CheckContext,
    CheckModel,
    CheckType,
    Dimension,
    Family,
    ToolRole,
)
from pytest_pibench.checks.result import CheckResult

__all__ = [
    "CheckDeclarationError",
    "check_type",
    "check_type_names",
    "check_types",
    "declaration_problems",
    "dimension_of",
    "register_check",
    "registry_version",
    "run_check",
    "unregister_check",
]

M = TypeVar("M", bound=CheckModel)

_TYPES: dict[str, CheckType[Any]] = {}
_version = [0]  # bumped on every change, so derived caches (the schema's validators) know to rebuild
_ROLES = frozenset(get_args(ToolRole))


class CheckDeclarationError(TypeError):
    """A :class:`CheckType` that is incomplete or inconsistent; ``problems`` says what is missing."""

    def __init__(self, name: str, problems: list[str]) -> None:
        self.problems = problems
        super().__init__(f"check type {name or '<unnamed>'!r} is declared incompletely: " + "; ".join(problems))


def register_check(declaration: CheckType[M]) -> CheckType[M]:
    """Add a check type, so scenarios may use it and :func:`run_check` evaluates it.

    Register at import time of your plugin or ``conftest.py`` (with pytest-xdist
    every worker imports it too). Returns the declaration, so a module can keep it::

        AT_MOST = register_check(CheckType(model=ToolCalledAtMostCheck, ...))

    Raises:
        CheckDeclarationError: when the declaration is incomplete (see :func:`declaration_problems`).
        ValueError: when a type of that name is already registered.
    """
    problems = declaration_problems(declaration)
    if problems:
        raise CheckDeclarationError(declaration.name, problems)
    if declaration.name in _TYPES:
        raise ValueError(f"check type {declaration.name!r} is already registered")
    _TYPES[declaration.name] = declaration
    _version[0] += 1
    return declaration


def unregister_check(name: str) -> CheckType[Any]:
    """Remove a registered check type and return its declaration (for tests and for replacing a type).

    Raises:
        KeyError: when no type of that name is registered.
    """
    declaration = _TYPES.pop(name)
    _version[0] += 1
    return declaration


def check_type(name: str) -> CheckType[Any] | None:
    """The declaration registered under ``name``, or None."""
    return _TYPES.get(name)


def check_types(family: Family | None = None) -> tuple[CheckType[Any], ...]:
    """Every registered declaration (of one family), in registration order."""
    return tuple(d for d in _TYPES.values() if family is None or d.family == family)


def check_type_names() -> tuple[str, ...]:
    """The name of every registered check type, in registration order."""
    return tuple(_TYPES)


def registry_version() -> int:
    """A number that changes whenever a type is registered or removed."""
    return _version[0]


def dimension_of(result_type: str) -> Dimension | None:
    """The dimension of a result of ``result_type``: the one its check type declares (None if none does)."""
    for declaration in _TYPES.values():
        if result_type in (declaration.name, declaration.reported_type):
            return declaration.dimension
    return None


def run_check(check: Any, context: CheckContext) -> CheckResult:
    """Evaluate one check with the evaluator registered for its ``type``; an unknown type fails."""
    kind = str(getattr(check, "type", type(check).__name__))
    outcome_id = str(getattr(check, "outcome_id", "unknown"))
    declaration = _TYPES.get(kind)
    if declaration is None or not isinstance(check, declaration.model):
        return CheckResult(outcome_id, kind, False, f"unknown check type: {kind}")
    passed, detail = declaration.evaluate(check, context)
    return CheckResult(outcome_id, declaration.reported_type, passed, detail, declaration.tier, declaration.dimension)


def declaration_problems(declaration: CheckType[Any]) -> list[str]:
    """Why ``declaration`` is incomplete: no model or ``type`` literal, no evaluator, an unknown
    dimension or family, or a tool-naming field without a role (empty when complete)."""
    problems: list[str] = []
    model = declaration.model
    if not (isinstance(model, type) and issubclass(model, CheckModel)):
        return ["model must be a subclass of CheckModel"]
    if not declaration.name:
        problems.append('model needs a field type: Literal["<name>"] with exactly one value')
    if not callable(declaration.evaluate):
        problems.append("evaluate must be a function (check, context) -> (passed, detail)")
    if declaration.dimension not in {key for key, _ in DIMENSIONS}:
        problems.append(f"dimension {declaration.dimension!r} is not one of {[k for k, _ in DIMENSIONS]}")
    if declaration.family not in FAMILY_LISTS:
        problems.append(f"family {declaration.family!r} is not one of {list(FAMILY_LISTS)}")
    if declaration.tier not in (1, 2):
        problems.append(f"tier must be 1 (deterministic, gating) or 2 (judged, reported), got {declaration.tier!r}")
    result_type = declaration.result_type
    if result_type is not None and not (isinstance(result_type, str) and result_type):
        problems.append("result_type must be a non-empty string or None")
    tools = declaration.tools
    if not isinstance(tools, Mapping):
        return [*problems, "tools must map each tool-naming field to its role ({} when none)"]
    fields = model.model_fields
    for name, role in tools.items():
        if name not in fields:
            problems.append(f"tools names {name!r}, which is not a field of {model.__name__}")
        elif not _holds_tool_names(fields[name].annotation):
            problems.append(f"field {name!r} must hold a tool name (str) or a list of them")
        if role not in _ROLES:
            problems.append(f"role {role!r} of {name!r} is not one of {sorted(_ROLES)}")
    for name in fields:
        if "tool" in name and name not in tools:
            problems.append(f"field {name!r} names a tool but has no role in tools")
    return problems


def _holds_tool_names(annotation: Any) -> bool:
    if annotation is str:
        return True
    if get_origin(annotation) is list:
        (item,) = get_args(annotation) or (None,)
        return item is str or (get_origin(item) is typing.Annotated and get_args(item)[0] is str)
    return False
