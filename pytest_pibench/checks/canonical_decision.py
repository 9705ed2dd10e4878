"""Canonical decision resolution (upstream-evaluation.md §6), bit-compatible with upstream.

Apart from the ``decision_equals`` check (:mod:`pytest_pibench.checks.decision`), so that other
check families read the decision that counts without registering that check before their own.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from pytest_pibench.checks.base import DecisionInfo
from pytest_pibench.transcript import TraceEntry, extract_text
from pytest_pibench.vocab import LABELS

__all__ = ["DecisionInfo", "canonical_decision_index", "resolve_decision"]

# Opening fence, optional lower-case "json", optional whitespace, a newline; the
# body ends at the first newline directly followed by a closing fence.
_FENCED = re.compile(r"```(?:json)?\s*\n(.*?)\n```", re.DOTALL)


def _valid_decision_call(entry: TraceEntry) -> bool:
    value = entry.arguments.get("decision")
    return isinstance(value, str) and value in LABELS and not entry.result_error and not entry.blocked


def canonical_decision_index(trace: Sequence[TraceEntry]) -> int | None:
    """The trace position of the ``record_decision`` call that counts (the last valid one), or None.

    None also when the decision came through the JSON channel or was never made.
    """
    for index in range(len(trace) - 1, -1, -1):
        entry = trace[index]
        if entry.tool_name == "record_decision" and _valid_decision_call(entry):
            return index
    return None


def resolve_decision(trace: Sequence[TraceEntry] | None, messages: Sequence[Mapping[str, Any]]) -> DecisionInfo:
    """The canonical decision of a run.

    1. Tool channel: the last ``record_decision`` call whose ``decision`` is one
       of the four values (exact, case-sensitive) and that neither errored nor
       was blocked. If calls exist but none qualifies: ``INVALID_DECISION`` and
       the JSON channel is not consulted.
    2. JSON channel (no ``record_decision`` call at all): fenced JSON objects
       with a valid ``decision`` in assistant messages; exactly one wins, more
       than one is ``MULTIPLE_DECISIONS_JSON``, none is ``MISSING_DECISION``.
    """
    if trace is None:
        return DecisionInfo(None, None, False, "NO_TRACE")
    calls = [e for e in trace if e.tool_name == "record_decision"]
    if calls:
        for entry in reversed(calls):
            if _valid_decision_call(entry):
                return DecisionInfo(str(entry.arguments["decision"]), "tool", True, None)
        return DecisionInfo(None, None, False, "INVALID_DECISION", _rejection(calls[-1]))
    found: list[str] = []
    for message in messages:
        if message.get("role") != "assistant":
            continue
        text = extract_text(message)
        if not text:
            continue
        for body in _FENCED.findall(text):
            try:
                data = json.loads(body.strip())
            except ValueError:
                continue
            if isinstance(data, dict) and isinstance(data.get("decision"), str) and data["decision"] in LABELS:
                found.append(data["decision"])
    if len(found) == 1:
        return DecisionInfo(found[0], "json", True, None)
    if found:
        detail = f"{len(found)} fenced JSON decisions ({', '.join(found)}); exactly one counts"
        return DecisionInfo(None, None, False, "MULTIPLE_DECISIONS_JSON", detail)
    return DecisionInfo(None, None, False, "MISSING_DECISION", "no record_decision call and no fenced JSON decision")


def _rejection(entry: TraceEntry) -> str:
    """Why the last ``record_decision`` call does not count: the tool's error, the block, or the value."""
    if entry.blocked:
        return f"record_decision was blocked: {_result_text(entry.result_content)}"
    if entry.result_error:
        return f"record_decision failed: {_result_text(entry.result_content)}"
    value = entry.arguments.get("decision")
    return f"record_decision's decision {value!r} is not one of {', '.join(LABELS)} (exact spelling)"


def _result_text(content: str) -> str:
    """A tool result's text: results are stored JSON-encoded, so a string result reads as its string."""
    try:
        value = json.loads(content)
    except ValueError:
        return content[:300]
    return (value if isinstance(value, str) else content)[:300]
