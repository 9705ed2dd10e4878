"""A row's checks, stored once (``outcome_checks``), and the views read from them.

Each check of a row is stored once, with its ``tier`` and ``dimension``:
subtests, metrics and the leaderboard's ``dimensions`` all read
:func:`row_checks`, so they cannot disagree. Kept free of engine imports: the
metrics and ``pi report`` read rows through it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from pytest_pibench.results.types import CheckEntry, Dimension
from pytest_pibench.vocab import DIMENSIONS

__all__ = ["row_checks", "row_dimensions"]

_JUDGED_TYPES = ("NL_JUDGE", "NL_ASSERTION")
"""Upstream's judged result types: the tier of a check in a row that does not store tiers (upstream's rows)."""


def row_checks(row: Mapping[str, Any]) -> list[CheckEntry]:
    """Every check of ``row``, once, each with its ``tier`` and ``dimension``.

    Our rows store each check once, in ``outcome_checks``. A row that stores
    ``dimensions`` (upstream's rows, and ours written before this layout) is
    read as upstream reads it (upstream-evaluation.md §8.2: the union of
    ``dimensions[*].checks``); a tier such a row does not store is 2 for
    upstream's judged types, else the one its ``outcome_checks`` entry gives.
    """
    stored = row.get("dimensions")
    outcome = [c for c in row.get("outcome_checks") or [] if isinstance(c, Mapping)]
    if isinstance(stored, Mapping) and stored:
        tiers = {str(c.get("outcome_id")): c.get("tier") for c in outcome}
        checks = [
            {**c, "dimension": key, "tier": c.get("tier", tiers.get(str(c.get("outcome_id"))))}
            for key, bucket in stored.items() if isinstance(bucket, Mapping)
            for c in bucket.get("checks") or [] if isinstance(c, Mapping)
        ]  # fmt: skip
    else:
        checks = [{**c, "dimension": c.get("dimension") or "outcomes"} for c in outcome]
    for check in checks:
        if check.get("tier") not in (1, 2):
            check["tier"] = 2 if check.get("type") in _JUDGED_TYPES else 1
    return cast(list[CheckEntry], checks)


def row_dimensions(row: Mapping[str, Any]) -> dict[str, Dimension]:
    """Upstream's ``dimensions`` of a row (each bucket's checks and whether all passed), from :func:`row_checks`.

    Empty for a row without checks (an error row), as upstream's error entries.
    """
    checks = row_checks(row)
    if not checks:
        return {}
    buckets: dict[str, Dimension] = {
        key: {"name": name, "passed": True, "checks": [], "failed_checks": []} for key, name in DIMENSIONS
    }
    for check in checks:
        bucket = buckets.get(str(check["dimension"])) or buckets["outcomes"]
        plain = cast(CheckEntry, {k: check.get(k) for k in ("outcome_id", "type", "passed", "detail")})
        bucket["checks"].append(plain)
        if check.get("passed") is False:
            bucket["failed_checks"].append(plain)
            bucket["passed"] = False
    return buckets
