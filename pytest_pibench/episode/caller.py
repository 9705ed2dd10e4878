"""Participant calls against the episode deadline, on one thread per episode.

Everything a participant's code raises comes back as :class:`ParticipantRaised`,
a plain ``Exception`` carrying only strings: ``SystemExit``,
``GeneratorExit``, a ``KeyboardInterrupt`` raised by the participant itself,
an exception whose ``__str__`` raises or hangs. Only a real stop (Ctrl-C or
SIGTERM from outside, see :mod:`~pytest_pibench.episode.interrupt`) is raised
as ``KeyboardInterrupt``.
"""

from __future__ import annotations

import queue
import threading
import time
import traceback
from typing import Any

from pytest_pibench.episode import interrupt
from pytest_pibench.episode.protocols import InfrastructureError

__all__ = [
    "TRACEBACK_LIMIT",
    "CallTimeout",
    "ParticipantCaller",
    "ParticipantRaised",
    "bound_traceback",
    "is_builtin",
    "is_real_stop",
]

TRACEBACK_LIMIT = 8_000
"""Characters kept of a participant's traceback: its first 2,000 and its last 6,000 (the raising frames)."""


class CallTimeout(Exception):
    """The call did not return before the episode's deadline (it was abandoned)."""


class ParticipantRaised(Exception):
    """A participant's call raised: the exception described in strings, safe to keep and to show.

    ``infrastructure`` is True for an :class:`InfrastructureError` (a model
    provider or network stayed unreachable: not the participant's own failure).
    """

    def __init__(
        self, type_name: str, text: str, tb: str, *, infrastructure: bool = False, original: BaseException | None = None
    ) -> None:
        super().__init__(f"{type_name}: {text}" if text else type_name)
        self.original = original
        """The exception itself: for the harness to recognise its own (never read for text: that is done)."""
        self.type_name = type_name
        self.text = text
        self.tb = tb
        self.infrastructure = infrastructure


def bound_traceback(text: str, limit: int = TRACEBACK_LIMIT) -> str:
    """``text`` when it fits, else its head and tail around a marker (a RecursionError's is 100 KB and more)."""
    if len(text) <= limit:
        return text
    head, tail = limit // 4, limit - limit // 4
    return f"{text[:head]}\n… [traceback cut: {len(text) - limit:,} characters] …\n{text[-tail:]}"


def is_builtin(participant: Any) -> bool:
    """Whether ``participant``'s class is a trusted built-in (``pibench_builtin = True``): called directly.

    Read from the class, never the instance: an agent object's own attribute
    look-up is its code, and could hang.
    """
    return bool(getattr(type(participant), "pibench_builtin", False))


def _safe_text(exc: BaseException) -> str:
    try:
        text = str(exc)
    except BaseException:  # the participant's own __str__ failed: say so instead
        return "<the exception's text could not be read>"
    return text if type(text) is str else "<the exception's text is not a string>"


def _describe(exc: BaseException) -> ParticipantRaised:
    """``exc`` in strings, made on the thread that caught it (under the deadline: its ``__str__`` is foreign code)."""
    try:
        tb = "".join(traceback.format_exception(exc))
    except BaseException:
        tb = ""
    return ParticipantRaised(
        type(exc).__name__,
        _safe_text(exc)[:2_000],
        bound_traceback(tb),
        infrastructure=isinstance(exc, InfrastructureError),
        original=exc,
    )


def is_real_stop(exc: BaseException) -> bool:
    """Whether ``exc`` caught around a direct call is a stop from outside rather than the participant's own.

    A signal only ever interrupts the main thread; when stop signals are
    watched, a real one is recorded before the ``KeyboardInterrupt`` is raised.
    Unwatched (the Python API), a ``KeyboardInterrupt`` on the main thread is
    taken to be Ctrl-C.
    """
    if not isinstance(exc, KeyboardInterrupt):
        return False
    if interrupt.requested():
        return True
    return threading.current_thread() is threading.main_thread() and not interrupt.watching()


