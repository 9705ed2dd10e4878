"""Judge reliability: repeated votes, the majority, Krippendorff's alpha and the share of split votes."""

from __future__ import annotations

import itertools

import pytest

from conftest import TOY_ALLOW
from pytest_pibench import load_scenario, run_one
from pytest_pibench.results.metrics import compute_metrics
from pytest_pibench.results.uncertainty import judge_reliability, krippendorff_alpha_nominal


def test_krippendorff_alpha_by_hand():
    # units YY, NN, YN: o_YY = 2, o_NN = 2, o_YN = o_NY = 1; n_Y = n_N = 3, n = 6
    # D_o = 2/6, D_e = (3*3 + 3*3) / (6*5) = 0.6, alpha = 1 - (1/3)/0.6 = 4/9
    assert krippendorff_alpha_nominal([["Y", "Y"], ["N", "N"], ["Y", "N"]]) == pytest.approx(4 / 9)
    assert krippendorff_alpha_nominal([["Y", "Y"], ["N", "N"]]) == 1.0  # perfect agreement
    assert krippendorff_alpha_nominal([["Y", "Y"], ["Y", "Y"]]) is None  # no variation: alpha undefined
    assert krippendorff_alpha_nominal([["Y", "N"], ["N", "Y"]]) == pytest.approx(-0.5)  # worse than chance


class Coin:
    """A judge whose answers cycle: YES, YES, NO, ... (deterministic noise)."""

    def __init__(self, pattern: str) -> None:
        self.answers = itertools.cycle(pattern.split(","))

    def judge(self, question: str, text: str) -> str:
        return next(self.answers)


def test_votes_decide_by_majority_and_a_split_fails_the_check():
    scenario = load_scenario(TOY_ALLOW)
    majority = run_one(scenario, "oracle", judge=Coin("YES,YES,NO"), judge_votes=3)
    (judged,) = [c for c in majority["outcome_checks"] if c["type"] == "NL_JUDGE"]
    assert judged["passed"] is True and majority["judge_votes"][0]["votes"] == ["YES", "YES", "NO"]
    split = run_one(scenario, "oracle", judge=Coin("YES,NO"), judge_votes=2)
    (judged,) = [c for c in split["outcome_checks"] if c["type"] == "NL_JUDGE"]
    assert judged["passed"] is False and "split 1 YES / 1 NO" in judged["detail"]
    single = run_one(scenario, "oracle", judge=Coin("YES"))
    assert "judge_votes" not in single  # one vote: nothing to measure


def test_reliability_in_the_metrics():
    rows = [
        {"scenario_id": "A", "status": "completed", "judge_votes": [{"question": "q", "votes": ["YES", "YES"]}]},
        {"scenario_id": "B", "status": "completed", "judge_votes": [{"question": "q", "votes": ["NO", "NO"]}]},
        {"scenario_id": "C", "status": "completed", "judge_votes": [{"question": "q", "votes": ["YES", "NO"]}]},
    ]
    reliability = judge_reliability(rows)
    assert reliability == {"questions": 3, "votes_per_question": 2, "split_vote_share": pytest.approx(1 / 3),
                           "krippendorff_alpha": pytest.approx(4 / 9)}  # fmt: skip
    assert compute_metrics(rows)["extended"]["judge_reliability"]["questions"] == 3
    assert judge_reliability([{"scenario_id": "A"}]) is None


def test_the_option_and_the_summary(pytester):
    pytester.makepyfile(coinjudge='''
import itertools

class Judge:
    answers = itertools.cycle(["YES", "YES", "NO"])

    def judge(self, question, text):
        return next(self.answers)
''')
    pytester.syspathinsert()
    result = pytester.runpytest("--pibench-agent=oracle", "-k", "RET_00", "--pibench-judge=coinjudge:Judge",
                                "--pibench-judge-votes=3", "--pibench-results=r.json", "-p", "no:cacheprovider")
    result.stdout.fnmatch_lines(["*judge alpha / split votes*"])
    import json

    rows = json.loads((pytester.path / "r.json").read_text())["rows"]
    assert all(len(v["votes"]) == 3 for r in rows for v in r.get("judge_votes", []))
    assert any(r.get("judge_votes") for r in rows)
