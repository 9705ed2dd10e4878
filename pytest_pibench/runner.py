"""Running scenarios into result rows: one row per (scenario, agent, trial).

Once the agent spec is resolved, what goes wrong in a run is a row, not an
exception: see :func:`run_one` for which row and for what still raises.
"""

from __future__ import annotations

import math
import time
import traceback
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, cast

from pytest_pibench.domain.packs import DomainError
from pytest_pibench.env.binding import Binding, bind_scenario
from pytest_pibench.episode.budget import usage_report
from pytest_pibench.episode.caller import (
    CallTimeout,
    ParticipantCaller,
    ParticipantRaised,
    bound_traceback,
    is_builtin,
    is_real_stop,
)
from pytest_pibench.episode.loop import EpisodeResult, play_episode
from pytest_pibench.episode.protocols import InfrastructureError, JudgeProtocol
from pytest_pibench.episode.reply import plain_copy
from pytest_pibench.episode.seeds import derive_seed
from pytest_pibench.evaluation import evaluate
from pytest_pibench.participants.specs import AgentSpec, resolve_agent
from pytest_pibench.participants.users import ScriptedUser
from pytest_pibench.results.rows import error_row, scenario_row
from pytest_pibench.results.types import ResultRow, UsageReport
from pytest_pibench.scenario.loading import ScenarioError, discover_scenarios, load_scenario
from pytest_pibench.scenario.models import Scenario
from pytest_pibench.vocab import (
    DEFAULT_MAX_ERRORS,
    DEFAULT_MAX_STEPS,
    DEFAULT_MAX_TOOL_CALLS,
    DEFAULT_MAX_TOOL_CALLS_PER_MESSAGE,
    DEFAULT_SEED,
)

__all__ = ["run_episode", "run_one", "run_suite", "seed_key"]


def seed_key(scenario: Scenario | Path) -> str:
    if isinstance(scenario, Path):
        return scenario.stem
    return scenario.source_path.stem if scenario.source_path else scenario.scenario_id


def run_episode(
    scenario: Scenario | str | Path,
    agent: Any,
    user: Any = None,
    *,
    seed: int | None = None,
    max_steps: int = DEFAULT_MAX_STEPS,
    max_errors: int = DEFAULT_MAX_ERRORS,
    timeout: float | None = None,
    binding: Binding | None = None,
    max_tool_calls_per_message: int = DEFAULT_MAX_TOOL_CALLS_PER_MESSAGE,
    max_tool_calls: int = DEFAULT_MAX_TOOL_CALLS,
    observer_mode: str = "audit_only",
    cost_limit: float | None = None,
    caller: ParticipantCaller | None = None,
) -> EpisodeResult:
    """Run one episode of ``scenario`` with ``agent`` and ``user``.

    Args:
        scenario: a loaded scenario or the path of a scenario file.
        agent: an agent object, or an agent spec string (``"oracle"``, ``"mymod:Agent"``).
        user: a user object; default :class:`ScriptedUser`.
        seed: passed to ``set_seed`` of both participants before ``init_state``.
        max_steps: ends the episode as ``max_steps`` once this many steps ran.
        max_errors: ends it as ``too_many_errors`` after this many failed tool calls.
        timeout: wall-clock seconds for the whole episode; past it, the participant whose turn
            ran over fails (``agent_error`` or ``user_error``, ``error["kind"] == "timeout"``).
        binding: a pre-resolved binding (saves re-resolving the domain).
        max_tool_calls_per_message: most tool calls run from one message; a message asking
            for more ends the episode as ``tool_call_limit`` after running the first ones.
        max_tool_calls: most tool calls run in the whole episode; the same ending past it.
            Calls over either limit never run and are not in the trace.
        observer_mode: ``audit_only`` (every call runs) or ``hard_gate`` (calls to the tools the
            scenario forbids are blocked and recorded as blocked attempts); a scenario's own
            ``meta.observer_mode`` wins.
        cost_limit: US dollars the agent and user may spend (their ``usage()`` reports); the
            turn that reaches it ends the episode as ``cost_limit`` (scored like ``max_steps``).
        caller: the :class:`ParticipantCaller` that built the agent, so the episode's calls run
            on the same thread (its deadline is reset to the episode's).

    Raises:
        ScenarioError, DomainError, AgentSpecError: when the episode cannot start
            at all (bad scenario, domain or spec).
        Exception: whatever building the agent raises, when ``agent`` is a spec
            string (the episode has not started; :func:`run_one` scores it instead).

    Once the episode runs, a participant's exception, invalid message or
    timeout ends it with a termination reason instead of raising. Ctrl-C and
    SIGTERM (``KeyboardInterrupt``) always propagate.
    """
    if not isinstance(scenario, Scenario):
        scenario = load_scenario(scenario)
    if isinstance(agent, str):
        agent = resolve_agent(agent).build(scenario)
    return play_episode(
        binding or bind_scenario(scenario),
        agent,
        user or ScriptedUser(),
        seed=seed,
        max_steps=max_steps,
        max_errors=max_errors,
        timeout=timeout,
        max_tool_calls_per_message=max_tool_calls_per_message,
        max_tool_calls=max_tool_calls,
        observer_mode=observer_mode,
        cost_limit=cost_limit,
        caller=caller,
    )


