"""One spec resolver: agents, users and judges through one registry of schemes, third-party ones included.

Third-party schemes come from a real installed distribution (a ``.dist-info``
with entry points on ``sys.path``) or from a registry a caller builds.
"""

from __future__ import annotations

import json
import os
import sys

import pytest

from conftest import TOY_ALLOW
from pytest_pibench import BaselineAgent, OracleAgent, ScriptedUser, load_scenario, run_one
from pytest_pibench.participants.schemes import ENTRY_POINT_GROUP, AgentSpecError, Scheme, SchemeRegistry
from pytest_pibench.participants.specs import default_schemes, resolve_agent, resolve_judge, resolve_user

SCHEME_MODULE = """
from pathlib import Path

from pytest_pibench import BaselineAgent
from pytest_pibench.participants.schemes import AgentSpecError, Scheme

with (Path(__file__).parent / "imports.log").open("a") as log:
    log.write("imported\\n")


class KeywordJudge:
    def __init__(self, answer):
        self.answer = answer

    def judge(self, question, text):
        return self.answer


def _agent(argument, params):
    if argument not in ("ALLOW", "DENY"):
        raise AgentSpecError(f"fixed needs ALLOW or DENY, got {argument!r}")
    return lambda scenario: BaselineAgent(argument)


def _judge(argument, params):
    return lambda: KeywordJudge(argument or "YES")


FIXED = Scheme("fixed", "fixed:ALLOW|DENY", agent=_agent, judge=_judge)
NOT_A_SCHEME = 42
"""


@pytest.fixture
def scenario():
    return load_scenario(TOY_ALLOW)


@pytest.fixture
def fixed_distribution(install_distribution, monkeypatch):
    """A distribution shipping the ``fixed`` scheme (agent and judge) through an entry point."""
    monkeypatch.delitem(sys.modules, "fixed_scheme_a", raising=False)  # imported afresh in each test
    return install_distribution(
        "pibench-fixed",
        entry_points={ENTRY_POINT_GROUP: {"fixed": "fixed_scheme_a:FIXED"}},
        files={"fixed_scheme_a.py": SCHEME_MODULE},
    )


def imports(site) -> int:
    log = site / "imports.log"
    return len(log.read_text().splitlines()) if log.exists() else 0


def test_every_role_resolves_through_the_built_in_schemes(scenario):
    assert isinstance(resolve_agent("oracle").build(scenario), OracleAgent)
    assert resolve_agent("baseline:deny").build(scenario).decision == "DENY"
    assert isinstance(resolve_user("scripted").build(scenario), ScriptedUser)
    assert resolve_agent(" oracle ").name == "oracle"


@pytest.mark.parametrize(
    ("resolve", "spec", "message"),
    [
        (
            resolve_user,
            "oracle",
            "user spec 'oracle': scheme 'oracle' names no user (only: agent); "
            "use scripted, litellm:<model>, a2a:<url> or module:Class",
        ),
        (
            resolve_agent,
            "scripted",
            "agent spec 'scripted': scheme 'scripted' names no agent (only: user); "
            "use module:Class, module:factory, or a built-in (oracle, "
            "baseline:allow|deny|escalate|silent, litellm:<model>, a2a:<url>, replay:PATH)",
        ),
        (
            resolve_judge,
            "baseline:deny",
            "judge spec 'baseline:deny': scheme 'baseline' names no judge (only: agent); "
            "use litellm:<model> or module:Class",
        ),
        (resolve_agent, "oracle:extra", "the oracle takes no argument, got 'oracle:extra'"),
        (resolve_user, "scripted:loud", "the scripted user takes no argument, got 'scripted:loud'"),
        (resolve_user, "nothing", "cannot resolve user spec 'nothing': use scripted, litellm:<model>, a2a:<url> or "
         "module:Class"),
        (resolve_judge, "nothing", "cannot resolve judge spec 'nothing': use litellm:<model> or module:Class"),
    ],
)
def test_a_spec_for_the_wrong_role_says_what_the_role_takes(resolve, spec, message):
    with pytest.raises(AgentSpecError) as info:
        resolve(spec)
    assert str(info.value) == message


def test_scheme_declarations_are_checked():
    with pytest.raises(AgentSpecError, match="scheme name 'my scheme'"):
        Scheme("my scheme", "x", agent=lambda argument, params: lambda scenario: None)
    with pytest.raises(AgentSpecError, match="scheme 'idle' serves no role"):
        Scheme("idle", "idle")
    assert Scheme("both", "both", agent=print, judge=print).roles == ("agent", "judge")


def test_a_name_from_two_sources_is_an_error_naming_both():
    registry = default_schemes()
    echo = Scheme("echo", "echo", agent=lambda argument, params: lambda scenario: BaselineAgent("ALLOW"))
    registry.add(echo, "plugin one")
    registry.add(echo, "plugin one")  # the same registration twice is no clash
    with pytest.raises(
        AgentSpecError, match="participant scheme 'echo' is defined twice: by plugin one and by plugin two"
    ):
        registry.add(echo, "plugin two")
    with pytest.raises(AgentSpecError, match="is defined twice: by pytest-pibench .built in. and by mine"):
        registry.add(Scheme("oracle", "oracle", agent=print), "mine")


