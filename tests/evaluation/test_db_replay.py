"""Upstream's ``DB`` family: the messages' tool calls replayed on a fresh environment must give ``expected_db``."""

from __future__ import annotations

import json

from pytest_pibench import evaluate, load_scenario, run_episode
from pytest_pibench.checks.legacy import db_hash


def _with_db_family(original: dict, workspace, expected_db) -> object:
    toy_data = json.loads(json.dumps(original))
    toy_data["evaluation_criteria"]["reward_basis"] = [*toy_data["evaluation_criteria"]["reward_basis"], "DB"]
    toy_data["evaluation_criteria"]["expected_db"] = expected_db
    path = workspace / "scenarios" / "toyshop" / "db.json"
    path.write_text(json.dumps(toy_data))
    return load_scenario(path)


def test_the_replayed_database_must_hash_like_expected_db(toy_data, workspace):
    probe = _with_db_family(toy_data, workspace, None)
    final = run_episode(probe, "oracle").final_state  # what the gold trajectory leaves
    scenario = _with_db_family(toy_data, workspace, final)
    episode = run_episode(scenario, "oracle")
    (db,) = [r for r in evaluate(scenario, episode).outcome_results if r.type == "db_replay"]
    assert db.passed is True and db_hash(final)[:12] in db.detail

    wrong = json.loads(json.dumps(final))
    wrong["items"][0]["status"] = "untouched"
    scenario = _with_db_family(toy_data, workspace, wrong)
    (db,) = [r for r in evaluate(scenario, run_episode(scenario, "oracle")).outcome_results if r.type == "db_replay"]
    assert db.passed is False and "differs at items" in db.detail and "status changed" in db.detail


def test_without_expected_db_the_family_passes(toy_data, workspace):
    scenario = _with_db_family(toy_data, workspace, None)
    (db,) = [r for r in evaluate(scenario, run_episode(scenario, "oracle")).outcome_results if r.type == "db_replay"]
    assert db.passed is True and db.detail == "no expected_db"