def run_one(
    scenario: Scenario | str | Path,
    agent: str | AgentSpec,
    *,
    trial: int = 0,
    base_seed: int = DEFAULT_SEED,
    user_factory: Callable[[Scenario], Any] | None = None,
    judge: JudgeProtocol | None = None,
    judge_factory: Callable[[], JudgeProtocol] | None = None,
    max_steps: int = DEFAULT_MAX_STEPS,
    max_errors: int = DEFAULT_MAX_ERRORS,
    timeout: float | None = None,
    include_transcript: bool = True,
    max_tool_calls_per_message: int = DEFAULT_MAX_TOOL_CALLS_PER_MESSAGE,
    max_tool_calls: int = DEFAULT_MAX_TOOL_CALLS,
    observer_mode: str = "audit_only",
    judge_votes: int = 1,
    cost_limit: float | None = None,
) -> ResultRow:
    """Run and score one episode into a result row.

    Once ``agent`` is resolved, an ``Exception`` raised while running becomes a
    row: a broken scenario file or domain pack is a ``scenario_error`` row; an
    agent that cannot be built, raises or overruns ``timeout`` is scored, as its
    ``agent_error``;
    a judge that cannot be reached (it raises :class:`InfrastructureError`) makes
    an ``infra_error`` row, "judge unreachable: ...", kept out of every rate; any
    other exception is a ``runtime_error`` row with its traceback.

    Raises:
        AgentSpecError: when ``agent`` is a spec string that does not resolve
            (before anything runs).
        KeyboardInterrupt: on Ctrl-C or SIGTERM; a stop is never recorded as a
            row. So do other exceptions outside ``Exception`` (``SystemExit``).
    """
    spec = resolve_agent(agent) if isinstance(agent, str) else agent
    target: Scenario | Path = scenario if isinstance(scenario, Scenario) else Path(scenario)
    seed = derive_seed(base_seed, seed_key(target), trial)
    loaded: Scenario | None = target if isinstance(target, Scenario) else None
    domain_name = ""
    judging = False
    try:
        if loaded is None:
            loaded = load_scenario(target) if isinstance(target, Path) else target
        binding = bind_scenario(loaded)
        domain_name = binding.domain.name
        # Building the agent runs its code: under the episode timeout, on the thread its episode will use.
        caller = ParticipantCaller(None if timeout is None else time.monotonic() + timeout)
        agent_obj = _build_agent(spec, loaded, caller)
        user = _build_user(user_factory, loaded, caller) if user_factory else None
        judge_obj = judge_factory() if judge_factory else judge
        # A participant reused across episodes reports its whole life: charge the row only this episode's part.
        # A fresh one keeps everything it reports (what building it cost belongs to this episode).
        before = _spent_before(
            caller,
            agent_obj if spec.shared else None,
            user if getattr(user_factory, "pibench_shared", False) else None,
            judge_obj if judge_factory is None else None,
        )
        episode = run_episode(
            loaded,
            agent_obj,
            user,
            seed=seed,
            max_steps=max_steps,
            max_errors=max_errors,
            timeout=timeout,
            binding=binding,
            max_tool_calls_per_message=max_tool_calls_per_message,
            max_tool_calls=max_tool_calls,
            observer_mode=observer_mode,
            cost_limit=cost_limit,
            caller=caller,
        )
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
            loaded.scenario_id if loaded else seed_key(target),
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
        return _with_usage(failed, caller, agent_obj, user, judge_obj, before)  # the agent's calls were paid for
    row = scenario_row(
        loaded,
        result,
        episode,
        trial=trial,
        agent=spec.name,
        domain_name=domain_name,
        include_transcript=include_transcript,
    )
    return _with_usage(row, caller, agent_obj, user, judge_obj, before)


