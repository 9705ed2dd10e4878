"""Purple agents built from the reference example: each legacy form is scored, with a warning naming it."""

from __future__ import annotations

import pytest
from legacy_purple import GARBAGE, LEGACY_FORMS, serve_legacy  # skips without the a2a extra (a2a_servers)

from pytest_pibench import bundled_scenarios_dir, discover_scenarios, run_one

SCENARIOS = sorted(discover_scenarios(bundled_scenarios_dir() / "retail"))[:2]


@pytest.mark.parametrize("form", LEGACY_FORMS)
def test_a_legacy_purple_agent_is_scored_with_a_warning_naming_its_form(form):
    with serve_legacy(form) as url:
        rows = [run_one(path, f"a2a:{url}") for path in SCENARIOS]
    for row in rows:
        assert row["status"] == "completed" and row["termination_reason"] == "user_stop", row.get("error")
        assert row["all_passed"] is True  # the oracle behind it: 0 protocol errors
        legacy = [w for w in row["warnings"] if w.startswith("legacy form:")]
        assert len(legacy) == 1, row["warnings"]


def test_a_reply_of_no_known_form_is_still_the_agents_error():
    with serve_legacy(GARBAGE) as url:
        row = run_one(SCENARIOS[0], f"a2a:{url}")
    assert row["termination_reason"] == "agent_error" and row["failure_cause"] == "agent"
    assert "neither task nor message" in row["error"].lower()
    assert not any(w.startswith("legacy form:") for w in row["warnings"])
