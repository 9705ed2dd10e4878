"""``--pibench-cost-limit``: the run stops once its LLM cost reaches the budget, and says so."""

from __future__ import annotations

import json

import pytest

PAID = '''
class Agent:
    """Says it cannot help; billed 40 cents an episode."""

    def init_state(self, benchmark_context, tools, message_history=None):
        return 0

    def generate(self, message, state):
        return {"role": "assistant", "content": "###STOP###"}, state + 1

    def is_stop(self, message):
        return False

    def stop(self, message, state):
        return None

    def usage(self):
        return {"calls": 1, "prompt_tokens": 10, "completion_tokens": 5, "cost_usd": 0.4}
'''


def test_the_run_stops_at_the_budget_and_records_why(pytester):
    pytester.makepyfile(paid=PAID)
    pytester.syspathinsert()
    result = pytester.runpytest("--pibench-agent=paid:Agent", "-k", "RET_00", "--pibench-cost-limit=1.0",
                                "--pibench-results=r.json", "-p", "no:cacheprovider")  # fmt: skip
    document = json.loads((pytester.path / "r.json").read_text())
    assert len(document["rows"]) == 3  # 0.4 + 0.4 + 0.4 reaches 1.0: no fourth episode starts
    assert document["complete"] is False and "cost limit reached: $1.2000 of $1 spent" in document["ended_by"]
    assert result.ret != 0


def test_a_bad_budget_is_a_usage_error(pytester):
    result = pytester.runpytest("--pibench-agent=oracle", "--pibench-cost-limit=-3", "-p", "no:cacheprovider")
    assert result.ret == 4
    result.stderr.fnmatch_lines(["*--pibench-cost-limit: a positive amount of US dollars*"])


GROWING = '''
class Agent:
    """Asks the customer to repeat; every turn costs 10 cents."""

    def __init__(self):
        self.turns = 0

    def init_state(self, benchmark_context, tools, message_history=None):
        return 0

    def generate(self, message, state):
        self.turns += 1
        return {"role": "assistant", "content": "Could you repeat that?"}, state

    def usage(self):
        return {"calls": self.turns, "cost_usd": 0.1 * self.turns}
'''


def test_an_episode_budget_ends_each_episode_as_cost_limit_and_the_run_goes_on(pytester):
    pytester.makepyfile(growing=GROWING)
    pytester.syspathinsert()
    result = pytester.runpytest("--pibench-agent=growing:Agent", "-k", "RET_00", "--pibench-cost-limit=episode=0.25",
                                "--pibench-cost-limit=run=100", "--pibench-results=r.json", "-p", "no:cacheprovider")  # fmt: skip
    document = json.loads((pytester.path / "r.json").read_text())
    rows = document["rows"]
    assert len(rows) == 9 and document["complete"] is True  # the run budget was never reached
    assert {r["termination_reason"] for r in rows} == {"cost_limit"}
    assert all(r["status"] == "completed" and not r["all_passed"] for r in rows)  # counted against the agent
    assert [r["usage"]["agent"]["cost_usd"] for r in rows] == [pytest.approx(0.3)] * 9  # 0.1, 0.2, then 0.3 >= 0.25
    assert document["settings"]["episode_cost_limit"] == 0.25
    result.assert_outcomes(failed=9)


def test_bad_budgets_are_usage_errors(pytester):
    for given, message in [
        (["--pibench-cost-limit=daily=3"], "*--pibench-cost-limit: USD, run=USD or episode=USD, got 'daily=3'*"),
        (["--pibench-cost-limit=episode=0"], "*--pibench-cost-limit: a positive amount of US dollars, got 'episode=0'*"),
        (["--pibench-cost-limit=2", "--pibench-cost-limit=run=3"], "*the run budget is given twice*"),
    ]:
        result = pytester.runpytest("--pibench-agent=oracle", *given, "-p", "no:cacheprovider")
        assert result.ret == 4
        result.stderr.fnmatch_lines([message])
