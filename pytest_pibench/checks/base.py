"""The vocabulary of check declarations: the model base, what an evaluator sees, the declaration itself.

A check type is declared once, as a :class:`CheckType`: its pydantic model
(the JSON shape in a scenario file), its evaluator (a pure function of the
check and a :class:`CheckContext`), the result dimension it scores in, the
evaluator family (the scenario list it lives in) and the role of every field
that names a tool. Everything else (the scenario schema, dispatch, dimensions,
the tool rules of loading, binding and the validator) is derived from these
declarations through :mod:`pytest_pibench.checks.registry`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Annotated, Any, Generic, Literal, TypeVar, get_args

from pydantic import BaseModel, ConfigDict, Field

from pytest_pibench.transcript import TraceEntry

__all__ = [
    "DIMENSIONS",
    "FAMILY_LISTS",
    "CheckContext",
    "CheckModel",
    "CheckType",
    "DecisionInfo",
    "Dimension",
    "Family",
    "JudgeAsk",
    "NonEmptyStr",
    "Outcome",
    "ToolRole",
]

from pytest_pibench.vocab import DIMENSIONS, Dimension

NonEmptyStr = Annotated[str, Field(min_length=1)]

Outcome = tuple[bool | None, str]
"""``(passed, detail)``; ``passed`` is None when the check was skipped (a judge check without a judge)."""

Family = Literal["POLICY", "STATE_FIELD", "NL_JUDGE"]
FAMILY_LISTS: dict[Family, str] = {
    "POLICY": "policy_checks",
    "STATE_FIELD": "state_field_checks",
    "NL_JUDGE": "nl_judge_checks",
}
"""Each evaluator family and the ``evaluation_criteria`` list its checks are written in."""

ToolRole = Literal["required", "forbidden", "any_required", "before", "after", "named"]
"""What a tool-naming field means, for the tool rules of loading, binding and the validator.

``required``: the check passes only if the tool is called. ``forbidden``: it
fails if the tool is called. ``any_required``: one of the tools (a list) must
be called. ``before``/``after``: the tool's first call is ordered against
another; another check must require it (for a list, one of its tools).
``named``: the check only refers to the tool. Every role makes the tool one
that must exist in the domain.
"""

JudgeAsk = Callable[[str, str], tuple[str | None, str]]
"""``ask(question, text) -> (answer, problem)``: ``"YES"``/``"NO"``, or None and why not."""


@dataclass(frozen=True, slots=True)
class DecisionInfo:
    """The canonical decision of a run (see :func:`pytest_pibench.checks.decision.resolve_decision`)."""

    canonical_decision: str | None
    decision_channel: str | None
    decision_valid: bool
    decision_error: str | None
    detail: str | None = field(default=None, compare=False)
    """Why the decision is invalid, in words (e.g. the error ``record_decision`` returned); not upstream's."""

    @property
    def as_flag_input(self) -> str:
        """What event flags compare: the decision, or ``"NONE"`` when invalid."""
        return self.canonical_decision or "NONE"

    @property
    def as_check_value(self) -> str:
        """What ``decision_equals`` compares: the decision or ``INVALID:<reason>``."""
        return self.canonical_decision or f"INVALID:{self.decision_error}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "canonical_decision": self.canonical_decision,
            "decision_channel": self.decision_channel,
            "decision_valid": self.decision_valid,
            "decision_error": self.decision_error,
        }


class CheckModel(BaseModel):
    """Base of every check model. A subclass adds ``type: Literal["<name>"]`` and its own fields.

    Unknown keys are kept (upstream files carry documentation-only keys such as ``axis``).
    """

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    outcome_id: str = Field("unknown", description="Id echoed in results, e.g. E3_NO_REFUND.")
    notes: str | None = Field(None, description="Author notes; never shown to the agent.")
    type: str


@dataclass(frozen=True, slots=True)
class CheckContext:
    """Everything an evaluator may read about one episode; evaluators must not change it.

    ``ask_judge`` is None when no judge is configured (Tier-2 checks are then skipped).
    """

    trace: Sequence[TraceEntry]
    messages: Sequence[Mapping[str, Any]]
    decision: DecisionInfo
    final_state: Any = None
    ask_judge: JudgeAsk | None = None
    replay: Callable[[], Any] | None = None
    """The database a fresh environment ends with after every tool call of the messages, replayed in
    order (upstream's ``DB`` family compares it with ``expected_db``); None when nobody can replay."""


M = TypeVar("M", bound=CheckModel)


@dataclass(frozen=True)
class CheckType(Generic[M]):
    """The one declaration of a check type; register it with :func:`pytest_pibench.checks.register_check`.

    Attributes:
        model: the pydantic model of the check, a :class:`CheckModel` with
            ``type: Literal["<name>"]``; ``<name>`` is the check type.
        evaluate: ``evaluate(check, context) -> (passed, detail)``; pure, never raises
            for a well-formed transcript.
        dimension: the result dimension the check scores in (a key of :data:`DIMENSIONS`).
        tools: the role of every model field that names a tool (``{}`` if none does);
            the field holds one tool name or a list of them.
        family: the evaluator family; the check is written in its ``evaluation_criteria`` list.
        result_type: the ``type`` its results carry, when not the check type itself.
        tier: 1 for a deterministic check (it decides pass/fail), 2 for a judged one (reported,
            not gating; skipped without a judge). Results carry it, and so do rows.

    Example::

        from typing import Literal
        from pytest_pibench.checks import CheckContext, CheckModel, CheckType, Outcome, register_check

        class ToolCalledAtMostCheck(CheckModel):
            \"\"\"Passes iff ``tool_name`` was called at most ``max_times`` times.\"\"\"

            type: Literal["tool_called_at_most"]
            tool_name: str
            max_times: int

        def tool_called_at_most(check: ToolCalledAtMostCheck, context: CheckContext) -> Outcome:
            count = sum(1 for e in context.trace if e.tool_name == check.tool_name)
            return count <= check.max_times, f"tool_called_at_most({check.tool_name}): actual={count}"

        register_check(CheckType(
            model=ToolCalledAtMostCheck,
            evaluate=tool_called_at_most,
            dimension="permissibility",
            tools={"tool_name": "named"},
        ))
    """

    model: type[M]
    evaluate: Callable[[M, CheckContext], Outcome]
    dimension: Dimension
    tools: Mapping[str, ToolRole]
    family: Family = "POLICY"
    result_type: str | None = None
    tier: Literal[1, 2] = 1

    @cached_property  # read for every check of every episode; the model never changes (frozen)
    def name(self) -> str:
        """The check type: the single value of the model's ``type`` literal ("" if it has none)."""
        fields = getattr(self.model, "model_fields", None)
        field = fields.get("type") if isinstance(fields, dict) else None
        values = get_args(field.annotation) if field is not None else ()
        return values[0] if len(values) == 1 and isinstance(values[0], str) else ""

    @property
    def reported_type(self) -> str:
        """The ``type`` of this check's results."""
        return self.result_type or self.name
