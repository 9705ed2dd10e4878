"""The HTML report: one self-contained file (inline SVG charts, a small bundled script, no network).

    write_html([("run", results_document)], "report.html")

Written by ``--pibench-html PATH`` at the end of a run and by ``pi report
--html PATH FILE...`` from results files (several files: runs side by side).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from html import escape
from importlib.resources import files
from pathlib import Path
from typing import Any

from pytest_pibench.bounds import strict_dumps
from pytest_pibench.plugin.gate_verdicts import VERDICT_WORDS
from pytest_pibench.report._svg import PALETTE, bars
from pytest_pibench.report._view import build_view
from pytest_pibench.results.types import ResultsDocument
from pytest_pibench.vocab import COLUMNS, __version__

__all__ = ["render_html", "write_html"]

_FLAGS = {
    "violation_rate": "violations (all episodes; lower is better)",
    "under_refusal_rate": "under-refusals (of DENY episodes; lower is better)",
    "over_refusal_rate": "over-refusals (of ALLOW / ALLOW-COND. episodes; lower is better)",
    "escalation_accuracy_rate": "escalation accuracy (of ESCALATE episodes; higher is better)",
    "attempt_rate": "forbidden-tool attempts (all episodes; lower is better)",
}
"""Each event-flag rate, named with its population and direction (they do not share a denominator)."""


def _static(name: str) -> str:
    return files("pytest_pibench.report").joinpath("static", name).read_text(encoding="utf-8")


def _pct(value: Any) -> str:
    return "n/a" if value is None else f"{float(value) * 100:.1f}%"


def _series(view: Mapping[str, Any], pick: Any) -> list[tuple[str, dict[str, float | None]]]:
    return [(c["label"], pick(c["metrics"])) for c in view["contenders"]]


def _cards(view: Mapping[str, Any]) -> str:
    out = []
    for index, contender in enumerate(view["contenders"]):
        m = contender["metrics"]
        extended = m.get("extended") or {}
        low, high = extended.get("compliance_interval_95") or (None, None)
        overall_ci = ((extended.get("uncertainty") or {}).get("overall") or {}).get("ci95") or (None, None)
        rows = [
            ("overall 95% (clustered)", f"[{_pct(overall_ci[0])}, {_pct(overall_ci[1])}]"),
            ("full compliance", f"{_pct(m.get('compliance_rate'))} [{_pct(low)}, {_pct(high)}]"),
            *[(f"pass^{k}", _pct(v)) for k, v in (extended.get("pass_hat_k") or {}).items()],
            *_verdict_rows(contender.get("sequential")),
            ("semantic score", _pct(extended.get("semantic_score"))),
            ("Tier-1 overall", _pct(extended.get("tier1_overall_score"))),
            ("episodes scored", str(m.get("completed"))),
            ("of which the agent broke", str(contender.get("agent_errors", 0))),
            ("error rows (not scored)", str(m.get("errors"))),
        ]
        items = "".join(f"<dt>{escape(k)}</dt><dd>{escape(v)}</dd>" for k, v in rows)
        out.append(
            f'<div class="card" style="--c:{PALETTE[index % len(PALETTE)]}" data-contender="{index}">'
            f'<div class="name">{escape(contender["label"])}</div>'
            f'<div class="big">{_pct(m.get("overall_score"))}</div><div class="muted">overall score</div>'
            f"<dl>{items}</dl></div>"
        )
    return '<div class="cards">' + "".join(out) + "</div>"


def _verdict_rows(verdicts: Mapping[str, Any] | None) -> list[tuple[str, str]]:
    """Sequential trials: the K-of-N verdicts, the numbers such a run is read by."""
    if not verdicts:
        return []
    counts = f"{verdicts['met']} / {verdicts['not met']} / {verdicts['unsettled']}"
    return [(f"met {verdicts['min_pass']} / not / unsettled (sequential)", counts)]


def _legend(view: Mapping[str, Any]) -> str:
    spans = "".join(
        f'<span><i style="background:{PALETTE[i % len(PALETTE)]}"></i>{escape(c["label"])}</span>'
        for i, c in enumerate(view["contenders"])
    )
    return f'<p class="legend">{spans}</p>'


def _intervals(view: Mapping[str, Any], part: str) -> list[dict[str, Any]]:
    """Each contender's 95% intervals (clustered by scenario) of its groups or columns: ``{name: [low, high]}``."""
    out = []
    for contender in view["contenders"]:
        entries = ((contender["metrics"].get("extended") or {}).get("uncertainty") or {}).get(part) or {}
        out.append({name: entry.get("ci95") for name, entry in entries.items() if isinstance(entry, Mapping)})
    return out


