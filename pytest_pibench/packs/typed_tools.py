"""Typed Python functions as agent tools: JSON schema from signature + docstring, validated calls."""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import docstring_parser
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

__all__ = ["Tool", "ToolArgumentError", "tool_from_function"]


class ToolArgumentError(ValueError):
    """The agent called a tool with arguments that do not match its schema."""


@dataclass(frozen=True, slots=True)
class Tool:
    """One tool of a domain: what the agent sees (``schema``) and how to run it."""

    name: str
    description: str
    parameters: dict[str, Any]
    function: Callable[..., Any]
    arguments_model: type[BaseModel] | None
    """None for a declarative pack's tool: its arguments go to the handler as given (upstream's rule)."""

    def schema(self) -> dict[str, Any]:
        """The schema handed to agents: ``{name, description, parameters}`` (``parameters`` is shared:
        the episode loop gives each agent that may change it a copy of its own)."""
        return {"name": self.name, "description": self.description, "parameters": self.parameters}

    def validate(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """Check ``arguments`` against the signature; return the coerced values.

        Raises:
            ToolArgumentError: naming every missing, unexpected or ill-typed argument.
        """
        if self.arguments_model is None:
            return {str(key): value for key, value in arguments.items()}
        try:
            model = self.arguments_model.model_validate(dict(arguments))
        except ValidationError as exc:
            raise ToolArgumentError(_describe(self.name, exc)) from None
        return {key: getattr(model, key) for key in type(model).model_fields}

    def __call__(self, db: dict[str, Any], arguments: Mapping[str, Any]) -> Any:
        if self.arguments_model is None:  # the generic engine takes the arguments as one mapping
            return self.function(db, **{"arguments": dict(arguments)})
        return self.function(db, **self.validate(arguments))


def _describe(tool: str, error: ValidationError) -> str:
    parts: list[str] = []
    for item in error.errors(include_url=False):
        name = ".".join(str(p) for p in item["loc"]) or "arguments"
        if item["type"] == "missing":
            parts.append(f"missing required argument '{name}'")
        elif item["type"] == "extra_forbidden":
            parts.append(f"unexpected argument '{name}'")
        else:
            parts.append(f"argument '{name}': {item['msg']}")
    return f"Invalid arguments for {tool}: " + "; ".join(parts) + "."


def tool_from_function(function: Callable[..., Any]) -> Tool:
    """Build a :class:`Tool` from ``def name(db, arg: type, ...) -> ...`` with a Google docstring."""
    name = function.__name__
    signature = inspect.signature(function)
    params = list(signature.parameters.values())
    if not params:
        raise TypeError(f"tool {name!r} must take the database as its first parameter")
    hints = typing.get_type_hints(function)
    doc = docstring_parser.parse(inspect.getdoc(function) or "")
    param_docs = {p.arg_name: (p.description or "").strip() for p in doc.params}
    description = "\n\n".join(part.strip() for part in (doc.short_description, doc.long_description) if part)

    fields: dict[str, Any] = {}
    for param in params[1:]:
        if param.kind not in (param.POSITIONAL_OR_KEYWORD, param.KEYWORD_ONLY):
            raise TypeError(f"tool {name!r}: parameter {param.name!r} must be a named parameter")
        if param.name not in hints:
            raise TypeError(f"tool {name!r}: parameter {param.name!r} has no type annotation")
        default = ... if param.default is param.empty else param.default
        fields[param.name] = (
            hints[param.name],
            Field(default, description=param_docs.get(param.name) or None),
        )
    model = create_model(f"{name}_arguments", __config__=ConfigDict(extra="forbid"), **fields)
    parameters = _clean_schema(model.model_json_schema())
    parameters.setdefault("properties", {})
    return Tool(name, description, parameters, function, model)


def _clean_schema(node: Any, *, mapping: bool = False) -> Any:
    """Drop pydantic's titles and collapse ``X | None`` so models see plain JSON Schema.

    ``mapping`` marks a ``properties`` dict, whose keys are parameter names.
    """
    if isinstance(node, list):
        return [_clean_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    if mapping:
        return {key: _clean_schema(value) for key, value in node.items()}
    out = {
        key: _clean_schema(value, mapping=key in ("properties", "$defs"))
        for key, value in node.items()
        if key != "title"
    }
    any_of = out.get("anyOf")
    if isinstance(any_of, list):
        non_null = [s for s in any_of if s != {"type": "null"}]
        if len(non_null) == 1 and len(non_null) < len(any_of):
            del out["anyOf"]
            out = {**non_null[0], **out}
    if out.get("default", 0) is None:
        del out["default"]
    if out.get("type") == "object" and "additionalProperties" not in out and "properties" in out:
        out["additionalProperties"] = False
    return out
