"""``pi calibration`` on records made for real in a tmp folder: counts, classes, staleness, targets, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_pibench.calibration.records import load_calibration_record
from pytest_pibench.cli import main
from pytest_pibench.results.metrics import wilson_interval
from pytest_pibench.scenario.loading import load_scenario
from tests.calibration.plays import GOLD, WRONG, WRONG_FAILS, Plays, review
from tests.conftest import TOY_ESCALATE


def report(capsys, records: Path, scenarios: Path, *flags: str) -> tuple[int, dict]:
    capsys.readouterr()  # what the plays printed
    code = main(["calibration", str(records), "--scenarios", str(scenarios), "--json", *flags])
    return code, json.loads(capsys.readouterr().out)


def text(capsys, records: Path, scenarios: Path, *flags: str) -> tuple[int, str]:
    capsys.readouterr()  # what the plays printed
    code = main(["calibration", str(records), "--scenarios", str(scenarios), *flags])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def set_scenario(workspace: Path, change) -> None:
    path = workspace / "scenarios" / "toyshop" / "toy_001_item_refund.json"
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def test_coverage_compliance_decisions_and_classes(workspace, capsys):
    play = Plays(workspace)
    records = play.records
    scenarios = play.scenarios
    play(GOLD, "ann", review=review())
    play(WRONG, "bo", review=review(WRONG_FAILS, {"E2": "a", "E3": "b", "E4": "c"}))  # E6 left unclassified
    play(WRONG, "cy")  # unreviewed: every failure unclassified
    play(GOLD, "dee", blind=False, review=review())  # not blind: not in the blind numbers
    code, out = report(capsys, records, scenarios)
    assert code == 0 and out["invalid"] == [] and out["warnings"] == []
    (toyshop,) = out["domains"]
    assert toyshop == out["overall"] | {"domain": "toyshop"}
    assert toyshop["scenarios"] == 2 and toyshop["covered"] == 1 and toyshop["coverage"] == 0.5
    assert toyshop["blind_records"] == 3 and toyshop["blind_passed"] == 1
    assert toyshop["blind_full_compliance"] == pytest.approx(1 / 3)
    assert toyshop["blind_full_compliance_ci95"] == list(wilson_interval(1, 3))
    assert toyshop["decision_correct"] == 1 and toyshop["decision_accuracy"] == pytest.approx(1 / 3)
    assert toyshop["failed_checks"] == {"a": 1, "b": 1, "c": 1, "unclassified": 1 + len(WRONG_FAILS)}
    assert toyshop["unreviewed_blind_records"] == 1 and toyshop["stale_records"] == 0
    outcomes = {Path(o["path"]).name: o for o in out["record_outcomes"]}
    assert outcomes["toy_001_item_refund--bo.json"]["failed_checks"] == {"E2": "a", "E3": "b", "E4": "c",
                                                                      "E6": "unclassified"}  # fmt: skip
    assert outcomes["toy_001_item_refund--bo.json"]["decision"] == "DENY"
    assert outcomes["toy_001_item_refund--bo.json"]["label"] == "ALLOW"
    targets = {t["name"]: t for t in out["targets"]}
    assert targets["new_scenarios"]["met"] is False and targets["new_scenarios"]["detail"] == "no new scenarios yet"
    assert targets["whole_set"]["met"] is True and targets["whole_set"]["detail"].startswith("1/3 = 33%")
    assert targets["classified"]["met"] is False
    assert targets["classified"]["detail"] == "1/8 classified (a); open: 1 (b), 1 (c), 5 unclassified"
    assert targets["coverage"]["met"] is False and targets["coverage"]["detail"] == "1/2 scenarios"
    assert out["ok"] is False


def test_text_report_names_domains_targets_and_is_exit_0_without_check(workspace, capsys):
    play = Plays(workspace)
    records = play.records
    scenarios = play.scenarios
    play(GOLD, "ann", review=review())
    code, out = text(capsys, records, scenarios)
    assert code == 0
    assert "toyshop: 2 scenarios; blind-played 1/2 (50%)" in out
    assert "blind full compliance 1/1 (100%), 95% CI" in out and "decision = label 1/1 (100%)" in out
    assert "[NOT MET] blind full compliance on the new scenarios (meta.cohort 'hard') at most 50%: " \
           "no new scenarios yet" in out  # fmt: skip
    assert "[NOT MET] blind full compliance across the whole set at most 75%: 1/1 = 100%" in out
    assert "[met] 100% of blind failures classified (a), 0 open (b)/(c): 0/0 classified (a)" in out
    assert text(capsys, records, scenarios, "--check")[0] == 1


def test_every_target_met_passes_check(workspace, capsys):
    play = Plays(workspace)
    records = play.records
    scenarios = play.scenarios
    (workspace / "scenarios" / "toyshop" / "toy_002_expensive_item_refund.json").unlink()  # a set of one scenario
    set_scenario(workspace, lambda data: data["meta"].update(cohort="hard"))
    play(GOLD, "ann", review=review())
    play(WRONG, "bo", review=review(WRONG_FAILS))
    code, out = report(capsys, records, scenarios, "--check")
    assert [(t["name"], t["met"]) for t in out["targets"]] == [
        ("new_scenarios", True), ("whole_set", True), ("classified", True), ("coverage", True)
    ]
    assert out["targets"][0]["detail"].startswith("1/2 = 50%")
    assert code == 0 and out["ok"] is True
    assert load_scenario(workspace / "scenarios" / "toyshop" / "toy_001_item_refund.json").meta.cohort == "hard"

    play(WRONG, "cy", review=review(WRONG_FAILS, {"E2": "a", "E3": "a", "E4": "a", "E6": "b"}))  # an open (b)
    code, out = report(capsys, records, scenarios, "--check")
    assert code == 1 and [t["name"] for t in out["targets"] if not t["met"]] == ["classified"]


def test_a_scenario_change_makes_reviewed_records_stale(workspace, capsys):
    play = Plays(workspace)
    records = play.records
    scenarios = play.scenarios
    passing = play(GOLD, "ann", review=review())
    play(WRONG, "bo", review=review(WRONG_FAILS, {"E2": "a", "E3": "b", "E4": "a", "E6": "a"}))
    play(GOLD, "cy")  # unreviewed: never stale
    set_scenario(workspace, lambda data: data["evaluation_criteria"]["policy_checks"][1]["arguments"].update(
        reason="defective"))  # fmt: skip
    code, out = text(capsys, records, scenarios)
    assert code == 0
    assert "stale records 1" in out
    assert f"  {passing}: reviewed as passing, now fails E2" in out
    assert text(capsys, records, scenarios, "--check")[0] == 1

    # the (b) check E3 is fixed (dropped): bo is stale until re-reviewed, and E3 counts as fixed
    set_scenario(workspace, lambda data: data["evaluation_criteria"]["policy_checks"].pop(2))
    code, out = report(capsys, records, scenarios)
    outcomes = {Path(o["path"]).name: o for o in out["record_outcomes"]}
    assert outcomes["toy_001_item_refund--bo.json"]["stale"] == ["E3 failed at review and pass now"]
    assert outcomes["toy_001_item_refund--bo.json"]["fixed"] == ["E3"]
    assert outcomes["toy_001_item_refund--bo.json"]["scenario_changed"] is True
    assert outcomes["toy_001_item_refund--cy.json"]["stale"] == []
    assert out["overall"]["stale_records"] == 2 and out["overall"]["fixed_b_c"] == 1


def _edit(path: Path, change) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        (lambda d: d["review"]["failed_checks"][0].pop("quote"), "review.failed_checks[0]: class a (a real mistake "
                                                                 "by the policy text) needs quote"),
        (lambda d: d["review"]["failed_checks"][0].update({"class": "d"}), "review.failed_checks[0].class: Input"),
        (lambda d: d["review"].update(date="2026-13-01"), "review.date: '2026-13-01' is not a date YYYY-MM-DD"),
        (lambda d: d["review"].update(reviwer="x"), "review.reviwer: Extra inputs are not permitted"),
        (lambda d: d["review"]["verdict_at_review"].update(all_passed=True),
         "review.verdict_at_review: all_passed is true but failed_checks names checks"),
        (lambda d: d.update(blind="maybe"), "blind: Input should be a valid boolean"),
        (lambda d: d.update(status="playing"), "status: Input should be 'finished'"),
        (lambda d: d.update(format_version=2), "format_version 2"),
        (lambda d: d["scenario"].update(path="/nowhere/toy_001_item_refund.json"),
         "scenario.path: names a scenario file that does not exist"),
    ],
)
def test_an_invalid_record_is_named_with_its_field(workspace, capsys, change, fragment):
    play = Plays(workspace)
    records = play.records
    scenarios = play.scenarios
    path = play(WRONG, "bo", review=review(WRONG_FAILS))
    _edit(path, change)
    code, out = text(capsys, records, scenarios)
    assert code == 0 and "invalid records:" in out
    assert f"  {path}: " in out and fragment in out, out
    assert text(capsys, records, scenarios, "--check")[0] == 1


def test_a_record_must_be_named_and_filed_by_scenario_and_player(workspace, capsys):
    play = Plays(workspace)
    records = play.records
    scenarios = play.scenarios
    path = play(GOLD, "ann", review=review())
    renamed = path.with_name("play-1.json")
    path.rename(renamed)
    out = text(capsys, records, scenarios)[1]
    assert f"{renamed}: a calibration record is named <scenario file stem>--<player>.json: " \
           "toy_001_item_refund--ann.json, not play-1.json" in out  # fmt: skip
    elsewhere = records / "retail" / path.name
    elsewhere.parent.mkdir()
    renamed.rename(elsewhere)
    out = text(capsys, records, scenarios)[1]
    assert f"{elsewhere}: stored under retail/, but its scenario is in domain toyshop: move it to toyshop/" in out
    with pytest.raises(ValueError, match=r"player: String should match pattern"):
        _edit(elsewhere, lambda d: d.update(player="a b"))
        load_calibration_record(elsewhere)


def test_a_scenario_outside_the_measured_set_is_invalid(workspace, tmp_path, capsys):
    play = Plays(workspace)
    records = play.records
    play(GOLD, "ann", review=review())
    other = tmp_path / "other" / "scenarios"
    other.mkdir(parents=True)
    out = text(capsys, records, other)[1]
    assert "is not a scenario of the set measured" in out and "overall: 0 scenarios" in out


def test_an_empty_or_missing_folder(workspace, tmp_path, capsys):
    play = Plays(workspace)
    records = play.records
    scenarios = play.scenarios
    records.mkdir()
    code, out = report(capsys, records, scenarios)
    assert code == 0 and out["record_outcomes"] == [] and out["overall"]["scenarios"] == 2
    assert out["overall"]["blind_full_compliance"] is None and not any(t["met"] for t in out["targets"])
    assert report(capsys, records, scenarios, "--check")[0] == 1
    code, out = text(capsys, tmp_path / "nowhere", scenarios)
    assert code == 4 and "pi calibration: no such folder:" in out


def test_the_default_is_the_shipped_folder_and_set(capsys):
    code = main(["calibration", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert Path(out["records"]).name == "calibration" and Path(out["scenarios"]).name == "scenarios"
    assert out["overall"]["scenarios"] > 0


def test_a_play_superseded_after_a_c_fix_is_kept_but_not_counted(workspace, capsys):
    play = Plays(workspace)
    records, scenarios = play.records, play.scenarios
    (workspace / "scenarios" / "toyshop" / "toy_002_expensive_item_refund.json").unlink()
    old = review(WRONG_FAILS, {outcome: "c" for outcome in WRONG_FAILS}, superseded_by="toy_001_item_refund--bo.json")
    play(WRONG, "ann", review=old)
    play(GOLD, "bo", review=review())
    code, out = report(capsys, records, scenarios, "--check")
    assert code == 1 and out["invalid"] == []  # the set's compliance target is not met (1/1)
    assert out["overall"]["blind_records"] == 1 and out["overall"]["blind_passed"] == 1
    assert out["overall"]["failed_checks"] == {"a": 0, "b": 0, "c": 0, "unclassified": 0}
    assert out["overall"]["superseded_records"] == 1
    outcomes = {Path(o["path"]).name: o for o in out["record_outcomes"]}
    assert outcomes["toy_001_item_refund--ann.json"]["superseded_by"] == "toy_001_item_refund--bo.json"
    assert outcomes["toy_001_item_refund--ann.json"]["failed_checks"] == dict.fromkeys(WRONG_FAILS, "c")
    assert "superseded (kept, not counted) 1" in text(capsys, records, scenarios)[1]


@pytest.mark.parametrize(
    ("classes", "target", "date", "fragment"),
    [
        ({"E2": "a", "E3": "c", "E4": "c", "E6": "c"}, "toy_001_item_refund--bo.json", None,
         "a real mistake stays counted"),
        ({"E2": "c", "E3": "c", "E4": "c"}, "toy_001_item_refund--bo.json", None, "a real mistake stays counted"),
        (dict.fromkeys(WRONG_FAILS, "c"), "toy_001_item_refund--zed.json", None, "names no other record"),
        (dict.fromkeys(WRONG_FAILS, "c"), "toy_001_item_refund--ann.json", None, "names no other record"),
        (dict.fromkeys(WRONG_FAILS, "c"), "toy_001_item_refund--bo.json", "2020-01-01T00:00:00+00:00",
         "names an earlier play"),
    ],
)  # fmt: skip
def test_a_supersession_that_does_not_hold_is_invalid_and_the_play_counts(workspace, capsys, classes, target, date,
                                                                           fragment):  # fmt: skip
    play = Plays(workspace)
    records, scenarios = play.records, play.scenarios
    play(WRONG, "ann", review=review(WRONG_FAILS, classes, superseded_by=target))
    later = play(GOLD, "bo", review=review())
    if date:  # the superseding play's own date (when it was played), not its review's
        later.write_text(json.dumps(json.loads(later.read_text()) | {"date": date}))
    code, out = report(capsys, records, scenarios, "--check")
    assert code == 1 and len(out["invalid"]) == 1
    assert "toy_001_item_refund--ann.json: review.superseded_by: " in out["invalid"][0] and fragment in out["invalid"][0]
    assert out["overall"]["blind_records"] == 2 and out["overall"]["blind_passed"] == 1
    assert out["overall"]["superseded_records"] == 0


def test_only_a_reviewed_blind_play_of_the_same_scenario_supersedes(workspace, capsys):
    play = Plays(workspace)
    records, scenarios = play.records, play.scenarios
    superseded = review(WRONG_FAILS, dict.fromkeys(WRONG_FAILS, "c"),
                        superseded_by="toy_002_expensive_item_refund--bo.json")  # fmt: skip
    play(WRONG, "ann", review=superseded)
    play(["stop"], "bo", scenario=TOY_ESCALATE.name, review=None)
    _, out = report(capsys, records, scenarios)
    assert any("a play of another scenario" in message for message in out["invalid"])
    play(GOLD, "cy", review=None)  # unreviewed
    (records / "toyshop" / "toy_001_item_refund--ann.json").write_text(json.dumps(
        json.loads((records / "toyshop" / "toy_001_item_refund--ann.json").read_text())
        | {"review": superseded | {"superseded_by": "toy_001_item_refund--cy.json"}}))
    _, out = report(capsys, records, scenarios)
    assert any("a reviewed blind play that is not itself superseded" in message for message in out["invalid"])


def test_a_reworked_scenarios_old_play_is_superseded_by_a_fresh_play_of_the_current_file(workspace, capsys):
    """The old play measured a scenario that no longer exists: even its (a) failures give way to a fresh play."""
    play = Plays(workspace)
    records, scenarios = play.records, play.scenarios
    (workspace / "scenarios" / "toyshop" / "toy_002_expensive_item_refund.json").unlink()
    # reviewed when only E2 failed: the replay on the reworked file differs (stale), which a retired play may
    old = review(["E2"], superseded_by="toy_001_item_refund--bo.json", reworked="a second decisive fact added")
    play(WRONG, "ann", review=old)
    set_scenario(workspace, lambda data: data["meta"].update(notes="reworked: a second record now decides it"))
    play(GOLD, "bo", review=review())
    set_scenario(workspace, lambda data: data["meta"].update(notes="a reviewer's fix after the fresh play"))
    _, out = report(capsys, records, scenarios)  # the fresh play's review still holds: it supersedes
    assert out["invalid"] == [] and out["overall"]["superseded_records"] == 1
    assert out["overall"]["blind_records"] == 1 and out["overall"]["failed_checks"]["a"] == 0
    assert out["overall"]["stale_records"] == 0  # history: never stale
    outcomes = {Path(o["path"]).name: o for o in out["record_outcomes"]}
    assert outcomes["toy_001_item_refund--ann.json"]["stale"]  # its replay differs from its review, and that is shown


@pytest.mark.parametrize("case", ["not_reworked", "scenario_unchanged", "fresh_play_of_an_old_file"])
def test_a_rework_supersession_needs_the_rework_a_changed_file_and_a_play_of_it(workspace, capsys, case):
    play = Plays(workspace)
    records, scenarios = play.records, play.scenarios
    extra = {} if case == "not_reworked" else {"reworked": "a second decisive fact added"}
    play(WRONG, "ann", review=review(WRONG_FAILS, superseded_by="toy_001_item_refund--bo.json", **extra))
    if case == "fresh_play_of_an_old_file":
        play(GOLD, "bo", review=review())
        set_scenario(workspace, lambda data: data["meta"].update(notes="reworked after both plays"))
    else:
        if case == "not_reworked":
            set_scenario(workspace, lambda data: data["meta"].update(notes="reworked"))
        play(GOLD, "bo", review=review())
    _, out = report(capsys, records, scenarios)
    (message,) = out["invalid"]
    expected = {"not_reworked": "a real mistake stays counted", "scenario_unchanged": "a real mistake stays counted",
                "fresh_play_of_an_old_file": "a play of the reworked scenario"}[case]  # fmt: skip
    assert expected in message
    assert out["overall"]["superseded_records"] == 0 and out["overall"]["blind_records"] == 2
