"""The generic engine that serves a declarative pack's tools: a handler by name, a generic look-up, or a soft error.

Importing this module registers every built-in handler (upstream's tool names,
upstream-runtime.md §7.4-7.7); :func:`generic_tool` runs one tool call.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_pibench.packs import generic_handlers  # noqa: F401  (registers every built-in handler)
from pytest_pibench.packs.generic import find_with_id, handler_for, registered_handlers, soft_error

__all__ = ["generic_tool", "handler_names"]


def handler_names() -> list[str]:
    """The tool names the engine has a handler for."""
    return sorted(registered_handlers())


def _generic_lookup(db: Mapping[str, Any], name: str, arguments: Mapping[str, Any]) -> Any:
    """``lookup_<entity>``: the first record of ``<entity>``, ``<entity>s`` (with or without ``_``) matching an id."""
    entity = name.removeprefix("lookup_")
    keys = {k: v for k, v in arguments.items() if k == "id" or k.endswith("_id")}
    if not keys:
        return soft_error(f"{name} needs an id argument (a name ending in _id).")
    bare = entity.replace("_", "")
    for candidate in dict.fromkeys((entity, f"{entity}s", bare, f"{bare}s")):
        if candidate in db:
            for field, value in keys.items():
                found = find_with_id(db[candidate], field, value)
                if found is not None:
                    return found
    return soft_error(f"No {entity} found.", lookup=name, criteria=dict(keys))


def generic_tool(db: dict[str, Any], name: str, arguments: Mapping[str, Any]) -> Any:
    """Run the tool ``name``: its handler, the generic look-up for ``lookup_*``, or a soft error."""
    registered = handler_for(name)
    if registered is not None:
        return registered(db, **{str(k): v for k, v in arguments.items() if k != "db"})
    if name.startswith("lookup_"):
        return _generic_lookup(db, name, arguments)
    return soft_error(f"No handler is registered for tool '{name}'.")
