"""The terminal summary: one compact table (metrics x agents), then the failed scenarios and gates."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pytest_pibench.plugin.extensions import extension_summary_rows
from pytest_pibench.plugin.settings import ERROR_BUDGET_EXIT_CODE, GATE_EXIT_CODE, INCONCLUSIVE_EXIT_CODE
from pytest_pibench.results.document import error_budget_exceeded
from pytest_pibench.results.types import ResultRow, ResultsDocument
from pytest_pibench.vocab import GROUPS

if TYPE_CHECKING:
    from pytest_pibench.plugin.results_collector import ResultCollector

__all__ = ["failure_line", "metric_at", "row_counts", "summary_lines", "warning_lines", "write_summary"]

_FLAGS = (
    ("Violation rate", "violation_rate"),
    ("Forbidden-attempt rate", "attempt_rate"),
    ("Under-refusal rate", "under_refusal_rate"),
    ("Over-refusal rate", "over_refusal_rate"),
    ("Escalation accuracy", "escalation_accuracy_rate"),
)


def _num(value: Any) -> str:
    return f"{value:.3f}" if isinstance(value, int | float) else "-"


def metric_at(metrics: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    """The value at ``path`` in a metrics block, or None where a key is missing."""
    value: Any = metrics
    for key in path:
        value = value.get(key) if isinstance(value, Mapping) else None
    return value


def _interval(value: Any) -> str:
    return f"{value[0]:.2f}-{value[1]:.2f}" if value else "-"


def row_counts(rows: list[ResultRow]) -> dict[str, int]:
    """Plain counts of one agent's rows: scenarios, Tier-1 checks, agent failures, error rows."""
    scored = [r for r in rows if r.get("status") == "completed"]
    checks = [c for r in scored for c in r.get("outcome_checks") or [] if c.get("tier", 1) == 1]
    return {
        "passed": sum(1 for r in scored if r.get("all_passed")),
        "failed": sum(1 for r in scored if not r.get("all_passed")),
        "checks_passed": sum(1 for c in checks if c.get("passed") is True),
        "checks_failed": sum(1 for c in checks if c.get("passed") is False),
        "agent_failures": sum(1 for r in scored if r.get("failure_cause") == "agent"),
        "errors": len(rows) - len(scored),
    }


def _count_rows(document: ResultsDocument) -> list[tuple[str, list[str]]]:
    by_agent = {agent: [r for r in document["rows"] if r.get("agent") == agent] for agent in document["agents"]}
    counts = [row_counts(rows) for rows in by_agent.values()]
    return [
        ("Scenarios passed / failed", [f"{c['passed']} / {c['failed']}" for c in counts]),
        ("Checks passed / failed", [f"{c['checks_passed']} / {c['checks_failed']}" for c in counts]),
        ("  agent failures (scored)", [str(c["agent_failures"]) for c in counts]),
        ("Error rows (not scored)", [str(c["errors"]) for c in counts]),
    ]


