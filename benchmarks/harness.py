"""Harness cost without any model: the engine per oracle episode, the plugin per item, the whole suite.

    python benchmarks/harness.py --repeats 5

Engine: ``run_episode`` + ``evaluate`` of the oracle on every bundled scenario
(bindings made once, as a run makes them), per domain, in milliseconds per
episode and episodes per second. Plugin: ``pytest --pibench-agent=oracle`` over
the bundled suite, wall time with start-up; the same with ``--co`` (start-up and
collection only); the per-item overhead is (run - collect-only - engine time of
``run_one``) / items, which includes each item's two dozen check subtests.
Medians over the repeats. Each pytest figure comes with the CPU time (user + system) the process
used, which another load on a shared machine disturbs much less than the wall time.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

from pytest_pibench import (
    OracleAgent,
    bind_scenario,
    bundled_scenarios_dir,
    discover_scenarios,
    evaluate,
    load_scenario,
    resolve_agent,
    run_episode,
    run_one,
)


def median_seconds(work: Callable[[], object], repeats: int) -> float:
    work()  # warm: imports, domain packs, caches
    samples = []
    for _ in range(repeats):
        started = time.perf_counter()
        work()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def pytest_wall(extra: list[str], repeats: int, plugin: bool = True) -> tuple[float, float]:
    """Median wall and median CPU seconds of one pytest run."""
    # As users run it: Python writes and reuses its bytecode caches (a machine that sets
    # PYTHONDONTWRITEBYTECODE recompiles every module, and pytest re-rewrites the plugin's, on every start).
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    ours = ["--pibench-agent=oracle", "--pibench-results=r.json"] if plugin else ["-p", "no:pibench"]
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *ours, *extra]
    walls, cpus = [], []
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(command, cwd=tmp, capture_output=True, check=False, env=env)  # warm: bytecode caches
        for _ in range(repeats):
            started, cpu = time.perf_counter(), _children_cpu()
            subprocess.run(command, cwd=tmp, capture_output=True, check=False, env=env)
            walls.append(time.perf_counter() - started)
            cpus.append(_children_cpu() - cpu)
    return statistics.median(walls), statistics.median(cpus)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    scenarios = [load_scenario(path) for path in discover_scenarios(bundled_scenarios_dir())]
    bound = [(scenario, bind_scenario(scenario)) for scenario in scenarios]
    print(f"{'engine (oracle episode + scoring)':<36} {'episodes':>8} {'ms/episode':>11} {'episodes/s':>11}")
    for domain in [*sorted({b.domain.name for _, b in bound}), "all"]:
        mine = [(s, b) for s, b in bound if domain in ("all", b.domain.name)]
        seconds = median_seconds(
            lambda mine=mine: [evaluate(s, run_episode(s, OracleAgent(s), binding=b)) for s, b in mine], args.repeats
        )
        per = seconds / len(mine)
        print(f"  {domain:<34} {len(mine):>8} {per * 1000:>11.3f} {1 / per:>11.0f}")
    oracle = resolve_agent("oracle")
    engine = median_seconds(lambda: [run_one(s, oracle) for s in scenarios], args.repeats)
    run, run_cpu = pytest_wall([], args.repeats)
    collect, collect_cpu = pytest_wall(["--co"], args.repeats)
    items = len(scenarios)
    print(f"run_one (episode, scoring, row): {engine / items * 1000:.3f} ms per item")
    print(f"pytest, whole bundled suite ({items} items), wall with start-up: {run:.2f} s (CPU {run_cpu:.2f} s)")
    print(f"pytest --co (start-up and collection only): {collect:.2f} s (CPU {collect_cpu:.2f} s)")
    bare, bare_cpu = pytest_wall(["--co"], args.repeats, plugin=False)
    print(f"pytest --co without the plugin (pytest, the other installed plugins): {bare:.2f} s (CPU {bare_cpu:.2f} s)")
    print(f"plugin overhead per item, subtests included: {(run - collect - engine) / items * 1000:.2f} ms")


if __name__ == "__main__":
    main()
