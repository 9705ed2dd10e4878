"""Participant calls against the episode deadline, on one thread per episode."""

from __future__ import annotations

import queue
import threading
import time
from typing import Any

from pytest_pibench.episode import interrupt

__all__ = ["CallTimeout", "ParticipantCaller"]


class CallTimeout(Exception):
    """The call did not return before the episode's deadline (it was abandoned)."""


class ParticipantCaller:
    """Runs participant calls against the episode deadline.

    A participant whose class sets ``pibench_builtin = True`` (the built-in
    oracle, baselines and scripted user: computed from the scenario, they
    never wait and never change the messages they are given) is called
    directly, and the loop gives it and takes from it messages without
    defensive copies. A subclass that waits (a model, a network) or changes
    messages sets it to False.

    With a deadline, every call of the episode runs on one daemon thread (so
    agents that keep thread-bound resources, such as an event loop, see the same
    thread throughout); a call that overruns is abandoned with its thread, which
    cannot block interpreter exit.
    """

    def __init__(self, deadline: float | None) -> None:
        self.deadline = deadline
        self._jobs: queue.SimpleQueue[tuple[Any, tuple[Any, ...], dict[str, Any], threading.Event]] | None = None

    def _worker(self) -> None:
        assert self._jobs is not None
        while True:
            fn, args, outcome, done = self._jobs.get()
            try:
                outcome["value"] = fn(*args)
            except BaseException as exc:  # re-raised in the episode's thread
                outcome["error"] = exc
            done.set()

    @staticmethod
    def _wait(done: threading.Event, deadline: float) -> bool:
        """Wait for the call until the deadline; a stop (Ctrl-C, SIGTERM) ends the wait at once.

        In the main thread the signal itself interrupts the wait; an episode
        running ahead on another thread (``--pibench-concurrency``) sees the
        stop through the flag, polled here.
        """
        if threading.current_thread() is threading.main_thread():
            return done.wait(max(0.0, deadline - time.monotonic()))
        while True:
            remaining = deadline - time.monotonic()
            if done.wait(max(0.0, min(remaining, 0.2))):
                return True
            if interrupt.requested():
                raise KeyboardInterrupt
            if remaining <= 0.2:
                return False

    def __call__(self, fn: Any, *args: Any, limit: float | None = None) -> Any:
        deadline = self.deadline if limit is None else time.monotonic() + limit
        if deadline is None or getattr(getattr(fn, "__self__", None), "pibench_builtin", False):
            # No deadline, or a built-in participant (oracle, baselines, scripted user) that computes its
            # answer from the scenario and cannot hang: a thread hop per call would only cost time.
            return fn(*args)
        if self._jobs is None:
            self._jobs = queue.SimpleQueue()
            threading.Thread(target=self._worker, name="pibench-participant", daemon=True).start()
        outcome: dict[str, Any] = {}
        done = threading.Event()
        self._jobs.put((fn, args, outcome, done))
        try:
            finished = self._wait(done, deadline)
        except Exception as exc:  # only a signal can break the wait (e.g. "release unlocked lock")
            raise KeyboardInterrupt from exc
        if not finished:
            self._jobs = None  # the worker is stuck: later calls get a fresh one
            raise CallTimeout
        if "error" in outcome:
            raise outcome["error"]
        return outcome["value"]
