"""``pi gate``: the CI gate applied to results files after the run (the shards of one run, merged).

A sharded run cannot gate inside pytest: no shard sees the whole run. ``pi gate`` reads the run's
results files (several: its shards, merged as ``pi report`` merges them), applies the same gates
as the plugin (:func:`~pytest_pibench.plugin.gates.check_gates`: thresholds, ``--min-pass``, the
baseline in exact or statistical mode), prints the verdict as the run's summary does, and exits as
the run would have: 0 passed, 8 failed, 10 inconclusive, 9 when the numbers are not valid (a
missing shard, the error budget). ``--results`` writes the run with the verdict under ``gate``,
for ``pi report --markdown``.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

import pytest

from pytest_pibench.plugin.gate_verdicts import VERDICT_WORDS, exit_status, gate_record
from pytest_pibench.plugin.gates import check_gates, read_gate_inputs
from pytest_pibench.plugin.settings import Settings, parse_gates, parse_min_pass
from pytest_pibench.report._command import ReportError, one_run
from pytest_pibench.results.document import atomic_write_json, validity
from pytest_pibench.run.config import RunConfig

__all__ = ["gate_command", "run_gate"]


def run_gate(args: argparse.Namespace, files: Sequence[str]) -> int:
    """``pi gate`` from its parsed flags."""
    return gate_command(files, baseline=args.baseline, fail_under=args.fail_under, min_pass=args.min_pass,
                        gate_mode=args.gate_mode, tolerance=args.tolerance, confidence=args.confidence,
                        max_error_rate=args.max_error_rate, results=args.results)  # fmt: skip


def gate_command(
    files: Sequence[str],
    *,
    baseline: str | None = None,
    fail_under: Sequence[str] = (),
    min_pass: str | None = None,
    gate_mode: str = "exact",
    tolerance: float = 0.0,
    confidence: float = 0.95,
    max_error_rate: float | None = None,
    results: str | None = None,
) -> int:
    """Gate the run in ``files`` and print the verdict; the exit code.

    Raises:
        ReportError: a missing or malformed file, shards that cannot be merged, no gate, a bad gate.
    """
    document = one_run(files)
    agents = tuple(document.get("agents") or {})
    try:
        settings = Settings(
            run=RunConfig(agents=agents, min_pass=parse_min_pass(min_pass)),
            fail_under=parse_gates(list(fail_under)),
            baseline=baseline,
            tolerance=tolerance,
            gate_mode=gate_mode,
            confidence=confidence,
        )
    except pytest.UsageError as exc:
        raise ReportError(str(exc).replace("--pibench-", "--")) from None
    if not settings.has_gate:
        raise ReportError("no gate: give --baseline PATH[::AGENT], --fail-under METRIC=VALUE or --min-pass K/N")
    try:
        reference = read_gate_inputs(settings, agents, prefix="--")
    except ValueError as exc:
        raise ReportError(str(exc)) from None
    metrics = {agent: data["metrics"] for agent, data in (document.get("agents") or {}).items()}
    verdict = check_gates(settings, metrics, document["rows"], reference)
    document["gate"] = gate_record(settings, verdict, document["rows"], reference)
    if max_error_rate is not None:  # the budget this command was given, not the run's own
        complete, ended_by = document.get("complete", True), document.get("ended_by")
        document["validity"] = validity(document["rows"], max_error_rate=max_error_rate, complete=complete,
                                        ended_by=ended_by)  # fmt: skip
    problems: list[str] = list(document["validity"]["problems"]) if "validity" in document else []
    # Not valid (a missing shard, a partial run, the error budget): exit 9 whatever the gate says, as pi report.
    code = exit_status(0, verdict, over_budget=bool(problems), other_failures=0)
    for problem in problems:
        print(f"NOT VALID FOR THE LEADERBOARD: {problem}")
    print(f"Gate: {VERDICT_WORDS[document['gate']['verdict']]} (exit code {code})")
    for line in verdict.lines:
        print(f"  {line}")
    if results:
        atomic_write_json(results, document)
        print(f"wrote {results}")
    return code
