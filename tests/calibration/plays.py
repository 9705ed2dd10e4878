"""Calibration records made for real in tests: a step-mode ``pi play`` of a toy scenario, then a review block."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pytest_pibench.cli import main
from tests.conftest import TOY_ALLOW

GOLD = [
    "lookup_item item_id=IT-1",
    "refund_item item_id=IT-1 reason=changed_mind; decide ALLOW item_id=IT-1 unopened, within 14 days (TOY-1)",
    "say Your refund is done.",
    "say Goodbye!",
]
WRONG = ["lookup_item item_id=IT-1", "decide DENY item_id=IT-1 no refunds", "stop"]
WRONG_FAILS = ["E2", "E3", "E4", "E6"]
"""The Tier-1 checks of the toy ALLOW scenario that WRONG fails (asserted in test_command.py)."""


def review(failed: list[str] | None = None, classes: dict[str, str] | None = None, **extra: Any) -> dict[str, Any]:
    """A second reviewer's block: the verdict confirmed, each failed check classified (default: a)."""
    failed = list(failed or [])
    classes = {outcome: "a" for outcome in failed} if classes is None else classes
    checks = []
    for outcome, category in classes.items():
        entry: dict[str, Any] = {"outcome_id": outcome, "class": category, "note": "seen in review"}
        if category == "a":
            entry.update(clause="TOY-1", quote="Unopened items bought within 14 days are refunded.")
        checks.append(entry)
    return {
        "reviewer": "rev", "date": "2026-03-11",
        "verdict_at_review": {"all_passed": not failed, "failed_checks": failed},
        "failed_checks": checks, "fixes": [], **extra,
    }  # fmt: skip


class Plays:
    """Plays of the toy scenarios of ``workspace`` through ``pi play`` (step mode), stored as calibration records.

    ``records`` is the calibration folder (records go under ``<domain>/``), ``scenarios`` the set
    they are measured against: the workspace's.
    """

    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace
        self.records = workspace.parent / "calibration"
        self.scenarios = workspace / "scenarios"

    def __call__(self, actions: list[str], player: str, *, blind: bool = True, review: dict[str, Any] | None = None,
                 scenario: str = TOY_ALLOW.name) -> Path:  # fmt: skip
        state = self.workspace / f"state-{player}-{scenario}"
        start = ["play", str(self.scenarios / "toyshop" / scenario), "--state", str(state), "--player", player]
        assert main(start + (["--blind"] if blind else [])) == 0
        for action in actions:
            assert main(["play", "--state", str(state), "--act", action]) == 0
        data = json.loads(state.read_text())
        state.unlink()
        if review is not None:
            data["review"] = review
        target = self.records / "toyshop" / f"{Path(scenario).stem}--{player}.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(data, indent=1))
        return target
