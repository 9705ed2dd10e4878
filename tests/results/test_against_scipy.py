"""Our statistics agree with scipy's on a grid of inputs (scipy is a dev dependency, never a runtime one).

The formulas are plain and exact (binomial tails, sign-flip enumeration, the
normal quantile), so the package needs no statistics library; these tests
check them against a well-kept one beside the hand-worked values elsewhere.
"""

from __future__ import annotations

import itertools
import random
from statistics import NormalDist

import pytest

from pytest_pibench.results.compare import mcnemar_exact, sign_flip_p
from pytest_pibench.results.metrics import wilson_interval
from pytest_pibench.results.uncertainty import Z95

stats = pytest.importorskip("scipy.stats")


@pytest.mark.parametrize(("better", "worse"), list(itertools.product(range(0, 13, 3), range(0, 13, 2))))
def test_mcnemar_exact_is_scipys_two_sided_binomial_test(better, worse):
    expected = 1.0 if better + worse == 0 else stats.binomtest(better, better + worse, 0.5).pvalue
    assert mcnemar_exact(better, worse) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_the_exact_sign_flip_test_is_scipys_permutation_test(seed):
    rng = random.Random(seed)
    differences = [rng.choice([-1, -0.5, 0.5, 1, 1]) for _ in range(rng.randint(4, 12))]
    result = stats.permutation_test(
        (differences,), lambda x: sum(x), permutation_type="samples", alternative="two-sided", n_resamples=10**6
    )
    # scipy doubles the smaller tail; for the symmetric sign-flip distribution that is P(|S| >= |s|).
    assert sign_flip_p(differences) == pytest.approx(min(1.0, result.pvalue), abs=1e-9)


def test_the_normal_quantiles_and_wilson_interval_match_scipy():
    assert pytest.approx(stats.norm.ppf(0.975), abs=1e-12) == Z95
    for power in (0.5, 0.8, 0.9, 0.95):
        assert NormalDist().inv_cdf(power) == pytest.approx(stats.norm.ppf(power), abs=1e-9)
    for successes, total in [(0, 10), (3, 10), (10, 10), (37, 120)]:
        low, high = wilson_interval(successes, total)
        ci = stats.binomtest(successes, total).proportion_ci(confidence_level=0.95, method="wilson")
        assert (low, high) == (pytest.approx(ci.low, abs=1e-9), pytest.approx(ci.high, abs=1e-9))


@pytest.mark.parametrize("seed", range(5))
def test_krippendorffs_alpha_matches_the_krippendorff_package(seed):
    krippendorff = pytest.importorskip("krippendorff")
    import numpy as np

    from pytest_pibench.results.uncertainty import krippendorff_alpha_nominal

    rng = random.Random(seed)
    votes = rng.choice([3, 5])
    units = [[rng.choice("YYN" if q % 3 else "YN?") for _ in range(votes)] for q in range(rng.randint(6, 20))]
    codes = {"Y": 1.0, "N": 0.0, "?": 2.0}
    data = np.array([[codes[unit[rater]] for unit in units] for rater in range(votes)])
    expected = krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")
    assert krippendorff_alpha_nominal(units) == pytest.approx(expected, abs=1e-9)
