"""Re-score every calibration record against the current scenario files; the counts and issue 24's targets.

Each record is replayed through ``pi play --score``'s code (:func:`pytest_pibench.play.records.score_record`:
the recorded actions, the scripted user, no LLM), so the numbers are those of the files as they are now.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pytest_pibench.calibration.records import CalibrationError, calibration_files, load_calibration_record
from pytest_pibench.packs.loading import DomainError, canonical_domain_name
from pytest_pibench.participants.replay import RecordError
from pytest_pibench.play.records import record_scenario_path, score_record
from pytest_pibench.results.metrics import wilson_interval
from pytest_pibench.scenario.loading import ScenarioError, discover_scenarios, load_scenario

__all__ = [
    "NEW_COHORT",
    "TARGET_NEW",
    "TARGET_SET",
    "Calibration",
    "DomainSummary",
    "RecordOutcome",
    "SetScenario",
    "Target",
    "calibrate",
]

NEW_COHORT = "hard"
"""``meta.cohort`` of the new scenarios of issue 24 §3 (hidden metadata, never shown to the agent)."""
TARGET_NEW = 0.50
"""Blind full compliance on the new scenarios: at most this."""
TARGET_SET = 0.75
"""Blind full compliance across the whole shipped set: at most this."""


@dataclass(frozen=True)
class SetScenario:
    """A scenario of the set the records are measured against."""

    path: Path
    scenario_id: str
    domain: str
    new: bool
    """``meta.cohort`` is :data:`NEW_COHORT`."""


@dataclass(frozen=True)
class RecordOutcome:
    """One record replayed on the current files."""

    path: Path
    scenario_id: str
    domain: str
    player: str
    blind: bool
    reviewed: bool
    new: bool
    all_passed: bool
    failed_checks: tuple[str, ...]
    classes: dict[str, str]
    """Each currently failed check's class: ``a``, ``b``, ``c`` or ``unclassified``."""
    fixed: tuple[str, ...]
    """Checks classified (b) or (c) that pass now: fixed since the review."""
    decision: str | None
    label: str
    stale: tuple[str, ...]
    """Why the current verdict is not ``verdict_at_review`` (empty: not stale, or unreviewed)."""
    changed: bool
    diverged: bool
    date: str = ""
    superseded_by: str | None = None
    """A later blind record of the same scenario that replaces this one (checked by :func:`calibrate`)."""
    reworked: str | None = None
    """The review's account of how the scenario was reworked since this play (see :class:`Review`)."""
    played_sha256: str = ""
    """The sha256 of the scenario file as it was played (the record's)."""

    @property
    def retired(self) -> bool:
        """Superseded after a rework: a play of a scenario that no longer exists, kept as history only (its
        replay on the reworked file says nothing, so it is never stale)."""
        return bool(self.superseded_by and self.reworked)

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": str(self.path), "scenario_id": self.scenario_id, "domain": self.domain, "player": self.player,
            "date": self.date, "superseded_by": self.superseded_by,
            "blind": self.blind, "reviewed": self.reviewed, "new": self.new, "all_passed": self.all_passed,
            "failed_checks": {outcome: self.classes[outcome] for outcome in self.failed_checks},
            "fixed": list(self.fixed), "decision": self.decision, "label": self.label,
            "stale": list(self.stale), "scenario_changed": self.changed, "replay_diverged": self.diverged,
        }  # fmt: skip


