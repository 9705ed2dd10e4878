"""A broken agent is a usage error before any episode, not a weak score (issue 27).

The agent is checked once at start-up: its module imports, its factory can be
called without arguments, and the protocol's methods accept the arguments the
loop passes. Each failure is exit 4 with the cause in the user's own file.
"""

from __future__ import annotations

import textwrap

import pytest

from pytest_pibench.participants.conformance import participant_problems
from pytest_pibench.participants.specs import AgentSpecError, resolve_agent, resolve_user

WRONG_SIGNATURES = textwrap.dedent(
    """
    class Agent:
        def set_seed(self):
            pass
        def init_state(self, benchmark_context):
            return {}
        def generate(self, message):
            return {"role": "assistant", "content": "hi"}, None
        def is_stop(self, message):
            return False
        def stop(self, message, state):
            pass
    """
)

GOOD_METHODS = """
    def set_seed(self, seed):
        pass
    def init_state(self, benchmark_context, tools, message_history=None):
        return {}
    def generate(self, message, state):
        return {"role": "assistant", "content": "hi"}, state
"""

NEEDS_ARGUMENTS = f"class Agent:\n    def __init__(self, model):\n        self.model = model\n{GOOD_METHODS}"
RAISES_IN_GENERATE = (
    "class Agent:\n"
    + GOOD_METHODS
    + "\nclass Quota(Agent):\n    def generate(self, message, state):\n"
    + "        raise RuntimeError('model quota exceeded')\n"
)


def test_wrong_signatures_are_named_method_by_method(tmp_path):
    path = tmp_path / "badsig.py"
    path.write_text(WRONG_SIGNATURES)
    with pytest.raises(AgentSpecError) as info:
        resolve_agent(f"{path}:Agent")
    message = str(info.value)
    assert "does not implement the agent protocol" in message
    assert "Agent.set_seed() cannot be called as set_seed(seed)" in message
    assert "Agent.init_state(benchmark_context) cannot be called as init_state(benchmark_context, tools, " in message
    assert "Agent.generate(message) cannot be called as generate(message, state)" in message
    assert "is_stop" not in message and "Agent.stop" not in message  # those two are right


def test_a_constructor_that_needs_arguments_says_how_to_pass_them(tmp_path):
    path = tmp_path / "needs.py"
    path.write_text(NEEDS_ARGUMENTS)
    with pytest.raises(AgentSpecError, match=r"Agent\(\) cannot be called with no arguments .*'model'.*factory"):
        resolve_agent(f"{path}:Agent")


def test_a_factory_that_raises_is_named_with_its_error(tmp_path):
    path = tmp_path / "fact.py"
    path.write_text("def make():\n    raise KeyError('OPENAI_API_KEY')\n")
    with pytest.raises(AgentSpecError, match=r"make\(\) raised KeyError: 'OPENAI_API_KEY'"):
        resolve_agent(f"{path}:make")


def test_optional_methods_may_be_left_out_but_required_ones_may_not():
    class Minimal:
        def init_state(self, benchmark_context, tools, message_history=None):
            return {}

        def generate(self, message, state):
            return {}, state

    class NoGenerate:
        def init_state(self, *args):
            return {}

    assert participant_problems(Minimal(), "agent") == []
    assert participant_problems(NoGenerate(), "agent") == [
        "NoGenerate has no generate() method (the benchmark calls generate(message, state))"
    ]


def test_a_user_is_checked_against_the_user_calls(tmp_path):
    path = tmp_path / "user.py"
    path.write_text(
        "class User:\n"
        "    def init_state(self, scenario, message_history, extra):\n        return {}\n"
        "    def generate(self, message, state):\n        return {}, state\n"
    )
    with pytest.raises(AgentSpecError, match=r"User.init_state\(.*\) cannot be called as init_state\(scenario\)"):
        resolve_user(f"{path}:User")


