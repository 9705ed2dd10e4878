"""CI gates: metric thresholds (``--pibench-fail-under``) and regressions against a baseline run."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_pibench.plugin.settings import Gate, Settings
from pytest_pibench.results.metric_types import gateable_metric, metric_value, unknown_metric
from pytest_pibench.results.metrics import compute_metrics
from pytest_pibench.results.reading import read_baseline
from pytest_pibench.results.types import ResultRow, ResultsDocument

__all__ = [
    "ERROR_STATUSES",
    "GateVerdict",
    "baseline_agents",
    "baseline_problem",
    "rows_of_baseline",
    "check_gates",
    "keyed_rows",
    "read_gate_inputs",
    "metric_value",
    "parse_baseline_spec",
    "unknown_metric",
]

@dataclass
class GateVerdict:
    passed: bool = True
    lines: list[str] = field(default_factory=list)
    inconclusive: bool = False
    """A statistical gate could not tell a regression from noise (and nothing failed outright)."""

    def fail(self, line: str) -> None:
        self.passed = False
        self.lines.append(f"FAIL {line}")

    def unsure(self, line: str) -> None:
        self.inconclusive = True
        self.lines.append(f"???? {line}")

    def ok(self, line: str) -> None:
        self.lines.append(f"ok   {line}")

    def info(self, line: str) -> None:
        """What was compared: neither a pass nor a failure."""
        self.lines.append(f"info {line}")


def _gated_names(settings: Settings) -> list[str]:
    return [g.metric for g in settings.fail_under] or ["compliance", "overall"]


ERROR_STATUSES = ("error", "validation_error")
"""Row statuses of error rows: left out of every comparison."""


def parse_baseline_spec(text: str) -> tuple[str, str | None]:
    """``PATH`` or ``PATH::AGENT`` -> (path, agent or None); split on the last ``::`` (``C:`` stays in the path).

    Raises ValueError for an empty path or an empty agent name.
    """
    path, sep, agent = text.rpartition("::")
    if not sep:
        path, agent = text, ""
    path, agent = path.strip(), agent.strip()
    if not path:
        raise ValueError(f"no results file in {text!r} (use PATH or PATH::AGENT)")
    if sep and not agent:
        raise ValueError(f"no agent after '::' in {text!r} (use PATH or PATH::AGENT)")
    return path, agent or None


def baseline_agents(baseline: ResultsDocument) -> list[str]:
    """The agents of a baseline results file: its ``agents`` block, then any agent only its rows name."""
    names = [str(a) for a in baseline.get("agents") or {}]
    for row in rows_of_baseline(baseline):
        if str(row.get("agent")) not in names:
            names.append(str(row.get("agent")))
    return names


def baseline_problem(spec: str, baseline: ResultsDocument, agents: Sequence[str]) -> str | None:
    """Why ``--pibench-baseline=spec`` cannot work with these ``--pibench-agent`` specs (None when it can).

    Checked at start-up: a named baseline agent must be in the file, and it can
    stand in for exactly one current agent; a run of sequential trials is no
    baseline (its rates over rows are skewed).
    """
    path, named = parse_baseline_spec(spec)
    if any(r.get("trial_mode") == "sequential" for r in rows_of_baseline(baseline)):
        return (
            f"{path} is a run of sequential trials: its rates over rows are skewed by when each scenario settled, "
            "so it cannot be a baseline; use a run of fixed trials"
        )
    if named is None:
        return None
    known = baseline_agents(baseline)
    if named not in known:
        return f"no agent {named!r} in baseline {path} (has: {', '.join(known) or 'none'})"
    if len(agents) > 1:
        return (
            f"{spec!r} names one baseline agent but {len(agents)} agents run ({', '.join(agents)}); "
            "name it only with a single --pibench-agent, or drop '::AGENT' to compare each agent with itself"
        )
    return None


def read_gate_inputs(
    settings: Settings, agents: Sequence[str], *, prefix: str = "--pibench-", baseline: bool = True
) -> ResultsDocument | None:
    """Check what the gate options name: every ``fail-under`` metric is known, and the baseline file reads and
    can stand in for ``agents``; the baseline (None without one, or with ``baseline=False``).

    Raises:
        ValueError: naming the option (``prefix`` + its name) and the problem.
    """
    for gate in settings.fail_under:
        problem = unknown_metric(gate.metric)
        if problem:
            raise ValueError(f"{prefix}fail-under: {problem}")
    if not (baseline and settings.baseline):
        return None
    try:
        document = read_baseline(parse_baseline_spec(settings.baseline)[0])  # rows validated
        problem = baseline_problem(settings.baseline, document, agents)
    except (ValueError, OSError) as exc:
        problem = str(exc)
    if problem:
        raise ValueError(f"{prefix}baseline: {problem}")
    return document


def rows_of_baseline(baseline: ResultsDocument) -> list[ResultRow]:
    rows = [r for r in baseline.get("rows") or [] if isinstance(r, Mapping)]
    sole = list(baseline.get("agents") or {})
    default = str(sole[0]) if len(sole) == 1 else None  # an agent-less row of a one-agent file is that agent's
    return [r if r.get("agent") is not None or default is None else _with_agent(r, default) for r in rows]


def _with_agent(row: ResultRow, agent: str) -> ResultRow:
    named = row.copy()
    named["agent"] = agent
    return named


def keyed_rows(rows: Sequence[ResultRow], agent: str) -> dict[tuple[str, int], ResultRow]:
    """``agent``'s rows by (scenario id, trial): how a run and its baseline are paired."""
    return {(str(r.get("scenario_id")), int(r.get("trial") or 0)): r for r in rows if str(r.get("agent")) == agent}


