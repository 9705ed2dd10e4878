"""``pi gate``: the plugin's CI gate applied to a finished run's files (a sharded run's, merged)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_pibench.cli import main as pi_main


def _run(folder: Path, *args: str) -> int:
    command = [sys.executable, "-m", "pytest", "-k", "RET_00", "--pibench-trials=2", "-p", "no:cacheprovider", *args]
    return subprocess.run(command, cwd=folder, capture_output=True, timeout=300).returncode


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A baseline (the oracle), and the same run of a weaker agent in two shards (made once for the module)."""
    folder = tmp_path_factory.mktemp("runs")
    _run(folder, "--pibench-agent=oracle", "--pibench-results=base.json")
    for index in (1, 2):
        _run(folder, "--pibench-agent=baseline:escalate", f"--pibench-shard={index}/2",
             f"--pibench-results=s{index}.json")  # fmt: skip
    return folder


@pytest.fixture
def runs(made: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the module's runs, as the working folder."""
    for name in ("base.json", "s1.json", "s2.json"):
        shutil.copy2(made / name, tmp_path / name)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("mode", ["exact", "statistical"])
def test_gating_the_merged_shards_gives_the_verdict_of_the_unsharded_run(runs, mode, capsys):
    whole = _run(runs, "--pibench-agent=baseline:escalate", "--pibench-baseline=base.json::oracle",
                 f"--pibench-gate-mode={mode}", "--pibench-results=whole.json")  # fmt: skip
    code = pi_main(["gate", "s1.json", "s2.json", "--baseline", "base.json::oracle", "--gate-mode", mode,
                    "--results", "gated.json"])  # fmt: skip
    printed = capsys.readouterr().out
    assert code == whole == 8
    plugin = json.loads((runs / "whole.json").read_text())["gate"]
    gated = json.loads((runs / "gated.json").read_text())["gate"]
    assert gated == plugin  # verdict, lines, regressed scenarios: the same
    assert "Gate: FAILED (exit code 8)" in printed and all(f"  {line}" in printed for line in plugin["lines"])
    capsys.readouterr()
    assert pi_main(["report", "gated.json", "--markdown", "-"]) == 0
    assert "### Gate: FAILED" in capsys.readouterr().out


def test_a_passing_gate_and_thresholds(runs, capsys):
    assert pi_main(["gate", "base.json", "--baseline", "base.json", "--fail-under", "compliance=0.9"]) == 0
    assert "Gate: PASSED (exit code 0)" in capsys.readouterr().out
    assert pi_main(["gate", "s1.json", "s2.json", "--min-pass", "2/2"]) == 8
    assert "fewer than 2" in capsys.readouterr().out


def test_a_missing_shard_is_not_valid_whatever_the_gate_says(runs, capsys):
    assert pi_main(["gate", "s1.json", "--fail-under", "overall=0"]) == 9
    printed = capsys.readouterr().out
    assert "NOT VALID FOR THE LEADERBOARD" in printed and "Gate: PASSED (exit code 9)" in printed


@pytest.mark.parametrize(("args", "message"), [
    (["s1.json", "s2.json"], "no gate: give --baseline"),
    (["s1.json", "s2.json", "--fail-under", "happiness=0.5"], "unknown metric 'happiness'"),
    (["s1.json", "s2.json", "--min-pass", "5/4"], "--min-pass: K/N with 1 <= K <= N"),
    (["s1.json", "s2.json", "--baseline", "nothing.json"], "--baseline:"),
    (["s1.json", "s2.json", "--baseline", "base.json::nobody"], "no agent 'nobody' in baseline"),
])  # fmt: skip
def test_bad_gates_are_usage_errors(runs, args, message, capsys):
    assert pi_main(["gate", *args]) == 4
    assert message in capsys.readouterr().err