@dataclass(frozen=True)
class DomainSummary:
    """The counts of one domain, or of the whole set (``domain`` None)."""

    domain: str | None
    scenarios: int
    covered: int
    """Scenarios of the set with at least one blind record."""
    blind: int
    blind_passed: int
    decision_correct: int
    failures: dict[str, int]
    """Currently failed checks of blind records by class (a, b, c, unclassified)."""
    fixed: int
    unreviewed: int
    stale: int
    superseded: int = 0
    """Blind records replaced by a later play after a (b)/(c) fix in the policy text: kept, not counted."""

    @property
    def compliance(self) -> float | None:
        return self.blind_passed / self.blind if self.blind else None

    def to_dict(self) -> dict[str, Any]:
        low, high = wilson_interval(self.blind_passed, self.blind)
        return {
            "domain": self.domain, "scenarios": self.scenarios, "covered": self.covered,
            "coverage": self.covered / self.scenarios if self.scenarios else None,
            "blind_records": self.blind, "blind_passed": self.blind_passed,
            "blind_full_compliance": self.compliance,
            "blind_full_compliance_ci95": [low, high] if self.blind else None,
            "decision_correct": self.decision_correct,
            "decision_accuracy": self.decision_correct / self.blind if self.blind else None,
            "failed_checks": dict(self.failures), "fixed_b_c": self.fixed,
            "unreviewed_blind_records": self.unreviewed, "stale_records": self.stale,
            "superseded_records": self.superseded,
        }  # fmt: skip


@dataclass(frozen=True)
class Target:
    """One of issue 24's targets, met or not, with the numbers behind the verdict."""

    name: str
    text: str
    met: bool
    detail: str

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "text": self.text, "met": self.met, "detail": self.detail}


@dataclass
class Calibration:
    """Every record of a folder re-scored, with the set they are measured against."""

    records_root: Path
    scenarios_root: Path
    scenarios: list[SetScenario]
    outcomes: list[RecordOutcome] = field(default_factory=list)
    invalid: list[str] = field(default_factory=list)
    """One message per unusable record file, naming the file (and the field)."""
    warnings: list[str] = field(default_factory=list)
    """Scenarios of the set that do not load (``pi validate`` says why); not the records' fault."""

    def summary(self, domain: str | None = None) -> DomainSummary:
        scenarios = [s for s in self.scenarios if domain is None or s.domain == domain]
        outcomes = [o for o in self.outcomes if domain is None or o.domain == domain]
        blind = [o for o in outcomes if o.blind and not o.superseded_by]
        failures = {"a": 0, "b": 0, "c": 0, "unclassified": 0}
        for outcome in blind:
            for category in outcome.classes.values():
                failures[category] += 1
        covered = {o.scenario_id for o in blind}
        return DomainSummary(
            domain=domain,
            scenarios=len(scenarios),
            covered=sum(1 for s in scenarios if s.scenario_id in covered),
            blind=len(blind),
            blind_passed=sum(o.all_passed for o in blind),
            decision_correct=sum(o.decision == o.label for o in blind),
            failures=failures,
            fixed=sum(len(o.fixed) for o in blind),
            unreviewed=sum(not o.reviewed for o in blind),
            stale=sum(bool(o.stale) and not o.retired for o in outcomes),
            superseded=sum(bool(o.blind and o.superseded_by) for o in outcomes),
        )

    def domains(self) -> list[str]:
        return sorted({s.domain for s in self.scenarios} | {o.domain for o in self.outcomes})

    def targets(self) -> list[Target]:
        return [self._target_new(), self._target_set(), self._target_classified(), self._target_coverage()]

    def _target_new(self) -> Target:
        text = f"blind full compliance on the new scenarios (meta.cohort {NEW_COHORT!r}) at most {TARGET_NEW:.0%}"
        new = [o for o in self.outcomes if o.blind and o.new and not o.superseded_by]
        if not any(s.new for s in self.scenarios):
            return Target("new_scenarios", text, False, "no new scenarios yet")
        if not new:
            return Target("new_scenarios", text, False, "no blind record of a new scenario yet")
        rate = sum(o.all_passed for o in new) / len(new)
        return Target("new_scenarios", text, rate <= TARGET_NEW, _rate(sum(o.all_passed for o in new), len(new)))

    def _target_set(self) -> Target:
        text = f"blind full compliance across the whole set at most {TARGET_SET:.0%}"
        total = self.summary()
        if not total.blind:
            return Target("whole_set", text, False, "no blind records yet")
        met = (total.compliance or 0.0) <= TARGET_SET
        return Target("whole_set", text, met, _rate(total.blind_passed, total.blind))

    def _target_classified(self) -> Target:
        text = "100% of blind failures classified (a), 0 open (b)/(c)"
        total = self.summary()
        if not total.blind:
            return Target("classified", text, False, "no blind records yet")
        counts = total.failures
        failed = sum(counts.values())
        detail = (f"{counts['a']}/{failed} classified (a); open: {counts['b']} (b), {counts['c']} (c), "
                  f"{counts['unclassified']} unclassified")  # fmt: skip
        return Target("classified", text, counts["a"] == failed, detail)

    def _target_coverage(self) -> Target:
        text = "every scenario of the set has a reviewed blind record (issue 24, Done when)"
        reviewed = {o.scenario_id for o in self.outcomes if o.blind and o.reviewed and not o.superseded_by}
        done = sum(1 for s in self.scenarios if s.scenario_id in reviewed)
        total = len(self.scenarios)
        return Target("coverage", text, total > 0 and done == total, f"{done}/{total} scenarios")

    @property
    def stale(self) -> list[RecordOutcome]:
        return [o for o in self.outcomes if o.stale and not o.retired]

    def ok(self) -> bool:
        """``pi calibration --check``: every target met, no stale and no invalid record."""
        return all(t.met for t in self.targets()) and not self.stale and not self.invalid

    def to_dict(self) -> dict[str, Any]:
        return {
            "records": str(self.records_root),
            "scenarios": str(self.scenarios_root),
            "new_cohort": NEW_COHORT,
            "domains": [self.summary(d).to_dict() for d in self.domains()],
            "overall": self.summary().to_dict(),
            "targets": [t.to_dict() for t in self.targets()],
            "ok": self.ok(),
            "record_outcomes": [o.to_dict() for o in self.outcomes],
            "invalid": list(self.invalid),
            "warnings": list(self.warnings),
        }