def _rows_word(n: int) -> str:
    return f"{n} row" if n == 1 else f"{n} rows"


def check_gates(
    settings: Settings,
    metrics_by_agent: Mapping[str, Mapping[str, Any]],
    rows: Sequence[ResultRow],
    baseline: ResultsDocument | None,
) -> GateVerdict:
    """Apply every gate to every agent of the run.

    Thresholds (``--pibench-fail-under``) read the whole run's metrics. The
    baseline comparison is like with like: rows are matched by (agent,
    scenario_id, trial), the gated metrics are recomputed on both sides over the
    matched rows only (error rows on either side left out), and a scenario
    regresses when its matched row passed in the baseline and fails now.
    """
    verdict = GateVerdict()
    for agent, metrics in metrics_by_agent.items():
        for gate in settings.fail_under:
            _threshold(verdict, agent, metrics, gate)
    if settings.run.min_pass is not None:
        _min_pass(verdict, settings.run.min_pass, rows)
    if baseline is None:
        return verdict
    _, named = parse_baseline_spec(settings.baseline or "")
    base_rows = rows_of_baseline(baseline)
    known = baseline_agents(baseline)
    agents = list(dict.fromkeys([*metrics_by_agent, *(str(r.get("agent")) for r in rows)]))
    if named is not None and len(agents) > 1:
        verdict.fail(f"baseline agent {named!r} named, but {len(agents)} agents ran ({', '.join(agents)}); "
                     "name a baseline agent only for a run of one agent")
        return verdict
    for agent in agents:
        base_agent = named or agent
        if base_agent not in known:
            verdict.fail(
                f"{agent}: no run of this agent in the baseline (has: {', '.join(known) or 'none'}); "
                "to compare with another agent, name it: --pibench-baseline=PATH::AGENT"
            )
            continue
        _compare(verdict, settings, agent, base_agent, keyed_rows(rows, agent), keyed_rows(base_rows, base_agent))
    return verdict


def _compare(
    verdict: GateVerdict,
    settings: Settings,
    agent: str,
    base_agent: str,
    now: Mapping[tuple[str, int], ResultRow],
    before: Mapping[tuple[str, int], ResultRow],
) -> None:
    who = agent if agent == base_agent else f"{agent} (baseline agent {base_agent})"
    matched = [key for key in now if key in before]
    errors_now = sum(1 for k in matched if now[k].get("status") in ERROR_STATUSES)
    errors_before = sum(1 for k in matched if before[k].get("status") in ERROR_STATUSES)
    keys = [k for k in matched if now[k].get("status") not in ERROR_STATUSES
            and before[k].get("status") not in ERROR_STATUSES]
    verdict.info(
        f"{who}: {_rows_word(len(keys))} compared by (agent, scenario, trial) with the baseline; "
        f"left out: {len(now) - len(matched)} of this run's {len(now)} (not in the baseline), "
        f"{len(before) - len(matched)} of the baseline's {len(before)} (not in this run), "
        f"{_rows_word(len(matched) - len(keys))} with an error ({errors_now} now, {errors_before} in the baseline)"
    )
    if not keys:
        verdict.fail(
            f"{who}: nothing to compare: no (scenario, trial) of this run "
            + ("is in the baseline without an error" if matched else "is in the baseline")
        )
        return
    if settings.gate_mode == "statistical":
        _compare_statistically(verdict, settings, who, [before[k] for k in keys], [now[k] for k in keys])
        return
    metrics_now = compute_metrics(now[k] for k in keys)
    metrics_before = compute_metrics(before[k] for k in keys)
    for name in _gated_names(settings):
        value, reference = metric_value(metrics_now, name), metric_value(metrics_before, name)
        if value is None or reference is None:
            continue
        line = f"{who}: {name} {value:.4f} vs baseline {reference:.4f} (tolerance {settings.tolerance:g})"
        (verdict.fail if reference - value > settings.tolerance + 1e-12 else verdict.ok)(line)
    for key in keys:
        if before[key].get("all_passed") and not now[key].get("all_passed"):
            verdict.fail(f"{who}: {key[0]} trial {key[1]} passed in the baseline and fails now")


