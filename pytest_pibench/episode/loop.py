"""The episode loop: agent <-> user <-> environment, with upstream's turn order and endings.

Turn order (upstream-runtime.md §8): the episode opens with an assistant
greeting, the user speaks first, agent tool calls go to the environment and
the results straight back to the agent, agent text goes to the user. Limits
(``max_steps``, ``max_errors``) are checked between participant turns. Unlike
upstream, ``step_count`` never exceeds ``max_steps``: a tool batch that would
be one step too many never runs. Tool calls are bounded per message and per
episode (``max_tool_calls_per_message``, ``max_tool_calls``): a message over
either limit runs only the calls within it and ends the episode as
``tool_call_limit`` (scored like ``max_steps``). A per-episode LLM budget
(``cost_limit``, US dollars) is checked after every participant turn against
what the agent and the user simulator report spending (``usage()``); reaching
it ends the episode as ``cost_limit``, also scored like ``max_steps``.

Unlike upstream, nothing here can crash the run: an exception, a ``None`` or
malformed message, or a hang past ``timeout`` ends the episode with a reason
(and the traceback text) in :attr:`EpisodeResult.error`.

Endings are split by cause. Whatever the agent causes (an exception, a
malformed message, a hang past the timeout) ends the episode as
``agent_error``: a normal ending whose transcript is scored, as upstream does,
so it counts against the agent. Only failures outside the agent (the user
simulator, an unreachable model provider) make the episode an error row.
A Ctrl-C or SIGTERM is never anyone's error: it stops the run.
"""

from __future__ import annotations

import time
from typing import Any

from pytest_pibench.env.binding import Binding
from pytest_pibench.episode import interrupt
from pytest_pibench.episode.budget import Spend, reported_spend
from pytest_pibench.episode.caller import CallTimeout, ParticipantCaller, ParticipantRaised, is_builtin
from pytest_pibench.episode.limits import EpisodeLimits
from pytest_pibench.episode.messages import is_stop_signal, message_problem
from pytest_pibench.episode.plain import final_state, jsonable
from pytest_pibench.episode.reply import Reply, read_reply
from pytest_pibench.episode.result import ERROR_TERMINATIONS, EpisodeResult
from pytest_pibench.statediff import state_changes

__all__ = ["ERROR_TERMINATIONS", "GREETING", "EpisodeResult", "play_episode"]

GREETING = "Hello! What can I do for you today?"
"""The assistant's fixed opening line (part of the transcript, like upstream's greeting)."""


class _Failure(Exception):
    def __init__(self, message: str, tb: str = "") -> None:
        super().__init__(message)
        self.tb = tb


def play_episode(
    binding: Binding,
    agent: Any,
    user: Any,
    *,
    seed: int | None = None,
    limits: EpisodeLimits | None = None,
    caller: ParticipantCaller | None = None,
) -> EpisodeResult:
    """Play one episode of a bound scenario between participant objects (see :func:`run_episode`).

    Participant failures never raise: they end the episode with a reason.
    ``limits`` bound it (default: :class:`EpisodeLimits`' defaults).
    ``caller`` is the one that built the agent (its calls then stay on that thread).
    """
    return _Episode(binding, agent, user, seed, limits or EpisodeLimits()).run(caller)


