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

# Every public name (but the versions) and the module, under ``pytest_pibench``, that defines it.
_EXPORTS: dict[str, str] = {
    # schema and loading
    "Scenario": "scenario.models",
    "LABELS": "vocab",
    "ScenarioError": "scenario.loading",
    "load_scenario": "scenario.loading",
    "discover_scenarios": "scenario.loading",
    "json_schema": "scenario.loading",
    # domains and environment
    "Domain": "packs.loading",
    "DomainError": "packs.loading",
    "load_domain": "packs.loading",
    "Environment": "env.environment",
    "TraceEntry": "transcript",
    "deep_merge": "env.environment",
    "Binding": "env.binding",
    "bind_scenario": "env.binding",
    # participants and episodes
    "AgentProtocol": "episode.protocols",
    "UserProtocol": "episode.protocols",
    "JudgeProtocol": "episode.protocols",
    "ScriptedUser": "participants.users",
    "OracleAgent": "participants.builtins",
    "BaselineAgent": "participants.builtins",
    "AgentSpec": "participants.specs",
    "AgentSpecError": "participants.schemes",
    "resolve_agent": "participants.specs",
    "EpisodeResult": "episode.result",
    "run_episode": "run.episode",
    "STOP_SIGNALS": "episode.messages",
    "build_tool_call": "episode.messages",
    # evaluation, rows and metrics
    "CheckResult": "checks.result",
    "ScenarioResult": "evaluation",
    "evaluate": "evaluation",
    "resolve_decision": "checks.canonical_decision",
    "scenario_row": "results.rows",
    "error_row": "results.rows",
    "compute_metrics": "results.metrics",
    "pass_hat_k": "results.metrics",
    "wilson_interval": "results.metrics",
    "to_leaderboard": "results.leaderboard",
    "derive_seed": "episode.seeds",
    # validation and suites
    "ValidationReport": "validation.problems",
    "validate": "validation",
    "run_suite": "run.executor",
    "run_one": "run.episode",
    "RunConfig": "run.config",
    "EpisodeLimits": "episode.limits",
    "Executor": "run.executor",
    "bundled_scenarios_dir": "paths",
}

# The public names: the table above plus the versions. Listed once, in ``_EXPORTS``.
__all__ = ["BENCHMARK_VERSION", "__version__", *_EXPORTS]

if TYPE_CHECKING:
    # For type checkers and IDEs, which cannot follow ``__getattr__``: the same names as
    # ``_EXPORTS``, re-exported explicitly (``name as name``). A test holds the two equal.
    from pytest_pibench.checks.canonical_decision import resolve_decision as resolve_decision
    from pytest_pibench.checks.result import CheckResult as CheckResult
    from pytest_pibench.env.binding import Binding as Binding
    from pytest_pibench.env.binding import bind_scenario as bind_scenario
    from pytest_pibench.env.environment import Environment as Environment
    from pytest_pibench.env.environment import deep_merge as deep_merge
    from pytest_pibench.episode.limits import EpisodeLimits as EpisodeLimits
    from pytest_pibench.episode.messages import STOP_SIGNALS as STOP_SIGNALS
    from pytest_pibench.episode.messages import build_tool_call as build_tool_call
    from pytest_pibench.episode.protocols import AgentProtocol as AgentProtocol
    from pytest_pibench.episode.protocols import JudgeProtocol as JudgeProtocol
    from pytest_pibench.episode.protocols import UserProtocol as UserProtocol
    from pytest_pibench.episode.result import EpisodeResult as EpisodeResult
    from pytest_pibench.episode.seeds import derive_seed as derive_seed
    from pytest_pibench.evaluation import ScenarioResult as ScenarioResult
    from pytest_pibench.evaluation import evaluate as evaluate
    from pytest_pibench.packs.loading import Domain as Domain
    from pytest_pibench.packs.loading import DomainError as DomainError
    from pytest_pibench.packs.loading import load_domain as load_domain
    from pytest_pibench.participants.builtins import BaselineAgent as BaselineAgent
    from pytest_pibench.participants.builtins import OracleAgent as OracleAgent
    from pytest_pibench.participants.schemes import AgentSpecError as AgentSpecError
    from pytest_pibench.participants.specs import AgentSpec as AgentSpec
    from pytest_pibench.participants.specs import resolve_agent as resolve_agent
    from pytest_pibench.participants.users import ScriptedUser as ScriptedUser
    from pytest_pibench.paths import bundled_scenarios_dir as bundled_scenarios_dir
    from pytest_pibench.results.leaderboard import to_leaderboard as to_leaderboard
    from pytest_pibench.results.metrics import compute_metrics as compute_metrics
    from pytest_pibench.results.metrics import pass_hat_k as pass_hat_k
    from pytest_pibench.results.metrics import wilson_interval as wilson_interval
    from pytest_pibench.results.rows import error_row as error_row
    from pytest_pibench.results.rows import scenario_row as scenario_row
    from pytest_pibench.run.config import RunConfig as RunConfig
    from pytest_pibench.run.episode import run_episode as run_episode
    from pytest_pibench.run.episode import run_one as run_one
    from pytest_pibench.run.executor import Executor as Executor
    from pytest_pibench.run.executor import run_suite as run_suite
    from pytest_pibench.scenario.loading import ScenarioError as ScenarioError
    from pytest_pibench.scenario.loading import discover_scenarios as discover_scenarios
    from pytest_pibench.scenario.loading import json_schema as json_schema
    from pytest_pibench.scenario.loading import load_scenario as load_scenario
    from pytest_pibench.scenario.models import Scenario as Scenario
    from pytest_pibench.transcript import TraceEntry as TraceEntry
    from pytest_pibench.validation import validate as validate
    from pytest_pibench.validation.problems import ValidationReport as ValidationReport
    from pytest_pibench.vocab import LABELS as LABELS


if not TYPE_CHECKING:  # hidden from type checkers, so that a misspelt name is an error there

    def __getattr__(name: str) -> Any:
        """Import an exported name from its module on first use (then it is a plain global)."""
        module = _EXPORTS.get(name)
        if module is None:
            raise AttributeError(f"module 'pytest_pibench' has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
        globals()[name] = value
        return value


def __dir__() -> list[str]:
    return sorted(__all__)
