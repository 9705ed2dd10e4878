"""The body of a scenario item: run the episode, report every check as a subtest."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from pytest_pibench.episode.seeds import derive_seed
from pytest_pibench.participants.specs import AgentSpec, resolve_agent, resolve_judge, resolve_user
from pytest_pibench.plugin.extensions import add_row_fields, participant_schemes
from pytest_pibench.plugin.host import subtests_without_capture
from pytest_pibench.plugin.prefetch import Job
from pytest_pibench.results.resume import fingerprint, run_key
from pytest_pibench.results.types import CheckEntry, ResultRow, ResumeNote, RunKey
from pytest_pibench.runner import run_one, seed_key
from pytest_pibench.scenario.models import Scenario

__all__ = ["agent_name_of", "agent_spec_of", "episode_job", "run_scenario_item"]

_SPECS = pytest.StashKey[dict[str, AgentSpec]]()


def _cached(config: pytest.Config, key: str, make: Any) -> AgentSpec:
    cache = config.stash.setdefault(_SPECS, {})
    if key not in cache:
        cache[key] = make()
    spec: AgentSpec = cache[key]
    return spec


def agent_spec_of(value: Any, config: pytest.Config) -> AgentSpec:
    """What a ``pibench_agent`` fixture returned, as an :class:`AgentSpec`.

    Accepted: a spec string, an AgentSpec, an agent class, a zero-argument
    factory, or an agent instance.
    """
    if isinstance(value, AgentSpec):
        return value
    if isinstance(value, str):
        from pytest_pibench.plugin.keys import SETTINGS_KEY

        params = config.stash[SETTINGS_KEY].params("agent")
        schemes = participant_schemes(config)
        return _cached(config, f"agent:{value}", lambda: resolve_agent(value, params, schemes=schemes))
    name = agent_name_of(value)
    if inspect.isclass(value) or inspect.isfunction(value):
        return AgentSpec(name, lambda scenario: value())
    if callable(getattr(value, "generate", None)):
        return AgentSpec(name, lambda scenario: value)
    raise pytest.UsageError(
        f"pibench_agent returned {value!r}: return a spec string, an agent class, a factory or an agent"
    )


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
            pytest.xfail(f"Tier 2 (reported, not gating): {label}")
        return
    if not check["passed"]:
        pytest.fail(label, pytrace=False)


def run_scenario_item(
    request: pytest.FixtureRequest, scenario: Scenario, agent: Any, trial: int, subtests: pytest.Subtests
) -> None:
    from pytest_pibench.plugin.keys import (
        AGENT_NAME_KEY,
        DONE_KEY,
        PREFETCH_KEY,
        ROW_KEY,
        SEQUENTIAL_KEY,
        SETTINGS_KEY,
        SETTLED_KEY,
        watch_stop_signals,
    )

    config = request.config
    settings = config.stash[SETTINGS_KEY]
    item = request.node
    watch_stop_signals(config)
    item.stash[AGENT_NAME_KEY] = agent_name_of(agent)
    spec = agent_spec_of(agent, config)
    item.stash[AGENT_NAME_KEY] = spec.name
    sequential = config.stash.get(SEQUENTIAL_KEY, None)
    prefetcher = config.stash.get(PREFETCH_KEY, None)
    settled = sequential and sequential.settled_reason(spec.name, scenario.scenario_id, trial)
    if settled:  # sequential trials: this scenario's verdict cannot change any more
        if prefetcher is not None:
            prefetcher.drop(item)
        item.stash[SETTLED_KEY] = {"agent": spec.name, "scenario_id": scenario.scenario_id, "trial": trial,
                                   "reason": settled}  # fmt: skip
        pytest.skip(settled)
    seed = derive_seed(settings.seed, seed_key(scenario), trial)
    key = run_key(scenario.source_path, spec.name, trial, seed, settings.to_dict())
    row, resume = _resumed(config, spec.name, scenario, trial, key)
    if row is None:
        run_here = _job(config, settings, scenario, spec, trial)
        row = run_here() if prefetcher is None else prefetcher.row_for(item, run_here)
    if sequential is not None:
        sequential.record(spec.name, scenario.scenario_id, trial, row)
        row["trial_mode"] = "sequential"
    else:  # a row reused from a sequential run is, in this run, one of its fixed trials
        row.pop("trial_mode", None)
    if resume is not None:
        row["resume"] = resume
    row["fingerprint"] = {"sha256": fingerprint(key), "key": key}
    row["nodeid"] = item.nodeid
    if resume is None or not resume["reused"]:  # a reused row keeps the fields it was written with
        add_row_fields(item, row, scenario)
    item.stash[ROW_KEY] = row
    try:
        if row["status"] == "error":
            pytest.fail(_error_text(row), pytrace=False)
        with subtests_without_capture(config):
            for check in row["outcome_checks"]:
                if check["passed"] is None:
                    continue  # a Tier-2 check nobody judged: counted in the summary, not a test outcome
                with subtests.test(msg=str(check["outcome_id"])):
                    _report_check(check)
        if not row["all_passed"]:
            pytest.fail(_failed_checks_text(row), pytrace=False)
    finally:
        item.stash[DONE_KEY] = True


def _resumed(
    config: pytest.Config, agent: str, scenario: Scenario, trial: int, key: RunKey
) -> tuple[ResultRow | None, ResumeNote | None]:
    """``(earlier row to reuse or None, the row's resume note)``; ``(None, None)`` without ``--pibench-resume``."""
    from pytest_pibench.plugin.keys import RESUME_KEY

    index = config.stash.get(RESUME_KEY, None)
    if index is None:
        return None, None
    row, reason = index.lookup(agent, scenario.scenario_id, trial, key)
    if row is None:
        return None, {"reused": False, "reason": reason, "source": index.source}
    return row.copy(), {"reused": True, "source": index.source}


def _job(config: pytest.Config, settings: Any, scenario: Scenario, spec: AgentSpec, trial: int) -> Job:
    """The episode of one item as a job; the specs are resolved here, in the main thread."""
    schemes = participant_schemes(config)
    user = _cached(
        config, f"user:{settings.user}", lambda: resolve_user(settings.user, settings.params("user"), schemes=schemes)
    )
    judge = resolve_judge(settings.judge, settings.params("judge"), schemes=schemes) if settings.judge else None

    def run() -> ResultRow:
        return run_one(
            scenario,
            spec,
            trial=trial,
            base_seed=settings.seed,
            user_factory=user.build,
            judge_factory=judge,
            max_steps=settings.max_steps,
            timeout=settings.timeout,
            max_tool_calls_per_message=settings.max_tool_calls_per_message,
            max_tool_calls=settings.max_tool_calls,
            observer_mode=settings.observer_mode,
            judge_votes=settings.judge_votes,
            cost_limit=settings.episode_cost_limit,
        )

    return run


def episode_job(item: pytest.Item) -> Job | None:
    """How to run ``item``'s episode ahead of its turn, or None when it must run in the item.

    Only items whose agent is an ``--pibench-agent`` spec given to our own
    ``pibench_agent`` fixture qualify (an overridden fixture runs in the item),
    never an agent that is one shared instance, and never a row
    ``--pibench-resume`` will reuse.
    """
    from pytest_pibench.plugin.keys import SETTINGS_KEY

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
    settings = config.stash[SETTINGS_KEY]
    spec = agent_spec_of(agent, config)
    if spec.shared:
        return None
    seed = derive_seed(settings.seed, seed_key(scenario), trial)
    key = run_key(scenario.source_path, spec.name, trial, seed, settings.to_dict())
    if _resumed(config, spec.name, scenario, trial, key)[0] is not None:
        return None
    job = _job(config, settings, scenario, spec, trial)
    from pytest_pibench.plugin.keys import SEQUENTIAL_KEY

    sequential = config.stash.get(SEQUENTIAL_KEY, None)
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
