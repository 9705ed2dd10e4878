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

from pathlib import Path
from typing import Any

import pytest

from ._paths import is_scenario_file
from ._settings import Settings, add_options, read_settings

__all__ = [
    "pytest_addoption",
    "pytest_collect_file",
    "pytest_configure",
    "pytest_generate_tests",
    "pibench_agent",
    "pibench_trial",
]

SETTINGS_KEY = pytest.StashKey["Settings"]()
ROW_KEY = pytest.StashKey[dict[str, Any]]()
"""The result row of a scenario item, set when its episode has run."""
DONE_KEY = pytest.StashKey[bool]()
"""Set when the item's test body has finished (so subtest reports do not carry the row)."""

LABEL_MARKS = {"ALLOW": "allow", "ALLOW-CONDITIONAL": "allow_conditional", "DENY": "deny", "ESCALATE": "escalate"}


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def pytest_configure(config: pytest.Config) -> None:
    settings = read_settings(config)
    config.stash[SETTINGS_KEY] = settings
    config.addinivalue_line("markers", "pibench: a pi-bench scenario item")
    for label, mark in LABEL_MARKS.items():
        config.addinivalue_line("markers", f"{mark}: pi-bench scenarios labelled {label}")
    if settings.agents:
        from ._agents import AgentSpecError, resolve_agent

        for spec in settings.agents:
            try:
                resolve_agent(spec, settings.params("agent"))
            except AgentSpecError as exc:
                raise pytest.UsageError(f"--pibench-agent: {exc}") from None
        _default_to_scenario_dirs(config, settings)
    if settings.user != "scripted" and (settings.agents or settings.scenario_dirs):
        from ._agents import AgentSpecError, resolve_user

        try:
            resolve_user(settings.user, settings.params("user"))
        except AgentSpecError as exc:
            raise pytest.UsageError(f"--pibench-user: {exc}") from None
    if settings.judge:
        from ._agents import AgentSpecError, resolve_judge

        try:
            resolve_judge(settings.judge, settings.params("judge"))
        except AgentSpecError as exc:
            raise pytest.UsageError(f"--pibench-judge: {exc}") from None
    from ._gates import load_baseline, unknown_metric
    from ._session import ResultCollector  # light: no engine import at module level

    for gate in settings.fail_under:
        problem = unknown_metric(gate.metric)
        if problem:
            raise pytest.UsageError(f"--pibench-fail-under: {problem}")
    collector = ResultCollector(config, settings)
    if settings.baseline and not hasattr(config, "workerinput"):
        try:
            collector.baseline = load_baseline(settings.baseline)
        except ValueError as exc:
            raise pytest.UsageError(f"--pibench-baseline: {exc}") from None
    config.pluginmanager.register(collector, "pibench-results")


def _default_to_scenario_dirs(config: pytest.Config, settings: Settings) -> None:
    """``--pibench-agent`` without paths runs the benchmark, not the project's own tests."""
    if config.args_source == pytest.Config.ArgsSource.ARGS:
        return
    if settings.scenario_dirs:
        config.args = [str(p) for p in settings.scenario_dirs]
    else:
        from ._paths import bundled_scenarios_dir

        config.args = [str(bundled_scenarios_dir())]


def _wanted(file_path: Path, config: pytest.Config) -> bool:
    settings = config.stash[SETTINGS_KEY]
    if settings.agents:
        return True
    roots = [*settings.scenario_dirs]
    if config.args_source == pytest.Config.ArgsSource.ARGS:
        roots += [Path(arg.split("::")[0]).resolve() for arg in config.args]
    return any(file_path == root or root in file_path.parents for root in roots)


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if file_path.suffix != ".json" or not _wanted(file_path, parent.config):
        return None
    if "archive" in file_path.parts[:-1] or not is_scenario_file(file_path):
        return None
    from ._collect import ScenarioModule

    return ScenarioModule.from_parent(parent, path=file_path)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrize scenario items over ``--pibench-agent`` specs (indirectly, through the fixture)."""
    settings = metafunc.config.stash[SETTINGS_KEY]
    if not getattr(metafunc.function, "_pibench_scenario", False) or not settings.agents:
        return
    if "pibench_agent" in metafunc.fixturenames:
        metafunc.parametrize("pibench_agent", list(settings.agents), ids=list(settings.agents), indirect=True)


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
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    if call.when == "call" and item.stash.get(DONE_KEY, False) and ROW_KEY in item.stash:
        report.pibench_row = item.stash[ROW_KEY]  # builtins only: crosses xdist as-is
    return report


@pytest.hookimpl(optionalhook=True)
def pytest_json_runtest_metadata(item: pytest.Item, call: pytest.CallInfo[None]) -> dict[str, Any] | None:
    """pytest-json-report: each scenario test carries its episode row as metadata."""
    if call.when == "call" and item.stash.get(DONE_KEY, False) and ROW_KEY in item.stash:
        return {"pibench": item.stash[ROW_KEY]}
    return None
