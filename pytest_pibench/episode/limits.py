"""The limits one episode runs under, in one value with one set of defaults.

Every way of running a benchmark (the plugin, ``pi run``, the green server, the
Python API) builds an :class:`EpisodeLimits` once and hands it down, so an
episode is bound by the same rules whichever driver started it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

from pytest_pibench.inputs import InputError, finite_float
from pytest_pibench.vocab import (
    DEFAULT_MAX_ERRORS,
    DEFAULT_MAX_STEPS,
    DEFAULT_MAX_TOOL_CALLS,
    DEFAULT_MAX_TOOL_CALLS_PER_MESSAGE,
    DEFAULT_TIMEOUT,
)

__all__ = ["OBSERVER_MODES", "EpisodeLimits"]

OBSERVER_MODES = ("audit_only", "hard_gate")
"""``audit_only``: every tool call runs; ``hard_gate``: calls to the scenario's forbidden tools are blocked."""


@dataclass(frozen=True)
class EpisodeLimits:
    """What bounds one episode. Every field has the benchmark's default.

    Example::

        limits = EpisodeLimits(max_steps=60, timeout=None)
        row = run_one("scenarios/retail/ret_001.json", "oracle", limits=limits)

    Raises:
        InputError: on construction, for a limit out of range (a step count under 1,
            a timeout or cost limit that is not a positive finite number, an unknown
            observer mode).
    """

    max_steps: int = DEFAULT_MAX_STEPS
    """Steps (messages, tool batches, replies) before the episode ends as ``max_steps``."""
    max_errors: int = DEFAULT_MAX_ERRORS
    """Failed tool calls before it ends as ``too_many_errors``."""
    timeout: float | None = DEFAULT_TIMEOUT
    """Wall-clock seconds for the whole episode (None: unbounded); the participant that overran fails."""
    max_tool_calls_per_message: int = DEFAULT_MAX_TOOL_CALLS_PER_MESSAGE
    """Most tool calls run from one message; more end the episode as ``tool_call_limit``."""
    max_tool_calls: int = DEFAULT_MAX_TOOL_CALLS
    """Most tool calls run in the whole episode; the same ending past it."""
    observer_mode: str = "audit_only"
    """One of :data:`OBSERVER_MODES`; a scenario's own ``meta.observer_mode`` wins."""
    cost_limit: float | None = None
    """US dollars the agent and user may spend in the episode; reaching it ends it as ``cost_limit``."""

    def __post_init__(self) -> None:
        for name in ("max_steps", "max_errors", "max_tool_calls_per_message", "max_tool_calls"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InputError(f"{name} must be a whole number of at least 1, got {value!r}")
        if self.timeout is not None:
            timeout = finite_float(self.timeout, 0, low_open=True, expected="timeout must be a positive, finite number")
            object.__setattr__(self, "timeout", timeout)
        if self.cost_limit is not None:
            expected = "cost_limit must be a positive, finite amount"
            limit = finite_float(self.cost_limit, 0, low_open=True, expected=expected)
            object.__setattr__(self, "cost_limit", limit)
        if self.observer_mode not in OBSERVER_MODES:
            raise InputError(f"observer_mode must be one of {list(OBSERVER_MODES)}, got {self.observer_mode!r}")

    def with_(self, **changes: Any) -> EpisodeLimits:
        """A copy with ``changes`` applied (checked like a new value)."""
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """The limits as builtins (they cross process boundaries and go into results files)."""
        return asdict(self)

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> EpisodeLimits:
        """Limits from a mapping of field names; missing fields keep their defaults, unknown ones are refused."""
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - names)
        if unknown:
            raise InputError(f"unknown episode limit(s) {unknown}; known: {sorted(names)}")
        return cls(**dict(data))
