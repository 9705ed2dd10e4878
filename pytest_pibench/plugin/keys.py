"""The plugin's shared state: stash keys, label marks, stop-signal watching.

Its own module so that collection, items and the collector use them without
importing the hook module (which imports them).
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_pibench.plugin.host import is_xdist_worker
from pytest_pibench.plugin.settings import Settings
from pytest_pibench.results.types import ResultRow

__all__ = [
    "AGENT_NAME_KEY",
    "DONE_KEY",
    "LABEL_MARKS",
    "PREFETCH_KEY",
    "REDIRECTED_KEY",
    "RESUME_KEY",
    "ROW_KEY",
    "SETTINGS_KEY",
    "SETTLED_KEY",
    "USAGE_ERROR_KEY",
    "watch_stop_signals",
]

SETTINGS_KEY = pytest.StashKey[Settings]()
"""The run's :class:`Settings` (every process)."""
ROW_KEY = pytest.StashKey[ResultRow]()
"""The result row of a scenario item, set when its episode has run."""
DONE_KEY = pytest.StashKey[bool]()
"""Set when the item's test body has finished (so subtest reports do not carry the row)."""
AGENT_NAME_KEY = pytest.StashKey[str]()
"""The agent name of a scenario item, as soon as it is known (crash rows keep it)."""
REDIRECTED_KEY = pytest.StashKey[bool]()
"""Set when ``--pibench-agent`` without paths replaced pytest's paths with the scenario folders."""
RESUME_KEY = pytest.StashKey[Any]()
"""The :class:`ResumeIndex` of ``--pibench-resume`` (every process)."""
SETTLED_KEY = pytest.StashKey[dict[str, Any]]()
"""An item whose trial was not needed (its scenario's verdict was settled): agent, scenario_id, trial, reason."""
USAGE_ERROR_KEY = pytest.StashKey[str]()
"""A scenario item that could not run for a usage error (its ``pibench_agent`` fixture's agent): the run exits 4."""
PREFETCH_KEY = pytest.StashKey[Any]()
"""The :class:`~pytest_pibench.plugin.prefetch.EpisodePrefetcher` of ``--pibench-concurrency`` above 1."""

LABEL_MARKS = {"ALLOW": "allow", "ALLOW-CONDITIONAL": "allow_conditional", "DENY": "deny", "ESCALATE": "escalate"}
"""The marker of each decision label (``-m allow_conditional``)."""


def watch_stop_signals(config: pytest.Config) -> None:
    """Once scenario items run: Ctrl-C is never an agent's error, SIGTERM stops like Ctrl-C (controller).

    Installed only then, so a project's own test runs keep their signal handling.
    """
    from pytest_pibench.episode import interrupt

    if interrupt.install(sigterm=not is_xdist_worker(config)):
        config.add_cleanup(interrupt.uninstall)
