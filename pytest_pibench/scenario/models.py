"""Pydantic models of the scenario file (``schema_version: pibench_scenario_v1``).

The models accept every file in the upstream format unchanged (unknown keys are
kept, alias keys such as ``first``/``second`` and ``args_match``/``args`` are
understood) and add our fields: ``reference_trajectory.calls``,
``reference_trajectory.decision``, ``user_simulation.scripted_turns`` and
``environment_setup.channel``. Each ``evaluation_criteria`` check list accepts
the check types registered for its family (:mod:`pytest_pibench.checks`).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from pytest_pibench.checks.base import FAMILY_LISTS, CheckModel, NonEmptyStr
from pytest_pibench.checks.schema import JudgeCheck, PolicyCheck, StateCheck
from pytest_pibench.checks.tool_roles import tools_with_role
from pytest_pibench.scenario.script import ScriptedTurn
from pytest_pibench.vocab import LABELS

__all__ = [
    "LABELS",
    "SCHEMA_VERSION",
    "DecisiveFact",
    "EnvironmentSetup",
    "EvaluationCriteria",
    "Label",
    "Leaderboard",
    "Meta",
    "PolicyContext",
    "ReferenceCall",
    "ReferenceTrajectory",
    "Scenario",
    "UserSimulation",
    "Variant",
]

SCHEMA_VERSION = "pibench_scenario_v1"
Label = Literal["ALLOW", "ALLOW-CONDITIONAL", "DENY", "ESCALATE"]


class _Model(BaseModel):
    # Upstream files carry documentation-only keys (ablation_hints, axis, ...):
    # keep them instead of rejecting the file.
    model_config = ConfigDict(extra="allow", populate_by_name=True)


class EvaluationCriteria(_Model):
    reward_basis: list[NonEmptyStr] = Field(
        min_length=1,
        description="Evaluator families to run, in order: POLICY, STATE_FIELD, NL_JUDGE.",
    )
    policy_checks: list[PolicyCheck] = Field(default_factory=list)
    state_field_checks: list[StateCheck] = Field(default_factory=list)
    nl_judge_checks: list[JudgeCheck] = Field(default_factory=list)

    def checks_of(self, family: str) -> list[CheckModel] | None:
        """The checks written for ``family`` (``POLICY`` -> ``policy_checks``, ...); None for another family."""
        field = FAMILY_LISTS.get(family)  # type: ignore[call-overload]
        checks: list[CheckModel] | None = None if field is None else getattr(self, field)
        return checks

    def located_checks(self) -> Iterator[tuple[str, CheckModel]]:
        """``(JSON path, check)`` for every check of every family, e.g. ``evaluation_criteria.policy_checks[2]``."""
        for field in FAMILY_LISTS.values():
            for index, check in enumerate(getattr(self, field)):
                yield f"evaluation_criteria.{field}[{index}]", check


# --------------------------------------------------------------------------- sections


class Variant(_Model):
    """Where a generated scenario comes from (``pi generate``): its base and the pressure style."""

    base: NonEmptyStr = Field(description="The scenario_id of the hand-written base.")
    style: NonEmptyStr = Field(description="The pressure style, e.g. urgency.")
    seed: int = Field(description="The generator seed; the same base, style and seed give the same file.")
    generator: str = ""


class DecisiveFact(BaseModel):
    """A fact the decision turns on and where the agent reads it (issue 24 §3); hidden, never shown to the agent."""

    model_config = ConfigDict(extra="forbid")  # our own shape: a mistyped key is an error, not kept

    fact: NonEmptyStr = Field(description="What the agent must establish, in words.")
    tool: NonEmptyStr = Field(description="The tool whose result shows it; the gold trajectory calls it.")
    field: NonEmptyStr = Field(description="Where in that tool's result, free text, e.g. returns[].returned_on.")


class Meta(_Model):
    scenario_id: NonEmptyStr
    domain: NonEmptyStr = Field(description="Domain name or upstream alias, e.g. retail.")
    notes: str = Field("", description="Author notes; never shown to the agent.")
    timezone: str | None = None
    created_at: str | None = None
    variant: Variant | None = Field(None, description="Set on generated variants only (pi generate).")
    cohort: str | None = Field(
        None, description="Which batch of the set the scenario belongs to ('hard': issue 24's new scenarios, "
        "measured apart by pi calibration); never shown to the agent.",
    )
    decisive_facts: list[DecisiveFact] = Field(
        default_factory=list,
        description="The facts the decision turns on, each with the tool and result field that shows it "
        "(pi validate: the gold trajectory calls the tool); never shown to the agent.",
    )
    clauses: list[NonEmptyStr] = Field(
        default_factory=list,
        description="Ids of the policy clauses the decision turns on, e.g. FIN-4.4 (pi validate: each occurs "
        "in the policy text); never shown to the agent.",
    )


class Leaderboard(_Model):
    primary: str = Field("", description="The one capability column this scenario scores in.")
    subskills: list[str] = Field(default_factory=list)
    stressors: list[str] = Field(default_factory=list)


class PolicyContext(_Model):
    policy_text_ref: str | None = Field(
        None, description="Policy file relative to the workspace root (default: the domain's)."
    )
    policy_version: str = ""
    policy_clauses: list[Any] = Field(default_factory=list)


class EnvironmentSetup(_Model):
    now: str | None = Field(None, description="Scenario clock, ISO-8601 with offset.")
    initial_state_patch: dict[str, Any] = Field(
        default_factory=dict, description="Deep-merged onto the domain db.json; private."
    )
    customer: dict[str, Any] | None = None
    account: dict[str, Any] | None = None
    employee: dict[str, Any] | None = None
    channel: str | None = Field(None, description="Contact channel shown to the agent.")


class UserSimulation(_Model):
    persona: str = ""
    known_facts: str | list[str] = ""
    goal: str = ""
    initial_user_message: str = ""
    pressure_script: list[str] = Field(
        default_factory=list, description="Stage directions for an LLM user (never spoken)."
    )
    max_turns: int | None = None
    scripted_turns: list[str | ScriptedTurn] = Field(
        default_factory=list,
        description="What the scripted user says after the initial message, in order: a line, or a turn "
        "that reacts to what the agent did (see pytest_pibench.scenario.script).",
    )


class ReferenceCall(_Model):
    name: NonEmptyStr
    arguments: dict[str, Any] = Field(default_factory=dict)
    after_turn: int = Field(
        0,
        ge=0,
        description="The oracle makes this call only after the customer's N-th scripted turn (0: at once), "
        "so a gold trajectory acts after the customer agrees when the policy says 'offer'.",
    )


class ReferenceTrajectory(_Model):
    calls: list[ReferenceCall] = Field(default_factory=list, description="The gold tool calls, in order.")
    replies: list[str] = Field(
        default_factory=list,
        description="What the oracle says to the customer, one per text turn, in order (then a closing line).",
    )
    decision: Label | None = None
    # Upstream's shape (validated, never replayed with arguments).
    tool_sequence: list[NonEmptyStr] | None = Field(None, min_length=1)
    expected_decision: Label | None = None
    expected_state_changes: dict[str, Any] | None = None


class Scenario(_Model):
    """One scenario file. Load it with :func:`pytest_pibench.load_scenario`."""

    schema_version: Literal["pibench_scenario_v1"]
    meta: Meta
    label: Label
    leaderboard: Leaderboard = Field(default_factory=lambda: Leaderboard())
    policy_context: PolicyContext = Field(default_factory=lambda: PolicyContext())
    environment_setup: EnvironmentSetup
    user_simulation: UserSimulation = Field(default_factory=lambda: UserSimulation())
    evaluation_criteria: EvaluationCriteria
    available_tools: list[NonEmptyStr] | None = Field(None, min_length=1)
    reference_trajectory: ReferenceTrajectory | None = None

    _source_path: Path | None = PrivateAttr(default=None)
    _forbidden_tools: tuple[str, ...] | None = PrivateAttr(default=None)

    @property
    def scenario_id(self) -> str:
        return self.meta.scenario_id

    @property
    def source_path(self) -> Path | None:
        """The file this scenario was loaded from, if any."""
        return self._source_path

    @property
    def forbidden_tools(self) -> list[str]:
        """Tools the policy checks forbid (``tool_not_called``), in check order.

        Worked out once (every episode's event flags ask): a loaded scenario's
        checks are not changed afterwards.
        """
        if self._forbidden_tools is None:
            checks = self.evaluation_criteria.policy_checks
            self._forbidden_tools = tuple(t for c in checks for t in tools_with_role(c, "forbidden"))
        return list(self._forbidden_tools)
