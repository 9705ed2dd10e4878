"""Upstream's other evaluator families (upstream-evaluation.md §5.5), read from legacy keys.

No upstream scenario uses them, but a file that lists them in ``reward_basis``
scores as it would upstream: ``ACTION`` (``expected_actions``), ``DB``
(``expected_db``; passes without one), ``COMMUNICATE`` (``communicate_info``) and
``NL_ASSERTION`` (``nl_assertions``); ``DB`` replays the messages' tool calls on a fresh environment
and compares its database's hash with ``expected_db``'s. Any other family is a failing Tier-1
result, as upstream.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from pytest_pibench.checks.base import CheckContext, Dimension
from pytest_pibench.checks.judge import assistant_text
from pytest_pibench.checks.registry import dimension_of
from pytest_pibench.checks.result import CheckResult
from pytest_pibench.statediff import state_changes
from pytest_pibench.transcript import extract_text

__all__ = ["LEGACY_DIMENSIONS", "LEGACY_TIERS", "run_family"]

LEGACY_DIMENSIONS: dict[str, Dimension] = {
    "db_replay": "state",
    "env_assertion": "state",  # upstream's map names it; no family here produces it
    "communicate": "communication",
    "NL_ASSERTION": "semantic",
}
"""The dimension of each result type these families report (``ACTION`` reports ``tool_called``)."""
LEGACY_TIERS = {"NL_ASSERTION": 2}
"""The tier of each result type these families report, when not 1 (judged assertions report, never gate)."""


def run_family(family: str, extra: Mapping[str, Any], context: CheckContext) -> list[CheckResult]:
    """The results of legacy ``family`` over the criteria's extra keys; an unknown family fails."""
    results = _results(family, extra, context)
    return [replace(r, tier=LEGACY_TIERS.get(r.type, 1), dimension=_dimension(r.type)) for r in results]


def _dimension(result_type: str) -> Dimension:
    """A legacy result's dimension: the registered check type's (``tool_called``), else the table's."""
    return dimension_of(result_type) or LEGACY_DIMENSIONS.get(result_type, "outcomes")


def _results(family: str, extra: Mapping[str, Any], context: CheckContext) -> list[CheckResult]:
    messages = context.messages
    if family == "ACTION":
        return [_action(a, messages) for a in extra.get("expected_actions") or [] if isinstance(a, Mapping)]
    if family == "DB":
        return [_db_replay(extra.get("expected_db"), context)]
    if family == "COMMUNICATE":
        return _communicate(extra.get("communicate_info") or [], messages)
    if family == "NL_ASSERTION":
        return _nl_assertions(extra.get("nl_assertions") or [], context)
    return [CheckResult("unknown", family, False, f"unsupported evaluator family {family!r}")]


def db_hash(db: Any) -> str:
    """Upstream's database hash: SHA-256 of the canonical JSON (sorted keys, no spaces)."""
    return hashlib.sha256(json.dumps(db, sort_keys=True, separators=(",", ":"), default=str).encode()).hexdigest()


def _db_replay(expected: Any, context: CheckContext) -> CheckResult:
    """``expected_db``: replay the messages' tool calls on a fresh environment; its database must hash the same."""
    if not expected:
        return CheckResult("db", "db_replay", True, "no expected_db")
    if context.replay is None:
        return CheckResult("db", "db_replay", False, "db_replay: no environment to replay the tool calls on")
    replayed = context.replay()
    got, wanted = db_hash(replayed), db_hash(expected)
    if got == wanted:
        return CheckResult("db", "db_replay", True, f"db_replay: the replayed database matches expected_db {got[:12]}")
    differences = state_changes(expected, replayed)
    shown = "; ".join(f"{d['path'] or '(root)'} {d['change']}" for d in differences[:5])
    more = f" and {len(differences) - 5} more" if len(differences) > 5 else ""
    return CheckResult(
        "db", "db_replay", False, f"db_replay: replayed {got[:12]} != expected {wanted[:12]}; differs at {shown}{more}"
    )


def _tool_calls(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return [c for m in messages for c in m.get("tool_calls") or [] if isinstance(c, dict)]


def _action(expected: Mapping[str, Any], messages: Sequence[Mapping[str, Any]]) -> CheckResult:
    name = expected.get("name")
    wanted = expected.get("arguments") or {}
    compare = expected.get("compare_args")
    requestor = expected.get("requestor")
    for call in _tool_calls(messages):
        if call.get("name") != name or (requestor and call.get("requestor", "assistant") != requestor):
            continue
        actual = call.get("arguments") or {}
        keys = list(actual) if compare is None else list(compare)
        if {k: actual.get(k) for k in keys} == {k: wanted.get(k) for k in keys}:
            return CheckResult(str(expected.get("action_id", "unknown")), "tool_called", True, f"action {name} matched")
    return CheckResult(str(expected.get("action_id", "unknown")), "tool_called", False, f"action {name} not found")


def _communicate(required: Sequence[Any], messages: Sequence[Mapping[str, Any]]) -> list[CheckResult]:
    said = "".join(" " + extract_text(m) for m in messages if m.get("role") == "assistant")
    said = said.replace(",", "").lower()
    results = []
    for info in required:
        found = str(info).replace(",", "").lower() in said
        results.append(CheckResult(str(info), "communicate", found, f"communicate({info!r})={found}"))
    return results


def _nl_assertions(assertions: Sequence[Any], context: CheckContext) -> list[CheckResult]:
    if not assertions:
        return []
    if context.ask_judge is None:
        return [CheckResult("nl_assertions", "NL_ASSERTION", None, "skipped: no judge configured")]
    text = assistant_text(context.messages)
    failed = [a for a in assertions if context.ask_judge(str(a), text)[0] != "YES"]
    detail = "all assertions hold" if not failed else f"failed: {failed}"
    return [CheckResult("nl_assertions", "NL_ASSERTION", not failed, detail)]