class _Episode:
    def __init__(self, binding: Binding, agent: Any, user: Any, seed: int | None, limits: EpisodeLimits) -> None:
        self.binding = binding
        self.cost_limit = limits.cost_limit
        self.spend_at_start = Spend()
        self.agent = agent
        self.user = user
        self.seed = seed
        self.max_steps = limits.max_steps
        self.max_errors = limits.max_errors
        self.timeout = limits.timeout
        self.env = binding.new_environment(limits.observer_mode)
        self.messages: list[dict[str, Any]] = []
        self.error: dict[str, str] | None = None
        self.warnings: list[str] = []
        self.steps = 0
        self.max_tool_calls_per_message = limits.max_tool_calls_per_message
        self.max_tool_calls = limits.max_tool_calls
        self.limit_hit: dict[str, Any] | None = None
        self.last_role = "agent"
        self.call = ParticipantCaller(None)
        # Read once from the classes: the built-ins are trusted (no thread hop, no defensive copies).
        self.builtin = {"agent": is_builtin(agent), "user": is_builtin(user)}

    def run(self, caller: ParticipantCaller | None = None) -> EpisodeResult:
        started = time.monotonic()
        deadline = None if self.timeout is None else started + self.timeout
        self.call = caller or ParticipantCaller(deadline)
        self.call.deadline = deadline
        states: dict[str, Any] = {"agent": None, "user": None}
        current: dict[str, Any] | None = None
        try:
            reason = self._loop(deadline, states)
        finally:
            current = self.messages[-1] if self.messages else None
            for role, participant in (("agent", self.agent), ("user", self.user)):
                self._stop(role, participant, current, states[role], deadline)
            if caller is None:  # ours: its thread ends with the episode (a given one is its owner's to close)
                self.call.close()
        for index, message in enumerate(self.messages):
            message["turn_index"] = index
        ending_state = final_state(self.env.db)
        return EpisodeResult(
            scenario_id=self.binding.scenario.scenario_id,
            termination_reason=reason,
            messages=self.messages,
            trace=[entry.to_dict() for entry in self.env.trace],
            final_state=ending_state,
            state_changes=state_changes(self.binding.initial_db, ending_state),
            step_count=self.steps,
            duration=time.monotonic() - started,
            seed=self.seed,
            error=self.error,
            warnings=self.warnings,
            limit_hit=self.limit_hit,
        )

    def _fail(self, role: str, kind: str, message: str, tb: str = "") -> str:
        """Record why the episode ended and return the termination reason.

        The cause decides: an infrastructure failure is ``infra_error``; anything
        else is the failing participant's (``agent_error``, scored, or
        ``user_error``), timeouts included.
        """
        if interrupt.requested():  # a Ctrl-C/SIGTERM surfaced as a participant's exception
            raise KeyboardInterrupt
        self.error = {"role": role, "kind": kind, "message": message, "traceback": tb}
        return "infra_error" if kind == "infrastructure" else f"{role}_error"

    def _stop(self, role: str, participant: Any, current: Any, state: Any, deadline: float | None) -> None:
        """``stop(message, state)``, allowed 5 seconds (or the timeout, if shorter): cleanup never loses the result."""

        def stop(message: Any, state: Any) -> None:
            method = getattr(participant, "stop", None)
            if method is not None:
                method(message, state)

        given = self._given(role, current)
        allowed = None if deadline is None or self.timeout is None else min(5.0, self.timeout)
        try:
            self.call(stop, given, state, limit=allowed, direct=self.builtin[role])
        except ParticipantRaised as exc:
            self.warnings.append(f"{role}.stop raised {exc.type_name}: {exc.text}"[:2_000])
        except CallTimeout:
            self.warnings.append(f"{role}.stop did not return within {allowed:g} seconds (abandoned)")

    def _given(self, role: str, value: Any) -> Any:
        """``value`` as a participant may keep and change it: a built-in's as it is, anyone else's a copy."""
        return value if self.builtin[role] else jsonable(value)

    def _raised(self, role: str, method: str, exc: ParticipantRaised) -> str:
        """The ending for a participant call that raised: its own failure, or the infrastructure's."""
        if exc.infrastructure:
            return self._fail(role, "infrastructure", f"{role}.{method}: {exc.text}", exc.tb)
        return self._fail(role, "exception", f"{role}.{method} raised {exc.type_name}: {exc.text}", exc.tb)

    def _start(self, states: dict[str, Any]) -> str | None:
        greeting = {"role": "assistant", "content": GREETING}
        self.messages.append(dict(greeting))
        scenario = self.binding.scenario
        steps: list[tuple[str, str, Any, tuple[Any, ...]]] = []
        if self.seed is not None:
            steps += [("agent", "set_seed", self.agent, (self.seed,)), ("user", "set_seed", self.user, (self.seed,))]
        steps.append(
            (
                "agent",
                "init_state",
                self.agent,
                # Its own copy of the tools: what one agent changes, the next in the process must not see.
                (
                    self.binding.benchmark_context(self.max_steps),
                    self._given("agent", self.binding.tool_schemas),
                    [dict(greeting)],
                ),
            )
        )
        steps.append(("user", "init_state", self.user, (scenario.user_simulation.model_dump(),)))
        missing = object()
        for role, method, participant, args in steps:

            def step(*args: Any, participant: Any = participant, method: str = method) -> Any:
                fn = getattr(participant, method, None)  # the lookup is the participant's code too
                return missing if fn is None else fn(*args)

            try:
                value = self.call(step, *args, direct=self.builtin[role])
            except CallTimeout:
                return self._fail(role, "timeout", f"{role}.{method} did not return before the episode timeout")
            except ParticipantRaised as exc:
                return self._raised(role, method, exc)
            if value is missing:
                if method == "set_seed":
                    continue
                return self._fail(role, "protocol", f"{role} has no {method}() method")
            if method == "init_state":
                states[role] = value
        return None

    def _loop(self, deadline: float | None, states: dict[str, Any]) -> str:
        if self.cost_limit is not None:  # a reused participant reports what it spent before this episode too
            self.spend_at_start = reported_spend((self.agent, self.user), self.call)
        failed = self._start(states)
        if failed:
            return failed
        to_role, env_caller = "user", "agent"
        current: dict[str, Any] = self.messages[0]
        while True:
            if to_role == "environment":
                if self.steps >= self.max_steps:  # the batch would be one step too many: it never runs
                    return "max_steps"
                calls = self._allowed_calls(current["tool_calls"], env_caller)
                if calls:
                    current = self.env.execute_all(calls, requestor="assistant" if env_caller == "agent" else "user")
                    self.messages.append(current)
                    self.steps += 1
                if self.limit_hit is not None:
                    return "tool_call_limit"
                to_role = env_caller
            else:
                try:
                    current, to_role, ended = self._participant_turn(to_role, current, states)
                except _Failure as failure:
                    return str(failure)
                if ended:
                    return ended
                if self.cost_limit is not None and self._over_budget():  # before the turn's tool calls run
                    return "cost_limit"
                if to_role == "environment":
                    env_caller = "agent" if current.get("role") == "assistant" else "user"
            if to_role != "environment":
                if self.steps >= self.max_steps:
                    return "max_steps"
                if self.env.error_count >= self.max_errors:
                    return "too_many_errors"
            if deadline is not None and time.monotonic() >= deadline:
                # The participant whose turn used up the time is the cause (tool calls are the agent's).
                return self._fail(self.last_role, "timeout", f"the episode exceeded its {self.timeout:g}s timeout")

    def _participant_turn(
        self, role: str, incoming: dict[str, Any], states: dict[str, Any]
    ) -> tuple[dict[str, Any], str, str | None]:
        """One agent or user turn: returns (message, next role, termination reason or None)."""
        participant = self.agent if role == "agent" else self.user
        builtin = self.builtin[role]
        wire_role = "assistant" if role == "agent" else "user"
        self.steps += 1
        self.last_role = role
        observing = role == "user" and callable(getattr(participant, "observe", None))
        trace, seen = (list(self.env.trace), [dict(m) for m in self.messages]) if observing else ([], [])

        def turn(message: dict[str, Any], state: Any) -> Reply:
            # Everything here is the participant's code or reads what it made: all of it under the deadline.
            if observing:  # a user that reacts to what the agent did (ObservingUser): show it the episode
                participant.observe(trace, seen)
            returned = participant.generate(message, state)
            if builtin:  # a built-in returns fresh builtins in a plain tuple
                return Reply(returned[0], returned[1])
            return read_reply(returned)

        given = self._given(role, incoming)  # a built-in neither keeps nor changes it: no defensive copy
        try:
            reply: Reply = self.call(turn, given, states[role], direct=builtin)
        except CallTimeout:
            raise _Failure(
                self._fail(role, "timeout", f"{role}.generate did not return before the episode timeout")
            ) from None
        except ParticipantRaised as exc:  # even sys.exit() or KeyboardInterrupt in agent code is one episode's
            raise _Failure(self._raised(role, "generate", exc)) from None
        message = reply.message
        problem = reply.problem or message_problem(message, wire_role)
        if problem:
            if isinstance(message, dict):  # kept for the record (markers in place of what JSON cannot hold)
                self.messages.append(message)
            prefix = f"{role}." if reply.problem and reply.message is None else f"{role} message invalid: "
            raise _Failure(self._fail(role, "invalid_message", f"{prefix}{problem}"))
        states[role] = reply.state
        self.messages.append(message)

        def custom_stop(message: dict[str, Any]) -> bool:
            is_stop = getattr(participant, "is_stop", None)
            return False if is_stop is None else bool(is_stop(message))

        try:
            stopping = self.call(custom_stop, self._given(role, message), direct=builtin)
        except CallTimeout:
            raise _Failure(
                self._fail(role, "timeout", f"{role}.is_stop did not return before the episode timeout")
            ) from None
        except ParticipantRaised as exc:
            raise _Failure(self._raised(role, "is_stop", exc)) from None
        if stopping or is_stop_signal(message):
            return message, role, f"{role}_stop"
        if message.get("tool_calls"):
            return message, "environment", None
        return message, "user" if role == "agent" else "agent", None

    def _over_budget(self) -> bool:
        """Whether the agent and user spent ``cost_limit`` in this episode (then recorded in :attr:`limit_hit`)."""
        spend = reported_spend((self.agent, self.user), self.call).since(self.spend_at_start)
        self.warnings += [p for p in spend.problems if p not in self.warnings]
        if self.cost_limit is None or spend.usd < self.cost_limit:
            return False
        self.limit_hit = {
            "limit": "episode_cost_limit",
            "value": self.cost_limit,
            "spent_usd": round(spend.usd, 8),
            "unpriced_calls": spend.unpriced_calls,
            "role": self.last_role,
        }
        return True

    def _allowed_calls(self, calls: list[dict[str, Any]], role: str) -> list[dict[str, Any]]:
        """The calls of one message that the tool-call limits let run (the first ones, in order).

        When a message asks for more than either limit allows, :attr:`limit_hit`
        says which limit (the tighter one) stopped it; the episode then ends as
        ``tool_call_limit`` once the allowed calls ran.
        """
        remaining = max(0, self.max_tool_calls - len(self.env.trace))
        allowed = min(len(calls), self.max_tool_calls_per_message, remaining)
        if allowed < len(calls):
            per_message = self.max_tool_calls_per_message <= remaining
            self.limit_hit = {
                "limit": "max_tool_calls_per_message" if per_message else "max_tool_calls",
                "value": self.max_tool_calls_per_message if per_message else self.max_tool_calls,
                "requested": len(calls),
                "executed": allowed,
                "role": role,
            }
        return calls[:allowed]
