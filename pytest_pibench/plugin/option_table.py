"""The ``--pibench-*`` options, declared once: flag, ini key, ``pi run`` flag, metavar, help and type."""

from __future__ import annotations

from dataclasses import dataclass

from pytest_pibench.inputs import (
    MAX_CONCURRENCY,
    MAX_LIMIT,
    MAX_SEED,
    MAX_TIMEOUT,
    MAX_TRIALS,
    InputError,
    finite_float,
    whole_number,
)
from pytest_pibench.vocab import (
    DEFAULT_MAX_STEPS,
    DEFAULT_MAX_TOOL_CALLS,
    DEFAULT_MAX_TOOL_CALLS_PER_MESSAGE,
    DEFAULT_RESULTS_PATH,
    DEFAULT_SEED,
    DEFAULT_TIMEOUT,
)

__all__ = ["OPTIONS", "OptionSpec"]


@dataclass(frozen=True)
class OptionSpec:
    """One ``--pibench-NAME`` option, also the ini key ``pibench_NAME`` and ``pi run``'s ``--NAME``.

    Declared once in :data:`OPTIONS`, so the plugin and the ``pi`` command never
    disagree on names, help texts or value types.
    """

    name: str
    metavar: str
    help: str
    repeatable: bool = False
    value_type: type[str] | type[int] | type[float] = str
    bounds: tuple[float, float] | None = None
    """The range of a numeric option's value (both ends included)."""
    expected: str | None = None
    """What a numeric option's error says is expected, when the range alone says it badly."""

    @property
    def flag(self) -> str:
        """The pytest flag: ``--pibench-NAME``."""
        return f"--pibench-{self.name}"

    @property
    def dest(self) -> str:
        """The attribute and ini key: ``pibench_NAME`` with underscores."""
        return "pibench_" + self.name.replace("-", "_")

    def parse(self, raw: object) -> int | float:
        """A numeric option's value from its text (or a number), checked against :attr:`bounds`.

        Raises:
            InputError: for an empty value, a value of the wrong kind or one out of range.
        """
        low, high = self.bounds or (None, None)
        if isinstance(raw, str) and not raw.strip():
            kind = "a whole number" if self.value_type is int else "a number"
            raise InputError(f"an empty value; expected {self.expected or kind} (leave the option out for its default)")
        if self.value_type is int:
            return whole_number(raw, None if low is None else int(low), None if high is None else int(high),
                                expected=self.expected)  # fmt: skip
        return finite_float(raw, low, high, expected=self.expected)


