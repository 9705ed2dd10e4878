"""pi report, pi report --html, pi compare, pi plan and the --pibench-baseline gate refuse a malformed input.

Each tool reads rows through one validating reader, so each bad input class is a usage error
(exit 4) whose message names the file, the row and the field, never a silently wrong number.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import TOY_ALLOW, TOY_ESCALATE
from pytest_pibench.cli import USAGE_ERROR, main
from pytest_pibench.results.document import atomic_write_json, results_document
from pytest_pibench.results.rows import error_row
from pytest_pibench.runner import run_one

ALLOW_ID, ESC_ID = "TOY_001_ITEM_REFUND", "TOY_002_EXPENSIVE_REFUND"


def _document(agent: str, files: tuple[Path, ...] = (TOY_ALLOW, TOY_ESCALATE)) -> dict[str, Any]:
    rows = [run_one(f, agent) for f in files]
    return json.loads(json.dumps(results_document(rows, {"agents": [agent], "trials": 1}, 1.0)))


@pytest.fixture(scope="module")
def oracle() -> dict[str, Any]:
    return _document("oracle")


@pytest.fixture(scope="module")
def deny() -> dict[str, Any]:
    return _document("baseline:deny")


def _write(folder: Path, name: str, data: dict[str, Any]) -> str:
    atomic_write_json(folder / name, data)
    return str(folder / name)


def _bad_deny(change: Callable[[dict[str, Any]], None], deny: dict[str, Any]) -> dict[str, Any]:
    data = copy.deepcopy(deny)
    change(data)
    return data


def _row1(data: dict[str, Any], field: str, value: Any = None, *, drop: bool = False) -> None:
    if drop:
        del data["rows"][1][field]
    else:
        data["rows"][1][field] = value


ROW1 = f'row 1 (agent "baseline:deny", scenario "{ESC_ID}", trial 0)'
BAD: dict[str, tuple[Callable[[dict[str, Any]], None], str]] = {
    "row not an object": (lambda d: d["rows"].__setitem__(1, ["not", "a", "row"]),
                          'row 1: not an object: ["not", "a", "row"]'),
    "format_version not ours": (lambda d: d.__setitem__("format_version", 2),
                                "field 'format_version': 2: this pytest-pibench reads results format version 1 only"),
    "all_passed not a boolean": (lambda d: _row1(d, "all_passed", "yes"),
                                 f"{ROW1}: field 'all_passed': must be true or false, got \"yes\""),
    "scenario_id missing": (lambda d: _row1(d, "scenario_id", drop=True),
                            'row 1 (agent "baseline:deny", trial 0): field \'scenario_id\': missing'),
    "agent missing": (lambda d: _row1(d, "agent", drop=True),
                      f'row 1 (scenario "{ESC_ID}", trial 0): field \'agent\': missing'),
    "all_passed missing": (lambda d: _row1(d, "all_passed", drop=True), f"{ROW1}: field 'all_passed': missing"),
    "duplicate row": (lambda d: d["rows"].append(copy.deepcopy(d["rows"][0])),
                      f'row 2 (agent "baseline:deny", scenario "{ALLOW_ID}", trial 0): '
                      "field 'agent, scenario_id, trial': the same (agent, scenario, trial) as row 0"),
}  # fmt: skip


def _tools(tmp_path: Path, bad: str, good: str) -> dict[str, list[str]]:
    return {
        "report": ["report", bad],
        "html": ["report", bad, "--html", str(tmp_path / "report.html")],
        "compare": ["compare", good, bad],
        "plan": ["plan", bad, "--difference", "0.5"],
    }


def test_every_tool_reads_the_good_files(oracle, deny, tmp_path, capsys):
    good, other = _write(tmp_path, "oracle.json", oracle), _write(tmp_path, "deny.json", deny)
    for name, argv in _tools(tmp_path, other, good).items():
        assert main(argv) == 0, (name, capsys.readouterr().err)
    assert (tmp_path / "report.html").is_file()


@pytest.mark.parametrize("tool", ["report", "html", "compare", "plan"])
@pytest.mark.parametrize("case", list(BAD))
def test_each_tool_refuses_each_bad_input(oracle, deny, tmp_path, capsys, tool, case):
    change, says = BAD[case]
    good = _write(tmp_path, "oracle.json", oracle)
    bad = _write(tmp_path, "deny.json", _bad_deny(change, deny))
    command = "report" if tool == "html" else tool
    assert main(_tools(tmp_path, bad, good)[tool]) == USAGE_ERROR
    out, err = capsys.readouterr()
    assert err.startswith(f"pi: {command}: {bad}: {says}"), err
    assert out == "" and not (tmp_path / "report.html").exists()  # nothing computed from it, nothing written


def test_a_deny_baseline_cannot_be_passed_off_as_the_oracle(oracle, deny, tmp_path, capsys):
    """``all_passed: "yes"`` on every row made a deny baseline equal to the oracle; the real pi command refuses it."""
    forged = copy.deepcopy(deny)
    for row in forged["rows"]:
        row["all_passed"] = "yes" if not row["all_passed"] else row["all_passed"]
    good, bad = _write(tmp_path, "oracle.json", oracle), _write(tmp_path, "deny.json", forged)
    out = subprocess.run([sys.executable, "-m", "pytest_pibench", "compare", good, bad],
                         capture_output=True, text=True, cwd=tmp_path, check=False)  # fmt: skip
    assert out.returncode == USAGE_ERROR and out.stdout == ""
    assert f"pi: compare: {bad}: row 0 (agent \"baseline:deny\", scenario \"{ALLOW_ID}\", trial 0): " \
           "field 'all_passed': must be true or false, got \"yes\"" in out.stderr  # fmt: skip


def test_compare_refuses_two_files_with_no_scenario_in_common(tmp_path, capsys):
    first = _write(tmp_path, "a.json", _document("oracle", (TOY_ALLOW,)))
    second = _write(tmp_path, "b.json", _document("baseline:deny", (TOY_ESCALATE,)))
    assert main(["compare", first, second]) == USAGE_ERROR
    out, err = capsys.readouterr()
    assert out == ""
    assert err == (
        f"pi: compare: {first} and {second}: field 'scenario_id': no scenario in common between "
        f"oracle ({first}) and baseline:deny ({second}) (1 and 1 scenarios): compare runs of the same scenarios\n"
    )


def test_compare_refuses_when_no_common_scenario_was_scored_on_both_sides(oracle, tmp_path, capsys):
    errors = [error_row(sid, "the user simulator failed", agent="baseline:deny") for sid in (ALLOW_ID, ESC_ID)]
    first = _write(tmp_path, "a.json", oracle)
    second = _write(tmp_path, "b.json", results_document(errors, {"agents": ["baseline:deny"]}, 1.0))
    assert main(["compare", first, second]) == USAGE_ERROR
    assert "field 'status': no scenario in common was scored on both sides" in capsys.readouterr().err


def test_compare_of_one_file_refuses_two_agents_with_no_scenario_in_common(tmp_path, capsys):
    rows = [run_one(TOY_ALLOW, "oracle"), run_one(TOY_ESCALATE, "baseline:deny")]
    both = _write(tmp_path, "both.json", results_document(rows, {"agents": ["oracle", "baseline:deny"]}, 1.0))
    assert main(["compare", both]) == USAGE_ERROR
    assert f"pi: compare: {both}: field 'scenario_id': no scenario in common" in capsys.readouterr().err


@pytest.mark.parametrize("case", ["all_passed not a boolean", "duplicate row", "format_version not ours"])
def test_the_baseline_gate_refuses_a_bad_baseline_as_a_usage_error(toy_project, deny, case):
    change, says = BAD[case]
    atomic_write_json(toy_project.path / "base.json", _bad_deny(change, deny))
    result = toy_project.runpytest("scenarios", "--pibench-agent=baseline:deny", "--pibench-baseline=base.json",
                                   "--pibench-results=")  # fmt: skip
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert f"--pibench-baseline: base.json: {says}" in result.stderr.str()
    assert "pi-bench summary" not in result.stdout.str()  # refused before any episode


def test_the_html_report_computes_its_numbers_from_the_rows_not_the_agents_block(deny, tmp_path):
    """An edited ``agents`` block cannot show numbers the rows do not support; hook extras stay."""
    from pytest_pibench.results.metrics import compute_metrics

    forged = copy.deepcopy(deny)
    recorded = forged["agents"]["baseline:deny"]["metrics"]
    recorded["overall_score"], recorded["compliance_rate"] = 1.0, 1.0
    recorded["extended"]["mean_steps"] = 3.5  # what a pytest_pibench_metrics hook adds
    page_path = tmp_path / "report.html"
    assert main(["report", _write(tmp_path, "deny.json", forged), "--html", str(page_path)]) == 0
    page = page_path.read_text()
    data = json.loads(page.split('<script id="pibench-data" type="application/json">')[1].split("</script>")[0])
    shown = data["contenders"][0]["metrics"]
    real = compute_metrics(deny["rows"])
    assert (shown["overall_score"], shown["compliance_rate"]) == (real["overall_score"], real["compliance_rate"])
    assert real["compliance_rate"] < 1.0 and '<div class="big">100.0%</div>' not in page
    assert shown["extended"]["mean_steps"] == 3.5