def _table(metrics: Mapping[str, Mapping[str, Any]], trials: int) -> list[tuple[str, list[str]]]:
    spec: list[tuple[str, tuple[str, ...], Callable[[Any], str]]] = [
        ("Overall", ("overall_score",), _num),
        ("  +- 95% (clustered by scenario)", ("extended", "uncertainty", "overall", "se"), _margin),
        ("Full compliance", ("compliance_rate",), _num),
        ("  95% interval", ("extended", "compliance_interval_95"), _interval),
        ("Tier-1 overall", ("extended", "tier1_overall_score"), _num),
        ("Semantic score", ("extended", "semantic_score"), _num),
    ]
    if any(metric_at(m, ("extended", "judge_reliability")) for m in metrics.values()):  # --pibench-judge-votes
        spec.append(("  judge alpha / split votes", ("extended", "judge_reliability"), _agreement))
    for group, columns in GROUPS.items():
        spec.append((group, ("by_group", group), _num))
        spec += [(f"  {column}", ("by_column", column, "score"), _num) for column in columns]
    if trials > 1:
        spec += [(f"pass^{k}", ("extended", "pass_hat_k", str(k)), _num) for k in range(1, trials + 1)]
    spec += [(label, ("event_flag_rates", key), _num) for label, key in _FLAGS]
    styles = dict.fromkeys(style for m in metrics.values() for style in m.get("by_pressure_style") or {})
    if styles:  # generated variants ran: compliance per pressure style ("none" = hand-written)
        spec.append(("Compliance by pressure style", (), lambda _: ""))
        spec += [(f"  {style}", ("by_pressure_style", style), _style_rate) for style in styles]
    rows = [(label, [fmt(metric_at(m, path)) for m in metrics.values()]) for label, path, fmt in spec]
    if any(metric_at(m, ("extended", "usage")) for m in metrics.values()):
        rows.append(("Cost (USD)", [_priced(metric_at(m, ("extended", "usage"))) for m in metrics.values()]))
        per_pass = [_cost(metric_at(m, ("extended", "usage", "cost_per_passed_scenario"))) for m in metrics.values()]
        rows.append(("  per passed scenario", per_pass))
        rows.append(("Tokens in/out", [_tokens(metric_at(m, ("extended", "usage"))) for m in metrics.values()]))
        retried = [_retried(metric_at(m, ("extended", "usage"))) for m in metrics.values()]
        rows.append(("LLM calls retried / throttled", retried))
        for role in ("agent", "user", "judge"):
            label = f"  {role} cost / calls"
            values = [_role(metric_at(m, ("extended", "usage", "by_role", role))) for m in metrics.values()]
            if any(v != "-" for v in values):
                rows.append((label, values))
    return rows


def _agreement(entry: Any) -> str:
    """``0.81 / 6%``: Krippendorff's alpha of the judge's repeated votes and the share of split questions."""
    if not isinstance(entry, Mapping):
        return "-"
    alpha = entry.get("krippendorff_alpha")
    return f"{'n/a' if alpha is None else f'{alpha:.2f}'} / {entry['split_vote_share'] * 100:.0f}%"


def _margin(se: Any) -> str:
    """``+-0.041``: the half-width of the 95% interval (1.96 standard errors); ``-`` without one."""
    return f"+-{1.959963984540054 * se:.3f}" if isinstance(se, int | float) else "-"


def _style_rate(entry: Any) -> str:
    """``0.750 (3/4)``: the style's compliance with its counts."""
    if not isinstance(entry, Mapping):
        return "-"
    return f"{entry['compliance_rate']:.3f} ({entry['passed']}/{entry['total']})"


def _priced(usage: Any) -> str:
    """The cost, with the calls whose price is unknown kept apart (``0.0123 + 4 unpriced calls``)."""
    if not isinstance(usage, Mapping):
        return "-"
    unpriced = int(usage.get("unpriced_calls") or 0)
    priced = _cost(usage.get("cost_usd"))
    return f"{priced} + {unpriced} unpriced calls" if unpriced else priced


def _cost(value: Any) -> str:
    return f"{value:.4f}" if isinstance(value, int | float) else "-"


def _tokens(usage: Any) -> str:
    if not isinstance(usage, Mapping):
        return "-"
    return f"{int(usage['prompt_tokens'])}/{int(usage['completion_tokens'])}"


def _retried(usage: Any) -> str:
    if not isinstance(usage, Mapping):
        return "-"
    return f"{int(usage.get('retries') or 0)} / {int(usage.get('throttled') or 0)}"


def _role(usage: Any) -> str:
    if not isinstance(usage, Mapping):
        return "-"
    return f"{usage['cost_usd']:.4f} / {int(usage['calls'])}"


