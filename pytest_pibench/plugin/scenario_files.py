"""Scenario files as pytest modules: one test function per file, parametrized by trial (and agent).

A scenario JSON file is collected as a :class:`pytest.Module` whose object is a
synthetic module holding one test function named after the scenario id, so
items get everything a Python test has: fixtures (including a user's own
``pibench_agent``), parametrization, marks, ``-k`` and ``-m`` selection,
subtests. Node ids read ``scenarios/retail/ret_001.json::RET_001_X[oracle-t0]``.

A file that cannot be run (not UTF-8 JSON, not a valid scenario, a check
naming a tool its domain does not have, a domain that fails to load) becomes
one failing item naming the file and the problem; it never runs an episode.
"""

from __future__ import annotations

import re
import types
from collections.abc import Callable
from typing import Any

import pytest

from pytest_pibench.scenario.loading import ScenarioError, load_scenario
from pytest_pibench.scenario.models import Scenario
from pytest_pibench.vocab import slug

__all__ = ["ScenarioModule"]


def _identifier(text: str) -> str:
    name = re.sub(r"\W", "_", text)
    return name if name and not name[0].isdigit() else f"scenario_{name}"


class ScenarioModule(pytest.Module):
    """A ``*.json`` scenario file collected like a test module."""

    def _getobj(self) -> types.ModuleType:
        module = types.ModuleType(f"pibench_scenario_{_identifier(self.path.stem)}")
        module.__file__ = str(self.path)
        try:
            scenario = load_scenario(self.path)
        except ScenarioError as exc:
            # Reported as an error of this file's item; the other scenarios still run.
            name = _identifier(self.path.stem)
            setattr(module, name, _broken_file_test(str(exc), name))
            return module
        from pytest_pibench.plugin.keys import LABEL_MARKS, SETTINGS_KEY

        settings = self.config.stash[SETTINGS_KEY]
        marks = ["pibench", LABEL_MARKS[scenario.label]]
        from pytest_pibench.packs.loading import canonical_domain_name

        marks.append(_identifier(canonical_domain_name(scenario.meta.domain)).lower())
        if scenario.leaderboard.primary:
            marks.append(slug(scenario.leaderboard.primary))
        if scenario.meta.variant is not None:  # -m variant, -m pressure_urgency; -m "not variant" keeps the bases
            marks += ["variant", f"pressure_{_identifier(scenario.meta.variant.style).lower()}"]
        for mark in marks:
            self.config.addinivalue_line("markers", f"{mark}: pi-bench scenario marker")
        module.pytestmark = [getattr(pytest.mark, mark) for mark in dict.fromkeys(marks)]  # type: ignore[attr-defined]
        name = _identifier(scenario.scenario_id)
        problem = _binding_problem(scenario, str(self.path))
        if problem is not None:  # the scenario's own defect: never run, never scored against an agent
            setattr(module, name, _broken_file_test(problem, name))
            return module
        function = _scenario_test(scenario)
        trials = list(range(settings.run.trials))
        function = pytest.mark.parametrize("pibench_trial", trials, ids=[f"t{t}" for t in trials])(function)
        setattr(module, name, function)
        return module


def _binding_problem(scenario: Scenario, source: str) -> str | None:
    """Why the scenario cannot be bound to its domain (cheap: domains and policies are cached)."""
    from pytest_pibench.env.binding import bind_scenario

    try:
        bind_scenario(scenario)
    except ScenarioError as exc:
        return str(exc)
    except (ValueError, OSError) as exc:  # DomainError, an unreadable policy file
        return f"{source}: {exc}"
    return None


def _mark_as_test(function: Callable[..., Any], name: str) -> Callable[..., Any]:
    function.__name__ = function.__qualname__ = name
    function.__test__ = True  # type: ignore[attr-defined]  # collected whatever python_functions says
    function._pibench_scenario = True  # type: ignore[attr-defined]
    return function


def _broken_file_test(message: str, name: str) -> Callable[..., Any]:
    def test_scenario_file() -> None:
        pytest.fail(message, pytrace=False)

    return _mark_as_test(test_scenario_file, name)


def _scenario_test(scenario: Scenario) -> Callable[..., Any]:
    def test(pibench_agent: Any, pibench_trial: int, subtests: pytest.Subtests, request: pytest.FixtureRequest) -> None:
        from pytest_pibench.plugin.item import run_scenario_item

        run_scenario_item(request, scenario, pibench_agent, pibench_trial, subtests)

    test.pibench_scenario = scenario  # type: ignore[attr-defined]  # episodes run ahead read it (prefetch)
    return _mark_as_test(test, _identifier(scenario.scenario_id))
