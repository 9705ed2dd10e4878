"""``pi play`` end to end: step mode and an interactive pipe through the real CLI, records, scoring, replay."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_pibench.cli import main
from tests.conftest import TOY_ALLOW

GOLD = [
    "lookup_item item_id=IT-1",
    "refund_item item_id=IT-1 reason=changed_mind; decide ALLOW item_id=IT-1 unopened, within 14 days (TOY-1)",
    "say Your refund is done.",
    "say Goodbye!",
]


def toy(workspace: Path) -> str:
    return str(workspace / "scenarios" / "toyshop" / TOY_ALLOW.name)


def pi(capsys, *args: str) -> tuple[int, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def step_play(workspace: Path, capsys, actions: list[str]) -> tuple[Path, str]:
    state = workspace / "play.json"
    code, out = pi(capsys, "play", toy(workspace), "--state", str(state), "--player", "ann", "--blind")
    assert code == 0, out
    shown = [out]
    for action in actions:
        code, out = pi(capsys, "play", "--state", str(state), "--act", action)
        assert code == 0, out
        shown.append(out)
    return state, "\n".join(shown)


def hidden_strings() -> list[str]:
    """What only the scenario file knows: the agent (and so the player) must never see it."""
    data = json.loads(TOY_ALLOW.read_text())
    return [
        "TOY_001_ITEM_REFUND",
        TOY_ALLOW.name,
        TOY_ALLOW.stem,
        data["meta"]["notes"],
        "HIDDEN-NOTE",
        '"label"',
        "Procedural Compliance",
        "decision_equals",
        "tool_called_with",
        "Did the agent confirm the refund?",  # a check's text
        "known_facts",
        data["user_simulation"]["known_facts"],
    ]


def test_step_mode_gold_play_passes(workspace, capsys):
    state, shown = step_play(workspace, capsys, GOLD)
    assert "== POLICY ==" in shown and "TOY-3" in shown  # the policy
    assert "lookup_item item_id=" in shown and "reason (changed_mind|defective, required)" in shown  # the tools
    assert "customer: Hi, I'd like to return IT-1" in shown
    assert '"status": "active"' in shown  # a tool result
    assert "customer: Great, thanks!" in shown and "The customer ended the conversation." in shown
    assert "Your recorded decision: ALLOW" in shown
    for secret in hidden_strings():
        assert secret not in shown, secret
    record = json.loads(state.read_text())
    assert record["format"] == "pibench-play" and record["format_version"] == 1
    assert record["status"] == "finished" and record["decision"] == "ALLOW" and record["player"] == "ann"
    assert record["blind"] is True and len(record["actions"]) == 4
    assert record["scenario"]["scenario_id"] == "TOY_001_ITEM_REFUND" and len(record["scenario"]["sha256"]) == 64
    code, out = pi(capsys, "play", "--score", str(state))
    assert code == 0, out
    assert "PASS  E4  decision_equals" in out and "all_passed: true" in out
    assert "decision: ALLOW (matches the label ALLOW)" in out


def test_step_mode_wrong_decision_fails_naming_the_check(workspace, capsys):
    state, _ = step_play(workspace, capsys, ["lookup_item item_id=IT-1", "decide DENY item_id=IT-1 no refunds", "stop"])
    code, out = pi(capsys, "play", "--score", str(state))
    assert code == 1
    assert "FAIL  E4  decision_equals" in out and "FAIL  E2  tool_called_with" in out
    assert "decision: DENY (differs from the label ALLOW)" in out and "all_passed: false" in out


def test_step_mode_views_and_bad_actions(workspace, capsys):
    state, _ = step_play(workspace, capsys, ["lookup_item item_id=IT-1"])
    before = state.read_text()
    code, out = pi(capsys, "play", "--state", str(state), "--show", "history")
    assert code == 0 and "you: call lookup_item" in out and '"opened": false' in out
    code, out = pi(capsys, "play", "--state", str(state), "--act", "frobnicate")
    assert code == 4 and "unknown command or tool 'frobnicate'" in out
    code, out = pi(capsys, "play", "--state", str(state), "--act", "/tools")
    assert code == 4 and "--show" in out
    assert state.read_text() == before  # a bad action changes nothing
    code, out = pi(capsys, "play", toy(workspace), "--state", str(state))
    assert code == 4 and "already exists" in out


def test_interactive_play_through_a_pipe(workspace, tmp_path):
    lines = ["/tools", "this is not a command", "decide PERHAPS", *GOLD]
    records = tmp_path / "records"
    out = subprocess.run(
        [sys.executable, "-m", "pytest_pibench", "play", toy(workspace), "--record", f"{records}/", "--player", "bo"],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    shown = out.stdout
    assert "record_decision decision= rationale= [item_id=]" in shown  # /tools
    assert "! unknown command or tool 'this'" in shown and "! decide needs one of" in shown
    assert "customer: Great, thanks!" in shown and "Your recorded decision: ALLOW" in shown
    for secret in hidden_strings():
        assert secret not in shown, secret
    (record_file,) = records.glob("play-*.json")
    assert "TOY" not in record_file.name  # a neutral name
    record = json.loads(record_file.read_text())
    assert record["status"] == "finished" and record["player"] == "bo" and len(record["actions"]) == 4
    assert record["transcript"][1]["content"].startswith("Hi, I'd like to return IT-1")


def test_a_record_is_rescored_after_the_scenario_changes(workspace, capsys):
    state, _ = step_play(workspace, capsys, GOLD)
    scenario = Path(toy(workspace))
    data = json.loads(scenario.read_text())
    data["evaluation_criteria"]["policy_checks"][1]["arguments"]["reason"] = "defective"  # the check now wants another
    scenario.write_text(json.dumps(data))
    code, out = pi(capsys, "play", "--score", str(state))
    assert code == 1
    assert "the scenario file changed" in out and "FAIL  E2  tool_called_with" in out and "all_passed: false" in out


def test_replay_agent_gives_the_same_verdict_as_score(toy_project, capsys, workspace):
    passing, _ = step_play(workspace, capsys, GOLD)
    records = toy_project.path / "records"
    records.mkdir()
    record = json.loads(passing.read_text())
    record["scenario"]["path"] = str(toy_project.path / "scenarios" / "toyshop" / TOY_ALLOW.name)
    (records / "ann.json").write_text(json.dumps(record))
    assert main(["play", "--score", str(records / "ann.json")]) == 0
    result = toy_project.runpytest("scenarios", "--pibench-agent=replay:records", "--pibench-results=out.json")
    rows = {r["scenario_id"]: r for r in json.loads((toy_project.path / "out.json").read_text())["rows"]}
    assert rows["TOY_001_ITEM_REFUND"]["all_passed"] is True
    # the folder holds no play of the other scenario: that agent stops at once, and fails
    assert rows["TOY_002_EXPENSIVE_REFUND"]["all_passed"] is False and rows["TOY_002_EXPENSIVE_REFUND"]["status"] == "completed"
    result.assert_outcomes(passed=1, failed=1)


def test_a_single_record_of_another_scenario_is_that_episodes_agent_error(toy_project, capsys, workspace):
    state, _ = step_play(workspace, capsys, GOLD)
    result = toy_project.runpytest(
        "scenarios/toyshop/toy_002_expensive_item_refund.json", f"--pibench-agent=replay:{state}", "--pibench-results=out.json"
    )
    (row,) = json.loads((toy_project.path / "out.json").read_text())["rows"]
    assert row["termination_reason"] == "agent_error" and "is a play of scenario TOY_001_ITEM_REFUND" in row["error"]
    result.assert_outcomes(failed=1)


@pytest.mark.parametrize(
    ("content", "message"),
    [(None, "no such play record"), ("{}", "not a play record"), ('{"format": "pibench-play"}', "format_version")],
)
def test_a_bad_replay_path_is_a_usage_error(toy_project, tmp_path, content, message):
    path = tmp_path / "rec.json"
    if content is not None:
        path.write_text(content)
    result = toy_project.runpytest("scenarios", f"--pibench-agent=replay:{path}")
    assert result.ret == 4
    assert message in result.stderr.str()


def test_a_reader_that_goes_away_is_not_an_error():
    """``pi play --show policy | head`` printed a BrokenPipeError traceback (found in blind play)."""
    import subprocess
    import sys

    process = subprocess.Popen([sys.executable, "-m", "pytest_pibench", "list"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)  # fmt: skip
    assert process.stdout is not None and process.stdout.readline()
    process.stdout.close()  # the reader goes away while pi is still writing
    _, err = process.communicate(timeout=120)
    assert b"Traceback" not in err and b"BrokenPipe" not in err
    assert process.returncode == 0
