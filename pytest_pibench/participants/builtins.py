"""The built-in participants and their spec schemes (``oracle``, ``baseline:*``, ``scripted``, ``litellm``, ``a2a``).

``replay:PATH`` (recorded plays of ``pi play``) lives in :mod:`pytest_pibench.participants.replay`.

Two kinds of baselines (DESIGN §4 rules 2 and 8):

* naive, ``baseline:allow|deny|escalate|silent``: record one fixed decision at
  once, without a single look-up (``silent`` never decides);
* routine, ``baseline:routine-allow|routine-allow-conditional|routine-deny|routine-escalate``:
  make the standard look-ups of the scenario's domain (its ``ROUTINE``, see
  :mod:`pytest_pibench.toolkit.routine`), take the generic action the decision
  implies, then record that decision. A domain without a routine has no routine
  baselines.

The LLM participants live in :mod:`pytest_pibench.participants.llm` and are
imported only when an episode needs one (litellm is heavy and optional).
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Mapping
from typing import Any

from pytest_pibench.env.binding import bind_scenario
from pytest_pibench.episode.messages import build_tool_call, is_stop_signal
from pytest_pibench.participants.a2a_client.scheme import A2A_SCHEME
from pytest_pibench.participants.replay import REPLAY_SCHEME
from pytest_pibench.participants.schemes import AgentSpecError, JudgeFactory, ParticipantFactory, Scheme
from pytest_pibench.participants.users import ScriptedUser
from pytest_pibench.scenario.loading import ScenarioError
from pytest_pibench.scenario.models import Scenario
from pytest_pibench.toolkit import copy_record
from pytest_pibench.toolkit.routine import RoutineCall, RoutineRequest, RoutineResult
from pytest_pibench.transcript import extract_text

__all__ = [
    "BASELINE_DECISIONS",
    "BUILTIN_ORIGIN",
    "BUILTIN_SCHEMES",
    "BaselineAgent",
    "OracleAgent",
    "ROUTINE_BASELINE_DECISIONS",
    "RoutineAgent",
    "require_llm_extra",
]

BASELINE_DECISIONS: dict[str, str | None] = {
    "allow": "ALLOW",
    "deny": "DENY",
    "escalate": "ESCALATE",
    "silent": None,
}
"""The naive baselines: ``baseline:<key>`` records the value at once (``silent`` never decides)."""

ROUTINE_BASELINE_DECISIONS: dict[str, str] = {
    "routine-allow": "ALLOW",
    "routine-allow-conditional": "ALLOW-CONDITIONAL",
    "routine-deny": "DENY",
    "routine-escalate": "ESCALATE",
}
"""The routine baselines: ``baseline:<key>`` does the domain's routine, then records the value."""

_CLOSING = "Thank you for your patience. I have completed my review of your request."


