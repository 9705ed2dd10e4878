"""Domain packs: ``domains/<name>/{policy.md, db.json, tools.py}``, and where a pack is found by name.

Search order for a scenario's ``meta.domain`` (or an upstream alias of it):

0. the folders named by ``--pibench-domains`` (:func:`set_domain_paths`): an
   explicit choice wins over everything below;
1. the scenario's own workspace: ``domains/<name>/`` next to the scenario's
   ``scenarios/`` folder (``search_roots``). A scenario that ships its pack
   gets that pack, even where an installed one has the same name;
2. installed packs: entry points of the group ``pytest_pibench.domains``
   (:data:`ENTRY_POINT_GROUP`), one per pack, named after the domain, whose value
   is a package whose folder is the pack (``bank = "bank_pibench"``) or an
   object naming the pack folder (``bank = "bank_pibench.packs:BANK_DIR"``, a
   ``str`` or ``Path``);
3. the packs bundled with pytest-pibench.

A name found in two installed sources (two distributions, or a distribution and
the bundled packs) is a :class:`DomainError` naming both, never a silent pick.

A pack is a folder with ``tools.py`` (Python tools) or ``tools.json`` (a
*declarative* pack in upstream's format, served by the generic engine of
:mod:`pytest_pibench.packs.engine`), plus ``policy.md`` and ``db.json``. A
declarative pack's tools run the handlers of handler packs (``handlers.py``
defining ``HANDLERS``): its own, if it ships one, then the bundled
``domains/upstream_handlers`` (upstream's tool names); a handler pack is loaded
like a ``tools.py`` (:func:`load_handler_pack`).

A pack's ``tools.py`` defines ``TOOLS`` (the tool functions); it may import sibling modules of its
folder with relative imports (``from ._screening import screen_watchlist``), so a pack can be split
by area (:func:`load_pack_module`). It may define
``ROUTINE``, a :class:`~pytest_pibench.toolkit.routine.Routine`: the standard
look-ups and the generic action of each decision, which the
``baseline:routine-<decision>`` agents play (DESIGN §4 rule 8). A pack without
one has no routine baselines.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import sys
import types
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from threading import Lock
from types import ModuleType
from typing import Any

from pytest_pibench.packs.declarative import TOOLS_FILE, load_tools_json
from pytest_pibench.packs.generic import HandlerSet
from pytest_pibench.packs.typed_tools import Tool, tool_from_function
from pytest_pibench.paths import bundled_root
from pytest_pibench.toolkit.routine import Routine

__all__ = [
    "ENTRY_POINT_GROUP",
    "HANDLERS_FILE",
    "UPSTREAM_ALIASES",
    "Domain",
    "DomainError",
    "UnknownDomainError",
    "canonical_domain_name",
    "domain_paths",
    "is_pack",
    "load_domain",
    "load_domain_dir",
    "load_handler_pack",
    "load_pack_module",
    "set_domain_paths",
    "upstream_handlers",
]

ENTRY_POINT_GROUP = "pytest_pibench.domains"
"""Entry-point group through which an installed distribution ships domain packs."""

UPSTREAM_ALIASES: dict[str, str] = {
    "retail_refund_sop_v1": "retail",
    "helpdesk_access_control_v1": "helpdesk",
}
"""Upstream ``meta.domain`` values and the domain pack each one means."""


class DomainError(ValueError):
    """A domain pack that cannot be found or loaded."""


class UnknownDomainError(DomainError):
    """No domain pack of that name: the scenario that names it is at fault, not a pack."""


@dataclass(frozen=True)
class Domain:
    """A loaded domain pack. ``base_db`` is shared: copy it before mutating."""

    name: str
    directory: Path
    policy_text: str
    base_db: dict[str, Any]
    tools: tuple[Tool, ...]
    routine: Routine | None = field(default=None, compare=False)
    """The pack's ``ROUTINE`` (standard look-ups and generic actions), or None when it declares none."""
    declarative: bool = False
    """A ``tools.json`` pack: upstream's generic engine serves its tools, and its database carries
    ``_policy_text`` (what ``read_policy`` returns), as upstream builds it."""
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


_cache: dict[tuple[Path, str], Domain] = {}
_cache_lock = Lock()
_handler_cache: dict[Path, HandlerSet] = {}
_handler_lock = Lock()  # apart from _cache_lock: a declarative pack loads its handlers while that one is held
_domain_paths: list[Path] = []


