"""Make a pressure variant of a hand-written scenario, certify it, and write it.

A variant is the base scenario file with words added on the customer's side
only (:mod:`pytest_pibench.generation.styles`): the opening message, the
branches that answer a refusal, the persona and the stage directions. The
label, the checks, the environment and the reference trajectory are the base's,
byte for byte; ``meta.variant`` records the base, the style and the seed, and
the scenario id and file name gain the style (``HD_003_X__URGENCY`` in
``hd_003_x__urgency.json``) so ``-k urgency`` selects a style and results can
be grouped by it.

Nothing is written that does not pass the validator (every per-scenario rule
of DESIGN §4, the oracle included) and whose gold trajectory does not pass
every Tier-1 check with the base's decision; such a variant is *refused*.
Generation is deterministic: the same base, style and seed give the same file.
"""

from __future__ import annotations

import copy
import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_pibench.evaluation import evaluate
from pytest_pibench.generation.styles import PressureStyle
from pytest_pibench.participants.specs import OracleAgent
from pytest_pibench.run.episode import run_episode
from pytest_pibench.scenario.loading import ScenarioError, load_scenario, scenario_from_dict
from pytest_pibench.scenario.models import Scenario
from pytest_pibench.validation.scenario_rules import validate_scenario

__all__ = ["GENERATOR", "REFUSING_DECISIONS", "GeneratedVariant", "make_variant", "variant_problems", "write_variants"]

GENERATOR = "pi generate 1"
"""Recorded in ``meta.variant.generator``: bump the number when the same seed would give other words."""

REFUSING_DECISIONS = frozenset({"DENY", "ESCALATE", "ALLOW-CONDITIONAL"})
"""A branch conditioned on one of these answers a refusal: the customer did not get what was asked."""

_KEEP = ("label", "evaluation_criteria", "reference_trajectory", "environment_setup", "available_tools")
"""Top-level sections a variant must leave exactly as the base has them."""


def _seeded(seed: int, base_id: str, style: str) -> random.Random:
    # A string seed is hashed with SHA-512 by random.seed: stable across runs and PYTHONHASHSEED.
    return random.Random(f"{seed}:{base_id}:{style}")


def _join(first: str, second: str) -> str:
    return f"{first.rstrip()}\n\n{second.lstrip()}" if "\n" in first + second else f"{first.rstrip()} {second.lstrip()}"


def make_variant(base: dict[str, Any], style: PressureStyle, seed: int) -> dict[str, Any]:
    """The variant of the decoded scenario file ``base`` under ``style`` (a new dict; ``base`` is not changed)."""
    if (base.get("meta") or {}).get("variant"):
        raise ValueError(f"{base['meta'].get('scenario_id')} is itself a generated variant: generate from its base")
    variant = copy.deepcopy(base)
    meta = variant["meta"]
    base_id = str(meta["scenario_id"])
    rng = _seeded(seed, base_id, style.name)
    meta["scenario_id"] = f"{base_id}__{style.name.upper()}"
    meta["variant"] = {"base": base_id, "style": style.name, "seed": seed, "generator": GENERATOR}
    meta["notes"] = (
        f"Generated from {base_id} under the pressure style {style.name!r} (seed {seed}): only the customer's "
        f"words differ; the label, checks and reference trajectory are the base's. {meta.get('notes', '')}"
    ).rstrip()
    board = variant.setdefault("leaderboard", {})
    board["stressors"] = [*board.get("stressors", []), f"Pressure style: {style.name} ({style.description})"]

    user = variant.setdefault("user_simulation", {})
    opening = rng.choice(style.opening)
    first = str(user.get("initial_user_message", ""))
    user["initial_user_message"] = _join(opening, first) if style.before else _join(first, opening)
    for turn in user.get("scripted_turns") or []:
        if not isinstance(turn, dict):
            continue
        for branch in turn.get("branches") or []:
            if (branch.get("when") or {}).get("decision") in REFUSING_DECISIONS:
                branch["say"] = _join(str(branch["say"]), rng.choice(style.push))
    user["pressure_script"] = [*user.get("pressure_script", []), style.direction]
    if user.get("persona"):
        user["persona"] = f"{user['persona']} {style.description}"
    return variant


def variant_problems(base: dict[str, Any], variant: dict[str, Any], target: Path) -> list[str]:
    """Why ``variant`` (to be written at ``target``) may not be shipped; empty when it is certified."""
    problems = [f"{key} differs from the base" for key in _KEEP if base.get(key) != variant.get(key)]
    try:
        scenario = scenario_from_dict(variant, source=str(target))
    except ScenarioError as exc:
        return problems + [f"{where or 'scenario'}: {message}" for where, message in exc.problems]
    scenario._source_path = target.resolve()
    problems += [f"{p.rule}: {p.message}" for p in validate_scenario(scenario, name=target.name)]
    if not problems:
        problems += _oracle_problems(scenario)
    return problems


def _oracle_problems(scenario: Scenario) -> list[str]:
    result = evaluate(scenario, run_episode(scenario, OracleAgent(scenario)))
    if not result.all_passed:
        return ["oracle: the reference trajectory does not pass every Tier-1 check of the variant"]
    if result.decision.canonical_decision != scenario.label:
        return [f"oracle: the reference trajectory decides {result.decision.canonical_decision}, not {scenario.label}"]
    return []


@dataclass
class GeneratedVariant:
    """The outcome for one (base, style): ``path`` written, or ``problems`` and nothing written."""

    base: Path
    style: str
    path: Path
    written: bool = False
    unchanged: bool = False
    problems: list[str] = field(default_factory=list)


def _is_generated(path: Path) -> bool:
    try:
        meta = json.loads(path.read_text(encoding="utf-8")).get("meta") or {}
    except (OSError, ValueError, AttributeError):
        return False
    return bool(meta.get("variant"))


def write_variants(
    bases: list[Path], styles: list[PressureStyle], seed: int, out_dir: Path | None = None
) -> list[GeneratedVariant]:
    """Generate, certify and write one variant per base and style, beside the base unless ``out_dir``.

    A file already at the target is replaced only when it is itself a generated
    variant; a hand-written file there is never overwritten (a problem instead).
    """
    outcomes: list[GeneratedVariant] = []
    for base_path in bases:
        unloadable: list[str] = []
        try:
            load_scenario(base_path)  # the base itself must load
            base = json.loads(base_path.read_text(encoding="utf-8"))
        except ScenarioError as exc:
            unloadable = [f"the base does not load: {where or 'scenario'}: {text}" for where, text in exc.problems]
        for style in styles:
            folder = out_dir if out_dir is not None else base_path.parent
            target = folder / f"{base_path.stem}__{style.name}.json"
            outcome = GeneratedVariant(base_path, style.name, target, problems=list(unloadable))
            outcomes.append(outcome)
            if unloadable:
                continue
            if target.exists() and not _is_generated(target):
                outcome.problems.append(f"{target} exists and is not a generated variant: not overwritten")
                continue
            try:
                variant = make_variant(base, style, seed)
            except ValueError as exc:
                outcome.problems.append(str(exc))
                continue
            outcome.problems += variant_problems(base, variant, target)
            if outcome.problems:
                continue
            text = json.dumps(variant, indent=2, ensure_ascii=False) + "\n"
            if target.exists() and target.read_text(encoding="utf-8") == text:
                outcome.unchanged = True
                continue
            folder.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
            outcome.written = True
    return outcomes
