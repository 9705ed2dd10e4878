"""The host adapter: every reach beyond pytest's and xdist's public API goes through ``plugin.host``."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from pytest_pibench.plugin import host

PLUGIN = Path(__file__).resolve().parents[2] / "pytest_pibench" / "plugin"
PRIVATE = ("workerinput", "_sub_test_description", "torun", "nextitem_index", "_report_sections", "_getreprcrash")


def test_no_other_plugin_module_reaches_into_the_host():
    """Besides host.py only the documented xdist hook pytest_configure_node touches ``node.workerinput``."""
    found = []
    for path in sorted(PLUGIN.glob("*.py")):
        if path.name == "host.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            name = node.attr if isinstance(node, ast.Attribute) else node.value if (
                isinstance(node, ast.Constant) and isinstance(node.value, str)) else None  # fmt: skip
            if name in PRIVATE:
                found.append((path.name, getattr(node, "lineno", 0), name))
            if isinstance(node, (ast.Import, ast.ImportFrom)):  # pytest's private package
                modules = [node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
                found += [(path.name, node.lineno, m) for m in modules if m.split(".")[0] == "_pytest"]
    assert [(f, n) for f, _, n in found] == [("__init__.py", "workerinput")], found


def test_outside_xdist_nothing_is_a_worker(pytester: pytest.Pytester):
    config = pytester.parseconfig()
    assert host.worker_input(config) is None and not host.is_xdist_worker(config)
    assert host.worker_count(config) == 1 and host.xdist_queue(config) is None


def test_a_worker_reads_its_input_and_the_worker_count(pytester: pytest.Pytester):
    config = pytester.parseconfig()
    config.workerinput = {"workercount": 3, "pibench_resume": []}  # what xdist sets on a worker
    assert host.is_xdist_worker(config) and host.worker_count(config) == 3
    assert host.xdist_queue(config) == []  # no xdist worker plugin here: an empty queue, episodes run in items


def test_subtests_run_without_capture_and_the_option_is_restored(pytester: pytest.Pytester):
    config = pytester.parseconfig("--capture=fd")
    with host.subtests_without_capture(config):
        assert config.option.capture == "no"
    assert config.option.capture == "fd"


def test_only_subtest_reports_are_subtest_reports():
    report = pytest.TestReport("x::y", ("x", 1, "y"), {}, "passed", None, "call")
    assert not host.is_subtest_report(report)
