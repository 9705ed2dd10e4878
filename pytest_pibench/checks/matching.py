"""How a check's ``arguments`` match a call's: upstream's subset equality, plus opt-in normalisers.

Upstream (upstream-evaluation.md §5.2): every expected key/value must equal the
call's value with Python equality, a missing key reading as ``None``; extra
actual arguments are ignored. A check may name a normaliser per argument in its
``match`` field (``{"name": "name"}``); an argument it does not name compares
exactly as upstream does, so a check without ``match`` scores as upstream's.

Normalisers:

* ``exact``: Python equality (the default).
* ``name``: both values are strings equal after
  :func:`pytest_pibench.toolkit.normalize_name` (case, accents, punctuation and
  word order ignored: ``"Lin, Kyaw Zaw"`` matches ``"Kyaw Zaw Lin"``), the same
  function the finra screening tool compares names with; a value that is not a
  string compares exactly.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pytest_pibench.toolkit import normalize_name

__all__ = ["MATCH_FIELD_DESCRIPTION", "Normaliser", "arguments_match", "match_problems"]

Normaliser = Literal["exact", "name"]

MATCH_FIELD_DESCRIPTION = (
    'Per argument, how its value is compared: "exact" (Python equality, the default for an argument not '
    'named here) or "name" (case, accents, punctuation and word order ignored, as the screening tool does).'
)


def _same(expected: Any, actual: Any, normaliser: Normaliser) -> bool:
    if normaliser == "name" and isinstance(expected, str) and isinstance(actual, str):
        return normalize_name(expected) == normalize_name(actual)
    return bool(actual == expected)


def arguments_match(actual: Mapping[str, Any], expected: Mapping[str, Any], match: Mapping[str, Normaliser]) -> bool:
    """True iff every key/value of ``expected`` is in ``actual`` (a missing key reads as ``None``)."""
    return all(_same(value, actual.get(key), match.get(key, "exact")) for key, value in expected.items())


def match_problems(match: Mapping[str, Any], *argument_sets: Mapping[str, Any] | None) -> list[str]:
    """A ``match`` entry for an argument no argument set names would be silently inert."""
    named = {key for arguments in argument_sets if arguments for key in arguments}
    return [f"match names {key!r}, which no arguments of this check name" for key in match if key not in named]
