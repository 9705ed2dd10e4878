"""The shape of the metrics payload (:func:`~pytest_pibench.results.metrics.compute_metrics`), and its gateable names.

The payload stays plain builtins (it is written into results files and the
AgentBeats artifact); these ``TypedDict`` classes give its keys names and
types. Gates, the summary and ``pi report`` address a metric by its name
(:func:`metric_value`: ``compliance``, ``pass^3``, a column or a group), each
name with its own typed reader.

No ``from __future__ import annotations`` here, as in ``types.py``: on Python
3.11 it hides ``NotRequired`` from ``TypedDict``.
"""


import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NotRequired, TypedDict

from pytest_pibench.vocab import COLUMNS, GROUPS, slug

__all__ = [
    "ColumnMetrics",
    "DomainMetrics",
    "ErrorRowNote",
    "ExtendedMetrics",
    "GateableMetric",
    "LabelCount",
    "Metrics",
    "gateable_metric",
    "metric_value",
    "unknown_metric",
]


class ColumnMetrics(TypedDict):
    """One capability column: its rows, how many passed, and its mean partial credit (``score``)."""

    description: str
    total: int
    passed: int
    strict_rate: float
    score: float


class DomainMetrics(TypedDict):
    total: int
    passed: int
    compliance_rate: float


class LabelCount(TypedDict):
    total: int
    passed: int


class ErrorRowNote(TypedDict):
    """An error row, named (kept out of every rate, listed so nobody misses it)."""

    scenario_id: Any
    trial: Any
    agent: Any
    reason: Any


class ExtendedMetrics(TypedDict):
    """Ours, beside upstream's keys: intervals, pass^k, Tier-1 overall, judge reliability, usage, error rows."""

    usage: dict[str, Any] | None
    compliance_interval_95: list[float] | None
    pass_hat_k: dict[str, float]
    tier1_overall_score: float | None
    semantic_score: float | None
    uncertainty: dict[str, Any]
    judge_reliability: dict[str, Any] | None
    error_rows: list[ErrorRowNote]


class Metrics(TypedDict):
    """The metrics of one agent's rows: upstream's keys (§8.4), then ``extended``."""

    total_scenarios: int
    completed: int
    errors: int
    compliance_rate: float | None
    overall_score: float | None
    event_flag_rates: dict[str, float]
    labels: dict[str, LabelCount]
    by_column: dict[str, ColumnMetrics]
    by_group: dict[str, float]
    by_domain: dict[str, DomainMetrics]
    extended: ExtendedMetrics
    by_pressure_style: NotRequired[dict[str, dict[str, Any]]]
    repeatability: NotRequired[dict[str, Any]]


@dataclass(frozen=True)
class GateableMetric:
    """A metric a gate may name: its canonical name and how to read it from a payload (None when absent)."""

    name: str
    read: Callable[[Mapping[str, Any]], Any]

    def value(self, metrics: Mapping[str, Any]) -> float | None:
        try:
            value = self.read(metrics)
        except (KeyError, TypeError):  # a payload from another version, or one with no scored row
            return None
        return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _column(name: str) -> GateableMetric:
    return GateableMetric(name, lambda m: m["by_column"][name]["score"])


def _group(name: str) -> GateableMetric:
    return GateableMetric(name, lambda m: m["by_group"][name])


_BY_NAME: dict[str, GateableMetric] = {
    "compliance": GateableMetric("compliance", lambda m: m["compliance_rate"]),
    "full_compliance": GateableMetric("compliance", lambda m: m["compliance_rate"]),
    "overall": GateableMetric("overall", lambda m: m["overall_score"]),
    "tier1_overall": GateableMetric("tier1_overall", lambda m: m["extended"]["tier1_overall_score"]),
    "semantic": GateableMetric("semantic", lambda m: m["extended"]["semantic_score"]),
    **{slug(name): _column(name) for name in COLUMNS},
    **{slug(name): _group(name) for name in GROUPS},
}
_PASS_K = re.compile(r"^pass\^(\d+)$")


def gateable_metric(name: str) -> GateableMetric | None:
    """The metric ``name`` stands for (``compliance``, ``overall``, ``pass^K``, a column or group), or None."""
    match = _PASS_K.match(name.strip())
    if match:
        k = match.group(1)
        return GateableMetric(f"pass^{k}", lambda m: m["extended"]["pass_hat_k"][k])
    return _BY_NAME.get(slug(name))


def unknown_metric(name: str) -> str | None:
    """Why ``name`` is not a gateable metric, or None."""
    if gateable_metric(name) is not None:
        return None
    aliases = [key for key in _BY_NAME if key not in {slug(n) for n in (*COLUMNS, *GROUPS)}]
    known = ", ".join([*aliases, "pass^K", "a column or group name (e.g. 'Policy Activation')"])
    return f"unknown metric {name!r}; use one of: {known}"


def metric_value(metrics: Mapping[str, Any], name: str) -> float | None:
    """The value of the gateable metric ``name`` in a metrics payload (None when absent or not a number)."""
    metric = gateable_metric(name)
    return None if metric is None else metric.value(metrics)