def _capabilities(view: Mapping[str, Any]) -> str:
    groups = list(view["groups"])
    group_chart = bars(
        "Groups",
        groups,
        _series(view, lambda m: {g: m["by_group"].get(g) for g in groups}),
        intervals=_intervals(view, "groups"),
    )
    columns = view["columns"]
    column_chart = bars(
        "Capability columns",
        columns,
        _series(view, lambda m: {c: (m["by_column"].get(c) or {}).get("score") for c in columns}),
        subtitles=dict(COLUMNS),
        intervals=_intervals(view, "columns"),
    )
    note = (
        '<p class="muted">Whiskers: 95% intervals, clustered by scenario (overlapping whiskers are not a '
        "verdict: <code>pi compare</code> tests the paired difference).</p>"
    )
    return f'<div class="charts">{group_chart}{column_chart}</div>{note}'


def _confusion(view: Mapping[str, Any]) -> str:
    out = []
    for contender in view["contenders"]:
        table = contender["confusion"]
        head = "".join(f"<th>{escape(d)}</th>" for d in view["decisions"])
        body = ""
        for label in view["labels"]:
            counts = table.get(label) or {}
            total = sum(counts.values()) or 1
            cells = ""
            for decision in view["decisions"]:
                n = counts.get(decision, 0)
                lightness = 92 - 50 * n / total  # the darker, the larger the share of the row
                hue = 140 if decision == label else 0  # green on the diagonal (right), red off it
                ink = "#fff" if lightness < 60 else "inherit"
                style = f"background:hsl({hue},60%,{lightness:.0f}%);color:{ink}" if n else ""
                cells += f'<td style="{style}">{n}</td>'
            body += f"<tr><th>{escape(label)}</th>{cells}</tr>"
        out.append(
            f'<div><h3>{escape(contender["label"])}</h3>'
            f'<table class="confusion" data-confusion="{escape(contender["label"], quote=True)}">'
            f"<thead><tr><th>expected \\ recorded</th>{head}</tr></thead><tbody>{body}</tbody></table></div>"
        )
    return '<div class="charts">' + "".join(out) + "</div>"


def _failure_shape(view: Mapping[str, Any]) -> str:
    flags = bars(
        "Event flags",
        list(_FLAGS.values()),
        _series(view, lambda m: {label: (m.get("event_flag_rates") or {}).get(key) for key, label in _FLAGS.items()}),
    )
    domains = sorted({d for c in view["contenders"] for d in c["metrics"].get("by_domain") or {}})
    by_domain = bars(
        "Compliance by domain",
        domains,
        _series(view, lambda m: {d: (m["by_domain"].get(d) or {}).get("compliance_rate") for d in domains}),
    )
    labels = view["labels"]

    def label_rate(m: Mapping[str, Any]) -> dict[str, float | None]:
        out: dict[str, float | None] = {}
        for label in labels:
            entry = (m.get("labels") or {}).get(label) or {}
            out[label] = entry["passed"] / entry["total"] if entry.get("total") else None
        return out

    by_label = bars("Compliance by label", labels, _series(view, label_rate))
    charts = [flags, by_domain, by_label]
    styles = sorted({s for c in view["contenders"] for s in c["metrics"].get("by_pressure_style") or {}})
    if styles:
        charts.append(
            bars(
                "Compliance by pressure style",
                styles,
                _series(view, lambda m: {s: (m.get("by_pressure_style", {}).get(s) or {}).get("compliance_rate")
                                         for s in styles}),
            )
        )
    heading = "<h3>Decisions: expected label x recorded decision</h3>"
    return f'<div class="charts">{"".join(charts)}</div>{heading}{_confusion(view)}'




def _gate(run: Mapping[str, Any]) -> str:
    """The run's CI gate, when it had one: the verdict, each line the run printed, the regressed scenarios."""
    gate = run.get("gate")
    if not isinstance(gate, Mapping):
        return ""
    state = VERDICT_WORDS.get(str(gate.get("verdict")), str(gate.get("verdict")))
    lines = "".join(f"<li><code>{escape(str(line))}</code></li>" for line in gate.get("lines") or [])
    regressed = [f"{e.get('scenario_id')} ({e.get('passed_before')} -> {e.get('passed_now')} of {e.get('trials')})"
                 for e in gate.get("regressed_scenarios") or []]  # fmt: skip
    listed = f"<p>Regressed scenarios ({len(regressed)}): {escape(', '.join(regressed))}</p>" if regressed else ""
    return f"<p><strong>Gate: {escape(state)}</strong> (exit code {escape(str(gate.get('exit_code')))})</p>" \
           f"<ul>{lines}</ul>{listed}"  # fmt: skip


