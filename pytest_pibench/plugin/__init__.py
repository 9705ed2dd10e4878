"""The pytest plugin (entry point ``pytest11: pibench``).

Scenario JSON files become test items when the benchmark is in use: with
``--pibench-agent`` (no paths: the bundled scenarios), for files given on the
command line, or for files under the ``pibench_scenarios`` ini folders. Each
item runs one episode; each Tier-1 check is a subtest; the controller gathers
the result rows, writes the results file, prints the summary and applies gates.

This module is imported by every pytest run of every project that has the
package installed, so it imports nothing heavy: the engine is loaded only once
a scenario is collected or an agent is named.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from pytest_pibench.paths import is_scenario_candidate, is_scenario_nodeid
from pytest_pibench.plugin import check_reports
from pytest_pibench.plugin.host import is_subtest_report, is_xdist_worker, subtest_description, worker_input
from pytest_pibench.plugin.keys import (
    AGENT_NAME_KEY,
    DONE_KEY,
    LABEL_MARKS,
    REDIRECTED_KEY,
    RESUME_KEY,
    ROW_KEY,
    SETTINGS_KEY,
    SETTLED_KEY,
    USAGE_ERROR_KEY,
)
from pytest_pibench.plugin.outputs import check_outputs
from pytest_pibench.plugin.settings import Settings, add_options, read_settings

__all__ = [
    "pytest_addhooks",
    "pytest_addoption",
    "pytest_cmdline_main",
    "pytest_collect_file",
    "pytest_collection_modifyitems",
    "pytest_configure",
    "pytest_generate_tests",
    "pytest_report_teststatus",
    "pibench_agent",
    "pibench_trial",
]


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    """The hooks plugins and conftest files implement to extend a run (:mod:`pytest_pibench.plugin.hookspec`)."""
    from pytest_pibench.plugin import hookspec

    pluginmanager.add_hookspecs(hookspec)


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


@pytest.hookimpl(tryfirst=True)  # pytest's own implementation runs the session: be before it
def pytest_cmdline_main(config: pytest.Config) -> None:
    """Under ``-n``, choose xdist's scheduling for the benchmark unless a ``--dist`` was given.

    With ``--pibench-trial-mode sequential``, ``loadscope``: every trial of a
    scenario file goes to one worker, in order, so each trial sees the outcomes
    before it (another ``--dist`` stays exact, it only saves fewer trials).
    With ``--pibench-concurrency`` above 1, work stealing.

    xdist's ``load`` scheduling hands a worker only a few items at a time, so its
    episodes could not run ahead (benchmarks/README.md: 2 x 32 in flight took 49.5 s
    with ``load``, 21.9 s with ``worksteal``). A ``--dist``/``-d`` given anywhere is kept.
    """
    option = config.option
    if not getattr(option, "numprocesses", None) or getattr(option, "dist", None) not in ("no", "load"):
        return
    given = [*config.invocation_params.args, *os.environ.get("PYTEST_ADDOPTS", "").split()]
    given += [str(a) for a in config.getini("addopts")]
    if any(a == "-d" or a.startswith(("--dist", "--distload")) for a in given):
        return
    if (config.getoption("pibench_trial_mode", None) or config.getini("pibench_trial_mode")) == "sequential":
        option.dist = "loadscope"  # a scenario's trials on one worker, in order: each sees the outcomes before it
        return
    raw = config.getoption("pibench_concurrency", None) or config.getini("pibench_concurrency")
    try:
        concurrency = int(raw) if raw not in (None, "") else 1
    except (TypeError, ValueError):
        return  # read_settings reports the bad value
    if concurrency > 1:
        option.dist = "worksteal"


def pytest_configure(config: pytest.Config) -> None:
    settings = read_settings(config)
    config.stash[SETTINGS_KEY] = settings
    config.pluginmanager.register(check_reports, check_reports.PLUGIN_NAME)  # blocked by -p no:<name>: None
    if not settings.run.agents and not is_xdist_worker(config):
        from pytest_pibench.plugin.run_hint import register_run_hint

        register_run_hint(config)
    if settings.run.domain_paths:
        from pytest_pibench.packs.loading import set_domain_paths

        set_domain_paths(settings.run.domain_paths)
    config.addinivalue_line("markers", "pibench: a pi-bench scenario item")
    for label, mark in LABEL_MARKS.items():
        config.addinivalue_line("markers", f"{mark}: pi-bench scenarios labelled {label}")
    check_outputs(config, settings)  # writable, and no other run writes the results path
    _load_resume(config, settings)
    if settings.run.agents or settings.run.judge or (settings.run.user != "scripted" and settings.scenario_dirs):
        _resolve_participants(config, settings)
    if settings.run.agents:
        _default_to_scenario_dirs(config, settings)
    from pytest_pibench.plugin.gates import read_gate_inputs
    from pytest_pibench.plugin.results_collector import ResultCollector  # light: no engine import at module level

    if settings.run.trial_mode == "sequential":
        from pytest_pibench.plugin.sequential import configure_sequential

        configure_sequential(config, settings)
    collector = ResultCollector(config, settings)
    try:  # the baseline is read where the gate is applied: the controller
        collector.baseline = read_gate_inputs(settings, settings.run.agents, baseline=not is_xdist_worker(config))
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from None
    config.pluginmanager.register(collector, "pibench-results")


def _resolve_participants(config: pytest.Config, settings: Settings) -> None:
    """Resolve every participant spec once, in the run's executor (which keeps them); a bad one is a usage error."""
    from pytest_pibench.participants.specs import AgentSpecError
    from pytest_pibench.plugin.item import executor_of

    option = "--pibench-agent"
    try:
        executor = executor_of(config)  # the plugins' schemes are read here: a clash is a usage error too
        for spec in settings.run.agents:
            executor.agent(spec)
        if settings.run.user != "scripted":
            option = "--pibench-user"
            executor.user()
        option = "--pibench-judge"
        executor.judge()
    except AgentSpecError as exc:
        raise pytest.UsageError(f"{option}: {exc}") from None


