"""The controller side: gather result rows from reports, write files, print the summary, apply gates.

Rows arrive on reports (``report.pibench_row``), so the same code works with
and without xdist. Each row goes to the journal the moment it arrives; the
results file is folded from them at the end and written atomically, and says
whether the run was complete. A scenario item that failed without a row (a
crashed xdist worker, an exception in a fixture, a broken scenario file)
becomes an error row, never a silent gap.

A file that cannot be written (a full disk) never costs what is already on disk: the
run stops, the summary is printed, the journal is kept, and it exits 4 with the reason.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, cast

import pytest

from pytest_pibench.paths import is_scenario_nodeid
from pytest_pibench.plugin.extensions import add_extension_metrics, carry_extension_metrics
from pytest_pibench.plugin.host import freeze_long_lived, is_xdist_worker
from pytest_pibench.plugin.settings import Settings
from pytest_pibench.results.document import (
    RESULTS_FORMAT,
    RESULTS_FORMAT_VERSION,
    Journal,
    atomic_write_json,
    error_budget_exceeded,
    journal_path,
    now_iso,
    results_document,
    validity,
)
from pytest_pibench.results.files import write_problem
from pytest_pibench.results.types import ResultRow, ResultsDocument
from pytest_pibench.run.budget import CostMeter

__all__ = ["ResultCollector", "results_document", "validity"]


class ResultCollector:
    """Registered as the ``pibench-results`` plugin on every process; acts on the controller only."""

    def __init__(self, config: pytest.Config, settings: Settings) -> None:
        self.config = config
        self.settings = settings
        self.is_worker = is_xdist_worker(config)
        self.rows: dict[str, ResultRow] = {}
        self.unscored: dict[str, tuple[str, str | None]] = {}
        self.planned: dict[str, dict[str, Any]] = {}
        """What each scenario item set up was planned to run, by node id (from its setup report)."""
        self.settled: dict[str, dict[str, Any]] = {}
        """Items whose trial was not needed (``--pibench-trial-mode sequential``), by node id."""
        self.other_failures = 0
        self.collect_errors = 0  # a collection error makes pytest stop as "interrupted": say why instead
        self.started = time.monotonic()
        self.cost = CostMeter(settings.run.cost_limit)
        self.session: pytest.Session | None = None
        self.document: ResultsDocument | None = None
        self.verdict: Any = None
        self.baseline: ResultsDocument | None = None
        self.gate_overrode: int | None = None
        self.planned_items: int | None = None
        self._xdist_planned = False
        self.journal = Journal(journal_path(settings.results)) if settings.results else None
        self._journal_state = "new"
        """``new``, ``open`` (it holds the carried rows), ``failed`` (appends failed) or ``unopened``."""
        self.usage_errors: list[str] = []
        """Items that could not run for a usage error (a ``pibench_agent`` fixture's broken agent): the run exits 4."""
        self.write_errors: list[str] = []
        """Files that could not be written (a full disk...), one message each: the run exits 4."""

    # ------------------------------------------------------------------ planning

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        scenario_items = sum(1 for item in session.items if is_scenario_nodeid(item.nodeid))
        if scenario_items:
            freeze_long_lived()  # what collection made lives to the end: the GC need not walk it again
        if not self.is_worker:
            self._plan(scenario_items)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, ids: list[str]) -> None:
        if not self._xdist_planned:  # every worker reports the same collection: the first one counts
            self._xdist_planned = True
            self._plan(sum(1 for nodeid in ids if is_scenario_nodeid(nodeid)))

    def _plan(self, items: int) -> None:
        """Scenario items are about to run: open the journal and mark the results file as in progress."""
        self.planned_items = items
        if not items or self.config.option.collectonly:
            return  # nothing will run (none collected, or --co): an existing results file is left alone
        from pytest_pibench.plugin.keys import watch_stop_signals

        watch_stop_signals(self.config)
        if self.journal is None or self._journal_state != "new":
            return
        try:
            self.journal.open({"settings": self.settings.to_dict(), "started": now_iso()}, self._carried())
            self.journal.planned(items)
        except OSError as exc:
            # The old journal and results file are untouched (the journal is replaced atomically).
            self._journal_state = "unopened" if not self.journal.is_open else "failed"
            self._write_failed(self.journal.path, exc)
            return
        self._journal_state = "open"
        assert self.settings.results
        placeholder = results_document(
            [],
            self.settings.to_dict(),
            0.0,
            complete=False,
            planned_items=items,
            ended_by="running (rows are in the journal)",
            max_error_rate=self.settings.run.max_error_rate,
        )
        placeholder["journal"] = self.journal.path.name
        try:
            atomic_write_json(self.settings.results, placeholder)
        except OSError as exc:
            self._write_failed(self.settings.results, exc)

    def _carried(self) -> list[ResultRow]:
        """The rows of the run this one resumes from: its files may be the ones this run replaces."""
        from pytest_pibench.plugin.keys import RESUME_KEY

        index = self.config.stash.get(RESUME_KEY, None)
        return list(index.rows.values()) if index is not None else []

    def _write_failed(self, path: str | Path, exc: OSError) -> None:
        """Record a file that could not be written and stop the run: what is finished stays on disk."""
        problem = write_problem(path, exc)
        self.write_errors.append(problem)
        if self.session is not None and not self.session.shouldstop:
            self.session.shouldstop = problem

    # ------------------------------------------------------------------ gathering

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.session = session

    def _charge(self, row: dict[str, Any]) -> None:
        """Add the row's LLM cost; past ``--pibench-cost-limit`` stop the run after the episodes in progress."""
        reason = self.cost.charge(row)
        if reason and self.session is not None and not self.session.shouldstop:
            self.session.shouldstop = reason

    @property
    def spent_usd(self) -> float:
        """LLM cost of the rows received so far (``--pibench-cost-limit``)."""
        return self.cost.spent_usd

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if self.is_worker:
            return
        if getattr(report, "pibench_usage_error", None):
            self.usage_errors.append(str(report.pibench_usage_error))
        planned = getattr(report, "pibench_planned", None)
        if isinstance(planned, dict):
            self.planned[report.nodeid] = planned
        row = getattr(report, "pibench_row", None)
        if isinstance(row, dict):
            self._charge(row)
            self.rows[report.nodeid] = cast(ResultRow, row)
            self.unscored.pop(report.nodeid, None)
            if self.journal is not None:
                if self._journal_state == "new":
                    self._plan(self.planned_items or 1)
                if self._journal_state == "open":
                    try:
                        self.journal.append(self.rows[report.nodeid])
                    except OSError as exc:  # the rows before it are on disk; this one and later are in memory
                        self._journal_state = "failed"
                        self._write_failed(self.journal.path, exc)
            return
        settled = getattr(report, "pibench_settled", None)
        if isinstance(settled, dict):
            self.settled[report.nodeid] = settled
            return
        if not report.failed:
            return
        if is_scenario_nodeid(report.nodeid):
            if report.nodeid not in self.rows and report.nodeid not in self.unscored:
                self.unscored[report.nodeid] = (_failure_text(report), getattr(report, "pibench_agent", None))
        elif not getattr(report, "context", None):  # a failing subtest is not a test of its own
            self.other_failures += 1

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if not self.is_worker and report.failed:
            self.other_failures += 1
            self.collect_errors += 1

    def _crash_rows(self) -> list[ResultRow]:
        from pytest_pibench.plugin.crash_rows import crash_rows

        return crash_rows(self.config, self.settings, self.rows.values(), self.unscored, self.planned)

    # ------------------------------------------------------------------ finishing

    @pytest.hookimpl(wrapper=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> Any:
        if not self.is_worker and (self.rows or self.unscored or self._journal_state != "new"):
            self._finish(session)
        return (yield)

    def _ended_by(self, session: pytest.Session) -> str | None:
        """Why the run did not finish, or None when every planned item reported."""
        from pytest_pibench.episode import interrupt

        if interrupt.requested():
            return f"interrupted by {interrupt.signal_name() or 'KeyboardInterrupt'}"
        if session.shouldfail or session.shouldstop:  # -x, --maxfail, the cost limit (pytest says "interrupted")
            return f"stopped early: {session.shouldfail or session.shouldstop}"
        if session.exitstatus == pytest.ExitCode.INTERRUPTED:  # pytest stops on errors during collection too
            if self.collect_errors:
                return f"interrupted: {self.collect_errors} error(s) during collection"
            return "interrupted by KeyboardInterrupt"
        done = len(set(self.rows) | set(self.unscored) | set(self.settled))
        if self.planned_items is not None and done < self.planned_items:
            return f"{self.planned_items - done} of {self.planned_items} planned items never reported"
        return None

    def _finish(self, session: pytest.Session) -> None:
        rows = list(self.rows.values()) + self._crash_rows()
        wall = time.monotonic() - self.started
        ended_by = self._ended_by(session)
        self.document = results_document(
            rows,
            self.settings.to_dict(),
            wall,
            complete=ended_by is None,
            planned_items=self.planned_items,
            ended_by=ended_by,
            max_error_rate=self.settings.run.max_error_rate,
            shard=self.settings.shard,
        )
        if self.settings.run.trial_mode == "sequential" and self.settings.run.min_pass is not None:
            from pytest_pibench.results.sequential import sequential_summary

            self.document["sequential"] = sequential_summary(rows, self.settled.values(), *self.settings.run.min_pass)
        run_ended = session.exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED)  # else that is the outcome
        try:
            add_extension_metrics(self.config, self.document)
            if run_ended and self.settings.has_gate:
                self._check_gates()
        finally:
            self._write_files(wall)  # a failing metrics hook never costs the results file
        if run_ended:
            self._apply_exit_status(session)
        if self.write_errors or self.usage_errors:  # results not on disk, or a run that could not be, come first
            session.exitstatus = pytest.ExitCode.USAGE_ERROR

    def _check_gates(self) -> None:
        """The gate's verdict, kept in the results file too (``gate``)."""
        from pytest_pibench.plugin.gate_verdicts import gate_record
        from pytest_pibench.plugin.gates import check_gates

        assert self.document is not None
        metrics = {a: v["metrics"] for a, v in self.document["agents"].items()}
        self.verdict = check_gates(self.settings, metrics, self.document["rows"], self.baseline)
        self.document["gate"] = gate_record(self.settings, self.verdict, self.document["rows"], self.baseline)

    def _apply_exit_status(self, session: pytest.Session) -> None:
        from pytest_pibench.plugin.gate_verdicts import exit_status

        assert self.document is not None
        before = int(session.exitstatus)
        after = exit_status(before, self.verdict, over_budget=error_budget_exceeded(self.document["validity"]),
                            other_failures=self.other_failures)  # fmt: skip
        if after != before:
            self.gate_overrode = before
            session.exitstatus = after

    def _write_files(self, wall: float) -> None:
        from pytest_pibench.results.leaderboard import leaderboard_path, to_leaderboard

        assert self.document is not None
        if self.settings.results:
            self._write_results(self.settings.results)
        if self.settings.leaderboard:
            agents = list(self.document["agents"])
            for agent in agents:
                mine = [r for r in self.document["rows"] if r.get("agent") == agent]
                target = leaderboard_path(str(self.settings.leaderboard), agent, several=len(agents) > 1)
                artifact = to_leaderboard(mine, agent_id=agent, time_used=round(wall, 3))
                carry_extension_metrics(artifact, self.document["agents"][agent]["metrics"])
                artifact["pibench_validity"] = validity(
                    mine,
                    max_error_rate=self.settings.run.max_error_rate,
                    complete=self.document["complete"],
                    ended_by=self.document["ended_by"],
                )
                try:
                    atomic_write_json(target, artifact)
                except OSError as exc:
                    self._write_failed(target, exc)
        if self.settings.html:
            from pytest_pibench.report.html import write_html

            try:
                write_html([(Path(self.settings.results or "this run").name, self.document)], self.settings.html)
            except OSError as exc:
                self._write_failed(self.settings.html, exc)

    def _write_results(self, results: str) -> None:
        """Replace the results file by this run's document, never losing a row that is only in the old files.

        A partial resumed run leaves rows of the run it resumes from that it
        did not redo: they stay in the journal (its carried lines), which is
        kept and named by the document so readers fold them back in. When the
        journal never got them (it could not be written), the old results file
        is their only copy and is left as it is.
        """
        assert self.document is not None and self.journal is not None
        done = {_key(r) for r in self.document["rows"]}
        kept = [] if self.document["complete"] else [r for r in self._carried() if _key(r) not in done]
        if kept and self._journal_state in ("new", "unopened"):
            self.write_errors.append(
                f"{results} was left as it was: it holds {len(kept)} finished rows that this partial run "
                f"did not redo and could not journal (the rows of this run are in the summary only)"
            )
            return
        if kept:
            self.document["journal"] = self.journal.path.name
        try:
            atomic_write_json(results, self.document)
        except OSError as exc:  # the placeholder and the journal keep what finished
            self._write_failed(results, exc)
            if self._journal_state in ("open", "failed"):
                which = "finished rows" if self._journal_state == "open" else "rows finished before it failed"
                self.write_errors[-1] += f"; the {which} are in {self.journal.path} (--pibench-resume it)"
            self.journal.close(remove=False)
            return
        self.journal.close(remove=not kept)  # every row is in the results file now (or kept for it)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.is_worker or self.document is None:
            return
        from pytest_pibench.plugin.summary import write_summary

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
            "complete": self.document["complete"],
            "validity": self.document["validity"],
            "settings": self.document["settings"],
            "agents": self.document["agents"],
            "gate": None if self.verdict is None else {"passed": self.verdict.passed, "lines": self.verdict.lines},
        }


def _key(row: ResultRow) -> tuple[str, str, int]:
    return (str(row.get("agent")), str(row.get("scenario_id")), int(row.get("trial") or 0))


def _failure_text(report: pytest.TestReport) -> str:
    text = str(report.longrepr).strip() if report.longrepr else ""
    return text[:4000] or f"{report.when} failed"
