"""Running a benchmark, below every front end: the config, the plan, one episode's row, the executor.

The plugin (and ``pi run`` through it), the green server and the Python API
each build a :class:`RunConfig` and hand planned items to one
:class:`Executor`; nothing here imports pytest. The names below load on first
use, so that reading the config (the plugin does at start-up) imports no engine.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "API_LIMITS": "episode",
    "EpisodeLimits": "config",
    "Executor": "executor",
    "PlannedItem": "plan",
    "RunConfig": "config",
    "RunOutcome": "executor",
    "episode_row": "episode",
    "plan_items": "plan",
    "planned_item": "plan",
    "run_episode": "episode",
    "run_one": "episode",
    "run_suite": "executor",
    "scenario_files": "plan",
    "seed_key": "plan",
}

__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:
    from pytest_pibench.episode.limits import EpisodeLimits as EpisodeLimits
    from pytest_pibench.run.config import RunConfig as RunConfig
    from pytest_pibench.run.episode import API_LIMITS as API_LIMITS
    from pytest_pibench.run.episode import episode_row as episode_row
    from pytest_pibench.run.episode import run_episode as run_episode
    from pytest_pibench.run.episode import run_one as run_one
    from pytest_pibench.run.executor import Executor as Executor
    from pytest_pibench.run.executor import RunOutcome as RunOutcome
    from pytest_pibench.run.executor import run_suite as run_suite
    from pytest_pibench.run.plan import PlannedItem as PlannedItem
    from pytest_pibench.run.plan import plan_items as plan_items
    from pytest_pibench.run.plan import planned_item as planned_item
    from pytest_pibench.run.plan import scenario_files as scenario_files
    from pytest_pibench.run.plan import seed_key as seed_key

if not TYPE_CHECKING:

    def __getattr__(name: str) -> Any:
        """Import an exported name from its module on first use."""
        module = _EXPORTS.get(name)
        if module is None:
            raise AttributeError(f"module 'pytest_pibench.run' has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
        globals()[name] = value
        return value
