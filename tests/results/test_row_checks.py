"""Each check is stored once in a row; the dimensions, the metrics and the leaderboard are read from that one copy."""

from __future__ import annotations

import json

from conftest import TOY_ALLOW
from pytest_pibench import evaluate, load_scenario, run_one, to_leaderboard
from pytest_pibench.checks.base import CheckType
from pytest_pibench.checks.judge import NLJudgeCheck
from pytest_pibench.checks.registry import declaration_problems
from pytest_pibench.results.metrics import partial_credit
from pytest_pibench.results.row_checks import row_checks, row_dimensions


def test_a_row_stores_each_check_once_and_its_dimensions_are_read_from_them():
    row = run_one(TOY_ALLOW, "baseline:allow")
    assert "dimensions" not in row
    result = evaluate(load_scenario(TOY_ALLOW), json.loads(json.dumps(row["transcript"])))
    assert row_dimensions(row) == result.dimensions()  # the same buckets the evaluation reports
    (detail,) = to_leaderboard([row])["results"][0]["scenario_details"]
    assert detail["dimensions"] == result.dimensions()  # upstream's artifact keeps its dimensions
    failed = [c["outcome_id"] for c in row["outcome_checks"] if c["passed"] is False]
    assert failed and sorted(c["outcome_id"] for d in detail["dimensions"].values() for c in d["failed_checks"]) == sorted(
        failed
    )


def test_rows_that_store_dimensions_are_read_as_upstream_reads_them():
    """Upstream's rows (and ours of earlier versions) carry dimensions; §8.2 takes their checks."""
    judged = {"outcome_id": "J", "type": "NL_JUDGE", "passed": False, "detail": "judge: NO"}
    kept = {"outcome_id": "D", "type": "decision_equals", "passed": True, "detail": "ok"}
    row = {
        "scenario_id": "S", "agent": "a", "status": "completed", "all_passed": True,
        "dimensions": {"decision": {"name": "Decision Correctness", "passed": True, "checks": [kept],
                                    "failed_checks": []},
                       "semantic": {"name": "Semantic Quality", "passed": False, "checks": [judged],
                                    "failed_checks": [judged]}},
        "outcome_checks": [{**kept, "tier": 1}, {**judged}],
    }  # fmt: skip
    checks = {c["outcome_id"]: c for c in row_checks(row)}
    assert checks["D"]["tier"] == 1 and checks["D"]["dimension"] == "decision"
    assert checks["J"]["tier"] == 2 and checks["J"]["dimension"] == "semantic"  # upstream's judged type
    assert partial_credit(row) == 0.5 and partial_credit(row, tier1_only=True) == 1.0


def test_the_tier_is_declared_on_the_check_type():
    declaration = CheckType(NLJudgeCheck, lambda check, context: (True, ""), dimension="semantic", tools={},
                            family="NL_JUDGE", tier=3)  # type: ignore[arg-type]  # fmt: skip
    assert "tier must be 1 (deterministic, gating) or 2 (judged, reported), got 3" in declaration_problems(declaration)
    row = run_one(TOY_ALLOW, "oracle")
    tiers = {c["type"]: c["tier"] for c in row["outcome_checks"]}
    assert tiers["NL_JUDGE"] == 2 and all(t == 1 for k, t in tiers.items() if k != "NL_JUDGE")
