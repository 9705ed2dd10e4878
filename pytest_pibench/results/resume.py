"""Resuming a run: reuse the finished rows whose inputs are unchanged, re-run the rest.

Every row records a fingerprint of what decided it: the scenario file's
content, the agent, the trial and its seed, and every setting that changes
results (user, judge, limits, model arguments). ``--pibench-resume PATH``
reads the results file or the journal of an earlier run, and an item whose
fingerprint matches a finished row there reuses that row instead of running.
Error rows (failures outside the agent) are always re-run.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

from pytest_pibench.results.reading import read_rows_file
from pytest_pibench.results.types import ResultRow, RunKey

__all__ = ["ResumeIndex", "load_resume", "run_key"]

_SETTINGS_NOT_IN_KEY = ("agents", "trials", "trial_mode", "min_pass")
"""Settings that select what runs but do not change one episode's result."""


@cache
def _file_sha256(path: str) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def run_key(
    scenario_file: Path | None, agent: str, trial: int, seed: int | None, settings: Mapping[str, Any]
) -> RunKey:
    """What decides one episode's result (builtins only; stored in the row as ``fingerprint``)."""
    return {
        "scenario_sha256": _file_sha256(str(scenario_file)) if scenario_file else None,
        "agent": agent,
        "trial": trial,
        "seed": seed,
        "settings": {k: v for k, v in sorted(settings.items()) if k not in _SETTINGS_NOT_IN_KEY},
    }


def fingerprint(key: RunKey) -> str:
    """The SHA-256 of ``key`` as canonical JSON (stored in the row's ``fingerprint``)."""
    return hashlib.sha256(json.dumps(key, sort_keys=True, default=str).encode()).hexdigest()


def _difference(old: RunKey, new: RunKey) -> str:
    if old.get("scenario_sha256") != new.get("scenario_sha256"):
        return "scenario file changed"
    if old.get("seed") != new.get("seed"):
        return "seed differs"
    before, now = old.get("settings") or {}, new.get("settings") or {}
    changed = sorted(k for k in set(before) | set(now) if before.get(k) != now.get(k))
    return f"settings differ: {', '.join(changed)}" if changed else "fingerprint differs"


class ResumeIndex:
    """The rows of an earlier run, by (agent, scenario id, trial)."""

    def __init__(self, source: str, rows: list[ResultRow]) -> None:
        self.source = source
        self.rows = {(str(r.get("agent")), str(r.get("scenario_id")), int(r.get("trial") or 0)): r for r in rows}

    def to_builtins(self) -> dict[str, Any]:
        """What crosses to xdist workers."""
        return {"source": self.source, "rows": list(self.rows.values())}

    @classmethod
    def from_builtins(cls, data: Mapping[str, Any]) -> ResumeIndex:
        return cls(str(data["source"]), list(data["rows"]))

    def lookup(self, agent: str, scenario_id: str, trial: int, key: RunKey) -> tuple[ResultRow | None, str]:
        """``(row to reuse, "")`` or ``(None, why it is re-run)``."""
        row = self.rows.get((agent, scenario_id, trial))
        if row is None:
            return None, "not in the earlier run"
        if row.get("status") != "completed":
            return None, "error row in the earlier run"
        stored = row.get("fingerprint")
        if not isinstance(stored, Mapping) or not isinstance(stored.get("key"), Mapping):
            return None, "the earlier row has no fingerprint"
        if stored.get("sha256") != fingerprint(key):
            return None, _difference(stored["key"], key)
        return row, ""


def load_resume(path: str) -> ResumeIndex:
    """Read a results file or journal to resume from, validated as the report tools read it.

    Raises:
        RowsError: (a ValueError) naming the file, the row and the field of a malformed row.
    """
    document = read_rows_file(path)
    return ResumeIndex(path, list(document.get("rows") or []))
