"""Plugin settings: each ``--pibench-*`` option, also settable as ``pibench_*`` in the ini file.

Kept free of heavy imports: it is read on every pytest start-up.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from pytest_pibench import inputs
from pytest_pibench.episode.limits import EpisodeLimits
from pytest_pibench.inputs import InputError, finite_float, finite_json
from pytest_pibench.plugin.host import worker_count
from pytest_pibench.plugin.option_table import OPTIONS, OptionSpec
from pytest_pibench.run.config import RunConfig
from pytest_pibench.vocab import (
    DEFAULT_RESULTS_PATH,
)

__all__ = [
    "ERROR_BUDGET_EXIT_CODE",
    "GATE_EXIT_CODE",
    "INCONCLUSIVE_EXIT_CODE",
    "OPTIONS",
    "Gate",
    "OptionSpec",
    "Settings",
    "add_options",
    "parse_gates",
    "parse_min_pass",
    "read_settings",
]

GATE_EXIT_CODE = 8
"""Exit code of a run whose gate (``--pibench-fail-under``, ``--pibench-baseline``) failed."""
INCONCLUSIVE_EXIT_CODE = 10
"""Exit code of a statistical gate that could not tell a regression from noise (more trials would settle it)."""
ERROR_BUDGET_EXIT_CODE = 9
"""Exit code of a run with more error rows than ``--pibench-max-error-rate`` allows (invalid for the leaderboard)."""

_RUN, _LIMITS = RunConfig(), EpisodeLimits()
_DEFAULTS: dict[str, Any] = {  # the run's defaults live in RunConfig and EpisodeLimits; read from there
    "trials": _RUN.trials,
    "concurrency": _RUN.concurrency,
    "seed": _RUN.seed,
    "max_steps": _LIMITS.max_steps,
    "max_tool_calls_per_message": _LIMITS.max_tool_calls_per_message,
    "max_tool_calls": _LIMITS.max_tool_calls,
    "timeout": _LIMITS.timeout,
    "results": DEFAULT_RESULTS_PATH,
    "tolerance": 0.0,
    "judge_votes": _RUN.judge_votes,
    "max_error_rate": _RUN.max_error_rate,
    "user": _RUN.user,
}


@dataclass(frozen=True)
class Gate:
    """``--pibench-fail-under METRIC=VALUE``: the metric must be at least ``value``."""

    metric: str
    value: float

    def __str__(self) -> str:
        return f"{self.metric}>={self.value:g}"


@dataclass(frozen=True)
class Settings:
    """The plugin's settings: the run's :class:`RunConfig` plus what only a pytest run has (files, gates).

    Example::

        settings.run.limits.max_steps   # an episode limit
        settings.run.agents             # who runs
        settings.results                # where the results file goes
    """

    run: RunConfig = field(default_factory=RunConfig)
    """Everything that decides the rows (agents, user, judge, trials, seed, limits...), shared with every driver."""
    results: str | None = DEFAULT_RESULTS_PATH
    leaderboard: str | None = None
    html: str | None = None
    """``--pibench-html PATH``: the HTML report of the run (written at the end, from the results)."""
    fail_under: tuple[Gate, ...] = ()
    baseline: str | None = None
    tolerance: float = 0.0
    gate_mode: str = "exact"
    """``exact`` or ``statistical`` (``--pibench-gate-mode``)."""
    confidence: float = 0.95
    resume: str | None = None
    scenario_dirs: tuple[Path, ...] = field(default_factory=tuple)
    shard: tuple[int, int] | None = None
    """``--pibench-shard I/N``: this run is shard I of N (1-based); None for a whole run."""

    @property
    def has_gate(self) -> bool:
        return bool(self.fail_under or self.baseline or self.run.min_pass)

    def to_dict(self) -> dict[str, Any]:
        """The settings that change results, for the results file (the run config's)."""
        return self.run.to_dict()


"""Every ``--pibench-*`` option, declared once: the plugin's options and ini keys and ``pi run``'s flags."""

_OPTION_BY_NAME = {option.name: option for option in OPTIONS}


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("pibench", "pi-bench policy-compliance benchmark")
    for option in OPTIONS:
        action = "append" if option.repeatable else "store"
        group.addoption(option.flag, dest=option.dest, action=action, metavar=option.metavar, help=option.help)
        if option.repeatable:
            parser.addini(option.dest, help=option.help, type="linelist", default=[])
        else:
            parser.addini(option.dest, help=option.help, type="string", default=None)
    parser.addini(
        "pibench_scenarios",
        type="paths",
        default=[],
        help="folders whose scenario files are collected (also the default when --pibench-agent has no paths)",
    )


def _raw(config: pytest.Config, name: str) -> Any:
    dest = "pibench_" + name.replace("-", "_")
    value = config.getoption(dest)
    if value is None or value == []:
        value = config.getini(dest)
    return None if value in ([], "") and name not in ("results",) else value


def _number(config: pytest.Config, name: str) -> Any:
    """A numeric option checked by its :class:`OptionSpec` (finite, in range; an empty value is no default)."""
    dest = "pibench_" + name.replace("-", "_")
    value = config.getoption(dest)
    if value is None:
        value = config.getini(dest)
        if value is None or value == "":
            return _DEFAULTS[name.replace("-", "_")]
    try:
        return _OPTION_BY_NAME[name].parse(value)
    except InputError as exc:
        raise pytest.UsageError(f"--pibench-{name}: {exc}") from None


_GATE = re.compile(r"^\s*([^=]+?)\s*=\s*([-+0-9.eE]+)\s*$")


def _domain_paths(config: pytest.Config) -> tuple[str, ...]:
    """``--pibench-domains`` folders (ini values relative to the ini file); a missing one is a usage error."""
    given = config.getoption("pibench_domains") or []
    base = Path.cwd()
    if not given:
        given = config.getini("pibench_domains") or []
        base = Path(config.inipath).parent if config.inipath else Path(config.rootpath)
    paths = []
    for value in given:
        path = Path(value) if Path(value).is_absolute() else base / value
        if not path.is_dir():
            raise pytest.UsageError(f"--pibench-domains: no such folder: {value}")
        paths.append(str(path))
    return tuple(paths)


def _cost_limits(values: list[str]) -> dict[str, float]:
    """``--pibench-cost-limit``: ``USD`` or ``run=USD`` (the run's budget), ``episode=USD`` (each episode's)."""
    limits: dict[str, float] = {}
    for text in values:
        scope, sep, amount = str(text).rpartition("=")
        scope = scope.strip() if sep else "run"
        if scope not in ("run", "episode"):
            raise pytest.UsageError(f"--pibench-cost-limit: USD, run=USD or episode=USD, got {text!r}")
        try:  # infinity is no budget, and NaN would never be reached
            value = finite_float(amount.strip(), 0, low_open=True)
        except InputError:
            raise pytest.UsageError(f"--pibench-cost-limit: a positive amount of US dollars, got {text!r}") from None
        if scope in limits:
            raise pytest.UsageError(f"--pibench-cost-limit: the {scope} budget is given twice")
        limits[scope] = value
    return limits


def _choice(config: pytest.Config, name: str, choices: tuple[str, ...]) -> str:
    value = str(_raw(config, name) or choices[0])
    if value not in choices:
        raise pytest.UsageError(f"--pibench-{name}: choose {' or '.join(choices)}, got {value!r}")
    return value


def _confidence(config: pytest.Config) -> float:
    raw = _raw(config, "confidence")
    try:
        return 0.95 if raw is None else finite_float(raw, 0.5, 1, high_open=True)
    except InputError:
        raise pytest.UsageError(f"--pibench-confidence: a number between 0.5 and 1, got {raw!r}") from None


def parse_min_pass(raw: Any) -> tuple[int, int] | None:
    """``--pibench-min-pass K/N`` (None when not given); a usage error otherwise."""
    if raw in (None, ""):
        return None
    match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", str(raw))
    if not match or not 1 <= int(match.group(1)) <= int(match.group(2)) <= inputs.MAX_TRIALS:
        limit = inputs.MAX_TRIALS
        raise pytest.UsageError(f"--pibench-min-pass: K/N with 1 <= K <= N <= {limit} (e.g. 3/4), got {raw!r}")
    return int(match.group(1)), int(match.group(2))


def _trials(config: pytest.Config, mode: str, min_pass: tuple[int, int] | None) -> int:
    """``--pibench-trials``; in sequential mode N of ``--pibench-min-pass K/N`` (the two must agree)."""
    trials: int = _number(config, "trials")
    if mode != "sequential":
        return trials
    if min_pass is None:
        raise pytest.UsageError(
            "--pibench-trial-mode sequential: needs --pibench-min-pass K/N (the verdict that settles a scenario)"
        )
    if _raw(config, "trials") is not None and trials != min_pass[1]:
        raise pytest.UsageError(
            f"--pibench-trial-mode sequential: --pibench-trials {trials} differs from N of --pibench-min-pass "
            f"{min_pass[0]}/{min_pass[1]}; give one of them, or the same N"
        )
    return min_pass[1]


def _observer_mode(config: pytest.Config) -> str:
    mode = str(_raw(config, "observer-mode") or "audit_only")
    if mode not in ("audit_only", "hard_gate"):
        raise pytest.UsageError(f"--pibench-observer-mode: choose audit_only or hard_gate, got {mode!r}")
    return mode


def parse_gates(values: list[str]) -> tuple[Gate, ...]:
    """``--pibench-fail-under METRIC=VALUE`` (repeated); a usage error for a malformed one."""
    gates = []
    for text in values:
        match = _GATE.match(text)
        if not match:
            raise pytest.UsageError(f"--pibench-fail-under: expected METRIC=VALUE, got {text!r}")
        try:
            value = finite_float(match.group(2), 0, 1)
        except InputError:
            raise pytest.UsageError(f"--pibench-fail-under {text!r}: values are fractions between 0 and 1") from None
        gates.append(Gate(match.group(1), value))
    return tuple(gates)


def _key_values(name: str, values: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for text in values:
        key, sep, raw = text.partition("=")
        if not sep or not key.strip():
            raise pytest.UsageError(f"--pibench-{name}: expected KEY=VALUE, got {text!r}")
        try:  # NaN and infinity are no JSON (RFC 8259): refused, not passed on to a provider or the results
            out[key.strip()] = finite_json(raw)
        except InputError:
            raise pytest.UsageError(f"--pibench-{name}: {key.strip()} must be finite, got {raw!r}") from None
        except (ValueError, RecursionError):
            out[key.strip()] = raw
    return out


def _rate_limits(config: pytest.Config, values: list[str]) -> dict[str, dict[str, int | None]]:
    """This process's share of each ``--pibench-rate-limit`` (the run's limit divided by the xdist workers)."""
    from pytest_pibench.participants.llm.limits import parse_rate_limit, per_worker

    workers = worker_count(config)
    out: dict[str, dict[str, int | None]] = {}
    for text in values:
        try:
            model, limit = parse_rate_limit(text)
        except ValueError as exc:
            raise pytest.UsageError(f"--pibench-rate-limit: {exc}") from None
        share = per_worker(limit, workers)
        out[model] = {"concurrent": share.concurrent, "rpm": share.rpm}
    return out


def _shard(value: Any) -> tuple[int, int] | None:
    if value is None:
        return None
    index, sep, count = str(value).partition("/")
    try:
        shard = (int(index), int(count))
    except ValueError:
        shard = (0, 0)
    if not sep or not 1 <= shard[0] <= shard[1]:
        raise pytest.UsageError(f"--pibench-shard: expected I/N with 1 <= I <= N (e.g. 2/4), got {value!r}")
    return shard


def read_settings(config: pytest.Config) -> Settings:
    """Read and check every option; a bad value is a usage error (exit code 4) with a message."""
    timeout = _number(config, "timeout")
    results = _raw(config, "results")
    agents = tuple(dict.fromkeys(a.strip() for a in (_raw(config, "agent") or []) if a.strip()))
    budgets = _cost_limits(list(_raw(config, "cost-limit") or []))
    min_pass = parse_min_pass(_raw(config, "min-pass"))
    trial_mode = _choice(config, "trial-mode", ("fixed", "sequential"))
    limits = EpisodeLimits(
        max_steps=_number(config, "max-steps"),
        max_tool_calls_per_message=_number(config, "max-tool-calls-per-message"),
        max_tool_calls=_number(config, "max-tool-calls"),
        observer_mode=_observer_mode(config),
        timeout=timeout or None,
        cost_limit=budgets.get("episode"),
    )
    run = RunConfig(
        agents=agents,
        user=(_raw(config, "user") or "scripted").strip(),
        trials=_trials(config, trial_mode, min_pass),
        concurrency=_number(config, "concurrency"),
        seed=_number(config, "seed"),
        limits=limits,
        judge_votes=_number(config, "judge-votes"),
        cost_limit=budgets.get("run"),
        min_pass=min_pass,
        trial_mode=trial_mode,
        max_error_rate=_number(config, "max-error-rate"),
        domain_paths=_domain_paths(config),
        agent_args=_key_values("agent-arg", list(_raw(config, "agent-arg") or [])),
        user_args=_key_values("user-arg", list(_raw(config, "user-arg") or [])),
        judge=_raw(config, "judge"),
        judge_args=_key_values("judge-arg", list(_raw(config, "judge-arg") or [])),
        cache=_raw(config, "cache"),
        rate_limits=_rate_limits(config, list(_raw(config, "rate-limit") or [])),
    )
    return Settings(
        run=run,
        results=_DEFAULTS["results"] if results is None else (results or None),
        leaderboard=_raw(config, "leaderboard"),
        html=_raw(config, "html"),
        fail_under=parse_gates(list(_raw(config, "fail-under") or [])),
        baseline=_raw(config, "baseline"),
        tolerance=_number(config, "tolerance"),
        gate_mode=_choice(config, "gate-mode", ("exact", "statistical")),
        confidence=_confidence(config),
        resume=_raw(config, "resume"),
        scenario_dirs=tuple(Path(p) for p in config.getini("pibench_scenarios")),
        shard=_shard(_raw(config, "shard")),
    )
