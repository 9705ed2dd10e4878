"""The three names every domain tool needs: the database type, the decision labels, the tool error."""

from __future__ import annotations

from typing import Any, Literal

__all__ = ["DB", "Decision", "ToolError"]

DB = dict[str, Any]
"""The episode database: the domain's ``db.json`` deep-merged with the scenario patch."""

Decision = Literal["ALLOW", "ALLOW-CONDITIONAL", "DENY", "ESCALATE"]
"""The four canonical decisions, for ``record_decision`` signatures."""


class ToolError(Exception):
    """Raised by a tool to return an error result to the agent.

    The message is what the agent reads, so make it say what was wrong and how
    to fix it, e.g. ``ToolError("No order found with order_id 'ORD-9'.")``.
    Raise it before changing anything, so that a failed call leaves the
    database as it was. Any other exception is a bug in the tool: the
    environment still answers the agent (``tool '<name>' failed: ...``) and the
    episode goes on, but the domain is at fault.
    """
