"""The HTML report's data: runs, contenders (an agent in a run), headline numbers, the episode table, details.

Everything here is JSON-able and bounded: the page embeds it and renders the
heavy parts (an episode's conversation, trace and state changes) only when a
reader opens that episode. Long texts are cut to :data:`TEXT_LIMIT` characters
with a note saying how much was left out, so 100+ scenarios x trials x agents
stay a file a browser opens at once.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any, cast

from pytest_pibench.results.metrics import compute_metrics
from pytest_pibench.results.types import ResultRow, ResultsDocument
from pytest_pibench.vocab import COLUMNS, GROUPS, LABELS

__all__ = ["DECISIONS", "TEXT_LIMIT", "build_view"]

TEXT_LIMIT = 4000
"""Characters of one message, tool result or value kept in the page; the rest is folded away."""
DECISIONS = (*LABELS, "NONE")
"""Columns of the confusion matrix: the four decisions, and none recorded."""


def _cut(text: str, limit: int = TEXT_LIMIT) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n… ({len(text) - limit} more characters not shown)"


def _value(value: Any) -> str:
    """A state value as short text for the diff table."""
    text = value if isinstance(value, str) else json.dumps(value, default=str, ensure_ascii=False)
    return _cut(text, 600)


def _message(message: Mapping[str, Any]) -> dict[str, Any]:
    role = str(message.get("role", ""))
    if role == "multi_tool":
        return {"role": "tool", "content": "", "results": [_message(m) for m in message.get("tool_messages") or []]}
    calls = [
        {"name": str(c.get("name", "")), "arguments": _cut(json.dumps(c.get("arguments") or {}, ensure_ascii=False))}
        for c in message.get("tool_calls") or []
        if isinstance(c, Mapping)
    ]
    content = message.get("content")
    text = content if isinstance(content, str) else json.dumps(content, default=str) if content is not None else ""
    # A tool result is shown whole in the tool-call table; the conversation keeps a preview.
    out: dict[str, Any] = {"role": role, "content": _cut(text, 300 if role == "tool" else TEXT_LIMIT)}
    if calls:
        out["calls"] = calls
    if role == "tool":
        out["name"] = str(message.get("name", ""))
        out["error"] = bool(message.get("error"))
    return out


def _details(row: ResultRow) -> dict[str, Any]:
    """What opening an episode shows: conversation, trace, failed checks, state changes, then hidden facts."""
    transcript: Mapping[str, Any] = row.get("transcript") or {}
    checks = row.get("outcome_checks") or []
    return {
        "messages": [_message(m) for m in transcript.get("messages") or [] if isinstance(m, Mapping)],
        "trace": [
            {
                "tool": str(t.get("tool_name", "")),
                "arguments": _cut(json.dumps(t.get("arguments") or {}, ensure_ascii=False)),
                "result": _cut(str(t.get("result_content", "")), 1500),
                "error": bool(t.get("result_error")),
                "blocked": bool(t.get("blocked")),
            }
            for t in transcript.get("trace") or []
        ],
        "changes": [
            {"path": c.get("path", ""), "change": c.get("change", ""),
             "before": _value(c.get("before")) if "before" in c else None,
             "after": _value(c.get("after")) if "after" in c else None, "count": c.get("count")}
            for c in transcript.get("state_changes") or []
        ],
        "checks": [
            {"id": c.get("outcome_id"), "type": c.get("type"), "passed": c.get("passed"),
             "detail": _cut(str(c.get("detail") or ""), 1500), "notes": c.get("notes") or ""}
            for c in checks
        ],
        "error": row.get("error") or "",
        "transcript": bool(transcript),
    }


def _contender_label(agent: str, run: str, several_runs: bool) -> str:
    return f"{agent} · {run}" if several_runs else agent


def _run_fingerprint(rows: Sequence[ResultRow]) -> dict[str, Any]:
    """One value for the run (over every row's fingerprint) and how many distinct scenario files it ran."""
    prints: list[Mapping[str, Any]] = [r["fingerprint"] for r in rows if isinstance(r.get("fingerprint"), dict)]
    shas = sorted(str(p.get("sha256")) for p in prints)
    scenarios = {str((p.get("key") or {}).get("scenario_sha256")) for p in prints}
    digest = hashlib.sha256("\n".join(shas).encode()).hexdigest()[:16] if shas else None
    return {"run": digest, "scenario_files": len(scenarios), "scenario_set": sorted(scenarios)}


def _confusion(rows: Sequence[ResultRow]) -> dict[str, dict[str, int]]:
    table = {label: dict.fromkeys(DECISIONS, 0) for label in LABELS}
    for row in rows:
        if row.get("status", "completed") != "completed":  # error rows are in no rate, nor here
            continue
        label = str(row.get("label") or "")
        decision = str(row.get("canonical_decision") or "NONE")
        if label in table:
            table[label][decision if decision in DECISIONS else "NONE"] += 1
    return table


def _verdicts(sequential: Mapping[str, Any], agent: str) -> dict[str, Any] | None:
    """A sequential run's K-of-N verdicts of one agent (``{"min_pass", "met", "not met", "unsettled"}``)."""
    counts = (sequential.get("verdicts_by_agent") or {}).get(agent)
    return {"min_pass": sequential.get("min_pass"), **counts} if counts else None


def _metrics(rows: Sequence[ResultRow], recorded: Any) -> dict[str, Any]:
    """The agent's metrics computed from its rows, plus the ``extended`` entries metric hooks recorded.

    Every number is computed here, never taken from the file's ``agents`` block: an edited block
    would otherwise show numbers its rows do not support.
    """
    metrics = cast(dict[str, Any], compute_metrics(rows))  # extension hooks add keys to ``extended``
    stored = recorded.get("metrics") if isinstance(recorded, Mapping) else None
    extra = stored.get("extended") if isinstance(stored, Mapping) else None
    if isinstance(extra, Mapping):  # what pytest_pibench_metrics hooks added (new keys only, by its contract)
        metrics["extended"] = {**extra, **metrics["extended"]}
    return metrics


def build_view(runs: Sequence[tuple[str, ResultsDocument]]) -> dict[str, Any]:
    """The report's data for one or several runs (``(name, results document)`` pairs)."""
    several = len(runs) > 1
    view_runs: list[dict[str, Any]] = []
    contenders: list[dict[str, Any]] = []
    episodes: list[dict[str, Any]] = []
    details: list[dict[str, Any]] = []
    notes: dict[str, dict[str, str]] = {}  # "run:scenario id" -> check id -> the author's note (its clause), once
    for run_index, (name, document) in enumerate(runs):
        rows = list(document.get("rows") or [])
        view_runs.append(
            {
                "name": name,
                "created": document.get("created"),
                "complete": document.get("complete") is not False,
                "ended_by": document.get("ended_by"),
                "validity": document.get("validity"),
                "gate": document.get("gate"),
                "wall_time": document.get("wall_time"),
                "settings": document.get("settings") or {},
                "versions": {"pytest-pibench": document.get("pytest_pibench_version")
                             or (document.get("settings") or {}).get("pytest_pibench_version"),
                             "benchmark": document.get("benchmark_version"),
                             "results format": document.get("format_version")},
                "fingerprint": _run_fingerprint(rows),
                "rows": len(rows),
            }
        )
        recorded: Mapping[str, Any] = document.get("agents") or {}
        sequential = document.get("sequential") or {}
        for agent in dict.fromkeys(str(r.get("agent", "agent")) for r in rows):
            mine = [r for r in rows if str(r.get("agent", "agent")) == agent]
            index = len(contenders)
            metrics = _metrics(mine, recorded.get(agent))
            contenders.append(
                {
                    "label": _contender_label(agent, name, several),
                    "agent": agent,
                    "run": run_index,
                    "metrics": metrics,
                    "confusion": _confusion(mine),
                    "agent_errors": sum(1 for r in mine if r.get("failure_cause") == "agent"),
                    "sequential": _verdicts(sequential, agent),
                }
            )
            for row in mine:
                episodes.append(
                    {
                        "c": index,
                        "sid": row.get("scenario_id"),
                        "trial": row.get("trial", 0),
                        "domain": row.get("domain") or row.get("domain_name"),  # as the metrics group it
                        "label": row.get("label"),
                        "column": row.get("leaderboard_primary"),
                        "passed": bool(row.get("all_passed")),
                        "status": row.get("status", "completed"),
                        "run": run_index,
                        "seed": row.get("seed"),
                        "steps": row.get("step_count"),
                        "decision": row.get("canonical_decision") or "NONE",
                        "reason": row.get("termination_reason"),
                        "style": row.get("pressure_style") or "",
                        "failed": sum(1 for c in row.get("outcome_checks") or [] if c.get("passed") is False),
                        "flags": [k for k, v in (row.get("event_flags") or {}).items() if v],
                    }
                )
                details.append(_details(row))
                mine_notes = notes.setdefault(f"{run_index}:{row.get('scenario_id')}", {})
                for check in row.get("outcome_checks") or []:
                    if check.get("notes"):
                        mine_notes[str(check.get("outcome_id"))] = str(check["notes"])
    sets = {tuple(r["fingerprint"]["scenario_set"]) for r in view_runs if r["fingerprint"]["scenario_set"]}
    for r in view_runs:
        del r["fingerprint"]["scenario_set"]
    return {
        "same_scenarios": len(sets) <= 1,
        "runs": view_runs,
        "contenders": contenders,
        "episodes": episodes,
        "details": details,
        "notes": notes,
        "columns": list(COLUMNS),
        "groups": {group: list(columns) for group, columns in GROUPS.items()},
        "labels": list(LABELS),
        "decisions": list(DECISIONS),
    }
