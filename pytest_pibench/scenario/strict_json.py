"""Decoding a scenario file strictly: RFC 8259 JSON whose values every later step can hold.

``json.loads`` accepts more than a scenario can safely carry, and some of what
it refuses it refuses with an exception that is not a ``JSONDecodeError``:

- an integer literal past Python's str-conversion limit raises a bare
  ``ValueError`` (it used to escape the loader and abort pytest collection);
- nesting deep enough for the decoder raises ``RecursionError``, and nesting
  just under that decodes, then breaks whatever walks the value later
  (merging the state patch, copying, encoding a result row);
- ``NaN``, ``Infinity`` and ``1e999`` decode to floats strict JSON has not;
- a ``\\ud800`` escape decodes to a lone surrogate that no UTF-8 output can
  encode (results file, HTML report, terminal);
- a key given twice silently keeps the last value.

:func:`decode_strict` turns each of these into a problem with its JSON path,
so a hostile file is one clear error of its own and never the run's.
"""

from __future__ import annotations

import codecs
import json
import math
import re
import sys
from typing import Any

from pytest_pibench.bounds import utf8_encodable

__all__ = ["MAX_DEPTH", "MAX_INT_DIGITS", "StrictJSONError", "decode_strict"]

MAX_DEPTH = 100
"""Most nested arrays/objects a scenario may hold (shipped ones reach 10): later steps recurse over them."""

MAX_INT_DIGITS = 4300
"""Most digits in an integer literal: Python's default str-conversion limit, fixed so files load alike everywhere."""

_SHOWN_SEGMENTS = 8  # a path deeper than this is cut: a 100-level path helps nobody
_SHOWN_KEY_CHARS = 60


class StrictJSONError(ValueError):
    """Bytes that are not a usable JSON document. ``problems`` lists (JSON path, message); the first is shown."""

    def __init__(self, problems: list[tuple[str, str]]) -> None:
        self.problems = problems
        super().__init__("; ".join(f"{p}: {m}" if p else m for p, m in problems))


class _Rejected:
    """Stands in for a value the decoder must not produce; the walk reports it at its path."""

    __slots__ = ("reason",)

    def __init__(self, reason: str) -> None:
        self.reason = reason


class _DuplicateKeys(dict[str, Any]):
    """An object that named a key more than once; the walk reports each such key."""

    duplicates: dict[str, int]


