"""Every place the plugin relies on pytest or pytest-xdist beyond their public API, in one module.

Tested with pytest 9.0 and pytest-xdist 3.x (the ranges ``pyproject.toml`` pins). Each function
says what it reaches for and why; where the host offers a public way, it is used instead
(``pytest.SubtestReport`` for the subtest reports). When a host upgrade breaks one of these, this
is the only module to change.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from _pytest._code.code import ExceptionChainRepr, ReprEntry, ReprTraceback

__all__ = [
    "freeze_long_lived",
    "message_only_report",
    "is_subtest_report",
    "is_xdist_worker",
    "subtest_description",
    "subtests_without_capture",
    "worker_count",
    "worker_input",
    "xdist_queue",
]


def worker_input(config: pytest.Config) -> Mapping[str, Any] | None:
    """xdist's ``config.workerinput`` on a worker (what the controller handed it), None elsewhere.

    Documented by pytest-xdist for plugins that pass data to workers (``pytest_configure_node``).
    """
    value = getattr(config, "workerinput", None)
    return value if isinstance(value, Mapping) else None


def is_xdist_worker(config: pytest.Config) -> bool:
    """Whether this process is an xdist worker (the controller, or a run without xdist, is not)."""
    return worker_input(config) is not None


def worker_count(config: pytest.Config) -> int:
    """How many xdist workers share the run (1 without xdist): ``workerinput["workercount"]``."""
    given = (worker_input(config) or {}).get("workercount", 1)
    return int(given or 1)


def is_subtest_report(report: object) -> bool:
    """A report of a subtest (pytest 9's public ``pytest.SubtestReport``)."""
    return isinstance(report, pytest.SubtestReport)


def subtest_description(report: Any) -> str:
    """The ``[message]`` text pytest prints after SUBPASSED/SUBFAILED.

    Private in pytest 9.0 (``SubtestReport._sub_test_description``); used so the plugin's lines
    read exactly like pytest's own subtest lines.
    """
    return str(report._sub_test_description())


@contextlib.contextmanager
def subtests_without_capture(config: pytest.Config) -> Iterator[None]:
    """Report subtests without an output capture of their own, for the duration of the block.

    A subtest starts and stops an output capture (file descriptors and a temporary file) unless
    capturing is off; a check's subtest only reports a verdict already computed and prints nothing,
    so that capture is pure cost (most of the plugin's per-item time with two dozen checks). pytest
    reads ``config.option.capture`` as each subtest starts and has no public switch for it, so the
    option is set to ``"no"`` here and restored after; the item's own capture is untouched.
    """
    option: Any = config.option
    previous = getattr(option, "capture", None)
    if previous in (None, "no"):
        yield
        return
    option.capture = "no"
    try:
        yield
    finally:
        option.capture = previous


def xdist_queue(config: pytest.Config) -> list[int] | None:
    """The item indices queued for this xdist worker after the current item (None outside a worker).

    pytest-xdist keeps them in its worker plugin (``nextitem_index`` and the ``torun`` queue), which
    it does not publish; an xdist without them gives an empty queue, so episodes simply run in
    their items (the prefetch is an optimisation, never a requirement).
    """
    if not is_xdist_worker(config):
        return None
    for plugin in config.pluginmanager.get_plugins():
        torun = getattr(plugin, "torun", None)
        if torun is None or not hasattr(plugin, "nextitem_index"):
            continue
        upcoming: list[int] = []
        following = getattr(plugin, "nextitem_index", None)
        if isinstance(following, int):
            upcoming.append(following)
        lock: Any = getattr(torun, "lock", None)
        if callable(lock):
            with lock() as queued:
                upcoming += [i for i in queued if isinstance(i, int)]
        return upcoming
    return []


def freeze_long_lived() -> None:
    """Take what is alive now out of the cyclic GC's walks (``gc.freeze``), after a collection.

    Called once scenario items are collected: modules, scenarios, domains and items live to
    the end of the run, and every full collection walked them again (0.5-0.8 s of a 3.5 s
    oracle run, benchmarks/README.md). Objects made later are collected as before.
    """
    gc.collect()
    gc.freeze()


def message_only_report(item: pytest.Item, call: pytest.CallInfo[None]) -> pytest.TestReport:
    """The report pytest makes for ``call``'s ``pytrace=False`` failure, made without its traceback walk.

    pytest shows such a failure as its message alone (the ``value`` style), but only after
    filtering every frame of the traceback (path objects, ``stat`` calls) inside
    ``Node._repr_failure_py``: the largest cost of reporting thousands of failed checks. This
    builds the same ``ExceptionChainRepr`` (one ``value`` entry, the crash location pytest would
    take) and the same ``TestReport`` fields as ``TestReport.from_item_and_call``, which needs
    ``_pytest._code.code``'s classes, ``ExceptionInfo._getreprcrash`` and ``Item._report_sections``.
    The caller checks that the exception has no cause or context and that ``--full-trace`` is off.
    """
    excinfo = call.excinfo
    assert excinfo is not None
    entry = ReprEntry(str(excinfo.value).split("\n"), None, None, None, "value")
    longrepr = ExceptionChainRepr([(ReprTraceback([entry], None, style="value"), excinfo._getreprcrash(), None)])
    sections = [(f"Captured {key} {when}", content) for when, key, content in item._report_sections]
    return pytest.TestReport(
        getattr(item, "id", item.nodeid),  # pytest 9 reports carry the parsed id: skip a re-parse
        item.location,
        dict.fromkeys(item.keywords, 1),
        "failed",
        longrepr,
        "call",
        sections,
        call.duration,
        call.start,
        call.stop,
        user_properties=item.user_properties,
    )
