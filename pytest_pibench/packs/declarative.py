"""Declarative domain packs: ``tools.json`` (+ ``db.json``, ``policy.md``) served by the generic engine.

``tools.json`` comes in upstream's three shapes: a bare list of tools, ``{"tools":
[...]}``, or ``{"tool_definitions": [...]}``. Each tool is ``{"name", "description"?,
"parameters", "returns"?}`` whose ``parameters`` is either a JSON Schema object
(kept as it is) or a flat map ``param -> {type, description?, enum?, items?,
required?: bool}`` (converted: ``type`` defaults to ``string``, a bare string
``items`` becomes ``{"type": items}`` and makes the type ``array``, the ``required:
true`` params are collected). ``returns`` is dropped (upstream-runtime.md §7.1).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pytest_pibench.packs.engine import generic_tool
from pytest_pibench.packs.generic import HandlerSet
from pytest_pibench.packs.typed_tools import Tool

__all__ = ["TOOLS_FILE", "load_tools_json", "normalise_parameters"]

TOOLS_FILE = "tools.json"


class _Invalid(ValueError):
    pass


def normalise_parameters(parameters: Any) -> dict[str, Any]:
    """A tool's ``parameters`` as a JSON Schema object, from either upstream form."""
    if isinstance(parameters, Mapping) and parameters.get("type") == "object" and "properties" in parameters:
        return dict(parameters)
    properties: dict[str, Any] = {}
    required: list[str] = []
    for name, definition in (parameters or {}).items() if isinstance(parameters, Mapping) else ():
        if not isinstance(definition, Mapping):
            continue  # upstream skips a definition that is not an object
        prop: dict[str, Any] = {"type": definition.get("type") or "string"}
        for key in ("description", "enum"):
            if key in definition:
                prop[key] = definition[key]
        if "items" in definition:
            items = definition["items"]
            prop["items"] = {"type": items} if isinstance(items, str) else items
            if isinstance(items, str):
                prop["type"] = "array"
        properties[str(name)] = prop
        if definition.get("required") is True:
            required.append(str(name))
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema


def _entries(data: Any, path: Path) -> list[Mapping[str, Any]]:
    if isinstance(data, list):
        entries = data
    elif isinstance(data, Mapping) and isinstance(data.get("tools"), list):
        entries = data["tools"]
    elif isinstance(data, Mapping) and isinstance(data.get("tool_definitions"), list):
        entries = data["tool_definitions"]
    else:
        raise _Invalid(f"{path}: expected a list of tools, {{\"tools\": [...]}} or {{\"tool_definitions\": [...]}}")
    if not entries:
        raise _Invalid(f"{path}: the tool list is empty")
    for index, entry in enumerate(entries):
        if not isinstance(entry, Mapping) or not isinstance(entry.get("name"), str) or not entry["name"]:
            raise _Invalid(f"{path}: tool {index} has no name")
    return entries


def _bound(name: str, handlers: HandlerSet) -> Any:
    def run(db: dict[str, Any], arguments: Mapping[str, Any]) -> Any:
        return generic_tool(db, name, arguments, handlers)

    run.__name__ = name
    return run


def load_tools_json(path: Path, handlers: HandlerSet) -> tuple[Tool, ...]:
    """The tools of a ``tools.json``, each served by the generic engine with ``handlers``, under its name.

    Raises:
        ValueError: for invalid JSON, an unknown shape, an empty list, a nameless
            or duplicate tool (the message names the file).
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise ValueError(f"{path}: invalid JSON: {exc}") from None
    tools = [
        Tool(
            name=str(entry["name"]),
            description=str(entry.get("description") or ""),
            parameters=normalise_parameters(entry.get("parameters")),
            function=_bound(str(entry["name"]), handlers),
            arguments_model=None,
        )
        for entry in _entries(data, path)
    ]
    names = [t.name for t in tools]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"{path}: duplicate tools: {', '.join(duplicates)}")
    return tuple(tools)