def set_domain_paths(paths: Sequence[str | Path]) -> None:
    """The folders ``--pibench-domains`` names, searched first (each holds packs, or a ``domains/`` of them)."""
    resolved = []
    for path in paths:
        folder = Path(path)
        resolved.append(folder / "domains" if (folder / "domains").is_dir() else folder)
    _domain_paths[:] = resolved


def domain_paths() -> tuple[Path, ...]:
    """The folders :func:`set_domain_paths` set last (searched before everything else)."""
    return tuple(_domain_paths)


def is_pack(directory: Path) -> bool:
    """Whether ``directory`` holds a domain pack (``tools.py`` or a declarative ``tools.json``)."""
    try:
        return (directory / "tools.py").is_file() or (directory / TOOLS_FILE).is_file()
    except OSError:  # a scenario's domain name too long for a path: no pack, so an UnknownDomainError, not a crash
        return False


def load_domain(name: str, *, search_roots: Sequence[Path] = ()) -> Domain:
    """Load a domain pack by name or upstream alias, in the search order of the module docstring.

    Each root in ``search_roots`` (a workspace holding ``domains/``) is tried
    first, then the installed packs (entry points and bundled). Packs are loaded
    once per process.

    Raises:
        UnknownDomainError: when no pack of that name is found.
        DomainError: when the pack is malformed, or two installed sources define the name.
    """
    candidates = list(dict.fromkeys((canonical_domain_name(name), name)))
    tried: list[str] = []
    folders = [*_domain_paths, *(root / "domains" for root in search_roots)]
    for folder in folders:
        for candidate in candidates:
            directory = folder / candidate
            tried.append(str(directory))
            if is_pack(directory):
                return load_domain_dir(directory)
    found: dict[Path, tuple[str, str]] = {}  # resolved folder -> (domain name, origin)
    for candidate in candidates:
        for directory, origin in _installed_sources(candidate):
            found.setdefault(directory.resolve(), (candidate, origin))
    if len(found) > 1:
        (_, first), (_, second) = list(found.values())[:2]
        raise DomainError(f"domain {name!r} is defined twice: by {first} and by {second}")
    if found:
        ((directory, (pack_name, _)),) = found.items()
        return load_domain_dir(directory, name=pack_name)
    tried += [str(bundled_root() / "domains" / c) for c in candidates]
    where = ", ".join(tried) + f", and entry points named {' or '.join(map(repr, candidates))} in {ENTRY_POINT_GROUP}"
    raise UnknownDomainError(f"unknown domain {name!r}; looked in: {where}")


def _installed_sources(name: str) -> list[tuple[Path, str]]:
    """``(pack folder, origin)`` of every installed pack called ``name``: entry points, then the bundled one."""
    sources = [(_entry_point_folder(ep), _origin(ep)) for ep in entry_points(group=ENTRY_POINT_GROUP, name=name)]
    bundled = bundled_root() / "domains" / name
    if is_pack(bundled):
        sources.append((bundled, f"the packs bundled with pytest-pibench ({bundled})"))
    return sources


def _origin(entry_point: EntryPoint) -> str:
    dist = entry_point.dist
    where = f" of distribution {dist.name} {dist.version}" if dist is not None else ""
    return f"entry point {entry_point.name} = {entry_point.value!r}{where} (group {ENTRY_POINT_GROUP})"


def _entry_point_folder(entry_point: EntryPoint) -> Path:
    """The pack folder an entry point names: a package's own folder, or a path object.

    Raises:
        DomainError: when it cannot be loaded or names no folder holding a ``tools.py``.
    """
    try:
        if entry_point.attr is None:  # a package: its folder is the pack (found without running its code)
            spec = importlib.util.find_spec(entry_point.module)
            locations = list(spec.submodule_search_locations or []) if spec is not None else []
            target: Any = locations[0] if locations else None
        else:
            target = entry_point.load()
    except Exception as exc:
        raise DomainError(f"{_origin(entry_point)} failed to load: {type(exc).__name__}: {exc}") from exc
    if not isinstance(target, str | os.PathLike) or not is_pack(Path(target)):
        raise DomainError(
            f"{_origin(entry_point)} names no domain pack: expected a package or a path of a folder "
            f"holding tools.py or tools.json, got {target!r}"
        )
    return Path(target)


def load_domain_dir(directory: Path, *, name: str | None = None) -> Domain:
    """Load the pack in ``directory``, called ``name`` (default: the folder's name); cached by path and name."""
    key = (directory.resolve(), name or directory.name)
    with _cache_lock:
        if key not in _cache:
            _cache[key] = _load(key[0], key[1])
        return _cache[key]


