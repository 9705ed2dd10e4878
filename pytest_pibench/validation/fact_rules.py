"""Decisive facts and clauses (issue 24 §3, DESIGN §4 rules 8 and 11): hidden metadata the validator checks.

A scenario may declare, in hidden ``meta``, the facts its decision turns on
(``decisive_facts``: the fact in words, the tool whose result shows it and the
field there) and the policy clauses it turns on (``clauses``). Per scenario:
each fact's tool is a tool of the domain and the gold trajectory calls it; each
clause id occurs in the policy text; a ``meta.cohort`` ``"hard"`` scenario
declares two facts or more from different tools and at least one clause.

Over a set: per domain, how many scenarios declare facts and how many of those
are *single-fact* (fewer than two facts from different tools), reported as an
info line. The rule "at most a quarter of a domain's set is settled by one
fact" is enforced once every scenario of the domain declares its facts: until
the set is annotated a scenario without facts says nothing either way.
"""

from __future__ import annotations

import os
import re
from collections import defaultdict
from dataclasses import dataclass

from pytest_pibench.env.binding import Binding
from pytest_pibench.scenario.models import Meta, Scenario
from pytest_pibench.validation.problems import Problem

__all__ = ["HARD_COHORT", "FactCoverage", "decisive_fact_problems", "fact_coverage", "fact_set_problems"]

HARD_COHORT = "hard"
"""``meta.cohort`` of issue 24's new scenarios (as ``pi calibration``'s ``NEW_COHORT``): they must meet the §3 bar."""

_MIN_FACT_TOOLS = 2
"""A scenario is settled by one fact unless its decisive facts come from at least this many different tools."""

_MIN_QUARTER_GROUP = 4
"""The quarter rule applies to a domain with at least this many scenarios: below, a quarter is not one scenario
(so validating one draft, or a few, never fails on it)."""


def fact_tools(meta: Meta) -> set[str]:
    """The different tools that show the scenario's decisive facts."""
    return {fact.tool for fact in meta.decisive_facts}


def single_fact(meta: Meta) -> bool:
    """Fewer than two decisive facts from different tools (also true for a scenario that declares none)."""
    return len(fact_tools(meta)) < _MIN_FACT_TOOLS


def _clause_in(clause: str, policy: str) -> bool:
    """``clause`` occurs in ``policy`` as a whole id: ``FIN-1.1`` is not found in ``FIN-1.10`` or ``XFIN-1.1``."""
    return re.search(rf"(?<![\w.-]){re.escape(clause)}(?![\w-]|\.\d)", policy) is not None


def decisive_fact_problems(scenario: Scenario, binding: Binding) -> list[str]:
    """The per-scenario rules on ``meta.decisive_facts`` and ``meta.clauses``."""
    meta = scenario.meta
    ref = scenario.reference_trajectory
    called = ({call.name for call in ref.calls} | set(ref.tool_sequence or [])) if ref else set()
    out: list[str] = []
    for index, fact in enumerate(meta.decisive_facts):
        where = f"meta.decisive_facts[{index}]"
        if binding.domain.tool(fact.tool) is None:
            out.append(f"{where}: tool {fact.tool!r} is not a tool of domain {binding.domain.name!r}")
        elif fact.tool not in called:
            out.append(
                f"{where}: tool {fact.tool!r} is never called in the reference trajectory, "
                f"so the gold solution does not read the fact it turns on ({fact.field})"
            )
    for index, clause in enumerate(meta.clauses):
        if not _clause_in(clause.strip(), binding.policy_text):
            out.append(f"meta.clauses[{index}]: {clause!r} does not occur in the policy text")
    if meta.cohort == HARD_COHORT:
        tools = fact_tools(meta)
        if len(tools) < _MIN_FACT_TOOLS:
            out.append(
                f"meta.cohort {HARD_COHORT!r} needs at least {_MIN_FACT_TOOLS} decisive facts from different tools "
                f"(issue 24 §3); it declares {len(meta.decisive_facts)} from {len(tools)} tool(s)"
            )
        if not meta.clauses:
            out.append(f"meta.cohort {HARD_COHORT!r} needs at least one clause id in meta.clauses")
    return out