def _spent_before(caller: ParticipantCaller, agent: Any, user: Any, judge: Any) -> dict[str, UsageReport]:
    """What the reused participants given (the others are None) reported before the episode."""
    out: dict[str, UsageReport] = {}
    for role, participant in (("agent", agent), ("user", user), ("judge", judge)):
        spent = _usage(participant, caller)[0]
        if spent and any(spent.values()):
            out[role] = spent
    return out


def _with_usage(
    row: ResultRow,
    caller: ParticipantCaller,
    agent: Any,
    user: Any,
    judge: Any,
    before: dict[str, UsageReport] | None = None,
) -> ResultRow:
    """The row with what each participant spent in this episode (``usage``, by role)."""
    usage: dict[str, UsageReport] = {}
    for role, participant in (("agent", agent), ("user", user), ("judge", judge)):
        spent, problem = _usage(participant, caller)
        earlier: dict[str, Any] = dict((before or {}).get(role) or {})
        if spent and earlier:
            spent = cast(UsageReport, {k: round(v - earlier.get(k, 0), 10) for k, v in spent.items()})
        if spent:
            usage[role] = spent
        if problem:
            row.setdefault("warnings", []).append(f"{role}.{problem}")
    if usage:
        row["usage"] = usage
    return row


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


def _usage(participant: Any, caller: ParticipantCaller) -> tuple[UsageReport | None, str | None]:
    """What an LLM-backed participant spent (``participant.usage()``), if it reports it, and what was wrong.

    The report is the participant's own code: run through ``caller`` with 5
    seconds to answer, and one that raises, hangs or holds values that are not
    finite numbers must not cost the scored row, so only finite numeric entries
    are kept and the rest is named in the row's warnings.
    """
    if participant is None:
        return None, None
    builtin = is_builtin(participant)  # trusted: read without a thread hop
    try:
        report: tuple[UsageReport | None, str | None] = caller(_read_usage, participant, limit=5.0, direct=builtin)
    except CallTimeout:
        return None, "usage() did not return within 5 seconds"
    except ParticipantRaised as exc:
        return None, f"usage() raised {exc.type_name}: {exc.text}"
    return report


def _read_usage(participant: Any) -> tuple[UsageReport | None, str | None]:
    data, _ = plain_copy(usage_report(participant))  # a plain copy: the report's own methods never run again
    if data is None:
        return None, None
    if not isinstance(data, dict):
        return None, f"usage() returned {type(data).__name__}, not a mapping"
    kept = {k: v for k, v in data.items() if type(v) in (int, float) and math.isfinite(v)}
    dropped = sorted(str(k)[:100] for k in data if k not in kept)
    problem = f"usage() entries that are not finite numbers were left out: {', '.join(dropped)}" if dropped else None
    return cast(UsageReport, kept), problem


def run_suite(
    paths: Iterable[str | Path],
    agents: Sequence[str | AgentSpec],
    *,
    trials: int = 1,
    **options: Any,
) -> list[ResultRow]:
    """Every scenario file under ``paths`` x every agent x ``trials``, as rows.

    ``options`` are passed to :func:`run_one` (``base_seed``, ``judge``, ``timeout``...).

    Raises:
        AgentSpecError: when a spec string in ``agents`` does not resolve (before any episode runs).
    """
    files = [f for p in paths for f in discover_scenarios(p)]
    specs = [resolve_agent(a) if isinstance(a, str) else a for a in agents]
    return [run_one(file, spec, trial=trial, **options) for spec in specs for file in files for trial in range(trials)]
