"""Rule ``state-path`` (issue 24 §4): a first-match filter that can select several records must say which count."""

from __future__ import annotations

import json
from pathlib import Path

from pytest_pibench import validate

FIN_015 = Path(__file__).resolve().parents[2] / "scenarios" / "finra" / "fin_015_llc_ach_payment.json"


def state_path(report) -> list[str]:
    return [p.message for p in report.problems if p.rule == "state-path"]


def test_a_filter_on_a_collection_the_gold_adds_to_must_say_one_or_all(tmp_path):
    data = json.loads(FIN_015.read_text())
    (check,) = [c for c in data["evaluation_criteria"]["state_field_checks"] if c["outcome_id"] == "F015_DOC_TYPE"]
    assert check["matches"] == "one"
    del check["matches"]  # upstream's first match
    path = tmp_path / "finra" / FIN_015.name
    path.parent.mkdir()
    path.write_text(json.dumps(data))
    (message,) = state_path(validate(path))
    assert message.startswith("F015_DOC_TYPE: document_requests[customer_id=CUS-7115].document_type: filter ")
    assert "the gold trajectory adds records to it" in message and '"matches": "one"' in message
    check["matches"] = "all"
    path.write_text(json.dumps(data))
    assert state_path(validate(path)) == []


def test_a_filter_that_selects_several_records_must_say_one_or_all(toy_data, write_scenario):
    items = toy_data["environment_setup"]["initial_state_patch"]["items"]
    items.append(dict(items[0], status="refunded"))  # a second record with the same item_id
    path = write_scenario(toy_data)
    (message,) = state_path(validate(path))
    assert "items[item_id=IT-1]" in message and "several records match it" in message


def test_a_filter_on_a_unique_record_the_gold_does_not_add_to_is_fine(toy_data, write_scenario):
    assert state_path(validate(write_scenario(toy_data))) == []