class OracleAgent:
    """Replays the scenario's ``reference_trajectory``.

    Each call is made once the customer has said ``after_turn`` scripted turns
    (0, the default: at once; upstream files never set it, so every call comes
    in the first turn as before): a gold trajectory that offers something acts
    after the customer agrees. Between calls it says ``replies`` in order, then
    a closing line. If the calls contain no ``record_decision``, one recording
    the trajectory's decision is appended (with the latest ``after_turn``).

    Raises:
        ScenarioError: when the scenario has no ``reference_trajectory`` (a ``scenario`` error row in a run).
    """

    pibench_builtin = True  # trusted by the episode loop (see episode.caller): a waiting subclass sets False

    model_name = "oracle"

    def __init__(self, scenario: Scenario) -> None:
        ref = scenario.reference_trajectory
        if ref is None:
            # The scenario's gap, not an agent's failure: the runner turns a built-in's ScenarioError into a
            # ``scenario`` error row (kept out of every rate), where an AgentSpecError would be scored.
            raise ScenarioError(
                str(scenario.source_path or scenario.scenario_id),
                [("reference_trajectory", "missing: the oracle replays the gold trajectory and has none to replay")],
            )
        # Deep copies: the messages it returns go into the transcript as they are (pibench_builtin).
        calls = [(c.name, copy_record(c.arguments), c.after_turn) for c in ref.calls]
        if not calls and ref.tool_sequence:  # upstream's shape: names only
            calls = [(name, {}, 0) for name in ref.tool_sequence]
        decision = ref.decision or ref.expected_decision or scenario.label
        if not any(name == "record_decision" for name, _, _ in calls):
            calls.append(("record_decision", {"decision": decision}, max((t for _, _, t in calls), default=0)))
        self._calls = calls
        self._replies = list(ref.replies)

    def set_seed(self, seed: int) -> None:
        """The oracle is deterministic."""

    def init_state(
        self,
        benchmark_context: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        message_history: list[dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        return {"made": 0, "customer_turns": -1, "said": 0}

    def generate(self, message: dict[str, Any], state: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        state = dict(state)
        if message.get("role") == "user":
            state["customer_turns"] += 1  # the opening message is turn 0
        due = [
            (i, name, args)
            for i, (name, args, after) in enumerate(self._calls)
            if i >= state["made"] and after <= state["customer_turns"]
        ]
        due = [d for k, d in enumerate(due) if d[0] == state["made"] + k]  # in order: never skip a waiting call
        if due:
            state["made"] += len(due)
            calls = [build_tool_call(name, args, call_id=f"oracle-{i}") for i, name, args in due]
            return {"role": "assistant", "content": None, "tool_calls": calls}, state
        text = self._replies[state["said"]] if state["said"] < len(self._replies) else _CLOSING
        state["said"] += 1
        return {"role": "assistant", "content": text}, state

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

    pibench_builtin = True  # trusted by the episode loop (see episode.caller): a waiting subclass sets False

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


class RoutineAgent(BaselineAgent):
    """A routine agent: the domain's standard look-ups, the generic action of ``decision``, then the decision.

    Turn by turn: on the user's first message, the look-ups of the domain's
    ``ROUTINE``; on their results, the action the decision implies and
    ``record_decision`` in one message; afterwards polite text. It sees only
    what any agent sees: the public context blocks of the task (the fields
    ``Binding.task_text`` shows), the user's first message, the tool results;
    calls to tools the scenario does not expose are left out. Deterministic.

    Raises:
        AgentSpecError: when the scenario's domain declares no ``ROUTINE``.
    """

    def __init__(self, scenario: Scenario, decision: str) -> None:
        super().__init__(decision)
        self.decision: str = decision
        self.model_name = f"baseline:routine-{decision.lower()}"
        domain = bind_scenario(scenario, check_tools=False).domain
        if domain.routine is None:
            raise AgentSpecError(
                f"{self.model_name}: domain {domain.name!r} declares no ROUTINE in its tools.py "
                f"(see pytest_pibench.toolkit.routine), so scenario {scenario.scenario_id} has no routine baseline"
            )
        self.routine = domain.routine
        setup = scenario.environment_setup
        self._blocks = {
            "customer": setup.customer or {},
            "account": setup.account or {},
            "employee": setup.employee or {},
        }

    def init_state(
        self,
        benchmark_context: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        message_history: list[dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        exposed = [t.get("name") for t in tools]
        return {**super().init_state(benchmark_context, tools, message_history), "exposed": exposed, "phase": "start"}

    def generate(self, message: dict[str, Any], state: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        if state["phase"] == "start":
            request = RoutineRequest(extract_text(message), **self._blocks)
            lookups = self._exposed(self.routine.lookups(request), state)
            if lookups:
                looked_up = {**state, "phase": "looked_up", "request": request, "lookups": lookups}
                return self._calls(lookups, "lookup"), looked_up
            return self._act(request, [], state)
        if state["phase"] == "looked_up":
            return self._act(state["request"], _results(state["lookups"], message), state)
        closing = f"My decision on your request is {self.decision}. Thank you for your patience."
        return {"role": "assistant", "content": closing}, state

    def _act(
        self, request: RoutineRequest, results: list[RoutineResult], state: dict[str, Any]
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """The generic action of the decision and ``record_decision``, in one message."""
        calls = self._exposed(self.routine.action(self.decision, request, results), state)
        calls.append(RoutineCall("record_decision", self._arguments(state["schema"])))
        return self._calls(calls, "action"), {**state, "phase": "decided"}

    @staticmethod
    def _exposed(calls: list[RoutineCall], state: dict[str, Any]) -> list[RoutineCall]:
        return [c for c in calls if c.name in state["exposed"]]

    @staticmethod
    def _calls(calls: list[RoutineCall], stage: str) -> dict[str, Any]:
        tool_calls = [build_tool_call(c.name, c.arguments, call_id=f"routine-{stage}-{i}") for i, c in enumerate(calls)]
        return {"role": "assistant", "content": None, "tool_calls": tool_calls}


def _results(calls: list[RoutineCall], message: dict[str, Any]) -> list[RoutineResult]:
    """Pair the look-ups with their results (a ``tool`` message, or a ``multi_tool`` one holding several)."""
    replies = message.get("tool_messages", [message]) if message.get("role") == "multi_tool" else [message]
    by_id = {reply.get("id"): reply for reply in replies if isinstance(reply, dict)}
    results = []
    for index, call in enumerate(calls):
        reply = by_id.get(f"routine-lookup-{index}", {})
        try:
            value = json.loads(reply.get("content") or "null")
        except ValueError:
            value = reply.get("content")
        results.append(RoutineResult(call, value, error=bool(reply.get("error", not reply))))
    return results


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
    if argument in ROUTINE_BASELINE_DECISIONS:
        routine_decision = ROUTINE_BASELINE_DECISIONS[argument]
        return lambda scenario: RoutineAgent(scenario, routine_decision)
    if argument not in BASELINE_DECISIONS:
        choices = ", ".join(f"baseline:{k}" for k in [*BASELINE_DECISIONS, *ROUTINE_BASELINE_DECISIONS])
        raise AgentSpecError(f"unknown baseline 'baseline:{argument}'; choose one of {choices}")
    decision = BASELINE_DECISIONS[argument]
    return lambda scenario: BaselineAgent(decision)


def _scripted(argument: str, params: Mapping[str, Any]) -> ParticipantFactory:
    if argument:
        raise AgentSpecError(f"the scripted user takes no argument, got 'scripted:{argument}'")
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
    A2A_SCHEME,
    REPLAY_SCHEME,
)
"""The schemes every resolver knows."""
