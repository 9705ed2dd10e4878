"""The one validating reader of result rows: each bad input is refused, naming the file, the row and the field.

Every statistic (pi report, compare, plan, the HTML report, the baseline gate) reads rows through
``pytest_pibench.results.reading``; a malformed row would otherwise give a silently wrong number.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import TOY_ALLOW, TOY_ESCALATE
from pytest_pibench.results.document import atomic_write_json, journal_path, results_document
from pytest_pibench.results.reading import RowsError, read_baseline, read_rows_file
from pytest_pibench.runner import run_one

ALLOW_ID, ESC_ID = "TOY_001_ITEM_REFUND", "TOY_002_EXPENSIVE_REFUND"
ROW1 = f'row 1 (agent "oracle", scenario "{ESC_ID}", trial 0)'


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    """A real results document: the oracle on both toy scenarios."""
    rows = [run_one(TOY_ALLOW, "oracle"), run_one(TOY_ESCALATE, "oracle")]
    return json.loads(json.dumps(results_document(rows, {"agents": ["oracle"], "trials": 1}, 1.0)))


def _write(tmp_path: Path, data: dict[str, Any], name: str = "run.json") -> Path:
    path = tmp_path / name
    atomic_write_json(path, data)
    return path


def _refusal(path: Path, reader: Callable[[str], Any] = read_rows_file) -> RowsError:
    with pytest.raises(RowsError) as caught:
        reader(str(path))
    return caught.value


def _set(row: int, field: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        data["rows"][row][field] = value

    return change


def _drop(row: int, field: str) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        del data["rows"][row][field]

    return change


def _duplicate(data: dict[str, Any]) -> None:
    data["rows"].append(copy.deepcopy(data["rows"][1]))


def _not_an_object(data: dict[str, Any]) -> None:
    data["rows"][1] = "passed"


# (change, row named, field named, what the message says)
BAD_ROWS: dict[str, tuple[Callable[[dict[str, Any]], None], str | None, str | None, str]] = {
    "row not an object": (_not_an_object, "row 1", None, 'not an object: "passed"'),
    "all_passed a string": (_set(1, "all_passed", "yes"), ROW1, "all_passed", 'must be true or false, got "yes"'),
    "all_passed a number": (_set(1, "all_passed", 1), ROW1, "all_passed", "must be true or false, got 1"),
    "all_passed missing": (_drop(1, "all_passed"), ROW1, "all_passed", "missing (every row needs it"),
    "scenario_id missing": (_drop(1, "scenario_id"), 'row 1 (agent "oracle", trial 0)', "scenario_id", "missing"),
    "agent missing": (_drop(1, "agent"), f'row 1 (scenario "{ESC_ID}", trial 0)', "agent", "missing"),
    "status missing": (_drop(1, "status"), ROW1, "status", "missing"),
    "trial a string": (_set(1, "trial", "0"), f'row 1 (agent "oracle", scenario "{ESC_ID}", trial "0")', "trial",
                       'must be a whole number >= 0, got "0"'),
    "event flag a string": (_set(1, "event_flags", {"V_r": "no"}), ROW1, "event_flags", "are true or false"),
    "semantic score a string": (_set(1, "semantic_score", "high"), ROW1, "semantic_score", "a number or null"),
    "check verdict a string": (_set(1, "outcome_checks", [{"passed": "yes"}]), ROW1, "outcome_checks",
                               "whose 'passed' is true, false or null"),
    "duplicate row": (_duplicate, f'row 2 (agent "oracle", scenario "{ESC_ID}", trial 0)',
                      "agent, scenario_id, trial", "the same (agent, scenario, trial) as row 1"),
}  # fmt: skip


def test_what_we_write_is_read_back_whole(document, tmp_path):
    read = read_rows_file(_write(tmp_path, document))
    assert [(r["agent"], r["scenario_id"], r["all_passed"]) for r in read["rows"]] == [
        ("oracle", ALLOW_ID, True), ("oracle", ESC_ID, True)]  # fmt: skip
    assert read_baseline(str(tmp_path / "run.json"))["rows"] == read["rows"]


@pytest.mark.parametrize("case", list(BAD_ROWS))
def test_a_bad_row_is_refused_naming_file_row_and_field(document, tmp_path, case):
    change, row, field, says = BAD_ROWS[case]
    data = copy.deepcopy(document)
    change(data)
    path = _write(tmp_path, data)
    error = _refusal(path)
    assert (error.file, error.row, error.field) == (str(path), row, field)
    named = ": ".join([str(path), row, *([f"field '{field}'"] if field else [])]) if row else str(path)
    assert str(error).startswith(f"{named}: ") and says in str(error), str(error)
    baseline = _refusal(path, read_baseline)  # the --pibench-baseline gate reads through the same checks
    assert str(baseline) == str(error)


@pytest.mark.parametrize(("version", "shown"), [(2, "2"), (True, "true"), ("1", '"1"'), (None, "missing")])
def test_another_results_format_version_is_refused(document, tmp_path, version, shown):
    data = copy.deepcopy(document)
    data["format_version"] = version
    if version is None:
        del data["format_version"]
    path = _write(tmp_path, data)
    for reader in (read_rows_file, read_baseline):
        error = _refusal(path, reader)
        assert (error.file, error.row, error.field) == (str(path), None, "format_version")
        assert str(error) == (
            f"{path}: field 'format_version': {shown}: this pytest-pibench reads results format version 1 only "
            "(read the file with the pytest-pibench version that wrote it)"
        )


def test_rows_that_are_not_a_list_are_refused(document, tmp_path):
    data = copy.deepcopy(document)
    data["rows"] = {"0": data["rows"][0]}
    error = _refusal(_write(tmp_path, data))
    assert error.field == "rows" and "must be a list of row objects" in str(error)


# ---------------------------------------------------------------- journals


def _journal(tmp_path: Path, rows: list[Any], header: dict[str, Any] | None = None, tail: str = "") -> Path:
    """A journal as a run writes it: a header line, then one ``{"row": ...}`` line per finished row."""
    path = tmp_path / "run.journal.jsonl"
    lines = [header or {"format": "pibench-journal", "format_version": 1, "settings": {"agents": ["oracle"]}}]
    lines += [{"row": row} for row in rows]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines) + tail)
    return path


def test_a_journal_with_a_torn_last_line_is_read(document, tmp_path):
    path = _journal(tmp_path, document["rows"], tail='{"row": {"scenario_id": "TOY_')  # killed mid-write
    assert [r["scenario_id"] for r in read_rows_file(path)["rows"]] == [ALLOW_ID, ESC_ID]


def test_a_bad_journal_row_is_refused_naming_its_line(document, tmp_path):
    rows = copy.deepcopy(document["rows"])
    rows[1]["all_passed"] = "yes"
    path = _journal(tmp_path, rows)
    error = _refusal(path)
    assert (error.file, error.row, error.field) == (str(path), f"row 1 in line 3 {ROW1[6:]}", "all_passed")


def test_a_journal_row_that_is_not_an_object_is_refused_not_skipped(document, tmp_path):
    path = _journal(tmp_path, [document["rows"][0], "passed"])
    error = _refusal(path)
    assert (error.row, error.field) == ("row 1 in line 3", None)
    assert str(error) == f'{path}: row 1 in line 3: not an object: "passed" (every row is one result object)'


def test_a_broken_line_before_the_last_is_refused(document, tmp_path):
    path = _journal(tmp_path, [])
    path.write_text(path.read_text() + "{oops\n" + json.dumps({"row": document["rows"][0]}) + "\n")
    assert str(_refusal(path)) == f"{path}: line 2: not JSON (only the last line of a journal may be torn)"


def test_a_resumed_journal_reads_a_row_superseding_its_carried_row_and_refuses_a_bad_carried_row(document, tmp_path):
    path = _journal(tmp_path, [document["rows"][0]])
    carried = [json.dumps({"carried": row}) + "\n" for row in document["rows"]]  # the run resumed from
    lines = path.read_text().splitlines(keepends=True)
    path.write_text(lines[0] + "".join(carried) + "".join(lines[1:]))  # header, carried rows, then the redone row
    assert [r["scenario_id"] for r in read_rows_file(path)["rows"]] == [ALLOW_ID, ESC_ID]
    forged = copy.deepcopy(document["rows"][1])
    forged["all_passed"] = "yes"
    path.write_text(lines[0] + json.dumps({"carried": forged}) + "\n" + "".join(lines[1:]))
    error = _refusal(path)
    assert (error.row, error.field) == (f"row 0 in line 2 {ROW1[6:]}", "all_passed")


def test_another_journal_format_version_is_refused(document, tmp_path):
    path = _journal(tmp_path, document["rows"], header={"format": "pibench-journal", "format_version": 9})
    error = _refusal(path)
    assert error.field == "format_version" and "reads journal format version 1 only" in str(error)


def test_a_partial_results_file_refuses_the_bad_rows_of_its_journal(document, tmp_path):
    rows = copy.deepcopy(document["rows"])
    partial = results_document(rows[:1], {"agents": ["oracle"]}, 1.0, complete=False, ended_by="killed")
    partial["journal"] = journal_path(tmp_path / "run.json").name
    path = _write(tmp_path, json.loads(json.dumps(partial)))
    rows[1]["trial"] = "zero"
    journal = _journal(tmp_path, rows)
    error = _refusal(path)  # the journal's rows are folded in: the journal's row is named
    assert (error.file, error.field) == (str(journal), "trial")
    assert error.row is not None and error.row.startswith("row 1 in line 3")


# ---------------------------------------------------------------- pytest-json-report files


def _json_report(tmp_path: Path, rows: list[Any], block: dict[str, Any] | None = None) -> Path:
    tests = [{"nodeid": "test_own.py::test_mine", "outcome": "passed"}]  # a project's own test: no row
    tests += [{"nodeid": f"scenarios/s{i}.json::oracle", "metadata": {"pibench": row}} for i, row in enumerate(rows)]
    data = {"duration": 1.5, "tests": tests, "pibench": block or {"format": "pibench-results", "format_version": 1}}
    path = tmp_path / "report.json"
    path.write_text(json.dumps(data))
    return path


def test_a_json_report_row_is_named_by_where_it_sits(document, tmp_path):
    assert len(read_rows_file(_json_report(tmp_path, document["rows"]))["rows"]) == 2
    rows = copy.deepcopy(document["rows"])
    rows[1]["all_passed"] = "yes"
    path = _json_report(tmp_path, rows)
    error = _refusal(path)
    assert (error.file, error.field) == (str(path), "all_passed")
    assert error.row == f"row 1 in tests[2].metadata.pibench {ROW1[6:]}"


def test_a_json_report_of_another_format_version_is_refused(document, tmp_path):
    path = _json_report(tmp_path, document["rows"], block={"format": "pibench-results", "format_version": 3})
    error = _refusal(path)
    assert (error.file, error.field) == (str(path), "format_version")


def test_a_json_report_row_that_is_not_an_object_is_refused(document, tmp_path):
    path = _json_report(tmp_path, [document["rows"][0], ["a", "list"]])
    assert str(_refusal(path)).startswith(f"{path}: row 1 in tests[2].metadata.pibench: not an object")