def decode_strict(raw: bytes) -> Any:
    """The JSON document in ``raw`` (UTF-8, a leading BOM allowed) as plain builtins.

    Raises:
        StrictJSONError: empty, not UTF-8, not JSON, or holding a value listed in the module docstring.
    """
    if not raw.strip():
        raise StrictJSONError([("", "file is empty")])
    body = raw.removeprefix(codecs.BOM_UTF8)
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        offset = exc.start + len(raw) - len(body)
        line = raw.count(b"\n", 0, offset) + 1
        problem = f"not UTF-8: byte 0x{raw[offset]:02x} at byte offset {offset} (line {line})"
        raise StrictJSONError([("", problem)]) from None
    try:
        data = json.loads(
            text,
            parse_int=_parse_int,
            parse_float=_parse_float,
            parse_constant=_parse_constant,
            object_pairs_hook=_object,
        )
    except json.JSONDecodeError as exc:
        raise StrictJSONError([("", f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}")]) from None
    except RecursionError:
        raise StrictJSONError([("", f"nested more than {MAX_DEPTH} levels deep")]) from None
    if _SURROGATE_ESCAPE.search(text) is None and _plain(data, MAX_DEPTH):
        return data  # nothing the walk below could report: skip it (most of the cost of a clean file)
    problems = _problems(data)
    if problems:
        path, message = problems[0]
        more = f" (and {len(problems) - 1} more such problem(s) in the file)" if len(problems) > 1 else ""
        raise StrictJSONError([(path, message + more)])
    return data


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
"""A ``\\uD800``-``\\uDFFF`` escape, or text that merely looks like one (``\\\\ud800``): the only way a lone
surrogate gets into decoded text, since strict UTF-8 decoding refuses encoded surrogates. A false alarm
only costs the full walk."""

_SCALARS = frozenset({str, int, float, bool, type(None)})


def _plain(value: Any, budget: int) -> bool:
    """Whether ``value`` holds no rejected value, no duplicate key and no container ``budget`` levels down.

    A quick walk (no paths, no string checks) that rules out what :func:`_problems` reports but lone
    surrogates: the hooks mark a rejected value with :class:`_Rejected` and an object with a repeated
    key with :class:`_DuplicateKeys`, neither of which is a plain scalar, ``dict`` or ``list``.
    """
    kind = type(value)
    if kind in _SCALARS:
        return True
    if (kind is not dict and kind is not list) or budget == 0:
        return False
    for child in value.values() if kind is dict else value:
        if type(child) not in _SCALARS and not _plain(child, budget - 1):
            return False
    return True


def _parse_int(literal: str) -> Any:
    digits = len(literal) - literal.startswith("-")
    limit = min(MAX_INT_DIGITS, sys.get_int_max_str_digits() or MAX_INT_DIGITS)
    if digits > limit:
        return _Rejected(f"integer literal with {digits} digits: at most {limit} are allowed")
    return int(literal)


def _parse_float(literal: str) -> Any:
    value = float(literal)
    if not math.isfinite(value):
        shown = literal if len(literal) <= 24 else literal[:21] + "..."
        return _Rejected(f"number {shown} is out of range (it would be infinity)")
    return value


def _parse_constant(name: str) -> _Rejected:
    return _Rejected(f"{name} is not valid JSON (RFC 8259 has no NaN or Infinity)")


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) == len(pairs):
        return out
    counts: dict[str, int] = {}
    for key, _ in pairs:
        counts[key] = counts.get(key, 0) + 1
    marked = _DuplicateKeys(out)
    marked.duplicates = {key: n for key, n in counts.items() if n > 1}
    return marked


def _problems(data: Any) -> list[tuple[str, str]]:
    """Every rejected value, lone surrogate, duplicate key and over-deep container, in document order.

    Iterative on purpose: the point is to refuse nesting before anything recursive sees it.
    """
    found: list[tuple[str, str]] = []
    # (value, its path, how many times its key was given): a key is checked where its value is reached.
    stack: list[tuple[Any, tuple[str | int, ...], int]] = [(data, (), 1)]
    while stack:
        value, path, times = stack.pop()
        key = path[-1] if path else None
        if isinstance(key, str) and not utf8_encodable(key):
            found.append((_path(path), f"lone surrogate {_surrogate(key)} in a key: not valid Unicode"))
        if times > 1:
            found.append((_path(path), f"duplicate key: given {times} times in one object"))
        if isinstance(value, _Rejected):
            found.append((_path(path), value.reason))
        elif isinstance(value, str):
            if not utf8_encodable(value):
                found.append((_path(path), f"lone surrogate {_surrogate(value)} in a string: not valid Unicode"))
        elif isinstance(value, dict | list):
            if len(path) >= MAX_DEPTH:
                found.append((_path(path), f"nested more than {MAX_DEPTH} levels deep"))
            elif isinstance(value, list):
                stack.extend((item, (*path, i), 1) for i, item in reversed(list(enumerate(value))))
            else:
                duplicates: dict[str, int] = getattr(value, "duplicates", {})
                stack.extend((item, (*path, k), duplicates.get(k, 1)) for k, item in reversed(value.items()))
    return found


def _surrogate(text: str) -> str:
    return next(ascii(ch)[1:-1] for ch in text if 0xD800 <= ord(ch) <= 0xDFFF)


def _path(parts: tuple[str | int, ...]) -> str:
    """``a.b[3].c``; keys that are not printable are escaped, long ones and deep paths are cut."""
    out = ""
    for part in parts[:_SHOWN_SEGMENTS]:
        if isinstance(part, int):
            out += f"[{part}]"
            continue
        key = part if part.isprintable() else ascii(part)[1:-1]
        if len(key) > _SHOWN_KEY_CHARS:
            key = key[: _SHOWN_KEY_CHARS - 3] + "..."
        out += f".{key}" if out else key
    if len(parts) > _SHOWN_SEGMENTS:
        out += f"...({len(parts) - _SHOWN_SEGMENTS} more levels)"
    return out