def test_a_registry_passed_in_extends_resolution_without_touching_the_default(scenario):
    registry = default_schemes()
    registry.add(
        Scheme("stubborn", "stubborn", agent=lambda argument, params: lambda s: BaselineAgent(params["decision"])),
        "this test",
    )
    spec = resolve_agent("stubborn", {"decision": "ESCALATE"}, schemes=registry)
    assert spec.name == "stubborn" and spec.build(scenario).decision == "ESCALATE"
    with pytest.raises(AgentSpecError, match="cannot resolve agent spec 'stubborn'"):
        resolve_agent("stubborn")
    with pytest.raises(AgentSpecError, match=r"installed schemes: stubborn$"):
        resolve_agent("gpt", schemes=registry)


def test_an_entry_point_scheme_is_loaded_only_when_a_spec_uses_it(fixed_distribution, scenario):
    assert resolve_agent("oracle").name == "oracle"
    with pytest.raises(AgentSpecError, match=r"installed schemes: fixed:\.\.\.$"):  # listed, not imported
        resolve_agent("gpt")
    assert imports(fixed_distribution) == 0
    agent = resolve_agent("fixed:DENY").build(scenario)
    assert isinstance(agent, BaselineAgent) and agent.decision == "DENY"
    assert resolve_judge("fixed:NO")().judge("question?", "text") == "NO"
    assert imports(fixed_distribution) == 1
    with pytest.raises(AgentSpecError, match="fixed needs ALLOW or DENY, got 'MAYBE'"):
        resolve_agent("fixed:MAYBE")
    with pytest.raises(AgentSpecError, match="scheme 'fixed' names no user .only: agent, judge."):
        resolve_user("fixed:ALLOW")


def test_an_entry_point_scheme_runs_an_episode_without_pytest(fixed_distribution):
    row = run_one(TOY_ALLOW, "fixed:ALLOW")
    assert row["agent"] == "fixed:ALLOW" and row["status"] == "completed"
    assert row["canonical_decision"] == "ALLOW"


@pytest.mark.parametrize(
    ("name", "value", "fragment"),
    [
        (
            "oracle",
            "fixed_scheme_b:FIXED",
            "participant scheme 'oracle' is defined twice: by pytest-pibench (built in) "
            "and by entry point oracle = 'fixed_scheme_b:FIXED' of distribution "
            "pibench-odd 1.0",
        ),
        ("other", "fixed_scheme_b:FIXED", "holds scheme 'fixed': the entry point must be named after it"),
        ("fixed", "fixed_scheme_b:NOT_A_SCHEME", "points to 42, not a pytest_pibench Scheme"),
        ("fixed", "fixed_scheme_b:MISSING", "failed to load: AttributeError"),
    ],
)
def test_a_bad_entry_point_is_an_error_naming_it(install_distribution, name, value, fragment):
    install_distribution(
        "pibench-odd", entry_points={ENTRY_POINT_GROUP: {name: value}}, files={"fixed_scheme_b.py": SCHEME_MODULE}
    )
    with pytest.raises(AgentSpecError) as info:
        resolve_agent(f"{name}:ALLOW")
    assert fragment in str(info.value)


@pytest.mark.slow
def test_the_plugin_resolves_entry_point_schemes_on_every_worker(fixed_distribution, toy_project, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(fixed_distribution), os.environ.get("PYTHONPATH", "")]))
    result = toy_project.runpytest_subprocess(
        "scenarios", "--pibench-agent=fixed:ALLOW", "--pibench-judge=fixed:YES", "-n", "2"
    )
    rows = json.loads((toy_project.path / "pibench-results.json").read_text())["rows"]
    assert [(r["agent"], r["status"], r["canonical_decision"]) for r in rows] == [
        ("fixed:ALLOW", "completed", "ALLOW")
    ] * 2
    assert "2 workers" in result.stdout.str()
    bad = toy_project.runpytest_subprocess("scenarios", "--pibench-agent=fixed:MAYBE")
    assert bad.ret == pytest.ExitCode.USAGE_ERROR
    bad.stderr.fnmatch_lines(["*--pibench-agent: fixed needs ALLOW or DENY, got 'MAYBE'*"])


def test_the_registry_lists_where_each_name_came_from(fixed_distribution):
    origins = default_schemes().origins()
    assert origins["oracle"] == "pytest-pibench (built in)"
    assert origins["fixed"].startswith("entry point fixed = 'fixed_scheme_a:FIXED' of distribution pibench-fixed 1.0")
    assert isinstance(SchemeRegistry().origins(), dict) and not SchemeRegistry().origins()
