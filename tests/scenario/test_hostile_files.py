"""One bad input file errors itself only (issue 23, class 4).

Whatever a scenario file holds (an integer past Python's str-conversion limit,
nesting deeper than anything later can walk, NaN, a lone surrogate, a key
given twice, bytes that are not UTF-8, nothing at all, a directory), it is
either loaded or exactly one clear error naming the file: one ``scenario``
error row in a run, one ``pi validate`` problem, and every other file still
runs and validates. The oracle on a scenario without a gold trajectory is the
scenario's error row, never a scored agent failure.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from conftest import TOY_ALLOW
from pytest_pibench import ScenarioError, bind_scenario, load_scenario
from pytest_pibench.cli import main
from pytest_pibench.packs.loading import DomainError
from pytest_pibench.paths import is_scenario_candidate
from pytest_pibench.runner import run_one
from pytest_pibench.scenario.strict_json import MAX_DEPTH, MAX_INT_DIGITS, StrictJSONError, decode_strict

PRICE = "environment_setup.initial_state_patch.items[0].price"
TOY_TEXT = TOY_ALLOW.read_text()


def with_price(literal: str) -> bytes:
    """The toy ALLOW scenario, sound but for the literal standing where its item price is."""
    data = json.loads(TOY_TEXT)
    data["environment_setup"]["initial_state_patch"]["items"][0]["price"] = "@@"
    return json.dumps(data).replace('"@@"', literal).encode()


def nested(levels: int) -> str:
    return "[" * levels + "]" * levels


def patch_nested(levels: int) -> bytes:
    """The toy scenario with ``levels`` nested arrays under a new key of its state patch (3 levels deep)."""
    data = json.loads(TOY_TEXT)
    data["environment_setup"]["initial_state_patch"]["extra"] = "@@"
    return json.dumps(data).replace('"@@"', nested(levels)).encode()


# name -> (bytes, the one problem reported for the file); every file but for its defect is the sound toy scenario
HOSTILE: dict[str, tuple[bytes, str]] = {
    "huge_int": (with_price("9" * 5000), f"{PRICE}: integer literal with 5000 digits: at most 4300 are allowed"),
    "deep_top": (nested(100_000).encode(), f"nested more than {MAX_DEPTH} levels deep"),
    "deep_patch": (patch_nested(MAX_DEPTH - 2),
                   "environment_setup.initial_state_patch.extra[0][0][0][0][0]...(92 more levels): "
                   f"nested more than {MAX_DEPTH} levels deep"),
    "nan": (with_price("NaN"), f"{PRICE}: NaN is not valid JSON (RFC 8259 has no NaN or Infinity)"),
    "infinity": (with_price("-Infinity"), f"{PRICE}: -Infinity is not valid JSON (RFC 8259 has no NaN or Infinity)"),
    "huge_float": (with_price("1e999"), f"{PRICE}: number 1e999 is out of range (it would be infinity)"),
    "surrogate": (TOY_TEXT.replace("HIDDEN-NOTE-ALLOW", "\\ud800HIDDEN").encode(),
                  "meta.notes: lone surrogate \\ud800 in a string: not valid Unicode"),
    "duplicate_key": (('{"label": "DENY",' + TOY_TEXT.lstrip()[1:]).encode(),
                      "label: duplicate key: given 2 times in one object"),
    "not_utf8": (TOY_TEXT.replace("HIDDEN-NOTE-ALLOW", "caf\udce9", 1).encode("utf-8", "surrogateescape"),
                 "not UTF-8: byte 0xe9 at byte offset "),
    "blank": (b" \n\t", "file is empty"),
    "zero_bytes": (b"", "file is empty"),
}


def fnmatch_literal(text: str) -> str:
    """``text`` as an fnmatch pattern matching itself (``[0]`` in a JSON path is a character class otherwise)."""
    return "".join(f"[{c}]" if c in "[]*?" else c for c in text)


def write_hostile(folder: Path) -> dict[str, Path]:
    paths = {}
    for name, (raw, _) in HOSTILE.items():
        paths[name] = folder / f"zz_{name}.json"
        paths[name].write_bytes(raw)
    return paths


# ----------------------------------------------------------------- loading


@pytest.mark.parametrize("name", HOSTILE)
def test_each_hostile_file_is_one_clear_load_error(tmp_path, name):
    raw, message = HOSTILE[name]
    path = tmp_path / f"{name}.json"
    path.write_bytes(raw)
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    assert str(info.value).startswith(f"{path}: {message}")
    assert len(info.value.problems) == 1
    assert is_scenario_candidate(path, tmp_path)  # collected and validated, never skipped


def test_a_directory_and_a_document_that_is_not_an_object_are_load_errors(tmp_path):
    folder = tmp_path / "dir.json"
    folder.mkdir()
    with pytest.raises(ScenarioError, match=r"dir\.json: cannot read file: Is a directory$"):
        load_scenario(folder)
    array = tmp_path / "array.json"
    array.write_text(f"[{TOY_TEXT}]")
    with pytest.raises(ScenarioError, match=r"array\.json: expected a JSON object \(a scenario\), found an array$"):
        load_scenario(array)


def test_nesting_up_to_the_limit_loads_and_runs(workspace):
    """The limit refuses only what later steps cannot hold: one level less runs a normal episode."""
    path = workspace / "scenarios" / "toyshop" / "deep_ok.json"
    path.write_bytes(patch_nested(MAX_DEPTH - 3))
    assert load_scenario(path).scenario_id == "TOY_001_ITEM_REFUND"
    row = run_one(path, "oracle")
    assert row["status"] == "completed" and row["all_passed"] is True


def test_integer_digits_up_to_the_limit_load():
    assert decode_strict(b"[" + b"7" * MAX_INT_DIGITS + b"]") == [int("7" * MAX_INT_DIGITS)]
    with pytest.raises(StrictJSONError, match=rf"^\[0\]: integer literal with {MAX_INT_DIGITS + 1} digits"):
        decode_strict(b"[-" + b"7" * (MAX_INT_DIGITS + 1) + b"]")


def test_the_first_problem_in_document_order_is_shown_with_a_count_of_the_others():
    raw = b'{"a": {"b": [1, NaN]}, "\\udc00k": 1, "c": 1e400, "d": {"x": 1, "x": 2}}'
    with pytest.raises(StrictJSONError) as info:
        decode_strict(raw)
    assert info.value.problems == [
        ("a.b[1]", "NaN is not valid JSON (RFC 8259 has no NaN or Infinity) (and 3 more such problem(s) in the file)")
    ]
    with pytest.raises(StrictJSONError, match=r"^\\udc00k: lone surrogate \\udc00 in a key"):
        decode_strict(b'{"\\udc00k": 1, "c": 1e400}')
    with pytest.raises(StrictJSONError, match=r"^d\.x: duplicate key: given 3 times in one object$"):
        decode_strict(b'{"d": {"x": 1, "y": 0, "x": 2, "x": 3}}')


def test_strict_decoding_keeps_sound_json_as_it_is():
    raw = '\ufeff{"a": [1, -2.5, true, null, "é\\u00e9"], "b": {"c": 1e300}}'.encode()
    assert decode_strict(raw) == {"a": [1, -2.5, True, None, "éé"], "b": {"c": 1e300}}


HOSTILE_VALUES = ["null", "true", "-1", "1.5", '""', "[]", "{}", "[null]", '{"": null}', '"' + "y" * 5000 + '"',
                  "9" * MAX_INT_DIGITS, nested(20), '"../../x"']


def json_paths(value: Any, path: tuple[str | int, ...] = ()) -> list[tuple[str | int, ...]]:
    children = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else []
    return [path] + [p for key, child in children for p in json_paths(child, (*path, key))]


def test_any_value_anywhere_loads_or_is_a_scenario_error(workspace):
    """Every value of the toy scenario replaced by each odd value: the loader and the binding only ever say
    ScenarioError/DomainError (a collection error, a harness row or a crashed validator otherwise)."""
    base = json.loads(TOY_TEXT)
    target = workspace / "scenarios" / "toyshop" / "fuzz.json"
    outcomes = {"loaded": 0, "refused": 0}
    for path in json_paths(base)[1:]:
        for literal in HOSTILE_VALUES:
            data = copy.deepcopy(base)
            parent = data
            for key in path[:-1]:
                parent = parent[key]
            parent[path[-1]] = "@@"
            target.write_text(json.dumps(data).replace('"@@"', literal))
            try:
                bind_scenario(load_scenario(target))
            except (ScenarioError, DomainError):
                outcomes["refused"] += 1
            else:
                outcomes["loaded"] += 1
    assert outcomes["loaded"] > 100 and outcomes["refused"] > 100  # both branches are really taken


def test_a_folder_holding_a_huge_integer_array_is_not_a_scenario(tmp_path):
    """Valid JSON that is clearly no scenario stays out of collection, however long its integers."""
    path = tmp_path / "ids.json"
    path.write_text("[" + "9" * 5000 + "]")
    assert not is_scenario_candidate(path, tmp_path)


# ----------------------------------------------------------------- the engine


@pytest.mark.parametrize("name", ["huge_int", "deep_top", "nan", "duplicate_key", "zero_bytes"])
def test_run_one_makes_one_scenario_error_row(tmp_path, name):
    raw, message = HOSTILE[name]
    path = tmp_path / f"{name}.json"
    path.write_bytes(raw)
    row = run_one(path, "oracle")
    assert row["status"] == "error" and row["failure_cause"] == "scenario"
    assert row["termination_reason"] == "scenario_error"
    assert row["error"].startswith(f"ScenarioError: {path}: {message}")


def without_gold(workspace: Path) -> Path:
    data = json.loads(TOY_TEXT)
    del data["reference_trajectory"]
    data["meta"]["scenario_id"] = "TOY_007_NO_GOLD"
    path = workspace / "scenarios" / "toyshop" / "no_gold.json"
    path.write_text(json.dumps(data))
    return path


def test_the_oracle_without_a_gold_trajectory_is_a_scenario_error_row(workspace):
    path = without_gold(workspace)
    row = run_one(path, "oracle")
    assert row["status"] == "error" and row["failure_cause"] == "scenario"
    assert row["termination_reason"] == "scenario_error"
    assert row["error"] == (f"ScenarioError: {path.resolve()}: reference_trajectory: missing: the oracle replays the "
                            "gold trajectory and has none to replay")
    other = run_one(path, "baseline:deny")  # any other agent plays the file and is scored as usual
    assert other["status"] == "completed" and other["all_passed"] is False


# ----------------------------------------------------------------- the plugin


def test_a_huge_integer_file_errors_itself_and_the_run_goes_on(toy_project):
    """The issue's case: it aborted collection ("interrupted by KeyboardInterrupt") before."""
    (toy_project.path / "scenarios" / "toyshop" / "zz_huge.json").write_bytes(HOSTILE["huge_int"][0])
    result = toy_project.runpytest("scenarios", "--pibench-agent=oracle", "-p", "no:randomly")
    result.assert_outcomes(passed=2, failed=1)
    assert result.ret == 9  # the error budget (0 by default) is exceeded by the one error row: not "interrupted"
    document = json.loads((toy_project.path / "pibench-results.json").read_text())
    assert document["complete"] is True and document["ended_by"] is None
    (bad,) = [r for r in document["rows"] if r["status"] == "error"]
    assert bad["failure_cause"] == "scenario" and bad["nodeid"] == "scenarios/toyshop/zz_huge.json::zz_huge"
    assert f"{PRICE}: integer literal with 5000 digits" in bad["error"]
    assert sorted(r["scenario_id"] for r in document["rows"] if r["status"] == "completed") == [
        "TOY_001_ITEM_REFUND", "TOY_002_EXPENSIVE_REFUND"]