def summary_lines(document: ResultsDocument, extra_rows: Sequence[tuple[str, list[str]]] = ()) -> list[str]:
    """The table (with ``extra_rows`` from ``pytest_pibench_summary_rows`` last) and the failed scenarios."""
    metrics = {agent: data["metrics"] for agent, data in document["agents"].items()}
    sequential = document.get("sequential")
    trials = 1 if sequential else int(document["settings"].get("trials", 1))  # no pass^k from curtailed trials
    table = _table(metrics, trials) + _count_rows(document) + _verdict_rows(document) + list(extra_rows)
    width = max(len(label) for label, _ in table) + 2
    cols = [max(12, len(agent) + 2) for agent in metrics]
    lines = warning_lines(document)
    lines += ["".ljust(width) + "".join(a.rjust(w) for a, w in zip(metrics, cols, strict=True))]
    lines += [
        label.ljust(width) + "".join(v.rjust(w) for v, w in zip(values, cols, strict=True)) for label, values in table
    ]
    lines.append(f"Wall time: {document['wall_time']:.1f}s")
    if sequential:
        lines.append(
            f"Sequential trials: {sequential['trials_run']} of {sequential['trials_planned']} trials run, "
            f"{sequential['trials_saved']} not needed; rule: {sequential['rule']}"
        )
    lines += _resume_lines(document["rows"])
    failed = [r for r in document["rows"] if r.get("status") != "completed" or not r.get("all_passed")]
    if failed:
        lines += ["", f"Failed scenarios ({len(failed)}):"]
        for row in failed:
            lines.append("  " + failure_line(row))
    return lines


def _verdict_rows(document: ResultsDocument) -> list[tuple[str, list[str]]]:
    """Sequential trials: each agent's K-of-N verdicts (met / not met / unsettled), the numbers to read."""
    sequential = document.get("sequential")
    if not sequential:
        return []
    counts = [sequential["verdicts_by_agent"].get(agent) for agent in document["agents"]]
    values = [f"{c['met']} / {c['not met']} / {c['unsettled']}" if c else "-" for c in counts]
    return [(f"Met {sequential['min_pass']} / not / unsettled", values)]


def warning_lines(document: ResultsDocument) -> list[str]:
    """A shard, a partial or an invalid run says so before any number (one line each)."""
    lines = []
    shard = document.get("shard")
    if shard:
        lines.append(
            f"SHARD {shard['index']} of {shard['count']}: these numbers cover this shard only; merge the shards' "
            "results files with 'pi report A.json B.json ...'"
        )
    if document.get("complete") is False:
        done = len({r.get("nodeid") for r in document["rows"]})
        planned = document.get("planned_items")
        of = f" of {planned}" if planned is not None else ""
        lines.append(f"PARTIAL RUN: {done}{of} items finished; {document.get('ended_by')}")
    validity = document.get("validity")
    problems = (validity.get("problems") or []) if validity else []
    if problems:
        lines.append(f"NOT VALID FOR THE LEADERBOARD: {'; '.join(problems)}")
    return lines


def _resume_lines(rows: list[ResultRow]) -> list[str]:
    notes = [r["resume"] for r in rows if isinstance(r.get("resume"), Mapping)]
    if not notes:
        return []
    reused = sum(1 for n in notes if n.get("reused"))
    reasons: dict[str, int] = {}
    for note in notes:
        if not note.get("reused"):
            reasons[str(note.get("reason"))] = reasons.get(str(note.get("reason")), 0) + 1
    why = "; ".join(f"{count} {reason}" for reason, count in sorted(reasons.items()))
    line = f"Resume: reused {reused} of {len(notes)} rows from {notes[0].get('source')}"
    return [line + (f"; re-ran {len(notes) - reused}: {why}" if reasons else "")]


def failure_line(row: ResultRow) -> str:
    """One failed or error row in a line: the agent's own failure first, else the first failed Tier-1 check."""
    head = f"{row.get('agent')} {row.get('scenario_id')} t{row.get('trial', 0)}"
    if row.get("status") == "error":
        cause = row.get("failure_cause") or "harness"
        return f"{head}: ERROR ({cause}) {row.get('termination_reason')}: {str(row.get('error') or '')[:160]}"
    decision = f"[{row.get('label')} -> {row.get('canonical_decision')}]"
    if row.get("failure_cause") == "agent":  # the agent broke: that is the cause, not the checks it then missed
        return f"{head} {decision} AGENT ERROR ({row.get('termination_reason')}): {str(row.get('error') or '')[:200]}"
    if row.get("decision_error_detail") and row.get("decision_error") == "INVALID_DECISION":
        return f"{head} {decision} {row['decision_error']}: {str(row['decision_error_detail'])[:200]}"
    first = next(
        (c for c in row.get("outcome_checks") or [] if c.get("passed") is False and c.get("tier", 1) == 1), None
    )
    if first is None:
        return f"{head} {decision}: {row.get('termination_reason')}"
    return f"{head} {decision} {first['outcome_id']}: {str(first['detail'])[:160]}"


