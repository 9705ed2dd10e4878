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

__version__ = "0.1.0"
BENCHMARK_VERSION = "pibench-2026.1"
"""Version of the shipped scenario set; stamped into results so runs stay comparable."""

_EXPORTS: dict[str, str] = {
    # schema and loading
    "Scenario": "_schema",
    "LABELS": "_schema",
    "ScenarioError": "_loading",
    "load_scenario": "_loading",
    "discover_scenarios": "_loading",
    "json_schema": "_loading",
    # domains and environment
    "Domain": "_domain",
    "DomainError": "_domain",
    "load_domain": "_domain",
    "Environment": "_environment",
    "TraceEntry": "_environment",
    "deep_merge": "_environment",
    "Binding": "_binding",
    "bind_scenario": "_binding",
    # participants and episodes
    "AgentProtocol": "_protocols",
    "UserProtocol": "_protocols",
    "JudgeProtocol": "_protocols",
    "ScriptedUser": "_users",
    "OracleAgent": "_agents",
    "BaselineAgent": "_agents",
    "AgentSpec": "_agents",
    "AgentSpecError": "_agents",
    "resolve_agent": "_agents",
    "EpisodeResult": "_episode",
    "run_episode": "_episode",
    "STOP_SIGNALS": "_messages",
    "build_tool_call": "_messages",
    # evaluation, rows and metrics
    "CheckResult": "_evaluation",
    "ScenarioResult": "_evaluation",
    "evaluate": "_evaluation",
    "resolve_decision": "_decision",
    "scenario_row": "_rows",
    "error_row": "_rows",
    "compute_metrics": "_metrics",
    "pass_hat_k": "_metrics",
    "wilson_interval": "_metrics",
    "to_leaderboard": "_leaderboard",
    "derive_seed": "_seeds",
    # validation and suites
    "ValidationReport": "_validator",
    "validate": "_validator",
    "run_suite": "_suite",
    "run_one": "_suite",
    "bundled_scenarios_dir": "_paths",
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
    from ._agents import AgentSpec, AgentSpecError, BaselineAgent, OracleAgent, resolve_agent
    from ._binding import Binding, bind_scenario
    from ._decision import resolve_decision
    from ._domain import Domain, DomainError, load_domain
    from ._environment import Environment, TraceEntry, deep_merge
    from ._episode import EpisodeResult, run_episode
    from ._evaluation import CheckResult, ScenarioResult, evaluate
    from ._leaderboard import to_leaderboard
    from ._loading import ScenarioError, discover_scenarios, json_schema, load_scenario
    from ._messages import STOP_SIGNALS, build_tool_call
    from ._metrics import compute_metrics, pass_hat_k, wilson_interval
    from ._paths import bundled_scenarios_dir
    from ._protocols import AgentProtocol, JudgeProtocol, UserProtocol
    from ._rows import error_row, scenario_row
    from ._schema import LABELS, Scenario
    from ._seeds import derive_seed
    from ._suite import run_one, run_suite
    from ._users import ScriptedUser
    from ._validator import ValidationReport, validate


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'pytest_pibench' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
