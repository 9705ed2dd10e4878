"""Results on disk as they finish: the append-only journal, atomic writes, reading partial runs.

A run writes every finished row to ``<results stem>.journal.jsonl`` the moment
it arrives (one JSON object per line, flushed), so a SIGTERM, a Ctrl-C, a
crashed controller or an agent that kills the process leaves every finished
episode on disk. At the end the rows are folded into the results file, which
is written atomically (temporary file + rename), and the journal is removed.
While the run is going, the results file is a placeholder that says
``complete: false`` and names the journal, so a file left by a run that never
finished is never mistaken for a full run.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import time
from pathlib import Path
from typing import IO, Any

__all__ = [
    "JOURNAL_FORMAT",
    "RESULTS_FORMAT",
    "RESULTS_FORMAT_VERSION",
    "Journal",
    "atomic_write_json",
    "journal_path",
    "read_results",
    "unwritable_reason",
]

RESULTS_FORMAT = "pibench-results"
RESULTS_FORMAT_VERSION = 1
JOURNAL_FORMAT = "pibench-journal"


def journal_path(results: str | Path) -> Path:
    """``pibench-results.json`` -> ``pibench-results.journal.jsonl`` (same folder)."""
    target = Path(results)
    return target.with_name(f"{target.stem}.journal.jsonl")


def atomic_write_json(path: str | Path, data: Any) -> None:
    """Write JSON through a temporary file in the same folder and rename it into place."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            json.dump(data, stream, indent=1, default=str)
            stream.write("\n")
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def unwritable_reason(path: str | Path) -> str | None:
    """Why a file cannot be written at ``path`` (checked before any episode runs), or None.

    Creates missing parent folders, then creates and removes a probe file next
    to the target, which is what the final atomic write will need.
    """
    target = Path(path)
    if target.is_dir():
        return f"{path} is a directory"
    for parent in target.parents:
        if parent.exists():
            if not parent.is_dir():
                return f"{parent} is not a directory"
            break
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        handle, probe = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".probe", dir=target.parent)
        os.close(handle)
        os.unlink(probe)
    except OSError as exc:
        return f"cannot write to {target.parent}: {exc.strerror or exc}"
    if target.exists() and not os.access(target, os.W_OK):
        return f"{path} is not writable"
    return None


class Journal:
    """The append-only row journal of one run (controller side)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._stream: IO[str] | None = None

    @property
    def is_open(self) -> bool:
        return self._stream is not None

    def open(self, header: dict[str, Any]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._stream = self.path.open("w", encoding="utf-8")
        self._line({"format": JOURNAL_FORMAT, "format_version": 1, **header})

    def _line(self, data: dict[str, Any]) -> None:
        assert self._stream is not None
        self._stream.write(json.dumps(data, default=str) + "\n")
        self._stream.flush()

    def planned(self, items: int) -> None:
        if self._stream is not None:
            self._line({"planned_items": items})

    def append(self, row: dict[str, Any]) -> None:
        if self._stream is not None:
            self._line({"row": row})

    def close(self, *, remove: bool) -> None:
        if self._stream is not None:
            self._stream.close()
            self._stream = None
        if remove:
            with contextlib.suppress(OSError):
                self.path.unlink()


def _read_journal(path: Path) -> dict[str, Any]:
    """A journal as a (partial) results document; a torn last line is ignored."""
    header: dict[str, Any] = {}
    rows: list[dict[str, Any]] = []
    planned: int | None = None
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue  # the line being written when the process died
        if not isinstance(entry, dict):
            continue
        if entry.get("format") == JOURNAL_FORMAT:
            header = entry
        elif isinstance(entry.get("row"), dict):
            rows.append(entry["row"])
        elif isinstance(entry.get("planned_items"), int):
            planned = entry["planned_items"]
    if not header:
        raise ValueError(f"{path} is not a pi-bench journal (no header line)")
    return {
        "format": RESULTS_FORMAT,
        "format_version": RESULTS_FORMAT_VERSION,
        "complete": False,
        "ended_by": "the run did not finish (read from its journal)",
        "planned_items": planned,
        "settings": header.get("settings") or {},
        "created": header.get("started"),
        "wall_time": 0.0,
        "journal": str(path),
        "rows": rows,
    }


def read_results(path: str | Path) -> dict[str, Any]:
    """A results document from a results file or a journal, folding in the journal of a partial run.

    Raises:
        ValueError: with the reason, when the file cannot be read or is neither.
    """
    source = Path(path)
    try:
        text = source.read_text(encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"cannot read {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path} is not UTF-8 text: {exc}") from None
    first = text.lstrip()[:200]
    if first.startswith("{") and JOURNAL_FORMAT in first.split("\n", 1)[0]:
        return _read_journal(source)
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ValueError(f"{path} is not JSON: {exc}") from None
    if not isinstance(data, dict) or data.get("format") != RESULTS_FORMAT:
        raise ValueError(f"{path} is not a pi-bench results file (no format: {RESULTS_FORMAT})")
    if data.get("complete") is False and data.get("journal"):
        journal = Path(str(data["journal"]))
        if not journal.is_absolute():
            journal = source.parent / journal.name
        if journal.is_file():
            partial = _read_journal(journal)
            known = {_row_key(r) for r in data.get("rows") or []}
            extra = [r for r in partial["rows"] if _row_key(r) not in known]
            data = {**data, "rows": [*(data.get("rows") or []), *extra]}
            data.setdefault("planned_items", partial["planned_items"])
    return data


def _row_key(row: dict[str, Any]) -> tuple[str, str, int]:
    return (str(row.get("agent")), str(row.get("scenario_id")), int(row.get("trial") or 0))


def now_iso() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")
