"""The HTML report: one self-contained page from results documents (pure Python, no browser)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_pibench import bundled_scenarios_dir, discover_scenarios, run_one
from pytest_pibench.report.html import render_html, write_html
from pytest_pibench.results.document import atomic_write_json, results_document


def _document(agents: list[str], files: list[Path], trials: int = 1) -> dict:
    rows = [run_one(f, a, trial=t) for a in agents for f in files for t in range(trials)]
    return results_document(rows, {"agents": agents, "seed": 42}, 1.5)


@pytest.fixture(scope="module")
def finra_files() -> list[Path]:
    return [f for f in discover_scenarios(bundled_scenarios_dir()) if "finra" in f.parts][:8]


def _data(html: str) -> dict:
    match = re.search(r'<script id="pibench-data" type="application/json">(.*?)</script>', html, re.S)
    assert match
    return json.loads(match.group(1))


def test_the_page_has_every_section_and_no_outside_reference(finra_files):
    html = render_html([("run", _document(["oracle", "baseline:deny"], finra_files))])
    for section in ("headline", "capabilities", "failure-shape", "scenarios", "configuration"):
        assert f'<section id="{section}">' in html
    assert html.count('<svg class="chart"') == 5  # groups, columns, flags, by domain, by label
    assert not re.search(r'(src|href)="(https?:)?//', html)  # nothing loaded at view time
    data = _data(html)
    assert [c["label"] for c in data["contenders"]] == ["oracle", "baseline:deny"]
    assert len(data["episodes"]) == len(data["details"]) == 16
    deny = data["contenders"][1]["confusion"]
    assert sum(deny[label]["DENY"] for label in deny) == 8 and all(deny[l]["ALLOW"] == 0 for l in deny)


def test_an_episode_carries_conversation_trace_failed_checks_changes_and_clauses(finra_files):
    data = _data(render_html([("run", _document(["oracle", "baseline:allow"], finra_files[:2]))]))
    oracle, allow = data["details"][0], data["details"][2]
    assert oracle["messages"][0]["role"] == "assistant" and any(m.get("calls") for m in oracle["messages"])
    assert oracle["trace"] and oracle["changes"]  # the oracle acted: its state changes are listed
    failed = [c for c in allow["checks"] if c["passed"] is False]
    notes = data["notes"]["0:" + data["episodes"][2]["sid"]]
    assert failed and all(c["detail"] for c in failed)
    cited = [notes[c["id"]] for c in failed if c["id"] in notes]
    assert cited and all(re.match(r"FIN-\d", n) for n in cited)  # the clause each failed check cites


def test_several_runs_side_by_side_and_a_partial_run_says_so(finra_files, tmp_path):
    first = _document(["oracle"], finra_files[:3])
    second = _document(["oracle"], finra_files[:3])
    second["complete"], second["ended_by"] = False, "interrupted by SIGINT"
    html = render_html([("monday.json", first), ("tuesday.json", second)])
    data = _data(html)
    assert [c["label"] for c in data["contenders"]] == ["oracle · monday.json", "oracle · tuesday.json"]
    assert "Partial run: tuesday.json did not finish" in html


def test_text_cannot_break_out_of_the_page_and_long_outputs_are_folded(finra_files):
    document = _document(["oracle"], finra_files[:1])
    messages = document["rows"][0]["transcript"]["messages"]
    messages.append({"role": "user", "content": "</script><script>alert(1)</script>" + "x" * 10_000})
    html = render_html([("run", document)])
    assert html.count("<script") == 2  # the data block and the report's own script: nothing injected
    last = _data(html)["details"][0]["messages"][-1]["content"]
    assert last.startswith("</script>") and "more characters not shown" in last and len(last) < 4100


@pytest.mark.slow
def test_a_large_run_stays_a_reasonable_size():
    files = list(discover_scenarios(bundled_scenarios_dir()))
    html = render_html([("run", _document(["oracle", "baseline:deny"], files, trials=2))])
    data = _data(html)
    assert len(data["episodes"]) == 4 * len(files)
    assert len(html) < 12 * 1024 * 1024  # 400+ episodes with full transcripts, state as diffs


def test_pi_report_html_compares_two_results_files(finra_files, tmp_path):
    atomic_write_json(tmp_path / "a.json", _document(["oracle"], finra_files[:2]))
    atomic_write_json(tmp_path / "b.json", _document(["baseline:deny"], finra_files[:2]))
    out = subprocess.run([sys.executable, "-m", "pytest_pibench", "report", "a.json", "b.json", "--html", "r.html"],
                         cwd=tmp_path, capture_output=True, text=True, check=False)  # fmt: skip
    assert out.returncode == 0, out.stderr
    data = _data((tmp_path / "r.html").read_text())
    assert [c["label"] for c in data["contenders"]] == ["oracle · a.json", "baseline:deny · b.json"]


def test_write_html_makes_folders(finra_files, tmp_path):
    path = write_html([("run", _document(["oracle"], finra_files[:1]))], tmp_path / "deep" / "r.html")
    assert path.read_text().startswith("<!DOCTYPE html>")


def test_runs_named_alike_are_told_apart_and_different_scenario_sets_are_flagged(finra_files, tmp_path):
    from pytest_pibench.report import html_report
    from pytest_pibench.results.document import atomic_write_json

    (tmp_path / "mon").mkdir()
    (tmp_path / "tue").mkdir()
    monday = _document(["oracle"], finra_files[:2])
    for row in monday["rows"]:
        row["fingerprint"] = {"sha256": "a" * 64, "key": {"scenario_sha256": row["scenario_id"]}}
    tuesday = _document(["oracle"], finra_files[:3])
    for row in tuesday["rows"]:
        row["fingerprint"] = {"sha256": "b" * 64, "key": {"scenario_sha256": row["scenario_id"]}}
    atomic_write_json(tmp_path / "mon" / "r.json", monday)
    atomic_write_json(tmp_path / "tue" / "r.json", tuesday)
    html = html_report([str(tmp_path / "mon" / "r.json"), str(tmp_path / "tue" / "r.json")], tmp_path / "x.html")
    page = html.read_text()
    assert [c["label"] for c in _data(page)["contenders"]] == ["oracle · mon/r.json", "oracle · tue/r.json"]
    assert "did not run the same scenario files" in page
    assert "over 2 scenario files" in page and "over 3 scenario files" in page


def test_error_rows_and_rows_without_transcripts_say_so(finra_files):
    from pytest_pibench.results.rows import error_row

    document = _document(["oracle"], finra_files[:2], )
    del document["rows"][1]["transcript"]
    document["rows"].append(error_row(str(finra_files[0].stem), "the user simulator failed", agent="oracle"))
    data = _data(render_html([("run", document)]))
    assert data["details"][1]["transcript"] is False and data["details"][1]["messages"] == []
    assert data["episodes"][2]["status"] == "error"
    confusion = data["contenders"][0]["confusion"]
    assert sum(sum(row.values()) for row in confusion.values()) == 2  # the error row is in no cell


def test_a_json_report_file_keeps_the_runs_configuration(tmp_path):
    import subprocess
    import sys

    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--pibench-agent=oracle",
                          "-k", "FIN_001", "--json-report", "--json-report-file=jr.json", "--pibench-results="],
                         cwd=tmp_path, capture_output=True, text=True, check=False)  # fmt: skip
    assert run.returncode == 0, run.stdout[-2000:]
    from pytest_pibench.report import html_report

    page = html_report([str(tmp_path / "jr.json")], tmp_path / "r.html").read_text()
    settings = _data(page)["runs"][0]["settings"]
    assert settings["agents"] == ["oracle"] and settings["seed"] == 42


def test_group_and_column_bars_carry_their_clustered_95_intervals(finra_files):
    document = _document(["baseline:deny"], finra_files)
    html = render_html([("run", document)])
    uncertainty = document["agents"]["baseline:deny"]["metrics"]["extended"]["uncertainty"]
    whiskers = re.findall(r'<g class="ci"><title>95% interval: ([\d.]+)% to ([\d.]+)%</title>', html)
    expected = [entry["ci95"] for part in ("groups", "columns") for entry in uncertainty[part].values() if entry["ci95"]]
    assert expected and len(whiskers) == len(expected)
    assert sorted((float(lo), float(hi)) for lo, hi in whiskers) == sorted(
        (round(lo * 100, 1), round(hi * 100, 1)) for lo, hi in expected
    )
    assert "Whiskers: 95% intervals, clustered by scenario" in html


def test_a_chart_without_intervals_draws_no_whiskers():
    from pytest_pibench.report._svg import bars

    plain = bars("t", ["a"], [("x", {"a": 0.5})])
    drawn = bars("t", ["a"], [("x", {"a": 0.5})], intervals=[{"a": [0.25, 0.75]}])
    assert 'class="ci"' not in plain and '<g class="ci"><title>95% interval: 25.0% to 75.0%</title>' in drawn
    assert 'x1="81.0"' not in drawn and 'x1="311.0"' in drawn and 'x2="471.0"' in drawn  # 230 + 1 + 0.25 * 320


def test_a_sequential_run_shows_its_verdicts_on_the_cards(finra_files):
    from pytest_pibench.results.sequential import sequential_summary

    document = _document(["oracle", "baseline:deny"], finra_files[:3])
    skipped = [{"agent": "oracle", "scenario_id": r["scenario_id"]} for r in document["rows"] if r["agent"] == "oracle"]
    document["sequential"] = sequential_summary(document["rows"], skipped, 1, 2)  # 1 of 2: one pass settles it
    html = render_html([("run", document)])
    assert "<dt>met 1/2 / not / unsettled (sequential)</dt><dd>3 / 0 / 0</dd>" in html  # the oracle passed each
    assert "<dt>met 1/2 / not / unsettled (sequential)</dt><dd>0 / 0 / 3</dd>" in html  # one failure settles nothing
    assert "(sequential)" not in render_html([("run", _document(["oracle"], finra_files[:3]))])


def test_a_runs_gate_is_shown_with_its_lines_and_regressions(finra_files):
    passed = _document(["oracle"], finra_files[:2])
    failed = _document(["baseline:deny"], finra_files[:2])
    failed["gate"] = {"verdict": "failed", "exit_code": 8, "lines": ["FAIL baseline:deny: compliance <b>0.0</b>"],
                      "regressed_scenarios": [{"scenario_id": "FIN_X", "passed_before": 1, "passed_now": 0,
                                               "trials": 1}]}  # fmt: skip
    passed["gate"] = {"verdict": "passed", "exit_code": 0, "lines": ["ok   oracle: overall = 1.0000 >= 0.5"],
                      "regressed_scenarios": []}  # fmt: skip
    html = render_html([("main.json", passed), ("pr.json", failed)])
    assert '<p class="problems">Gate FAILED for pr.json: see Run configuration.</p>' in html
    assert "Gate FAILED for main.json" not in html and "Gate PASSED for" not in html  # only what needs attention
    assert "<strong>Gate: FAILED</strong> (exit code 8)" in html and "<strong>Gate: PASSED</strong>" in html
    assert "compliance &lt;b&gt;0.0&lt;/b&gt;" in html  # escaped
    assert "Regressed scenarios (1): FIN_X (1 -&gt; 0 of 1)" in html
    assert "Gate:" not in render_html([("plain.json", _document(["oracle"], finra_files[:1]))])
