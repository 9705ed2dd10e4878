"""``pi report``: leaderboard artifacts from results files, merging the shards of one run.

Reads our results file (a partial one folds its journal in), a journal, or a
pytest-json-report file; several files are the shards of one run
(``--pibench-shard I/N``) and are merged strictly
(:func:`~pytest_pibench.results.merge.merge_documents`). The exit code is 9
when the numbers may not be published (error budget, partial run, a missing
shard, a shard alone), as for the run itself.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pytest_pibench.bounds import strict_dumps
from pytest_pibench.plugin.settings import ERROR_BUDGET_EXIT_CODE
from pytest_pibench.report.html import write_html
from pytest_pibench.report.markdown import write_markdown
from pytest_pibench.results.document import atomic_write_json
from pytest_pibench.results.leaderboard import leaderboard_path, run_artifacts
from pytest_pibench.results.merge import MergeError, merge_documents
from pytest_pibench.results.reading import RowsError, read_rows_file
from pytest_pibench.results.types import ResultsDocument

__all__ = ["ReportError", "html_report", "markdown_report", "one_run", "read_run", "report_command"]


class ReportError(Exception):
    """A bad ``pi report`` / ``compare`` / ``plan`` input: a missing file, a malformed row, files that cannot be
    merged (exit code 4)."""


def read_run(path: str) -> ResultsDocument:
    """A validated results document from our results file (a partial one folds its journal in), a journal,
    or a pytest-json-report file (:func:`~pytest_pibench.results.reading.read_rows_file`).

    Raises:
        ReportError: naming the file, the row and the field of what is wrong with it.
    """
    try:
        return read_rows_file(path)
    except RowsError as exc:
        raise ReportError(str(exc)) from None


def report_command(
    files: Sequence[str], *, output: str | None = None, results: str | None = None, max_error_rate: float | None = None
) -> int:
    """``pi report``: leaderboard artifacts (and optionally the merged results) of one run; the exit code.

    Several files are the shards of one run and are merged first.

    Raises:
        ReportError: for a file that does not exist or files that cannot be merged.
    """

    document = one_run(files)
    if results:
        atomic_write_json(results, document)
        print(f"wrote {results}")
    artifacts, problems = run_artifacts(document, max_error_rate=max_error_rate)
    agents = list(artifacts)
    if not agents:
        raise ReportError(f"no result rows in {', '.join(files)}: nothing to report")
    if not output:
        payload: Any = artifacts[agents[0]] if len(agents) == 1 else list(artifacts.values())
        print(strict_dumps(payload, indent=1))
    else:
        out = Path(output)
        for agent, artifact in artifacts.items():
            target = leaderboard_path(out, agent, several=len(agents) > 1)
            target.write_text(strict_dumps(artifact, indent=1) + "\n", encoding="utf-8")
            print(f"wrote {target}")
    if problems:
        print(f"pi report: NOT VALID FOR THE LEADERBOARD: {'; '.join(problems)}", file=sys.stderr)
        return ERROR_BUDGET_EXIT_CODE
    return 0


def markdown_report(files: Sequence[str], path: str) -> None:
    """``pi report --markdown``: the markdown summary of one run (several files: its shards, merged) at ``path``
    (``-``: standard output).

    Raises:
        ReportError: for a file that does not exist or files that cannot be merged.
    """
    write_markdown(one_run(files), path)
    if path != "-":
        print(f"wrote {path}")


def one_run(files: Sequence[str]) -> ResultsDocument:
    """The run in ``files``: one results file, or the shards of one run merged."""
    for name in files:
        if not Path(name).exists():
            raise ReportError(f"no such file or directory: {name}")
    documents = [(name, read_run(name)) for name in files]
    if len(documents) == 1:
        return documents[0][1]
    try:
        return merge_documents(documents)
    except MergeError as exc:
        raise ReportError(str(exc)) from None


def html_report(files: Sequence[str], path: str) -> Path:
    """``pi report --html``: the HTML report of the runs in ``files``, side by side.

    Each file is a run, named by its file name, except that the shards of one
    run (``--pibench-shard``) are merged into one first.

    Raises:
        ReportError: for a file that does not exist or shards that cannot be merged.
    """
    runs: list[tuple[str, ResultsDocument]] = []
    shards: list[tuple[str, ResultsDocument]] = []
    names = _run_names(files)
    for name in files:
        if not Path(name).exists():
            raise ReportError(f"no such file or directory: {name}")
        document = read_run(name)
        (shards if document.get("shard") else runs).append((names[name], document))
    if shards:
        try:
            runs.append((" + ".join(n for n, _ in shards), merge_documents(shards)))
        except MergeError as exc:
            raise ReportError(str(exc)) from None
    return write_html(runs, path)


def _run_names(files: Sequence[str]) -> dict[str, str]:
    """Each file's name, with as many parent folders as it takes to tell them apart (mon/r.json, tue/r.json)."""
    parts = {name: Path(name).resolve().parts for name in files}
    for depth in range(1, max((len(p) for p in parts.values()), default=1) + 1):
        names = {name: "/".join(p[-depth:]) for name, p in parts.items()}
        if len(set(names.values())) == len(names):
            return names
    return {name: name for name in files}
