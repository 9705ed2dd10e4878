"""The scenario validator: the quality bar of DESIGN §4, rule by rule.

``validate(path)`` loads every scenario under ``path`` and reports problems:
schema and consistency errors, checks naming unknown or unexposed tools,
ignored check lists, an oracle that fails a Tier-1 check, a naive baseline
that passes although its decision differs from the label, demanded values the
agent could not know, hidden text that reaches the agent, contradictory
orderings between scenarios of one domain, and unfair customers (``fairness``:
a reactive branch that gives data a check demands on ``asked``, ``decision`` or
``tool_not_called`` alone instead of on the topic, ``said_any``, or a tool call). Rule 8 (discriminative): the naive
and the routine baseline of a label (``baseline:escalate``,
``baseline:routine-escalate``) each fully pass at most a third of a domain's
scenarios of that label (:func:`baseline_reach`; checked for a label with three
scenarios or more). Decisive facts (``fact_rules``): each declared fact's tool is
called by the gold trajectory, each declared clause is in the policy, a ``hard``
scenario needs two facts from different tools; per domain an info line says how
many scenarios are single-fact, and at most a quarter may be once all declare facts.
"""

from __future__ import annotations

from pathlib import Path

from pytest_pibench.env.binding import Binding, bind_scenario
from pytest_pibench.packs.loading import DomainError
from pytest_pibench.scenario.loading import ScenarioError, discover_scenarios, load_scenario
from pytest_pibench.scenario.models import Scenario
from pytest_pibench.validation.fact_rules import FactCoverage, fact_coverage, fact_set_problems
from pytest_pibench.validation.problems import Problem, ValidationReport
from pytest_pibench.validation.scenario_rules import validate_scenario
from pytest_pibench.validation.set_rules import BaselineReach, baseline_reach, set_problems
from pytest_pibench.validation.step_rules import step_budget_info

__all__ = [
    "BaselineReach",
    "FactCoverage",
    "Problem",
    "ValidationReport",
    "baseline_reach",
    "fact_coverage",
    "validate",
    "validate_scenario",
]


def validate(path: str | Path) -> ValidationReport:
    """Validate every scenario file under ``path`` (a file or a directory)."""
    report = ValidationReport()
    loaded: list[tuple[str, Scenario, Binding]] = []
    for file in discover_scenarios(path):
        name = str(file)
        report.files.append(name)
        try:
            scenario = load_scenario(file)
            binding = bind_scenario(scenario, check_tools=False)  # unknown check tools: rule 'tools'
        except ScenarioError as exc:
            report.problems += [Problem(name, "schema", f"{p}: {m}" if p else m) for p, m in exc.problems]
            continue
        except DomainError as exc:
            report.problems.append(Problem(name, "domain", str(exc)))
            continue
        report.problems += validate_scenario(scenario, binding, name=name)
        loaded.append((name, scenario, binding))
    report.problems += set_problems(loaded)
    fact_problems, report.info = fact_set_problems(loaded)
    report.problems += fact_problems
    report.info += step_budget_info(loaded)
    return report
