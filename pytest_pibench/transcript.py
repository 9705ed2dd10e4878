"""What a recorded transcript is made of, as scoring reads it: trace entries and message text.

These two live at the bottom layer because checks (below the scenario layer,
so that scenarios can validate their checks) read them, while the environment
writes trace entries and the episode loop writes messages. Both are re-exported
from their old homes (:mod:`pytest_pibench.env.environment` and
:mod:`pytest_pibench.episode.messages`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pytest_pibench.toolkit.records import copy_record

__all__ = ["TraceEntry", "extract_text"]


@dataclass(frozen=True, slots=True)
class TraceEntry:
    """One attempted tool call, recorded whatever its outcome."""

    step_index: int
    tool_name: str
    arguments: dict[str, Any]
    result_content: str
    result_error: bool
    requestor: str = "assistant"
    blocked: bool = False

    def to_dict(self) -> dict[str, Any]:
        """The entry as builtins; ``arguments`` is copied (``dataclasses.asdict`` would do the same, slowly)."""
        return {
            "step_index": self.step_index,
            "tool_name": self.tool_name,
            "arguments": copy_record(self.arguments),
            "result_content": self.result_content,
            "result_error": self.result_error,
            "requestor": self.requestor,
            "blocked": self.blocked,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], index: int = 0) -> TraceEntry:
        """Read an entry of ours or of upstream's (extra keys such as hashes are ignored)."""
        arguments = data.get("arguments")
        return cls(
            step_index=int(data.get("step_index", index)),
            tool_name=str(data.get("tool_name", "")),
            arguments=dict(arguments) if isinstance(arguments, Mapping) else {},
            result_content=str(data.get("result_content", "")),
            result_error=bool(data.get("result_error", False)),
            requestor=str(data.get("requestor") or "assistant"),
            blocked=bool(data.get("blocked", False)),
        )


def extract_text(message: Mapping[str, Any]) -> str:
    """The text of a message: a string as-is, or the ``text`` of content blocks joined by spaces."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [b.get("text") for b in content if isinstance(b, dict)]
        return " ".join(t for t in texts if isinstance(t, str))
    return ""