_Job = tuple[Any, tuple[Any, ...], dict[str, Any], Any]
"""``(function, arguments, outcome, done)``: one call for the worker thread; ``done`` is a held lock it releases.

A plain lock as a one-shot latch, not an ``Event``: releasing and waiting on it run
in C, where an ``Event`` runs a ``Condition`` in Python on both sides of every call
(measured: a few percent of a run's CPU with 64 episodes in flight)."""


class ParticipantCaller:
    """Runs participant calls against the episode deadline.

    ``direct=True`` calls ``fn`` on the caller's thread: for the built-in
    participants (the oracle, the baselines and the scripted user: classes with
    ``pibench_builtin = True``, computed from the scenario, never waiting), for
    whom a thread hop per call would only cost time.

    With a deadline, every other call of the episode runs on one daemon thread
    (so participants that keep thread-bound resources, such as an event loop,
    see the same thread throughout); a call that overruns is abandoned with its
    thread, which cannot block interpreter exit. The deadline can be moved
    (:attr:`deadline`) between calls: an agent is built under one and plays its
    episode under the next, on the same thread.
    """

    def __init__(self, deadline: float | None) -> None:
        self.deadline = deadline
        self._jobs: queue.SimpleQueue[_Job | None] | None = None

    def close(self) -> None:
        """End the worker thread once its current call returns (an idle one at once); later calls start a new one.

        Without it each episode would leave an idle thread behind for the life of the process.
        """
        if self._jobs is not None:
            self._jobs.put(None)
            self._jobs = None

    @staticmethod
    def _worker(jobs: queue.SimpleQueue[_Job | None]) -> None:
        while True:  # its own queue: an abandoned worker that wakes up later finds no more work, never another's
            job = jobs.get()
            if job is None:  # close(): the episode is over
                return
            fn, args, outcome, done = job
            try:
                outcome["value"] = fn(*args)
            except BaseException as exc:  # whatever it is, it came from the participant: described here
                outcome["error"] = _describe(exc)
            done.release()

    @staticmethod
    def _wait(done: Any, deadline: float) -> bool:
        """Wait for the call until the deadline; a stop (Ctrl-C, SIGTERM) ends the wait at once.

        In the main thread the signal itself interrupts the wait; an episode
        running ahead on another thread (``--pibench-concurrency``) sees the
        stop through the flag, polled here.
        """
        if threading.current_thread() is threading.main_thread():
            return bool(done.acquire(timeout=max(0.0, deadline - time.monotonic())))
        while True:
            remaining = deadline - time.monotonic()
            if done.acquire(timeout=max(0.0, min(remaining, 0.2))):
                return True
            if interrupt.requested():
                raise KeyboardInterrupt
            if remaining <= 0.2:
                return False

    def __call__(self, fn: Any, *args: Any, limit: float | None = None, direct: bool = False) -> Any:
        """``fn(*args)``'s value.

        Raises:
            ParticipantRaised: whatever ``fn`` raised, ``BaseException`` included.
            CallTimeout: ``fn`` did not return before the deadline (or within ``limit`` seconds).
            KeyboardInterrupt: a stop from outside (Ctrl-C, SIGTERM), never the participant's own.
        """
        deadline = self.deadline if limit is None else time.monotonic() + limit
        if deadline is None or direct:
            try:
                return fn(*args)
            except BaseException as exc:
                if is_real_stop(exc):
                    raise
                raise _describe(exc) from None
        if self._jobs is None:
            self._jobs = queue.SimpleQueue()
            threading.Thread(target=self._worker, args=(self._jobs,), name="pibench-participant", daemon=True).start()
        outcome: dict[str, Any] = {}
        done = threading.Lock()
        done.acquire()  # released by the worker once the call returned
        self._jobs.put((fn, args, outcome, done))
        try:
            finished = self._wait(done, deadline)
        except Exception as exc:  # only a signal can break the wait (e.g. "release unlocked lock")
            raise KeyboardInterrupt from exc
        if not finished:
            self._jobs = None  # the worker is stuck: later calls get a fresh one
            raise CallTimeout
        if "error" in outcome:
            if interrupt.requested():  # a stop surfaced as the participant's exception (e.g. a broken wait)
                raise KeyboardInterrupt
            raise outcome["error"]
        return outcome["value"]