def _comparisons(document: ResultsDocument) -> list[str]:
    """With several agents: each one paired with the first (compliance, overall, and the columns' verdicts)."""
    agents = list(document["agents"])
    if len(agents) < 2:
        return []
    if document.get("sequential"):
        return ["Paired comparison: not computed for sequential trials (rates over rows are skewed by when each "
                "scenario settled); read the K-of-N verdicts above"]  # fmt: skip
    from pytest_pibench.results.compare import compare_rows
    from pytest_pibench.results.metrics import partial_credit

    reference = [r for r in document["rows"] if r.get("agent") == agents[0]]
    lines = [f"Paired comparison with {agents[0]} (B - A, 95% interval, verdict; pi compare for every metric):"]
    for agent in agents[1:]:
        mine = [r for r in document["rows"] if r.get("agent") == agent]
        metrics = compare_rows(reference, mine, partial_credit)["metrics"]
        parts = []
        for name in ("compliance", "overall"):
            entry = metrics.get(name)
            if entry is not None:
                span = "" if entry["ci95"] is None else f" [{entry['ci95'][0]:+.3f}, {entry['ci95'][1]:+.3f}]"
                parts.append(f"{name} {entry['difference']:+.3f}{span} {entry['verdict']}")
        columns = [m["verdict"] for n, m in metrics.items() if "p_adjusted" in m]
        parts.append(f"columns better/worse: {columns.count('better')}/{columns.count('worse')}")
        lines.append(f"  {agent}: " + "; ".join(parts))
    return lines


def write_summary(terminal: Any, collector: ResultCollector) -> None:
    document = collector.document
    assert document is not None
    extra_rows = extension_summary_rows(collector.config, document)  # a broken hook fails before a half table
    terminal.write_sep("=", "pi-bench summary")
    for line in summary_lines(document, extra_rows):
        terminal.write_line(line)
    for line in _comparisons(document):
        terminal.write_line(line)
    if collector.settings.results and not collector.write_errors:
        terminal.write_line(f"Results: {collector.settings.results}")
    for problem in collector.write_errors:  # a full disk: what is and is not on disk (exit code 4)
        terminal.write_line(f"ERROR (exit code 4): {problem}", red=True)
    if collector.settings.html:
        terminal.write_line(f"HTML report: {collector.settings.html}")
    for problem in collector.usage_errors[:1]:  # the same problem in every item that tried: once
        terminal.write_line(f"ERROR (exit code 4): {problem}", red=True)
    validity = document.get("validity")
    if validity and error_budget_exceeded(validity) and not collector.usage_errors:
        terminal.write_line(f"Error budget: EXCEEDED (exit code {ERROR_BUDGET_EXIT_CODE}); see the error rows above")
    verdict = collector.verdict
    if verdict is not None:
        state = "PASSED" if verdict.passed else f"FAILED (exit code {GATE_EXIT_CODE})"
        if verdict.passed and verdict.inconclusive:
            state = f"INCONCLUSIVE (exit code {INCONCLUSIVE_EXIT_CODE}): not a regression, not yet a pass"
        terminal.write_line(f"Gate: {state}")
        for line in verdict.lines:
            terminal.write_line(f"  {line}")
        if verdict.passed and collector.gate_overrode is not None:
            terminal.write_line("  (failing scenarios do not fail the run when a gate is set; the gate decides)")
        if document.get("shard"):
            terminal.write_line("  (this gate saw this shard only: gate the merged run with 'pi gate SHARD.json ...')")
