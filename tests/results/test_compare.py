"""Paired comparison of agents: exact tests against known values, and the verdicts on agents with a known difference."""

from __future__ import annotations

import random
import subprocess
import sys

import pytest

from pytest_pibench import bundled_scenarios_dir, discover_scenarios, run_one
from pytest_pibench.results.compare import compare_rows, holm, mcnemar_exact, sign_flip_p
from pytest_pibench.results.document import atomic_write_json, results_document
from pytest_pibench.results.metrics import partial_credit


def test_mcnemar_exact_by_hand():
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(0, 5) == pytest.approx(2 / 32)
    assert mcnemar_exact(9, 1) == pytest.approx(2 * (1 + 10) / 1024)
    assert mcnemar_exact(3, 3) == 1.0


def test_sign_flip_by_hand_and_its_floor():
    assert sign_flip_p([1, 1, 1]) == pytest.approx(2 / 8)  # only all-plus and all-minus reach |3|
    assert sign_flip_p([0.5, -0.5]) == 1.0
    assert sign_flip_p([0, 0]) == 1.0
    many = [0.1 * (i % 3 + 1) for i in range(30)]  # past the exact limit: Monte Carlo with a fixed seed
    assert sign_flip_p(many) == sign_flip_p(many) < 0.001


def test_holm_by_hand():
    assert holm({"a": 0.01, "b": 0.04, "c": 0.03}) == {"a": pytest.approx(0.03), "c": pytest.approx(0.06),
                                                       "b": pytest.approx(0.06)}  # fmt: skip


@pytest.fixture(scope="module")
def retail_rows():
    files = [f for f in discover_scenarios(bundled_scenarios_dir()) if "retail" in f.parts]
    return {agent: [run_one(f, agent, trial=t) for f in files for t in range(2)]
            for agent in ("oracle", "baseline:deny")}  # fmt: skip


def test_a_known_difference_is_reported_and_an_agent_against_itself_is_not(retail_rows):
    worse = compare_rows(retail_rows["oracle"], retail_rows["baseline:deny"], partial_credit)
    assert worse["paired_scenarios"] == len(retail_rows["oracle"]) // 2  # every retail scenario, two trials each
    assert worse["metrics"]["compliance"]["verdict"] == "worse" and worse["metrics"]["overall"]["verdict"] == "worse"
    assert worse["metrics"]["compliance"]["difference"] == pytest.approx(-1.0)
    same = compare_rows(retail_rows["oracle"], retail_rows["oracle"], partial_credit)
    assert {m["verdict"] for m in same["metrics"].values()} == {"not distinguishable"}


def _noisy(seed: int, n: int = 60) -> list[dict]:
    rng = random.Random(seed)
    rows = []
    for s in range(n):
        for trial in range(3):
            passed = rng.random() < 0.6
            rows.append({"scenario_id": f"S{s}", "trial": trial, "status": "completed", "all_passed": passed,
                         "leaderboard_primary": "Policy Activation", "outcome_checks": [
                             {"passed": passed}, {"passed": rng.random() < 0.7}]})  # fmt: skip
    return rows


def test_two_copies_of_the_same_noisy_agent_are_not_distinguishable():
    comparison = compare_rows(_noisy(1), _noisy(2), partial_credit)
    assert comparison["metrics"]["compliance"]["verdict"] == "not distinguishable"
    assert comparison["metrics"]["compliance"]["test"] == "sign-flip permutation"  # trials averaged: not 0/1
    low, high = comparison["metrics"]["compliance"]["ci95"]
    assert low < 0 < high


def test_pi_compare_on_two_files_and_on_one_file_with_two_agents(retail_rows, tmp_path):
    atomic_write_json(tmp_path / "a.json", results_document(retail_rows["oracle"], {"agents": ["oracle"]}, 1.0))
    atomic_write_json(tmp_path / "b.json", results_document(retail_rows["baseline:deny"], {"agents": ["x"]}, 1.0))
    both = results_document([*retail_rows["oracle"], *retail_rows["baseline:deny"]], {"agents": ["o", "d"]}, 1.0)
    atomic_write_json(tmp_path / "both.json", both)
    two = subprocess.run([sys.executable, "-m", "pytest_pibench", "compare", "a.json", "b.json", "--json", "c.json"],
                         cwd=tmp_path, capture_output=True, text=True, check=False)  # fmt: skip
    assert two.returncode == 0, two.stderr
    paired = len(retail_rows["oracle"]) // 2  # every retail scenario, two trials each
    assert f"baseline:deny (b.json) vs oracle (a.json): {paired} paired scenarios" in two.stdout
    assert "compliance" in two.stdout and "worse" in two.stdout and (tmp_path / "c.json").exists()
    one = subprocess.run([sys.executable, "-m", "pytest_pibench", "compare", "both.json"],
                         cwd=tmp_path, capture_output=True, text=True, check=False)  # fmt: skip
    assert one.returncode == 0 and f"oracle vs baseline:deny: {paired} paired" in one.stdout  # the first agent is A
    lone = subprocess.run([sys.executable, "-m", "pytest_pibench", "compare", "a.json"],
                          cwd=tmp_path, capture_output=True, text=True, check=False)  # fmt: skip
    assert lone.returncode == 4 and "holds one agent" in lone.stderr


@pytest.mark.slow
def test_the_summary_pairs_each_agent_with_the_first(pytester):
    result = pytester.runpytest("--pibench-agent=oracle", "--pibench-agent=baseline:deny", "-k", "FIN_0",
                                "--pibench-results=", "-p", "no:cacheprovider")  # fmt: skip
    result.stdout.fnmatch_lines([
        "Paired comparison with oracle (B - A, 95% interval, verdict; pi compare for every metric):",
        "  baseline:deny: compliance -1.000 * worse; overall * worse; columns better/worse: 0/*",
    ])
    result.stdout.fnmatch_lines(["  +- 95% (clustered by scenario)*"])


def _trials(outcomes: list[list[bool]]) -> list[dict]:
    return [{"scenario_id": f"S{s}", "trial": t, "status": "completed", "all_passed": p,
             "leaderboard_primary": "Policy Activation", "outcome_checks": [{"passed": p}]}
            for s, trials in enumerate(outcomes) for t, p in enumerate(trials)]  # fmt: skip


def test_pass_hat_k_is_compared_per_scenario_by_hand():
    a = _trials([[True, True, True], [True, True, False], [True, False, False]])
    b = _trials([[True, True, False], [True, False, False], [False, False, False]])
    metrics = compare_rows(a, b, partial_credit)["metrics"]
    # pass^2 per scenario: C(c,2)/C(3,2): A 1, 1/3, 0; B 1/3, 0, 0 -> differences -2/3, -1/3, 0
    assert metrics["pass^2"]["difference"] == pytest.approx(-1 / 3)
    assert metrics["pass^2"]["test"] == "sign-flip permutation" and metrics["pass^2"]["p"] == pytest.approx(2 / 4)
    # pass^3: A 1, 0, 0; B 0, 0, 0 -> one discordant scenario: McNemar on (0 better, 1 worse)
    assert metrics["pass^3"]["difference"] == pytest.approx(-1 / 3) and metrics["pass^3"]["p"] == 1.0
    assert "pass^4" not in metrics and "pass^1" not in metrics  # pass^1 is compliance
    one_trial = compare_rows(_trials([[True], [False]]), _trials([[True], [True]]), partial_credit)["metrics"]
    assert not any(name.startswith("pass^") for name in one_trial)
