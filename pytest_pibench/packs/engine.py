"""The generic engine that serves a declarative pack's tools: a handler by name, a generic look-up, or a soft error.

The handlers come from handler packs (a folder whose ``handlers.py`` defines
``HANDLERS``, loaded like any pack's Python): the declarative pack's own
``handlers.py`` first, if it ships one, then the bundled pack of upstream's
tool names (``domains/upstream_handlers``, upstream-runtime.md §7.4-7.7).
:func:`generic_tool` runs one tool call against such a table.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_pibench.packs.generic import HandlerSet, find_with_id, soft_error

__all__ = ["generic_tool"]


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


def generic_tool(db: dict[str, Any], name: str, arguments: Mapping[str, Any], handlers: HandlerSet) -> Any:
    """Run the tool ``name``: its handler in ``handlers``, the generic look-up for ``lookup_*``, or a soft error."""
    registered = handlers.get(name)
    if registered is not None:
        return registered(db, **{str(k): v for k, v in arguments.items() if k != "db"})
    if name.startswith("lookup_"):
        return _generic_lookup(db, name, arguments)
    return soft_error(f"No handler is registered for tool '{name}'.")
