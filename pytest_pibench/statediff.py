"""What an episode changed in its database: the difference of two JSON-like states, as a short list.

The report shows state as these changes instead of whole databases (a domain's
database is tens of kilobytes; an episode changes a few fields and adds a few
records). Lists of records are matched by their id (the first key ending in
``id`` that every record has), so an appended refund is one ``added`` change,
not a shifted list.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["MAX_CHANGES", "state_changes"]

MAX_CHANGES = 200
"""Most changes listed; past it one ``{"path": "...", "change": "more", "count": N}`` entry says how many more."""


def _id_key(records: list[Any]) -> str | None:
    if not records or not all(isinstance(r, Mapping) for r in records):
        return None
    for key in records[0]:
        if str(key).endswith("id") and all(key in r and isinstance(r[key], str | int) for r in records):
            return str(key)
    return None


def _walk(before: Any, after: Any, path: str, out: list[dict[str, Any]]) -> None:
    if before == after:  # C-speed equality first: most of a database is untouched
        return
    if isinstance(before, Mapping) and isinstance(after, Mapping):
        for key in before:
            where = f"{path}.{key}" if path else str(key)
            if key not in after:
                out.append({"path": where, "change": "removed", "before": before[key]})
            else:
                _walk(before[key], after[key], where, out)
        for key in after:
            if key not in before:
                out.append({"path": f"{path}.{key}" if path else str(key), "change": "added", "after": after[key]})
        return
    if isinstance(before, list) and isinstance(after, list):
        key = _id_key(before + after) if before or after else None
        if key is not None:
            old = {r[key]: r for r in before}
            new = {r[key]: r for r in after}
            for rid, record in old.items():
                if rid not in new:
                    out.append({"path": f"{path}[{rid}]", "change": "removed", "before": record})
                else:
                    _walk(record, new[rid], f"{path}[{rid}]", out)
            for rid, record in new.items():
                if rid not in old:
                    out.append({"path": f"{path}[{rid}]", "change": "added", "after": record})
            return
        if len(before) == len(after):
            for index, (b, a) in enumerate(zip(before, after, strict=True)):
                _walk(b, a, f"{path}[{index}]", out)
            return
    out.append({"path": path, "change": "changed", "before": before, "after": after})


def state_changes(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The changes from ``before`` to ``after``: ``{"path", "change": added|removed|changed, "before"?, "after"?}``.

    Paths read ``orders[ORD-1].status`` (records by id) or ``items[0]`` (plain lists).
    """
    out: list[dict[str, Any]] = []
    _walk(before, after, "", out)
    if len(out) > MAX_CHANGES:
        out = [*out[:MAX_CHANGES], {"path": "", "change": "more", "count": len(out) - MAX_CHANGES}]
    return out
