"""The built-in participants and their spec schemes: ``oracle``, ``baseline:*``, ``scripted``, ``litellm:<model>``.

The LLM participants live in :mod:`pytest_pibench.participants.llm` and are
imported only when an episode needs one (litellm is heavy and optional).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping
from typing import Any

from pytest_pibench.episode.messages import build_tool_call, is_stop_signal
from pytest_pibench.participants.schemes import AgentSpecError, JudgeFactory, ParticipantFactory, Scheme
from pytest_pibench.scenario.models import Scenario

__all__ = [
    "BASELINE_DECISIONS",
    "BUILTIN_ORIGIN",
    "BUILTIN_SCHEMES",
    "BaselineAgent",
    "OracleAgent",
    "require_llm_extra",
]

BASELINE_DECISIONS: dict[str, str | None] = {
    "allow": "ALLOW",
    "deny": "DENY",
    "escalate": "ESCALATE",
    "silent": None,
}

_CLOSING = "Thank you for your patience. I have completed my review of your request."


class OracleAgent:
    """Replays the scenario's ``reference_trajectory``: every call in one turn, then polite text.

    If the trajectory's calls contain no ``record_decision``, one recording the
    trajectory's decision is appended.
    """

    model_name = "oracle"

    def __init__(self, scenario: Scenario) -> None:
        ref = scenario.reference_trajectory
        if ref is None:
            raise AgentSpecError(
                f"scenario {scenario.scenario_id} has no reference_trajectory; the oracle cannot run it"
            )
        calls = [(c.name, dict(c.arguments)) for c in ref.calls]
        if not calls and ref.tool_sequence:  # upstream's shape: names only
            calls = [(name, {}) for name in ref.tool_sequence]
        decision = ref.decision or ref.expected_decision or scenario.label
        if not any(name == "record_decision" for name, _ in calls):
            calls.append(("record_decision", {"decision": decision}))
        self._calls = calls

    def set_seed(self, seed: int) -> None:
        """The oracle is deterministic."""

    def init_state(
        self,
        benchmark_context: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        message_history: list[dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        return {"replayed": False}

    def generate(self, message: dict[str, Any], state: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        if not state["replayed"]:
            calls = [build_tool_call(name, args, call_id=f"oracle-{i}") for i, (name, args) in enumerate(self._calls)]
            return {"role": "assistant", "content": None, "tool_calls": calls}, {"replayed": True}
        return {"role": "assistant", "content": _CLOSING}, state

    def is_stop(self, message: dict[str, Any]) -> bool:
        return is_stop_signal(message)

    def stop(self, message: dict[str, Any] | None, state: Any) -> None:
        """Nothing to release."""


class BaselineAgent:
    """A naive agent: records ``decision`` at once and never calls another tool.

    With ``decision=None`` (``baseline:silent``) it only chats and never decides.
    Required ``record_decision`` arguments besides ``decision`` are filled from
    the schema (``rationale`` gets a sentence), so the call is valid in any domain.
    """

    def __init__(self, decision: str | None) -> None:
        self.decision = decision
        self.model_name = f"baseline:{(decision or 'silent').lower()}"

    def set_seed(self, seed: int) -> None:
        """Baselines are deterministic."""

    def init_state(
        self,
        benchmark_context: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        message_history: list[dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        schema: dict[str, Any] = next(
            (t.get("parameters", {}) for t in tools if t.get("name") == "record_decision"), {}
        )
        return {"decided": False, "schema": schema}

    def generate(self, message: dict[str, Any], state: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        if self.decision is None:
            return {"role": "assistant", "content": "Let me look into that for you."}, state
        if not state["decided"]:
            arguments = self._arguments(state["schema"])
            call = build_tool_call("record_decision", arguments, call_id="baseline-0")
            return {"role": "assistant", "content": None, "tool_calls": [call]}, {**state, "decided": True}
        return {"role": "assistant", "content": f"My decision on your request is {self.decision}."}, state

    def _arguments(self, schema: dict[str, Any]) -> dict[str, Any]:
        arguments: dict[str, Any] = {"decision": self.decision}
        properties = schema.get("properties", {})
        for name in schema.get("required", []):
            if name in arguments:
                continue
            prop = properties.get(name, {})
            if prop.get("enum"):
                arguments[name] = prop["enum"][0]
                continue
            arguments[name] = {
                "array": [],
                "boolean": False,
                "integer": 0,
                "number": 0,
                "object": {},
            }.get(prop.get("type", "string"), f"Baseline policy: always {self.decision}.")
        return arguments

    def is_stop(self, message: dict[str, Any]) -> bool:
        return is_stop_signal(message)

    def stop(self, message: dict[str, Any] | None, state: Any) -> None:
        """Nothing to release."""


def require_llm_extra(spec: str) -> None:
    """Fail early, with the fix, when the optional LLM dependencies are missing."""
    missing = [name for name in ("litellm", "tenacity") if importlib.util.find_spec(name) is None]
    if missing:
        raise AgentSpecError(
            f"{spec!r} needs {', '.join(missing)}: install the LLM extra with pip install 'pytest-pibench[llm]'"
        )


def _oracle(argument: str, params: Mapping[str, Any]) -> ParticipantFactory:
    if argument:
        raise AgentSpecError(f"the oracle takes no argument, got 'oracle:{argument}'")
    return OracleAgent


def _baseline(argument: str, params: Mapping[str, Any]) -> ParticipantFactory:
    if argument not in BASELINE_DECISIONS:
        choices = ", ".join(f"baseline:{k}" for k in BASELINE_DECISIONS)
        raise AgentSpecError(f"unknown baseline 'baseline:{argument}'; choose one of {choices}")
    decision = BASELINE_DECISIONS[argument]
    return lambda scenario: BaselineAgent(decision)


def _scripted(argument: str, params: Mapping[str, Any]) -> ParticipantFactory:
    if argument:
        raise AgentSpecError(f"the scripted user takes no argument, got 'scripted:{argument}'")
    from pytest_pibench.participants.users import ScriptedUser

    return lambda scenario: ScriptedUser()


def _llm_model(argument: str) -> str:
    """The model id of ``litellm:<argument>``, after checking the LLM extra is installed."""
    from pytest_pibench.participants.llm.client import split_model_spec

    spec = f"litellm:{argument}"
    require_llm_extra(spec)
    try:
        return split_model_spec(spec)
    except ValueError as exc:
        raise AgentSpecError(str(exc)) from None


def _llm_agent(argument: str, params: Mapping[str, Any]) -> ParticipantFactory:
    model, options = _llm_model(argument), dict(params)

    def build(scenario: Scenario) -> Any:
        from pytest_pibench.participants.llm.agent import LiteLLMAgent

        return LiteLLMAgent(model, options)

    return build


def _llm_user(argument: str, params: Mapping[str, Any]) -> ParticipantFactory:
    model, options = _llm_model(argument), dict(params)

    def build(scenario: Scenario) -> Any:
        from pytest_pibench.participants.llm.user import LiteLLMUser

        return LiteLLMUser(model, options)

    return build


def _llm_judge(argument: str, params: Mapping[str, Any]) -> JudgeFactory:
    model, options = _llm_model(argument), dict(params)

    def build() -> Any:
        from pytest_pibench.participants.llm.judge import LiteLLMJudge

        return LiteLLMJudge(model, options)

    return build


BUILTIN_ORIGIN = "pytest-pibench (built in)"
"""The origin of the built-in schemes in clash messages."""

BUILTIN_SCHEMES: tuple[Scheme, ...] = (
    Scheme("oracle", "oracle", agent=_oracle),
    Scheme("baseline", "baseline:allow|deny|escalate|silent", agent=_baseline),
    Scheme("scripted", "scripted", user=_scripted),
    Scheme("litellm", "litellm:<model>", agent=_llm_agent, user=_llm_user, judge=_llm_judge),
)
"""The schemes every resolver knows."""
