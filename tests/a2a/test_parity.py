"""One executor: a purple agent assessed by the green server gets the rows ``--pibench-agent=a2a:<url>`` gives it.

Both runs use the same request: scenarios from three domains, two trials, a
seed and episode limits that differ from the defaults. The purple agent passes
some scenarios and fails others (deterministically), so the rows carry
failures, limits hit and blocked calls, not only passes. Only the node id
(pytest's name for the item) and the episode's wall time may differ.
"""

from __future__ import annotations

import json
import zlib
from pathlib import Path
from typing import Any

import pytest
from a2a_servers import _context_key, assess, bundled, oracle_for, serve  # skips without the a2a extra

from pytest_pibench import BaselineAgent
from pytest_pibench.a2a.green import green_app
from pytest_pibench.a2a.serving import ServerThread

_RUN_METADATA = ("nodeid", "duration")
"""What may differ: the item's node id (a pytest run's name for it) and the wall time an episode took."""


def _mixed_agent(context: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
    """The oracle on some scenarios, an agent that denies at once on the others (chosen by the policy's text)."""
    oracle = oracle_for(context, tools)
    return oracle if zlib.crc32(_context_key(context).encode()) % 3 else BaselineAgent("DENY")


def _chosen() -> list[Any]:
    by_domain: dict[str, list[Any]] = {}
    for scenario in sorted(bundled(), key=lambda s: s.scenario_id):
        by_domain.setdefault(scenario.meta.domain, []).append(scenario)
    return [s for scenarios in by_domain.values() for s in scenarios[:3]]


def _comparable(row: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in row.items() if k not in _RUN_METADATA}


@pytest.mark.slow
def test_the_green_server_and_the_plugin_give_the_same_rows(pytester, tmp_path: Path):
    chosen = _chosen()
    limits = {"max_steps": 30, "max_tool_calls": 25, "max_tool_calls_per_message": 8, "observer_mode": "hard_gate",
              "episode_timeout": 300}  # fmt: skip
    payload = {"participants": {"agent": {"url": "", "id": "team-mixed"}},
               "config": {"scenario_ids": [s.scenario_id for s in chosen], "num_trials": 2, "seed": 11,
                          "concurrency": 4, "timeout": 120, **limits}}  # fmt: skip
    green_dir = tmp_path / "green"
    green_dir.mkdir()
    with serve(_mixed_agent) as purple, ServerThread(lambda url: green_app(url, results_dir=green_dir)) as green:
        payload["participants"]["agent"]["url"] = purple
        assess(green.url, payload, as_text=False)
        result = pytester.runpytest_subprocess(
            f"--pibench-agent=a2a:{purple}", *(str(s.source_path) for s in chosen), "--pibench-trials=2",
            "--pibench-seed=11", "--pibench-max-steps=30", "--pibench-max-tool-calls=25",
            "--pibench-max-tool-calls-per-message=8", "--pibench-observer-mode=hard_gate", "--pibench-timeout=300",
            "--pibench-agent-arg=timeout=120.0", "--pibench-results=r.json", "-n", "2", "-p", "no:cacheprovider",
        )  # fmt: skip
    assert result.ret == 1, result.stdout.str()[-3000:]  # the mixed agent fails some scenarios
    (green_file,) = green_dir.glob("*.json")
    green_rows = json.loads(green_file.read_text())["rows"]
    plugin_rows = json.loads((pytester.path / "r.json").read_text())["rows"]

    def by_key(rows: list[dict[str, Any]]) -> dict[tuple[str, int], dict[str, Any]]:
        return {(r["scenario_id"], r["trial"]): _comparable(r) for r in rows}

    green_by_key, plugin_by_key = by_key(green_rows), by_key(plugin_rows)
    assert len(green_rows) == len(plugin_rows) == 2 * len(chosen) == len(green_by_key)
    assert green_by_key.keys() == plugin_by_key.keys()
    outcomes = {row["all_passed"] for row in green_rows}
    assert outcomes == {True, False}, "the purple agent should pass some scenarios and fail others"
    for key, green_row in green_by_key.items():
        plugin_row = plugin_by_key[key]
        differing = sorted(k for k in green_row.keys() | plugin_row.keys() if green_row.get(k) != plugin_row.get(k))
        assert not differing, f"{key}: {differing}"
    assert all(r["fingerprint"]["key"]["settings"]["observer_mode"] == "hard_gate" for r in green_rows)
