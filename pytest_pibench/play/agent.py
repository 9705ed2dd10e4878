"""The person in the agent's seat: agents that replay the actions so far, then ask for the next one.

A play is an ordinary episode: these are agents like any other, run through the
real loop with the scripted user and the real environment, so what the person
sees is exactly what ``init_state`` and ``generate`` hand an agent, and the play
is scored by the real ``evaluate``.

* :class:`InteractivePlayer` asks on a terminal (or any line stream: a pipe works);
* :class:`StepPlayer` pauses when it runs out of actions: it raises a private
  exception, which the loop ends as the agent's error; the step command then
  throws that episode away and prints what came since the last action. Replaying
  from the start each time is exact: the scripted user, the environment and the
  call ids (by position) are deterministic.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import IO, Any

from pytest_pibench.episode.messages import STOP_SIGNALS
from pytest_pibench.participants.replay import ReplayAgent
from pytest_pibench.play.syntax import HELP, Action, CommandError, View, parse_line
from pytest_pibench.play.view import render_context, render_message, render_messages, render_tools

__all__ = ["Abandoned", "InteractivePlayer", "Paused", "PlayerAgent", "StepPlayer"]


class Paused(BaseException):
    """The step player has no more actions (a BaseException: no agent code can swallow it by accident)."""


class Abandoned(BaseException):
    """The person typed ``/quit``: the play is thrown away."""


class PlayerAgent(ReplayAgent):
    """A replay of ``actions`` that remembers what it was shown (context, tools, conversation)."""

    model_name = "human"

    def __init__(self, actions: list[dict[str, Any]]) -> None:
        super().__init__(actions)
        self.context: list[dict[str, Any]] = []
        self.tools: list[dict[str, Any]] = []
        self.history: list[dict[str, Any]] = []

    @property
    def tools_by_name(self) -> dict[str, Mapping[str, Any]]:
        return {str(t.get("name")): t for t in self.tools}

    def init_state(
        self,
        benchmark_context: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        message_history: list[dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        self.context, self.tools, self.history = list(benchmark_context), list(tools), list(message_history or [])
        return super().init_state(benchmark_context, tools, message_history)

    def generate(self, message: dict[str, Any], state: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        self.history.append(message)
        reply, state = super().generate(message, state)
        self.history.append(reply)
        return reply, state

    def show(self, topic: str) -> str:
        """What ``/policy``, ``/task``, ``/tools``, ``/history`` or ``/help`` shows."""
        if topic in ("policy", "task"):
            return render_context(self.context, (topic,)) or f"(no {topic} was given)"
        if topic == "tools":
            return render_tools(self.tools)
        if topic == "history":
            return render_messages(self.history)
        return HELP


class StepPlayer(PlayerAgent):
    """Replays the recorded actions, then pauses (raises :class:`Paused`) for the next invocation."""

    def __init__(self, actions: list[dict[str, Any]]) -> None:
        super().__init__(actions)
        self.paused = False

    def next_action(self, message: dict[str, Any]) -> dict[str, Any]:
        self.paused = True
        raise Paused


class InteractivePlayer(PlayerAgent):
    """Shows each observation on ``out`` and reads the person's next action from ``lines``.

    A bad line is answered with what is wrong and asked again; it never ends
    the episode. The end of the input (a pipe that ran dry, Ctrl-D) is ``stop``.
    """

    def __init__(self, lines: IO[str], out: IO[str], actions: list[dict[str, Any]] | None = None) -> None:
        super().__init__(actions or [])
        self.lines = lines
        self.out = out
        self.abandoned = False

    def _print(self, text: str) -> None:
        print(text, file=self.out, flush=True)

    def init_state(
        self,
        benchmark_context: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        message_history: list[dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        state = super().init_state(benchmark_context, tools, message_history)
        self._print(render_context(self.context))
        self._print("\n" + render_tools(self.tools))
        self._print("\nType /help for the commands.\n")
        self._print(render_messages(self.history))
        return state

    def next_action(self, message: dict[str, Any]) -> dict[str, Any]:
        self._print(render_message(message))
        while True:
            self.out.write("> ")
            self.out.flush()
            line = self.lines.readline()
            if not line:
                self._print("(end of input: stop)")
                return {"content": STOP_SIGNALS[0]}
            if not self.lines.isatty():  # a piped play: echo the line, so the output reads as a session
                self._print(line.rstrip("\n"))
            try:
                command = parse_line(line, self.tools_by_name)
            except CommandError as exc:
                self._print(f"! {exc}")
                continue
            if isinstance(command, View):
                if command.topic == "quit":
                    self.abandoned = True
                    raise Abandoned
                self._print(self.show(command.topic))
            elif isinstance(command, Action):
                return command.message

