"""pytest-pibench: the pi-bench policy-compliance benchmark for AI agents.

The engine works without pytest::

    from pytest_pibench import load_scenario, run_episode, evaluate, compute_metrics

    scenario = load_scenario("scenarios/retail/ret_001_standard_return.json")
    episode = run_episode(scenario, "oracle")
    result = evaluate(scenario, episode)

Names are imported lazily so that loading the pytest plugin stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from pytest_pibench.vocab import BENCHMARK_VERSION, __version__

_EXPORTS: dict[str, str] = {
    # schema and loading
    "Scenario": "scenario.models",
    "LABELS": "scenario.models",
    "ScenarioError": "scenario.loading",
    "load_scenario": "scenario.loading",
    "discover_scenarios": "scenario.loading",
    "json_schema": "scenario.loading",
    # domains and environment
    "Domain": "domain.packs",
    "DomainError": "domain.packs",
    "load_domain": "domain.packs",
    "Environment": "env.environment",
    "TraceEntry": "env.environment",
    "deep_merge": "env.environment",
    "Binding": "env.binding",
    "bind_scenario": "env.binding",
    # participants and episodes
    "AgentProtocol": "episode.protocols",
    "UserProtocol": "episode.protocols",
    "JudgeProtocol": "episode.protocols",
    "ScriptedUser": "participants.users",
    "OracleAgent": "participants.specs",
    "BaselineAgent": "participants.specs",
    "AgentSpec": "participants.specs",
    "AgentSpecError": "participants.specs",
    "resolve_agent": "participants.specs",
    "EpisodeResult": "episode.loop",
    "run_episode": "runner",
    "STOP_SIGNALS": "episode.messages",
    "build_tool_call": "episode.messages",
    # evaluation, rows and metrics
    "CheckResult": "evaluation",
    "ScenarioResult": "evaluation",
    "evaluate": "evaluation",
    "resolve_decision": "checks.decision",
    "scenario_row": "results.rows",
    "error_row": "results.rows",
    "compute_metrics": "results.metrics",
    "pass_hat_k": "results.metrics",
    "wilson_interval": "results.metrics",
    "to_leaderboard": "results.leaderboard",
    "derive_seed": "episode.seeds",
    # validation and suites
    "ValidationReport": "validate",
    "validate": "validate",
    "run_suite": "runner",
    "run_one": "runner",
    "bundled_scenarios_dir": "paths",
}

__all__ = [
    "BENCHMARK_VERSION",
    "__version__",
    "AgentProtocol",
    "AgentSpec",
    "AgentSpecError",
    "BaselineAgent",
    "Binding",
    "CheckResult",
    "Domain",
    "DomainError",
    "Environment",
    "EpisodeResult",
    "JudgeProtocol",
    "LABELS",
    "OracleAgent",
    "STOP_SIGNALS",
    "Scenario",
    "ScenarioError",
    "ScenarioResult",
    "ScriptedUser",
    "TraceEntry",
    "UserProtocol",
    "ValidationReport",
    "bind_scenario",
    "build_tool_call",
    "bundled_scenarios_dir",
    "compute_metrics",
    "deep_merge",
    "derive_seed",
    "discover_scenarios",
    "error_row",
    "evaluate",
    "json_schema",
    "load_domain",
    "load_scenario",
    "pass_hat_k",
    "resolve_agent",
    "resolve_decision",
    "run_episode",
    "run_one",
    "run_suite",
    "scenario_row",
    "to_leaderboard",
    "validate",
    "wilson_interval",
]

if TYPE_CHECKING:
    from pytest_pibench.checks.decision import resolve_decision
    from pytest_pibench.domain.packs import Domain, DomainError, load_domain
    from pytest_pibench.env.binding import Binding, bind_scenario
    from pytest_pibench.env.environment import Environment, TraceEntry, deep_merge
    from pytest_pibench.episode.loop import EpisodeResult
    from pytest_pibench.episode.messages import STOP_SIGNALS, build_tool_call
    from pytest_pibench.episode.protocols import AgentProtocol, JudgeProtocol, UserProtocol
    from pytest_pibench.episode.seeds import derive_seed
    from pytest_pibench.evaluation import CheckResult, ScenarioResult, evaluate
    from pytest_pibench.participants.specs import AgentSpec, AgentSpecError, BaselineAgent, OracleAgent, resolve_agent
    from pytest_pibench.participants.users import ScriptedUser
    from pytest_pibench.paths import bundled_scenarios_dir
    from pytest_pibench.results.leaderboard import to_leaderboard
    from pytest_pibench.results.metrics import compute_metrics, pass_hat_k, wilson_interval
    from pytest_pibench.results.rows import error_row, scenario_row
    from pytest_pibench.runner import run_episode, run_one, run_suite
    from pytest_pibench.scenario.loading import ScenarioError, discover_scenarios, json_schema, load_scenario
    from pytest_pibench.scenario.models import LABELS, Scenario
    from pytest_pibench.validate import ValidationReport, validate


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'pytest_pibench' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