def _threshold(verdict: GateVerdict, agent: str, metrics: Mapping[str, Any], gate: Gate) -> None:
    value = metric_value(metrics, gate.metric)
    if value is None and not metrics.get("completed"):  # every row an error row: no number, and no pass
        verdict.fail(
            f"{agent}: {gate.metric} has no value: no row was scored ({metrics.get('errors', 0)} error rows), "
            f"and a run with no scored row cannot pass a gate (needed >= {gate.value:g})"
        )
    elif value is None:
        verdict.fail(f"{agent}: {gate.metric} is not available in this run (needed >= {gate.value:g})")
    elif value + 1e-12 < gate.value:
        verdict.fail(f"{agent}: {gate.metric} = {value:.4f} < {gate.value:g}")
    else:
        verdict.ok(f"{agent}: {gate.metric} = {value:.4f} >= {gate.value:g}")


def _compare_statistically(
    verdict: GateVerdict, settings: Settings, who: str, before: Sequence[ResultRow], now: Sequence[ResultRow]
) -> None:
    """A metric regresses only on paired evidence; it passes when its interval rules out a drop past the tolerance.

    In between it is inconclusive, with how much more data would settle it: the
    paired standard error shrinks as one over the square root of the sample, so
    ``(se / needed)^2`` times the present sample would put the interval's lower
    end at the tolerance if the difference stayed as observed.
    """
    from pytest_pibench.results.compare import compare_rows
    from pytest_pibench.results.metrics import partial_credit

    alpha = 1 - settings.confidence
    metrics = compare_rows(before, now, partial_credit, alpha=alpha)["metrics"]
    for name in _gated_names(settings):
        metric = gateable_metric(name)
        key = None if metric is None else ("compliance" if metric.name == "pass^1" else metric.name)
        entry = metrics.get(key) if key else None
        if entry is None:
            verdict.info(
                f"{who}: {name} cannot be gated statistically here (compliance, overall, a group, a column, or "
                "pass^k with at least k trials of every scenario on both sides)"
            )
            continue
        diff, interval = entry["difference"], entry["ci95"]
        p = entry.get("p_adjusted", entry["p"])
        line = f"{who}: {name} {diff:+.4f} vs baseline, 95% interval {_span(interval)}, p={p:.4f} ({entry['test']})"
        if entry["verdict"] == "worse":
            verdict.fail(f"{line}: regressed at confidence {settings.confidence:g}")
        elif interval is not None and interval[0] >= -settings.tolerance - 1e-12:
            verdict.ok(f"{line}: no drop past the tolerance {settings.tolerance:g}")
        else:
            verdict.unsure(f"{line}: inconclusive; {_to_settle(entry, settings.tolerance)}")


def _span(interval: Sequence[float] | None) -> str:
    return "n/a" if interval is None else f"[{interval[0]:+.4f}, {interval[1]:+.4f}]"


def _to_settle(entry: Mapping[str, Any], tolerance: float) -> str:
    interval = entry.get("ci95")
    room = entry["difference"] + tolerance
    if interval is None or room <= 0:
        return "the observed drop is past the tolerance: more data would more likely confirm a regression"
    se = (interval[1] - interval[0]) / (2 * 1.959963984540054)
    factor = (1.959963984540054 * se / room) ** 2
    return f"about {factor:.1f}x the present sample (trials or scenarios) would settle it if the difference holds"


def _min_pass(verdict: GateVerdict, rule: tuple[int, int], rows: Sequence[ResultRow]) -> None:
    """``--pibench-min-pass K/N``: each (agent, scenario) passes at least K of its N trials.

    A scenario is judged as soon as its outcome is settled (K passed, or more
    than N - K failed), so sequential trials that stopped early are judged
    exactly; one that ran out of trials unsettled (error rows are neither a
    pass nor a failure) fails for want of trials.
    """
    from pytest_pibench.results.sequential import sequential_summary

    needed, trials = rule
    summary = sequential_summary(rows, (), needed, trials)  # the same verdicts sequential trials stop on
    failed = False
    for agent, scenarios in summary["scenarios"].items():
        for sid, entry in scenarios.items():
            passes, ran = entry["passed"], entry["passed"] + entry["failed"]  # error rows are neither
            if entry["verdict"] == "unsettled":
                failed = True
                verdict.fail(
                    f"{agent}: {sid} ran {ran} of the {trials} trials --pibench-min-pass {needed}/{trials} needs"
                )
            elif entry["verdict"] == "not met":
                failed = True
                reach = "" if ran >= trials else f" run (at most {passes + trials - ran} of {trials})"
                verdict.fail(f"{agent}: {sid} passed {passes} of {ran} trials{reach}, fewer than {needed}")
    if not failed:
        runs = sum(len(scenarios) for scenarios in summary["scenarios"].values())
        verdict.ok(f"every scenario passed at least {needed} of {trials} trials ({runs} scenario runs)")
