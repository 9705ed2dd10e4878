"""One validating reader of result rows: every tool that computes numbers from a file reads it here.

``pi report``, ``pi compare``, ``pi plan``, the HTML report (:func:`read_rows_file`) and the
``--pibench-baseline`` gate (:func:`read_baseline`) take our results file, a journal, or a
pytest-json-report file. A number computed from a malformed row is silently wrong (an
``all_passed`` of ``"yes"`` counts as a pass; a row listed twice counts twice), so a file is
refused as a whole, with a :class:`RowsError` naming the file, the row and the field, when

- a row is not an object, or the results format version is not ours;
- a row lacks ``scenario_id``, ``agent``, ``status`` or ``all_passed``, or one of the fields the
  statistics read has the wrong type (``all_passed`` and event flags must be booleans, ``trial``
  a whole number, scores numbers);
- two rows share (agent, scenario, trial).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, cast

from pytest_pibench.results.document import (
    JOURNAL_FORMAT,
    RESULTS_FORMAT,
    RESULTS_FORMAT_VERSION,
    load_baseline,
    read_results,
)
from pytest_pibench.results.types import FLAG_NAMES, ResultRow, ResultsDocument

__all__ = ["JOURNAL_FORMAT_VERSION", "RowsError", "check_rows", "read_baseline", "read_rows_file"]

JOURNAL_FORMAT_VERSION = 1
"""The ``format_version`` of a journal's header line (what ``Journal.open`` writes)."""


class RowsError(ValueError):
    """An input no statistic may be computed from; the message names the file, the row and the field."""

    def __init__(self, file: str | Path, problem: str, *, row: str | None = None, field: str | None = None) -> None:
        self.file, self.row, self.field = str(file), row, field
        parts = [self.file] if row or field or self.file not in problem else []
        parts += [row] if row else []
        parts += [f"field '{field}'"] if field else []
        super().__init__(": ".join([*parts, problem]))


def _shown(value: Any) -> str:
    """A value as JSON, cut short (it is an attacker's text as often as not)."""
    try:
        text = json.dumps(value, default=str, ensure_ascii=True)
    except (ValueError, RecursionError):
        text = type(value).__name__
    return text if len(text) <= 60 else text[:57] + "..."


def _row_name(index: int, row: Mapping[str, Any], place: str | None) -> str:
    """``row 3 (agent "oracle", scenario "A", trial 0)``: its index and, as far as it has them, its key."""
    key = [f"{name} {_shown(row[field])}" for name, field in
           (("agent", "agent"), ("scenario", "scenario_id"), ("trial", "trial")) if field in row]  # fmt: skip
    where = f" in {place}" if place else ""
    return f"row {index}{where}" + (f" ({', '.join(key)})" if key else "")


def _text(value: Any) -> bool:
    return isinstance(value, str) and bool(value)


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _checks(value: Any) -> bool:
    return isinstance(value, list) and all(
        isinstance(c, Mapping) and c.get("passed") in (True, False, None) for c in value
    )


_REQUIRED: tuple[tuple[str, Callable[[Any], bool], str], ...] = (
    ("scenario_id", _text, "a non-empty string"),
    ("agent", _text, "a non-empty string"),
    ("status", _text, "a non-empty string (completed, error...)"),
    ("all_passed", lambda v: isinstance(v, bool), "true or false"),
)
"""What every statistic reads: which scenario, whose, scored or not, passed or not."""

_OPTIONAL: tuple[tuple[str, Callable[[Any], bool], str], ...] = (
    ("trial", lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 0, "a whole number >= 0"),
    ("reward", _number, "a number"),
    ("semantic_score", lambda v: v is None or _number(v), "a number or null"),
    ("event_flags", lambda v: isinstance(v, Mapping) and all(isinstance(v.get(f, False), bool) for f in FLAG_NAMES),
     "an object whose flags (V_r, UR_r, OR_r, EA_r, AT_r) are true or false"),
    ("outcome_checks", _checks, "a list of check objects whose 'passed' is true, false or null"),
    ("dimensions", lambda v: isinstance(v, Mapping) and all(isinstance(d, Mapping) and _checks(d.get("checks", []))
                                                           for d in v.values()),
     "an object of dimensions, each with a list of check objects"),
)  # fmt: skip
"""Fields a row may leave out (upstream's defaults apply), but which must have the right type when present."""


def _row_problem(row: Mapping[str, Any]) -> tuple[str, str] | None:
    """``(field, what is wrong)`` for the first bad field of ``row``, or None."""
    for field, valid, expected in _REQUIRED:
        if field not in row:
            return field, f"missing (every row needs it, {expected})"
        if not valid(row[field]):
            return field, f"must be {expected}, got {_shown(row[field])}"
    for field, valid, expected in _OPTIONAL:
        if field in row and not valid(row[field]):
            return field, f"must be {expected}, got {_shown(row[field])}"
    return None


