"""A run where every row is an error row shows no metric values, and no gate passes on it.

Error rows (a user simulator that always fails) are kept out of every rate; with none scored there
is no rate at all, so the summary, the results file, the HTML report and ``pi report`` show none
(not a 0.000 with an interval, which reads as an agent that failed everything).
"""

from __future__ import annotations

import json
import re

import pytest

from conftest import BROKEN_USER
from pytest_pibench.cli import main
from pytest_pibench.plugin.settings import GATE_EXIT_CODE


def test_a_run_of_error_rows_only_shows_no_metric_values(toy_project):
    toy_project.makepyfile(brokenuser=BROKEN_USER)
    result = toy_project.runpytest(
        "scenarios", "--pibench-agent=oracle", "--pibench-user=brokenuser:User", "--pibench-max-error-rate=1",
        "--pibench-fail-under=compliance=0", "--pibench-html=report.html",
    )  # fmt: skip
    # A threshold of 0 passes any number; with no scored row there is no number, and the gate fails.
    assert result.ret == GATE_EXIT_CODE
    out = result.stdout.str()
    for label in ("Overall", r"  \+- 95% \(clustered by scenario\)", "Full compliance", "  95% interval",
                  "Tier-1 overall", "Semantic score", "Policy Understanding", "Violation rate"):  # fmt: skip
        assert re.search(rf"^{label}\s+-$", out, re.MULTILINE), f"{label} shows a value:\n{out}"
    assert re.search(r"^Error rows \(not scored\)\s+2$", out, re.MULTILINE)
    result.stdout.fnmatch_lines([
        "*FAIL oracle: compliance has no value: no row was scored (2 error rows), "
        "and a run with no scored row cannot pass a gate (needed >= 0)",
    ])  # fmt: skip

    data = json.loads((toy_project.path / "pibench-results.json").read_text())
    metrics = data["agents"]["oracle"]["metrics"]
    assert (metrics["compliance_rate"], metrics["overall_score"]) == (None, None)
    extended = metrics["extended"]
    assert (extended["compliance_interval_95"], extended["tier1_overall_score"], extended["semantic_score"]) == (
        None, None, None)  # fmt: skip
    assert extended["uncertainty"]["compliance"]["estimate"] is None
    # the rest of the document is intact: the counts, every error row and why
    assert (metrics["total_scenarios"], metrics["completed"], metrics["errors"]) == (2, 0, 2)
    assert [r["status"] for r in data["rows"]] == ["error", "error"]
    assert len(extended["error_rows"]) == 2 and data["validity"]["valid"] is True

    page = (toy_project.path / "report.html").read_text()
    assert '<div class="big">n/a</div><div class="muted">overall score</div>' in page
    assert "<dt>full compliance</dt><dd>n/a [n/a, n/a]</dd>" in page

    board = toy_project.path / "board.json"
    assert main(["report", str(toy_project.path / "pibench-results.json"), "-o", str(board)]) == 0
    artifact = json.loads(board.read_text())
    assert artifact["results"][0]["metrics"]["compliance_rate"] is None
    assert artifact["results"][0]["metrics"]["overall_score"] is None


@pytest.mark.parametrize("metric", ["overall", "tier1_overall", "pass^1"])
def test_no_gate_passes_on_a_run_with_no_scored_row(toy_project, metric):
    toy_project.makepyfile(brokenuser=BROKEN_USER)
    result = toy_project.runpytest("scenarios", "--pibench-agent=oracle", "--pibench-user=brokenuser:User",
                                   "--pibench-max-error-rate=1", f"--pibench-fail-under={metric}=0",
                                   "--pibench-results=")  # fmt: skip
    assert result.ret == GATE_EXIT_CODE
    result.stdout.fnmatch_lines([f"*FAIL oracle: {metric} has no value: no row was scored (2 error rows)*"])
