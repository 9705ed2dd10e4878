"""Shared fixtures: the toy workspace (a tiny domain + two scenarios) copied into tmp_path."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

DATA = Path(__file__).parent / "data"
TOY_WORKSPACE = DATA / "workspace"
TOY_ALLOW = TOY_WORKSPACE / "scenarios" / "toyshop" / "toy_001_item_refund.json"
TOY_ESCALATE = TOY_WORKSPACE / "scenarios" / "toyshop" / "toy_002_expensive_item_refund.json"

# For tests that drive litellm (an LLM agent, user or judge): skipped, saying why, without the ``llm`` extra.
_LLM_MISSING = [name for name in ("litellm", "tenacity") if importlib.util.find_spec(name) is None]
requires_llm = pytest.mark.skipif(
    bool(_LLM_MISSING),
    reason=f"the llm extra is not installed (no {', '.join(_LLM_MISSING)}): pip install 'pytest-pibench[llm]'",
)


# A user simulator whose backend is down: every episode it joins is an error row (not the agent's).
BROKEN_USER = """
class User:
    def init_state(self, scenario, message_history=None):
        return {}
    def generate(self, message, state):
        raise ConnectionError("simulator backend down")
    def is_stop(self, message):
        return False
"""


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A private copy of the toy workspace (domains/toyshop + scenarios/toyshop)."""
    target = tmp_path / "ws"
    shutil.copytree(TOY_WORKSPACE, target)
    return target


@pytest.fixture
def toy_data() -> dict[str, Any]:
    """The ALLOW toy scenario as a dict, to mutate in a test."""
    return json.loads(TOY_ALLOW.read_text())


@pytest.fixture
def write_scenario(workspace: Path) -> Callable[..., Path]:
    """Write a scenario dict into the workspace copy and return its path."""

    def write(data: dict[str, Any], name: str = "case.json") -> Path:
        path = workspace / "scenarios" / "toyshop" / name
        path.write_text(json.dumps(data, indent=1))
        return path

    return write



@pytest.fixture
def toy_project(pytester: pytest.Pytester) -> pytest.Pytester:
    """A pytester folder holding the toy workspace (domains/ and scenarios/).

    With ``PIBENCH_TEST_CONCURRENCY=N`` in the environment its runs use ``--pibench-concurrency N``
    (through the ini file), so the plugin's behaviour tests can be run again with episodes in flight.
    """
    shutil.copytree(TOY_WORKSPACE / "domains", pytester.path / "domains")
    shutil.copytree(TOY_WORKSPACE / "scenarios", pytester.path / "scenarios")
    concurrency = os.environ.get("PIBENCH_TEST_CONCURRENCY")
    if concurrency:
        pytester.makeini(f"[pytest]\npibench_concurrency = {int(concurrency)}\n")
    return pytester


@pytest.fixture
def install_distribution(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., Path]:
    """Install a real (tiny) distribution for this test: its files and a ``.dist-info`` on ``sys.path``.

    ``importlib.metadata`` finds it like any installed package, entry points included.
    ``install(name, entry_points={group: {ep_name: value}}, files={relative_path: text})``
    returns the site folder.
    """
    site = tmp_path / "site-packages"
    site.mkdir(exist_ok=True)
    monkeypatch.syspath_prepend(str(site))

    def install(name: str, *, entry_points: dict[str, dict[str, str]], files: dict[str, str] | None = None) -> Path:
        for relative, text in (files or {}).items():
            (site / relative).parent.mkdir(parents=True, exist_ok=True)
            (site / relative).write_text(text, encoding="utf-8")
        info = site / f"{name.replace('-', '_')}-1.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n", encoding="utf-8")
        sections = [f"[{g}]\n" + "".join(f"{k} = {v}\n" for k, v in eps.items()) for g, eps in entry_points.items()]
        (info / "entry_points.txt").write_text("\n".join(sections), encoding="utf-8")
        return site

    return install


# --- A test run never writes into the checkout (issue 27) ---------------------------------------
# What is new under the repository after the session (untracked or ignored alike) fails the run; caches
# and bytecode are not run artifacts. CI's screenshots go where $PIBENCH_ARTIFACTS says, on purpose.
_REPO = Path(__file__).resolve().parents[1]
_NOT_ARTIFACTS = (".venv", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".git")
_BEFORE = pytest.StashKey[set[str]]()


def _checkout_files() -> set[str] | None:
    """Files of the checkout git does not track (ignored ones too), or None outside a git checkout."""
    try:
        done = subprocess.run(["git", "ls-files", "--others", "-z"], cwd=_REPO, capture_output=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    artifacts = os.environ.get("PIBENCH_ARTIFACTS")
    kept = Path(artifacts).resolve() if artifacts else None
    files = set()
    for name in done.stdout.decode("utf-8", "replace").split("\0"):
        parts = Path(name).parts
        if not name or any(p in _NOT_ARTIFACTS or p.endswith(".egg-info") for p in parts):
            continue
        if kept is not None and (_REPO / name).resolve().is_relative_to(kept):
            continue
        files.add(name)
    return files


def pytest_sessionstart(session: pytest.Session) -> None:
    if not hasattr(session.config, "workerinput"):  # the controller (or a run without xdist) watches
        files = _checkout_files()
        if files is not None:
            session.config.stash[_BEFORE] = files


def pytest_sessionfinish(session: pytest.Session) -> None:
    before = session.config.stash.get(_BEFORE, None)
    after = _checkout_files() if before is not None else None
    if before is None or after is None or not (new := sorted(after - before)):
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    message = f"the tests wrote into the checkout ({len(new)} new file(s)): {', '.join(new[:10])}"
    if reporter is not None:
        reporter.ensure_newline()
        reporter.write_line(f"ERROR: {message}", red=True, bold=True)
    session.exitstatus = pytest.ExitCode.TESTS_FAILED
