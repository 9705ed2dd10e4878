"""Reports of failed checks built without pytest's traceback walk (plugin name ``pibench-check-reports``).

A scenario item reports each check as a subtest and fails (or xfails, Tier 2)
every failed one with ``pytrace=False``, so pytest shows only the message (its
``value`` traceback style). To get there pytest still filters and walks the
whole traceback of each such exception: path look-ups and ``stat`` calls for
every frame, about 0.8 ms a failed check, which in a run of a weak agent
(thousands of failed checks) was the largest share of pytest's reporting.

For exceptions the plugin marks with :func:`plain`, this hook builds the same
report directly: the same ``value``-style representation, the same crash
location (what the short test summary and JUnit XML read), the same sections.
``--full-trace`` and exceptions that carry a cause or context get pytest's own
report. ``-p no:pibench-check-reports`` turns it off (the tests compare the two).
"""

from __future__ import annotations

from typing import TypeVar

import pytest

from pytest_pibench.plugin.host import message_only_report

__all__ = ["PLUGIN_NAME", "plain", "pytest_runtest_makereport"]

PLUGIN_NAME = "pibench-check-reports"
_MARK = "_pibench_plain_report"
_E = TypeVar("_E", bound=BaseException)


def plain(exc: _E) -> _E:
    """``exc`` (raised with ``pytrace=False``) marked for the quick report."""
    setattr(exc, _MARK, True)
    return exc


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> pytest.TestReport | None:
    """The report of a marked failure; None (pytest's own report) for anything else."""
    excinfo = call.excinfo
    if excinfo is None or call.when != "call" or not getattr(excinfo.value, _MARK, False):
        return None
    value = excinfo.value
    if value.__cause__ is not None or (value.__context__ is not None and not value.__suppress_context__):
        return None  # pytest shows the chain
    if item.config.getoption("fulltrace", False):
        return None
    return message_only_report(item, call)
