"""The executor: planned items in, result rows out, under one :class:`RunConfig`.

Every way of running a benchmark goes through it. The plugin asks it for one
item's row at a time (pytest orders the items, ``--pibench-concurrency`` runs
their jobs ahead); the green server and the Python API hand it the whole plan
(:meth:`Executor.run`: a thread pool, sequential trials, the run's cost limit,
the journal). Either way the row of an item is made by the same code from the
same config, so an agent assessed by the green server and the same agent run
with ``--pibench-agent=a2a:<url>`` get the same rows.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_pibench.participants.schemes import JudgeFactory, SchemeRegistry
from pytest_pibench.participants.specs import AgentSpec, resolve_agent, resolve_judge, resolve_user
from pytest_pibench.results.document import Journal, results_document
from pytest_pibench.results.resume import ResumeIndex, fingerprint
from pytest_pibench.results.sequential import SequentialTrials
from pytest_pibench.results.types import ResultRow, ResultsDocument, ResumeNote
from pytest_pibench.run.budget import CostMeter
from pytest_pibench.run.config import RunConfig
from pytest_pibench.run.episode import episode_row
from pytest_pibench.run.plan import PlannedItem, plan_items, planned_item, scenario_files
from pytest_pibench.scenario.loading import load_scenario
from pytest_pibench.scenario.models import Scenario

__all__ = ["Executor", "RunOutcome", "run_suite"]

Job = Callable[[], ResultRow]


@dataclass
class RunOutcome:
    """What :meth:`Executor.run` produced: the rows in the order they finished, and whether all ran."""

    rows: list[ResultRow] = field(default_factory=list)
    planned: int = 0
    positions: list[int] = field(default_factory=list)
    """For each row, the position of its item in the plan (``in_plan_order`` sorts by it)."""
    ended_by: str | None = None
    """Why the run stopped before every item ran (a stop request, the cost limit); None when it did not."""
    settled: int = 0
    """Sequential trials never run because their scenario's verdict was already settled."""
    wall_time: float = 0.0

    @property
    def complete(self) -> bool:
        return self.ended_by is None

    def in_plan_order(self) -> list[ResultRow]:
        """The rows in the order of their items in the plan, not the order they finished."""
        return [row for _, row in sorted(zip(self.positions, self.rows, strict=True), key=lambda pair: pair[0])]


