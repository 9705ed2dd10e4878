"""Built-in agents (oracle, baselines) and ``resolve_agent`` for agent specs."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_pibench.episode.messages import build_tool_call, is_stop_signal
from pytest_pibench.scenario.models import Scenario

__all__ = [
    "BASELINE_DECISIONS",
    "AgentSpec",
    "AgentSpecError",
    "BaselineAgent",
    "OracleAgent",
    "resolve_agent",
    "resolve_judge",
    "resolve_user",
]

BASELINE_DECISIONS: dict[str, str | None] = {
    "allow": "ALLOW",
    "deny": "DENY",
    "escalate": "ESCALATE",
    "silent": None,
}

_CLOSING = "Thank you for your patience. I have completed my review of your request."


class AgentSpecError(ValueError):
    """An agent spec that cannot be resolved to an agent."""


@dataclass(frozen=True)
class AgentSpec:
    """A resolved agent spec: ``build(scenario)`` makes the agent for one episode."""

    name: str
    build: Callable[[Scenario], Any]


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


def _llm_model(spec: str) -> str:
    """The model id of a ``litellm:<model>`` spec, after checking the LLM extra is installed."""
    from pytest_pibench.participants.llm.client import split_model_spec

    require_llm_extra(spec)
    try:
        return split_model_spec(spec)
    except ValueError as exc:
        raise AgentSpecError(str(exc)) from None


def _llm_spec(spec: str, kind: str, params: Mapping[str, Any] | None) -> AgentSpec:
    model = _llm_model(spec)
    options = dict(params or {})

    def build(scenario: Scenario) -> Any:
        if kind == "agent":
            from pytest_pibench.participants.llm.agent import LiteLLMAgent

            return LiteLLMAgent(model, options)
        from pytest_pibench.participants.llm.user import LiteLLMUser

        return LiteLLMUser(model, options)

    return AgentSpec(spec, build)


def _builtin(spec: str, params: Mapping[str, Any] | None = None) -> AgentSpec | None:
    if spec.startswith("litellm:"):
        return _llm_spec(spec, "agent", params)
    if spec == "oracle":
        return AgentSpec("oracle", OracleAgent)
    if spec.startswith("baseline:"):
        kind = spec.split(":", 1)[1]
        if kind not in BASELINE_DECISIONS:
            choices = ", ".join(f"baseline:{k}" for k in BASELINE_DECISIONS)
            raise AgentSpecError(f"unknown baseline {spec!r}; choose one of {choices}")
        decision = BASELINE_DECISIONS[kind]
        return AgentSpec(spec, lambda scenario: BaselineAgent(decision))
    return None


def resolve_agent(spec: str, params: Mapping[str, Any] | None = None) -> AgentSpec:
    """Turn an agent spec into an :class:`AgentSpec`.

    Specs: ``oracle``; ``baseline:allow|deny|escalate|silent``; ``litellm:<model>``
    (the reference LLM agent; ``params`` go to litellm); ``module:Class``
    or ``module:factory`` (a class or zero-argument callable returning an agent,
    called once per episode); ``path/to/file.py:Class``; ``module:instance`` (an
    agent object, reused for every episode).

    Raises:
        AgentSpecError: with a message saying what is wrong with the spec.
    """
    spec = spec.strip()
    builtin = _builtin(spec, params)
    if builtin is not None:
        return builtin
    names = ", ".join(["oracle", *(f"baseline:{k}" for k in BASELINE_DECISIONS)])
    return _from_import_spec(spec, "agent", f"use module:Class, module:factory, or a built-in ({names})")


def resolve_user(spec: str, params: Mapping[str, Any] | None = None) -> AgentSpec:
    """Resolve a user spec: ``scripted``, ``litellm:<model>``, or ``module:Class`` / ``module:factory``.

    Raises:
        AgentSpecError: with a message saying what is wrong with the spec.
    """
    spec = spec.strip()
    if spec == "scripted":
        from pytest_pibench.participants.users import ScriptedUser

        return AgentSpec("scripted", lambda scenario: ScriptedUser())
    if spec.startswith("litellm:"):
        return _llm_spec(spec, "user", params)
    return _from_import_spec(spec, "user", "use scripted, litellm:<model> or module:Class")


def resolve_judge(spec: str, params: Mapping[str, Any] | None = None) -> Callable[[], Any]:
    """A factory of judges: ``litellm:<model>`` or ``module:Class`` (an object with ``judge``)."""
    spec = spec.strip()
    if spec.startswith("litellm:"):
        model = _llm_model(spec)
        options = dict(params or {})

        def build() -> Any:
            from pytest_pibench.participants.llm.judge import LiteLLMJudge

            return LiteLLMJudge(model, options)

        return build
    module_name, sep, attr = spec.rpartition(":")
    if not sep or not module_name:
        raise AgentSpecError(f"cannot resolve judge spec {spec!r}: use litellm:<model> or module:Class")
    target = _import(module_name, spec)
    if not hasattr(target, attr):
        raise AgentSpecError(f"judge spec {spec!r}: module {module_name!r} has no attribute {attr!r}")
    obj = getattr(target, attr)
    if inspect.isclass(obj) or (callable(obj) and not hasattr(obj, "judge")):
        return lambda: obj()
    if not callable(getattr(obj, "judge", None)):
        raise AgentSpecError(f"judge spec {spec!r}: {obj!r} has no judge(question, text) method")
    return lambda: obj


def _from_import_spec(spec: str, kind: str, hint: str) -> AgentSpec:
    """``module:attr`` or ``file.py:attr`` -> an AgentSpec building from that object."""
    module_name, sep, attr = spec.rpartition(":")
    if not sep or not module_name or not attr:
        raise AgentSpecError(f"cannot resolve {kind} spec {spec!r}: {hint}")
    target = _import(module_name, spec)
    for part in attr.split("."):
        if not hasattr(target, part):
            raise AgentSpecError(f"{kind} spec {spec!r}: module {module_name!r} has no attribute {attr!r}")
        target = getattr(target, part)
    return AgentSpec(spec, _factory(target, spec))


def _import(module_name: str, spec: str) -> Any:
    if module_name.endswith(".py"):
        path = Path(module_name)
        if not path.is_file():
            raise AgentSpecError(f"agent spec {spec!r}: file {module_name} not found")
        loader_spec = importlib.util.spec_from_file_location(path.stem, path)
        if loader_spec is None or loader_spec.loader is None:
            raise AgentSpecError(f"agent spec {spec!r}: cannot load {module_name}")
        module = importlib.util.module_from_spec(loader_spec)
        sys.modules.setdefault(path.stem, module)
        loader_spec.loader.exec_module(module)
        return module
    if os.getcwd() not in sys.path:  # like `python -m`: modules in the working directory resolve
        sys.path.insert(0, os.getcwd())
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and module_name.startswith(exc.name):
            raise AgentSpecError(f"agent spec {spec!r}: no module named {module_name!r}") from None
        raise


def _factory(target: Any, spec: str) -> Callable[[Scenario], Any]:
    if _is_agent(target) and not inspect.isclass(target):
        return lambda scenario: target  # an instance: reused, as upstream reuses agents
    if inspect.isclass(target):
        if not _is_agent(target):
            raise AgentSpecError(f"agent spec {spec!r}: {target.__name__} has no generate/init_state methods")
        return lambda scenario: target()
    if callable(target):

        def build(scenario: Scenario) -> Any:
            agent = target()
            if not _is_agent(agent):
                raise AgentSpecError(f"agent spec {spec!r}: the factory returned {agent!r}, not an agent")
            return agent

        return build
    raise AgentSpecError(f"agent spec {spec!r}: {target!r} is neither an agent class, factory nor instance")


def _is_agent(obj: Any) -> bool:
    return callable(getattr(obj, "generate", None)) and callable(getattr(obj, "init_state", None))