def _rate(passed: int, total: int) -> str:
    low, high = wilson_interval(passed, total)
    return f"{passed}/{total} = {passed / total:.0%} (95% CI {low:.0%}-{high:.0%})"


def _load_set(root: Path) -> tuple[list[SetScenario], list[str]]:
    scenarios: list[SetScenario] = []
    warnings: list[str] = []
    for file in discover_scenarios(root) if root.exists() else []:
        try:
            scenario = load_scenario(file)
        except (ScenarioError, DomainError) as exc:
            # Counted in the set under its folder's name, so coverage is not overstated; pi validate says why.
            warnings.append(f"{file}: does not load: {str(exc).splitlines()[0]}")
            scenarios.append(SetScenario(file.resolve(), file.stem, file.parent.name, False))
            continue
        domain = canonical_domain_name(scenario.meta.domain)
        scenarios.append(SetScenario(file.resolve(), scenario.scenario_id, domain, scenario.meta.cohort == NEW_COHORT))
    return scenarios, warnings


def calibrate(records_root: str | Path, scenarios_root: str | Path) -> Calibration:
    """Load every record under ``records_root`` and replay it on its scenario of the set ``scenarios_root``.

    A record that does not validate, names a scenario outside the set or one that is gone, is not
    stored under its scenario's domain, or whose scenario no longer loads is *invalid* (a message
    naming the file); every other record is an outcome.
    """
    records_root, scenarios_root = Path(records_root), Path(scenarios_root)
    scenarios, warnings = _load_set(scenarios_root)
    by_path = {s.path: s for s in scenarios}
    calibration = Calibration(records_root, scenarios_root, scenarios, warnings=warnings)
    for file in calibration_files(records_root):
        try:
            calibration.outcomes.append(_outcome(file, by_path))
        except (CalibrationError, RecordError, ScenarioError, DomainError) as exc:
            message = str(exc)
            calibration.invalid.append(message if message.startswith(str(file)) else f"{file}: {message}")
    calibration.outcomes = [_checked_supersession(o, calibration) for o in calibration.outcomes]
    return calibration


