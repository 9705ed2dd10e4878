"""Every shipped calibration record still says what its review says (issue 24 §2).

Each record under the shipped ``calibration/`` is replayed on the current scenario files: a play
reviewed as passing still passes, every failed check classified (a) still fails, and the verdict
is exactly ``verdict_at_review``. So a scenario change that flips a recorded verdict fails CI
until the record is re-reviewed. With no records shipped yet the parametrized test has no cases;
the same assertions are exercised on records made here from the toy scenario.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pytest

from pytest_pibench.calibration.records import bundled_calibration_dir, calibration_files
from pytest_pibench.calibration.report import Calibration, calibrate
from pytest_pibench.paths import bundled_scenarios_dir
from tests.calibration.plays import GOLD, WRONG, WRONG_FAILS, Plays, review

SHIPPED = bundled_calibration_dir()
SHIPPED_FILES = calibration_files(SHIPPED)


@cache
def shipped() -> Calibration:
    """One pass over the shipped records (each replay once, however many cases ask)."""
    return calibrate(SHIPPED, bundled_scenarios_dir())


def assert_record_holds(calibration: Calibration, path: Path) -> None:
    """The record at ``path`` is valid, names a scenario of the set, and its review still holds."""
    invalid = [message for message in calibration.invalid if message.startswith(str(path))]
    assert not invalid, invalid[0]
    (outcome,) = [o for o in calibration.outcomes if o.path == path]
    if outcome.retired:
        return  # a play of a scenario since reworked, superseded by a fresh play of the current file (history)
    data = json.loads(path.read_text(encoding="utf-8"))
    if data.get("review") is None:
        return  # unreviewed: nothing recorded to hold yet (pi calibration counts it)
    verdict = data["review"]["verdict_at_review"]
    if verdict["all_passed"]:
        assert outcome.all_passed, f"{path}: reviewed as passing, now fails {list(outcome.failed_checks)}"
    for check in data["review"]["failed_checks"]:
        if check["class"] == "a":
            assert check["outcome_id"] in outcome.failed_checks, (
                f"{path}: {check['outcome_id']} was a real mistake ({check['clause']}) and passes now"
            )
    assert sorted(outcome.failed_checks) == sorted(verdict["failed_checks"]), (
        f"{path}: the verdict changed since review ({'; '.join(outcome.stale)}): re-review the record"
    )


@pytest.mark.parametrize("path", SHIPPED_FILES, ids=lambda p: p.relative_to(SHIPPED).as_posix())
def test_shipped_record_holds(path):
    assert_record_holds(shipped(), path)


def test_shipped_folder_is_what_pi_calibration_reads():
    calibration = shipped()
    assert not calibration.invalid, "\n".join(calibration.invalid)
    assert sorted(o.path for o in calibration.outcomes) == SHIPPED_FILES
    assert calibration.summary().scenarios > 0  # measured against the shipped set


def test_holds_for_reviewed_records_and_catches_every_flip(workspace):
    play = Plays(workspace)
    records = play.records
    scenarios = play.scenarios
    passing = play(GOLD, "ann", review=review())
    failing = play(WRONG, "bo", review=review(WRONG_FAILS))
    unreviewed = play(WRONG, "cy")
    calibration = calibrate(records, scenarios)
    for path in (passing, failing, unreviewed):
        assert_record_holds(calibration, path)

    # the scenario changes: the refund check wants another reason, so the gold play fails E2 now
    scenario = workspace / "scenarios" / "toyshop" / "toy_001_item_refund.json"
    data = json.loads(scenario.read_text())
    data["evaluation_criteria"]["policy_checks"][1]["arguments"]["reason"] = "defective"
    scenario.write_text(json.dumps(data))
    calibration = calibrate(records, scenarios)
    with pytest.raises(AssertionError, match="reviewed as passing, now fails"):
        assert_record_holds(calibration, passing)
    assert_record_holds(calibration, failing)  # it failed E2 already: same verdict

    # a check reviewed as a real mistake stops failing (here: it is dropped): the record must be re-reviewed
    del data["evaluation_criteria"]["policy_checks"][2]  # E3, tool_before_tool
    scenario.write_text(json.dumps(data))
    with pytest.raises(AssertionError, match="E3 was a real mistake"):
        assert_record_holds(calibrate(records, scenarios), failing)


def test_holds_rejects_an_invalid_record(workspace):
    play = Plays(workspace)
    records = play.records
    scenarios = play.scenarios
    path = play(GOLD, "ann", review={**review(), "date": "11/03/2026"})
    with pytest.raises(AssertionError, match=r"review\.date"):
        assert_record_holds(calibrate(records, scenarios), path)
