"""The rules over a whole set: unique ids, consistent orderings, and rule 8 (discriminative):
the naive and the routine baseline of a label each fully pass at most a third of a domain's
scenarios of that label."""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from pytest_pibench.checks.tool_roles import ordered_pairs
from pytest_pibench.env.binding import Binding, bind_scenario
from pytest_pibench.evaluation import evaluate
from pytest_pibench.participants.builtins import ROUTINE_BASELINE_DECISIONS, RoutineAgent
from pytest_pibench.participants.specs import BASELINE_DECISIONS, BaselineAgent
from pytest_pibench.run.episode import run_episode
from pytest_pibench.scenario.models import Scenario
from pytest_pibench.validation.problems import Problem

__all__ = ["BaselineReach", "baseline_reach", "set_problems"]


def set_problems(loaded: list[tuple[str, Scenario, Binding]]) -> list[Problem]:
    """Every set-level rule over the loaded ``(file, scenario, binding)`` triples."""
    return _cross_scenario(loaded) + _discrimination_problems(loaded)


def _cross_scenario(loaded: list[tuple[str, Scenario, Binding]]) -> list[Problem]:
    out: list[Problem] = []
    ids: dict[str, str] = {}
    orders: dict[tuple[str, str, str], str] = {}
    for name, scenario, binding in loaded:
        sid = scenario.scenario_id
        if sid in ids:
            out.append(Problem(name, "ids", f"scenario_id {sid} is also used by {ids[sid]}"))
        ids.setdefault(sid, name)
        for check in scenario.evaluation_criteria.policy_checks:
            for first, then in ordered_pairs(check):
                orders.setdefault((binding.domain.name, first, then), name)
    conflicts: dict[str, list[str]] = defaultdict(list)
    for (domain, first, second), name in orders.items():
        other = orders.get((domain, second, first))
        if other is not None and first < second:
            conflicts[name].append(f"requires {first} before {second}, but {other} requires the reverse")
    for name, messages in conflicts.items():
        out += [Problem(name, "consistency", m) for m in messages]
    return out


_MIN_CERTIFIED_GROUP = 3
"""Rule 8 applies to a label with at least this many scenarios in a domain: below, a third is not one scenario."""


@dataclass(frozen=True, slots=True)
class BaselineReach:
    """What one baseline of a label fully passes among one domain's scenarios of that label (DESIGN §4 rule 8).

    ``baseline`` is the naive (``baseline:escalate``) or routine
    (``baseline:routine-escalate``) agent that records ``label``;
    ``scenarios`` and ``passed`` are scenario ids.
    """

    domain: str
    label: str
    baseline: str
    scenarios: tuple[str, ...]
    passed: tuple[str, ...]

    @property
    def allowed(self) -> int:
        """The most scenarios the baseline may pass: a third of the label's."""
        return len(self.scenarios) // 3

    @property
    def over(self) -> bool:
        """True when it passes more than a third (checked from :data:`_MIN_CERTIFIED_GROUP` scenarios on)."""
        return len(self.scenarios) >= _MIN_CERTIFIED_GROUP and len(self.passed) > self.allowed


def baseline_reach(scenarios: Iterable[Scenario]) -> list[BaselineReach]:
    """For each domain and label, how many of its scenarios the naive and the routine baseline of that label pass.

    "Pass" is every Tier-1 check passed. A label without a naive baseline
    (ALLOW-CONDITIONAL) or a domain without a ``ROUTINE`` has no such row.

    Raises:
        ScenarioError, DomainError: for a scenario that cannot be bound to its domain.
    """
    groups: dict[tuple[str, str], list[tuple[Scenario, Binding]]] = defaultdict(list)
    for scenario in scenarios:
        binding = bind_scenario(scenario, check_tools=False)
        groups[(binding.domain.name, scenario.label)].append((scenario, binding))
    naive = {decision: f"baseline:{kind}" for kind, decision in BASELINE_DECISIONS.items() if decision}
    routine = {decision: f"baseline:{kind}" for kind, decision in ROUTINE_BASELINE_DECISIONS.items()}
    reach: list[BaselineReach] = []
    for (domain, label), members in sorted(groups.items()):
        ids = tuple(s.scenario_id for s, _ in members)
        baselines = [naive[label]] if label in naive else []
        if label in routine and members[0][1].domain.routine is not None:
            baselines.append(routine[label])
        for name in baselines:
            passed = []
            for scenario, binding in members:
                agent = RoutineAgent(scenario, label) if name == routine.get(label) else BaselineAgent(label)
                if evaluate(scenario, run_episode(scenario, agent, binding=binding)).all_passed:
                    passed.append(scenario.scenario_id)
            reach.append(BaselineReach(domain, label, name, ids, tuple(passed)))
    return reach


def _discrimination_problems(loaded: list[tuple[str, Scenario, Binding]]) -> list[Problem]:
    """Rule 8: no naive or routine baseline passes more than a third of its domain's scenarios of its label."""
    files: dict[str, str] = {scenario.scenario_id: name for name, scenario, _ in loaded}
    out: list[Problem] = []
    for row in baseline_reach(scenario for _, scenario, _ in loaded):
        if row.over:
            message = (
                f"{row.baseline} fully passes {len(row.passed)} of the {len(row.scenarios)} {row.label} scenarios "
                f"of domain {row.domain!r} (at most {row.allowed}, a third): {', '.join(row.passed)}"
            )
            out.append(Problem(os.path.commonpath([files[i] for i in row.scenarios]), "discriminative", message))
    return out
