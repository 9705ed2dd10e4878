"""Done-when of paired comparison, end to end: real runs of real agents, compared with ``pi compare``.

A known difference (a coin that plays the reference trajectory 9 times in 10
against ``baseline:deny``, which fails every scenario) must be reported as
different; two runs of the same noisy agent (a fair coin under two base seeds)
must not be told apart.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from coin_agent import COIN_CONFTEST


def _compare(pytester, *files: str) -> dict:
    out = pytester.path / "comparison.json"
    done = subprocess.run([sys.executable, "-m", "pytest_pibench", "compare", *files, "--json", str(out)],
                          cwd=pytester.path, capture_output=True, text=True, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(out.read_text())


def _run(pytester, *args: str) -> None:
    result = pytester.runpytest(*args, "-m", "retail", "--pibench-trials=2", "-p", "no:cacheprovider")
    assert result.ret == 1, result.stdout.str()[-2000:]  # some scenarios fail: that is the point


@pytest.mark.slow
def test_a_known_difference_is_found_and_two_runs_of_one_noisy_agent_are_not_told_apart(pytester):
    pytester.makeconftest(COIN_CONFTEST)
    _run(pytester, "--pibench-agent=coin:0.9", "--pibench-agent=baseline:deny", "--pibench-results=known.json")
    known = _compare(pytester, "known.json")
    assert known["metrics"]["compliance"]["verdict"] == "worse"  # B (deny) against A (the 0.9 coin)
    assert known["metrics"]["overall"]["verdict"] == "worse"
    assert known["metrics"]["compliance"]["ci95"][1] < -0.7

    _run(pytester, "--pibench-agent=coin:0.5", "--pibench-seed=1", "--pibench-results=one.json")
    _run(pytester, "--pibench-agent=coin:0.5", "--pibench-seed=2", "--pibench-results=two.json")
    same = _compare(pytester, "one.json", "two.json")
    rates = [json.loads((pytester.path / f).read_text())["agents"]["coin:0.5"]["metrics"]["compliance_rate"]
             for f in ("one.json", "two.json")]  # fmt: skip
    assert rates[0] != rates[1] and all(0.3 < r < 0.7 for r in rates)  # noisy: the runs differ
    compliance = same["metrics"]["compliance"]
    assert compliance["verdict"] == "not distinguishable" and compliance["ci95"][0] < 0 < compliance["ci95"][1]
    assert {m["verdict"] for m in same["metrics"].values()} == {"not distinguishable"}
