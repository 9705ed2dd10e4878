"""One episode into one result row: the unit every way of running a benchmark shares.

Once the agent spec is resolved, what goes wrong in an episode is a row, not an
exception: see :func:`run_one` for which row and for what still raises.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pytest_pibench.env.binding import Binding, bind_scenario
from pytest_pibench.episode.caller import (
    CallTimeout,
    ParticipantCaller,
    ParticipantRaised,
    bound_traceback,
    is_real_stop,
)
from pytest_pibench.episode.limits import EpisodeLimits
from pytest_pibench.episode.loop import EpisodeResult, play_episode
from pytest_pibench.episode.protocols import InfrastructureError, JudgeProtocol
from pytest_pibench.evaluation import evaluate
from pytest_pibench.packs.loading import DomainError
from pytest_pibench.participants.specs import AgentSpec, resolve_agent
from pytest_pibench.participants.users import ScriptedUser
from pytest_pibench.results.rows import error_row, scenario_row
from pytest_pibench.results.types import ResultRow
from pytest_pibench.run._usage import spent_before, with_usage
from pytest_pibench.run.plan import PlannedItem, planned_item
from pytest_pibench.scenario.loading import ScenarioError, load_scenario
from pytest_pibench.scenario.models import Scenario
from pytest_pibench.vocab import DEFAULT_SEED

__all__ = ["API_LIMITS", "episode_row", "run_episode", "run_one"]

API_LIMITS = EpisodeLimits(timeout=None)
"""The limits of :func:`run_episode` and :func:`run_one` called from your own code: the benchmark's
defaults, except no episode timeout (a call you make waits as long as you do)."""


def run_episode(
    scenario: Scenario | str | Path,
    agent: Any,
    user: Any = None,
    *,
    seed: int | None = None,
    limits: EpisodeLimits | None = None,
    binding: Binding | None = None,
    caller: ParticipantCaller | None = None,
    **limit_changes: Any,
) -> EpisodeResult:
    """Run one episode of ``scenario`` with ``agent`` and ``user``.

    Args:
        scenario: a loaded scenario or the path of a scenario file.
        agent: an agent object, or an agent spec string (``"oracle"``, ``"mymod:Agent"``).
        user: a user object; default :class:`ScriptedUser`.
        seed: passed to ``set_seed`` of both participants before ``init_state``.
        limits: what bounds the episode (default :data:`API_LIMITS`); see :class:`EpisodeLimits`.
        binding: a pre-resolved binding (saves re-resolving the domain).
        caller: the :class:`ParticipantCaller` that built the agent, so the episode's calls run
            on the same thread (its deadline is reset to the episode's).
        limit_changes: single limits changed from ``limits`` (``max_steps=60``, ``timeout=30``...).

    Raises:
        ScenarioError, DomainError, AgentSpecError: when the episode cannot start
            at all (bad scenario, domain or spec).
        InputError: a limit out of range (a timeout that is not a positive, finite number...).
        Exception: whatever building the agent raises, when ``agent`` is a spec
            string (the episode has not started; :func:`run_one` scores it instead).

    Once the episode runs, a participant's exception, invalid message or
    timeout ends it with a termination reason instead of raising. Ctrl-C and
    SIGTERM (``KeyboardInterrupt``) always propagate.
    """
    bounds = (limits or API_LIMITS).with_(**limit_changes) if limit_changes else (limits or API_LIMITS)
    if not isinstance(scenario, Scenario):
        scenario = load_scenario(scenario)
    if isinstance(agent, str):
        agent = resolve_agent(agent).build(scenario)
    return play_episode(binding or bind_scenario(scenario), agent, user or ScriptedUser(), seed=seed, limits=bounds,
                        caller=caller)  # fmt: skip


def run_one(
    scenario: Scenario | str | Path,
    agent: str | AgentSpec,
    *,
    trial: int = 0,
    base_seed: int = DEFAULT_SEED,
    user_factory: Callable[[Scenario], Any] | None = None,
    judge: JudgeProtocol | None = None,
    judge_factory: Callable[[], JudgeProtocol] | None = None,
    limits: EpisodeLimits | None = None,
    judge_votes: int = 1,
    include_transcript: bool = True,
    **limit_changes: Any,
) -> ResultRow:
    """Run and score one episode into a result row.

    ``limits`` bound the episode (default :data:`API_LIMITS`; ``limit_changes``
    change single ones). Once ``agent`` is resolved, an ``Exception`` raised
    while running becomes a row: a broken scenario file or domain pack is a
    ``scenario_error`` row; an agent that cannot be built, raises or overruns
    the timeout is scored, as its ``agent_error``; a judge that cannot be
    reached (it raises :class:`InfrastructureError`) makes an ``infra_error``
    row, "judge unreachable: ...", kept out of every rate; any other exception
    is a ``runtime_error`` row with its traceback.

    Raises:
        AgentSpecError: when ``agent`` is a spec string that does not resolve
            (before anything runs).
        InputError: a limit out of range.
        KeyboardInterrupt: on Ctrl-C or SIGTERM; a stop is never recorded as a
            row. So do other exceptions outside ``Exception`` (``SystemExit``).
    """
    spec = resolve_agent(agent) if isinstance(agent, str) else agent
    bounds = (limits or API_LIMITS).with_(**limit_changes) if limit_changes else (limits or API_LIMITS)
    target: Scenario | Path = scenario if isinstance(scenario, Scenario) else Path(scenario)
    item = planned_item(target, spec.name, trial, base_seed, None)
    return episode_row(item, spec, bounds, user_factory=user_factory, judge=judge, judge_factory=judge_factory,
                       judge_votes=judge_votes, include_transcript=include_transcript)  # fmt: skip


def episode_row(
    item: PlannedItem,
    spec: AgentSpec,
    limits: EpisodeLimits,
    *,
    user_factory: Callable[[Scenario], Any] | None = None,
    judge: JudgeProtocol | None = None,
    judge_factory: Callable[[], JudgeProtocol] | None = None,
    judge_votes: int = 1,
    include_transcript: bool = True,
) -> ResultRow:
    """The row of one planned item (see :func:`run_one` for what becomes a row and what raises)."""
    loaded: Scenario | None = item.scenario if isinstance(item.scenario, Scenario) else None
    caller = ParticipantCaller(None)  # its deadline is set once the scenario is bound, as the agent is built
    try:
        return _played(item, spec, limits, loaded, caller, user_factory, judge, judge_factory, judge_votes,
                       include_transcript)  # fmt: skip
    finally:
        caller.close()  # the episode's participant thread ends with it


def _played(
    item: PlannedItem,
    spec: AgentSpec,
    limits: EpisodeLimits,
    loaded: Scenario | None,
    caller: ParticipantCaller,
    user_factory: Callable[[Scenario], Any] | None,
    judge: JudgeProtocol | None,
    judge_factory: Callable[[], JudgeProtocol] | None,
    judge_votes: int,
    include_transcript: bool,
) -> ResultRow:
    target, trial, seed = item.scenario, item.trial, item.seed
    timeout = limits.timeout
    domain_name = ""
    judging = False
    try:
        if loaded is None:
            loaded = load_scenario(target) if isinstance(target, Path) else target
        binding = bind_scenario(loaded)
        domain_name = binding.domain.name
        # Building the agent runs its code: under the episode timeout, on the thread its episode will use.
        caller.deadline = None if timeout is None else time.monotonic() + timeout
        agent_obj = _build_agent(spec, loaded, caller)
        user = _build_user(user_factory, loaded, caller) if user_factory else None
        judge_obj = judge_factory() if judge_factory else judge
        # A participant reused across episodes reports its whole life: charge the row only this episode's part.
        # A fresh one keeps everything it reports (what building it cost belongs to this episode).
        before = spent_before(
            caller,
            agent_obj if spec.shared else None,
            user if getattr(user_factory, "pibench_shared", False) else None,
            judge_obj if judge_factory is None else None,
        )
        episode = play_episode(binding, agent_obj, user or ScriptedUser(), seed=seed, limits=limits, caller=caller)
        judging = True
        result = evaluate(loaded, episode, judge=judge_obj, judge_votes=judge_votes)
    except BaseException as exc:
        if is_real_stop(exc):
            raise
        judge_outage = judging and isinstance(exc, InfrastructureError)
        broken_scenario = isinstance(exc, ScenarioError | DomainError)  # the scenario's defect, not the agent's
        if isinstance(exc, _UserFailed):
            message, cause, reason = str(exc), "user_simulator", "user_error"
        elif judge_outage:
            message, cause, reason = f"judge unreachable: {exc}", "infrastructure", "infra_error"
        elif broken_scenario:
            message, cause, reason = f"{type(exc).__name__}: {exc}", "scenario", "scenario_error"
        else:
            message, cause, reason = f"{type(exc).__name__}: {exc}", "harness", "runtime_error"
        failed = error_row(
            loaded.scenario_id if loaded else item.scenario_id,
            message,
            scenario=loaded,
            trial=trial,
            agent=spec.name,
            domain_name=domain_name,
            seed=seed,
            traceback=bound_traceback(traceback.format_exc()),
            cause=cause,
            termination_reason=reason,
        )
        if not judge_outage:
            return failed
        failed["step_count"] = episode.step_count
        return with_usage(failed, caller, agent_obj, user, judge_obj, before)  # the agent's calls were paid for
    row = scenario_row(
        loaded,
        result,
        episode,
        trial=trial,
        agent=spec.name,
        domain_name=domain_name,
        include_transcript=include_transcript,
    )
    if spec.trusted and callable(getattr(agent_obj, "protocol_warnings", None)):  # our own adapters only
        row.setdefault("warnings", []).extend(agent_obj.protocol_warnings())
    return with_usage(row, caller, agent_obj, user, judge_obj, before)


class _UnbuildableAgent:
    """Stands in for an agent whose construction failed: the episode ends as its ``agent_error``.

    Building the agent is the agent's own code (a class, a factory), so its
    failure (an exception of any kind, or a hang past the timeout) is scored
    against it like any other, not kept apart as an error row.
    """

    def __init__(self, what: str, tb: str = "") -> None:
        self.what = what
        self.tb = tb

    def init_state(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"the agent could not be built: {self.what}\n\n{self.tb}".rstrip())

    def generate(self, message: Any, state: Any) -> Any:  # pragma: no cover - init_state fails first
        raise RuntimeError("the agent could not be built")


class _UserFailed(Exception):
    """Building the user simulator failed: an error row (the user is not the agent under test)."""


def _build_user(factory: Callable[[Scenario], Any], scenario: Scenario, caller: ParticipantCaller) -> Any:
    try:
        return caller(factory, scenario)
    except CallTimeout:
        raise _UserFailed("the user simulator could not be built before the episode timeout") from None
    except ParticipantRaised as exc:
        if exc.infrastructure:
            raise exc.original or exc from None
        raise _UserFailed(f"the user simulator could not be built: {exc.type_name}: {exc.text}") from None


def _build_agent(spec: AgentSpec, scenario: Scenario, caller: ParticipantCaller) -> Any:
    try:
        return caller(spec.build, scenario)
    except CallTimeout:
        return _UnbuildableAgent("building it did not finish before the episode timeout")
    except ParticipantRaised as exc:
        if isinstance(exc.original, ScenarioError | DomainError) and spec.trusted:
            raise exc.original from None  # a built-in (the oracle) found the scenario itself broken
        return _UnbuildableAgent(f"{exc.type_name}: {exc.text}", exc.tb)
