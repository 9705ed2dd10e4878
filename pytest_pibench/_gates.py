"""CI gates: metric thresholds (``--pibench-fail-under``) and regressions against a baseline run."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ._settings import Gate, Settings
from ._vocab import COLUMNS, GROUPS, slug

__all__ = ["GateVerdict", "check_gates", "load_baseline", "metric_value", "unknown_metric"]

_ALIASES = {
    "compliance": ("compliance_rate",),
    "full_compliance": ("compliance_rate",),
    "overall": ("overall_score",),
    "tier1_overall": ("extended", "tier1_overall_score"),
    "semantic": ("extended", "semantic_score"),
}
_PASS_K = re.compile(r"^pass\^(\d+)$")
_NAMED = {slug(name): ("by_column", name, "score") for name in COLUMNS} | {
    slug(name): ("by_group", name) for name in GROUPS
}


def unknown_metric(name: str) -> str | None:
    """Why ``name`` is not a gateable metric, or None."""
    key = slug(name) if not _PASS_K.match(name.strip()) else name.strip()
    if key in _ALIASES or key in _NAMED or _PASS_K.match(key):
        return None
    known = ", ".join([*_ALIASES, "pass^K", "a column or group name (e.g. 'Policy Activation')"])
    return f"unknown metric {name!r}; use one of: {known}"


def metric_value(metrics: Mapping[str, Any], name: str) -> float | None:
    """The value of a gateable metric in a ``compute_metrics`` payload (None when absent)."""
    match = _PASS_K.match(name.strip())
    path: Sequence[str]
    if match:
        path = ("extended", "pass_hat_k", match.group(1))
    else:
        key = slug(name)
        path = _ALIASES.get(key) or _NAMED[key]
    value: Any = metrics
    for part in path:
        if not isinstance(value, Mapping) or part not in value:
            return None
        value = value[part]
    return float(value) if isinstance(value, int | float) else None


@dataclass
class GateVerdict:
    passed: bool = True
    lines: list[str] = field(default_factory=list)

    def fail(self, line: str) -> None:
        self.passed = False
        self.lines.append(f"FAIL {line}")

    def ok(self, line: str) -> None:
        self.lines.append(f"ok   {line}")


def load_baseline(path: str) -> dict[str, Any]:
    """Read a results file written by ``--pibench-results`` (raises ValueError with the reason)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ValueError(f"cannot read baseline {path}: {exc.strerror or exc}") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"baseline {path} is not JSON: {exc}") from None
    if not isinstance(data, dict) or data.get("format") != "pibench-results":
        raise ValueError(f"baseline {path} is not a pi-bench results file (no format: pibench-results)")
    return data


def _gated_names(settings: Settings) -> list[str]:
    return [g.metric for g in settings.fail_under] or ["compliance", "overall"]


def _match_baseline_agent(agent: str, current: Sequence[str], baseline: Mapping[str, Any]) -> str | None:
    if agent in baseline:
        return agent
    if len(current) == 1 and len(baseline) == 1:  # same agent under a new name (e.g. a branch build)
        return next(iter(baseline))
    return None


def check_gates(
    settings: Settings,
    metrics_by_agent: Mapping[str, Mapping[str, Any]],
    rows: Sequence[Mapping[str, Any]],
    baseline: Mapping[str, Any] | None,
) -> GateVerdict:
    """Apply every gate to every agent of the run."""
    verdict = GateVerdict()
    for agent, metrics in metrics_by_agent.items():
        for gate in settings.fail_under:
            _threshold(verdict, agent, metrics, gate)
    if baseline is None:
        return verdict
    base_metrics = {a: v.get("metrics", {}) for a, v in (baseline.get("agents") or {}).items()}
    base_rows = [r for r in baseline.get("rows") or [] if isinstance(r, Mapping)]
    agents = list(metrics_by_agent)
    for agent, metrics in metrics_by_agent.items():
        base_agent = _match_baseline_agent(agent, agents, base_metrics)
        if base_agent is None:
            verdict.fail(f"{agent}: no run of this agent in the baseline (has: {', '.join(base_metrics) or 'none'})")
            continue
        for name in _gated_names(settings):
            now, before = metric_value(metrics, name), metric_value(base_metrics[base_agent], name)
            if now is None or before is None:
                continue
            line = f"{agent}: {name} {now:.4f} vs baseline {before:.4f} (tolerance {settings.tolerance:g})"
            (verdict.fail if before - now > settings.tolerance + 1e-12 else verdict.ok)(line)
        passed_before = {
            (r.get("scenario_id"), r.get("trial", 0))
            for r in base_rows
            if r.get("agent", base_agent) == base_agent and r.get("all_passed")
        }
        for row in rows:
            key = (row.get("scenario_id"), row.get("trial", 0))
            if row.get("agent") == agent and key in passed_before and not row.get("all_passed"):
                verdict.fail(f"{agent}: {key[0]} trial {key[1]} passed in the baseline and fails now")
    return verdict


def _threshold(verdict: GateVerdict, agent: str, metrics: Mapping[str, Any], gate: Gate) -> None:
    value = metric_value(metrics, gate.metric)
    if value is None:
        verdict.fail(f"{agent}: {gate.metric} is not available in this run (needed >= {gate.value:g})")
    elif value + 1e-12 < gate.value:
        verdict.fail(f"{agent}: {gate.metric} = {value:.4f} < {gate.value:g}")
    else:
        verdict.ok(f"{agent}: {gate.metric} = {value:.4f} >= {gate.value:g}")
