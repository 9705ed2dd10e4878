"""Checked inputs: numbers that are finite and in range, URLs that can be URLs.

Every number and URL a user hands the benchmark (``--pibench-*`` options and
their ini keys, ``pi`` flags, the green server's flags and requests) goes
through these few functions, so one rule holds everywhere: NaN, infinity, a
value out of range or a URL that cannot be one is refused with a message saying
what is expected, before any episode runs. ``float("nan")`` compares false with
everything, so a plain ``value < minimum`` test lets it through: hence one
place that checks :func:`math.isfinite` first.

Kept free of heavy imports: the plugin reads options with it on every start-up.
"""

from __future__ import annotations

import argparse
import difflib
import ipaddress
import json
import math
import re
from collections.abc import Callable
from typing import TypeVar
from urllib.parse import urlsplit

__all__ = [
    "MAX_CONCURRENCY",
    "MAX_LIMIT",
    "MAX_SEED",
    "MAX_TIMEOUT",
    "MAX_TRIALS",
    "InputError",
    "argument_type",
    "did_you_mean",
    "finite_float",
    "finite_json",
    "http_url",
    "whole_number",
]

MAX_CONCURRENCY = 256
"""Most episodes in flight in one process (``--pibench-concurrency``, the green server's ``--max-concurrency``)."""
MAX_TRIALS = 1000
"""Most trials per scenario of one run (``--pibench-trials``, N of ``--pibench-min-pass K/N``)."""
MAX_SEED = 2**63 - 1
"""Largest base seed (a signed 64-bit integer, as the green server accepts)."""
MAX_TIMEOUT = 7 * 86_400.0
"""Longest timeout in seconds (a week): past it a timeout is no timeout, and thread waits overflow."""
MAX_LIMIT = 1_000_000
"""Largest step, tool-call or judge-vote count: past it a limit is no limit."""

_T = TypeVar("_T")


class InputError(ValueError):
    """A value the benchmark will not take; the message says what is expected and what was given."""


def _shown(raw: object) -> str:
    """``repr(raw)``, cut short: a message must stay readable whatever was typed."""
    text = repr(raw)
    return text if len(text) <= 60 else text[:57] + "..."


def _out_of_range(value: float, low: float | None, high: float | None, low_open: bool, high_open: bool) -> str:
    """What ``value`` breaks ("must be at least 1"), or "" when it is within the bounds."""
    if low is not None and (value <= low if low_open else value < low):
        return f"must be {'above' if low_open else 'at least'} {low:g}"
    if high is not None and (value >= high if high_open else value > high):
        return f"must be {'below' if high_open else 'at most'} {high:g}"
    return ""


def finite_float(
    raw: object,
    low: float | None = None,
    high: float | None = None,
    *,
    low_open: bool = False,
    high_open: bool = False,
    expected: str | None = None,
) -> float:
    """``raw`` (a number or its text) as a finite float within ``low``..``high`` (ends excluded when ``*_open``).

    Raises:
        InputError: for text that is no number, NaN, infinity (``1e999`` too) or a value out of range;
            the message is ``expected`` (when given) or says the rule, then the value given.
    """
    try:
        if isinstance(raw, bool) or not isinstance(raw, int | float | str):
            raise TypeError
        value = float(raw)
    except (TypeError, ValueError, OverflowError):
        raise InputError(f"{expected or 'expected a number'}, got {_shown(raw)}") from None
    if not math.isfinite(value):
        raise InputError(f"{expected or 'expected a finite number'}, got {_shown(raw)}")
    problem = _out_of_range(value, low, high, low_open, high_open)
    if problem:
        raise InputError(f"{expected or problem}, got {_shown(raw)}")
    return value


def whole_number(raw: object, low: int | None = None, high: int | None = None, *, expected: str | None = None) -> int:
    """``raw`` (an int, a whole float or decimal digits) as an int within ``low``..``high``.

    Raises:
        InputError: for anything else (``nan``, ``1.5``, ``1e3``, digits past Python's conversion limit)
            or a value out of range.
    """
    value: int | None = None
    if isinstance(raw, int) and not isinstance(raw, bool):
        value = raw
    elif isinstance(raw, float) and math.isfinite(raw) and raw.is_integer():
        value = int(raw)
    elif isinstance(raw, str) and re.fullmatch(r"\s*[-+]?[0-9]+\s*", raw):
        try:
            value = int(raw)
        except ValueError:  # more digits than int() converts
            value = None
    if value is None:
        raise InputError(f"{expected or 'expected a whole number'}, got {_shown(raw)}")
    problem = _out_of_range(value, low, high, False, False)
    if problem:
        raise InputError(f"{expected or problem}, got {_shown(raw)}")
    return value


