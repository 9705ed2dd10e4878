"""The strict decoder's quick path (issue 27 speed) gives what the full walk gives, value or error."""

from __future__ import annotations

import pytest

from pytest_pibench.paths import bundled_scenarios_dir
from pytest_pibench.scenario import strict_json
from pytest_pibench.scenario.loading import discover_scenarios
from pytest_pibench.scenario.strict_json import StrictJSONError, decode_strict

HOSTILE = [
    b'{"a": NaN}',
    b'{"a": [1, {"b": Infinity}]}',
    b'{"a": -Infinity}',
    b'{"a": 1e400}',
    b'{"x": 1, "x": 2}',
    b'{"d": {"x": 1, "y": 0, "x": 2}}',
    b'{"s": "\\ud800"}',
    b'{"\\udc00k": 1}',
    b'{"s": "\\\\ud800 is text, not an escape"}',
    b"[" * (strict_json.MAX_DEPTH + 1) + b"]" * (strict_json.MAX_DEPTH + 1),
    b"[" * strict_json.MAX_DEPTH + b"]" * strict_json.MAX_DEPTH,
    b"[" + b"7" * (strict_json.MAX_INT_DIGITS + 1) + b"]",
    b'{"a": [true, false, null, "x", 1.5, -2, {"b": []}]}',
]


def _outcome(raw: bytes) -> object:
    try:
        return ("value", decode_strict(raw))
    except StrictJSONError as exc:
        return ("error", str(exc), exc.problems)


@pytest.mark.parametrize("raw", HOSTILE, ids=range(len(HOSTILE)))
def test_the_quick_path_and_the_full_walk_agree(raw, monkeypatch):
    quick = _outcome(raw)
    monkeypatch.setattr(strict_json, "_plain", lambda value, budget: False)  # the full walk, always
    assert quick == _outcome(raw)


def test_every_bundled_scenario_decodes_the_same_both_ways(monkeypatch):
    files = list(discover_scenarios(bundled_scenarios_dir()))
    quick = [decode_strict(f.read_bytes()) for f in files]
    monkeypatch.setattr(strict_json, "_plain", lambda value, budget: False)
    assert quick == [decode_strict(f.read_bytes()) for f in files] and len(files) >= 100
