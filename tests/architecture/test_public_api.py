"""The public surface: lazy top-level imports, the documented entry points, and the local demo end to end."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest_pibench

ROOT = Path(__file__).resolve().parents[2]


def run_python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)


def test_every_exported_name_resolves():
    for name in pytest_pibench.__all__:
        assert getattr(pytest_pibench, name) is not None, name


def test_documented_engine_imports_work_in_a_fresh_process():
    out = run_python(
        "from pytest_pibench import load_scenario, run_episode, evaluate, compute_metrics\n"
        "print(load_scenario.__module__, run_episode.__module__, evaluate.__module__, compute_metrics.__module__)"
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [
        "pytest_pibench.scenario.loading", "pytest_pibench.runner", "pytest_pibench.evaluation", "pytest_pibench.results.metrics",
    ]


def test_importing_the_package_is_light():
    out = run_python(
        "import sys, pytest_pibench\n"
        "heavy = [m for m in ('pydantic', 'litellm', 'a2a', 'rich', 'docstring_parser') if m in sys.modules]\n"
        "print(heavy)"
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_local_demo_runs_oracle_and_baselines_and_prints_metrics(tmp_path):
    artifact = tmp_path / "leaderboard.json"
    out = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "local_demo" / "run_demo.py"), "--leaderboard", str(artifact)],
        capture_output=True, text=True, cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    lines = {line.split()[0]: line.split() for line in out.stdout.splitlines() if line.startswith(("oracle", "baseline"))}
    assert set(lines) == {"oracle", "baseline:allow", "baseline:deny", "baseline:escalate", "baseline:silent"}
    oracle = lines["oracle"]
    assert oracle[2] == "0" and oracle[3] == "1.00"  # no errors, full compliance
    assert lines["baseline:silent"][3] == "0.00"
    board = json.loads(artifact.read_text())
    result = board["results"][0]
    assert board["participants"] == {"agent": "oracle"}
    assert result["metrics"]["compliance_rate"] == 1.0
    assert result["max_score"] == len(result["scenario_details"]) >= 3
    assert '"overall_score"' in out.stdout


def test_a_saved_transcript_rescores_identically(tmp_path):
    from conftest import TOY_ALLOW

    from pytest_pibench import evaluate, load_scenario, run_one

    row = run_one(TOY_ALLOW, "baseline:allow")
    saved = json.loads(json.dumps(row["transcript"]))  # as read back from a results file
    again = evaluate(load_scenario(TOY_ALLOW), saved)
    assert [c.to_dict() for c in again.outcome_results] == [
        {k: v for k, v in c.items() if k != "tier"} for c in row["outcome_checks"]
    ]
    assert again.event_flags == row["event_flags"] and again.all_passed == row["all_passed"]
