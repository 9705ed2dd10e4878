"""One spec resolver for agents, simulated users and judges.

A spec is resolved the same way for every role:

1. ``NAME`` or ``NAME:ARGUMENT`` whose ``NAME`` is a registered scheme
   (:mod:`pytest_pibench.participants.schemes`): built in (``oracle``,
   ``baseline:allow|deny|escalate|silent``, ``baseline:routine-<decision>``, ``scripted``, ``litellm:<model>``),
   from an installed distribution's entry point, or from a pytest plugin's
   ``pytest_pibench_participant_schemes`` hook;
2. otherwise an import spec: ``module:Class``, ``module:factory``,
   ``module:instance`` (reused for every episode), ``path/to/file.py:Class``.

A spec that resolves to nothing raises :class:`AgentSpecError` saying why, so a
typo fails at start-up, before any episode runs.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import sys
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from pytest_pibench.participants.builtins import (
    BASELINE_DECISIONS,
    BUILTIN_ORIGIN,
    BUILTIN_SCHEMES,
    BaselineAgent,
    OracleAgent,
)
from pytest_pibench.participants.conformance import check_built, check_instance
from pytest_pibench.participants.import_errors import import_failure, not_found, offer_names
from pytest_pibench.participants.schemes import AgentSpecError, JudgeFactory, ParticipantFactory, SchemeRegistry
from pytest_pibench.scenario.models import Scenario

__all__ = [
    # re-exported: their home is participants.builtins / participants.schemes
    "BASELINE_DECISIONS",
    "AgentSpecError",
    "BaselineAgent",
    "OracleAgent",
    # the resolver
    "AgentSpec",
    "default_schemes",
    "resolve_agent",
    "resolve_judge",
    "resolve_user",
]


@dataclass(frozen=True)
class AgentSpec:
    """A resolved agent (or user) spec: ``build(scenario)`` makes the participant of one episode."""

    name: str
    build: Callable[[Scenario], Any]

    @property
    def trusted(self) -> bool:
        """True when this package built the factory (a built-in scheme): its errors are the harness's to read."""
        return str(getattr(self.build, "__module__", "")).startswith("pytest_pibench.")

    @property
    def shared(self) -> bool:
        """True when every episode gets the same object (a ``module:instance`` spec): never run two at once."""
        return bool(getattr(self.build, "pibench_shared", False))


def default_schemes() -> SchemeRegistry:
    """The built-in schemes and those of installed distributions (entry points, loaded on first use).

    Raises:
        AgentSpecError: when two sources define the same scheme name.
    """
    registry = SchemeRegistry()
    registry.add_all(BUILTIN_SCHEMES, BUILTIN_ORIGIN)
    registry.add_entry_points()
    return registry


def resolve_agent(
    spec: str, params: Mapping[str, Any] | None = None, *, schemes: SchemeRegistry | None = None
) -> AgentSpec:
    """Turn an agent spec into an :class:`AgentSpec` (see the module docstring for the forms).

    ``params`` are the role's extra parameters (``--pibench-agent-arg``), given
    to the scheme (``litellm:`` passes them to litellm); ``schemes`` defaults to
    :func:`default_schemes`.

    Raises:
        AgentSpecError: with a message saying what is wrong with the spec.
    """
    spec = spec.strip()
    return AgentSpec(spec, _resolve("agent", spec, params, schemes))


def resolve_user(
    spec: str, params: Mapping[str, Any] | None = None, *, schemes: SchemeRegistry | None = None
) -> AgentSpec:
    """Resolve a user spec: ``scripted``, ``litellm:<model>``, another scheme, or ``module:Class``.

    Raises:
        AgentSpecError: with a message saying what is wrong with the spec.
    """
    spec = spec.strip()
    return AgentSpec(spec, _resolve("user", spec, params, schemes))


def resolve_judge(
    spec: str, params: Mapping[str, Any] | None = None, *, schemes: SchemeRegistry | None = None
) -> JudgeFactory:
    """A factory of judges: ``litellm:<model>``, another scheme, or ``module:Class`` (an object with ``judge``).

    Raises:
        AgentSpecError: with a message saying what is wrong with the spec.
    """
    spec = spec.strip()
    registry = schemes if schemes is not None else default_schemes()
    found = registry.lookup(spec)
    if found is not None:
        scheme, argument = found
        if scheme.judge is None:
            raise AgentSpecError(_wrong_role("judge", spec, scheme.name, scheme.roles, registry))
        return scheme.judge(argument, dict(params or {}))
    obj = _import_target("judge", spec, registry)
    if inspect.isclass(obj) or (callable(obj) and not hasattr(obj, "judge")):
        return lambda: obj()
    if not callable(getattr(obj, "judge", None)):
        raise AgentSpecError(f"judge spec {spec!r}: {obj!r} has no judge(question, text) method")
    return lambda: obj


def _resolve(
    role: str, spec: str, params: Mapping[str, Any] | None, schemes: SchemeRegistry | None
) -> ParticipantFactory:
    registry = schemes if schemes is not None else default_schemes()
    found = registry.lookup(spec)
    if found is None:
        return _factory(_import_target(role, spec, registry), role, spec)
    scheme, argument = found
    make = scheme.agent if role == "agent" else scheme.user
    if make is None:
        raise AgentSpecError(_wrong_role(role, spec, scheme.name, scheme.roles, registry))
    return make(argument, dict(params or {}))