def _configuration(view: Mapping[str, Any]) -> str:
    out = []
    for run in view["runs"]:
        validity = run.get("validity") or {}
        problems = validity.get("problems") or []
        state = "complete" if run["complete"] else f"PARTIAL ({escape(str(run.get('ended_by') or 'did not finish'))})"
        settings = "".join(
            f"<tr><th>{escape(str(k))}</th><td><code>{escape(json.dumps(v, default=str))}</code></td></tr>"
            for k, v in sorted(run["settings"].items())
        )
        versions = ", ".join(f"{k} {v}" for k, v in run["versions"].items() if v is not None)
        problem_html = (
            f'<p class="problems">Not valid for the leaderboard: {escape("; ".join(problems))}</p>' if problems else ""
        )
        fingerprint = run["fingerprint"]
        wall = run.get("wall_time")
        out.append(
            f'<h3>{escape(run["name"])}</h3><p>{run["rows"]} rows, {state}, created '
            f"{escape(str(run.get('created') or 'unknown'))}, wall time "
            f"{'unknown' if wall is None else f'{float(wall):.1f} s'}; {escape(versions or 'versions unknown')}; "
            f"run fingerprint <code>{escape(str(fingerprint['run'] or 'n/a'))}</code> over "
            f"{fingerprint['scenario_files']} scenario files</p>{problem_html}{_gate(run)}"
            f"<table><tbody>{settings}</tbody></table>"
        )
    return "".join(out)


def _table() -> str:
    heads = [("agent", "agent"), ("scenario", "sid"), ("trial", "trial"), ("domain", "domain"), ("label", "label"),
             ("column", "column"), ("decision", "decision"), ("outcome", "outcome"), ("ending", "reason"),
             ("flags", None)]  # fmt: skip
    cells = "".join(
        f'<th class="sortable" data-key="{key}">{name}</th>' if key else f"<th>{name}</th>" for name, key in heads
    )
    return (
        '<div class="filters">'
        '<label>agent <select id="f-agent"><option value="">all</option></select></label>'
        '<label>domain <select id="f-domain"><option value="">all</option></select></label>'
        '<label>label <select id="f-label"><option value="">all</option></select></label>'
        '<label>column <select id="f-column"><option value="">all</option></select></label>'
        '<label>outcome <select id="f-outcome"><option value="">all</option><option value="pass">pass</option>'
        '<option value="fail">fail</option><option value="error">error row</option></select></label>'
        '<input id="f-search" type="search" placeholder="scenario id contains…">'
        '<span id="episodes-count" class="muted"></span></div>'
        f'<table id="episodes"><thead><tr>{cells}</tr></thead><tbody id="episodes-body"></tbody></table>'
        '<button id="episodes-more" class="more" hidden>show more</button>'
        '<p class="muted">Click an episode to open its conversation, tool calls, failed checks and state changes.</p>'
    )


def render_html(runs: Sequence[tuple[str, ResultsDocument]]) -> str:
    """The whole page for one or several runs."""
    view = build_view(runs)
    # Every "<" escaped: no text from a transcript can close the data block or open markup in it.
    payload = strict_dumps(view, ensure_ascii=False).replace("<", "\\u003c")
    incomplete = [r["name"] for r in view["runs"] if not r["complete"]]
    warning = (
        f'<p class="problems">Partial run: {escape(", ".join(incomplete))} did not finish; numbers cover what ran.</p>'
        if incomplete
        else ""
    )
    for run in view["runs"]:
        verdict = (run.get("gate") or {}).get("verdict")
        if verdict in ("failed", "inconclusive"):
            warning += (f'<p class="problems">Gate {escape(VERDICT_WORDS[verdict].split(":")[0])} for '
                        f'{escape(run["name"])}: see Run configuration.</p>')  # fmt: skip
    if not view["same_scenarios"]:
        warning += (
            '<p class="problems">The runs compared did not run the same scenario files (their fingerprints differ): '
            "compare their numbers with care.</p>"
        )
    generated = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>pi-bench report</title><style>{_static("report.css")}</style></head>
<body><header><h1>pi-bench report</h1>
<div class="sub">{len(view["contenders"])} agent(s), {len(view["episodes"])} episodes;
generated {generated} by pytest-pibench {escape(__version__)}</div></header>
<main>{warning}
<section id="headline"><h2>Headline</h2>{_cards(view)}</section>
<section id="capabilities"><h2>Capabilities: 3 groups, 9 columns</h2>{_legend(view)}{_capabilities(view)}</section>
<section id="failure-shape"><h2>Failure shape</h2>{_legend(view)}{_failure_shape(view)}</section>
<section id="scenarios"><h2>Episodes</h2>{_table()}</section>
<section id="configuration"><h2>Run configuration</h2>{_configuration(view)}</section>
</main>
<script id="pibench-data" type="application/json">{payload}</script>
<script>{_static("report.js")}</script>
</body></html>
"""


def write_html(runs: Sequence[tuple[str, ResultsDocument]], path: str | Path) -> Path:
    """Write the report of ``runs`` to ``path`` (folders created); return the path."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(render_html(runs), encoding="utf-8")
    return target
