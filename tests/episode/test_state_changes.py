"""What an episode changed in its database: record-aware diffs, in every row's transcript."""

from __future__ import annotations

from conftest import TOY_ALLOW
from pytest_pibench import load_scenario, run_one
from pytest_pibench.statediff import MAX_CHANGES, state_changes


def test_records_are_matched_by_id_and_fields_by_path():
    before = {"orders": [{"order_id": "O1", "status": "open"}, {"order_id": "O2", "status": "open"}],
              "refunds": [], "now": "t", "flags": {"vip": False}}
    after = {"orders": [{"order_id": "O2", "status": "open"}, {"order_id": "O1", "status": "refunded"}],
             "refunds": [{"refund_id": "R1", "amount": 5}], "now": "t", "flags": {"vip": True, "new": 1}}
    assert state_changes(before, after) == [
        {"path": "orders[O1].status", "change": "changed", "before": "open", "after": "refunded"},
        {"path": "refunds[R1]", "change": "added", "after": {"refund_id": "R1", "amount": 5}},
        {"path": "flags.vip", "change": "changed", "before": False, "after": True},
        {"path": "flags.new", "change": "added", "after": 1},
    ]


def test_plain_lists_removed_keys_and_no_change():
    assert state_changes({"a": [1, 2]}, {"a": [1, 3]}) == [{"path": "a[1]", "change": "changed", "before": 2, "after": 3}]
    assert state_changes({"a": [1]}, {"a": [1, 2]}) == [{"path": "a", "change": "changed", "before": [1], "after": [1, 2]}]
    assert state_changes({"a": 1, "b": 2}, {"a": 1}) == [{"path": "b", "change": "removed", "before": 2}]
    assert state_changes({"x": {"y": [1]}}, {"x": {"y": [1]}}) == []


def test_the_list_is_bounded():
    changes = state_changes({"t": list(range(500))}, {"t": [i + 1 for i in range(500)]})
    assert len(changes) == MAX_CHANGES + 1 and changes[-1] == {"path": "", "change": "more", "count": 300}


def test_every_row_carries_its_state_changes_and_check_notes():
    row = run_one(load_scenario(TOY_ALLOW), "oracle")
    changes = row["transcript"]["state_changes"]
    assert changes and all({"path", "change"} <= set(c) for c in changes)
    assert any(c["change"] == "added" for c in changes) or any(c["change"] == "changed" for c in changes)
    import json

    from pytest_pibench import bundled_scenarios_dir

    path = sorted((bundled_scenarios_dir() / "finra").glob("*.json"))[0]
    row = run_one(load_scenario(path), "oracle")
    scenario = json.loads(path.read_text())
    criteria = scenario["evaluation_criteria"]
    written = {c["outcome_id"]: c["notes"] for key in ("policy_checks", "state_field_checks")
               for c in criteria.get(key, []) if c.get("notes")}  # fmt: skip
    carried = {c["outcome_id"]: c["notes"] for c in row["outcome_checks"] if "notes" in c}
    assert written and carried == written  # the author's note (its clause) travels with each check
