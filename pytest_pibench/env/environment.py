"""One episode's world: the merged database, tool execution that never raises, the trace."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from pytest_pibench.packs.typed_tools import Tool, ToolArgumentError
from pytest_pibench.toolkit import ToolError, copy_record
from pytest_pibench.transcript import TraceEntry  # re-exported: its home moved down for the checks

__all__ = ["BLOCKED_MESSAGE", "OBSERVER_MODES", "Environment", "TraceEntry", "deep_merge"]

BLOCKED_MESSAGE = "Error: Tool not permitted by policy"
"""What a call to a forbidden tool gets under ``hard_gate`` (upstream's text)."""
OBSERVER_MODES = ("audit_only", "hard_gate")
"""``audit_only`` (default): every call runs and is recorded. ``hard_gate``: calls to the tools the
scenario forbids (``tool_not_called``) are blocked before they run, and recorded as blocked attempts."""


def deep_merge(base: Mapping[str, Any], patch: Mapping[str, Any]) -> dict[str, Any]:
    """Upstream's merge: dicts merge recursively; any other patch value (lists, null) replaces.

    Returns a new dict; neither argument is changed or shared with it.
    """
    merged: dict[str, Any] = copy_record(dict(base))
    _merge_into(merged, copy_record(dict(patch)))
    return merged


def _merge_into(target: dict[str, Any], patch: Mapping[str, Any]) -> None:
    for key, value in patch.items():
        current = target.get(key)
        if isinstance(value, Mapping) and isinstance(current, Mapping):
            if not isinstance(current, dict):
                current = target[key] = dict(current)
            _merge_into(current, value)
        else:
            target[key] = value


class Environment:
    """The database and tools of one episode.

    ``tools`` are the exposed tools (what the agent may call); ``catalog`` is
    every tool name of the domain, so that a call to a real but unexposed tool
    gets a precise error.
    """

    def __init__(
        self,
        db: dict[str, Any],
        tools: Iterable[Tool],
        catalog: Iterable[str] = (),
        *,
        blocked_tools: Iterable[str] = (),
    ) -> None:
        self.db = db
        self.tools = {t.name: t for t in tools}
        self._catalog = set(catalog)
        self.blocked_tools = frozenset(blocked_tools)
        """Tools never run (``hard_gate``): a call is recorded as a blocked attempt and answered with an error."""
        self.trace: list[TraceEntry] = []
        self.error_count = 0

    @property
    def tool_schemas(self) -> list[dict[str, Any]]:
        return [t.schema() for t in self.tools.values()]

    def execute(self, call: Mapping[str, Any], requestor: str = "assistant") -> dict[str, Any]:
        """Run one tool call and return the tool message. Never raises.

        Any problem (unknown or unexposed tool, bad arguments, a ``ToolError``
        or even a bug in the tool) becomes an error result that names it; the
        call is recorded in the trace either way.
        """
        name = str(call.get("name", ""))
        raw_arguments = call.get("arguments")
        arguments = dict(raw_arguments) if isinstance(raw_arguments, Mapping) else {}
        error = True
        tool = self.tools.get(name)
        if name in self.blocked_tools:  # upstream's hard gate: the attempt is on record, the tool never runs
            content = json.dumps(BLOCKED_MESSAGE)  # the agent reads it JSON-encoded; the trace keeps the text
            self.error_count += 1
            self.trace.append(
                TraceEntry(len(self.trace), name, copy_record(arguments), BLOCKED_MESSAGE, True, requestor, True)
            )
            return {"role": "tool", "id": str(call.get("id", "")), "name": name, "content": content,
                    "requestor": requestor, "error": True}  # fmt: skip
        if tool is None:
            where = "is not available in this scenario" if name in self._catalog else "not found"
            text = f"Error: Tool '{name}' {where}."
        else:
            try:
                result = tool(self.db, arguments)
            except (ToolArgumentError, ToolError) as exc:
                text = f"Error: {exc}"
            except Exception as exc:  # a bug in a domain tool must not end the run
                text = f"Error: tool '{name}' failed: {type(exc).__name__}: {exc}"
            else:
                error = False
                content = json.dumps(result, default=str)
        if error:
            content = json.dumps(text)
            self.error_count += 1
        self.trace.append(TraceEntry(len(self.trace), name, copy_record(arguments), content, error, requestor))
        return {
            "role": "tool",
            "id": str(call.get("id", "")),
            "name": name,
            "content": content,
            "requestor": requestor,
            "error": error,
        }

    def execute_all(self, calls: list[dict[str, Any]], requestor: str = "assistant") -> dict[str, Any]:
        """Run calls left to right: one ``tool`` message, or a ``multi_tool`` wrapper for several."""
        results = [self.execute(call, requestor) for call in calls]
        if len(results) == 1:
            return results[0]
        return {"role": "multi_tool", "tool_messages": results}

    def final_state(self) -> dict[str, Any]:
        copied: dict[str, Any] = copy_record(self.db)
        return copied
