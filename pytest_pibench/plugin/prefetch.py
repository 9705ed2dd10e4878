"""In-process concurrency (``--pibench-concurrency N``): up to N episodes in flight in each process.

A run is bound by model latency, so episodes should overlap their waits. pytest
runs one item at a time, and it must stay so: each scenario file is an item with
a subtest per check, reported in order, and ``-x``, ``--maxfail``, Ctrl-C and
the per-episode timeout keep their meaning. So the items themselves stay
sequential and only their episodes run ahead: while an item waits for its
episode, up to N episodes of it and the scenario items this process will run
next are kept running on a thread pool (refilled as each finishes, at most 4N
finished rows held back), and each item reports its own episode in order.
Under pytest-xdist, "the items this process will run" is the worker's own
queue; without xdist it is the session's item list.

An episode is deterministic given its seed, and each one builds its own agent
and user, so results do not depend on N or ``-n``. Episodes whose agent cannot
be built without running fixtures (an overridden ``pibench_agent`` fixture) or
whose agent is one shared instance (``module:instance``) are not run ahead:
they run in their item, as without this option. When the session stops
(``-x``, ``--maxfail``, Ctrl-C), episodes not yet started are cancelled; those
already running finish (bounded by the timeout) and are discarded.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, wait

import pytest

from pytest_pibench.plugin.host import is_xdist_worker, xdist_queue
from pytest_pibench.results.types import ResultRow

__all__ = ["EpisodePrefetcher", "Job"]

Job = Callable[[], ResultRow]
"""Runs one item's episode and returns its row (the work that may run ahead)."""


class EpisodePrefetcher:
    """Runs the episodes of upcoming items on ``concurrency`` threads.

    ``job_for(item)`` says how to run an item's episode ahead of time, or None
    when it must run in its item; :meth:`row_for` gives an item its row.
    """

    def __init__(
        self, session: pytest.Session, concurrency: int, job_for: Callable[[pytest.Item], Job | None]
    ) -> None:
        self.session = session
        self.concurrency = concurrency
        self._job_for = job_for
        self._pool = _DaemonPool(concurrency)
        self._futures: dict[str, Future[ResultRow]] = {}
        self._consumed: set[str] = set()
        self.buffered = 4 * concurrency
        """Most finished-but-unreported episodes kept (rows wait in memory for their items)."""
        self._lock = threading.Lock()
        self._positions: dict[str, int] | None = None
        self._stealable = is_xdist_worker(session.config)  # only xdist takes queued items back
        self.ran_ahead = 0
        """How many episodes were started ahead of their item (for tests and benchmarks)."""

    def row_for(self, item: pytest.Item, run_here: Job) -> ResultRow:
        """``item``'s row: its episode started ahead (waited for), else ``run_here()`` now.

        Keeps up to ``concurrency`` episodes of the items from this one on
        running while it waits, refilling as any of them finishes, so one slow
        episode does not hold the others back.
        """
        self._schedule(item)
        with self._lock:
            future = self._futures.pop(item.nodeid, None)
            self._consumed.add(item.nodeid)
        if future is None:
            return run_here()
        while not future.done():
            with self._lock:
                running = [f for f in self._futures.values() if not f.done()]
            wait([future, *running], return_when=FIRST_COMPLETED)
            self._schedule(item)
        return future.result()

    def _schedule(self, current: pytest.Item) -> None:
        if self.session.shouldstop or self.session.shouldfail:
            self.cancel()
            return
        upcoming = self._upcoming(current)
        if self._stealable:
            with self._lock:  # items this process will no longer run (xdist work stealing took them)
                stale = set(self._futures) - {item.nodeid for item in upcoming}
                for nodeid in stale:
                    self._pool.cancel(self._futures.pop(nodeid))
        for item in upcoming:
            with self._lock:  # the pool's count, not a walk of the futures: this runs as every episode ends
                if self._pool.unfinished >= self.concurrency or len(self._futures) >= self.buffered:
                    return
                if item.nodeid in self._futures or item.nodeid in self._consumed:
                    continue
            job = self._job_for(item)
            if job is None:
                continue
            with self._lock:
                self._futures[item.nodeid] = self._pool.submit(job)
                self.ran_ahead += 1

    def _upcoming(self, current: pytest.Item) -> list[pytest.Item]:
        """``current`` and the items after it that this process will run, in order (a window, not all)."""
        items = self.session.items
        window = 2 * self.buffered
        queue = xdist_queue(self.session.config)
        if queue is not None:  # the worker's queue: what xdist handed this process and has not taken back
            return [current, *(items[i] for i in queue[:window] if 0 <= i < len(items))]
        if self._positions is None:
            self._positions = {item.nodeid: index for index, item in enumerate(items)}
        start = self._positions.get(current.nodeid)
        return [current] if start is None else items[start : start + window + 1]

    def drop(self, item: pytest.Item) -> None:
        """``item`` will not report an episode (its trial was not needed): cancel any run of it."""
        with self._lock:
            future = self._futures.pop(item.nodeid, None)
            self._consumed.add(item.nodeid)
        if future is not None:
            self._pool.cancel(future)

    def cancel(self) -> None:
        """Drop every episode not started yet (running ones finish and are discarded)."""
        with self._lock:
            futures, self._futures = self._futures, {}
        for future in futures.values():
            self._pool.cancel(future)

    def close(self) -> None:
        self.cancel()
        self._pool.shutdown()


class _DaemonPool:
    """At most ``workers`` daemon threads running jobs into futures, started as jobs need them.

    Not ``ThreadPoolExecutor``: its threads are joined at interpreter exit, so
    one episode of an agent that hangs with no timeout would keep a stopped
    run (Ctrl-C, ``-x``) from exiting. Episodes left running when the session
    ends are discarded; daemon threads never hold the process. A thread starts
    only when a job finds none idle, so a large ``--pibench-concurrency`` over a
    few items starts a few threads, not ``workers`` of them.
    """

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self._jobs: queue.SimpleQueue[tuple[Future[ResultRow], Job] | None] = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []
        self._idle = 0
        """Threads waiting for a job that no submitted job has claimed yet."""
        self.unfinished = 0
        """Jobs submitted and neither done nor cancelled (queued or running)."""
        self._lock = threading.Lock()

    def _work(self) -> None:
        while (task := self._jobs.get()) is not None:
            future, job = task
            ran = future.set_running_or_notify_cancel()  # False: cancelled, already counted off by cancel()
            if ran:
                try:
                    future.set_result(job())
                except BaseException as exc:  # handed to the item that waits for it (Ctrl-C too)
                    future.set_exception(exc)
            with self._lock:
                self._idle += 1
                self.unfinished -= ran

    def submit(self, job: Job) -> Future[ResultRow]:
        future: Future[ResultRow] = Future()
        with self._lock:
            self.unfinished += 1
            if self._idle:
                self._idle -= 1  # an idle thread will take this job
            elif len(self._threads) < self.workers:
                thread = threading.Thread(target=self._work, name=f"pibench-episode-{len(self._threads)}", daemon=True)
                self._threads.append(thread)
                thread.start()
        self._jobs.put((future, job))
        return future

    def cancel(self, future: Future[ResultRow]) -> None:
        """Cancel ``future``'s job if it has not started (it no longer counts as unfinished)."""
        with self._lock:
            if not future.cancelled() and future.cancel():
                self.unfinished -= 1

    def shutdown(self) -> None:
        with self._lock:
            threads = len(self._threads)
        for _ in range(threads):
            self._jobs.put(None)

