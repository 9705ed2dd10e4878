"""One asyncio event loop per process, on a daemon thread, for the async a2a-sdk client.

Participants are synchronous (``generate`` is called from an episode's thread,
many at once with ``--pibench-concurrency``); the SDK is asyncio. Every A2A call
of the process runs on this one loop, so connections are pooled and hundreds of
episodes in flight cost no thread each.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["run"]

_T = TypeVar("_T")
_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None


def _running_loop() -> asyncio.AbstractEventLoop:
    global _loop
    with _lock:
        if _loop is None or _loop.is_closed():
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="pibench-a2a-loop", daemon=True).start()
            _loop = loop
        return _loop


def run(coroutine: Coroutine[Any, Any, _T], timeout: float | None = None) -> _T:
    """Run ``coroutine`` on the shared loop and wait for its result (at most ``timeout`` seconds).

    Raises:
        TimeoutError: the coroutine did not finish in time (it is cancelled).
    """
    future = asyncio.run_coroutine_threadsafe(coroutine, _running_loop())
    try:
        return future.result(timeout)
    except TimeoutError:
        future.cancel()
        raise
