"""The earlier home of the run functions; they live in :mod:`pytest_pibench.run` now.

Kept so that ``from pytest_pibench.runner import run_one`` in users' code goes on working.
"""

from __future__ import annotations

from pytest_pibench.run.episode import run_episode, run_one
from pytest_pibench.run.executor import run_suite
from pytest_pibench.run.plan import seed_key

__all__ = ["run_episode", "run_one", "run_suite", "seed_key"]