def _load_resume(config: pytest.Config, settings: Settings) -> None:
    """The controller reads ``--pibench-resume``; xdist workers get the rows through ``workerinput``."""
    from pytest_pibench.results.resume import ResumeIndex, load_resume

    workerinput = worker_input(config)
    if workerinput is not None:
        if "pibench_resume" in workerinput:
            config.stash[RESUME_KEY] = ResumeIndex.from_builtins(workerinput["pibench_resume"])
        return
    if settings.resume:
        try:
            config.stash[RESUME_KEY] = load_resume(settings.resume)
        except ValueError as exc:
            raise pytest.UsageError(f"--pibench-resume: {exc}") from None


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """xdist: hand the resume rows to each worker (builtins only)."""
    index = node.config.stash.get(RESUME_KEY, None)
    if index is not None:
        node.workerinput["pibench_resume"] = index.to_builtins()


def _default_to_scenario_dirs(config: pytest.Config, settings: Settings) -> None:
    """``--pibench-agent`` on the command line without paths runs the benchmark, not the project's tests.

    An agent set only in the ini file never replaces the paths pytest would collect: the project's tests run.
    """
    if config.args_source == pytest.Config.ArgsSource.ARGS or not config.getoption("pibench_agent"):
        return
    config.stash[REDIRECTED_KEY] = True
    if settings.scenario_dirs:
        config.args = [str(p) for p in settings.scenario_dirs]
    else:
        from pytest_pibench.paths import bundled_scenarios_dir

        config.args = [str(bundled_scenarios_dir())]


def _collection_root(file_path: Path, config: pytest.Config) -> Path | None:
    """The collected path (deepest first) the benchmark takes ``file_path`` from, or None when it does not."""
    settings = config.stash[SETTINGS_KEY]
    roots = [*settings.scenario_dirs]
    if config.args_source == pytest.Config.ArgsSource.ARGS or config.stash.get(REDIRECTED_KEY, False):
        roots += [(config.invocation_params.dir / arg.split("::")[0]).resolve() for arg in config.args]
    found = [root for root in roots if file_path == root or root in file_path.parents]
    # Only under the scenario folders of this run: an ini agent never turns project files into scenarios.
    return max(found, key=lambda root: len(root.parts)) if found else None


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    """Scenario candidates (:func:`is_scenario_candidate`: the rule ``pi`` uses too) become modules."""
    if file_path.suffix != ".json":
        return None
    root = _collection_root(file_path, parent.config)
    if root is None or not is_scenario_candidate(file_path, root):
        return None
    from pytest_pibench.plugin.scenario_files import ScenarioModule

    return ScenarioModule.from_parent(parent, path=file_path)


