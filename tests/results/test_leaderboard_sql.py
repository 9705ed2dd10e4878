"""leaderboard/leaderboard.sql (DuckDB) over results files the project writes: the columns a leaderboard shows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_pibench import bundled_scenarios_dir, discover_scenarios, run_one
from pytest_pibench.report import report_command
from pytest_pibench.results.document import atomic_write_json, results_document
from pytest_pibench.vocab import COLUMNS, GROUPS

duckdb = pytest.importorskip("duckdb", reason="duckdb is a dev dependency: pip install -e '.[dev]'")
QUERY = Path(__file__).resolve().parents[2] / "leaderboard" / "leaderboard.sql"


def _snake(name: str) -> str:
    return "_".join(name.lower().replace("&", " ").replace("/", " ").split())


def test_the_query_gives_agent_first_and_every_leaderboard_number(tmp_path, monkeypatch):
    files = [f for f in discover_scenarios(bundled_scenarios_dir()) if "finra" in f.parts][:12]
    (tmp_path / "results").mkdir()
    artifacts = {}
    for agent in ("oracle", "baseline:deny"):
        rows = [run_one(f, agent) for f in files]
        atomic_write_json(tmp_path / "run.json", results_document(rows, {"agents": [agent]}, 1.0))
        target = tmp_path / "results" / f"{agent.replace(':', '_')}.json"
        assert report_command([str(tmp_path / "run.json")], output=str(target)) == 0
        artifacts[agent] = json.loads(target.read_text())
    monkeypatch.chdir(tmp_path)
    relation = duckdb.sql(QUERY.read_text())
    columns = relation.columns
    assert columns[0] == "agent"
    assert {_snake(c) for c in COLUMNS} | {_snake(g) for g in GROUPS} <= set(columns)
    table = {row[0]: dict(zip(columns, row, strict=True)) for row in relation.fetchall()}
    assert list(table) == ["oracle", "baseline:deny"]  # best first
    for agent, artifact in artifacts.items():
        metrics = artifact["results"][0]["metrics"]
        got = table[agent]
        assert got["overall"] == round(100 * metrics["overall_score"], 1)
        assert got["compliance"] == round(100 * metrics["compliance_rate"], 1)
        for column in COLUMNS:
            assert got[_snake(column)] == round(100 * metrics["by_column"][column]["score"], 1)
        for group in GROUPS:
            assert got[_snake(group)] == round(100 * metrics["by_group"][group], 1)
        for flag, rate in metrics["event_flag_rates"].items():
            assert got[flag] == round(100 * rate, 1)
        assert got["episodes"] == 12 and got["error_rows"] == 0 and got["valid"] is True
    assert table["oracle"]["overall"] == 100.0 and table["baseline:deny"]["compliance"] < 100.0


def test_a_wrapped_results_file_gives_the_row_its_bare_artifact_gives(tmp_path, monkeypatch):
    """The AgentBeats client stores {"participants": {"agent": id}, "results": [<artifact>]}: same numbers."""
    files = [f for f in discover_scenarios(bundled_scenarios_dir()) if "retail" in f.parts][:6]
    rows = [run_one(f, "baseline:deny") for f in files]
    atomic_write_json(tmp_path / "run.json", results_document(rows, {"agents": ["baseline:deny"]}, 1.0))
    bare_dir, wrapped_dir = tmp_path / "bare" / "results", tmp_path / "wrapped" / "results"
    bare_dir.mkdir(parents=True)
    wrapped_dir.mkdir(parents=True)
    assert report_command([str(tmp_path / "run.json")], output=str(bare_dir / "a.json")) == 0
    artifact = json.loads((bare_dir / "a.json").read_text())
    wrapped = {"participants": {"agent": artifact["participants"]["agent"]}, "results": [artifact]}
    (wrapped_dir / "a.json").write_text(json.dumps(wrapped))
    monkeypatch.chdir(tmp_path / "bare")
    bare = duckdb.sql(QUERY.read_text()).fetchall()
    monkeypatch.chdir(tmp_path / "wrapped")
    relation = duckdb.sql(QUERY.read_text())
    assert relation.fetchall() == bare and len(bare) == 1
    values = dict(zip(relation.columns, bare[0], strict=True))
    assert values["compliance"] is not None and values["overall"] is not None and values["episodes"] == 6