def finite_json(text: str) -> object:
    """``text`` parsed as JSON, refused when it holds ``NaN``, ``Infinity`` or a number past a double.

    Python's ``json`` reads those; no other JSON reader does (RFC 8259), and a
    NaN parameter is no parameter.

    Raises:
        InputError: for a non-finite number anywhere in the value.
        ValueError: for text that is no JSON (``RecursionError`` for absurd nesting).
    """
    value = json.loads(text)
    stack = [value]
    while stack:  # iterative: as deep as json.loads went, without recursing again
        item = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            raise InputError(f"expected finite numbers, got {_shown(text)}")
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return value


def _host_problem(host: str) -> str | None:
    """Why ``host`` (as in the URL, brackets kept) cannot be a host, or None."""
    if host.startswith("["):
        try:
            ipaddress.IPv6Address(host[1:-1] if host.endswith("]") else host[1:])
        except ValueError:
            return f"host {_shown(host)} is not a valid IPv6 address"
        return None if host.endswith("]") else f"host {_shown(host)} is not a valid IPv6 address"
    if re.fullmatch(r"[0-9.]+", host):  # all digits and dots: only a dotted-quad IPv4 address can be meant
        try:
            ipaddress.IPv4Address(host)
        except ValueError:
            return f"host {_shown(host)} is not a valid IPv4 address"
        return None
    name = host[:-1] if host.endswith(".") else host
    try:
        ascii_name = name.encode("idna").decode("ascii")  # international names too; refuses empty labels
    except UnicodeError:
        return f"host {_shown(host)} is not a valid host name"
    label = r"[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?"
    if len(ascii_name) > 253 or not re.fullmatch(rf"{label}(?:\.{label})*", ascii_name):
        return f"host {_shown(host)} is not a valid host name"
    return None


def http_url(text: str) -> str:
    """``text`` (trailing ``/`` removed) when it can be an http(s) URL of a server.

    The scheme is http or https; the host is a name, a valid dotted-quad IPv4
    address or a bracketed IPv6 address; a port is 1 to 65535; no user
    information (credentials go in a header) and no spaces. Whether anything
    answers there is not checked: an unreachable server is a run-time failure.

    Raises:
        InputError: naming what is wrong.
    """
    if any(ch.isspace() or ord(ch) < 32 or ord(ch) == 127 for ch in text):
        raise InputError(f"{_shown(text)} holds spaces or control characters")
    try:
        parts = urlsplit(text)
    except ValueError as exc:  # an unbalanced "[" of an IPv6 host
        raise InputError(f"{_shown(text)} is not a URL: {exc}") from None
    if parts.scheme not in ("http", "https"):
        raise InputError(f"{_shown(text)} must start with http:// or https://")
    netloc = parts.netloc
    if "@" in netloc:
        raise InputError(f"{_shown(text)} must not hold user information (credentials go in a header)")
    host, port = netloc, ""
    if not netloc.endswith("]") and ":" in netloc.rpartition("]")[2]:
        host, _, port = netloc.rpartition(":")
    if not host:
        raise InputError(f"{_shown(text)} names no host")
    problem = _host_problem(host)
    if problem:
        raise InputError(f"{_shown(text)}: {problem}")
    if port and not (port.isascii() and port.isdigit() and 1 <= int(port) <= 65535):
        raise InputError(f"{_shown(text)}: port {_shown(port)} is not a port number (1 to 65535)")
    return text.rstrip("/")


def did_you_mean(name: str, choices: list[str]) -> str:
    """``" (did you mean 'x'?)"`` for the close matches of ``name`` among ``choices``, else ``""``."""
    prefixed = [c for c in choices if c.lower().startswith(name.lower())] if len(name) >= 3 else []
    close = prefixed[:3] or difflib.get_close_matches(name, choices, n=3, cutoff=0.6)
    if not close:
        lowered = {c.lower(): c for c in choices}
        close = [lowered[name.lower()]] if name.lower() in lowered else []
    return f" (did you mean {' or '.join(repr(c) for c in close)}?)" if close else ""


def argument_type(check: Callable[[str], _T], name: str) -> Callable[[str], _T]:
    """``check`` as an argparse ``type=``: an :class:`InputError` becomes argparse's usage error for ``name``."""

    def convert(text: str) -> _T:
        try:
            return check(text)
        except InputError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    convert.__name__ = name  # argparse names the type when a conversion fails otherwise
    return convert
