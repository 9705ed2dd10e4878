"""Bounding what a runaway or hostile agent controls: check details and stored rows.

One rule everywhere: what is cut keeps an explicit marker, so a reader
always sees that (and how much) was cut:

- a string longer than its cap keeps its first ``cap`` characters followed
  by ``… [truncated, 164,392 more characters]``;
- a list longer than :data:`ROW_ITEM_LIMIT` keeps its first items and a last
  one, ``… [truncated, 2,999,000 more items]``; a dict keeps its first keys
  and a key ``…`` saying how many more there were;
- a container nested deeper than :data:`ROW_DEPTH_LIMIT` is replaced by
  ``… [truncated: nested deeper than 32 levels]``;
- past :data:`ROW_NODE_BUDGET` values in one row, every further container or
  string is replaced by ``… [truncated: the row's size budget is spent]``.

A row with such a cut carries ``"truncated": true``. Values that strict JSON
(RFC 8259) or UTF-8 cannot carry are replaced, and the row carries
``"sanitized": true``: a NaN or infinite number by ``null``, a lone
surrogate by U+FFFD, a key that is not a string by its text.

Bounding is for what is *shown or stored*. Scoring always runs on the full
transcript first; :func:`bound_row` is applied to the finished row only.
"""

from __future__ import annotations

import json
import math
from typing import Any

__all__ = [
    "DETAIL_LIMIT",
    "ROW_DEPTH_LIMIT",
    "ROW_ITEM_LIMIT",
    "ROW_NODE_BUDGET",
    "ROW_STRING_LIMIT",
    "bound_row",
    "bound_text",
    "bound_value",
    "strict_dumps",
    "utf8_encodable",
]

DETAIL_LIMIT = 500
"""Characters kept of one check's ``detail`` text."""

ROW_STRING_LIMIT = 20_000
"""Characters kept of any one string in a result row (a message text, a tool argument or result)."""

ROW_ITEM_LIMIT = 1_000
"""Items kept of any one list or dict in a result row."""

ROW_DEPTH_LIMIT = 32
"""Deepest nesting kept in a result row (the row itself is level 0)."""

ROW_NODE_BUDGET = 200_000
"""Values (containers, strings, numbers) kept in one result row in all."""


def _marker(cut: int) -> str:
    return f"… [truncated, {cut:,} more characters]"


def bound_text(text: str, limit: int = DETAIL_LIMIT) -> str:
    """``text`` itself when it fits in ``limit`` characters, else its head and the truncation marker."""
    if len(text) <= limit:
        return text
    return text[:limit] + _marker(len(text) - limit)


