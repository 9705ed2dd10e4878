"""The quick reports of failed checks (plugin/check_reports.py) say exactly what pytest's own reports say.

Each run is made twice, once as users get it and once with ``-p no:pibench-check-reports`` (pytest
builds every report itself), and the outputs must match line for line: the failure sections, the
short test summary with its messages, JUnit XML, and the reports that cross xdist.
"""

from __future__ import annotations

import re

import pytest

from pytest_pibench.plugin.check_reports import PLUGIN_NAME

OFF = ("-p", f"no:{PLUGIN_NAME}")


def _normalised(text: str) -> str:
    text = re.sub(r"\d+(\.\d+)?s\b", "Ns", text)  # durations
    text = re.sub(r'(time|timestamp|hostname)="[^"]*"', r'\1="X"', text)  # JUnit attributes
    return re.sub(r"\[gw\d\]", "[gwN]", text)


def _both(project: pytest.Pytester, *args: str) -> tuple[pytest.RunResult, pytest.RunResult]:
    quick = project.runpytest(*args)
    (project.path / "report.xml").rename(project.path / "quick.xml")
    full = project.runpytest(*args, *OFF)
    return quick, full


@pytest.fixture
def judged(toy_project: pytest.Pytester) -> pytest.Pytester:
    toy_project.makepyfile(strict_judge="""
        class AlwaysNo:
            def judge(self, question, text):
                return "NO"
    """)
    toy_project.makeconftest("""
        import _pytest.nodes

        formatted = []
        original = _pytest.nodes.Node._repr_failure_py

        def counting(self, *args, **kwargs):
            formatted.append(self.nodeid)
            return original(self, *args, **kwargs)

        def pytest_configure(config):
            _pytest.nodes.Node._repr_failure_py = counting

        def pytest_unconfigure(config):
            _pytest.nodes.Node._repr_failure_py = original

        def pytest_terminal_summary(terminalreporter):
            terminalreporter.write_line(f"PYTEST FORMATTED {len(formatted)} FAILURES")
    """)
    return toy_project


def _formatted(result: pytest.RunResult) -> int:
    """How many failures pytest formatted itself (the project's conftest counts them)."""
    (count,) = (int(line.split()[2]) for line in result.outlines if line.startswith("PYTEST FORMATTED"))
    return count


def test_failed_and_xfailed_checks_read_the_same(judged: pytest.Pytester) -> None:
    args = ("scenarios", "--pibench-agent=baseline:deny", "--pibench-judge=strict_judge:AlwaysNo", "-p", "no:randomly",
            "-rA", "-v", "--junitxml=report.xml")
    quick, full = _both(judged, *args)
    assert quick.ret == full.ret == 1
    text = quick.stdout.str()
    assert "SUBFAIL" in text and "SUBXFAIL" in text  # both kinds of check report were made quickly
    assert re.search(r"\d+ of \d+ checks failed \[ALLOW -> DENY\]", text)  # the item's own failure section
    assert _formatted(quick) == 0 and _formatted(full) == 11  # 8 checks, 1 Tier-2, 2 items: all quick
    assert _normalised(text).replace("FORMATTED 0", "FORMATTED 11") == _normalised(full.stdout.str())
    quick_xml = (judged.path / "quick.xml").read_text()
    assert "<failure" in quick_xml and "<skipped" in quick_xml
    assert _normalised(quick_xml) == _normalised((judged.path / "report.xml").read_text())


def test_reports_cross_xdist_the_same(judged: pytest.Pytester) -> None:
    args = ("scenarios", "--pibench-agent=baseline:deny", "-n", "2", "-p", "no:randomly", "-rfE",
            "--junitxml=report.xml")
    quick, full = _both(judged, *args)
    assert quick.ret == full.ret == 1

    def summary(result: pytest.RunResult) -> list[str]:  # xdist interleaves the progress lines; the summary is sorted
        return sorted(_normalised(line) for line in result.outlines if line.startswith(("FAILED", "SUBFAIL")))

    assert summary(quick) and summary(quick) == summary(full)


def test_full_trace_keeps_pytests_report(judged: pytest.Pytester) -> None:
    result = judged.runpytest("scenarios", "--pibench-agent=baseline:deny", "-k", "TOY_001", "--full-trace")
    assert result.ret == 1
    assert "run_scenario_item" in result.stdout.str()  # the full traceback: pytest's own report
    assert _formatted(result) > 0
