"""The body of a scenario item: run the episode, report every check as a subtest."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from ._agents import AgentSpec, resolve_agent, resolve_judge, resolve_user
from ._schema import Scenario
from ._suite import run_one

__all__ = ["agent_spec_of", "run_scenario_item"]

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
        from .plugin import SETTINGS_KEY

        params = config.stash[SETTINGS_KEY].params("agent")
        return _cached(config, f"agent:{value}", lambda: resolve_agent(value, params))
    name = getattr(value, "pibench_name", None) or getattr(value, "model_name", None)
    if inspect.isclass(value) or inspect.isfunction(value):
        name = name if isinstance(name, str) else f"{value.__module__}:{value.__qualname__}"
        return AgentSpec(name, lambda scenario: value())
    if callable(getattr(value, "generate", None)):
        return AgentSpec(name if isinstance(name, str) else type(value).__name__, lambda scenario: value)
    raise pytest.UsageError(
        f"pibench_agent returned {value!r}: return a spec string, an agent class, a factory or an agent"
    )


def _error_text(row: dict[str, Any]) -> str:
    detail = row.get("error_detail") or {}
    text = f"episode error ({row.get('termination_reason')}): {row.get('error')}"
    if detail.get("traceback"):
        text += f"\n\n{detail['traceback'].rstrip()}"
    return text


def _report_check(check: dict[str, Any]) -> None:
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
    from .plugin import DONE_KEY, ROW_KEY, SETTINGS_KEY

    config = request.config
    settings = config.stash[SETTINGS_KEY]
    item = request.node
    spec = agent_spec_of(agent, config)
    user = _cached(config, f"user:{settings.user}", lambda: resolve_user(settings.user, settings.params("user")))
    judge = resolve_judge(settings.judge, settings.params("judge")) if settings.judge else None
    row = run_one(
        scenario,
        spec,
        trial=trial,
        base_seed=settings.seed,
        user_factory=user.build,
        judge_factory=judge,
        max_steps=settings.max_steps,
        timeout=settings.timeout,
    )
    row["nodeid"] = item.nodeid
    item.stash[ROW_KEY] = row
    try:
        if row["status"] == "error":
            pytest.fail(_error_text(row), pytrace=False)
        for check in row["outcome_checks"]:
            if check["passed"] is None:
                continue  # a Tier-2 check nobody judged: counted in the summary, not a test outcome
            with subtests.test(msg=str(check["outcome_id"])):
                _report_check(check)
    finally:
        item.stash[DONE_KEY] = True
