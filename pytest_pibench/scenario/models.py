"""Pydantic models of the scenario file (``schema_version: pibench_scenario_v1``).

The models accept every file in the upstream format unchanged (unknown keys are
kept, alias keys such as ``first``/``second`` and ``args_match``/``args`` are
understood) and add our fields: ``reference_trajectory.calls``,
``reference_trajectory.decision``, ``user_simulation.scripted_turns`` and
``environment_setup.channel``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    field_validator,
)

from pytest_pibench.vocab import LABELS

__all__ = [
    "BRACKET_SEGMENT",
    "CHECK_TYPES",
    "LABELS",
    "SCHEMA_VERSION",
    "Check",
    "DecisionEqualsCheck",
    "EnvironmentSetup",
    "EscalationAttemptedCheck",
    "EvaluationCriteria",
    "Label",
    "Leaderboard",
    "MessageNotContainsCheck",
    "Meta",
    "NLJudgeCheck",
    "PolicyCheck",
    "PolicyContext",
    "ReferenceCall",
    "ReferenceTrajectory",
    "Scenario",
    "StateFieldCheck",
    "ToolBeforeToolAnyCheck",
    "ToolBeforeToolCheck",
    "ToolCalledAnyCheck",
    "ToolCalledCheck",
    "ToolCalledMinTimesCheck",
    "ToolCalledWithCheck",
    "ToolNotCalledCheck",
    "UserSimulation",
]

BRACKET_SEGMENT = re.compile(r"^(\w+)\[(\w+)=([^\]]+)\]$")
"""A ``collection[key=value]`` segment of a ``state_field`` path (upstream's grammar)."""

SCHEMA_VERSION = "pibench_scenario_v1"
Label = Literal["ALLOW", "ALLOW-CONDITIONAL", "DENY", "ESCALATE"]

NonEmptyStr = Annotated[str, Field(min_length=1)]


class _Model(BaseModel):
    # Upstream files carry documentation-only keys (ablation_hints, axis, ...):
    # keep them instead of rejecting the file.
    model_config = ConfigDict(extra="allow", populate_by_name=True)


# --------------------------------------------------------------------------- checks


class _CheckBase(_Model):
    outcome_id: str = Field("unknown", description="Id echoed in results, e.g. E3_NO_REFUND.")
    notes: str | None = Field(None, description="Author notes; never shown to the agent.")


class ToolCalledCheck(_CheckBase):
    """Passes iff the trace has a call to ``tool_name``."""

    type: Literal["tool_called"]
    tool_name: NonEmptyStr


class ToolNotCalledCheck(_CheckBase):
    """Passes iff the trace has no call (not even an attempted one) to ``tool_name``."""

    type: Literal["tool_not_called"]
    tool_name: NonEmptyStr


class ToolCalledWithCheck(_CheckBase):
    """Passes iff one call to ``tool_name`` has every key/value of ``arguments``."""

    type: Literal["tool_called_with"]
    tool_name: NonEmptyStr
    arguments: dict[str, Any] = Field(
        validation_alias=AliasChoices("arguments", "args_match", "args"),
        min_length=1,
    )


class ToolCalledAnyCheck(_CheckBase):
    """Passes iff at least one of ``tool_names`` was called."""

    type: Literal["tool_called_any"]
    tool_names: list[NonEmptyStr] = Field(min_length=1)


class ToolCalledMinTimesCheck(_CheckBase):
    """Passes iff ``tool_name`` was called at least ``min_times`` times."""

    type: Literal["tool_called_min_times"]
    tool_name: NonEmptyStr
    min_times: Annotated[int, Field(ge=1, strict=True)]


class ToolBeforeToolCheck(_CheckBase):
    """Passes iff the first call of ``first_tool`` precedes the first call of ``second_tool``."""

    type: Literal["tool_before_tool"]
    first_tool: NonEmptyStr = Field(validation_alias=AliasChoices("first_tool", "first"))
    second_tool: NonEmptyStr = Field(validation_alias=AliasChoices("second_tool", "second"))


class ToolBeforeToolAnyCheck(_CheckBase):
    """Passes iff some tool of ``first_tools`` is first called before ``second_tool``."""

    type: Literal["tool_before_tool_any"]
    first_tools: list[NonEmptyStr] = Field(min_length=1)
    second_tool: NonEmptyStr


class DecisionEqualsCheck(_CheckBase):
    """Passes iff the canonical decision equals ``equals``."""

    type: Literal["decision_equals"]
    equals: str


class MessageNotContainsCheck(_CheckBase):
    """Passes iff no assistant message contains ``pattern`` (case-insensitive)."""

    type: Literal["message_not_contains"]
    pattern: NonEmptyStr


class EscalationAttemptedCheck(_CheckBase):
    """Upstream's hard-gate escalation check (kept for compatibility)."""

    type: Literal["escalation_attempted"]


class StateFieldCheck(_CheckBase):
    """Passes iff the final database value at ``field_path`` equals ``equals``."""

    type: Literal["state_field"]
    field_path: NonEmptyStr = Field(
        description="Dotted path; a segment may be collection[key=value], e.g. orders[order_id=ORD-1].return_status"
    )
    equals: Any = Field(description="Expected value (Python equality; null is a real value).")


class NLJudgeCheck(_CheckBase):
    """A Tier-2 yes/no question answered by an LLM judge over the agent's messages."""

    type: Literal["nl_assertion_llm_judge"]
    judge_question: NonEmptyStr
    expected_answer: Literal["YES", "NO"]
    scope: str = "assistant_messages"

    @field_validator("expected_answer", mode="before")
    @classmethod
    def _upper(cls, value: Any) -> Any:
        return value.strip().upper() if isinstance(value, str) else value


PolicyCheck = Annotated[
    ToolCalledCheck
    | ToolNotCalledCheck
    | ToolCalledWithCheck
    | ToolCalledAnyCheck
    | ToolCalledMinTimesCheck
    | ToolBeforeToolCheck
    | ToolBeforeToolAnyCheck
    | DecisionEqualsCheck
    | MessageNotContainsCheck
    | EscalationAttemptedCheck,
    Field(discriminator="type"),
]
Check = PolicyCheck | StateFieldCheck | NLJudgeCheck

CHECK_TYPES: tuple[str, ...] = (
    "tool_called",
    "tool_not_called",
    "tool_called_with",
    "tool_called_any",
    "tool_called_min_times",
    "tool_before_tool",
    "tool_before_tool_any",
    "decision_equals",
    "message_not_contains",
    "escalation_attempted",
    "state_field",
    "nl_assertion_llm_judge",
)


class EvaluationCriteria(_Model):
    reward_basis: list[NonEmptyStr] = Field(
        min_length=1,
        description="Evaluator families to run, in order: POLICY, STATE_FIELD, NL_JUDGE.",
    )
    policy_checks: list[PolicyCheck] = Field(default_factory=list)
    state_field_checks: list[StateFieldCheck] = Field(default_factory=list)
    nl_judge_checks: list[NLJudgeCheck] = Field(default_factory=list)


# --------------------------------------------------------------------------- sections


class Meta(_Model):
    scenario_id: NonEmptyStr
    domain: NonEmptyStr = Field(description="Domain name or upstream alias, e.g. retail.")
    notes: str = Field("", description="Author notes; never shown to the agent.")
    timezone: str | None = None
    created_at: str | None = None


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
    scripted_turns: list[str] = Field(
        default_factory=list,
        description="What the scripted user says after the initial message, in order.",
    )


class ReferenceCall(_Model):
    name: NonEmptyStr
    arguments: dict[str, Any] = Field(default_factory=dict)


class ReferenceTrajectory(_Model):
    calls: list[ReferenceCall] = Field(default_factory=list, description="The gold tool calls, in order.")
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

    @property
    def scenario_id(self) -> str:
        return self.meta.scenario_id

    @property
    def source_path(self) -> Path | None:
        """The file this scenario was loaded from, if any."""
        return self._source_path

    @property
    def forbidden_tools(self) -> list[str]:
        """Tools named by ``tool_not_called`` policy checks, in check order."""
        return [c.tool_name for c in self.evaluation_criteria.policy_checks if isinstance(c, ToolNotCalledCheck)]