class Executor:
    """Runs planned items under ``config``; participant specs are resolved once per executor.

    Example::

        executor = Executor(RunConfig(agents=("oracle",), trials=2))
        outcome = executor.run(executor.plan(["scenarios/retail"]))
        document = executor.document(outcome)

    ``schemes`` are the participant schemes (default: the built-in and installed
    ones); ``resume`` reuses earlier rows whose run key equals the item's.
    """

    def __init__(
        self, config: RunConfig, *, schemes: SchemeRegistry | None = None, resume: ResumeIndex | None = None
    ) -> None:
        self.config = config
        self.schemes = schemes
        self.resume = resume
        self.settings = config.to_dict()
        self.cost = CostMeter(config.cost_limit)
        self._specs: dict[str, AgentSpec] = {}
        self._lock = threading.Lock()
        self._judge: JudgeFactory | None = None
        self._sequential = (
            SequentialTrials(*config.min_pass) if config.trial_mode == "sequential" and config.min_pass else None
        )

    # ------------------------------------------------------------------ participants

    def agent(self, spec: str | AgentSpec) -> AgentSpec:
        """``spec`` resolved (once per executor), with the run's agent parameters.

        Raises:
            AgentSpecError: when the spec does not resolve.
        """
        if isinstance(spec, AgentSpec):
            with self._lock:
                self._specs.setdefault(f"agent:{spec.name}", spec)
            return spec
        return self._resolved(f"agent:{spec}", lambda: resolve_agent(spec, self.config.params("agent"),
                                                                      schemes=self.schemes))  # fmt: skip

    def user(self) -> AgentSpec:
        """The run's user simulator, resolved once."""
        user = self.config.user
        return self._resolved(f"user:{user}", lambda: resolve_user(user, self.config.params("user"),
                                                                   schemes=self.schemes))  # fmt: skip

    def judge(self) -> JudgeFactory | None:
        """The run's judge factory, resolved once; None without a judge."""
        if self.config.judge is None:
            return None
        with self._lock:
            if self._judge is None:
                self._judge = resolve_judge(self.config.judge, self.config.params("judge"), schemes=self.schemes)
            return self._judge

    def _resolved(self, key: str, make: Callable[[], AgentSpec]) -> AgentSpec:
        with self._lock:
            if key not in self._specs:
                self._specs[key] = make()
            return self._specs[key]

    # ------------------------------------------------------------------ the plan

    def item(self, scenario: Scenario | Path, agent: str, trial: int) -> PlannedItem:
        """The planned item of ``scenario`` for the agent named ``agent``, trial ``trial``."""
        return planned_item(scenario, agent, trial, self.config.seed, self.settings)

    def plan(
        self, scenarios: Iterable[Scenario | str | Path], agents: Sequence[str | AgentSpec] | None = None
    ) -> list[PlannedItem]:
        """Every item of the run over ``scenarios`` (files, folders or loaded scenarios) and the config's agents.

        Raises:
            AgentSpecError: when an agent spec does not resolve (before any episode runs).
        """
        given = list(scenarios)
        loaded = [s for s in given if isinstance(s, Scenario)]
        files = scenario_files(s for s in given if not isinstance(s, Scenario))
        names = [self.agent(a).name for a in (agents if agents is not None else self.config.agents)]
        return plan_items([*loaded, *map(_loaded_or_path, files)], names, self.config.trials, self.config.seed,
                          self.settings)  # fmt: skip

    # ------------------------------------------------------------------ one item

    def reused(self, item: PlannedItem) -> tuple[ResultRow | None, ResumeNote | None]:
        """``(earlier row to reuse or None, its resume note)``; ``(None, None)`` when not resuming."""
        if self.resume is None or item.key is None:
            return None, None
        row, reason = self.resume.lookup(item.agent, item.scenario_id, item.trial, item.key)
        if row is None:
            return None, {"reused": False, "reason": reason, "source": self.resume.source}
        return row.copy(), {"reused": True, "source": self.resume.source}

    def job(self, item: PlannedItem, spec: AgentSpec | None = None) -> Job:
        """How to play ``item``'s episode into its row (``spec``: the agent, when not the item's spec string).

        The participants are resolved here, in the calling thread; the job may run on any thread.
        """
        agent = spec or self.agent(item.agent)
        user = self.user()
        judge = self.judge()
        config = self.config

        def run() -> ResultRow:
            return episode_row(item, agent, config.limits, user_factory=user.build, judge_factory=judge,
                               judge_votes=config.judge_votes)  # fmt: skip

        return run

    def row(self, item: PlannedItem, spec: AgentSpec | None = None, job: Job | None = None) -> ResultRow:
        """``item``'s row: reused from ``resume`` when its key matches, else played (``job`` when given)."""
        row, note = self.reused(item)
        if row is None:
            row = (job or self.job(item, spec))()
        return self.finish(item, row, note)

    def finish(self, item: PlannedItem, row: ResultRow, note: ResumeNote | None = None) -> ResultRow:
        """Stamp ``row`` with what the run knows of it: trial mode, resume note, run key."""
        if self._sequential is not None:
            self._sequential.record(item.agent, item.scenario_id, item.trial, row)
            row["trial_mode"] = "sequential"
        else:  # a row reused from a sequential run is, in this run, one of its fixed trials
            row.pop("trial_mode", None)
        if note is not None:
            row["resume"] = note
        if item.key is not None:
            row["fingerprint"] = {"sha256": fingerprint(item.key), "key": item.key}
        return row

    def charge(self, row: ResultRow) -> str | None:
        """Add ``row``'s LLM cost to the run's; the reason to stop once the run's cost limit is reached."""
        return self.cost.charge(row)

    @property
    def spent_usd(self) -> float:
        """What the rows this executor charged cost, in US dollars."""
        return self.cost.spent_usd

    @property
    def sequential(self) -> SequentialTrials | None:
        """The K-of-N bookkeeping of sequential trials (None in fixed mode)."""
        return self._sequential

    # ------------------------------------------------------------------ a whole run

    def run(
        self,
        items: Sequence[PlannedItem],
        *,
        on_row: Callable[[ResultRow, int, int], None] | None = None,
        journal: Journal | None = None,
        stop: threading.Event | None = None,
    ) -> RunOutcome:
        """Play every item on ``config.concurrency`` threads; rows reach ``journal`` and ``on_row`` as they finish.

        ``on_row(row, done, total)`` is called one row at a time. Once ``stop`` is
        set, or the run's cost limit is reached, no further episode starts (those
        running finish) and the outcome says why. With sequential trials a
        scenario's trials run in order and stop once its verdict is settled.
        """
        stop = stop or threading.Event()
        started = time.monotonic()
        outcome = RunOutcome(planned=len(items))
        chains = self._chains(items)
        lock = threading.Lock()

        def play(chain: list[tuple[int, PlannedItem]]) -> None:
            for position, item in chain:
                if stop.is_set():
                    return
                if self._sequential is not None and self._sequential.settled_reason(
                    item.agent, item.scenario_id, item.trial
                ):
                    with lock:
                        outcome.settled += 1
                    continue
                row = self.row(item)
                with lock:
                    outcome.rows.append(row)
                    outcome.positions.append(position)
                    if journal is not None:
                        journal.append(row)
                    if on_row is not None:
                        on_row(row, len(outcome.rows), len(items))
                    reason = self.charge(row)
                    if reason and outcome.ended_by is None:
                        outcome.ended_by = f"stopped early: {reason}"
                        stop.set()

        if self.config.concurrency == 1:  # on the calling thread: Ctrl-C and the agent's own signals as ever
            for chain in chains:
                play(chain)
        else:
            pool = ThreadPoolExecutor(self.config.concurrency, thread_name_prefix="pibench-run")
            try:
                for future in as_completed([pool.submit(play, chain) for chain in chains]):
                    future.result()
            except BaseException:  # Ctrl-C or a broken journal: nothing new starts, running episodes are left
                stop.set()
                pool.shutdown(wait=False, cancel_futures=True)
                raise
            pool.shutdown()
        done = len(outcome.rows) + outcome.settled
        if outcome.ended_by is None and done < len(items):
            outcome.ended_by = "cancelled by the caller"
        outcome.wall_time = time.monotonic() - started
        return outcome

    def _chains(self, items: Sequence[PlannedItem]) -> list[list[tuple[int, PlannedItem]]]:
        """Units of work: each item alone, or with sequential trials a scenario's trials in order."""
        if self._sequential is None:
            return [[(n, item)] for n, item in enumerate(items)]
        chains: dict[tuple[str, str], list[tuple[int, PlannedItem]]] = {}
        for n, item in enumerate(items):
            chains.setdefault((item.agent, str(item.source_path or item.scenario_id)), []).append((n, item))
        return [sorted(chain, key=lambda pair: pair[1].trial) for chain in chains.values()]

    def document(
        self, outcome: RunOutcome, *, shard: tuple[int, int] | None = None, **settings: Any
    ) -> ResultsDocument:
        """The results document of ``outcome``: the config's settings (plus ``settings``), metrics, validity, rows."""
        return results_document(
            outcome.rows, {**self.settings, **settings}, outcome.wall_time, complete=outcome.complete,
            ended_by=outcome.ended_by, planned_items=outcome.planned - outcome.settled,
            max_error_rate=self.config.max_error_rate, shard=shard,
        )  # fmt: skip


