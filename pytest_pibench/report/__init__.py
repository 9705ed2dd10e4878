"""report: ``pi report`` (leaderboard artifacts from results files) and the HTML report.

See README "Results, reports and CI gates" and "The HTML report".
"""

from pytest_pibench.report._command import ReportError, html_report, read_run, report_command

__all__ = ["ReportError", "html_report", "read_run", "report_command"]
