"""litellm without the per-call bookkeeping we never read: its own cost and its success logging.

Each ``litellm.completion`` prices its response for its logging (a
``_hidden_params["response_cost"]`` nobody here reads: :class:`LLMClient`
prices every response itself, once) and hands a success-logging job to a
background thread that builds a logging payload for callbacks. With no litellm
callback, budget or cost tracking configured in the process, neither has any
effect we could see; together they were about a third of litellm's CPU per
call (profiled against the local fake server).

:func:`quiet_call` turns both off around one of our calls, and only while
nothing in the process would read them: as soon as someone registers a litellm
callback (``litellm.success_callback``, ``litellm.callbacks``...) or sets
``litellm.max_budget``, our calls are logged and priced by litellm as before.
Other code using litellm in the same process is never affected (the switch is
a context variable of our call). Should litellm's internals differ from what is
expected here, nothing is switched off and calls run as they always did.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any

__all__ = ["install", "quiet_call"]

_QUIET: ContextVar[bool] = ContextVar("pibench_litellm_quiet", default=False)
_OBSERVERS = (
    "callbacks",
    "input_callback",
    "success_callback",
    "failure_callback",
    "service_callback",
    "_async_input_callback",
    "_async_success_callback",
    "_async_failure_callback",
)
_installed: dict[str, Any] = {}
"""``internal_sub_call`` (litellm's switch for its background success logging) once :func:`install` found it."""


def install(logging_class: Any, internal_sub_call: Any) -> None:
    """Wrap the pricing of litellm's ``Logging`` to stand aside inside :func:`quiet_call` (once per process).

    ``logging_class`` is ``litellm.litellm_core_utils.litellm_logging.Logging``, ``internal_sub_call``
    ``litellm._internal_context.internal_sub_call`` (the client imports them with litellm).
    """
    if _installed:
        return
    original = getattr(logging_class, "response_cost_calculator", None)
    if original is None or not callable(internal_sub_call):  # another litellm: leave it as it is
        _installed["internal_sub_call"] = None
        return
    if not getattr(original, "pibench_quiet", False):

        @functools.wraps(original)
        def response_cost_calculator(self: Any, *args: Any, **kwargs: Any) -> Any:
            if _QUIET.get():
                return None  # our own call: LLMClient prices the response itself
            return original(self, *args, **kwargs)

        response_cost_calculator.pibench_quiet = True  # type: ignore[attr-defined]
        logging_class.response_cost_calculator = response_cost_calculator
    _installed["internal_sub_call"] = internal_sub_call


def _observed(litellm: Any) -> bool:
    """Whether anything in the process reads litellm's logging or its cost (a callback, a budget)."""
    return any(getattr(litellm, name, None) for name in _OBSERVERS) or bool(getattr(litellm, "max_budget", None))


@contextlib.contextmanager
def quiet_call(litellm: Any) -> Iterator[None]:
    """Inside: litellm neither prices our response nor logs it, unless something in the process would see it."""
    internal_sub_call = _installed.get("internal_sub_call")
    if internal_sub_call is None or _observed(litellm):
        yield
        return
    token = _QUIET.set(True)
    try:
        with internal_sub_call():  # no background success-logging job for this call
            yield
    finally:
        _QUIET.reset(token)