def _has_agent(item: pytest.Item) -> bool:
    """Whether a scenario item has an agent: ``--pibench-agent`` or a ``pibench_agent`` fixture of the project."""
    if item.config.stash[SETTINGS_KEY].run.agents:
        return True
    definitions = item.session._fixturemanager.getfixturedefs("pibench_agent", item) or ()
    return any(getattr(d.func, "__module__", __name__) != __name__ for d in definitions)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Scenario files found through the ini ``pibench_scenarios`` alone, with no agent, are not run.

    Plain ``pytest`` (or ``pytest tests/``) in a project that keeps scenario
    files among its tests or configures scenario folders, but names no agent,
    runs the project's tests and leaves the results file alone: those items are
    deselected. A scenario file named on the command line without an agent
    still fails, saying how to name one.
    """
    named: set[Path] = set()
    if config.args_source == pytest.Config.ArgsSource.ARGS:
        named = {(config.invocation_params.dir / arg.split("::")[0]).resolve() for arg in config.args}
    idle = [
        i
        for i in items
        if getattr(getattr(i, "obj", None), "_pibench_scenario", False)
        and i.path.resolve() not in named
        and not _has_agent(i)
    ]
    if idle:
        keep = {id(i) for i in idle}
        items[:] = [i for i in items if id(i) not in keep]
        config.hook.pytest_deselected(items=idle)
    shard = config.stash[SETTINGS_KEY].shard
    if shard is not None:
        _keep_shard(config, items, shard)


def _keep_shard(config: pytest.Config, items: list[pytest.Item], shard: tuple[int, int]) -> None:
    """``--pibench-shard I/N``: the scenario items at positions I-1, I-1+N, ... of the node ids in order.

    Node ids, not collection order, so every machine computes the same split
    whatever its paths or plugins; the other tests of a session are kept.
    """
    index, count = shard
    scenario_ids = sorted(i.nodeid for i in items if getattr(getattr(i, "obj", None), "_pibench_scenario", False))
    mine = set(scenario_ids[index - 1 :: count])
    other = [i for i in items if i.nodeid in set(scenario_ids) and i.nodeid not in mine]
    if other:
        drop = {id(i) for i in other}
        items[:] = [i for i in items if id(i) not in drop]
        config.hook.pytest_deselected(items=other)


@pytest.hookimpl(tryfirst=True)
def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config) -> tuple[str, str, str] | None:
    """A scenario's checks are counted as ``checks passed`` / ``checks failed``, apart from scenario items."""
    if report.when != "call" or not is_subtest_report(report) or not is_scenario_nodeid(report.nodeid):
        return None
    if hasattr(report, "wasxfail"):
        return None
    description = subtest_description(report)
    if report.failed:
        return "checks failed", "u", f"SUBFAILED{description}"
    if report.passed:
        quiet = config.get_verbosity(pytest.Config.VERBOSITY_SUBTESTS) == 0
        return "checks passed", "" if quiet else "u", "" if quiet else f"SUBPASSED{description}"
    return None


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrize scenario items over ``--pibench-agent`` specs (indirectly, through the fixture)."""
    settings = metafunc.config.stash[SETTINGS_KEY]
    if not getattr(metafunc.function, "_pibench_scenario", False) or not settings.run.agents:
        return
    if "pibench_agent" in metafunc.fixturenames:
        metafunc.parametrize("pibench_agent", list(settings.run.agents), ids=list(settings.run.agents), indirect=True)


@pytest.fixture
def pibench_agent(request: pytest.FixtureRequest) -> Any:
    """The agent of a scenario item: an ``--pibench-agent`` spec string.

    Override it in a ``conftest.py`` to benchmark without ``--pibench-agent``:
    return a spec string, an agent class, a zero-argument factory or an agent
    instance; parametrize it to compare several agents.
    """
    param = getattr(request, "param", None)
    if param is None:
        pytest.fail(
            "no agent to benchmark: pass --pibench-agent=SPEC or define a pibench_agent fixture in conftest.py",
            pytrace=False,
        )
    return param


@pytest.fixture
def pibench_trial(request: pytest.FixtureRequest) -> int:
    """The trial index of a scenario item (parametrized by ``--pibench-trials``)."""
    return int(getattr(request, "param", 0))


@pytest.hookimpl(wrapper=True)
def pytest_runtestloop(session: pytest.Session) -> Any:
    """With ``--pibench-concurrency`` above 1, episodes of upcoming items run ahead on threads (prefetch)."""
    settings = session.config.stash[SETTINGS_KEY]
    scenario_items = settings.run.concurrency > 1 and any(
        getattr(getattr(item, "obj", None), "pibench_scenario", None) is not None for item in session.items
    )
    if not scenario_items:
        return (yield)
    from pytest_pibench.plugin.item import episode_job
    from pytest_pibench.plugin.keys import PREFETCH_KEY
    from pytest_pibench.plugin.prefetch import EpisodePrefetcher

    prefetcher = EpisodePrefetcher(session, settings.run.concurrency, episode_job)
    session.config.stash[PREFETCH_KEY] = prefetcher
    try:
        return (yield)
    finally:
        prefetcher.close()
        del session.config.stash[PREFETCH_KEY]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    if call.when == "setup" and getattr(getattr(item, "obj", None), "_pibench_scenario", False):
        report.pibench_planned = _planned_of(item)  # builtins: a crash row later comes from it, not from the id
    if call.when == "call" and USAGE_ERROR_KEY in item.stash:  # a string: crosses xdist to the controller
        report.pibench_usage_error = item.stash[USAGE_ERROR_KEY]
    if call.when == "call" and item.stash.get(DONE_KEY, False) and ROW_KEY in item.stash:
        report.pibench_row = item.stash[ROW_KEY]  # builtins only: crosses xdist as-is
    elif call.when == "call" and report.skipped and SETTLED_KEY in item.stash:
        report.pibench_settled = item.stash[SETTLED_KEY]  # a trial sequential mode did not need
    elif report.failed and ROW_KEY not in item.stash:
        name = _agent_name(item)
        if name:
            report.pibench_agent = name  # a crash row keeps the agent it was set up with
    return report


def _planned_of(item: pytest.Item) -> dict[str, Any]:
    """What a scenario item was planned to run: its file, scenario, agent and trial (``agent`` None if unknown).

    A file that does not load has no scenario (``broken``): its crash row stands for every agent and trial.
    """
    scenario = getattr(getattr(item, "obj", None), "pibench_scenario", None)
    params = getattr(getattr(item, "callspec", None), "params", {})
    funcargs = getattr(item, "funcargs", {})
    agent = _agent_name(item)
    if agent is None and "pibench_agent" in funcargs:  # the project's own fixture: set up by now
        from pytest_pibench.plugin.item import agent_name_of

        agent = agent_name_of(funcargs["pibench_agent"])
    trial = params.get("pibench_trial")
    return {
        "path": str(item.path),
        "scenario_id": getattr(scenario, "scenario_id", None),
        "agent": agent,
        "trial": trial if isinstance(trial, int) else None,
        "broken": scenario is None,
    }


def _agent_name(item: pytest.Item) -> str | None:
    """The agent of a scenario item that has no row: from its parametrization or its item body."""
    if AGENT_NAME_KEY in item.stash:
        return item.stash[AGENT_NAME_KEY]
    params = getattr(getattr(item, "callspec", None), "params", {})
    if "pibench_agent" in params:
        from pytest_pibench.plugin.item import agent_name_of

        return agent_name_of(params["pibench_agent"])
    return None


@pytest.hookimpl(optionalhook=True)
def pytest_json_runtest_metadata(item: pytest.Item, call: pytest.CallInfo[None]) -> dict[str, Any] | None:
    """pytest-json-report: each scenario test carries its episode row as metadata."""
    if call.when == "call" and item.stash.get(DONE_KEY, False) and ROW_KEY in item.stash:
        return {"pibench": item.stash[ROW_KEY]}
    return None