def _hint(role: str, registry: SchemeRegistry) -> str:
    """What a spec of ``role`` may be: the built-in schemes, the others, and the import forms."""
    builtin = registry.usages(role, origin=BUILTIN_ORIGIN)
    others = [u for u in registry.usages(role) if u not in builtin]
    more = f"; installed schemes: {', '.join(others)}" if others else ""
    if role == "agent":
        return f"use module:Class, module:factory, or a built-in ({', '.join(builtin)}){more}"
    return f"use {', '.join(builtin)} or module:Class{more}"


def _wrong_role(role: str, spec: str, scheme: str, roles: tuple[str, ...], registry: SchemeRegistry) -> str:
    serves = ", ".join(roles)
    return f"{role} spec {spec!r}: scheme {scheme!r} names no {role} (only: {serves}); {_hint(role, registry)}"


def _import_target(role: str, spec: str, registry: SchemeRegistry) -> Any:
    """The object a ``module:attr`` or ``file.py:attr`` spec names (``attr`` may be dotted)."""
    module_name, sep, attr = spec.rpartition(":")
    if not sep or not module_name or not attr:
        raise AgentSpecError(f"cannot resolve {role} spec {spec!r}: {_hint(role, registry)}")
    target = _import(module_name, role, spec)
    for part in attr.split("."):
        if not hasattr(target, part):
            raise AgentSpecError(
                f"{role} spec {spec!r}: {module_name!r} has no attribute {attr!r}{offer_names(target, part)}"
            )
        target = getattr(target, part)
    return target


_FILE_MODULES: dict[Path, ModuleType] = {}
_FILE_MODULES_LOCK = threading.RLock()


def _load_file(module_name: str, role: str, spec: str) -> ModuleType:
    """The module of a ``file.py:attr`` spec, its file executed once per process.

    A spec is resolved at start-up (to fail early) and again where it is used,
    so without this the file's top-level code would run each time, and each
    run would make new classes. Keyed by the resolved path; a file that
    raises is not kept, so the next resolution raises again.
    """
    path = Path(module_name)
    if not path.is_file():
        raise AgentSpecError(f"{role} spec {spec!r}: file {module_name} not found (looked in {os.getcwd()})")
    key = path.resolve()
    with _FILE_MODULES_LOCK:
        if key in _FILE_MODULES:
            return _FILE_MODULES[key]
        loader_spec = importlib.util.spec_from_file_location(path.stem, path)
        if loader_spec is None or loader_spec.loader is None:
            raise AgentSpecError(f"{role} spec {spec!r}: cannot load {module_name}")
        module = importlib.util.module_from_spec(loader_spec)
        registered = sys.modules.setdefault(path.stem, module) is module
        try:
            loader_spec.loader.exec_module(module)
        except BaseException as exc:
            if registered:
                sys.modules.pop(path.stem, None)
            if isinstance(exc, Exception):
                raise AgentSpecError(import_failure(role, spec, module_name, exc)) from None
            raise
        _FILE_MODULES[key] = module
        return module


def _import(module_name: str, role: str, spec: str) -> Any:
    if module_name.endswith(".py"):
        return _load_file(module_name, role, spec)
    if os.getcwd() not in sys.path:  # like `python -m`: modules in the working directory resolve
        sys.path.insert(0, os.getcwd())
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and (module_name == exc.name or module_name.startswith(exc.name + ".")):
            raise AgentSpecError(not_found(role, spec, module_name)) from None
        raise AgentSpecError(import_failure(role, spec, module_name, exc)) from None
    except Exception as exc:  # the module's own error: a syntax error, an exception at import
        raise AgentSpecError(import_failure(role, spec, module_name, exc)) from None


def _factory(target: Any, role: str, spec: str) -> ParticipantFactory:
    """An agent or user class (one per episode), a zero-argument factory, or an instance (reused).

    Checked once here, before any episode (:mod:`~pytest_pibench.participants.conformance`):
    a class or factory builds one participant, whose methods must take the
    protocol's arguments, so a broken agent is a usage error, not a weak score.
    """
    if _is_participant(target) and not inspect.isclass(target):
        check_instance(target, role, spec)

        def reuse(scenario: Scenario) -> Any:  # an instance: reused, as upstream reuses agents
            return target

        reuse.pibench_shared = True  # type: ignore[attr-defined]  # one object: never two episodes at once
        return reuse
    if inspect.isclass(target):
        check_built(target, role, spec, target.__name__)
        return lambda scenario: target()
    if callable(target):
        check_built(target, role, spec, getattr(target, "__name__", repr(target)))

        def build(scenario: Scenario) -> Any:
            made = target()
            if not _is_participant(made):
                raise AgentSpecError(f"{role} spec {spec!r}: the factory returned {made!r}, not {_article(role)}")
            return made

        return build
    raise AgentSpecError(f"{role} spec {spec!r}: {target!r} is neither {_article(role)} class, factory nor instance")


def _article(role: str) -> str:
    return "an agent" if role == "agent" else f"a {role}"


def _is_participant(obj: Any) -> bool:
    return callable(getattr(obj, "generate", None)) and callable(getattr(obj, "init_state", None))
