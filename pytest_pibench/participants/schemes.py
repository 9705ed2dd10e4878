"""Participant spec schemes: the ``NAME`` of a spec ``NAME`` or ``NAME:ARGUMENT`` (``oracle``, ``litellm:gpt-4o``).

A spec names an agent (``--pibench-agent``), a simulated user (``--pibench-user``)
or a Tier-2 judge (``--pibench-judge``). When the part before the first colon is
a registered scheme, that scheme builds the participant; otherwise the spec is an
import spec (``module:Class``, ``path/to/file.py:Class``) that
:mod:`pytest_pibench.participants.specs` resolves.

Schemes come from three sources, all held by one :class:`SchemeRegistry`:

1. built in: ``oracle``, ``baseline``, ``scripted``, ``litellm``
   (:data:`pytest_pibench.participants.builtins.BUILTIN_SCHEMES`);
2. installed distributions: entry points in the group ``pytest_pibench.participants``
   (:data:`ENTRY_POINT_GROUP`), each named after its scheme and pointing to a
   :class:`Scheme` object; loaded only when a spec uses that name;
3. in pytest runs, the ``pytest_pibench_participant_schemes`` hook of a plugin or
   ``conftest.py``.

A name defined by two sources is an error that names both, never a silent pick.
A registered scheme shadows a module of the same name: ``a2a:Agent`` means the
``a2a`` scheme once one is registered (``path/to/a2a.py:Agent`` still imports).

This module imports nothing heavy: the plugin builds registries at start-up.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_pibench.scenario.models import Scenario

__all__ = [
    "ENTRY_POINT_GROUP",
    "ROLES",
    "AgentSpecError",
    "JudgeFactory",
    "ParticipantFactory",
    "Scheme",
    "SchemeRegistry",
]

ENTRY_POINT_GROUP = "pytest_pibench.participants"
"""Entry-point group of third-party schemes: ``NAME = "package.module:SCHEME_OBJECT"``."""

ROLES = ("agent", "user", "judge")
"""What a spec can name: the agent under test, the simulated user, the Tier-2 judge."""

ParticipantFactory = Callable[["Scenario"], Any]
"""Makes the agent (or user) of one episode; called once per episode with its scenario."""
JudgeFactory = Callable[[], Any]
"""Makes a judge (an object with ``judge(question, text)``); called once per episode."""

_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]*$")


class AgentSpecError(ValueError):
    """A participant spec (agent, user or judge) that cannot be resolved; the message says why."""


@dataclass(frozen=True)
class Scheme:
    """How specs ``NAME`` and ``NAME:ARGUMENT`` become participants.

    Each role the scheme serves has a function ``(argument, params) -> factory``:
    ``argument`` is the text after the first colon (``""`` for a bare ``NAME``),
    ``params`` the ``--pibench-<role>-arg KEY=VALUE`` pairs (plus ``cache_dir``).
    The function runs once per spec and process (at start-up, so a bad argument
    fails before any episode): it checks the argument and raises
    :class:`AgentSpecError` with a message when it is wrong. The factory it
    returns runs once per episode.

    Example::

        def _echo_agent(argument: str, params: Mapping[str, Any]) -> ParticipantFactory:
            return lambda scenario: EchoAgent(greeting=argument or "hello")

        ECHO = Scheme("echo", "echo[:GREETING]", agent=_echo_agent)
    """

    name: str
    usage: str
    """How the scheme is written, for messages and help: ``"a2a:<url>"``."""
    agent: Callable[[str, Mapping[str, Any]], ParticipantFactory] | None = None
    user: Callable[[str, Mapping[str, Any]], ParticipantFactory] | None = None
    judge: Callable[[str, Mapping[str, Any]], JudgeFactory] | None = None

    def __post_init__(self) -> None:
        if not _NAME.match(self.name):
            raise AgentSpecError(f"scheme name {self.name!r}: a letter, then letters, digits, '_', '.' or '-'")
        if not self.roles:
            raise AgentSpecError(f"scheme {self.name!r} serves no role: give agent=, user= or judge=")

    @property
    def roles(self) -> tuple[str, ...]:
        """The roles this scheme can name, in :data:`ROLES` order."""
        return tuple(role for role in ROLES if getattr(self, role) is not None)


@dataclass(frozen=True)
class _Entry:
    """A registered name: its scheme (or the entry point that loads it) and where it came from."""

    origin: str
    scheme: Scheme | None = None
    entry_point: EntryPoint | None = None


def _entry_point_origin(entry_point: EntryPoint) -> str:
    dist = entry_point.dist
    where = f" of distribution {dist.name} {dist.version}" if dist is not None else ""
    return f"entry point {entry_point.name} = {entry_point.value!r}{where} (group {ENTRY_POINT_GROUP})"


class SchemeRegistry:
    """The schemes one resolver knows, by name, each with the source that defined it."""

    def __init__(self) -> None:
        self._entries: dict[str, _Entry] = {}

    def copy(self) -> SchemeRegistry:
        """A registry with the same schemes, to extend without touching this one."""
        other = SchemeRegistry()
        other._entries = dict(self._entries)
        return other

    def add(self, scheme: Scheme, origin: str) -> None:
        """Register ``scheme``; ``origin`` says where it came from, for clash messages.

        Raises:
            AgentSpecError: when another source already defined the name.
        """
        if not isinstance(scheme, Scheme):
            raise AgentSpecError(f"{origin}: expected a pytest_pibench Scheme, got {scheme!r}")
        self._claim(scheme.name, _Entry(origin, scheme=scheme))

    def add_all(self, schemes: Iterable[Scheme], origin: str) -> None:
        for scheme in schemes:
            self.add(scheme, origin)

    def add_entry_points(self) -> None:
        """Register the schemes of installed distributions (group :data:`ENTRY_POINT_GROUP`), loaded on first use."""
        for entry_point in entry_points(group=ENTRY_POINT_GROUP):
            self._claim(entry_point.name, _Entry(_entry_point_origin(entry_point), entry_point=entry_point))

    def _claim(self, name: str, entry: _Entry) -> None:
        known = self._entries.get(name)
        if known is not None and known != entry:
            raise AgentSpecError(
                f"participant scheme {name!r} is defined twice: by {known.origin} and by {entry.origin}"
            )
        self._entries[name] = entry

    def lookup(self, spec: str) -> tuple[Scheme, str] | None:
        """``(scheme, argument)`` for a spec whose ``NAME`` is registered, else None (an import spec).

        Raises:
            AgentSpecError: when the scheme's entry point cannot be loaded or is no :class:`Scheme`.
        """
        name, _, argument = spec.partition(":")
        entry = self._entries.get(name)
        if entry is None:
            return None
        return self._load(name, entry), argument

    def _load(self, name: str, entry: _Entry) -> Scheme:
        if entry.scheme is not None:
            return entry.scheme
        assert entry.entry_point is not None
        try:
            scheme = entry.entry_point.load()
        except Exception as exc:
            raise AgentSpecError(f"{entry.origin} failed to load: {type(exc).__name__}: {exc}") from exc
        if not isinstance(scheme, Scheme):
            raise AgentSpecError(f"{entry.origin} points to {scheme!r}, not a pytest_pibench Scheme")
        if scheme.name != name:
            raise AgentSpecError(f"{entry.origin} holds scheme {scheme.name!r}: the entry point must be named after it")
        self._entries[name] = _Entry(entry.origin, scheme=scheme)
        return scheme

    def usages(self, role: str, *, origin: str | None = None) -> list[str]:
        """How each scheme serving ``role`` is written, in registration order, for messages.

        ``origin`` keeps the schemes of that source only. Entry points not loaded
        yet show as ``NAME:...`` (loading them here could fail for an unrelated reason).
        """
        out = []
        for name, entry in self._entries.items():
            if origin is not None and entry.origin != origin:
                continue
            if entry.scheme is None:
                out.append(f"{name}:...")
            elif role in entry.scheme.roles:
                out.append(entry.scheme.usage)
        return out

    def origins(self) -> dict[str, str]:
        """Each registered name and the source that defined it."""
        return {name: entry.origin for name, entry in self._entries.items()}