def check_rows(file: str | Path, rows: Any, places: Sequence[str] | None = None) -> list[ResultRow]:
    """``rows`` when every one is a well-formed row and no (agent, scenario, trial) repeats.

    ``places`` names where each row was found in the file, for a file whose rows are not its
    ``rows`` list (a pytest-json-report file: ``tests[4].metadata.pibench``).

    Raises:
        RowsError: naming the file, the row and the field.
    """
    if not isinstance(rows, list):
        raise RowsError(file, f"must be a list of row objects, got {_shown(rows)}", field="rows")
    seen: dict[tuple[str, str, int], int] = {}
    for index, row in enumerate(rows):
        place = places[index] if places else None
        if not isinstance(row, dict):
            where = f"row {index}" + (f" in {place}" if place else "")
            raise RowsError(file, f"not an object: {_shown(row)} (every row is one result object)", row=where)
        problem = _row_problem(row)
        if problem:
            raise RowsError(file, problem[1], row=_row_name(index, row, place), field=problem[0])
        key = (row["agent"], row["scenario_id"], int(row.get("trial", 0)))
        if key in seen:
            raise RowsError(
                file,
                f"the same (agent, scenario, trial) as row {seen[key]}: a row counted twice changes every rate",
                row=_row_name(index, row, place),
                field="agent, scenario_id, trial",
            )
        seen[key] = index
    return cast(list[ResultRow], rows)


def _check_version(file: str | Path, version: Any, what: str = "results") -> None:
    expected = JOURNAL_FORMAT_VERSION if what == "journal" else RESULTS_FORMAT_VERSION
    if type(version) is not int or version != expected:  # not a bool: True == 1
        raise RowsError(
            file,
            f"{_shown(version) if version is not None else 'missing'}: this pytest-pibench reads {what} format "
            f"version {expected} only (read the file with the pytest-pibench version that wrote it)",
            field="format_version",
        )


def _check_journal(path: Path) -> None:
    """What :func:`~pytest_pibench.results.document.read_results` skips in a journal, refused instead.

    Only the last line may be torn (the process died writing it); any other line that is not
    a JSON object, or a ``row`` entry that is not an object, would drop a row silently. The
    ``carried`` rows of a resumed run are checked apart: a ``row`` line of the same item
    supersedes its carried row, so that pair is no duplicate.
    """
    lines = path.read_text(encoding="utf-8").splitlines()
    last = max((n for n, line in enumerate(lines, start=1) if line.strip()), default=0)
    found: dict[str, tuple[list[Any], list[str]]] = {"row": ([], []), "carried": ([], [])}
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except (ValueError, RecursionError):
            if number == last:
                continue
            raise RowsError(
                path, "not JSON (only the last line of a journal may be torn)", row=f"line {number}"
            ) from None
        if not isinstance(entry, dict):
            raise RowsError(path, f"not an object: {_shown(entry)}", row=f"line {number}")
        if entry.get("format") == JOURNAL_FORMAT:
            _check_version(path, entry.get("format_version"), "journal")
        else:
            for kind in (k for k in found if k in entry):
                found[kind][0].append(entry[kind])
                found[kind][1].append(f"line {number}")
    for rows, places in found.values():
        check_rows(path, rows, places)


def _from_json_report(path: str | Path, data: Mapping[str, Any]) -> ResultsDocument:
    """The rows (``tests[*].metadata.pibench``) and run facts (the ``pibench`` block) of a pytest-json-report file."""
    block = data.get("pibench")
    if block is not None and not isinstance(block, dict):
        raise RowsError(path, f"must be an object, got {_shown(block)}", field="pibench")
    block = block or {}
    if "format_version" in block:
        _check_version(path, block["format_version"])
    rows: list[Any] = []
    places: list[str] = []
    for index, test in enumerate(data["tests"]):
        metadata = test.get("metadata") if isinstance(test, Mapping) else None
        if isinstance(metadata, Mapping) and "pibench" in metadata:
            rows.append(metadata["pibench"])
            places.append(f"tests[{index}].metadata.pibench")
    if not rows:
        raise RowsError(path, "no pi-bench metadata (was the run made with --json-report?)")
    document: ResultsDocument = {
        "rows": check_rows(path, rows, places),
        "wall_time": round(float(data["duration"]) if _number(data.get("duration")) else 0.0, 3),
        "complete": block.get("complete", True) is not False,
    }
    for key in ("validity", "settings", "benchmark_version", "format_version", "created"):
        if block.get(key) is not None:
            document[key] = block[key]
    return document


def read_rows_file(path: str | Path) -> ResultsDocument:
    """A validated document from our results file (a partial one folds its journal in), a journal,
    or a pytest-json-report file.

    Raises:
        RowsError: for a file that cannot be read, is none of these, or holds a bad row.
    """
    try:
        document = read_results(path)
    except (ValueError, AttributeError, TypeError) as first:  # folding a journal trips on a malformed row too
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):
            raise RowsError(path, str(first)) from None
        if isinstance(data, dict) and isinstance(data.get("tests"), list):
            return _from_json_report(path, data)
        if not isinstance(data, dict) or data.get("format") != RESULTS_FORMAT:
            raise RowsError(path, "neither a pi-bench results file nor a pytest-json-report file") from None
        _check_results(path, cast(ResultsDocument, data))  # says which row and field
        raise RowsError(path, str(first)) from None
    if document.get("journal") == str(Path(path)):  # a journal read on its own
        _check_journal(Path(path))
        return document
    _check_results(path, document)
    return document


def _check_results(path: str | Path, document: ResultsDocument) -> None:
    """Our results file: its version, its rows, and the journal a partial one folds in."""
    _check_version(path, document.get("format_version"))
    journal = document.get("journal")
    if document.get("complete") is False and journal:
        folded = Path(str(journal))
        folded = folded if folded.is_absolute() else Path(path).parent / folded.name
        if folded.is_file():
            _check_journal(folded)
    check_rows(path, document.get("rows"))


def read_baseline(path: str) -> ResultsDocument:
    """``--pibench-baseline``'s results file, validated like every other input (a RowsError with the reason)."""
    document = load_baseline(path)
    _check_version(path, document.get("format_version"))
    check_rows(path, document.get("rows"))
    return document
