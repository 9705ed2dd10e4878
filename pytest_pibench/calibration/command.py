"""``pi calibration``: re-score every blind-play calibration record and report issue 24's targets.

    pi calibration [DIR] [--scenarios ROOT] [--json] [--check]

DIR is a folder of calibration records (default: the shipped ``calibration/``), ROOT the scenario
set they are measured against (default: the shipped scenarios). Exit codes: 0 for the report;
with ``--check``, 1 when a target is not met or a record is stale or invalid; 4 for a bad argument
(a folder that does not exist).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

__all__ = ["add_calibration_parser", "calibration_command", "format_calibration"]

_USAGE_ERROR = 4

if TYPE_CHECKING:  # not at run time: pi builds its parser without the scoring stack
    from pytest_pibench.calibration.report import Calibration, DomainSummary


def add_calibration_parser(commands: Any) -> None:
    """Add ``calibration`` to ``pi``'s subcommands (``commands`` is argparse's subparsers object)."""
    parser = commands.add_parser(
        "calibration", help="re-score the blind-play calibration records; coverage, compliance, targets"
    )
    parser.add_argument("dir", nargs="?", help="a folder of calibration records (default: the shipped calibration/)")
    parser.add_argument("--scenarios", metavar="ROOT", help="the scenario set measured (default: the shipped one)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument(
        "--check", action="store_true", help="exit 1 when a target is not met or a record is stale or invalid"
    )


def calibration_command(args: argparse.Namespace) -> int:
    """Run ``pi calibration``."""
    from pytest_pibench.calibration.records import bundled_calibration_dir
    from pytest_pibench.calibration.report import calibrate
    from pytest_pibench.paths import bundled_scenarios_dir

    for given in (args.dir, args.scenarios):
        if given is not None and not Path(given).is_dir():
            print(f"pi calibration: no such folder: {given}", file=sys.stderr)
            return _USAGE_ERROR
    calibration = calibrate(args.dir or bundled_calibration_dir(), args.scenarios or bundled_scenarios_dir())
    if args.json:
        print(json.dumps(calibration.to_dict(), indent=1))
    else:
        print(format_calibration(calibration))
    return 1 if args.check and not calibration.ok() else 0


def _pct(part: int, whole: int) -> str:
    return f"{part}/{whole} ({part / whole:.0%})" if whole else "0/0"


def _line(summary: DomainSummary) -> str:
    from pytest_pibench.results.metrics import wilson_interval

    if summary.blind:
        low, high = wilson_interval(summary.blind_passed, summary.blind)
        compliance = f"{_pct(summary.blind_passed, summary.blind)}, 95% CI {low:.0%}-{high:.0%}"
    else:
        compliance = "no blind records"
    f = summary.failures
    return (
        f"{summary.domain or 'overall'}: {summary.scenarios} scenarios;"
        f" blind-played {_pct(summary.covered, summary.scenarios)}"
        f"\n    blind full compliance {compliance}; decision = label {_pct(summary.decision_correct, summary.blind)}"
        f"\n    failed checks: a {f['a']}, b {f['b']}, c {f['c']}, unclassified {f['unclassified']}"
        f" (b/c fixed since review: {summary.fixed}); unreviewed blind records {summary.unreviewed};"
        f" stale records {summary.stale}"
        + (f"; superseded (kept, not counted) {summary.superseded}" if summary.superseded else "")
    )


def format_calibration(calibration: Calibration) -> str:
    """The report as text: per domain, overall, the targets, then stale and invalid records."""
    out = [
        f"calibration records: {calibration.records_root} ({len(calibration.outcomes)} re-scored, "
        f"{len(calibration.invalid)} invalid)",
        f"scenario set: {calibration.scenarios_root}",
        "",
    ]
    out += [_line(calibration.summary(domain)) for domain in calibration.domains()]
    out += [_line(calibration.summary()), "", "targets (issue 24 §2):"]
    out += [f"  [{'met' if t.met else 'NOT MET'}] {t.text}: {t.detail}" for t in calibration.targets()]
    if calibration.stale:
        out += ["", "stale records (the current verdict is not verdict_at_review: re-review them):"]
        out += [f"  {o.path}: {'; '.join(o.stale)}" for o in calibration.stale]
    if calibration.invalid:
        out += ["", "invalid records:"] + [f"  {message}" for message in calibration.invalid]
    if calibration.warnings:
        out += ["", "scenarios of the set that do not load (pi validate says why):"]
        out += [f"  {warning}" for warning in calibration.warnings]
    return "\n".join(out)
