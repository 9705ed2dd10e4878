"""Issue 23, class 3: every numeric option is finite and in range, else a usage error before any episode.

``float("nan")`` compares false with everything, so a check such as ``value < 0``
lets it through: before this, ``--pibench-max-error-rate=nan`` made a run of error
rows valid, ``--pibench-timeout=inf`` was reported as a Ctrl-C and
``--pibench-tolerance=nan`` printed false "ok" gate lines. Each case below tries a
bad value and asserts exit code 4, the option named in the message, and that no
episode ran (no results file).
"""

from __future__ import annotations

import json

import pytest

from pytest_pibench.cli import main as pi_main
from pytest_pibench.vocab import DEFAULT_RESULTS_PATH

NON_FINITE = ("nan", "inf", "-inf")


def _cases(flag: str, *values: str, fragment: str | None = None) -> list[tuple[str, str, str]]:
    return [(flag, value, fragment or flag) for value in values]


CASES = [
    *_cases("--pibench-trials", *NON_FINITE, "0", "1001", "1e3", "2.5"),
    *_cases("--pibench-concurrency", *NON_FINITE, "0", "257", "100000"),
    *_cases("--pibench-seed", *NON_FINITE, "-1", str(2**63)),
    *_cases("--pibench-max-steps", *NON_FINITE, "0", "1000001"),
    *_cases("--pibench-max-tool-calls", *NON_FINITE, "0"),
    *_cases("--pibench-max-tool-calls-per-message", *NON_FINITE, "0"),
    *_cases("--pibench-judge-votes", *NON_FINITE, "0"),
    *_cases("--pibench-timeout", *NON_FINITE, "1e999", "-1", "604801"),
    *_cases("--pibench-tolerance", *NON_FINITE, "-0.1", "1.5"),
    *_cases("--pibench-max-error-rate", *NON_FINITE, "1e999", "-0.1", "1.01"),
    *_cases("--pibench-confidence", *NON_FINITE, "0", "1"),
    *_cases("--pibench-cost-limit", *NON_FINITE, "run=inf", "episode=nan", "episode=-inf", "0", "1e999"),
    *_cases(
        "--pibench-fail-under",
        "compliance=nan",
        "compliance=inf",
        "compliance=1e999",
        "compliance=e",
        "compliance=-0.5",
        "compliance=.",
    ),
    *_cases("--pibench-min-pass", "nan/4", "1/inf", "5/4", "1/1001"),
    *_cases("--pibench-rate-limit", "m=nan/5", "m=inf", "m=0/5", "m=5/nan"),
    *_cases("--pibench-shard", "nan/4", "1/inf", "5/4", "0/4"),
    *_cases(
        "--pibench-agent-arg",
        "temperature=NaN",
        "temperature=Infinity",
        "temperature=-Infinity",
        "temperature=1e999",
        "stop=[1, NaN]",
    ),
    *_cases("--pibench-user-arg", "temperature=NaN"),
    *_cases("--pibench-judge-arg", "temperature=Infinity"),
]


