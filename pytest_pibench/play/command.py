"""``pi play``: a person (or a script) in the agent's seat; recording, scoring.

    pi play SCENARIO [--record PATH] [--player NAME] [--blind]     interactive, on a terminal or a pipe
    pi play SCENARIO --state FILE                                    step mode: start (prints the opening)
    pi play --state FILE --act ACTION [--act ACTION...]              step mode: one action, the new observations
    pi play --state FILE --show policy|task|tools|history            step mode: a view (no turn taken)
    pi play --score RECORD [SCENARIO]                                replay a record on the current files, score it

Nothing printed while playing names the scenario (file, id, label): only what
an agent is given. The score is printed only by ``--score``, so a reviewer
freezes the decision first. ``--score`` exits 0 when every Tier-1 check
passes, 1 otherwise; a bad argument is a usage error (4).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pytest_pibench.inputs import argument_type, whole_number

__all__ = ["add_play_parser", "play_command"]

_USAGE_ERROR = 4


class _PlayUsageError(Exception):
    """A bad ``pi play`` argument: printed as ``pi play: MESSAGE``, exit 4."""


def add_play_parser(commands: Any) -> None:
    """Add ``play`` to ``pi``'s subcommands (``commands`` is argparse's subparsers object)."""
    play = commands.add_parser("play", help="play a scenario as the agent yourself; record, score, replay")
    play.add_argument("scenario", nargs="?", help="scenario file, or a bundled one by file stem or scenario id")
    play.add_argument("--state", metavar="FILE", help="step mode: the play's state file (a play record)")
    play.add_argument("--act", action="append", metavar="ACTION", help="step mode: the next action (repeatable)")
    play.add_argument("--show", choices=("policy", "task", "tools", "history"), help="step mode: show a view")
    play.add_argument(
        "--record", metavar="PATH", help="interactive: write the play record here (a folder: a neutral name)",
    )
    play.add_argument("--player", metavar="NAME", help="who plays (kept in the record)")
    play.add_argument("--blind", action="store_true", help="the player has not seen label, checks or gold (recorded)")
    play.add_argument("--seed", type=int, default=42, help="episode seed (default 42)")
    play.add_argument("--max-steps", type=argument_type(lambda t: whole_number(t, 1), "int"), default=None,
                      metavar="N", help="step limit (default 40)")  # fmt: skip
    play.add_argument("--score", metavar="RECORD", help="replay a play record on the current scenario and score it")


def play_command(args: argparse.Namespace, resolve: Callable[[str], str]) -> int:
    """Run ``pi play`` (``resolve`` turns a scenario argument into a path, as ``pi run`` does)."""
    from pytest_pibench.participants.replay import RecordError
    from pytest_pibench.scenario.loading import ScenarioError

    try:
        if args.score:
            return _score(args, resolve)
        if args.state and not args.scenario:
            from pytest_pibench.play.step import continue_play

            return continue_play(Path(args.state), args.act or [], args.show)
        if not args.scenario:
            raise _PlayUsageError("name a scenario to play, or --state FILE of a play in progress, or --score RECORD")
        if args.act or args.show:
            raise _PlayUsageError("--act and --show continue a play: pi play --state FILE --act ACTION")
        scenario = _load(resolve(args.scenario))
        options = {"seed": args.seed, "player": args.player, "blind": args.blind, "max_steps": args.max_steps or 40}
        if args.state:
            from pytest_pibench.play.step import start_play

            return start_play(scenario, Path(args.state), **options)
        from pytest_pibench.play.interactive import play_interactive

        return play_interactive(scenario, sys.stdin, sys.stdout, record=args.record, **options)
    except (_PlayUsageError, RecordError, ScenarioError, ValueError) as exc:
        print(f"pi play: {exc}", file=sys.stderr)
        return _USAGE_ERROR


def _load(path: str) -> Any:
    from pytest_pibench.scenario.loading import load_scenario

    if not Path(path).is_file():
        raise _PlayUsageError("name one scenario file (a play is one scenario)")
    return load_scenario(path)


def _score(args: argparse.Namespace, resolve: Callable[[str], str]) -> int:
    from pytest_pibench.participants.replay import read_record
    from pytest_pibench.play.records import score_record

    record = read_record(args.score)
    override = Path(resolve(args.scenario)) if args.scenario else None
    score = score_record(record, override)
    result = score.result
    player = f"  (player: {record['player']})" if record.get("player") else ""
    print(f"scenario: {score.scenario.scenario_id}{player}")
    if score.changed:
        print("note: the scenario file changed since the play (sha256 differs): scored against the current file")
    if score.diverged:
        print("note: the replay did not follow the recorded play exactly (the play was unfinished, or the "
              "scenario's user or tools changed)")  # fmt: skip
    print("Tier 1 checks:")
    for check in result.tier1:
        print(f"  {'PASS' if check.passed else 'FAIL'}  {check.outcome_id}  {check.type}: {check.detail}")
    skipped = [c.outcome_id for c in result.tier2]
    if skipped:
        print(f"Tier 2 checks (not judged here): {', '.join(skipped)}")
    decision = result.decision.canonical_decision or "none"
    match = "matches" if decision == result.label else "differs from"
    print(f"decision: {decision} ({match} the label {result.label})")
    print(f"ending: {result.termination_reason}")
    passed = all(check.passed for check in result.tier1)
    print(f"all_passed: {str(passed).lower()}")
    return 0 if passed else 1
