"""Sequential trials: a scenario's trials stop once its K-of-N verdict is settled, and the verdict is exact.

The agent under test is a seeded coin: each trial (its seed) decides whether it
plays the scenario's reference trajectory (passes) or refuses everything
(fails), so trials of one scenario differ and the same seeds give the same
outcomes in every run. A sequential run must then reach, for every scenario,
the verdict a fixed run of all N trials gives, while running fewer trials.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from coin_agent import COIN_CONFTEST

from pytest_pibench.results.sequential import SequentialTrials, sequential_summary, settled_verdict

SELECT = ["-k", "RET_00 or RET_01", "-p", "no:cacheprovider", "-p", "no:randomly"]


def _run(pytester, *args: str) -> dict:
    pytester.makeconftest(COIN_CONFTEST)
    result = pytester.runpytest_subprocess("--pibench-agent=coin:0.5", *SELECT, *args, "--pibench-results=r.json")
    assert result.ret in (0, 1, 8), result.stdout.str()[-3000:]
    document = json.loads((pytester.path / "r.json").read_text())
    document["_outcomes"] = result.parseoutcomes()
    return document


@pytest.mark.parametrize("parallel", [[], ["-n", "2", "--pibench-concurrency=3"]], ids=["serial", "xdist+concurrency"])
@pytest.mark.slow
def test_sequential_verdicts_equal_the_full_runs_with_fewer_trials(pytester, parallel):
    full = _run(pytester, "--pibench-trials=4")
    sequential = _run(pytester, "--pibench-min-pass=3/4", "--pibench-trial-mode=sequential", *parallel)
    outcomes: dict[str, list[bool]] = {}
    for row in full["rows"]:
        outcomes.setdefault(row["scenario_id"], []).append(row["all_passed"])
    expected = {sid: settled_verdict(sum(v), len(v) - sum(v), 3, 4) for sid, v in outcomes.items()}
    assert set(expected.values()) == {"met", "not met"}  # the coin makes both verdicts happen
    block = sequential["sequential"]
    got = {sid: entry["verdict"] for sid, entry in block["scenarios"]["coin:0.5"].items()}
    assert got == expected
    # Every trial that ran is the same episode as in the full run (same seed, same outcome).
    full_by_key = {(r["scenario_id"], r["trial"]): r["all_passed"] for r in full["rows"]}
    assert all(full_by_key[(r["scenario_id"], r["trial"])] == r["all_passed"] for r in sequential["rows"])
    assert all(r["trial_mode"] == "sequential" for r in sequential["rows"])
    # Fewer trials ran; the rest are skipped items that say why, counted, and the run is complete.
    assert block["trials_run"] == len(sequential["rows"]) < block["trials_planned"] == len(full["rows"])
    # Nothing ran ahead only to be thrown away: the episodes started are the trials run (both runs log here).
    builds = (pytester.path / "coin-builds.log").read_text().splitlines()
    assert len(builds) == len(full["rows"]) + block["trials_run"]
    assert block["trials_saved"] == sequential["_outcomes"]["skipped"] == block["trials_planned"] - block["trials_run"]
    assert sequential["complete"] is True and "curtailed K-of-N" in block["rule"]
    # Row rates of a sequential run are not comparable: it says so, and pass^k is not computed from it.
    assert any("sequential trials" in p for p in sequential["validity"]["problems"])
    assert sequential["agents"]["coin:0.5"]["metrics"]["extended"]["pass_hat_k"] == {}


def test_the_min_pass_gate_reads_settled_verdicts_and_the_summary_states_the_rule(pytester):
    pytester.makeconftest(COIN_CONFTEST)
    result = pytester.runpytest(
        "--pibench-agent=coin:1.0", "--pibench-agent=baseline:deny", "-k", "RET_00", "-p", "no:cacheprovider",
        "--pibench-min-pass=2/3", "--pibench-trial-mode=sequential", "--pibench-results=r.json", "-rs",
    )
    result.stdout.fnmatch_lines([
        "*Met 2/3 / not / unsettled*9 / 0 / 0*0 / 9 / 0*",
        "*Sequential trials: 36 of 54 trials run, 18 not needed; rule: curtailed K-of-N*",
        "*FAIL baseline:deny: RET_001_* passed 0 of 2 trials run (at most 1 of 3), fewer than 2*",
    ])  # fmt: skip
    assert not any(line.startswith("  FAIL coin") for line in result.stdout.lines)
    result.stdout.fnmatch_lines(["*Paired comparison: not computed for sequential trials*"])
    assert result.ret == 8
    result.stdout.fnmatch_lines(["*SKIPPED*settled: met 2/3 after 2 trials (2 passed, 0 failed); trial 2 not needed*"])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--pibench-trial-mode=sequential"], "*needs --pibench-min-pass K/N*"),
        (["--pibench-trial-mode=sequential", "--pibench-min-pass=2/3", "--pibench-trials=5"],
         "*--pibench-trials 5 differs from N of --pibench-min-pass 2/3*"),
        (["--pibench-trial-mode=sequential", "--pibench-min-pass=2/3", "--pibench-fail-under=pass^2=0.5"],
         "*--pibench-fail-under pass^2>=0.5 reads rates over rows, which sequential trials skew*"),
        (["--pibench-trial-mode=sequential", "--pibench-min-pass=2/3", "--pibench-fail-under=compliance=0.5"],
         "*--pibench-fail-under compliance>=0.5 reads rates over rows*gate on --pibench-min-pass K/N*"),
        (["--pibench-trial-mode=sequential", "--pibench-min-pass=2/3", "--pibench-baseline=base.json"],
         "*--pibench-baseline reads rates over rows*"),
        (["--pibench-trial-mode=adaptive"], "*--pibench-trial-mode: choose fixed or sequential*"),
    ],
)
def test_sequential_needs_a_settling_rule(pytester, args, message):
    result = pytester.runpytest("--pibench-agent=oracle", *args, "-p", "no:cacheprovider")
    assert result.ret == 4
    result.stderr.fnmatch_lines([message])


def test_settling_rule_and_tracker():
    assert settled_verdict(3, 0, 3, 4) == "met" and settled_verdict(0, 2, 3, 4) == "not met"
    assert settled_verdict(2, 1, 3, 4) is None and settled_verdict(4, 0, 4, 4) == "met"
    assert settled_verdict(3, 1, 4, 4) == "not met"  # N/N is pass^N: the first failure settles it
    tracker = SequentialTrials(2, 3)
    tracker.record("a", "S", 0, {"status": "completed", "all_passed": True})
    assert tracker.settled_reason("a", "S", 1) is None and tracker.earlier_recorded("a", "S", 1)
    assert not tracker.earlier_recorded("a", "S", 2)
    tracker.record("a", "S", 1, {"status": "error", "all_passed": False})  # outside the agent: neither
    assert tracker.settled_reason("a", "S", 2) is None
    tracker.record("a", "S", 2, {"status": "completed", "all_passed": True})
    assert tracker.verdict("a", "S") == "met"
    summary = sequential_summary(
        [{"agent": "a", "scenario_id": "S", "status": "error"}], [{"agent": "a", "scenario_id": "S"}] * 2, 2, 3
    )
    assert summary["scenarios"]["a"]["S"] == {"run": 1, "passed": 0, "failed": 0, "errors": 1, "not_run": 2,
                                              "verdict": "unsettled"}  # fmt: skip
    assert summary["verdicts"] == {"met": 0, "not met": 0, "unsettled": 1}


@pytest.mark.slow
def test_shards_of_a_sequential_run_merge_into_the_same_verdicts(pytester):
    whole = _run(pytester, "--pibench-min-pass=2/3", "--pibench-trial-mode=sequential")
    (pytester.path / "r.json").rename(pytester.path / "whole.json")
    for index in (1, 2):
        _run(pytester, "--pibench-min-pass=2/3", "--pibench-trial-mode=sequential", f"--pibench-shard={index}/2")
        (pytester.path / "r.json").rename(pytester.path / f"s{index}.json")
    merged = subprocess.run([sys.executable, "-m", "pytest_pibench", "report", "s1.json", "s2.json",
                             "--results", "merged.json", "-o", "lb.json"],
                            cwd=pytester.path, capture_output=True, text=True, check=False)  # fmt: skip
    assert merged.returncode == 9, merged.stderr  # the leaderboard artifact of a sequential run is not valid
    assert "NOT VALID FOR THE LEADERBOARD: sequential trials" in merged.stderr
    block = json.loads((pytester.path / "merged.json").read_text())["sequential"]
    verdicts = {sid: e["verdict"] for sid, e in block["scenarios"]["coin:0.5"].items()}
    assert verdicts == {sid: e["verdict"] for sid, e in whole["sequential"]["scenarios"]["coin:0.5"].items()}
    # A shard holds only some of a scenario's trials, so it saves fewer of them; the verdicts stay exact.
    assert block["trials_run"] + block["trials_saved"] == block["trials_planned"] == whole["sequential"]["trials_planned"]


@pytest.mark.slow
def test_a_sequential_run_is_neither_a_baseline_nor_compared_as_rates_and_a_fixed_resume_drops_its_mode(pytester):
    sequential = _run(pytester, "--pibench-min-pass=2/3", "--pibench-trial-mode=sequential")
    (pytester.path / "r.json").rename(pytester.path / "seq.json")
    refused = pytester.runpytest("--pibench-agent=coin:0.5", *SELECT, "--pibench-baseline=seq.json")
    assert refused.ret == 4
    refused.stderr.fnmatch_lines(["*seq.json is a run of sequential trials*cannot be a baseline*"])
    compared = subprocess.run([sys.executable, "-m", "pytest_pibench", "compare", "seq.json", "seq.json"],
                              cwd=pytester.path, capture_output=True, text=True, check=False)  # fmt: skip
    assert compared.returncode != 0 and "rows of sequential trials" in compared.stderr
    resumed = _run(pytester, "--pibench-trials=3", "--pibench-resume=seq.json")
    assert all("trial_mode" not in r for r in resumed["rows"])
    assert sum(1 for r in resumed["rows"] if r["resume"]["reused"]) == len(sequential["rows"])
    assert resumed["agents"]["coin:0.5"]["metrics"]["extended"]["pass_hat_k"]  # every trial ran: pass^k again
    assert resumed["validity"]["valid"] is True


def test_the_min_pass_gate_fails_a_scenario_whose_every_trial_was_an_error():
    from pytest_pibench.plugin.gates import check_gates
    from pytest_pibench.plugin.settings import Settings
    from pytest_pibench.run.config import RunConfig

    rows = [{"agent": "a", "scenario_id": "S", "trial": t, "status": "error", "all_passed": False} for t in range(3)]
    rows += [{"agent": "a", "scenario_id": "T", "trial": t, "status": "completed", "all_passed": True} for t in range(2)]
    verdict = check_gates(Settings(run=RunConfig(agents=("a",), min_pass=(2, 3))), {"a": {}}, rows, None)
    assert not verdict.passed
    assert "FAIL a: S ran 0 of the 3 trials --pibench-min-pass 2/3 needs" in verdict.lines
