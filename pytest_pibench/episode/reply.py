"""Reading what a participant returned into plain builtins, once, without running its code.

An agent's ``generate`` may return anything: a tuple subclass whose
``__len__`` lies, a dict subclass whose ``.get`` blocks, a list whose iterator
never ends, floats that are NaN, an integer of a million digits, keys that are
not strings, objects of its own. :func:`read_reply` copies the reply through
the builtin types' own methods (``dict.items``, ``list.__iter__``,
``str.__str__``...), so no method the participant overrode runs, and reports
the first value that strict JSON (RFC 8259) cannot carry. The episode loop runs
it on the participant's thread under the episode deadline, so even a reply too
large to copy in time is the participant's timeout.

A value JSON cannot carry is replaced in the copy by a marker string
(``"[not JSON: float nan]"``), so the invalid message can still be kept for
the record, and the reply is the participant's ``invalid_message`` failure.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

__all__ = ["MAX_INT_BITS", "MAX_MESSAGE_DEPTH", "Reply", "plain_copy", "read_reply"]

MAX_MESSAGE_DEPTH = 100
"""Deepest nesting of containers accepted in a message (JSON encoders give up near 1,000)."""

MAX_INT_BITS = 14_000
"""Largest integer accepted, in bits (about 4,200 digits: Python's default limit on int/str conversion is 4,300)."""


@dataclass
class Reply:
    """What a participant's ``generate`` returned, read.

    ``message`` is a builtins-only copy (markers in place of what JSON cannot
    carry); ``problem`` says why the reply is not a valid ``(message, state)``
    pair of JSON values, or is None.
    """

    message: Any
    state: Any
    problem: str | None = None


def _marker(what: str) -> str:
    return f"[not JSON: {what}]"


class _Copier:
    def __init__(self, max_depth: int) -> None:
        self.max_depth = max_depth
        self.problem: str | None = None

    def _note(self, path: str, what: str) -> str:
        if self.problem is None:  # the path is made of the participant's keys: kept short
            where = path if len(path) <= 200 else path[:200] + "…"
            self.problem = f"{where or 'the message'}: {what}"
        return _marker(what)

    def copy(self, value: Any, path: str, depth: int) -> Any:
        # type() and issubclass, not isinstance: an object's own ``__class__`` cannot pretend here.
        kind = type(value)
        if value is None or kind is bool:
            return value
        if issubclass(kind, str):
            return str.__str__(value)
        if issubclass(kind, int):
            number = int.__index__(value)
            if number.bit_length() > MAX_INT_BITS:
                return self._note(path, f"an integer of about {int(number.bit_length() * 0.30103):,} digits")
            return number
        if issubclass(kind, float):
            real = float.__float__(value)
            return real if math.isfinite(real) else self._note(path, f"float {real!r}")
        if issubclass(kind, dict | list | tuple) and depth >= self.max_depth:
            return self._note(path, f"nested deeper than {self.max_depth} levels")
        if issubclass(kind, dict):
            out: dict[str, Any] = {}
            for index, (key, item) in enumerate(dict.items(value)):
                if issubclass(type(key), str):
                    name = str.__str__(key)
                else:
                    name = self._note(f"{path}[key {index}]", f"a key of type {type(key).__name__}") + f" #{index}"
                out[name] = self.copy(item, f"{path}.{name}" if path else name, depth + 1)
            return out
        if issubclass(kind, list | tuple):
            items = list(list.__iter__(value) if issubclass(kind, list) else tuple.__iter__(value))
            flat = _flat_copy(items)
            if flat is not None:
                return flat
            return [self.copy(item, f"{path}[{index}]", depth + 1) for index, item in enumerate(items)]
        return self._note(path, f"a value of type {kind.__name__}")


_SCALARS = frozenset({str, int, float, bool, type(None)})


def _flat_copy(items: list[Any]) -> list[Any] | None:
    """``items`` itself when it holds only exact JSON scalars within bounds (C-speed checks), else None.

    A list of a million numbers is read in a fraction of the time the
    per-value walk takes; anything else takes the careful path.
    """
    kinds = set(map(type, items))
    if not kinds <= _SCALARS:
        return None
    if int in kinds and any(type(x) is int and x.bit_length() > MAX_INT_BITS for x in items):
        return None
    if float in kinds and not all(math.isfinite(x) for x in items if type(x) is float):
        return None
    return items


def plain_copy(value: Any, max_depth: int = MAX_MESSAGE_DEPTH) -> tuple[Any, str | None]:
    """``(copy, problem)``: ``value`` as builtins only, and the first value strict JSON cannot carry (or None)."""
    copier = _Copier(max_depth)
    return copier.copy(value, "", 0), copier.problem


def read_reply(returned: Any) -> Reply:
    """Read a ``generate`` return value into :class:`Reply` (never raises, never runs the participant's methods)."""
    is_tuple = issubclass(type(returned), tuple)
    if not is_tuple or tuple.__len__(returned) != 2:
        size = f" of {tuple.__len__(returned)} items" if is_tuple else ""
        return Reply(None, None, f"generate must return (message, state), got {type(returned).__name__}{size}")
    message, state = tuple.__getitem__(returned, 0), tuple.__getitem__(returned, 1)
    copy, problem = plain_copy(message)
    return Reply(copy, state, problem)
