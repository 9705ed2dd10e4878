"""Broken inputs are reported, never skipped: one candidate rule for scenario files, scenario defects.

A ``*.json`` file in a collected scenario folder that is empty, not UTF-8 or not
valid JSON is one failing item (and a ``pi validate`` problem) naming the file
and the error; a check naming a tool the domain does not have is the
scenario's error, never the agent's failure.
"""

from __future__ import annotations

import codecs
import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import TOY_ALLOW
from pytest_pibench import ScenarioError, bind_scenario, discover_scenarios, load_scenario, validate
from pytest_pibench.paths import is_scenario_candidate
from pytest_pibench.runner import run_one

TOY_IDS = ["toy_001_item_refund.json", "toy_002_expensive_item_refund.json"]

BROKEN = {
    "invalid_json": (b'{"a": 1,\n  "b": }\n', "invalid JSON at line 2 column 8: Expecting value"),
    "not_utf8": (b'{"meta": {"notes": "caf\xe9"}}', "not UTF-8: byte 0xe9 at byte offset 23 (line 1)"),
    "empty": (b"", "file is empty"),
    "blank": (b"  \n", "file is empty"),
}


def failed_items(result: pytest.RunResult) -> list[str]:
    return [line.split()[1] for line in result.outlines if line.startswith("FAILED ")]


def with_unknown_tool_check(data: dict) -> dict:
    data["meta"]["scenario_id"] = "TOY_009_TYPO"
    data["evaluation_criteria"]["policy_checks"].append(
        {"outcome_id": "E9_NO_FROB", "type": "tool_called", "tool_name": "frobnicate_order"})
    return data


# ----------------------------------------------------------------- loading and the candidate rule


@pytest.mark.parametrize("kind", BROKEN)
def test_load_names_the_file_and_where_it_breaks(tmp_path, kind):
    raw, message = BROKEN[kind]
    path = tmp_path / f"{kind}.json"
    path.write_bytes(raw)
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    assert str(info.value) == f"{path}: {message}"
    assert is_scenario_candidate(path, tmp_path)


def test_other_schema_versions_and_non_objects_fail_clearly(tmp_path):
    other = tmp_path / "v2.json"
    other.write_text(json.dumps({"schema_version": "pibench_scenario_v2", "meta": {}}))
    with pytest.raises(ScenarioError, match=r"schema_version: unsupported schema_version 'pibench_scenario_v2'; "
                                            r"expected 'pibench_scenario_v1'$"):
        load_scenario(other)
    array = tmp_path / "list.json"
    array.write_text("[1, 2]")
    with pytest.raises(ScenarioError, match="expected a JSON object .a scenario., found an array"):
        load_scenario(array)


def test_a_utf8_byte_order_mark_is_accepted(tmp_path):
    path = tmp_path / "bom.json"
    path.write_bytes(codecs.BOM_UTF8 + TOY_ALLOW.read_bytes())
    assert load_scenario(path).scenario_id == "TOY_001_ITEM_REFUND"


def test_the_candidate_rule(tmp_path):
    root = tmp_path / "scenarios"
    (root / "archive").mkdir(parents=True)
    (root / ".cache").mkdir()
    files = {
        "scen.json": TOY_ALLOW.read_text(),
        "broken.json": "{",
        "empty.json": "",
        "other_version.json": '{"schema_version": "v9"}',
        "meta_only.json": '{"meta": {}}',
        "settings.json": '{"a": 1}',
        "list.json": "[1, 2]",
        "_draft.json": "{",
        ".hidden.json": "{",
        "archive/old.json": "{",
        ".cache/x.json": "{",
    }
    for name, text in files.items():
        (root / name).write_text(text)
    candidates = {name for name in files if is_scenario_candidate(root / name, root)}
    assert candidates == {"scen.json", "broken.json", "empty.json", "other_version.json", "meta_only.json"}
    assert [p.name for p in discover_scenarios(root)] == sorted(candidates)
    # A file named explicitly is what the user asked for: always a candidate.
    assert is_scenario_candidate(root / "settings.json", root / "settings.json")
    assert list(discover_scenarios(root / "archive" / "old.json")) == [root / "archive" / "old.json"]


# ----------------------------------------------------------------- the plugin


@pytest.mark.parametrize("kind", BROKEN)
def test_broken_file_in_a_scenario_folder_is_one_failing_item(toy_project, kind):
    raw, message = BROKEN[kind]
    (toy_project.path / "scenarios" / "toyshop" / "zz_bad.json").write_bytes(raw)
    result = toy_project.runpytest("scenarios", "--pibench-agent=oracle", "-p", "no:randomly", "-rf")
    result.assert_outcomes(passed=2, failed=1)
    assert failed_items(result) == ["scenarios/toyshop/zz_bad.json::zz_bad"]
    result.stdout.fnmatch_lines([f"*zz_bad.json: {message}*"])
    assert result.ret != pytest.ExitCode.OK


def test_other_json_and_ignored_names_are_not_collected(toy_project):
    folder = toy_project.path / "scenarios" / "toyshop"
    (folder / "settings.json").write_text('{"a": 1}')
    (folder / "ids.json").write_text('["x", "y"]')
    (folder / "_draft.json").write_text("{")
    (folder / ".hidden.json").write_text("{")
    (folder / "archive").mkdir()
    (folder / "archive" / "old.json").write_text("{")
    result = toy_project.runpytest("scenarios", "--co", "-q", "--pibench-agent=oracle")
    assert sorted(line.split("::")[0].rsplit("/", 1)[1] for line in result.outlines if "::" in line) == TOY_IDS
    assert result.ret == pytest.ExitCode.OK