def _supersession_problem(outcome: RecordOutcome, outcomes: list[RecordOutcome]) -> str | None:
    """Why ``outcome.superseded_by`` does not hold (None when it does)."""
    real = any(category in ("a", "unclassified") for category in outcome.classes.values())
    if real and not (outcome.reworked and outcome.changed):
        return "a play with a failed check classified (a) or unclassified cannot be superseded: " \
               "a real mistake stays counted (unless the scenario was reworked since: review.reworked)"  # fmt: skip
    later = next((o for o in outcomes if o.path == outcome.path.parent / str(outcome.superseded_by)), None)
    if later is None or later.path == outcome.path:
        return f"superseded_by names no other record in {outcome.path.parent}: {outcome.superseded_by}"
    if later.scenario_id != outcome.scenario_id:
        return f"superseded_by names a play of another scenario ({later.scenario_id})"
    if not (later.blind and later.reviewed) or later.superseded_by:
        return "superseded_by must name a reviewed blind play that is not itself superseded"
    if later.date < outcome.date:
        return f"superseded_by names an earlier play ({later.date} before {outcome.date})"
    if outcome.reworked and (later.stale or later.played_sha256 == outcome.played_sha256):
        return "after a rework, superseded_by must name a play of the reworked scenario (another version than " \
               "this play's, its review holding on the file as it is now)"  # fmt: skip
    return None


def _checked_supersession(outcome: RecordOutcome, calibration: Calibration) -> RecordOutcome:
    """The outcome as counted: a supersession that does not hold is reported invalid and the play counts."""
    if not outcome.superseded_by:
        return outcome
    problem = _supersession_problem(outcome, calibration.outcomes)
    if problem is None:
        return outcome
    calibration.invalid.append(f"{outcome.path}: review.superseded_by: {problem}")
    return replace(outcome, superseded_by=None)


def _outcome(file: Path, by_path: dict[Path, SetScenario]) -> RecordOutcome:
    loaded = load_calibration_record(file)
    record = loaded.record
    scenario_file = record_scenario_path(loaded.data)
    if not scenario_file.is_file():
        raise CalibrationError(file, [("scenario.path", f"names a scenario file that does not exist: {scenario_file}")])
    member = by_path.get(scenario_file.resolve())
    if member is None:
        raise CalibrationError(file, [("scenario.path", f"{scenario_file} is not a scenario of the set measured")])
    if file.parent.name != member.domain:
        raise CalibrationError(file, [("", f"stored under {file.parent.name}/, but its scenario is in domain "
                                           f"{member.domain}: move it to {member.domain}/")])  # fmt: skip
    score = score_record(loaded.data, scenario_file)
    failed = tuple(check.outcome_id for check in score.result.tier1 if not check.passed)
    review = record.review
    classes: dict[str, str] = {}
    for outcome_id in failed:
        classified = review.classification(outcome_id) if review else None
        classes[outcome_id] = classified.category if classified else "unclassified"
    reviewed = review.failed_checks if review else []
    fixed = tuple(c.outcome_id for c in reviewed if c.category != "a" and c.outcome_id not in failed)
    return RecordOutcome(
        path=file, scenario_id=member.scenario_id, domain=member.domain, player=record.player,
        blind=record.blind, reviewed=review is not None, new=member.new, all_passed=not failed,
        failed_checks=failed, classes=classes, fixed=fixed,
        decision=score.result.decision.canonical_decision, label=score.result.label,
        stale=_stale_reasons(review.verdict_at_review.failed_checks, failed) if review else (),
        changed=score.changed, diverged=score.diverged,
        date=record.date, superseded_by=review.superseded_by if review else None,
        reworked=review.reworked if review else None, played_sha256=record.scenario.sha256,
    )  # fmt: skip


def _stale_reasons(reviewed: Iterable[str], failed: tuple[str, ...]) -> tuple[str, ...]:
    """Why the current verdict differs from the reviewed one (empty when it does not)."""
    before, now = set(reviewed), set(failed)
    reasons = []
    if not before and now:
        reasons.append(f"reviewed as passing, now fails {', '.join(sorted(now))}")
    elif before - now:
        reasons.append(f"{', '.join(sorted(before - now))} failed at review and pass now")
    if before and now - before:
        reasons.append(f"{', '.join(sorted(now - before))} fail now and did not at review")
    return tuple(reasons)
