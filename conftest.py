"""Repository-level pytest configuration: how the project's own tests run. Test helpers live in tests/conftest.py.

A plain ``pytest`` here is quick, so a contributor's first run is: the tests run on every core
(pytest-xdist's ``-n auto``) and the end-to-end tests marked ``slow`` are left out (``-m "not
slow"``). ``pytest -m slow`` runs those, ``pytest -m "slow or not slow"`` everything (CI runs
both). Left alone: a run that names ``-n``, ``-p no:xdist`` or ``-m``, tests named one by one
(``file.py::test``), a benchmark run (``--pibench-agent``: its numbers and timings are the
user's, see benchmarks/) and ``--co``; ``--pdb`` becomes ``-n 0`` (xdist does that itself).
"""

from __future__ import annotations

import os

import pytest


@pytest.hookimpl(tryfirst=True)  # before xdist reads -n
def pytest_cmdline_main(config: pytest.Config) -> None:
    option = config.option
    if (
        config.pluginmanager.has_plugin("xdist")
        and getattr(option, "numprocesses", None) is None
        and not getattr(option, "pibench_agent", None)
        and not option.collectonly
        and "PYTEST_XDIST_WORKER" not in os.environ
        and (os.cpu_count() or 1) > 1
    ):
        option.numprocesses = "auto"
    named_tests = any("::" in str(arg) for arg in config.args)
    if not option.markexpr and not getattr(option, "pibench_agent", None) and not named_tests:
        option.markexpr = "not slow"


def pytest_report_header(config: pytest.Config) -> str | None:
    if config.option.markexpr == "not slow":
        return "pytest-pibench tests: slow end-to-end tests left out (pytest -m slow runs them; CI runs all)"
    return None