def test_every_hostile_file_is_one_error_row_beside_normal_rows(toy_project):
    write_hostile(toy_project.path / "scenarios" / "toyshop")
    result = toy_project.runpytest("scenarios", "--pibench-agent=oracle", "--pibench-max-error-rate=1", "-rf",
                                   "-p", "no:randomly")
    result.assert_outcomes(passed=2, failed=len(HOSTILE))
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    for name, (_, message) in HOSTILE.items():
        result.stdout.fnmatch_lines([f"FAILED scenarios/toyshop/zz_{name}.json::zz_{name} - *"])
        result.stdout.fnmatch_lines([f"*zz_{name}.json: {fnmatch_literal(message)}*"])
    rows = json.loads((toy_project.path / "pibench-results.json").read_text())["rows"]
    errors = {r["nodeid"]: r for r in rows if r["status"] == "error"}
    assert sorted(errors) == sorted(f"scenarios/toyshop/zz_{n}.json::zz_{n}" for n in HOSTILE)
    assert {r["failure_cause"] for r in errors.values()} == {"scenario"}
    assert [r["all_passed"] for r in rows if r["status"] == "completed"] == [True, True]


def test_the_oracle_without_gold_in_a_run_is_an_error_row_not_a_scored_failure(toy_project):
    data = json.loads(TOY_TEXT)
    del data["reference_trajectory"]
    data["meta"]["scenario_id"] = "TOY_007_NO_GOLD"
    (toy_project.path / "scenarios" / "toyshop" / "no_gold.json").write_text(json.dumps(data))
    result = toy_project.runpytest("scenarios", "--pibench-agent=oracle", "--pibench-max-error-rate=1")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*agent failures (scored)*0", "*Error rows (not scored)*1"])
    document = json.loads((toy_project.path / "pibench-results.json").read_text())
    (row,) = [r for r in document["rows"] if r["scenario_id"] == "TOY_007_NO_GOLD"]
    assert row["status"] == "error" and row["failure_cause"] == "scenario"
    assert "reference_trajectory: missing" in row["error"]


