"""Calibration records: one blind ``pi play`` record per file, plus the second reviewer's ``review``.

A calibration record is a play record (``"format": "pibench-play"``, ``"format_version": 1``,
see :mod:`pytest_pibench.participants.replay`) of a *finished* play, stored as
``calibration/<domain>/<scenario file stem>--<player>.json``, with one more key written by a
second reviewer after the play::

    "review": {
      "reviewer": "bo", "date": "2026-03-10",
      "verdict_at_review": {"all_passed": false, "failed_checks": ["E2"]},
      "failed_checks": [{"outcome_id": "E2", "class": "a", "clause": "RET-4.2",
                         "quote": "Refunds of opened items ...", "note": "refunded an opened item"}],
      "fixes": ["E3 was over-specified (b): dropped the ordering check, re-scored"],
      "superseded_by": null
    }

``class`` is (a) a real mistake by the policy text (``clause`` and ``quote`` required), (b)
over-specified (the policy does not clearly require it) or (c) ambiguous; (b) and (c) are fixed
in the scenario or policy and the play re-scored. ``verdict_at_review`` is the verdict the
reviewer last confirmed (updated after fixes): a replay that no longer gives it is stale. A
record without ``review`` (or with ``"review": null``) is unreviewed.

A (c) ambiguity settled in the *policy text* cannot be fixed by re-scoring: the player acted on the old
text. The record then names, in ``superseded_by``, a fresh blind play of the same scenario under the new
text; ``pi calibration`` keeps it (history) but counts the fresh one. Only a record whose every failed
check is (b) or (c) may be superseded: a real mistake stays counted, whatever a later play does. The one
exception is a scenario *reworked* since the play (``reworked`` says how; the file's sha256 must differ from
the one played): the old play measured a scenario that no longer exists, and a fresh blind play of the file as
it is now replaces it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date as _date
from pathlib import Path, PurePosixPath
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError, field_validator, model_validator

from pytest_pibench.participants.replay import RecordError, read_record
from pytest_pibench.paths import bundled_root

__all__ = [
    "CheckClass",
    "CalibrationError",
    "CalibrationFile",
    "CalibrationRecord",
    "CheckReview",
    "Review",
    "VerdictAtReview",
    "bundled_calibration_dir",
    "calibration_files",
    "load_calibration_record",
]

CheckClass = Literal["a", "b", "c"]
_Text = Annotated[str, StringConstraints(min_length=1, pattern=r"\S")]
# Players name the file: letters, digits, '.', '_' and '-' keep the name portable and unambiguous around "--".
_Player = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_.]+(?:-[A-Za-z0-9_.]+)*$")]


def bundled_calibration_dir() -> Path:
    """The shipped calibration records (``calibration/`` of a checkout, or the wheel's bundled copy)."""
    return bundled_root() / "calibration"


class CalibrationError(ValueError):
    """A file that is not a usable calibration record; the message names the file and each bad field."""

    def __init__(self, path: Path, problems: list[tuple[str, str]]) -> None:
        self.path = path
        self.problems = problems
        super().__init__(f"{path}: " + "; ".join(f"{where}: {message}" if where else message
                                                   for where, message in problems))  # fmt: skip


class _Strict(BaseModel):
    # The review is written by hand: a misspelt key ("clas", "qoute") must be an error, not ignored.
    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True)


class VerdictAtReview(_Strict):
    """The replay's Tier-1 verdict as the reviewer last confirmed it."""

    all_passed: bool
    failed_checks: list[_Text] = Field(default_factory=list, description="Outcome ids of the failed Tier-1 checks.")

    @model_validator(mode="after")
    def _consistent(self) -> VerdictAtReview:
        if self.all_passed and self.failed_checks:
            raise ValueError("all_passed is true but failed_checks names checks")
        if not self.all_passed and not self.failed_checks:
            raise ValueError("all_passed is false but failed_checks names no check")
        if len(set(self.failed_checks)) != len(self.failed_checks):
            raise ValueError("failed_checks names a check twice")
        return self


class CheckReview(_Strict):
    """The classification of one failed check."""

    outcome_id: _Text
    category: CheckClass = Field(alias="class", description="a: real mistake; b: over-specified; c: ambiguous.")
    clause: str | None = Field(None, description="The policy clause id, e.g. RET-4.2 (required for class a).")
    quote: str | None = Field(None, description="The policy text quoted (required for class a).")
    note: str = ""

    @model_validator(mode="after")
    def _grounded(self) -> CheckReview:
        if self.category == "a":
            missing = [name for name in ("clause", "quote") if not (getattr(self, name) or "").strip()]
            if missing:
                raise ValueError(f"class a (a real mistake by the policy text) needs {' and '.join(missing)}")
        return self


