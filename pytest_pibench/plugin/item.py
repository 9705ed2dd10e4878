"""The body of a scenario item: run the episode, report every check as a subtest."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from pytest_pibench.participants.conformance import check_built, check_instance
from pytest_pibench.participants.specs import AgentSpec, AgentSpecError
from pytest_pibench.plugin.check_reports import plain
from pytest_pibench.plugin.extensions import add_row_fields, participant_schemes
from pytest_pibench.plugin.host import subtests_without_capture
from pytest_pibench.plugin.keys import (
    AGENT_NAME_KEY,
    DONE_KEY,
    PREFETCH_KEY,
    RESUME_KEY,
    ROW_KEY,
    SETTINGS_KEY,
    SETTLED_KEY,
    USAGE_ERROR_KEY,
    watch_stop_signals,
)
from pytest_pibench.plugin.prefetch import Job
from pytest_pibench.results.types import CheckEntry, ResultRow
from pytest_pibench.run.executor import Executor
from pytest_pibench.scenario.models import Scenario

__all__ = ["agent_name_of", "agent_spec_of", "episode_job", "executor_of", "run_scenario_item"]

_EXECUTOR = pytest.StashKey[Executor]()


def executor_of(config: pytest.Config) -> Executor:
    """This process's :class:`Executor`: the run config of the options, the plugins' schemes, the resume rows."""
    if _EXECUTOR not in config.stash:
        settings = config.stash[SETTINGS_KEY]
        resume = config.stash.get(RESUME_KEY, None)
        config.stash[_EXECUTOR] = Executor(settings.run, schemes=participant_schemes(config), resume=resume)
    return config.stash[_EXECUTOR]


def agent_spec_of(value: Any, config: pytest.Config) -> AgentSpec:
    """What a ``pibench_agent`` fixture returned, as an :class:`AgentSpec`.

    Accepted: a spec string, an AgentSpec, an agent class, a zero-argument
    factory, or an agent instance.
    """
    if isinstance(value, AgentSpec):
        return value
    if isinstance(value, str):
        return executor_of(config).agent(value)
    name = agent_name_of(value)
    problem = _protocol_problem(value, name, config)
    if problem:
        raise FixtureAgentError(f"the pibench_agent fixture's {problem}")
    if inspect.isclass(value) or inspect.isfunction(value):
        return AgentSpec(name, lambda scenario: value())
    if callable(getattr(value, "generate", None)):
        return AgentSpec(name, lambda scenario: value)
    raise pytest.UsageError(
        f"pibench_agent returned {value!r}: return a spec string, an agent class, a factory or an agent"
    )


class FixtureAgentError(Exception):
    """What a ``pibench_agent`` fixture returned cannot be an agent (a usage error: the run stops, exit 4)."""


_CHECKED = pytest.StashKey[dict[int, tuple[Any, str | None]]]()


def _protocol_problem(value: Any, name: str, config: pytest.Config) -> str | None:
    """Why a fixture's agent class, factory or instance cannot serve as an agent, or None; checked once per object,
    as ``--pibench-agent`` specs are at start-up (one agent built, every protocol method's signature)."""
    checked = config.stash.setdefault(_CHECKED, {})
    if id(value) not in checked:
        problem = None
        try:
            if inspect.isclass(value) or inspect.isfunction(value):
                check_built(value, "agent", name, value.__qualname__)
            elif callable(getattr(value, "generate", None)):
                check_instance(value, "agent", name)
        except AgentSpecError as exc:
            problem = str(exc)
        checked[id(value)] = (value, problem)  # the value is kept, so its id stays its own
    return checked[id(value)][1]


def agent_name_of(value: Any) -> str:
    """The name rows carry for what a ``pibench_agent`` fixture returned (or a parametrize value)."""
    if isinstance(value, AgentSpec):
        return value.name
    if isinstance(value, str):
        return value
    name = getattr(value, "pibench_name", None) or getattr(value, "model_name", None)
    if isinstance(name, str):
        return name
    if inspect.isclass(value) or inspect.isfunction(value):
        return f"{value.__module__}:{value.__qualname__}"
    return type(value).__name__


def _error_text(row: ResultRow) -> str:
    detail = row.get("error_detail")
    text = f"episode error ({row.get('termination_reason')}): {row.get('error')}"
    if detail and detail.get("traceback"):
        text += f"\n\n{detail['traceback'].rstrip()}"
    return text


def _failed_checks_text(row: ResultRow) -> str:
    """One readable failure per scenario: every failed Tier-1 check (details are bounded upstream)."""
    checks = [c for c in row["outcome_checks"] if c.get("tier", 1) == 1 and c["passed"] is not None]
    failed = [c for c in checks if c["passed"] is False]
    head = f"{len(failed)} of {len(checks)} checks failed [{row.get('label')} -> {row.get('canonical_decision')}]"
    lines = [f"  {c['outcome_id']} [{c['type']}]: {c['detail']}" for c in failed[:50]]
    if len(failed) > 50:
        lines.append(f"  ... and {len(failed) - 50} more")
    if row.get("failure_cause") == "agent":  # scored like any ending, but say why it ended
        lines += ["", _error_text(row)[:8000]]
    return "\n".join([head, *lines])


def _report_check(check: CheckEntry) -> None:
    __tracebackhide__ = True
    label = f"{check['outcome_id']} [{check['type']}]: {check['detail']}"
    if check.get("tier") == 2:
        if not check["passed"]:
            # raised, not pytest.xfail(): that one formats a traceback (source of every frame) the report drops;
            # plain(): the report is built without pytest's traceback walk (check_reports)
            raise plain(pytest.xfail.Exception(f"Tier 2 (reported, not gating): {label}", pytrace=False))
        return
    if not check["passed"]:
        raise plain(pytest.fail.Exception(label, pytrace=False))


def run_scenario_item(
    request: pytest.FixtureRequest, scenario: Scenario, agent: Any, trial: int, subtests: pytest.Subtests
) -> None:
    config = request.config
    executor = executor_of(config)
    item = request.node
    watch_stop_signals(config)
    item.stash[AGENT_NAME_KEY] = agent_name_of(agent)
    try:
        spec = agent_spec_of(agent, config)
    except FixtureAgentError as exc:
        item.stash[USAGE_ERROR_KEY] = str(exc)
        item.session.shouldstop = "the pibench_agent fixture returned an agent that cannot run (see the failure)"
        raise plain(pytest.fail.Exception(str(exc), pytrace=False)) from None
    item.stash[AGENT_NAME_KEY] = spec.name
    sequential = executor.sequential
    prefetcher = config.stash.get(PREFETCH_KEY, None)
    settled = sequential and sequential.settled_reason(spec.name, scenario.scenario_id, trial)
    if settled:  # sequential trials: this scenario's verdict cannot change any more
        if prefetcher is not None:
            prefetcher.drop(item)
        item.stash[SETTLED_KEY] = {"agent": spec.name, "scenario_id": scenario.scenario_id, "trial": trial,
                                   "reason": settled}  # fmt: skip
        pytest.skip(settled)
    planned = executor.item(scenario, spec.name, trial)
    row, resume = executor.reused(planned)
    if row is None:
        run_here = executor.job(planned, spec)
        row = run_here() if prefetcher is None else prefetcher.row_for(item, run_here)
    row = executor.finish(planned, row, resume)
    row["nodeid"] = item.nodeid
    if resume is None or not resume["reused"]:  # a reused row keeps the fields it was written with
        add_row_fields(item, row, scenario)
    item.stash[ROW_KEY] = row
    try:
        if row["status"] == "error":
            raise plain(pytest.fail.Exception(_error_text(row), pytrace=False))
        with subtests_without_capture(config):
            for check in row["outcome_checks"]:
                if check["passed"] is None:
                    continue  # a Tier-2 check nobody judged: counted in the summary, not a test outcome
                with subtests.test(msg=str(check["outcome_id"])):
                    _report_check(check)
        if not row["all_passed"]:
            raise plain(pytest.fail.Exception(_failed_checks_text(row), pytrace=False))
    finally:
        item.stash[DONE_KEY] = True


def episode_job(item: pytest.Item) -> Job | None:
    """How to run ``item``'s episode ahead of its turn, or None when it must run in the item.

    Only items whose agent is an ``--pibench-agent`` spec given to our own
    ``pibench_agent`` fixture qualify (an overridden fixture runs in the item),
    never an agent that is one shared instance, and never a row
    ``--pibench-resume`` will reuse.
    """
    scenario = getattr(getattr(item, "obj", None), "pibench_scenario", None)
    callspec = getattr(item, "callspec", None)
    if not isinstance(scenario, Scenario) or callspec is None:
        return None
    agent, trial = callspec.params.get("pibench_agent"), callspec.params.get("pibench_trial")
    definitions: Any = getattr(getattr(item, "_fixtureinfo", None), "name2fixturedefs", {}).get("pibench_agent")
    function = getattr(definitions[-1], "func", None) if definitions else None  # the definition in effect
    function = getattr(function, "__wrapped__", function)
    ours = (getattr(function, "__module__", None), getattr(function, "__name__", None)) == (
        "pytest_pibench.plugin",
        "pibench_agent",
    )
    if not ours or not isinstance(agent, str) or not isinstance(trial, int):
        return None
    config = item.config
    executor = executor_of(config)
    spec = agent_spec_of(agent, config)
    if spec.shared:
        return None
    planned = executor.item(scenario, spec.name, trial)
    if executor.reused(planned)[0] is not None:
        return None
    job = executor.job(planned, spec)
    sequential = executor.sequential
    if sequential is None:
        return job
    # Sequential trials: a trial starts only once the ones before it have an outcome and left the verdict open.
    if not sequential.earlier_recorded(spec.name, scenario.scenario_id, trial):
        return None
    if sequential.settled_reason(spec.name, scenario.scenario_id, trial):
        return None

    def run_and_record() -> ResultRow:
        row = job()
        sequential.record(spec.name, scenario.scenario_id, trial, row)  # the next trial may start now
        return row

    return run_and_record
