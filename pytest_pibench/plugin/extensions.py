"""Calling the pi-bench hooks of :mod:`pytest_pibench.plugin.hookspec` and checking what they return.

Hooks add information; they never rewrite a result. So every merge here
refuses a key that is already present (or returned twice) and a value that is
not JSON, with a message naming the hook, instead of letting a plugin change a
score quietly or break the results file later.
"""

from __future__ import annotations

import contextlib
import inspect
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

import pytest

if TYPE_CHECKING:
    from pytest_pibench.participants.schemes import Scheme, SchemeRegistry
    from pytest_pibench.results.types import ResultRow, ResultsDocument
    from pytest_pibench.scenario.models import Scenario

__all__ = [
    "SCHEMES_KEY",
    "add_extension_metrics",
    "add_row_fields",
    "carry_extension_metrics",
    "extension_summary_rows",
    "participant_schemes",
]

SCHEMES_KEY = pytest.StashKey["SchemeRegistry"]()
"""The spec schemes of this process: built in, entry points, and ``pytest_pibench_participant_schemes``."""


def participant_schemes(config: pytest.Config) -> SchemeRegistry:
    """The registry every spec of this run resolves through (built once per process).

    Raises:
        AgentSpecError: when two sources define the same scheme name, or a hook returns something else.
    """
    registry = config.stash.get(SCHEMES_KEY, None)
    if registry is None:
        from pytest_pibench.participants.schemes import Scheme
        from pytest_pibench.participants.specs import default_schemes

        registry = default_schemes()
        for returned in config.hook.pytest_pibench_participant_schemes(config=config):
            for scheme in [returned] if isinstance(returned, Scheme) else returned:
                registry.add(scheme, _hook_origin(scheme))
        config.stash[SCHEMES_KEY] = registry
    return registry


def _hook_origin(scheme: Scheme | Any) -> str:
    """Where a hook-returned scheme was defined, for clash messages: its functions' module and file."""
    function = next((f for f in (getattr(scheme, r, None) for r in ("agent", "user", "judge")) if f), None)
    where = getattr(function, "__module__", None) or "an unknown module"
    with contextlib.suppress(TypeError):  # a builtin or a callable object has no file
        where += f" ({inspect.getfile(function)})" if function is not None else ""
    return f"the pytest_pibench_participant_schemes hook in {where}"


def add_row_fields(item: pytest.Item, row: ResultRow, scenario: Scenario) -> None:
    """Add the fields ``pytest_pibench_row`` implementations return under ``row["extra"]`` (through ``item.ihook``).

    Namespaced so a hook can never rewrite a result field, and the row keeps its declared shape.
    """
    results = item.ihook.pytest_pibench_row(row=row, item=item, scenario=scenario)
    extra: dict[str, Any] = dict(row.get("extra") or {})
    _merge(extra, results, "pytest_pibench_row", 'the row\'s "extra"')
    if extra:
        row["extra"] = extra


def add_extension_metrics(config: pytest.Config, document: ResultsDocument) -> None:
    """Add what ``pytest_pibench_metrics`` returns to each agent's ``metrics["extended"]`` in ``document``."""
    rows = document.get("rows") or []
    for agent, results in (document.get("agents") or {}).items():
        metrics = results["metrics"]
        mine = [r for r in rows if str(r.get("agent")) == agent]
        returned = config.hook.pytest_pibench_metrics(metrics=metrics, rows=mine, agent=agent, config=config)
        where = f'metrics["extended"] of {agent}'
        _merge(cast(dict[str, Any], metrics["extended"]), returned, "pytest_pibench_metrics", where)


def carry_extension_metrics(artifact: Mapping[str, Any], metrics: Mapping[str, Any]) -> None:
    """Give a leaderboard artifact (metrics recomputed from rows) the hook-added ``extended`` entries too."""
    extended = artifact["results"][0]["metrics"].setdefault("extended", {})
    for key, value in (metrics.get("extended") or {}).items():
        extended.setdefault(key, value)


def extension_summary_rows(config: pytest.Config, document: ResultsDocument) -> list[tuple[str, list[str]]]:
    """The summary-table rows ``pytest_pibench_summary_rows`` returns, checked: one string cell per agent."""
    columns = len(document.get("agents") or {})
    rows: list[tuple[str, list[str]]] = []
    for returned in config.hook.pytest_pibench_summary_rows(document=document, config=config):
        for entry in returned:
            label, cells = _summary_row(entry)
            if len(cells) != columns:
                raise ValueError(
                    f"pytest_pibench_summary_rows: row {label!r} has {len(cells)} cells for {columns} agent column(s)"
                )
            rows.append((label, cells))
    return rows


def _summary_row(entry: Any) -> tuple[str, list[str]]:
    if (
        isinstance(entry, Sequence)
        and len(entry) == 2
        and isinstance(entry[0], str)
        and isinstance(entry[1], Sequence)
        and not isinstance(entry[1], str)
        and all(isinstance(cell, str) for cell in entry[1])
    ):
        return entry[0], list(entry[1])
    raise TypeError(f"pytest_pibench_summary_rows returned {entry!r}: expected (label, [str cell per agent])")


def _merge(target: dict[str, Any], results: Iterable[Any], hook: str, what: str) -> None:
    """Add every returned mapping to ``target``; nothing is added unless all of it is valid."""
    added: dict[str, Any] = {}
    for fields in results:
        if not isinstance(fields, Mapping):
            raise TypeError(f"{hook} returned {fields!r}: expected a dict of new fields, or None")
        for key, value in fields.items():
            if not isinstance(key, str):
                raise TypeError(f"{hook} returned the key {key!r}: keys are strings")
            if key in target or key in added:
                raise ValueError(f"{hook} returned {key!r}, which {what} already has: hooks add fields, never replace")
            try:
                json.dumps(value, allow_nan=False)  # strict JSON: results files never hold NaN
            except (TypeError, ValueError) as exc:
                raise TypeError(f"{hook} returned {key!r} = {value!r}: not JSON ({exc}); use builtins only") from None
            added[key] = value
    target.update(added)
