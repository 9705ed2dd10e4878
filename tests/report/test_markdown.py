"""The markdown summary (``pi report --markdown``) and the gate block of the results file it reads."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_pibench.cli import main as pi_main
from pytest_pibench.report.markdown import markdown_summary


def _run(pytester: pytest.Pytester, *args: str) -> tuple[pytest.RunResult, dict]:
    result = pytester.runpytest("-k", "RET_00", "-p", "no:cacheprovider", *args)
    return result, json.loads((pytester.path / "r.json").read_text())


@pytest.fixture
def baseline(pytester: pytest.Pytester) -> Path:
    pytester.runpytest("--pibench-agent=oracle", "-k", "RET_00", "--pibench-trials=2", "--pibench-results=base.json",
                       "-p", "no:cacheprovider")  # fmt: skip
    return pytester.path / "base.json"


def test_the_results_file_keeps_the_gates_verdict_and_the_regressed_scenarios(pytester, baseline):
    result, document = _run(pytester, "--pibench-agent=baseline:escalate", "--pibench-trials=2",
                            f"--pibench-baseline={baseline}::oracle", "--pibench-results=r.json")  # fmt: skip
    assert result.ret == 8
    gate = document["gate"]
    assert (gate["verdict"], gate["exit_code"], gate["mode"]) == ("failed", 8, "exact")
    assert any(line.startswith("FAIL") for line in gate["lines"])
    regressed = {e["scenario_id"]: e for e in gate["regressed_scenarios"]}
    rows = [r for r in document["rows"] if not r["all_passed"]]  # the oracle passed every trial
    assert set(regressed) == {r["scenario_id"] for r in rows}
    assert all(e["passed_before"] == 2 and e["trials"] == 2 and e["passed_now"] < 2 for e in regressed.values())
    drops = [e["passed_before"] - e["passed_now"] for e in gate["regressed_scenarios"]]
    assert drops == sorted(drops, reverse=True)  # the largest drops first


def test_thresholds_and_min_pass_are_kept_and_a_run_without_a_gate_has_none(pytester):
    result, document = _run(pytester, "--pibench-agent=oracle", "--pibench-fail-under=compliance=0.9",
                            "--pibench-results=r.json")  # fmt: skip
    assert result.ret == 0
    assert document["gate"]["verdict"] == "passed" and document["gate"]["fail_under"] == ["compliance=0.9"]
    assert document["gate"]["regressed_scenarios"] == [] and document["gate"]["mode"] is None
    _, plain = _run(pytester, "--pibench-agent=oracle", "--pibench-results=r.json")
    assert "gate" not in plain


def test_the_summary_shows_the_numbers_the_verdict_and_the_regressions(pytester, baseline):
    _, document = _run(pytester, "--pibench-agent=baseline:escalate", "--pibench-trials=2",
                       f"--pibench-baseline={baseline}::oracle", "--pibench-results=r.json",
                       "--pibench-gate-mode=statistical")  # fmt: skip
    text = markdown_summary(document, max_items=3)
    metrics = document["agents"]["baseline:escalate"]["metrics"]
    low, high = metrics["extended"]["uncertainty"]["compliance"]["ci95"]
    assert f"| Full compliance (95% interval) | {metrics['compliance_rate']:.3f} ({low:.3f}-{high:.3f}) |" in text
    assert "| pass^2 |" in text and "| Policy Boundaries |" in text
    assert "### Gate: FAILED: a regression or a threshold missed (exit code 8)" in text
    regressed = document["gate"]["regressed_scenarios"]
    assert f"#### Regressed scenarios ({len(regressed)})" in text
    assert f"... and {len(regressed) - 3} more" in text  # bounded
    failed = [r for r in document["rows"] if not r["all_passed"]]
    assert f"<summary>Failed scenarios ({len(failed)})</summary>" in text


def test_warnings_come_first_and_cells_are_escaped():
    document = {
        "complete": False, "planned_items": 4, "ended_by": "interrupted by SIGTERM", "settings": {"trials": 1},
        "validity": {"problems": ["run incomplete"]}, "agents": {"a|b": {"metrics": {"overall_score": 0.5}}},
        "rows": [{"agent": "a|b", "scenario_id": "S", "trial": 0, "status": "completed", "all_passed": True,
                  "nodeid": "x"}],
        "wall_time": 1.0,
    }  # fmt: skip
    text = markdown_summary(document)  # type: ignore[arg-type]
    lines = text.splitlines()
    assert lines[2].startswith("> **PARTIAL RUN: 1 of 4 items finished; interrupted by SIGTERM")
    assert "> **NOT VALID FOR THE LEADERBOARD: run incomplete**" in text
    assert "`a\\|b`" in text and "| Overall (95% interval) | 0.500 |" in text  # no interval in the file: none shown


def test_pi_report_markdown_writes_a_file_or_standard_output(pytester, baseline, capsys):
    out = pytester.path / "summary.md"
    assert pi_main(["report", str(baseline), "--markdown", str(out)]) == 0
    assert out.read_text().startswith("## pi-bench: 9 scenarios x 2 trials, 18 episodes")
    capsys.readouterr()
    html = pytester.path / "r.html"
    assert pi_main(["report", str(baseline), "--markdown", "-", "--html", str(html)]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("## pi-bench") and "wrote" not in captured.out  # stdout is the markdown alone
    assert f"wrote {html}" in captured.err and html.exists()


def test_pi_report_markdown_merges_shards(pytester):
    for index in (1, 2):
        pytester.runpytest("--pibench-agent=oracle", "-k", "RET_00", f"--pibench-shard={index}/2",
                           f"--pibench-results=s{index}.json", "-p", "no:cacheprovider")  # fmt: skip
    command = [sys.executable, "-m", "pytest_pibench.cli", "report"]
    done = subprocess.run([*command, "s1.json", "s2.json", "--markdown", "-"], cwd=pytester.path, capture_output=True,
                          text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("## pi-bench: 9 scenarios x 1 trial, 9 episodes") and "SHARD" not in done.stdout
    alone = subprocess.run([*command, "s1.json", "--markdown", "-"],
                           cwd=pytester.path, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert "> **SHARD 1 of 2" in alone.stdout
