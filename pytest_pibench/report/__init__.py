"""report: ``pi report`` (leaderboard artifacts from results files), the HTML report and the markdown summary.

See README "Results, reports and CI gates", "The HTML report" and "Continuous integration".
"""

from pytest_pibench.report._command import ReportError, html_report, markdown_report, read_run, report_command

__all__ = ["ReportError", "html_report", "markdown_report", "read_run", "report_command"]
