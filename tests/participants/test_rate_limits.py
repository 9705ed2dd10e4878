"""Provider limits (issue 13): at most N requests in flight and RPM per minute per model, counted as throttled."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from conftest import requires_llm
from pytest_pibench.participants.llm.limits import ProviderLimit, _Limiter, parse_rate_limit, per_worker
from pytest_pibench.testing import FakeLLMServer

MODEL = "openai/gpt-4o-mini"


@pytest.mark.parametrize(("text", "expected"), [
    ("gpt-4o-mini=8/500", ("gpt-4o-mini", ProviderLimit(8, 500))),
    ("openai/gpt-4o = 4", ("openai/gpt-4o", ProviderLimit(4, None))),
    ("m=/60", ("m", ProviderLimit(None, 60))),
])
def test_parse_rate_limit(text, expected):
    assert parse_rate_limit(text) == expected


@pytest.mark.parametrize("text", ["gpt-4o", "m=", "m=0/10", "m=x/10", "=3"])
def test_bad_rate_limits_say_what_is_expected(text):
    with pytest.raises(ValueError, match="MODEL=CONCURRENT/RPM|at least 1"):
        parse_rate_limit(text)


def test_a_limit_is_split_across_workers_rounding_up():
    assert per_worker(ProviderLimit(8, 500), 3) == ProviderLimit(3, 167)
    assert per_worker(ProviderLimit(1, None), 4) == ProviderLimit(1, None)  # never below one


class _CountingSemaphore(threading.BoundedSemaphore):
    """The stdlib semaphore, counting the callers it turned away, so a test can wait for them (no timing)."""

    def __init__(self, value: int) -> None:
        super().__init__(value)
        self.turned_away = 0
        self.changed = threading.Condition()

    def acquire(self, blocking: bool = True, timeout: float | None = None) -> bool:
        got = super().acquire(blocking, timeout)
        if not blocking and not got:
            with self.changed:
                self.turned_away += 1
                self.changed.notify_all()
        return got


def test_concurrent_requests_never_exceed_the_cap():
    limiter = _Limiter(ProviderLimit(concurrent=2))
    slots = limiter._slots = _CountingSemaphore(2)
    lock = threading.Lock()
    state = {"now": 0, "peak": 0, "waited": 0}

    def work() -> None:
        with limiter.slot() as waited:
            with lock:
                state["now"] += 1
                state["peak"] = max(state["peak"], state["now"])
                state["waited"] += int(waited)
            with lock:
                state["now"] -= 1

    with limiter.slot(), limiter.slot():  # the cap is taken: every request below must wait
        state["now"] = 2
        pool = [threading.Thread(target=work) for _ in range(4)]
        for thread in pool:
            thread.start()
        with slots.changed:  # all four were turned away (a limiter without a cap would let them in: peak 6)
            assert slots.changed.wait_for(lambda: slots.turned_away == 4 or state["peak"] > 2, timeout=30)
        state["now"] = 0
    for thread in pool:
        thread.join(30)
    assert state["peak"] <= 2 and state["waited"] == 4


class _Clock:
    """A clock the limiter reads and sleeps on: sleeping moves it, so the window test takes no real time."""

    def __init__(self) -> None:
        self.now = 0.0

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def test_requests_per_window_never_exceed_the_rate(monkeypatch):
    from pytest_pibench.participants.llm import limits

    clock = _Clock()
    monkeypatch.setattr(limits, "time", clock)
    limiter = _Limiter(ProviderLimit(rpm=3), window=0.4)
    started = clock.now
    waits = []
    for _ in range(6):
        with limiter.slot() as waited:
            waits.append((waited, round(clock.now - started, 3)))
    # three go at once; the fourth waits for the window to move; the next two fit the new window
    assert waits == [(False, 0.0), (False, 0.0), (False, 0.0), (True, 0.4), (False, 0.4), (False, 0.4)]


@requires_llm
@pytest.mark.slow
def test_llm_clients_of_a_process_share_the_model_limit_and_count_throttled_calls():
    from pytest_pibench.participants.llm.client import LLMClient

    limits: dict[str, Any] = {MODEL: {"concurrent": 2, "rpm": None}}
    with FakeLLMServer(latency=0.2) as server:
        params = {"api_key": "sk-test", "api_base": server.base_url, "retry_wait": 0.01, "timeout": 5,
                  "rate_limits": limits}
        clients = [LLMClient(MODEL, params) for _ in range(5)]  # e.g. five episodes' agents
        threads = [threading.Thread(target=c.complete, args=([{"role": "user", "content": "hi"}],)) for c in clients]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        assert server.peak_in_flight == 2
        assert sum(c.usage.calls for c in clients) == 5
        assert sum(c.usage.throttled for c in clients) == 3
        assert "rate_limits" not in server.requests[0]  # ours, never sent to the provider


def test_the_option_is_parsed_split_and_handed_to_llm_participants(toy_project):
    bad = toy_project.runpytest("scenarios", "--pibench-agent=oracle", "--pibench-rate-limit=gpt-4o")
    assert bad.ret == pytest.ExitCode.USAGE_ERROR
    bad.stderr.fnmatch_lines(["*--pibench-rate-limit: expected MODEL=CONCURRENT/RPM*"])
    toy_project.makeconftest("""
        import json
        from pytest_pibench.plugin.keys import SETTINGS_KEY

        def pytest_sessionfinish(session):
            settings = session.config.stash[SETTINGS_KEY]
            with open("limits.json", "w") as out:
                json.dump(settings.run.params("user"), out)
    """)
    toy_project.runpytest("scenarios", "--pibench-agent=oracle", "--pibench-rate-limit=m1=8/500",
                          "--pibench-rate-limit=m2=/60")
    import json

    seen = json.loads((toy_project.path / "limits.json").read_text())
    assert seen["rate_limits"] == {"m1": {"concurrent": 8, "rpm": 500}, "m2": {"concurrent": None, "rpm": 60}}