OPTIONS: tuple[OptionSpec, ...] = (
    OptionSpec(
        "agent",
        "SPEC",
        repeatable=True,
        help="agent to benchmark (repeatable): oracle, baseline:allow|deny|escalate|silent, "
        "baseline:routine-<decision>, litellm:<model>, a2a:<url>, module:Class, "
        "module:factory, path.py:Class",
    ),
    OptionSpec(
        "agent-arg",
        "KEY=VALUE",
        repeatable=True,
        help="extra parameter of the agent's scheme (repeatable; VALUE parsed as JSON when it can be): "
        "litellm parameters of a litellm:<model> agent, timeout (seconds per request) of an a2a:<url> agent",
    ),
    OptionSpec("user", "SPEC", help="simulated user: scripted (default), litellm:<model>, a2a:<url> or module:Class"),
    OptionSpec(
        "user-arg",
        "KEY=VALUE",
        repeatable=True,
        help="extra parameter of the user's scheme: litellm parameters, or timeout of an a2a:<url> user",
    ),
    OptionSpec("judge", "SPEC", help="Tier-2 judge: litellm:<model> or module:Class (default: none, Tier 2 skipped)"),
    OptionSpec("judge-arg", "KEY=VALUE", repeatable=True, help="extra litellm parameter of the judge"),
    OptionSpec("cache", "DIR", help="LLM response cache folder: a rerun with the same inputs makes no calls"),
    OptionSpec(
        "rate-limit",
        "MODEL=N/RPM",
        repeatable=True,
        help="provider limit (repeatable): at most N requests to MODEL in flight and RPM started per minute, "
        "for the whole run (shared by agent, user and judge; split across -n workers), e.g. gpt-4o-mini=8/500",
    ),
    OptionSpec(
        "trials",
        "N",
        value_type=int,
        bounds=(1, MAX_TRIALS),
        help=f"episodes per scenario and agent (default 1, at most {MAX_TRIALS})",
    ),
    OptionSpec(
        "trial-mode",
        "MODE",
        help="fixed (default: every trial runs) or sequential: with --pibench-min-pass K/N, a scenario's trials "
        "stop once its verdict is settled (K passed, or more than N-K failed); the results state the rule",
    ),
    OptionSpec(
        "concurrency",
        "N",
        value_type=int,
        bounds=(1, MAX_CONCURRENCY),
        help=f"episodes in flight in each process (default 1, at most {MAX_CONCURRENCY}); composes with -n: "
        "workers x N in all; results do not depend on it",
    ),
    OptionSpec(
        "seed",
        "N",
        value_type=int,
        bounds=(0, MAX_SEED),
        help=f"base seed; per-trial seeds are derived by sha256 (default {DEFAULT_SEED})",
    ),
    OptionSpec(
        "max-steps",
        "N",
        value_type=int,
        bounds=(1, MAX_LIMIT),
        help=f"step limit per episode (default {DEFAULT_MAX_STEPS})",
    ),
    OptionSpec(
        "max-tool-calls-per-message",
        "N",
        value_type=int,
        bounds=(1, MAX_LIMIT),
        help="most tool calls run from one agent message; more end the episode as tool_call_limit "
        f"(default {DEFAULT_MAX_TOOL_CALLS_PER_MESSAGE})",
    ),
    OptionSpec(
        "max-tool-calls",
        "N",
        value_type=int,
        bounds=(1, MAX_LIMIT),
        help="most tool calls run per episode; more end the episode as tool_call_limit "
        f"(default {DEFAULT_MAX_TOOL_CALLS})",
    ),
    OptionSpec(
        "domains",
        "PATH",
        repeatable=True,
        help="a folder of domain packs (or one holding domains/), searched before the scenarios' own, installed "
        "and bundled packs: how an upstream-format scenario set finds its tools.json packs (repeatable)",
    ),
    OptionSpec(
        "cost-limit",
        "[run=|episode=]USD",
        repeatable=True,
        help="LLM budget (repeatable): USD or run=USD stops the run once its cost (agent, user, judge) reaches USD "
        "(episodes in progress finish, no new one starts, the results say why); episode=USD ends an episode "
        "as cost_limit once its agent and user have spent USD (scored like max_steps)",
    ),
    OptionSpec(
        "judge-votes",
        "N",
        value_type=int,
        bounds=(1, MAX_LIMIT),
        help="ask each Tier-2 judge question N times: the majority counts (an even split fails the check), and "
        "the summary reports the judge's agreement (Krippendorff's alpha) and the share of split votes",
    ),
    OptionSpec(
        "observer-mode",
        "MODE",
        help="audit_only (default: every call runs) or hard_gate (calls to the tools a scenario forbids are "
        "blocked before they run and recorded as blocked attempts); a scenario's meta.observer_mode wins",
    ),
    OptionSpec(
        "timeout",
        "SECONDS",
        value_type=float,
        bounds=(0, MAX_TIMEOUT),
        expected=f"a number of seconds from 0 (none) to {MAX_TIMEOUT:g}",
        help=f"wall-clock limit per episode, 0 for none, at most {MAX_TIMEOUT:g} (default {DEFAULT_TIMEOUT:g})",
    ),
    OptionSpec("results", "PATH", help=f"results file, '' for none (default {DEFAULT_RESULTS_PATH})"),
    OptionSpec("leaderboard", "PATH", help="write the AgentBeats leaderboard artifact here"),
    OptionSpec("html", "PATH", help="write the HTML report here (scores, failure shapes, every episode's trace)"),
    OptionSpec(
        "fail-under",
        "METRIC=VALUE",
        repeatable=True,
        help="gate (repeatable): compliance, overall, tier1_overall, semantic, pass^K, a column or group name",
    ),
    OptionSpec(
        "baseline",
        "PATH[::AGENT]",
        help="results file of a baseline run: fail on regressions over the (agent, scenario, trial) rows both runs "
        "have; PATH::AGENT compares the one agent of this run with AGENT of the baseline",
    ),
    OptionSpec(
        "tolerance",
        "X",
        value_type=float,
        bounds=(0, 1),
        help="allowed drop of a gated metric against the baseline (default 0)",
    ),
    OptionSpec(
        "gate-mode",
        "MODE",
        help="exact (default: any drop beyond --pibench-tolerance fails) or statistical: a metric regresses only "
        "when the paired evidence says so at --pibench-confidence; pass / regressed (exit 8) / inconclusive (exit 10)",
    ),
    OptionSpec(
        "confidence",
        "X",
        value_type=float,
        help="confidence of the statistical gate (default 0.95)",
    ),
    OptionSpec(
        "min-pass",
        "K/N",
        help="every scenario must pass at least K of its N trials (e.g. 3/4; needs --pibench-trials N)",
    ),
    OptionSpec(
        "max-error-rate",
        "X",
        value_type=float,
        bounds=(0, 1),
        expected="a fraction between 0 and 1",
        help="largest share of error rows (failures outside the agent) per agent before the run is invalid and "
        "exits 9 (default 0: any error row)",
    ),
    OptionSpec("resume", "PATH", help="results file or journal of an earlier run: reuse its finished rows"),
    OptionSpec(
        "shard",
        "I/N",
        help="run shard I of N (1-based) of the scenario items, e.g. on N machines; merge the results files "
        "with 'pi report A.json B.json ...'",
    ),
)
