"""``pi compare``: two agents (two results files, or two agents of one file) compared pair by scenario."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pytest_pibench.bounds import strict_dumps
from pytest_pibench.report._command import ReportError, read_run
from pytest_pibench.results.compare import compare_rows
from pytest_pibench.results.metrics import partial_credit

__all__ = ["compare_command", "format_comparison"]


def _rows_of(files: Sequence[str], agent_a: str | None, agent_b: str | None) -> tuple[str, list[Any], str, list[Any]]:
    for name in files:
        if not Path(name).exists():
            raise ReportError(f"no such file or directory: {name}")
    documents = [(name, read_run(name)) for name in files]
    if len(documents) == 2:
        (name_a, doc_a), (name_b, doc_b) = documents
        rows_a = [r for r in doc_a["rows"] if agent_a is None or r.get("agent") == agent_a]
        rows_b = [r for r in doc_b["rows"] if agent_b is None or r.get("agent") == agent_b]
        label_a = f"{agent_a or _only_agent(rows_a, name_a)} ({name_a})"
        label_b = f"{agent_b or _only_agent(rows_b, name_b)} ({name_b})"
        return label_a, rows_a, label_b, rows_b
    rows = list(documents[0][1]["rows"])
    agents = list(dict.fromkeys(str(r.get("agent")) for r in rows))
    first, second = agent_a or (agents[0] if agents else ""), agent_b or (agents[1] if len(agents) > 1 else "")
    if not second or first == second:
        raise ReportError(f"{files[0]} holds one agent ({', '.join(agents)}): give two files, or --a and --b")
    return first, [r for r in rows if r.get("agent") == first], second, [r for r in rows if r.get("agent") == second]


def _only_agent(rows: Sequence[Any], name: str) -> str:
    agents = sorted({str(r.get("agent")) for r in rows})
    if len(agents) != 1:
        raise ReportError(f"{name} holds {len(agents)} agents ({', '.join(agents)}): choose one with --a/--b")
    return agents[0]


def _check_paired(
    files: Sequence[str], label_a: str, rows_a: Sequence[Any], label_b: str, rows_b: Sequence[Any]
) -> None:
    """Unlike things are not compared: with no scenario scored on both sides every difference would read 0."""
    scenarios_a = {r["scenario_id"] for r in rows_a}
    scenarios_b = {r["scenario_id"] for r in rows_b}
    where = " and ".join(files)
    if not scenarios_a & scenarios_b:
        raise ReportError(
            f"{where}: field 'scenario_id': no scenario in common between {label_a} and {label_b} "
            f"({len(scenarios_a)} and {len(scenarios_b)} scenarios): compare runs of the same scenarios"
        )
    scored_a = {r["scenario_id"] for r in rows_a if r["status"] == "completed"}
    scored_b = {r["scenario_id"] for r in rows_b if r["status"] == "completed"}
    if not scored_a & scored_b:
        raise ReportError(
            f"{where}: field 'status': no scenario in common was scored on both sides ({label_a}: {len(scored_a)} "
            f"scored, {label_b}: {len(scored_b)}; error rows are not scored): there is nothing to compare"
        )


def format_comparison(label_a: str, label_b: str, comparison: dict[str, Any]) -> list[str]:
    """The comparison as text lines: one per metric, B minus A with its interval, p-value and verdict."""
    lines = [f"{label_b} vs {label_a}: {comparison['paired_scenarios']} paired scenarios "
             f"(alpha {comparison['alpha']}; columns Holm-corrected)"]  # fmt: skip
    if comparison["only_a"] or comparison["only_b"]:
        lines.append(f"  not paired: {comparison['only_a']} only in A, {comparison['only_b']} only in B")
    for name, entry in comparison["metrics"].items():
        interval = entry["ci95"]
        span = f"[{interval[0]:+.3f}, {interval[1]:+.3f}]" if interval else "[no interval]"
        p = entry.get("p_adjusted", entry["p"])
        lines.append(f"  {name:<34} {entry['difference']:+.3f} {span:<18} p={p:.4f}  {entry['verdict']}")
    return lines


def compare_command(
    files: Sequence[str], *, agent_a: str | None = None, agent_b: str | None = None, alpha: float = 0.05,
    output: str | None = None,
) -> int:  # fmt: skip
    """``pi compare``: print the comparison (and write it as JSON to ``output``); exit 0.

    Raises:
        ReportError: for a missing file, a malformed row, agents that cannot be told apart, no scenario scored on
            both sides, or rows of sequential trials.
    """
    if len(files) not in (1, 2):
        raise ReportError("give one results file with two agents, or two results files")
    label_a, rows_a, label_b, rows_b = _rows_of(files, agent_a, agent_b)
    _check_paired(files, label_a, rows_a, label_b, rows_b)
    try:
        comparison = compare_rows(rows_a, rows_b, partial_credit, alpha=alpha)
    except ValueError as exc:
        raise ReportError(str(exc)) from None
    print("\n".join(format_comparison(label_a, label_b, comparison)))
    if output:
        Path(output).write_text(strict_dumps({"a": label_a, "b": label_b, **comparison}, indent=1) + "\n")
        print(f"wrote {output}")
    return 0
