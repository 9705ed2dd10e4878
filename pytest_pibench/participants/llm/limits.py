"""Provider limits: per-model caps on concurrent requests and requests per minute, shared by a process.

With many episodes in flight (``--pibench-concurrency``, ``-n``), a rate-limited
key would answer 429 after 429. A limit makes callers wait for a slot instead of
being refused: ``--pibench-rate-limit gpt-4o-mini=8/500`` keeps at most 8
requests to that model in flight and starts at most 500 in any 60 seconds, for
every participant (agent, user, judge) of the process. Under pytest-xdist the
plugin divides each limit by the number of workers, so the whole run keeps it.

A call that had to wait is *throttled*; :class:`~pytest_pibench.participants.llm.client.Usage`
counts them and the summary reports them next to the retries.
"""

from __future__ import annotations

import math
import re
import threading
import time
from collections import deque
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass

__all__ = ["ProviderLimit", "limiter_for", "parse_rate_limit", "per_worker"]

_SPEC = re.compile(r"^\s*(?P<model>[^=]+?)\s*=\s*(?P<concurrent>\d*)\s*(?:/\s*(?P<rpm>\d+))?\s*$")


@dataclass(frozen=True)
class ProviderLimit:
    """At most ``concurrent`` requests in flight and ``rpm`` started per 60 s (None: no cap)."""

    concurrent: int | None = None
    rpm: int | None = None


def parse_rate_limit(text: str) -> tuple[str, ProviderLimit]:
    """``MODEL=CONCURRENT/RPM`` (either part may be left out: ``m=8``, ``m=/500``) -> ``(model, limit)``.

    Raises:
        ValueError: naming what is wrong.
    """
    match = _SPEC.match(text)
    if not match or not (match["concurrent"] or match["rpm"]):
        raise ValueError(f"expected MODEL=CONCURRENT/RPM (e.g. gpt-4o-mini=8/500), got {text!r}")
    concurrent = int(match["concurrent"]) if match["concurrent"] else None
    rpm = int(match["rpm"]) if match["rpm"] else None
    if concurrent == 0 or rpm == 0:
        raise ValueError(f"{text!r}: limits are at least 1")
    return match["model"], ProviderLimit(concurrent, rpm)


def per_worker(limit: ProviderLimit, workers: int) -> ProviderLimit:
    """The share of one of ``workers`` processes (rounded up, at least 1), so the run as a whole keeps ``limit``."""

    def share(value: int | None) -> int | None:
        return None if value is None else max(1, math.ceil(value / max(1, workers)))

    return ProviderLimit(share(limit.concurrent), share(limit.rpm))


class _Limiter:
    def __init__(self, limit: ProviderLimit, window: float = 60.0) -> None:
        self.limit = limit
        self.window = window  # seconds of the rpm window (tests shorten it)
        self._slots = threading.BoundedSemaphore(limit.concurrent) if limit.concurrent else None
        self._starts: deque[float] = deque()
        self._lock = threading.Lock()

    @contextmanager
    def slot(self) -> Iterator[bool]:
        """Hold one request slot; yields whether the caller had to wait for it (throttled)."""
        waited = False
        if self._slots is not None and not self._slots.acquire(blocking=False):
            waited = True
            self._slots.acquire()
        try:
            waited = self._wait_for_rate() or waited
            yield waited
        finally:
            if self._slots is not None:
                self._slots.release()

    def _wait_for_rate(self) -> bool:
        if not self.limit.rpm:
            return False
        waited = False
        while True:
            with self._lock:
                now = time.monotonic()
                while self._starts and now - self._starts[0] >= self.window:
                    self._starts.popleft()
                if len(self._starts) < self.limit.rpm:
                    self._starts.append(now)
                    return waited
                pause = self.window - (now - self._starts[0])
            waited = True
            time.sleep(min(max(pause, 0.01), 1.0))


_LIMITERS: dict[tuple[str, ProviderLimit], _Limiter] = {}
_REGISTRY_LOCK = threading.Lock()


def limiter_for(model: str, limits: Mapping[str, ProviderLimit] | None) -> _Limiter | None:
    """The process-wide limiter of ``model`` when ``limits`` names it, else None (no cap).

    Every participant of the process using ``model`` with the same limit
    shares one limiter.
    """
    if not limits or model not in limits:
        return None
    key = (model, limits[model])
    with _REGISTRY_LOCK:
        if key not in _LIMITERS:
            _LIMITERS[key] = _Limiter(limits[model])
        return _LIMITERS[key]
