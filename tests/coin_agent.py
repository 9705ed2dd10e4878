"""A seeded noisy agent for plugin tests, as the text of a ``conftest.py`` that registers the ``coin:P`` scheme.

Each trial's seed decides whether the agent plays the scenario's reference
trajectory (it passes) or refuses everything (it fails), with probability P
(``coin`` alone: P from the environment variable ``COIN_P``, default 0.5, so two
runs of the same agent name can differ):
trials of one scenario differ, and the same seeds give the same outcomes in
every run. Each agent built appends its scenario id to ``coin-builds.log`` in
the working folder, so a test can count the episodes that were started.
"""

from __future__ import annotations

__all__ = ["COIN_CONFTEST"]

COIN_CONFTEST = '''
import os
import random

from pytest_pibench.participants.builtins import BaselineAgent, OracleAgent
from pytest_pibench.participants.schemes import Scheme


class CoinAgent:
    """Plays the reference trajectory with probability P (decided by the trial's seed), else refuses."""

    def __init__(self, scenario, p):
        self.scenario, self.p, self.inner = scenario, p, None
        with open("coin-builds.log", "a") as log:  # one line per episode built (tests count them)
            print(scenario.scenario_id, file=log)

    def set_seed(self, seed):
        good = random.Random(seed).random() < self.p
        self.inner = OracleAgent(self.scenario) if good else BaselineAgent("DENY")

    def init_state(self, *args):
        return self.inner.init_state(*args)

    def generate(self, message, state):
        return self.inner.generate(message, state)

    def is_stop(self, message):
        return self.inner.is_stop(message)


def _coin(argument, params):
    p = float(argument or os.environ.get("COIN_P", "0.5"))
    return lambda scenario: CoinAgent(scenario, p)


def pytest_pibench_participant_schemes():
    return [Scheme("coin", "coin[:P]", agent=_coin)]
'''
