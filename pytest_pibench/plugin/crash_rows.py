"""Error rows for scenario items that failed without a row (a crashed worker, a broken file, a failed setup).

A scenario item that ends without its episode's row would otherwise be a gap in the results: each
becomes an error row (kept out of the rates, counted against the error budget) built from what the
item was planned to run (its setup report). An item whose process died before its setup reported
has only its node id: its file, and the run's agent when it has one.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Mapping
from typing import Any

import pytest

from pytest_pibench.plugin.settings import Settings
from pytest_pibench.results.rows import error_row
from pytest_pibench.results.types import ResultRow
from pytest_pibench.scenario.loading import load_scenario

__all__ = ["crash_rows"]


def crash_rows(
    config: pytest.Config,
    settings: Settings,
    rows: Iterable[ResultRow],
    unscored: Mapping[str, tuple[str, str | None]],
    planned_by_nodeid: Mapping[str, dict[str, Any]],
) -> list[ResultRow]:
    """One error row per unscored item (``unscored``: node id -> (reason, agent name or None)); a broken file's
    row stands for every agent and trial."""
    known_agents = list(dict.fromkeys(str(r.get("agent")) for r in rows))
    fallback = list(settings.run.agents) or known_agents or ["pibench_agent"]
    made = []
    for nodeid, (reason, agent_name) in unscored.items():
        planned = planned_by_nodeid.get(nodeid) or {"path": str(config.rootpath / nodeid.split("::")[0]),
                                                    "agent": None, "trial": None, "broken": False}  # fmt: skip
        cause = "scenario" if planned["broken"] else "harness"
        if planned["broken"]:  # the file itself is broken: it fails for every agent and trial
            keys = [(a, t) for a in fallback for t in range(settings.run.trials)]
        else:
            agent = agent_name or planned["agent"] or (fallback[0] if len(fallback) == 1 else "pibench_agent")
            keys = [(agent, planned["trial"] or 0)]
        scenario = None
        with contextlib.suppress(Exception):  # the file itself may be what failed
            scenario = load_scenario(planned["path"])
        for agent, trial_index in keys:
            row = error_row(
                scenario.scenario_id if scenario else planned.get("scenario_id") or nodeid.split("::")[-1],
                reason,
                scenario=scenario,
                trial=trial_index,
                agent=agent,
                cause=cause,
                termination_reason="scenario_error" if cause == "scenario" else "runtime_error",
            )
            row["nodeid"] = nodeid
            made.append(row)
    return made
