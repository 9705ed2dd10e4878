"""Play records: write one file per play, find its scenario again, and score it.

The format is :mod:`pytest_pibench.participants.replay`'s (``"format":
"pibench-play"``, ``"format_version": 1``). A step-mode state file is a record
too (``"status": "playing"`` until the episode ends, then ``"finished"``), so
a play in progress can be scored or replayed as it stands.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pytest_pibench.bounds import strict_dumps
from pytest_pibench.episode.loop import EpisodeResult
from pytest_pibench.evaluation import ScenarioResult, evaluate
from pytest_pibench.participants.replay import PLAY_FORMAT, PLAY_FORMAT_VERSION, RecordError, ReplayAgent
from pytest_pibench.paths import bundled_scenarios_dir
from pytest_pibench.results.files import atomic_write
from pytest_pibench.run.episode import run_episode
from pytest_pibench.scenario.loading import load_scenario
from pytest_pibench.scenario.models import Scenario
from pytest_pibench.vocab import DEFAULT_MAX_STEPS

__all__ = ["Score", "make_record", "record_scenario_path", "scenario_reference", "score_record", "write_record"]


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def scenario_reference(scenario: Scenario) -> dict[str, Any]:
    """How a record names its scenario: id, path (relative to the bundled set when bundled), sha256."""
    path = Path(str(scenario.source_path)).resolve()
    bundled = bundled_scenarios_dir().resolve()
    inside = path.is_relative_to(bundled)
    return {
        "scenario_id": scenario.scenario_id,
        "path": path.relative_to(bundled).as_posix() if inside else str(path),
        "bundled": inside,
        "sha256": _sha256(path),
    }


def record_scenario_path(record: dict[str, Any]) -> Path:
    """The scenario file a record was played on (a bundled path is found in this install's set)."""
    reference = record["scenario"]
    path = Path(str(reference.get("path", "")))
    return bundled_scenarios_dir() / path if reference.get("bundled") else path


def make_record(
    scenario: Scenario,
    episode: EpisodeResult | None,
    actions: list[dict[str, Any]],
    *,
    seed: int,
    player: str | None,
    blind: bool,
    max_steps: int = DEFAULT_MAX_STEPS,
    date: str | None = None,
) -> dict[str, Any]:
    """A record of the play so far (``episode`` None: nothing played yet); its decision, never its score."""
    decision = None
    if episode is not None and episode.trace:
        decision = evaluate(scenario, episode).decision.canonical_decision
    finished = episode is not None and episode.termination_reason != "agent_error"
    return {
        "format": PLAY_FORMAT,
        "format_version": PLAY_FORMAT_VERSION,
        "scenario": scenario_reference(scenario),
        "player": player,
        "date": date or datetime.now(UTC).isoformat(timespec="seconds"),
        "blind": blind,
        "seed": seed,
        "max_steps": max_steps,
        "status": "finished" if finished else "playing",
        "decision": decision,
        "termination_reason": episode.termination_reason if finished and episode else None,
        "actions": actions,
        "transcript": [_without_index(m) for m in episode.messages] if episode else [],
    }


def _without_index(message: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in message.items() if k != "turn_index"}


def write_record(path: str | Path, record: dict[str, Any]) -> Path:
    """Write ``record`` atomically (a crash never leaves half a record).

    A folder (an existing one, or a path ending in ``/``) gets a file with a neutral name.
    """
    folder = str(path).endswith(("/", os.sep))
    path = Path(path)
    if folder or path.is_dir():
        path.mkdir(parents=True, exist_ok=True)
        digest = hashlib.sha256(json.dumps(record, sort_keys=True).encode()).hexdigest()[:12]
        path = path / f"play-{digest}.json"  # neutral: a record's name never says which scenario it holds
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, [strict_dumps(record, indent=1, ensure_ascii=False), "\n"])  # the one writer: umask kept
    return path


@dataclass(frozen=True)
class Score:
    """A record re-played against the current scenario file and scored."""

    scenario: Scenario
    result: ScenarioResult
    episode: EpisodeResult
    changed: bool
    """The scenario file's sha256 differs from the one the play was recorded on."""
    diverged: bool
    """The replay did not use exactly the recorded actions (the scenario's user or tools changed)."""


def score_record(record: dict[str, Any], scenario_path: Path | None = None) -> Score:
    """Replay the record's actions on its scenario (or ``scenario_path``) as it is now, and score the episode.

    Raises:
        RecordError: the scenario file is gone.
        ScenarioError, DomainError: the scenario or its domain no longer loads.
    """
    path = scenario_path or record_scenario_path(record)
    if not path.is_file():
        raise RecordError(f"the record's scenario file is gone: {path} (name another with --scenario)")
    scenario = load_scenario(path)
    agent = ReplayAgent(record["actions"])
    episode = run_episode(
        scenario, agent, seed=record.get("seed"), max_steps=int(record.get("max_steps") or DEFAULT_MAX_STEPS)
    )
    used = sum(1 for m in episode.messages[1:] if m.get("role") == "assistant")
    return Score(
        scenario=scenario,
        result=evaluate(scenario, episode),
        episode=episode,
        changed=_sha256(path) != record["scenario"].get("sha256"),
        diverged=used != len(record["actions"]),
    )
