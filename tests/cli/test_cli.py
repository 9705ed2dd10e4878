"""The ``pi`` command end to end (subprocesses: it runs pytest underneath)."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import TOY_ALLOW, TOY_WORKSPACE
from pytest_pibench.cli import _pytest_args, _run_options, main


def pi(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest_pibench", *args], capture_output=True, text=True, cwd=cwd)


def test_list_by_domain_alias_shows_labels_and_columns(tmp_path):
    out = pi("list", "--domain", "retail_refund_sop_v1", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].split() == ["scenario", "domain", "label", "column", "file"]
    assert any("RET_002_HEADPHONES_RETURN" in line and "ALLOW-CONDITIONAL" in line
               and "Safety Boundary Enforcement" in line for line in lines)
    assert lines[-1].endswith("scenario(s)")


def test_list_of_an_unknown_domain_says_so(tmp_path, capsys):
    assert main(["list", "--domain", "finra", str(TOY_WORKSPACE / "scenarios")]) == 1
    assert "no scenarios found" in capsys.readouterr().out


def test_run_with_upstream_flag_names(tmp_path):
    out = pi("run", str(TOY_ALLOW), "--agent", "oracle", "--num-trials", "2", "--seed", "5",
             "--results", "r.json", "--", "-q", cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["settings"]["trials"] == 2 and data["settings"]["seed"] == 5
    assert [r["trial"] for r in data["rows"]] == [0, 1]


@pytest.mark.slow
def test_run_domain_with_workers_uses_xdist(tmp_path):
    out = pi("run-domain", "retail", "--agent", "baseline:allow", "--workers", "2", "--concurrency", "2", cwd=tmp_path)
    assert out.returncode == 1  # the baseline fails scenarios: pytest's exit code comes through
    assert "2 workers" in out.stdout
    rows = json.loads((tmp_path / "pibench-results.json").read_text())["rows"]
    assert len(rows) >= 8 and {r["agent"] for r in rows} == {"baseline:allow"}


def test_run_domain_unknown(tmp_path):
    out = pi("run-domain", "bakery", cwd=tmp_path)
    assert out.returncode == 4  # a usage error, as pytest's
    assert "no scenarios for domain 'bakery'" in out.stderr


@pytest.mark.slow
def test_validate_exit_codes(tmp_path):
    assert pi("validate", cwd=tmp_path).returncode == 0
    bad = tmp_path / "bad.json"
    data = json.loads(TOY_ALLOW.read_text())
    data["label"] = "PERHAPS"
    bad.write_text(json.dumps(data))
    out = pi("validate", str(bad), cwd=tmp_path)
    assert out.returncode == 1
    assert "[schema] label" in out.stdout


def test_report_rejects_other_files(tmp_path, capsys):
    other = tmp_path / "x.json"
    other.write_text('{"hello": 1}')
    assert main(["report", str(other)]) == 4  # a bad input file is a usage error, as a missing one
    assert f"{other}: neither a pi-bench results file nor a pytest-json-report file" in capsys.readouterr().err


def run_flags(*argv: str):
    """``pi run``'s flags parsed by the real declarations."""
    parser = argparse.ArgumentParser()
    _run_options(parser)
    return parser.parse_args(list(argv))


def test_upstream_flags_map_to_plugin_options():
    args = run_flags("--agent-llm", "gpt-4o-mini", "--user-llm", "gpt-4o-mini", "--num-trials", "3",
                     "--concurrency", "4", "--seed", "1")
    assert _pytest_args(args, ["scenarios"], ["-x"]) == [
        "scenarios", "--pibench-agent=litellm:gpt-4o-mini", "--pibench-user=litellm:gpt-4o-mini",
        "--pibench-trials=3", "--pibench-concurrency=4", "--pibench-seed=1", "-x",
    ]  # upstream's --concurrency is episodes in flight (its thread pool), not processes


def test_every_plugin_option_is_a_pi_run_flag_with_the_plugin_help():
    from pytest_pibench.plugin.settings import OPTIONS

    parser = argparse.ArgumentParser()
    _run_options(parser)
    flags = {action.option_strings[0]: action for action in parser._actions if action.option_strings}
    for option in OPTIONS:
        action = flags[f"--{option.name}"]
        assert action.help.startswith(option.help) and action.metavar == option.metavar, option.name
        if option.bounds:  # checked by the option's own parser, so errors name the flag typed
            assert action.type("1") == option.parse("1") and action.type.__name__ == option.value_type.__name__
        else:
            assert (action.type or str) is option.value_type, option.name


def test_pi_run_flags_map_back_to_the_plugin_options():
    args = run_flags("--agent", "oracle", "--agent", "baseline:deny", "--judge", "mod:Judge", "--timeout", "0",
                     "--fail-under", "compliance=0.5", "--fail-under", "overall=0.25", "--tolerance", "0.05",
                     "--results", "", "--user", "mod:User", "--trials", "2", "--user-arg", "temperature=0")
    assert _pytest_args(args, ["x.json"], []) == [
        "x.json", "--pibench-agent=oracle", "--pibench-agent=baseline:deny", "--pibench-user=mod:User",
        "--pibench-user-arg=temperature=0", "--pibench-judge=mod:Judge", "--pibench-trials=2",
        "--pibench-timeout=0.0", "--pibench-results=", "--pibench-fail-under=compliance=0.5",
        "--pibench-fail-under=overall=0.25", "--pibench-tolerance=0.05",
    ]
    assert _pytest_args(run_flags(), ["x.json"], []) == ["x.json", "--pibench-agent=oracle"]  # pi's default agent


def test_a_flag_pi_never_declared_itself_reaches_the_run(tmp_path):
    out = pi("run", str(TOY_ALLOW), "--max-tool-calls", "7", "--fail-under", "compliance=1", "--", "-q", cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    settings = json.loads((tmp_path / "pibench-results.json").read_text())["settings"]
    assert settings["max_tool_calls"] == 7
    assert "Gate: PASSED" in out.stdout
