"""The plan of a run: every (scenario, agent, trial) item, with its seed and run key, resolved once."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_pibench.episode.seeds import derive_seed
from pytest_pibench.results.resume import run_key
from pytest_pibench.results.types import RunKey
from pytest_pibench.scenario.loading import discover_scenarios
from pytest_pibench.scenario.models import Scenario

__all__ = ["PlannedItem", "plan_items", "planned_item", "scenario_files", "seed_key"]


def seed_key(scenario: Scenario | Path) -> str:
    """What a scenario's seeds derive from: its file's stem (its id when it has no file)."""
    if isinstance(scenario, Path):
        return scenario.stem
    return scenario.source_path.stem if scenario.source_path else scenario.scenario_id


@dataclass(frozen=True)
class PlannedItem:
    """One episode the run will play: which scenario, for which agent, which trial, under which seed.

    ``scenario`` is a loaded scenario or the path of its file (a file that does
    not load becomes the item's ``scenario_error`` row, not an exception).
    ``key`` is what decides the episode's result (``--pibench-resume`` compares it);
    None for an item run on its own, outside a run (:func:`~pytest_pibench.run.episode.run_one`).
    """

    scenario: Scenario | Path
    agent: str
    trial: int
    seed: int
    key: RunKey | None = None

    @property
    def source_path(self) -> Path | None:
        return self.scenario if isinstance(self.scenario, Path) else self.scenario.source_path

    @property
    def scenario_id(self) -> str:
        """The scenario's id; a file not loaded yet goes by its stem."""
        return self.scenario.scenario_id if isinstance(self.scenario, Scenario) else self.scenario.stem


def planned_item(
    scenario: Scenario | Path, agent: str, trial: int, seed: int, settings: dict[str, Any] | None
) -> PlannedItem:
    """The item of ``scenario`` for ``agent``'s ``trial`` in a run of base seed ``seed`` and ``settings``.

    Without ``settings`` the item has no run key (nothing reads the scenario file here).
    """
    item_seed = derive_seed(seed, seed_key(scenario), trial)
    if settings is None:
        return PlannedItem(scenario, agent, trial, item_seed)
    source = scenario if isinstance(scenario, Path) else scenario.source_path
    return PlannedItem(scenario, agent, trial, item_seed, run_key(source, agent, trial, item_seed, settings))


def scenario_files(paths: Iterable[str | Path]) -> list[Path]:
    """Every scenario file under ``paths`` (files or folders), in a stable order, each once."""
    return list(dict.fromkeys(f for p in paths for f in discover_scenarios(Path(p))))


def plan_items(
    scenarios: Sequence[Scenario | Path], agents: Sequence[str], trials: int, seed: int, settings: dict[str, Any]
) -> list[PlannedItem]:
    """Every item of a run, agent by agent, scenario by scenario, trial by trial."""
    return [
        planned_item(scenario, agent, trial, seed, settings)
        for agent in agents
        for scenario in scenarios
        for trial in range(trials)
    ]