@pytest.mark.parametrize(("flag", "value", "fragment"), CASES, ids=[f"{f[10:]}={v}" for f, v, _ in CASES])
def test_a_number_that_is_not_finite_or_out_of_range_is_a_usage_error(toy_project, flag, value, fragment):
    result = toy_project.runpytest("scenarios", "--pibench-agent=oracle", f"{flag}={value}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()[-2000:]
    errors = result.stderr.str()
    assert f"{fragment}:" in errors or f"{fragment} " in errors, errors
    assert "Traceback" not in errors
    assert not (toy_project.path / DEFAULT_RESULTS_PATH).exists()  # no episode ran, nothing was written


@pytest.mark.parametrize(
    ("key", "value", "flag"),
    [
        ("pibench_max_error_rate", "nan", "--pibench-max-error-rate"),
        ("pibench_timeout", "inf", "--pibench-timeout"),
        ("pibench_tolerance", "nan", "--pibench-tolerance"),
        ("pibench_concurrency", "257", "--pibench-concurrency"),
        ("pibench_trials", "-inf", "--pibench-trials"),
        ("pibench_confidence", "nan", "--pibench-confidence"),
        ("pibench_cost_limit", "inf", "--pibench-cost-limit"),
        ("pibench_fail_under", "compliance=nan", "--pibench-fail-under"),
    ],
)
def test_the_ini_twin_of_each_option_is_checked_the_same_way(toy_project, key, value, flag):
    toy_project.makeini(f"[pytest]\n{key} = {value}\n")
    result = toy_project.runpytest("scenarios", "--pibench-agent=oracle")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert flag in result.stderr.str() and "Traceback" not in result.stderr.str()
    assert not (toy_project.path / DEFAULT_RESULTS_PATH).exists()


def test_the_bounds_themselves_are_accepted(toy_project):
    result = toy_project.runpytest(
        "scenarios", "--pibench-agent=oracle", "--pibench-timeout=0", "--pibench-max-error-rate=1",
        "--pibench-tolerance=1", "--pibench-concurrency=256", "--pibench-trials=2", "--pibench-seed=0",
        "--pibench-confidence=0.5", "--pibench-cost-limit=episode=1e-9", "--pibench-fail-under=compliance=1",
        "--pibench-agent-arg=note=NaNa",  # not a number: kept as text
    )  # fmt: skip
    assert result.ret == 0, result.stdout.str()[-2000:]
    document = json.loads((toy_project.path / DEFAULT_RESULTS_PATH).read_text())
    assert len(document["rows"]) == 4 and document["settings"]["timeout"] is None
    assert document["settings"]["agent_args"] == {"note": "NaNa"}


COUNTING_AGENT = """
import os
import threading


class Agent:
    '''Denies at once; notes how many episode threads the plugin has started.'''

    def init_state(self, ctx, tools, message_history=None):
        threads = [t for t in threading.enumerate() if t.name.startswith("pibench-episode-")]
        with open(f"threads-{os.getpid()}.txt", "a") as out:
            out.write(f"{len(threads)}\\n")
        return {}

    def generate(self, message, state):
        return {"role": "assistant", "content": "Denied. ###STOP###"}, state

    def is_stop(self, message):
        return "###STOP###" in (message.get("content") or "")

    def stop(self, message, state):
        pass
"""


def test_a_large_concurrency_starts_no_more_threads_than_the_run_needs(toy_project):
    toy_project.makepyfile(counting=COUNTING_AGENT)
    toy_project.syspathinsert()
    result = toy_project.runpytest_subprocess(
        "scenarios", "--pibench-agent=counting:Agent", "--pibench-trials=3", "--pibench-concurrency=256"
    )
    result.assert_outcomes(failed=6)  # both toy scenarios, three trials each: 6 items
    (notes,) = list(toy_project.path.glob("threads-*.txt"))
    counts = [int(line) for line in notes.read_text().split()]
    assert len(counts) == 6 and 1 <= max(counts) <= 6  # not 256 threads for 6 episodes


@pytest.mark.parametrize(
    ("argv", "flag"),
    [
        (["compare", "a.json", "--alpha", "nan"], "--alpha"),
        (["compare", "a.json", "--alpha", "1"], "--alpha"),
        (["plan", "a.json", "--difference", "inf"], "--difference"),
        (["plan", "a.json", "--difference", "0.1", "--power", "nan"], "--power"),
        (["plan", "a.json", "--difference", "0.1", "--alpha", "-inf"], "--alpha"),
        (["report", "a.json", "--max-error-rate", "nan"], "--max-error-rate"),
        (["report", "a.json", "--max-error-rate", "2"], "--max-error-rate"),
        (["run", "retail", "--workers", "0"], "--workers"),
        (["run", "retail", "--trials", "nan"], "--trials"),
    ],
)
def test_pi_own_number_flags_are_usage_errors(tmp_path, monkeypatch, capsys, argv, flag):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exited:
        pi_main(argv)
    assert exited.value.code == 4
    assert f"argument {flag}" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("flag", "value", "expected"),
    [
        ("--timeout", "nan", "a number of seconds from 0 (none) to"),
        ("--max-error-rate", "inf", "a fraction between 0 and 1, got 'inf'"),
        ("--tolerance", "nan", "expected a finite number, got 'nan'"),
        ("--num-trials", "0", "must be at least 1, got '0'"),
        ("--trials", "1.5", "expected a whole number, got '1.5'"),
        ("--num-trials", "", "an empty value; expected a whole number"),
    ],
)
def test_pi_run_checks_plugin_options_the_same_way_and_names_the_flag_typed(
    tmp_path, monkeypatch, capfd, flag, value, expected
):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exited:
        pi_main(["run", "retail", flag, value, "--", "-p", "no:cacheprovider"])
    assert exited.value.code == 4
    err = capfd.readouterr().err
    assert f"argument {flag}: {expected}" in err
    assert "--pibench-" not in err.splitlines()[-1]  # the user typed --num-trials, not the plugin's name
    assert not (tmp_path / DEFAULT_RESULTS_PATH).exists()


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("1.5", "--pibench-trials: expected a whole number, got '1.5'"),
        ("", "--pibench-trials: an empty value; expected a whole number (leave the option out for its default)"),
        ("0", "--pibench-trials: must be at least 1, got '0'"),
    ],
)
def test_a_trials_value_that_is_no_whole_number_or_empty_is_a_usage_error(pytester, value, expected):
    result = pytester.runpytest("--pibench-agent=oracle", f"--pibench-trials={value}", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert expected in result.stderr.str()
