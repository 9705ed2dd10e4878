"""``pi report --markdown``: a short markdown summary of a run, for a CI job summary or a pull-request comment.

The headline numbers per agent with their 95% intervals (clustered by scenario,
as in the results file), the gate's verdict when the run had one (the results
file keeps it under ``gate``), the scenarios that regressed against the
baseline, and the failed scenarios folded away. A partial run, a shard alone or
a run over its error budget says so first. Lists are bounded (``max_items``) so
the text stays far below GitHub's 1 MiB job-summary limit.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pytest_pibench.plugin.gate_verdicts import VERDICT_WORDS
from pytest_pibench.plugin.summary import failure_line, metric_at, row_counts, warning_lines
from pytest_pibench.results.types import ResultsDocument
from pytest_pibench.vocab import GROUPS

__all__ = ["markdown_summary", "write_markdown"]

_VERDICTS = {**VERDICT_WORDS, "failed": "FAILED: a regression or a threshold missed"}
_FLAGS = (
    ("Violation rate", "violation_rate"),
    ("Over-refusal rate", "over_refusal_rate"),
    ("Under-refusal rate", "under_refusal_rate"),
    ("Escalation accuracy", "escalation_accuracy_rate"),
)

def _cell(text: object) -> str:
    """Text safe inside a table cell (pipes escaped, one line)."""
    return str(text).replace("|", "\\|").replace("\n", " ")


def _with_interval(value: Any, interval: Any) -> str:
    if not isinstance(value, int | float):
        return "-"
    if isinstance(interval, Sequence) and len(interval) == 2:
        return f"{value:.3f} ({interval[0]:.3f}-{interval[1]:.3f})"
    return f"{value:.3f}"


def _clustered(metrics: Mapping[str, Any], value: Any, *where: str) -> str:
    """``value`` with its 95% interval clustered by scenario (``metrics.extended.uncertainty``)."""
    return _with_interval(value, metric_at(metrics, ("extended", "uncertainty", *where, "ci95")))


def _num(value: Any) -> str:
    return f"{value:.3f}" if isinstance(value, int | float) else "-"


def _headline(document: ResultsDocument) -> list[str]:
    metrics = {agent: data.get("metrics") or {} for agent, data in document.get("agents", {}).items()}
    if not metrics:
        return ["No scored agent in this run."]
    trials = 1 if document.get("sequential") else int(document.get("settings", {}).get("trials", 1))
    spec: list[tuple[str, Any]] = [
        ("Overall (95% interval)", lambda m: _clustered(m, m.get("overall_score"), "overall")),
        ("Full compliance (95% interval)", lambda m: _clustered(m, m.get("compliance_rate"), "compliance")),
    ]
    pass_k = ("extended", "pass_hat_k")
    spec += [(f"pass^{k}", lambda m, k=k: _num(metric_at(m, (*pass_k, str(k))))) for k in range(2, trials + 1)]
    spec += [(g, lambda m, g=g: _clustered(m, metric_at(m, ("by_group", g)), "groups", g)) for g in GROUPS]
    spec += [(label, lambda m, key=key: _num(metric_at(m, ("event_flag_rates", key)))) for label, key in _FLAGS]
    counts = {agent: row_counts([r for r in document.get("rows", []) if r.get("agent") == agent]) for agent in metrics}
    lines = ["| | " + " | ".join(f"`{_cell(a)}`" for a in metrics) + " |", "|---" + "|---:" * len(metrics) + "|"]
    for label, value in spec:
        lines.append(f"| {label} | " + " | ".join(value(m) for m in metrics.values()) + " |")
    tallies: list[tuple[str, Callable[[dict[str, int]], str]]] = [
        ("Scenarios passed / failed", lambda c: f"{c['passed']} / {c['failed']}"),
        ("Error rows (not scored)", lambda c: str(c["errors"])),
    ]
    for label, tally in tallies:
        lines.append(f"| {label} | " + " | ".join(tally(counts[a]) for a in metrics) + " |")
    return lines


def _gate(gate: Mapping[str, Any], max_items: int) -> list[str]:
    verdict = str(gate.get("verdict"))
    lines = ["", f"### Gate: {_VERDICTS.get(verdict, verdict)} (exit code {gate.get('exit_code')})", ""]
    what = []
    if gate.get("baseline"):
        what.append(f"baseline `{_cell(gate['baseline'])}`, {gate.get('mode') or 'exact'} mode")
    if gate.get("fail_under"):
        what.append("thresholds " + ", ".join(f"`{t}`" for t in gate["fail_under"]))
    if gate.get("min_pass"):
        what.append(f"min pass `{gate['min_pass']}`")
    if what:
        lines += ["Gated on " + "; ".join(what) + ".", ""]
    lines += [f"- `{_cell(line)}`" for line in list(gate.get("lines") or [])[:max_items]]
    regressed = list(gate.get("regressed_scenarios") or [])
    if regressed:
        lines += ["", f"#### Regressed scenarios ({len(regressed)})", "",
                  "| Agent | Scenario | Passed before | Passed now |", "|---|---|---:|---:|"]  # fmt: skip
        for entry in regressed[:max_items]:
            trials = entry.get("trials")
            lines.append(f"| `{_cell(entry.get('agent'))}` | `{_cell(entry.get('scenario_id'))}` | "
                         f"{entry.get('passed_before')}/{trials} | {entry.get('passed_now')}/{trials} |")  # fmt: skip
        if len(regressed) > max_items:
            lines.append(f"\n... and {len(regressed) - max_items} more (the results file lists them all)")
    return lines


def markdown_summary(document: ResultsDocument, *, title: str = "pi-bench", max_items: int = 30) -> str:
    """The markdown summary of one run (merged shards count as one)."""
    settings = document.get("settings", {})
    rows = document.get("rows", [])
    scenarios = len({r.get("scenario_id") for r in rows})
    trials = int(settings.get("trials", 1))
    size = f"{scenarios} scenarios x {trials} {'trial' if trials == 1 else 'trials'}, {len(rows)} episodes"
    lines = [f"## {title}: {size}", ""]
    warnings = warning_lines(document)
    if warnings:
        lines += [f"> **{_cell(w)}**" for w in warnings] + [""]
    lines += _headline(document)
    lines.append("")
    lines.append("Intervals: 95%, clustered by scenario.")
    if document.get("gate"):
        lines += _gate(document["gate"], max_items)
    failed = [r for r in rows if r.get("status") != "completed" or not r.get("all_passed")]
    if failed:
        lines += ["", f"<details><summary>Failed scenarios ({len(failed)})</summary>", ""]
        lines += [f"- {_cell(failure_line(r))}" for r in failed[:max_items]]
        if len(failed) > max_items:
            lines.append(f"- ... and {len(failed) - max_items} more (see the HTML report)")
        lines += ["", "</details>"]
    versions = f"pytest-pibench {document.get('pytest_pibench_version', '?')}, {document.get('benchmark_version', '?')}"
    lines += ["", f"<sub>{versions}; wall time {float(document.get('wall_time') or 0):.1f} s</sub>", ""]
    return "\n".join(lines)


def write_markdown(document: ResultsDocument, path: str, **options: Any) -> str:
    """Write :func:`markdown_summary` to ``path`` (``-``: standard output, no file); the text written."""
    text = markdown_summary(document, **options)
    if path == "-":
        print(text)
    else:
        Path(path).write_text(text, encoding="utf-8")
    return text
