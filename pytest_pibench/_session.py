"""The controller side: gather result rows from reports, write files, print the summary, apply gates.

Rows arrive on reports (``report.pibench_row``), so the same code works with
and without xdist. A scenario item that failed without a row (a crashed xdist
worker, an exception in a fixture) becomes an error row, never a silent gap.
"""

from __future__ import annotations

import contextlib
import json
import re
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from ._settings import GATE_EXIT_CODE, Settings

__all__ = ["ResultCollector", "results_document"]

RESULTS_FORMAT = "pibench-results"
RESULTS_FORMAT_VERSION = 1
_PARAMS = re.compile(r"^(?P<path>[^:]+\.json)::(?P<name>[^\[]+)(?:\[(?P<params>.*)\])?$")


def _row_order(agents: list[str]) -> Any:
    """Agents in command-line order, then scenarios by id and trial (never by completion order)."""
    rank = {agent: index for index, agent in enumerate(agents)}

    def key(row: dict[str, Any]) -> tuple[int, str, str, int]:
        agent = str(row.get("agent"))
        return (rank.get(agent, len(rank)), agent, str(row.get("scenario_id")), int(row.get("trial") or 0))

    return key


def results_document(rows: list[dict[str, Any]], settings: dict[str, Any], wall_time: float) -> dict[str, Any]:
    """Our versioned results file: settings, metrics per agent, every row (with its transcript)."""
    from . import BENCHMARK_VERSION, __version__
    from ._metrics import compute_metrics

    ordered = sorted(rows, key=_row_order(list(settings.get("agents") or [])))
    by_agent: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in ordered:
        by_agent[str(row.get("agent"))].append(row)
    return {
        "format": RESULTS_FORMAT,
        "format_version": RESULTS_FORMAT_VERSION,
        "pytest_pibench_version": __version__,
        "benchmark_version": BENCHMARK_VERSION,
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "wall_time": round(wall_time, 3),
        "settings": settings,
        "agents": {agent: {"metrics": compute_metrics(agent_rows)} for agent, agent_rows in by_agent.items()},
        "rows": ordered,
    }


class ResultCollector:
    """Registered as the ``pibench-results`` plugin on every process; acts on the controller only."""

    def __init__(self, config: pytest.Config, settings: Settings) -> None:
        self.config = config
        self.settings = settings
        self.is_worker = hasattr(config, "workerinput")
        self.rows: dict[str, dict[str, Any]] = {}
        self.unscored: dict[str, str] = {}
        self.other_failures = 0
        self.started = time.monotonic()
        self.document: dict[str, Any] | None = None
        self.verdict: Any = None
        self.baseline: dict[str, Any] | None = None
        self.gate_overrode: int | None = None

    # ------------------------------------------------------------------ gathering

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if self.is_worker:
            return
        row = getattr(report, "pibench_row", None)
        if isinstance(row, dict):
            self.rows[report.nodeid] = row
            self.unscored.pop(report.nodeid, None)
            return
        if not report.failed:
            return
        if ".json::" in report.nodeid:
            if report.nodeid not in self.rows and report.nodeid not in self.unscored:
                self.unscored[report.nodeid] = _failure_text(report)
        elif not getattr(report, "context", None):  # a failing subtest is not a test of its own
            self.other_failures += 1

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if not self.is_worker and report.failed:
            self.other_failures += 1

    def _crash_rows(self) -> list[dict[str, Any]]:
        """Error rows for scenario items that failed without a row (crashed worker, broken file...)."""
        from ._loading import load_scenario
        from ._rows import error_row

        rows = []
        for nodeid, reason in self.unscored.items():
            match = _PARAMS.match(nodeid)
            path, name, params = (match["path"], match["name"], match["params"]) if match else ("", nodeid, None)
            if params is None:  # the file itself is broken: it fails for every agent and trial
                keys = [(a, t) for a in self.settings.agents or ("agent",) for t in range(self.settings.trials)]
            else:
                trial = re.search(r"(?:^|-)t(\d+)(?:-|$)", params)
                agent = re.sub(r"(?:^|-)t\d+(?=-|$)", "", params, count=1).strip("-") or "agent"
                keys = [(agent, int(trial.group(1)) if trial else 0)]
            scenario = None
            with contextlib.suppress(Exception):  # the file itself may be what failed
                scenario = load_scenario(self.config.rootpath / path)
            for agent, trial_index in keys:
                row = error_row(
                    scenario.scenario_id if scenario else name,
                    reason,
                    scenario=scenario,
                    trial=trial_index,
                    agent=agent,
                )
                row["nodeid"] = nodeid
                rows.append(row)
        return rows

    # ------------------------------------------------------------------ finishing

    @pytest.hookimpl(wrapper=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> Any:
        if not self.is_worker and (self.rows or self.unscored):
            self._finish(session)
        return (yield)

    def _finish(self, session: pytest.Session) -> None:
        from ._gates import check_gates
        from ._leaderboard import leaderboard_path, to_leaderboard

        rows = list(self.rows.values()) + self._crash_rows()
        wall = time.monotonic() - self.started
        self.document = results_document(rows, self.settings.to_dict(), wall)
        if self.settings.results:
            _write_json(self.settings.results, self.document)
        if self.settings.leaderboard:
            agents = list(self.document["agents"])
            for agent in agents:
                mine = [r for r in self.document["rows"] if r.get("agent") == agent]
                target = leaderboard_path(str(self.settings.leaderboard), agent, several=len(agents) > 1)
                _write_json(target, to_leaderboard(mine, agent_id=agent, time_used=round(wall, 3)))
        if not self.settings.has_gate:
            return
        metrics = {a: v["metrics"] for a, v in self.document["agents"].items()}
        self.verdict = check_gates(self.settings, metrics, self.document["rows"], self.baseline)
        errors = sum(1 for r in self.document["rows"] if r.get("status") == "error")
        if not self.verdict.passed:
            if session.exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
                self.gate_overrode = int(session.exitstatus)
                session.exitstatus = GATE_EXIT_CODE
        elif session.exitstatus == pytest.ExitCode.TESTS_FAILED and not errors and not self.other_failures:
            # With a gate, failing scenarios are expected; the gate is the verdict.
            self.gate_overrode = int(session.exitstatus)
            session.exitstatus = pytest.ExitCode.OK

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.is_worker or self.document is None:
            return
        from ._summary import write_summary

        write_summary(terminalreporter, self)

    @pytest.hookimpl(optionalhook=True)
    def pytest_json_modifyreport(self, json_report: dict[str, Any]) -> None:
        """pytest-json-report: a ``pibench`` block with the settings and the metrics per agent."""
        if self.document is None:
            return
        json_report["pibench"] = {
            "format": RESULTS_FORMAT,
            "format_version": RESULTS_FORMAT_VERSION,
            "benchmark_version": self.document["benchmark_version"],
            "settings": self.document["settings"],
            "agents": self.document["agents"],
            "gate": None if self.verdict is None else {"passed": self.verdict.passed, "lines": self.verdict.lines},
        }


def _failure_text(report: pytest.TestReport) -> str:
    text = str(report.longrepr).strip() if report.longrepr else ""
    return text[:4000] or f"{report.when} failed"


def _write_json(path: str | Path, data: Any) -> None:
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(data, indent=1, default=str) + "\n", encoding="utf-8")