def test_unsupported_schema_version_fails_its_item(toy_project):
    data = json.loads(TOY_ALLOW.read_text())
    data["schema_version"] = "pibench_scenario_v2"
    (toy_project.path / "scenarios" / "toyshop" / "zz_v2.json").write_text(json.dumps(data))
    result = toy_project.runpytest("scenarios", "--pibench-agent=oracle", "-rf")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*zz_v2.json: schema_version: unsupported schema_version 'pibench_scenario_v2'*"])


def test_check_naming_an_unknown_tool_is_a_scenario_error_not_the_agents_failure(toy_project):
    data = with_unknown_tool_check(json.loads(TOY_ALLOW.read_text()))
    (toy_project.path / "scenarios" / "toyshop" / "zz_typo.json").write_text(json.dumps(data))
    result = toy_project.runpytest("scenarios", "--pibench-agent=oracle", "--pibench-trials=2", "-rf", "-v")
    result.assert_outcomes(passed=4, failed=1)  # one item for the file, not one per trial: nothing ran
    assert failed_items(result) == ["scenarios/toyshop/zz_typo.json::TOY_009_TYPO"]
    result.stdout.fnmatch_lines([
        "*zz_typo.json: evaluation_criteria.policy_checks[[]*[]]: check E9_NO_FROB names tool 'frobnicate_order', "
        "which domain 'toyshop' does not have*",
    ])
    assert "SUBFAILED" not in result.stdout.str()  # no check was scored against the agent
    rows = json.loads((toy_project.path / "pibench-results.json").read_text())["rows"]
    typo = [r for r in rows if r["scenario_id"] == "TOY_009_TYPO"]
    assert typo and all(r["status"] == "error" for r in typo)
    assert all(r["status"] == "completed" and r["all_passed"] for r in rows if r["scenario_id"] != "TOY_009_TYPO")


def test_the_scenario_error_item_keeps_its_markers(toy_project):
    data = with_unknown_tool_check(json.loads(TOY_ALLOW.read_text()))
    (toy_project.path / "scenarios" / "toyshop" / "zz_typo.json").write_text(json.dumps(data))
    result = toy_project.runpytest("scenarios", "--co", "-q", "--pibench-agent=oracle", "-m", "allow and toyshop")
    ids = [line for line in result.outlines if "::" in line]
    assert "scenarios/toyshop/zz_typo.json::TOY_009_TYPO" in ids and len(ids) == 2


# ----------------------------------------------------------------- engine and validator


def test_bind_scenario_refuses_a_check_naming_an_unknown_tool(toy_data, write_scenario):
    scenario = load_scenario(write_scenario(with_unknown_tool_check(toy_data)))
    with pytest.raises(ScenarioError, match=r"check E9_NO_FROB names tool 'frobnicate_order', which domain 'toyshop' "
                                            r"does not have"):
        bind_scenario(scenario)
    assert bind_scenario(scenario, check_tools=False).domain.name == "toyshop"


def test_a_binding_is_worked_out_again_when_what_it_rests_on_changes(toy_data, write_scenario):
    scenario = load_scenario(write_scenario(toy_data))
    first, again = bind_scenario(scenario), bind_scenario(scenario)  # the second from the first's parts
    assert again is not first and again.tools == first.tools and again.policy_text == first.policy_text
    broken = load_scenario(write_scenario(with_unknown_tool_check(json.loads(json.dumps(toy_data))), "typo.json"))
    scenario.evaluation_criteria.policy_checks = list(broken.evaluation_criteria.policy_checks)  # a new check list
    with pytest.raises(ScenarioError, match="frobnicate_order"):
        bind_scenario(scenario)
    with pytest.raises(ScenarioError, match="frobnicate_order"):  # a failed binding is not kept: it fails again
        bind_scenario(scenario)
    scenario.available_tools = ["lookup_item", "record_decision"]
    assert [t.name for t in bind_scenario(scenario, check_tools=False).tools] == ["lookup_item", "record_decision"]


def test_the_engine_reports_an_unknown_tool_check_as_an_error_row(toy_data, write_scenario):
    row = run_one(write_scenario(with_unknown_tool_check(toy_data)), "oracle")
    assert row["status"] == "error" and row["failure_cause"] == "scenario"
    assert row["termination_reason"] == "scenario_error"
    assert "frobnicate_order" in row["error"]


def test_validate_reports_broken_files_and_unknown_tools(workspace, toy_data, write_scenario):
    folder = workspace / "scenarios" / "toyshop"
    for kind, (raw, _) in BROKEN.items():
        (folder / f"{kind}.json").write_bytes(raw)
    write_scenario(with_unknown_tool_check(toy_data), "typo.json")
    (folder / "settings.json").write_text('{"a": 1}')
    report = validate(folder)
    assert len(report.files) == 7  # the two sound scenarios, four broken files, the typo; not settings.json
    by_file: dict[str, list[str]] = {}
    for problem in report.problems:
        by_file.setdefault(Path(problem.file).name, []).append(f"[{problem.rule}] {problem.message}")
    for kind, (_, message) in BROKEN.items():
        assert any(message in m for m in by_file[f"{kind}.json"]), by_file
    assert any(m.startswith("[tools] evaluation_criteria.policy_checks[") and "E9_NO_FROB" in m
               for m in by_file["typo.json"])
    assert not report.ok


def test_pi_validate_exits_1_on_a_broken_file(tmp_path):
    (tmp_path / "scen.json").write_text(TOY_ALLOW.read_text())
    (tmp_path / "bad.json").write_bytes(b'{"label": "ALLOW",}')
    out = subprocess.run([sys.executable, "-m", "pytest_pibench", "validate", str(tmp_path)],
                         capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 1
    assert f"{tmp_path / 'bad.json'}: [schema] invalid JSON at line 1 column 19" in out.stdout
    assert "2 scenario file(s)" in out.stdout
