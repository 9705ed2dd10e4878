"""Sequential trials in a pytest run (``--pibench-trial-mode sequential``): checks and the trial tracker.

The settling rule and the results block live in
:mod:`pytest_pibench.results.sequential`; items consult the tracker this
module stashes (:data:`~pytest_pibench.plugin.keys.SEQUENTIAL_KEY`) before
running a trial, and record each outcome as it finishes.
"""

from __future__ import annotations

import pytest

from pytest_pibench.plugin.keys import SEQUENTIAL_KEY
from pytest_pibench.plugin.options import Settings
from pytest_pibench.results.sequential import SequentialTrials

__all__ = ["configure_sequential"]


def configure_sequential(config: pytest.Config, settings: Settings) -> None:
    """Refuse the gates sequential trials would skew, then stash this process's trial tracker."""
    _gates_only_on_verdicts(settings)
    assert settings.min_pass is not None  # read_settings requires it in sequential mode
    config.stash[SEQUENTIAL_KEY] = SequentialTrials(*settings.min_pass)


def _gates_only_on_verdicts(settings: Settings) -> None:
    """Sequential trials gate on their K-of-N verdicts only: every other gate reads rates over rows.

    How many rows a scenario leaves depends on the agent's own outcomes (a
    failing scenario may settle after fewer trials than a passing one), so a
    rate over rows, pass^k or a row-by-row baseline comparison could flatter it.
    """
    given = [f"--pibench-fail-under {gate}" for gate in settings.fail_under]
    if settings.baseline:
        given.append("--pibench-baseline")
    if given:
        raise pytest.UsageError(
            f"--pibench-trial-mode sequential: {', '.join(given)} reads rates over rows, which sequential trials "
            "skew (a scenario leaves as many rows as it took to settle); gate on --pibench-min-pass K/N "
            "(N/N is pass^N per scenario), or run fixed trials"
        )