def utf8_encodable(text: str) -> bool:
    """Whether UTF-8 can carry ``text`` (a lone surrogate, e.g. from ``"\\ud800"`` in JSON, cannot)."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _repaired(text: str) -> str:
    return "".join("\ufffd" if "\ud800" <= ch <= "\udfff" else ch for ch in text)


class _Bounder:
    """One walk over a value: copies only what changes, and says what it cut or replaced."""

    def __init__(self, limit: int, items: int, depth: int, budget: int) -> None:
        self.limit, self.items, self.depth, self.budget = limit, items, depth, budget
        self.truncated = False
        self.sanitized = False

    def text(self, value: str) -> str:
        if not utf8_encodable(value):
            self.sanitized = True
            value = _repaired(value)
        if len(value) > self.limit:
            self.truncated = True
            return bound_text(value, self.limit)
        return value

    def key(self, key: Any) -> Any:
        if isinstance(key, str):
            return self.text(key)
        if key is None or type(key) in (int, bool) or (type(key) is float and math.isfinite(key)):
            return key  # JSON writes these as their text, as the standard library does
        self.sanitized = True  # a NaN key, a tuple key...: its text, or its type's name
        return self.text(str(key) if type(key) is float else f"<{type(key).__name__}>")

    def value(self, value: Any, level: int) -> Any:
        self.budget -= 1
        kind = type(value)
        if kind is float:
            if math.isfinite(value):
                return value
            self.sanitized = True
            return None
        if value is None or kind in (int, bool):
            return value
        if self.budget < 0 and (kind is str or kind in (list, tuple, dict)):
            self.truncated = True
            return "… [truncated: the row's size budget is spent]"
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict | list | tuple) and level >= self.depth:
            self.truncated = True
            return f"… [truncated: nested deeper than {self.depth} levels]"
        if isinstance(value, dict):
            return self._dict(value, level)
        if isinstance(value, list | tuple):
            return self._list(value, level)
        return value

    def _dict(self, value: dict[Any, Any], level: int) -> dict[Any, Any]:
        out: dict[Any, Any] = {}
        changed = False
        for index, (key, item) in enumerate(value.items()):
            if index == self.items:
                self.truncated = changed = True
                out["…"] = f"[truncated, {len(value) - index:,} more keys]"
                break
            new_key, new_item = self.key(key), self.value(item, level + 1)
            changed = changed or new_key is not key or new_item is not item
            out[new_key] = new_item
        return out if changed else value

    def _list(self, value: list[Any] | tuple[Any, ...], level: int) -> Any:
        kept = value[: self.items]
        out = [self.value(item, level + 1) for item in kept]
        if len(value) > self.items:
            self.truncated = True
            return [*out, f"… [truncated, {len(value) - self.items:,} more items]"]
        if all(new is old for new, old in zip(out, kept, strict=True)):
            return value
        return out if isinstance(value, list) else tuple(out)


def bound_value(value: Any, limit: int = ROW_STRING_LIMIT) -> tuple[Any, bool]:
    """``(bounded, changed)``: a JSON-like value with every bound of this module applied.

    Nothing is modified in place: containers are rebuilt only where something
    inside them changed, otherwise the very same object comes back.
    """
    bounder = _Bounder(limit, ROW_ITEM_LIMIT, ROW_DEPTH_LIMIT, ROW_NODE_BUDGET)
    bounded = bounder.value(value, 0)
    return bounded, bounder.truncated or bounder.sanitized


def _needs_bounding(value: dict[str, Any], limit: int) -> bool:
    """Whether anything in a row is over a bound or not strict JSON / UTF-8.

    A flat walk over containers with exact type tests, scalars checked in line:
    several times faster than the copying walk, and almost every row has
    nothing to change.
    """
    stack: list[tuple[Any, int]] = [(value, 0)]
    nodes = 0
    while stack:
        container, level = stack.pop()
        if level >= ROW_DEPTH_LIMIT or len(container) > ROW_ITEM_LIMIT:
            return True
        nodes += len(container)
        if nodes > ROW_NODE_BUDGET:
            return True
        if type(container) is dict:
            for key in container:
                if type(key) is not str or len(key) > limit or not (key.isascii() or utf8_encodable(key)):
                    return True
            items: Any = container.values()
        else:
            items = container
        for item in items:
            kind = type(item)
            if kind is str:
                if len(item) > limit or not (item.isascii() or utf8_encodable(item)):
                    return True
            elif kind is dict or kind is list or kind is tuple:
                stack.append((item, level + 1))
            elif kind is float:
                if not math.isfinite(item):
                    return True
            elif item is not None and kind is not int and kind is not bool:
                return True  # subclasses and other types: the careful path decides
    return False


def bound_row(row: dict[str, Any], limit: int = ROW_STRING_LIMIT) -> dict[str, Any]:
    """The row within every bound, strict JSON and UTF-8 safe (``truncated`` / ``sanitized`` set when changed)."""
    if not _needs_bounding(row, limit):
        return row
    bounder = _Bounder(limit, ROW_ITEM_LIMIT, ROW_DEPTH_LIMIT, ROW_NODE_BUDGET)
    bounded: dict[str, Any] = bounder.value(row, 0)
    if not (bounder.truncated or bounder.sanitized):
        return row
    result = dict(bounded)
    if bounder.truncated:
        result["truncated"] = True
    if bounder.sanitized:
        result["sanitized"] = True
    return result


def _finite(value: Any) -> Any:
    """``value`` with every NaN or infinite number replaced by None (a copy where one was found)."""
    if type(value) is float and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(item) for item in value]
    return value


def strict_dumps(value: Any, **options: Any) -> str:
    """``json.dumps`` that never writes NaN or Infinity (RFC 8259): such a number is written as ``null``.

    Every file the benchmark writes goes through it, so any JSON reader
    (Node's ``JSON.parse``, DuckDB) reads what we write; lone surrogates are
    escaped (``\\ud800``), which strict JSON allows.
    """
    options.setdefault("default", str)
    try:
        return json.dumps(value, allow_nan=False, **options)
    except ValueError:  # a NaN somewhere (rows are bounded already; metrics of odd inputs might not be)
        return json.dumps(_finite(value), allow_nan=False, **options)