def _load(directory: Path, name: str) -> Domain:
    policy_file = directory / "policy.md"
    try:
        policy = policy_file.read_text(encoding="utf-8") if policy_file.is_file() else ""
    except (OSError, UnicodeDecodeError) as exc:  # a DomainError is the pack's error row, never a crash of the run
        raise DomainError(f"{policy_file}: cannot read: {exc.strerror if isinstance(exc, OSError) else exc}") from None
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
    if not (directory / "tools.py").is_file():
        own = directory / HANDLERS_FILE
        handlers = upstream_handlers()
        if own.is_file():  # the pack's own handlers come first
            handlers = HandlerSet.combine(load_handler_pack(own), handlers)
        try:
            tools = load_tools_json(directory / TOOLS_FILE, handlers)
        except ValueError as exc:
            raise DomainError(str(exc)) from None
        if "record_decision" not in {t.name for t in tools}:
            raise DomainError(f"{directory / TOOLS_FILE}: every domain needs a record_decision tool")
        return Domain(name, directory, policy, base_db, tools, None, declarative=True)
    module = load_pack_module(directory / "tools.py")
    return Domain(name, directory, policy, base_db, _load_tools(module), _load_routine(module))


def load_pack_module(path: Path) -> ModuleType:
    """Execute a pack's ``tools.py`` as a module of its own, inside a package made of its folder.

    The folder becomes a package registered under a name unique to its path, so ``tools.py`` may import
    its siblings (``from ._accounts import lookup_account``): a pack can be split into modules by area.
    ``__init__.py`` in the folder, if any, is not run. Two packs (or two copies of one) never share a module.

    Raises:
        DomainError: when the file cannot be loaded or its import fails.
    """
    directory = path.parent
    digest = hashlib.sha256(str(path).encode()).hexdigest()[:10]
    package_name = f"pytest_pibench_domain_{directory.name}_{digest}"
    module_name = f"{package_name}.{path.stem}"
    package = sys.modules.get(package_name)
    if package is None:
        package = types.ModuleType(package_name, f"domain pack {directory}")
        package.__path__ = [str(directory)]
        package.__package__ = package_name
        sys.modules[package_name] = package
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise DomainError(f"{path}: cannot be loaded as a Python module")
    module = importlib.util.module_from_spec(spec)
    module.__package__ = package_name
    sys.modules[module_name] = module  # dataclasses and get_type_hints need it registered
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        for loaded in [m for m in sys.modules if m == package_name or m.startswith(package_name + ".")]:
            sys.modules.pop(loaded, None)  # a retry re-imports the siblings too
        raise DomainError(f"{path}: import failed: {type(exc).__name__}: {exc}") from exc
    return module


HANDLERS_FILE = "handlers.py"
UPSTREAM_HANDLERS = "upstream_handlers"
"""The bundled handler pack of upstream's tool names (a folder of the bundled ``domains/``)."""


def load_handler_pack(path: Path) -> HandlerSet:
    """The ``HANDLERS`` of a handler pack's ``handlers.py``, loaded like a pack's ``tools.py`` (cached by path).

    Raises:
        DomainError: when the file cannot be loaded or defines no ``HandlerSet`` called ``HANDLERS``.
    """
    key = path.resolve()
    with _handler_lock:
        if key in _handler_cache:
            return _handler_cache[key]
        module = load_pack_module(path)
        table = getattr(module, "HANDLERS", None)
        if not isinstance(table, HandlerSet):
            kind = type(table).__name__
            raise DomainError(f"{path}: HANDLERS must be a pytest_pibench.packs.generic.HandlerSet, got {kind}")
        _handler_cache[key] = table
        return table


def upstream_handlers() -> HandlerSet:
    """The bundled handlers of upstream's tool names (``domains/upstream_handlers/handlers.py``)."""
    return load_handler_pack(bundled_root() / "domains" / UPSTREAM_HANDLERS / HANDLERS_FILE)


def _load_routine(module: ModuleType) -> Routine | None:
    """The module's ``ROUTINE``, if it defines one."""
    routine = getattr(module, "ROUTINE", None)
    if routine is not None and not isinstance(routine, Routine):
        raise DomainError(
            f"{module.__file__}: ROUTINE must be a pytest_pibench.toolkit.routine.Routine, got {type(routine).__name__}"
        )
    return routine


def _load_tools(module: ModuleType) -> tuple[Tool, ...]:
    path = module.__file__
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