class Review(_Strict):
    """The second reviewer's block."""

    reviewer: _Text
    date: str = Field(description="YYYY-MM-DD")
    verdict_at_review: VerdictAtReview
    failed_checks: list[CheckReview] = Field(default_factory=list)
    fixes: list[str] = Field(default_factory=list, description="What was changed for (b)/(c) classifications.")
    superseded_by: str | None = Field(
        None,
        description="The file name of a later blind record of the same scenario, in the same folder, that replaces "
        "this one after a (b)/(c) fix in the policy text: the play answered a text that no longer exists. Allowed "
        "only when every check this play fails is classified (b) or (c), or when the scenario was reworked since the "
        "play (``reworked``); a real mistake (a) on the scenario as played is never superseded.",
    )
    reworked: str | None = Field(
        None,
        description="How the scenario was reworked since this play (a new decisive fact, changed records): the play "
        "measured a scenario that no longer exists. With superseded_by, lets a fresh blind play of the current file "
        "replace it even when it failed; the scenario file must differ from the one played (its sha256).",
    )

    @field_validator("date")
    @classmethod
    def _iso_date(cls, value: str) -> str:
        try:
            if len(value) != 10:
                raise ValueError
            _date.fromisoformat(value)
        except ValueError:
            raise ValueError(f"{value!r} is not a date YYYY-MM-DD") from None
        return value

    @model_validator(mode="after")
    def _unique(self) -> Review:
        ids = [check.outcome_id for check in self.failed_checks]
        twice = sorted({i for i in ids if ids.count(i) > 1})
        if twice:
            raise ValueError(f"failed_checks classifies {', '.join(twice)} more than once")
        return self

    def classification(self, outcome_id: str) -> CheckReview | None:
        return next((c for c in self.failed_checks if c.outcome_id == outcome_id), None)


class ScenarioReference(BaseModel):
    """How a play record names its scenario (:func:`pytest_pibench.play.records.scenario_reference`)."""

    model_config = ConfigDict(extra="allow", frozen=True)
    scenario_id: _Text
    path: _Text
    bundled: bool = False
    sha256: str = ""


class CalibrationRecord(BaseModel):
    """A finished play record with an optional ``review``; other play keys are kept as they are."""

    # The play format may grow keys (pi play writes them): keep them rather than reject the record.
    model_config = ConfigDict(extra="allow", frozen=True)
    format: Literal["pibench-play"]
    format_version: Literal[1]
    scenario: ScenarioReference
    player: _Player
    date: str
    blind: bool
    seed: int | None = None
    max_steps: int | None = None
    status: Literal["finished"] = Field(description="A play in progress ('playing') is not calibrated yet.")
    decision: str | None = None
    actions: list[dict[str, Any]]
    review: Review | None = None

    def file_name(self) -> str:
        """``<scenario file stem>--<player>.json``: one file per play, found by scenario and player."""
        return f"{PurePosixPath(self.scenario.path.replace(chr(92), '/')).stem}--{self.player}.json"


@dataclass(frozen=True)
class CalibrationFile:
    """A calibration record as loaded: its file, the validated model and the raw play record (for replay)."""

    path: Path
    record: CalibrationRecord
    data: dict[str, Any]


def _where(location: tuple[int | str, ...]) -> str:
    out = ""
    for part in location:
        out += f"[{part}]" if isinstance(part, int) else f".{part}" if out else str(part)
    return out


def load_calibration_record(path: str | Path) -> CalibrationFile:
    """Read and validate one calibration record.

    Raises:
        CalibrationError: not a readable play record, a bad field (each one named by its JSON path),
            or a file name other than ``<scenario file stem>--<player>.json``.
    """
    path = Path(path)
    try:
        data = read_record(path)  # the play format's own checks: format, version, actions
    except RecordError as exc:
        raise CalibrationError(path, [("", str(exc).removeprefix(f"{path}: "))]) from None
    try:
        record = CalibrationRecord.model_validate(data)
    except ValidationError as exc:
        problems = [(_where(error["loc"]), error["msg"].removeprefix("Value error, ")) for error in exc.errors()]
        raise CalibrationError(path, problems) from None
    if path.name != record.file_name():
        raise CalibrationError(path, [("", f"a calibration record is named <scenario file stem>--<player>.json: "
                                           f"{record.file_name()}, not {path.name}")])  # fmt: skip
    return CalibrationFile(path=path, record=record, data=data)


def calibration_files(root: str | Path) -> list[Path]:
    """The record files under ``root``, sorted (``_``- and ``.``-prefixed names and folders are skipped)."""
    root = Path(root)
    if not root.is_dir():
        return []
    return sorted(
        p for p in root.rglob("*.json")
        if not any(part.startswith(("_", ".")) for part in p.relative_to(root).parts)
    )  # fmt: skip
