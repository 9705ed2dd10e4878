"""Start-up checks of an agent or user named by an import spec.

A class whose ``generate`` takes the wrong arguments, or whose constructor
needs arguments, would otherwise fail in every episode, and a failed episode
is scored: the run would report a weak agent (Overall about 0.3) where there
is a broken one. So before any episode the resolver builds one participant
with its factory and checks that the protocol's methods exist and accept the
arguments the episode loop passes; what is wrong is an :class:`AgentSpecError`
(a usage error, exit 4).

Only what the loop itself needs is checked: ``init_state`` and ``generate``
must exist; ``set_seed``, ``is_stop`` and ``stop`` may be left out (the loop
skips them), but when present must accept their arguments.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from pytest_pibench.participants.schemes import AgentSpecError

__all__ = ["PROTOCOL_CALLS", "check_built", "check_instance", "participant_problems"]

# What the episode loop calls, in its order: method -> (the call as documented, positional arguments passed,
# required). Agent and user differ only in what init_state receives.
def _calls(init_state: str, init_arguments: int) -> dict[str, tuple[str, int, bool]]:
    return {
        "set_seed": ("set_seed(seed)", 1, False),
        "init_state": (init_state, init_arguments, True),
        "generate": ("generate(message, state)", 2, True),
        "is_stop": ("is_stop(message)", 1, False),
        "stop": ("stop(message, state)", 2, False),
    }


PROTOCOL_CALLS: dict[str, dict[str, tuple[str, int, bool]]] = {
    "agent": _calls("init_state(benchmark_context, tools, message_history)", 3),
    "user": _calls("init_state(scenario)", 1),
}


def participant_problems(obj: Any, role: str) -> list[str]:
    """What keeps ``obj`` from serving as ``role`` (``"agent"`` or ``"user"``): one line per method, or none."""
    problems = []
    kind = type(obj).__name__
    for method, (call, count, required) in PROTOCOL_CALLS[role].items():
        fn = getattr(obj, method, None)
        if fn is None:
            if required:
                problems.append(f"{kind} has no {method}() method (the benchmark calls {call})")
            continue
        if not callable(fn):
            problems.append(f"{kind}.{method} is not a method")
            continue
        try:
            signature = inspect.signature(fn)
        except (TypeError, ValueError):  # a builtin without introspection: nothing to check
            continue
        try:
            signature.bind(*([None] * count))
        except TypeError as exc:
            problems.append(f"{kind}.{method}{signature} cannot be called as {call}: {exc}")
    return problems


def check_built(make: Callable[[], Any], role: str, spec: str, what: str) -> None:
    """Build one participant with ``make`` and check it; ``what`` names the factory in messages.

    Raises:
        AgentSpecError: the factory needs arguments, raised, or built something that does not conform.
    """
    try:
        inspect.signature(make).bind()
    except TypeError as exc:
        raise AgentSpecError(
            f"{role} spec {spec!r}: {what}() cannot be called with no arguments ({exc}); the benchmark "
            f"builds one {role} per episode without arguments: give the parameters defaults, or name a "
            "zero-argument factory function (module:make_agent) that passes them"
        ) from None
    except ValueError:  # no signature to read: calling it tells
        pass
    try:
        built = make()
    except Exception as exc:
        raise AgentSpecError(f"{role} spec {spec!r}: {what}() raised {type(exc).__name__}: {exc}") from None
    check_instance(
        built, role, spec, "" if inspect.isclass(make) else f" (the factory {what}() returned {built!r:.80})"
    )


def check_instance(obj: Any, role: str, spec: str, made: str = "") -> None:
    """Raise :class:`AgentSpecError` listing what keeps ``obj`` from serving as ``role`` (``made``: how it was made)."""
    problems = participant_problems(obj, role)
    if problems:
        raise AgentSpecError(
            f"{role} spec {spec!r} does not implement the {role} protocol{made}: " + "; ".join(problems)
        )
