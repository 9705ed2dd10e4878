"""Sequential trials in a pytest run (``--pibench-trial-mode sequential``): the gates they allow.

The settling rule and the results block live in
:mod:`pytest_pibench.results.sequential`; the run's executor keeps the trial
tracker (:attr:`~pytest_pibench.run.executor.Executor.sequential`), which items
consult before running a trial.
"""

from __future__ import annotations

import pytest

from pytest_pibench.plugin.settings import Settings

__all__ = ["configure_sequential"]


def configure_sequential(config: pytest.Config, settings: Settings) -> None:
    """Refuse the gates sequential trials would skew."""
    _gates_only_on_verdicts(settings)


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
