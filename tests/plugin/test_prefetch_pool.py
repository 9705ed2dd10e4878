"""The episode pool's count of unfinished jobs, which bounds how many episodes run ahead."""

from __future__ import annotations

import threading

from pytest_pibench.plugin.prefetch import _DaemonPool


def test_unfinished_counts_queued_and_running_jobs_and_drops_cancelled_ones() -> None:
    pool = _DaemonPool(1)
    release = threading.Event()
    started = threading.Event()

    def blocking() -> dict:
        started.set()
        release.wait(10)
        return {}

    running = pool.submit(blocking)
    assert started.wait(10)
    queued = [pool.submit(dict) for _ in range(3)]  # the one thread is busy: these wait on the queue
    assert pool.unfinished == 4
    pool.cancel(queued[0])
    pool.cancel(queued[0])  # twice: counted off once
    pool.cancel(running)  # running: cannot be cancelled, still unfinished
    assert pool.unfinished == 3
    release.set()
    assert running.result(10) == queued[1].result(10) == queued[2].result(10) == {}
    assert queued[0].cancelled()
    pool.shutdown()
    for thread in pool._threads:
        thread.join(10)
    assert pool.unfinished == 0
