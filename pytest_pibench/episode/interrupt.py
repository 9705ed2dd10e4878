"""Ctrl-C and SIGTERM: an orderly stop that is never recorded as anyone's error.

pytest turns SIGINT into ``KeyboardInterrupt`` and then writes its summary;
SIGTERM (what ``timeout`` and CI cancellation send) would kill the process
without one. :func:`install` makes SIGTERM take the same path and remembers
that a stop was asked for, so the episode loop can tell an interrupted wait
(which may surface as an odd ``RuntimeError``) from an agent's exception.
"""

from __future__ import annotations

import signal
import threading
from types import FrameType
from typing import Any

__all__ = ["install", "requested", "signal_name", "uninstall", "watching"]

_REQUESTED = threading.Event()
_SIGNAL: list[str] = []
_PREVIOUS: dict[int, Any] = {}


def requested() -> bool:
    """True once SIGINT or SIGTERM arrived in this process."""
    return _REQUESTED.is_set()


def watching() -> bool:
    """True while :func:`install`'s handlers are in place (a stop from outside is then always recorded)."""
    return bool(_PREVIOUS)


def signal_name() -> str | None:
    """``SIGINT`` or ``SIGTERM``: the first stop signal received, if any."""
    return _SIGNAL[0] if _SIGNAL else None


def _handler(signum: int, frame: FrameType | None) -> None:
    _REQUESTED.set()
    if not _SIGNAL:
        _SIGNAL.append(signal.Signals(signum).name)
    previous = _PREVIOUS.get(signum)
    if signum == signal.SIGINT and callable(previous):
        previous(signum, frame)  # pytest's own Ctrl-C handling (default: KeyboardInterrupt)
    raise KeyboardInterrupt


def install(*, sigterm: bool) -> bool:
    """Watch SIGINT (and turn SIGTERM into a Ctrl-C when ``sigterm``); main thread only.

    Returns True when handlers were installed now (False: already watching, or not the main thread).
    """
    if threading.current_thread() is not threading.main_thread() or _PREVIOUS:
        return False
    _REQUESTED.clear()
    _SIGNAL.clear()
    for signum in (signal.SIGINT, signal.SIGTERM) if sigterm else (signal.SIGINT,):
        previous = signal.getsignal(signum)
        if signum == signal.SIGINT and previous in (signal.SIG_IGN, None):
            continue  # a parent asked us to ignore Ctrl-C (e.g. a background job): keep it so
        _PREVIOUS[signum] = previous
        signal.signal(signum, _handler)
    return True


def uninstall() -> None:
    """Restore the handlers that :func:`install` replaced."""
    if threading.current_thread() is not threading.main_thread():
        return
    for signum, previous in _PREVIOUS.items():
        signal.signal(signum, previous if previous is not None else signal.SIG_DFL)
    _PREVIOUS.clear()
