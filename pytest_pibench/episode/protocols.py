"""Extension points: the agent, user and judge contracts (structural ``Protocol``s)."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

__all__ = ["AgentProtocol", "InfrastructureError", "JudgeProtocol", "UserProtocol"]


class InfrastructureError(Exception):
    """Raised by a participant when the infrastructure failed, not the policy reasoning.

    An LLM endpoint that stays down after the bounded retries, an unreachable
    remote agent: the episode ends as ``infra_error`` (an error row with this
    message), never as a policy failure, and is not retried as a whole.
    """


@runtime_checkable
class AgentProtocol(Protocol):
    """The agent under test. Same five methods as upstream, so upstream agents run unmodified.

    Per episode the runner calls ``set_seed`` (when a seed is given), then
    ``init_state``, then ``generate`` once per agent turn, and ``stop`` at the
    end whatever happened. Keep per-episode memory in the returned state.

    Example::

        class EchoDenyAgent:
            def set_seed(self, seed: int) -> None:
                self.seed = seed

            def init_state(self, benchmark_context, tools, message_history=None):
                return {"decided": False}

            def generate(self, message, state):
                if not state["decided"]:
                    call = {"id": "c1", "name": "record_decision",
                            "arguments": {"decision": "DENY", "rationale": "..."}}
                    return {"role": "assistant", "tool_calls": [call]}, {"decided": True}
                return {"role": "assistant", "content": "I can't help with that."}, state

            def is_stop(self, message) -> bool:
                return False

            def stop(self, message, state) -> None:
                pass
    """

    def set_seed(self, seed: int) -> None:
        """Store the episode seed (forward it to the model for reproducibility)."""

    def init_state(
        self,
        benchmark_context: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        message_history: list[dict[str, Any]] | None = None,
    ) -> Any:
        """Start an episode.

        Args:
            benchmark_context: ``[{"kind": "policy", ...}, {"kind": "task", ...}]``, each
                with ``content`` (text) and ``metadata``.
            tools: ``[{"name", "description", "parameters"}]`` (JSON Schema parameters).
            message_history: the conversation so far (the greeting).
        """

    def generate(self, message: dict[str, Any], state: Any) -> tuple[dict[str, Any], Any]:
        """Answer the latest message (a user message or tool results) with an assistant message."""

    def is_stop(self, message: dict[str, Any]) -> bool:
        """True if this assistant message ends the episode."""

    def stop(self, message: dict[str, Any] | None, state: Any) -> None:
        """Clean up after the episode (exceptions are recorded as warnings)."""


@runtime_checkable
class UserProtocol(Protocol):
    """The simulated user. ``init_state`` receives the scenario's ``user_simulation`` block.

    ``generate`` receives the agent's latest text message (the greeting first)
    and returns a ``{"role": "user", "content": ...}`` message; content that is
    exactly ``###STOP###`` ends the episode.

    A user may also define ``observe(trace, messages)``: the loop then calls it
    before each of the user's turns with the tool trace (``TraceEntry``
    records) and the messages so far, so a simulated customer can react to what
    the agent did (the scripted user's reactive turns do). A real customer does
    not see tool calls; use it for reactions a customer would notice (a refund
    issued, a decision announced), never to leak hidden state.
    """

    def set_seed(self, seed: int) -> None: ...

    def init_state(self, scenario: dict[str, Any], message_history: list[dict[str, Any]] | None = None) -> Any: ...

    def generate(self, message: dict[str, Any], state: Any) -> tuple[dict[str, Any], Any]: ...

    def is_stop(self, message: dict[str, Any]) -> bool: ...

    def stop(self, message: dict[str, Any] | None, state: Any) -> None: ...


@runtime_checkable
class JudgeProtocol(Protocol):
    """Answers Tier-2 yes/no questions about the agent's messages.

    Return ``"YES"``, ``"NO"``, or ``None`` when the answer could not be parsed
    (the evaluator then asks once more). Exceptions fail that check only, except
    :class:`InfrastructureError` (the judge could not be reached): it propagates
    out of ``evaluate`` and the episode becomes an ``infra_error`` row, never a "no".

    Example::

        class KeywordJudge:
            def judge(self, question: str, text: str) -> str | None:
                return "YES" if "manager" in text.lower() else "NO"
    """

    def judge(self, question: str, text: str) -> str | None: ...
