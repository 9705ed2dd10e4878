"""Merging results files: the shards of one run (``--pibench-shard I/N``) into the run's results.

A large run spreads over machines as N shards; each writes its own results
file, and ``pi report shard1.json shard2.json ...`` merges them. The merge is
strict, so a merged number is never quietly wrong: the files must come from
runs with the same settings, no (agent, scenario, trial) row may appear twice,
and a shard that is missing (or a shard that did not finish) makes the merged
run partial, which the validity report and the exit code say.
"""

from __future__ import annotations

from collections.abc import Sequence

from pytest_pibench.results.document import results_document
from pytest_pibench.results.sequential import sequential_summary
from pytest_pibench.results.types import ResultRow, ResultsDocument

__all__ = ["MergeError", "merge_documents"]


class MergeError(ValueError):
    """Files that cannot be merged into one run; the message names the files and what differs."""


def _key(row: ResultRow) -> tuple[str, str, int]:
    return str(row.get("agent", "agent")), str(row.get("scenario_id")), int(row.get("trial") or 0)


def merge_documents(named: Sequence[tuple[str, ResultsDocument]]) -> ResultsDocument:
    """One results document from several ``(file name, document)`` pairs of the same run.

    Raises:
        MergeError: for different settings, a row in two files, or shards of different counts.
    """
    if not named:
        raise MergeError("nothing to merge")
    first_name, first = named[0]
    settings = first.get("settings") or {}
    seen: dict[tuple[str, str, int], str] = {}
    rows: list[ResultRow] = []
    problems: list[str] = []
    shards: dict[int, str] = {}
    counts = set()
    for name, document in named:
        if (document.get("settings") or {}) != settings:
            raise MergeError(f"{name} was run with other settings than {first_name}: merge only shards of one run")
        for row in document["rows"]:
            key = _key(row)
            if key in seen:
                raise MergeError(f"{name} and {seen[key]} both hold {key[0]} {key[1]} trial {key[2]}")
            seen[key] = name
            rows.append(row)
        if document.get("complete") is False:
            problems.append(f"{name} is partial ({document.get('ended_by') or 'it did not finish'})")
        shard = document.get("shard")
        if shard:
            counts.add(int(shard["count"]))
            shards[int(shard["index"])] = name
    if len(counts) > 1:
        raise MergeError(f"the files are shards of different splits ({', '.join(f'of {n}' for n in sorted(counts))})")
    if counts:
        (count,) = counts
        missing = [index for index in range(1, count + 1) if index not in shards]
        problems += [f"shard {index} of {count} is missing" for index in missing]
    planned = [d.get("planned_items") for _, d in named]
    recorded = first.get("validity")
    error_budget = recorded["max_error_rate"] if recorded else 0.0
    merged = results_document(
        rows,
        settings,
        max(float(d.get("wall_time") or 0.0) for _, d in named),  # shards run side by side
        complete=not problems,
        planned_items=sum(p for p in planned if p is not None) if all(p is not None for p in planned) else None,
        ended_by="; ".join(problems) or None,
        max_error_rate=float(error_budget or 0.0),
    )
    blocks = [d["sequential"] for _, d in named if d.get("sequential")]
    if blocks:  # sequential trials: the verdicts again over every shard's rows, with the trials each skipped
        skipped = [
            {"agent": agent, "scenario_id": sid}
            for block in blocks
            for agent, scenarios in block["scenarios"].items()
            for sid, entry in scenarios.items()
            for _ in range(int(entry.get("not_run") or 0))
        ]
        needed, trials = (int(n) for n in str(blocks[0]["min_pass"]).split("/"))
        merged["sequential"] = sequential_summary(rows, skipped, needed, trials)
    return merged
