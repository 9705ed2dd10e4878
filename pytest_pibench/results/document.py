"""The results document: its format, building it, writing it safely, reading it back.

The document (``--pibench-results``) is versioned (:data:`RESULTS_FORMAT`,
:data:`RESULTS_FORMAT_VERSION`) and holds the settings, the metrics per agent,
whether the run is valid for the leaderboard (:func:`validity`) and every
:class:`~pytest_pibench.results.types.ResultRow`. :func:`read_results`
reads one back (a partial run included) and :func:`load_baseline` reads one as
the baseline of a ``--pibench-baseline`` gate.

Results are on disk as they finish.

A run writes every finished row to ``<results stem>.journal.jsonl`` the moment
it arrives (one JSON object per line, flushed), so a SIGTERM, a Ctrl-C, a
crashed controller or an agent that kills the process leaves every finished
episode on disk. At the end the rows are folded into the results file, which
is written atomically (temporary file + rename), and the journal is removed.
While the run is going, the results file is a placeholder that says
``complete: false`` and names the journal, so a file left by a run that never
finished is never mistaken for a full run.

A resumed run's journal starts with every row of the run it resumes from
(``{"carried": row}`` lines), written atomically before the old journal or
results file is replaced: the journal or results file being resumed from may
be the very file this run writes, and a finished row must never exist only in
memory. A later ``{"row": ...}`` line of the same item supersedes its carried
row when the journal is read.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import IO, Any, cast

from pytest_pibench.bounds import strict_dumps
from pytest_pibench.results.files import atomic_write
from pytest_pibench.results.metrics import compute_metrics
from pytest_pibench.results.types import AgentValidity, ResultRow, ResultsDocument, Validity
from pytest_pibench.vocab import BENCHMARK_VERSION, __version__

__all__ = [
    "JOURNAL_FORMAT",
    "RESULTS_FORMAT",
    "RESULTS_FORMAT_VERSION",
    "Journal",
    "atomic_write_json",
    "error_budget_exceeded",
    "journal_path",
    "load_baseline",
    "now_iso",
    "read_results",
    "results_document",
    "unwritable_reason",
    "validity",
]

RESULTS_FORMAT = "pibench-results"
RESULTS_FORMAT_VERSION = 1
JOURNAL_FORMAT = "pibench-journal"


def _row_order(agents: Sequence[str]) -> Callable[[ResultRow], tuple[int, str, str, int]]:
    """Agents in command-line order, then scenarios by id and trial (never by completion order)."""
    rank = {agent: index for index, agent in enumerate(agents)}

    def key(row: ResultRow) -> tuple[int, str, str, int]:
        agent = str(row.get("agent"))
        return (rank.get(agent, len(rank)), agent, str(row.get("scenario_id")), int(row.get("trial") or 0))

    return key


def validity(
    rows: Iterable[ResultRow], *, max_error_rate: float, complete: bool = True, ended_by: str | None = None
) -> Validity:
    """Whether a run's numbers may be published: complete, and error rows within the budget per agent.

    Error rows are failures outside the agent (provider, judge, user
    simulator, harness, scenario); they are kept out of the rates, so too
    many of them would let a bad run look good. ``--pibench-max-error-rate``
    bounds them (default 0).
    """
    rows = list(rows)
    counts: dict[str, list[int]] = {}
    for row in rows:
        tally = counts.setdefault(str(row.get("agent")), [0, 0])
        tally[0] += 1
        tally[1] += int(row.get("status") != "completed")
    agents: dict[str, AgentValidity] = {
        agent: {"rows": total, "error_rows": errors, "error_rate": errors / total if total else 0.0}
        for agent, (total, errors) in counts.items()
    }
    problems = []
    for agent, entry in agents.items():
        if _over_budget(entry, max_error_rate):
            problems.append(
                f"{agent}: {entry['error_rows']} error rows of {entry['rows']} "
                f"({entry['error_rate']:.1%}) > --pibench-max-error-rate {max_error_rate:g}"
            )
    if not complete:
        problems.append(f"partial run: {ended_by or 'it did not finish'}")
    if any(row.get("trial_mode") == "sequential" for row in rows):
        problems.append(
            "sequential trials: rates over rows weight each scenario by the trials it needed, so they are not "
            "comparable with a fixed-trial run (its K-of-N verdicts are exact)"
        )
    return {
        "valid": not problems,
        "complete": complete,
        "max_error_rate": max_error_rate,
        "agents": agents,
        "problems": problems,
    }


def _over_budget(entry: AgentValidity, max_error_rate: float) -> bool:
    return entry["error_rate"] > max_error_rate + 1e-12


def error_budget_exceeded(report: Validity) -> bool:
    """Whether some agent in a :func:`validity` report has more error rows than the budget allows.

    Read from the report's numbers, never from its ``problems`` text (which is for people).
    """
    return any(_over_budget(entry, report["max_error_rate"]) for entry in report["agents"].values())


def results_document(
    rows: Iterable[ResultRow],
    settings: dict[str, Any],
    wall_time: float,
    *,
    complete: bool = True,
    planned_items: int | None = None,
    ended_by: str | None = None,
    max_error_rate: float = 0.0,
    shard: tuple[int, int] | None = None,
) -> ResultsDocument:
    """Our versioned results file: settings, metrics per agent, validity, every row (with its transcript).

    ``shard`` (I, N) marks the results of one shard of a sharded run (``--pibench-shard``).
    """
    ordered = sorted(rows, key=_row_order(list(settings.get("agents") or [])))
    by_agent: dict[str, list[ResultRow]] = defaultdict(list)
    for row in ordered:
        by_agent[str(row.get("agent"))].append(row)
    document: ResultsDocument = {
        "format": RESULTS_FORMAT,
        "format_version": RESULTS_FORMAT_VERSION,
        "pytest_pibench_version": __version__,
        "benchmark_version": BENCHMARK_VERSION,
        "created": now_iso(),
        "wall_time": round(wall_time, 3),
        "complete": complete,
        "planned_items": planned_items,
        "ended_by": ended_by,
        "validity": validity(ordered, max_error_rate=max_error_rate, complete=complete, ended_by=ended_by),
        "settings": settings,
        "agents": {agent: {"metrics": compute_metrics(agent_rows)} for agent, agent_rows in by_agent.items()},
        "rows": ordered,
    }
    if shard:  # one shard's numbers are not the run's: publish the merge of every shard (pi report)
        document["shard"] = {"index": shard[0], "count": shard[1]}
        document["validity"]["problems"].append(f"shard {shard[0]} of {shard[1]} only: merge every shard's results")
        document["validity"]["valid"] = False
    return document


def journal_path(results: str | Path) -> Path:
    """``pibench-results.json`` -> ``pibench-results.journal.jsonl`` (same folder)."""
    target = Path(results)
    return target.with_name(f"{target.stem}.journal.jsonl")


def atomic_write_json(path: str | Path, data: Any) -> None:
    """Write JSON through a temporary file in the same folder and rename it into place (umask honoured).

    Raises:
        OSError: when it cannot be written (a full disk...); the old file is then left as it was.
    """
    atomic_write(path, [_json_text(data)])


def _json_text(data: Any) -> str:
    """Indented JSON, except that a document's ``rows`` are one compact line each.

    Indenting disables the json module's C encoder; rows (transcripts, final
    states) are nearly all of a results file, so writing each on one line keeps
    the file readable and makes writing it several times faster.
    """
    rows = data.get("rows") if isinstance(data, dict) else None
    if not isinstance(rows, list) or not rows:
        return strict_dumps(data, indent=1) + "\n"
    head = strict_dumps({k: v for k, v in data.items() if k != "rows"}, indent=1)
    body = ",\n".join("  " + strict_dumps(row) for row in rows)
    opening = head[:-1].rstrip() + ("," if len(data) > 1 else "")
    return f'{opening}\n "rows": [\n{body}\n ]\n}}\n'


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

    def open(self, header: dict[str, Any], carried: Sequence[ResultRow] = ()) -> None:
        """Start the journal with its header and the ``carried`` rows of the run being resumed.

        Header and carried rows are written atomically over any old journal, so
        until this returns the old journal (which may be what this run resumes
        from) is intact, and afterwards the new one holds every row the old one
        did. Raises ``OSError`` (the old journal then untouched).
        """
        lines = [_json_line({"format": JOURNAL_FORMAT, "format_version": 1, **header})]
        lines += [_json_line({"carried": row}) for row in carried]
        atomic_write(self.path, lines)
        self._stream = self.path.open("a", encoding="utf-8")

    def _line(self, data: dict[str, Any]) -> None:
        assert self._stream is not None
        self._stream.write(_json_line(data))
        self._stream.flush()

    def planned(self, items: int) -> None:
        if self._stream is not None:
            self._line({"planned_items": items})

    def append(self, row: ResultRow) -> None:
        if self._stream is not None:
            self._line({"row": row})

    def close(self, *, remove: bool) -> None:
        if self._stream is not None:
            stream, self._stream = self._stream, None
            with contextlib.suppress(OSError):  # a full disk: what did reach the journal stays readable
                stream.close()
        if remove:
            with contextlib.suppress(OSError):
                self.path.unlink()


def _read_journal(path: Path) -> ResultsDocument:
    """A journal as a (partial) results document; a torn last line is ignored."""
    header: dict[str, Any] = {}
    rows: list[ResultRow] = []
    carried: list[ResultRow] = []
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
        elif isinstance(entry.get("carried"), dict):
            carried.append(entry["carried"])
        elif isinstance(entry.get("planned_items"), int):
            planned = entry["planned_items"]
    if not header:
        raise ValueError(f"{path} is not a pi-bench journal (no header line)")
    done = {_row_key(r) for r in rows}
    rows += [r for r in carried if _row_key(r) not in done]  # finished earlier, not redone (yet)
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


def read_results(path: str | Path) -> ResultsDocument:
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
    return _with_journal(source, cast(ResultsDocument, data))


def _with_journal(source: Path, data: ResultsDocument) -> ResultsDocument:
    """A partial run's document with the rows its journal holds beyond its own."""
    if data.get("complete") is False and data.get("journal"):
        journal = Path(str(data["journal"]))
        if not journal.is_absolute():
            journal = source.parent / journal.name
        if journal.is_file():
            partial = _read_journal(journal)
            known = {_row_key(r) for r in data.get("rows") or []}
            extra = [r for r in partial["rows"] if _row_key(r) not in known]
            data = data.copy()
            data["rows"] = [*(data.get("rows") or []), *extra]
            data.setdefault("planned_items", partial["planned_items"])
    return data


def load_baseline(path: str) -> ResultsDocument:
    """Read a results file written by ``--pibench-results`` as a gate's baseline (ValueError with the reason).

    Unlike :func:`read_results` it takes only a results file, and a partial
    one as it is (its journal is not folded in).
    """
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ValueError(f"cannot read baseline {path}: {exc.strerror or exc}") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"baseline {path} is not JSON: {exc}") from None
    if not isinstance(data, dict) or data.get("format") != RESULTS_FORMAT:
        raise ValueError(f"baseline {path} is not a pi-bench results file (no format: {RESULTS_FORMAT})")
    return cast(ResultsDocument, data)


def _row_key(row: ResultRow) -> tuple[str, str, int]:
    return (str(row.get("agent")), str(row.get("scenario_id")), int(row.get("trial") or 0))


def _json_line(data: dict[str, Any]) -> str:
    return strict_dumps(data) + "\n"


def now_iso() -> str:
    """The local time now, as ISO 8601 with its UTC offset (``created`` of a document)."""
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")
