"""``--pibench-cost-limit``: the run stops once its LLM cost reaches the budget, and says so."""

from __future__ import annotations

import json

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
