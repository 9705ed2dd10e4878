"""The run's output files at start-up: writable, and written by this run only.

An unwritable results, leaderboard or HTML path is a usage error before any
episode runs, and so is a results path another live run is writing: two runs
on one path would each replace the other's placeholder and journal, and
whichever finished last would silently delete the other's rows.
"""

from __future__ import annotations

import pytest

from pytest_pibench.plugin.host import is_xdist_worker
from pytest_pibench.plugin.settings import Settings

__all__ = ["check_outputs"]


def check_outputs(config: pytest.Config, settings: Settings) -> None:
    """Probe the output paths and take the results path's lock (controller only; exit 4 when refused).

    Done only when the run benchmarks (an agent, scenario folders, or an output
    path given): a project's plain test run does no file I/O at start-up. The
    xdist workers never write the results file, so only the controller locks it.
    """
    if is_xdist_worker(config):
        return
    explicit = config.getoption("pibench_results") is not None or settings.leaderboard or settings.html
    if not (settings.run.agents or settings.scenario_dirs or explicit):
        return
    from pytest_pibench.results.document import unwritable_reason
    from pytest_pibench.results.files import lock_results

    for option, path in (("results", settings.results), ("leaderboard", settings.leaderboard), ("html", settings.html)):
        problem = unwritable_reason(path) if path else None
        if problem:
            raise pytest.UsageError(f"--pibench-{option}: {problem}")
    if not settings.results or config.option.collectonly:
        return  # --co writes nothing
    try:
        lock = lock_results(settings.results)
    except ValueError as exc:
        raise pytest.UsageError(f"--pibench-results: {exc}") from None
    config.add_cleanup(lock.release)  # also when a later start-up check fails
    if lock.warning:
        config.issue_config_time_warning(pytest.PytestConfigWarning(lock.warning), stacklevel=2)
