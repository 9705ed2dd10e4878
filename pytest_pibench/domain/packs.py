"""Domain packs: ``domains/<name>/{policy.md, db.json, tools.py}``."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from threading import Lock
from typing import Any

from pytest_pibench.domain.tools import Tool, tool_from_function
from pytest_pibench.paths import bundled_root

__all__ = ["UPSTREAM_ALIASES", "Domain", "DomainError", "canonical_domain_name", "load_domain"]

UPSTREAM_ALIASES: dict[str, str] = {
    "retail_refund_sop_v1": "retail",
    "helpdesk_access_control_v1": "helpdesk",
}
"""Upstream ``meta.domain`` values and the domain pack each one means."""


class DomainError(ValueError):
    """A domain pack that cannot be found or loaded."""


@dataclass(frozen=True)
class Domain:
    """A loaded domain pack. ``base_db`` is shared: copy it before mutating."""

    name: str
    directory: Path
    policy_text: str
    base_db: dict[str, Any]
    tools: tuple[Tool, ...]
    _by_name: dict[str, Tool] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_name", {t.name: t for t in self.tools})

    @property
    def tool_names(self) -> list[str]:
        """Tool names in catalog order."""
        return [t.name for t in self.tools]

    def tool(self, name: str) -> Tool | None:
        return self._by_name.get(name)


def canonical_domain_name(name: str) -> str:
    """``retail_refund_sop_v1`` -> ``retail``; other names unchanged."""
    key = name.strip()
    return UPSTREAM_ALIASES.get(key.lower(), key)


_cache: dict[Path, Domain] = {}
_cache_lock = Lock()


def load_domain(name: str, *, search_roots: Sequence[Path] = ()) -> Domain:
    """Load a domain pack by name or upstream alias.

    Each root in ``search_roots`` (a workspace holding ``domains/``) is tried
    first, then the bundled packs. Packs are loaded once per process.

    Raises:
        DomainError: when no pack is found or the pack is malformed.
    """
    canonical = canonical_domain_name(name)
    roots = [*search_roots, bundled_root()]
    tried: list[str] = []
    for root in roots:
        for candidate in dict.fromkeys((canonical, name)):
            directory = root / "domains" / candidate
            tried.append(str(directory))
            if (directory / "tools.py").is_file():
                return load_domain_dir(directory)
    raise DomainError(f"unknown domain {name!r}; looked in: " + ", ".join(tried))


def load_domain_dir(directory: Path) -> Domain:
    """Load the pack in ``directory`` (cached by resolved path)."""
    key = directory.resolve()
    with _cache_lock:
        if key not in _cache:
            _cache[key] = _load(key)
        return _cache[key]


def _load(directory: Path) -> Domain:
    policy_file = directory / "policy.md"
    policy = policy_file.read_text(encoding="utf-8") if policy_file.is_file() else ""
    db_file = directory / "db.json"
    base_db: dict[str, Any] = {}
    if db_file.is_file():
        try:
            loaded = json.loads(db_file.read_text(encoding="utf-8"))
        except ValueError as exc:
            raise DomainError(f"{db_file}: invalid JSON: {exc}") from None
        if not isinstance(loaded, dict):
            raise DomainError(f"{db_file}: the base database must be a JSON object")
        base_db = loaded
    return Domain(directory.name, directory, policy, base_db, _load_tools(directory / "tools.py"))


def _load_tools(path: Path) -> tuple[Tool, ...]:
    digest = hashlib.sha256(str(path).encode()).hexdigest()[:10]
    module_name = f"pytest_pibench_domain_{path.parent.name}_{digest}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise DomainError(f"{path}: cannot be loaded as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module  # dataclasses and get_type_hints need it registered
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        sys.modules.pop(module_name, None)
        raise DomainError(f"{path}: import failed: {type(exc).__name__}: {exc}") from exc
    functions = getattr(module, "TOOLS", None)
    if not isinstance(functions, list | tuple) or not functions:
        raise DomainError(f"{path}: must define TOOLS, a non-empty list of tool functions")
    tools: list[Tool] = []
    for function in functions:
        if not callable(function):
            raise DomainError(f"{path}: TOOLS holds {function!r}, which is not callable")
        try:
            tools.append(tool_from_function(function))
        except (TypeError, NameError) as exc:
            raise DomainError(f"{path}: {exc}") from exc
    names = [t.name for t in tools]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise DomainError(f"{path}: duplicate tools in TOOLS: {', '.join(duplicates)}")
    if "record_decision" not in names:
        raise DomainError(f"{path}: every domain needs a record_decision tool")
    return tuple(tools)
