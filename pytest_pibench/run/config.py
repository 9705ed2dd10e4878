"""What a benchmark run is asked to do, built once by whichever front end started it.

The plugin builds a :class:`RunConfig` from its ``--pibench-*`` options (``pi run``
passes its flags through them), the green server from an assessment request,
the Python API from keyword arguments. The executor takes nothing else, so the
same request gives the same rows whichever way it came in.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from pytest_pibench.episode.limits import EpisodeLimits
from pytest_pibench.inputs import InputError
from pytest_pibench.vocab import DEFAULT_MAX_ERROR_RATE, DEFAULT_SEED

__all__ = ["TRIAL_MODES", "EpisodeLimits", "RunConfig", "public_args"]

TRIAL_MODES = ("fixed", "sequential")


@dataclass(frozen=True)
class RunConfig:
    """Who runs, how often, under which limits: everything that decides a run's rows.

    Example::

        config = RunConfig(agents=("oracle",), trials=3, limits=EpisodeLimits(max_steps=60))
        rows = Executor(config).run(Executor(config).plan(["scenarios/finra"])).rows

    Raises:
        InputError: on construction, for a value out of range (no trials, a
            concurrency under 1, an unknown trial mode, a K-of-N pass rule that
            does not fit the trials).
    """

    agents: tuple[str, ...] = ()
    """Agent spec strings (``oracle``, ``mymod:Agent``, ``litellm:<model>``, ``a2a:<url>``)."""
    user: str = "scripted"
    """The user simulator's spec."""
    judge: str | None = None
    """The Tier-2 judge's spec; None: Tier-2 checks are reported unjudged."""
    agent_args: dict[str, Any] = field(default_factory=dict)
    user_args: dict[str, Any] = field(default_factory=dict)
    judge_args: dict[str, Any] = field(default_factory=dict)
    judge_votes: int = 1
    """Each Tier-2 question asked this many times; the majority counts."""
    trials: int = 1
    seed: int = DEFAULT_SEED
    limits: EpisodeLimits = field(default_factory=EpisodeLimits)
    concurrency: int = 1
    """Episodes in flight at once in one process."""
    cost_limit: float | None = None
    """US dollars the whole run may spend; once reached no further episode starts (the run is partial)."""
    trial_mode: str = "fixed"
    """``fixed``: every trial runs; ``sequential``: a scenario's trials stop once its K-of-N verdict is settled."""
    min_pass: tuple[int, int] | None = None
    """``(K, N)``: every scenario must pass at least K of its N trials."""
    max_error_rate: float = DEFAULT_MAX_ERROR_RATE
    """The error budget: a run with a larger share of error rows is not valid for the leaderboard."""
    domain_paths: tuple[str, ...] = ()
    """Folders of domain packs searched before the installed ones."""
    cache: str | None = None
    """Folder of the LLM response cache (not part of any result)."""
    rate_limits: dict[str, dict[str, int | None]] = field(default_factory=dict)
    """This process's share of each model's rate limit (not part of any result)."""

    def __post_init__(self) -> None:
        for name, low in (("trials", 1), ("concurrency", 1), ("judge_votes", 1), ("seed", 0)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise InputError(f"{name} must be a whole number of at least {low}, got {value!r}")
        if self.trial_mode not in TRIAL_MODES:
            raise InputError(f"trial_mode must be one of {list(TRIAL_MODES)}, got {self.trial_mode!r}")
        if self.trial_mode == "sequential" and self.min_pass is None:
            raise InputError("sequential trials need a K-of-N pass rule (min_pass)")

    def with_(self, **changes: Any) -> RunConfig:
        """A copy with ``changes`` applied (checked like a new value)."""
        return replace(self, **changes)

    def params(self, role: str) -> dict[str, Any]:
        """The spec parameters of a role (``agent``, ``user``, ``judge``), with the cache folder and rate limits."""
        extra = dict({"agent": self.agent_args, "user": self.user_args, "judge": self.judge_args}[role])
        if self.cache:
            extra["cache_dir"] = self.cache
        if self.rate_limits:
            extra["rate_limits"] = self.rate_limits
        return extra

    def to_dict(self) -> dict[str, Any]:
        """The settings that change results, as builtins: the results file's ``settings`` and each run key's.

        The keys are stable: resuming an earlier run compares them, so a key
        added later appears only when set.
        """
        limits = self.limits
        return {
            "agents": list(self.agents),
            "user": self.user,
            "trials": self.trials,
            "seed": self.seed,
            "max_steps": limits.max_steps,
            "max_tool_calls_per_message": limits.max_tool_calls_per_message,
            "max_tool_calls": limits.max_tool_calls,
            "observer_mode": limits.observer_mode,
            "judge_votes": self.judge_votes,
            "domain_paths": list(self.domain_paths),  # another pack, another result (resume must not reuse it)
            "timeout": limits.timeout,
            "judge": self.judge,
            "agent_args": public_args(self.agent_args),
            "user_args": public_args(self.user_args),
            # What selects the trials, not one episode's result (left out of resume fingerprints).
            "trial_mode": self.trial_mode,
            "min_pass": None if self.min_pass is None else f"{self.min_pass[0]}/{self.min_pass[1]}",
            **({"episode_cost_limit": limits.cost_limit} if limits.cost_limit is not None else {}),
            **({"max_errors": limits.max_errors} if limits.max_errors != EpisodeLimits.max_errors else {}),
        }


def public_args(args: dict[str, Any]) -> dict[str, Any]:
    """Arguments without secrets (api keys never reach a results file)."""
    return {k: ("***" if "key" in k.lower() or "token" in k.lower() else v) for k, v in args.items()}
