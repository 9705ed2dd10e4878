"""report: ``pi report`` (leaderboard artifacts from results files), the HTML report, the markdown summary
and ``pi gate``.

See README "Results, reports and CI gates", "The HTML report" and "Continuous integration". The names
below load on first use, so that ``pi``'s argument parser can import ``report._gate_parser`` alone.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_pibench.report._command import ReportError, html_report, markdown_report, read_run, report_command

__all__ = ["ReportError", "html_report", "markdown_report", "read_run", "report_command"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        return getattr(importlib.import_module("pytest_pibench.report._command"), name)
    raise AttributeError(f"module 'pytest_pibench.report' has no attribute {name!r}")