# ----------------------------------------------------------------- pi validate


def test_pi_validate_reports_each_hostile_file_once_and_validates_the_rest(workspace, capsys):
    folder = workspace / "scenarios" / "toyshop"
    paths = write_hostile(folder)
    bad_policy = json.loads(TOY_TEXT)
    bad_policy["meta"]["scenario_id"] = "TOY_008_BAD_POLICY"
    bad_policy["policy_context"] = {"policy_text_ref": "latin1_policy.md"}
    (workspace / "latin1_policy.md").write_bytes(b"Refunds: caf\xe9 rules")
    (folder / "zz_bad_policy.json").write_text(json.dumps(bad_policy))
    long_domain = json.loads(TOY_TEXT)
    long_domain["meta"]["domain"] = "d" * 5000
    (folder / "zz_long_domain.json").write_text(json.dumps(long_domain))
    assert main(["validate", str(folder)]) == 1
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[-1] == f"{len(HOSTILE) + 4} scenario file(s), {len(HOSTILE) + 2} problem(s)"
    for name, (_, message) in HOSTILE.items():
        (line,) = [line for line in lines if line.startswith(f"{paths[name]}: ")]
        assert line.startswith(f"{paths[name]}: [schema] {message}")
    (line,) = [line for line in lines if "zz_bad_policy.json" in line]
    assert line.startswith(f"{folder / 'zz_bad_policy.json'}: [schema] policy_context.policy_text_ref: cannot read ")
    (line,) = [line for line in lines if "zz_long_domain.json" in line]
    assert line.startswith(f"{folder / 'zz_long_domain.json'}: [schema] meta.domain: unknown domain 'ddd")
    assert "toy_001_item_refund.json" not in out and "toy_002_expensive_item_refund.json" not in out  # validated, sound