def test_an_instance_spec_is_checked_too(tmp_path, monkeypatch):
    (tmp_path / "inst_agents.py").write_text(WRONG_SIGNATURES + "\nshared = Agent()\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(AgentSpecError, match="does not implement the agent protocol: Agent.set_seed"):
        resolve_agent("inst_agents:shared")


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_the_plugin_stops_before_any_episode_with_exit_4(toy_project, workers):
    toy_project.makepyfile(badsig=WRONG_SIGNATURES)
    result = toy_project.runpytest_subprocess("scenarios", "--pibench-agent=badsig:Agent", "-p", "no:cacheprovider", *workers)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert "ERROR: --pibench-agent: agent spec 'badsig:Agent' does not implement the agent protocol" in err
    assert "INTERNALERROR" not in err + result.stdout.str()
    assert not (toy_project.path / "pibench-results.json").exists()  # no episode ran, nothing scored


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("def f(:\n", ["failed with SyntaxError: invalid syntax", '"{path}", line 1', "def f(:"]),
        (
            "import json\nimport no_such_dependency_xyz\n",
            [
                "failed with ModuleNotFoundError: No module named 'no_such_dependency_xyz'",
                '"{path}", line 2, in <module>',
                "install it into this environment",
            ],
        ),
        ("\n\nraise RuntimeError('boom at import')\n", ["failed with RuntimeError: boom at import", "line 3"]),
    ],
    ids=["syntax-error", "missing-dependency", "exception"],
)
def test_an_agent_module_that_fails_on_import_is_exit_4_with_its_own_error_and_line(toy_project, source, expected):
    path = toy_project.path / "broken_mod.py"
    path.write_text(source)
    result = toy_project.runpytest_subprocess("scenarios", "--pibench-agent=broken_mod:Agent", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert "INTERNALERROR" not in err and "pluggy" not in err
    assert "agent spec 'broken_mod:Agent': importing broken_mod" in err
    for fragment in expected:
        assert fragment.format(path=path) in err


def test_a_missing_module_says_where_modules_are_looked_up_and_the_file_form(toy_project):
    toy_project.makepyfile(my_agent=WRONG_SIGNATURES)
    result = toy_project.runpytest_subprocess("scenarios", "--pibench-agent=my_agnet:Agent", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert "no module named 'my_agnet' (did you mean 'my_agent'?)" in err
    assert f"in the current folder ({toy_project.path})" in err and "PYTHONPATH" in err
    assert "path/to/my_agnet.py:Agent" in err


def test_a_misspelt_class_lists_the_classes_of_the_module(toy_project):
    toy_project.makepyfile(agents_mod=RAISES_IN_GENERATE)
    result = toy_project.runpytest_subprocess("scenarios", "--pibench-agent=agents_mod:Agnet", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "'agents_mod' has no attribute 'Agnet' (did you mean 'Agent'?); its classes: Agent, Quota" in (
        result.stderr.str()
    )


def test_an_agent_failure_is_what_the_failed_scenarios_line_shows(toy_project):
    toy_project.makepyfile(agents_mod=RAISES_IN_GENERATE)
    result = toy_project.runpytest_subprocess("scenarios", "--pibench-agent=agents_mod:Quota", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # it passed the start-up check: it fails in episodes
    lines = result.stdout.lines
    failed = lines[lines.index("Failed scenarios (2):") + 1 :][:2]
    assert all(
        "AGENT ERROR (agent_error): agent.generate raised RuntimeError: model quota exceeded" in line for line in failed
    ), failed


@pytest.mark.parametrize("returned", ["Agent", "Agent()", "make"])
def test_a_broken_agent_from_a_pibench_agent_fixture_stops_the_run_with_exit_4(toy_project, returned):
    """A fixture's agent is checked before its first episode, like a --pibench-agent spec: not scored, exit 4."""
    toy_project.makepyfile(badsig=WRONG_SIGNATURES + "\ndef make():\n    return Agent()\n")
    toy_project.makeconftest(f"""
        import pytest
        from badsig import Agent, make

        @pytest.fixture
        def pibench_agent():
            return {returned}
    """)
    toy_project.makeini("[pytest]\npibench_scenarios = scenarios\n")
    result = toy_project.runpytest_subprocess("-p", "no:cacheprovider", "-n", "2", "-p", "no:randomly")
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()[-3000:]
    text = result.stdout.str()
    assert "the pibench_agent fixture's agent spec" in text and "does not implement the agent protocol" in text
    assert "Agent.generate(message) cannot be called as generate(message, state)" in text
    assert "ERROR (exit code 4): the pibench_agent fixture" in text and "Error budget" not in text
