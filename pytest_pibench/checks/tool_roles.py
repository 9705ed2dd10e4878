"""What checks say about tools, read from each type's declared tool roles.

Binding refuses a scenario whose checks name tools its domain lacks, loading
applies upstream's required/forbidden/ordering rules, and the validator reports
unexposed tools and contradictory orderings: all of them through these helpers,
so a new check type gets every rule by declaring its ``tools``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from pytest_pibench.checks.base import ToolRole
from pytest_pibench.checks.registry import check_type

__all__ = ["ToolRef", "ordered_pairs", "tool_consistency_problems", "tool_refs", "tools_named_by", "tools_with_role"]


class ToolRef(NamedTuple):
    """One tool-naming field of a check: its role and the tool(s) it names."""

    field: str
    role: ToolRole
    tools: tuple[str, ...]
    many: bool
    """The field holds a list (``tool_names``, ``first_tools``) rather than one name."""


def tool_refs(check: Any) -> list[ToolRef]:
    """The tool-naming fields of ``check``, in declaration order (none for an unregistered type)."""
    declaration = check_type(str(getattr(check, "type", "")))
    if declaration is None:
        return []
    refs = []
    for field, role in declaration.tools.items():
        value = getattr(check, field, None)
        if isinstance(value, str):
            refs.append(ToolRef(field, role, (value,), False))
        elif isinstance(value, list):
            refs.append(ToolRef(field, role, tuple(v for v in value if isinstance(v, str)), True))
    return refs


def tools_named_by(check: Any) -> list[str]:
    """Every tool ``check`` names, whatever the role (each must exist in the domain)."""
    return [tool for ref in tool_refs(check) for tool in ref.tools]


def tools_with_role(check: Any, role: ToolRole) -> list[str]:
    """The tools ``check`` names in ``role``, e.g. the forbidden ones."""
    return [tool for ref in tool_refs(check) if ref.role == role for tool in ref.tools]


def ordered_pairs(check: Any) -> list[tuple[str, str]]:
    """``(first, then)`` for every single tool ``check`` requires before another single tool."""
    refs = [r for r in tool_refs(check) if not r.many]
    return [(b.tools[0], a.tools[0]) for b in refs if b.role == "before" for a in refs if a.role == "after"]


def tool_consistency_problems(checks: Sequence[Any]) -> list[tuple[int | None, str]]:
    """Upstream's load-time tool rules over one list of checks: ``(check index or None, message)``.

    A tool may not be both required and forbidden; the candidates of an
    ``any_required`` field may not all be forbidden; an ordered tool must be
    required by another check (for a list of ordered tools, one of them).
    """
    refs = [tool_refs(check) for check in checks]
    required = {t for check_refs in refs for r in check_refs if r.role == "required" for t in r.tools}
    forbidden = {t for check_refs in refs for r in check_refs if r.role == "forbidden" for t in r.tools}
    problems: list[tuple[int | None, str]] = [
        (None, f"tool {tool!r} is both required and forbidden") for tool in sorted(required & forbidden)
    ]
    for index, (check, check_refs) in enumerate(zip(checks, refs, strict=True)):
        for ref in check_refs:
            if ref.role == "any_required" and set(ref.tools) <= forbidden:
                problems.append((index, f"every candidate of {check.type} is forbidden"))
            elif ref.role in ("before", "after") and ref.many and not set(ref.tools) & required:
                problems.append((index, f"no tool of {ref.field} is required by another check"))
            elif ref.role in ("before", "after") and not ref.many and ref.tools[0] not in required:
                problems.append((index, f"{ref.tools[0]!r} is ordered but no other check requires it"))
    return problems
