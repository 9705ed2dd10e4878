"""The hooks pytest-pibench calls, for plugins and ``conftest.py`` files that extend a benchmark run.

Registered through ``pytest_addhooks`` by the plugin. Implement a hook by
defining a function of the same name in a ``conftest.py`` or a plugin module;
as with every pytest hook, an implementation may take any subset of the
arguments, by name. Everything a hook returns must be builtins only (``dict``,
``list``, ``str``, numbers, ``bool``, ``None``): it is written to the results
file as JSON, and row fields cross process boundaries under pytest-xdist.

Where each hook runs under ``pytest -n N``: ``pytest_pibench_row`` on the
worker that ran the item; ``pytest_pibench_metrics`` and
``pytest_pibench_summary_rows`` on the controller only;
``pytest_pibench_participant_schemes`` on every process (each one resolves the
specs it runs). Without xdist, all run in the one process.

``pi report`` recomputes metrics from a results file without pytest: the
entries ``pytest_pibench_metrics`` added are in the results file, but not in
what ``pi report`` derives afresh.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from pytest_pibench.participants.schemes import Scheme
    from pytest_pibench.results.types import ResultRow, ResultsDocument
    from pytest_pibench.scenario.models import Scenario

__all__ = [
    "pytest_pibench_metrics",
    "pytest_pibench_participant_schemes",
    "pytest_pibench_row",
    "pytest_pibench_summary_rows",
]


@pytest.hookspec
def pytest_pibench_row(row: ResultRow, item: pytest.Item, scenario: Scenario) -> dict[str, Any] | None:
    """Return fields to add to the result row of a scenario item (under ``row["extra"]``), or None.

    Called once per scenario item whose episode ran (or errored), after the row
    is complete and before it leaves the process: on the xdist worker that ran
    the item, so under ``-n N`` implement it in a ``conftest.py`` or a plugin
    the workers load too. Not called for rows reused by ``--pibench-resume``
    (they keep the fields they were written with), nor for the error rows the
    controller makes for items that crashed before they had a row.

    :param row: the finished row. Read it; do not change it.
    :param item: the scenario test item (its ``nodeid``, markers, ``config``).
    :param scenario: the loaded scenario model.
    :return: new top-level fields, builtins only (JSON). A field the row already
        has, or one two implementations both return, is an error that fails the
        item: a hook adds information, it never rewrites a result.

    Example, in ``conftest.py``::

        import platform

        def pytest_pibench_row(row, item, scenario):
            return {"host": platform.node(), "requester_known": scenario.environment_setup.customer is not None}

    Use in conftest plugins: called through ``item.ihook``, so a ``conftest.py``
    applies to the scenario files beneath its folder.
    """


@pytest.hookspec
def pytest_pibench_metrics(
    metrics: dict[str, Any], rows: Sequence[ResultRow], agent: str, config: pytest.Config
) -> dict[str, Any] | None:
    """Return entries to add under ``metrics["extended"]`` of one agent, or None.

    Called on the controller at the end of the run, once per agent, after the
    built-in metrics are computed and before the results file, the leaderboard
    artifact, the gates and the terminal summary use them.

    :param metrics: the agent's metrics (``compliance_rate``, ``by_column``,
        ``extended``...). Read them; do not change them.
    :param rows: every row of that agent, error rows included (``status`` says which).
    :param agent: the agent's name, as rows carry it.
    :param config: the pytest config.
    :return: new keys of ``metrics["extended"]``, builtins only. A key that is
        already there, or one two implementations both return, is an error.

    Example, in ``conftest.py``::

        def pytest_pibench_metrics(rows):
            scored = [r for r in rows if r["status"] == "completed"]
            steps = [r["step_count"] for r in scored]
            return {"mean_steps": sum(steps) / len(steps) if steps else None}

    Use in conftest plugins: only the initial ``conftest.py`` files (the
    rootdir's and those of the paths given) and plugins are called.
    """


@pytest.hookspec
def pytest_pibench_summary_rows(
    document: ResultsDocument, config: pytest.Config
) -> Iterable[tuple[str, Sequence[str]]] | None:
    """Return rows to add to the terminal summary table, or None.

    Called on the controller when the terminal summary is printed, after the
    results file was written. The table has one column per agent, in the
    order of ``document["agents"]``; added rows come after the built-in ones.
    For free text below the table, implement pytest's own
    ``pytest_terminal_summary``.

    :param document: the results document (settings, ``agents`` with their
        metrics, including what ``pytest_pibench_metrics`` added, and ``rows``).
    :param config: the pytest config.
    :return: ``(label, [cell per agent])`` pairs, each cell a ``str``. A row
        whose cell count differs from the number of agents is an error.

    Example, in ``conftest.py``::

        def pytest_pibench_summary_rows(document):
            agents = document["agents"].values()
            return [("Mean steps", [f"{a['metrics']['extended']['mean_steps']:.1f}" for a in agents])]

    Use in conftest plugins: only the initial ``conftest.py`` files and plugins are called.
    """


@pytest.hookspec
def pytest_pibench_participant_schemes(config: pytest.Config) -> Scheme | Iterable[Scheme] | None:
    """Return spec schemes to add for ``--pibench-agent``, ``--pibench-user`` and ``--pibench-judge``, or None.

    Called once per process, the first time a spec is resolved (at start-up
    on the controller and on each xdist worker). A scheme named ``NAME`` makes
    specs ``NAME`` and ``NAME:ARGUMENT`` resolve through it (see
    :class:`pytest_pibench.participants.schemes.Scheme`). The same schemes can
    ship in a distribution instead, as entry points of the group
    ``pytest_pibench.participants``; those work outside pytest too.

    :param config: the pytest config.
    :return: a :class:`~pytest_pibench.participants.schemes.Scheme` or a list
        of them. A name that is built in, installed through an entry point or
        returned twice is a usage error naming both sources.

    Example, in ``conftest.py``::

        from pytest_pibench.participants.schemes import Scheme

        def _echo(argument, params):
            return lambda scenario: EchoAgent(greeting=argument or "hello")

        def pytest_pibench_participant_schemes():
            return [Scheme("echo", "echo[:GREETING]", agent=_echo)]

    then ``pytest --pibench-agent=echo:hi``.

    Use in conftest plugins: only the initial ``conftest.py`` files and plugins are called.
    """
