"""``pi gate``'s flags, apart from the command so that building ``pi``'s parser imports nothing heavy."""

from __future__ import annotations

from typing import Any

from pytest_pibench.inputs import argument_type, finite_float

__all__ = ["add_gate_parser"]


def _fraction(low: float, high: float, *, high_open: bool = False) -> Any:
    return argument_type(lambda text: finite_float(text, low, high, high_open=high_open), "number")


def add_gate_parser(commands: Any) -> None:
    """``pi gate``'s flags: the plugin's gate options without their ``--pibench-`` prefix."""
    gate = commands.add_parser(
        "gate", help="apply the CI gate to a finished run's results files (several: its shards, merged); exit 0/8/9/10"
    )
    gate.add_argument("file", nargs="+", help="results files; several are merged (shards of one run)")
    gate.add_argument("--baseline", metavar="PATH[::AGENT]", help="results file to compare with (the main branch's)")
    gate.add_argument("--fail-under", action="append", default=[], metavar="METRIC=VALUE",
                      help="threshold (repeatable): compliance, overall, a group, a column, pass^k")  # fmt: skip
    gate.add_argument("--min-pass", metavar="K/N", help="every scenario passes at least K of its N trials")
    gate.add_argument("--gate-mode", choices=("exact", "statistical"), default="exact",
                      help="exact (any drop past --tolerance fails) or statistical (passed / regressed / inconclusive)")
    gate.add_argument("--tolerance", type=_fraction(0, 1), default=0.0, help="allowed drop (default 0)")
    gate.add_argument("--confidence", type=_fraction(0.5, 1, high_open=True), default=0.95,
                      help="confidence of the statistical gate (default 0.95)")  # fmt: skip
    gate.add_argument("--max-error-rate", type=_fraction(0, 1),
                      help="error-row budget per agent (default: the run's own --pibench-max-error-rate)")  # fmt: skip
    gate.add_argument("--results", help="also write the (merged) run with the gate's verdict here")