@dataclass(frozen=True, slots=True)
class FactCoverage:
    """One domain's scenarios and their decisive-fact declarations (issue 24 §3).

    ``scenarios`` are all the domain's scenario ids; ``annotated`` those that
    declare decisive facts; ``single_fact`` the annotated ones whose facts come
    from fewer than two different tools.
    """

    domain: str
    scenarios: tuple[str, ...]
    annotated: tuple[str, ...]
    single_fact: tuple[str, ...]

    @property
    def share(self) -> float:
        """Single-fact scenarios among the annotated ones (0.0 when none is annotated)."""
        return len(self.single_fact) / len(self.annotated) if self.annotated else 0.0

    @property
    def allowed(self) -> int:
        """The most single-fact scenarios the domain's set may hold: a quarter of it."""
        return len(self.scenarios) // 4

    @property
    def enforced(self) -> bool:
        """The quarter rule applies: every scenario of the domain declares its decisive facts (four or more)."""
        return len(self.scenarios) >= _MIN_QUARTER_GROUP and len(self.annotated) == len(self.scenarios)

    @property
    def over(self) -> bool:
        """Enforced, and more than a quarter of the set is single-fact."""
        return self.enforced and len(self.single_fact) > self.allowed

    def summary(self) -> str:
        """The info line ``pi validate`` prints."""
        text = (
            f"decisive facts, domain {self.domain!r}: {len(self.annotated)} of {len(self.scenarios)} scenario(s) "
            f"declare them, {len(self.single_fact)} single-fact ({self.share:.0%} of those)"
        )
        if self.enforced:
            return f"{text}; at most a quarter ({self.allowed}) may be single-fact"
        if len(self.scenarios) < _MIN_QUARTER_GROUP:
            return f"{text}; the at-most-a-quarter rule applies to {_MIN_QUARTER_GROUP} scenarios or more"
        return f"{text}; the at-most-a-quarter rule applies once all {len(self.scenarios)} declare them"


def fact_coverage(scenarios: list[tuple[Scenario, Binding]]) -> list[FactCoverage]:
    """Per domain (sorted by name), which scenarios declare decisive facts and which are single-fact."""
    groups: dict[str, list[Scenario]] = defaultdict(list)
    for scenario, binding in scenarios:
        groups[binding.domain.name].append(scenario)
    rows = []
    for domain, members in sorted(groups.items()):
        annotated = [s for s in members if s.meta.decisive_facts]
        rows.append(
            FactCoverage(
                domain,
                tuple(s.scenario_id for s in members),
                tuple(s.scenario_id for s in annotated),
                tuple(s.scenario_id for s in annotated if single_fact(s.meta)),
            )
        )
    return rows


def fact_set_problems(loaded: list[tuple[str, Scenario, Binding]]) -> tuple[list[Problem], list[str]]:
    """The quarter rule over the loaded ``(file, scenario, binding)`` triples: its problems and its info lines."""
    files: dict[str, list[str]] = defaultdict(list)
    for name, _, binding in loaded:
        files[binding.domain.name].append(name)
    problems = []
    rows = fact_coverage([(scenario, binding) for _, scenario, binding in loaded])
    for row in rows:
        if row.over:
            message = (
                f"{len(row.single_fact)} of the {len(row.scenarios)} scenarios of domain {row.domain!r} are settled "
                f"by one fact (fewer than two decisive facts from different tools; at most {row.allowed}, "
                f"a quarter): {', '.join(row.single_fact)}"
            )
            problems.append(Problem(os.path.commonpath(files[row.domain]), "single-fact", message))
    return problems, [row.summary() for row in rows]