def _loaded_or_path(path: Path) -> Scenario | Path:
    """The scenario of ``path``; the path itself when it does not load (its item becomes a ``scenario_error`` row)."""
    try:
        return load_scenario(path)
    except Exception:  # any defect of the file is reported by the item's row, with its message
        return path


def run_suite(
    paths: Iterable[str | Path],
    agents: Sequence[str | AgentSpec],
    *,
    trials: int = 1,
    config: RunConfig | None = None,
    **limit_changes: Any,
) -> list[ResultRow]:
    """Every scenario file under ``paths`` x every agent x ``trials``, as rows (in plan order).

    ``config`` sets everything else (seed, user, judge, limits, concurrency);
    ``limit_changes`` change single episode limits (``max_steps=60``). Runs
    through the same :class:`Executor` as the plugin and the green server.

    Raises:
        AgentSpecError: when a spec string in ``agents`` does not resolve (before any episode runs).
        InputError: a setting out of range.
    """
    base = config or RunConfig()
    limits = base.limits.with_(**limit_changes) if limit_changes else base.limits
    strings = tuple(a for a in agents if isinstance(a, str))
    executor = Executor(base.with_(agents=strings, trials=trials, limits=limits))
    items = executor.plan(paths, agents)
    return executor.run(items).in_plan_order()
