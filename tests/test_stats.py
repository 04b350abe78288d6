"""Tests of simkit.analysis.stats against scipy / statsmodels and by seeded simulation."""

from __future__ import annotations

import math
import tracemalloc

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from simkit.analysis.stats import (
    BernoulliSPRT,
    convergence_curve,
    duplicate_variance_reduction,
    equal_rates_test,
    mean_interval,
    paired_bootstrap_interval,
    paired_mean_test,
    proportion_convergence,
    two_proportion_test,
    wald_boundaries,
)
from simkit.analysis.stats import wilson_interval
from simkit.errors import DegenerateDataWarning

SPRT_SEQUENCES = 4_000  # simulated sequences per hypothesis
SPRT_ALPHA = 0.05
SPRT_BETA = 0.05


# ----------------------------------------------------------------------------- mean_interval


def test_mean_interval_matches_scipy_t_interval() -> None:
    values = np.random.default_rng(11).normal(3.0, 2.0, size=57)
    for confidence in (0.8, 0.95, 0.99):
        interval = mean_interval(values, confidence)
        mean, low, high = interval.estimate, interval.lo, interval.hi
        assert (interval.confidence, interval.method, interval.n) == (confidence, "t", len(values))
        expected_low, expected_high = stats.t.interval(
            confidence, len(values) - 1, loc=values.mean(), scale=stats.sem(values))
        assert mean == pytest.approx(values.mean(), rel=1e-12)
        assert low == pytest.approx(expected_low, rel=1e-10)
        assert high == pytest.approx(expected_high, rel=1e-10)


@pytest.mark.parametrize(("arguments", "name"), [
    (([1.0],), "values"),
    (([1.0, np.nan],), "values"),
    (([[1.0, 2.0]],), "values"),
    (([1.0, 2.0], 1.0), "confidence"),
    (([1.0, 2.0], 0.0), "confidence"),
])
def test_mean_interval_rejects_bad_input(arguments: tuple, name: str) -> None:
    with pytest.raises(ValueError, match=name):
        mean_interval(*arguments)


# ----------------------------------------------------------------------------- bootstrap


@pytest.mark.parametrize("method", ["bca", "percentile"])
@pytest.mark.parametrize("kind", ["continuous", "discrete"])
def test_paired_bootstrap_matches_scipy_bootstrap(method: str, kind: str) -> None:
    """Same method as scipy.stats.bootstrap; the two differ only by Monte Carlo error.

    With 10,000 resamples a tail quantile has a Monte Carlo standard deviation of about
    0.03-0.04 bootstrap standard errors, so two independent runs agree within 0.2 SE.
    Continuous data exercises the chunked index resampling, discrete data the multinomial
    counts over distinct values.
    """
    generator = np.random.default_rng(2024)
    if kind == "continuous":
        differences = generator.exponential(size=300) - 0.8  # skewed: BCa differs from percentile
    else:
        differences = (generator.integers(-5, 8, size=2_000) ** 2 / 10.0).astype(float)
    interval = paired_bootstrap_interval(differences, 0.95, resamples=10_000, seed=7, method=method)
    mean, low, high = interval.estimate, interval.lo, interval.hi
    reference = stats.bootstrap((differences,), np.mean, n_resamples=10_000, method=method,
                                confidence_level=0.95, rng=np.random.default_rng(8))
    tolerance = 0.2 * reference.standard_error
    assert mean == pytest.approx(differences.mean(), rel=1e-12)
    assert abs(low - reference.confidence_interval.low) < tolerance
    assert abs(high - reference.confidence_interval.high) < tolerance


def test_paired_bootstrap_bca_differs_from_percentile_on_skewed_data() -> None:
    differences = np.random.default_rng(5).exponential(size=200)
    bca = paired_bootstrap_interval(differences, resamples=20_000, method="bca")
    percentile = paired_bootstrap_interval(differences, resamples=20_000, method="percentile")
    bca_low, bca_high, percentile_low, percentile_high = bca.lo, bca.hi, percentile.lo, percentile.hi
    # right skew: BCa moves both ends up relative to the percentile interval
    assert bca_low > percentile_low and bca_high > percentile_high


def test_paired_bootstrap_is_deterministic_for_a_seed() -> None:
    differences = np.random.default_rng(3).normal(size=500)
    first = paired_bootstrap_interval(differences, resamples=2_000, seed=42)
    assert paired_bootstrap_interval(differences, resamples=2_000, seed=42) == first
    assert paired_bootstrap_interval(differences, resamples=2_000, seed=43) != first


def test_paired_bootstrap_agrees_with_t_interval_on_large_normal_samples() -> None:
    generator = np.random.default_rng(9)
    continuous = generator.normal(0.3, 2.0, size=20_000)
    integer_valued = generator.integers(-10, 11, size=1_000_000).astype(float)  # ~10^6 deals
    for differences, resamples in ((continuous, 2_000), (integer_valued, 10_000)):
        t_interval = mean_interval(differences)
        t_mean, t_low, t_high = t_interval.estimate, t_interval.lo, t_interval.hi
        standard_error = (t_high - t_low) / (2 * stats.norm.ppf(0.975))
        # Monte Carlo sd of a 2.5% bootstrap quantile, in standard errors: 0.06 (B=2,000), 0.027 (B=10,000)
        quantile_noise = math.sqrt(0.025 * 0.975 / resamples) / stats.norm.pdf(stats.norm.ppf(0.975))
        tolerance = 5 * quantile_noise * standard_error
        for method in ("bca", "percentile"):
            interval = paired_bootstrap_interval(differences, resamples=resamples, method=method)
            mean, low, high = interval.estimate, interval.lo, interval.hi
            assert mean == pytest.approx(t_mean, rel=1e-9, abs=1e-12)
            assert abs(low - t_low) < tolerance
            assert abs(high - t_high) < tolerance


def test_paired_bootstrap_memory_stays_bounded_for_a_million_continuous_values() -> None:
    differences = np.random.default_rng(1).normal(size=1_000_000)
    tracemalloc.start()
    try:
        paired_bootstrap_interval(differences, resamples=12, method="percentile")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 150 * 2**20  # a naive (resamples, n) index matrix alone would need 96 MiB per 12


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")  # scipy's own 0 / 0
@pytest.mark.parametrize("method", ["bca", "percentile"])
def test_paired_bootstrap_constant_differences_give_nan_with_a_warning(method: str) -> None:
    """Constant data has no bootstrap interval: NaN bounds and a DegenerateDataWarning, as
    scipy.stats.bootstrap (BCa) does, instead of a zero-width interval that claims certainty."""
    with pytest.warns(DegenerateDataWarning, match="constant"):
        interval = paired_bootstrap_interval([2.0] * 10, resamples=100, method=method)
    assert interval.estimate == 2.0 and math.isnan(interval.lo) and math.isnan(interval.hi)
    with pytest.warns(stats.DegenerateDataWarning):  # the reference behaviour
        reference = stats.bootstrap(([2.0] * 10,), np.mean, n_resamples=100, method="BCa", rng=np.random.default_rng(0))
    assert math.isnan(reference.confidence_interval.low) and math.isnan(reference.confidence_interval.high)
    assert issubclass(DegenerateDataWarning, RuntimeWarning)


@pytest.mark.parametrize(("keyword", "value", "name"), [
    ("method", "normal", "method"),
    ("resamples", 1, "resamples"),
    ("confidence", 1.5, "confidence"),
])
def test_paired_bootstrap_rejects_bad_input(keyword: str, value: object, name: str) -> None:
    with pytest.raises(ValueError, match=name):
        paired_bootstrap_interval([1.0, 2.0, 3.0], **{keyword: value})
    with pytest.raises(ValueError, match="differences"):
        paired_bootstrap_interval([1.0])


# ----------------------------------------------------------------------------- two proportions


@pytest.mark.parametrize(("k1", "n1", "k2", "n2"), [
    (60, 100, 45, 100), (3, 40, 11, 50), (0, 30, 4, 25), (500, 1000, 480, 1000),
    (20, 20, 15, 20), (1234, 3000, 1180, 3000),
])
@pytest.mark.parametrize("confidence", [0.9, 0.95])
def test_two_proportion_test_matches_statsmodels(k1: int, n1: int, k2: int, n2: int, confidence: float) -> None:
    from statsmodels.stats.proportion import confint_proportions_2indep, proportions_ztest

    result = two_proportion_test(k1, n1, k2, n2, confidence)
    z_statistic, p_value = proportions_ztest(np.array([k1, k2]), np.array([n1, n2]))
    low, high = confint_proportions_2indep(k1, n1, k2, n2, method="newcomb", compare="diff",
                                           alpha=1 - confidence)
    assert result.difference == pytest.approx(k1 / n1 - k2 / n2, abs=1e-15)
    assert result.z == pytest.approx(z_statistic, rel=1e-10)
    assert result.p_value == pytest.approx(p_value, rel=1e-8)
    assert result.lo == pytest.approx(low, abs=1e-10)
    assert result.hi == pytest.approx(high, abs=1e-10)


def test_two_proportion_test_degenerate_pooled_proportion() -> None:
    result = two_proportion_test(0, 10, 0, 20)
    assert (result.z, result.p_value) == (0.0, 1.0)
    assert result.lo < 0.0 < result.hi


@pytest.mark.parametrize(("arguments", "name"), [
    ((5, 0, 1, 10), "n1"), ((1, 10, 1, -1), "n2"), ((11, 10, 1, 10), "k1"),
    ((1, 10, -1, 10), "k2"), ((1.5, 10, 1, 10), "k1"),
])
def test_two_proportion_test_rejects_bad_input(arguments: tuple, name: str) -> None:
    with pytest.raises(ValueError, match=name):
        two_proportion_test(*arguments)


# ----------------------------------------------------------------------------- chi-square, t-test


@pytest.mark.parametrize("counts", [[340, 330, 330], [120, 95, 85], [5, 0, 1, 9], [1000, 1000]])
def test_equal_rates_test_matches_scipy_chisquare(counts: list[int]) -> None:
    result = equal_rates_test(counts)
    expected = stats.chisquare(counts)
    assert result.statistic == pytest.approx(expected.statistic, rel=1e-12, abs=1e-12)
    assert result.p_value == pytest.approx(expected.pvalue, rel=1e-10)
    assert result.dof == len(counts) - 1
    assert result.n == sum(counts)


@pytest.mark.parametrize("counts", [[5], [[1, 2], [3, 4]], [1, -1, 3], [0, 0, 0]])
def test_equal_rates_test_rejects_bad_input(counts: list) -> None:
    with pytest.raises(ValueError, match="counts"):
        equal_rates_test(counts)


def test_paired_mean_test_matches_scipy_ttest_1samp() -> None:
    generator = np.random.default_rng(17)
    for differences in (generator.normal(0.2, 1.0, size=40), generator.integers(-3, 5, size=1_000).astype(float)):
        result = paired_mean_test(differences, 0.9)
        expected = stats.ttest_1samp(differences, 0.0)
        low, high = expected.confidence_interval(0.9)
        assert result.t == pytest.approx(expected.statistic, rel=1e-10)
        assert result.p_value == pytest.approx(expected.pvalue, rel=1e-8)
        assert (result.lo, result.hi) == (pytest.approx(low, rel=1e-10), pytest.approx(high, rel=1e-10))
        assert result.n == len(differences)
        assert result.std == pytest.approx(differences.std(ddof=1), rel=1e-12)
        assert result.mean == pytest.approx(differences.mean(), rel=1e-12)


def test_paired_mean_test_zero_spread() -> None:
    assert paired_mean_test([0.0, 0.0, 0.0]).p_value == 1.0
    result = paired_mean_test([2.0, 2.0])
    assert (result.t, result.p_value) == (math.inf, 0.0)


# ----------------------------------------------------------------------------- duplicate design


def test_duplicate_variance_reduction_formula_on_a_small_table() -> None:
    table = np.array([[3.0, -1.0, 0.0], [-2.0, 2.0, 1.0], [4.0, -4.0, 2.0], [-1.0, 1.0, 5.0]])
    result = duplicate_variance_reduction(table)
    assert result.games_per_deal == 3
    assert result.var_paired_per_deal == pytest.approx(np.var(table.mean(axis=1), ddof=1))
    assert result.var_unpaired_per_game == pytest.approx(np.var(table, ddof=1))
    assert result.reduction_factor == pytest.approx(np.var(table, ddof=1) / (3 * np.var(table.mean(axis=1), ddof=1)))


def test_duplicate_variance_reduction_on_synthetic_deal_effect() -> None:
    """A-minus-B difference = +deal luck in one seating, -deal luck in the swapped seating.

    The luck cancels in the duplicate average, so the factor is (s_deal^2 + s_noise^2) / s_noise^2.
    """
    generator = np.random.default_rng(21)
    n_deals, deal_sd, noise_sd = 40_000, 2.0, 1.0
    deal_effect = generator.normal(0.0, deal_sd, size=n_deals)
    signs = np.array([1.0, -1.0])
    table = deal_effect[:, None] * signs + generator.normal(0.0, noise_sd, size=(n_deals, 2)) + 0.1
    result = duplicate_variance_reduction(table)
    assert result.reduction_factor == pytest.approx((deal_sd**2 + noise_sd**2) / noise_sd**2, rel=0.04)
    # no deal effect: pairing neither helps nor hurts
    independent = generator.normal(0.0, noise_sd, size=(n_deals, 3))
    assert duplicate_variance_reduction(independent).reduction_factor == pytest.approx(1.0, rel=0.04)


@pytest.mark.parametrize("table", [np.zeros(5), np.zeros((1, 2)), np.array([[1.0, np.inf], [0.0, 1.0]])])
def test_duplicate_variance_reduction_rejects_bad_input(table: np.ndarray) -> None:
    with pytest.raises(ValueError, match="per_seating"):
        duplicate_variance_reduction(table)


# ----------------------------------------------------------------------------- Bernoulli SPRT


def simulate_bernoulli_sprt(test: BernoulliSPRT, p: float, sequences: int, seed: int,
                            block: int = 1_024) -> tuple[np.ndarray, np.ndarray]:
    """Decisions (+1 accept H1, -1 accept H0) and stopping times of ``sequences`` streams.

    Vectorised across sequences with the llr of ``test`` (increments and boundaries), checked
    after every trial; blocks of trials are drawn until every sequence has stopped.
    """
    generator = np.random.default_rng(seed)
    decisions = np.zeros(sequences, dtype=np.int8)
    stopping_times = np.zeros(sequences, dtype=np.int64)
    active = np.arange(sequences)
    successes = np.zeros(sequences, dtype=np.int64)
    trials_done = 0
    steps = np.arange(1, block + 1)
    while active.size:
        outcomes = generator.random((active.size, block)) < p
        running_successes = successes[active, None] + np.cumsum(outcomes, axis=1)
        running_trials = trials_done + steps
        ratios = running_successes * test.success_increment + (running_trials - running_successes) * test.failure_increment
        crossed = (ratios >= test.upper_boundary) | (ratios <= test.lower_boundary)
        stopped = crossed.any(axis=1)
        first = np.argmax(crossed, axis=1)
        finished = active[stopped]
        decisions[finished] = np.where(ratios[stopped, first[stopped]] >= test.upper_boundary, 1, -1)
        stopping_times[finished] = trials_done + first[stopped] + 1
        successes[active] = running_successes[:, -1]
        active = active[~stopped]
        trials_done += block
    return decisions, stopping_times


def binomial_upper_limit(bound: float, sequences: int) -> float:
    """bound + 3 binomial standard errors at rate ``bound``."""
    return bound + 3.0 * math.sqrt(bound * (1.0 - bound) / sequences)


def test_bernoulli_sprt_error_rates_and_average_sample_number() -> None:
    test = BernoulliSPRT(0.5, 0.55, SPRT_ALPHA, SPRT_BETA)
    under_h0, times_h0 = simulate_bernoulli_sprt(test, 0.5, SPRT_SEQUENCES, seed=100)
    under_h1, times_h1 = simulate_bernoulli_sprt(test, 0.55, SPRT_SEQUENCES, seed=101)
    type_one = float(np.mean(under_h0 == 1))
    type_two = float(np.mean(under_h1 == -1))
    assert type_one <= binomial_upper_limit(SPRT_ALPHA / (1 - SPRT_BETA), SPRT_SEQUENCES)
    assert type_two <= binomial_upper_limit(SPRT_BETA / (1 - SPRT_ALPHA), SPRT_SEQUENCES)
    # Wald's ASN ignores the overshoot of the boundary, so the truth is a few percent higher
    for times, p in ((times_h0, 0.5), (times_h1, 0.55)):
        wald = test.wald_average_sample_number(p)
        assert 0.95 * wald < times.mean() < 1.15 * wald


def test_bernoulli_sprt_class_agrees_with_vectorised_simulation() -> None:
    reference = BernoulliSPRT(0.5, 0.55, 0.05, 0.05)
    decisions, times = simulate_bernoulli_sprt(reference, 0.52, 12, seed=7, block=4_096)
    generator = np.random.default_rng(7)
    outcomes = generator.random((12, 4_096)) < 0.52  # the same first block of draws
    for row in range(12):
        if times[row] > 4_096:
            continue
        test = BernoulliSPRT(0.5, 0.55, 0.05, 0.05)
        for outcome in outcomes[row]:
            decision = test.update(int(outcome), 1)
            if decision != "continue":
                break
        assert test.n == times[row]
        assert decision == ("accept_h1" if decisions[row] == 1 else "accept_h0")
        assert test.update(1, 1) == decision and test.n == times[row]  # decided: nothing consumed


def test_bernoulli_sprt_batch_update_and_boundaries() -> None:
    test = BernoulliSPRT(0.5, 0.55, 0.05, 0.1)
    bounds = wald_boundaries(0.05, 0.1)
    assert (test.lower_boundary, test.upper_boundary) == (bounds.lower, bounds.upper)
    assert (bounds.alpha, bounds.beta) == (0.05, 0.1)
    assert test.upper_boundary == pytest.approx(math.log(0.9 / 0.05))
    assert test.lower_boundary == pytest.approx(math.log(0.1 / 0.95))
    assert test.update(30, 50) == "continue"
    assert test.llr == pytest.approx(30 * math.log(1.1) + 20 * math.log(0.9))
    assert test.n == 50


@pytest.mark.parametrize(("arguments", "name"), [
    ((0.5, 0.45, 0.05, 0.05), "p1"), ((0.0, 0.5, 0.05, 0.05), "p0"),
    ((0.5, 0.55, 1.2, 0.05), "alpha"), ((0.5, 0.55, 0.05, 0.0), "beta"),
])
def test_bernoulli_sprt_rejects_bad_input(arguments: tuple, name: str) -> None:
    with pytest.raises(ValueError, match=name):
        BernoulliSPRT(*arguments)
    with pytest.raises(ValueError, match="successes"):
        BernoulliSPRT(0.5, 0.55).update(5, 3)


# ----------------------------------------------------------------------------- convergence


def test_convergence_curve_matches_mean_interval_at_each_n() -> None:
    values = np.random.default_rng(41).normal(5.0, 3.0, size=3_000)
    curve = convergence_curve(values, confidence=0.9, points=40)
    assert list(curve.columns) == ["n", "mean", "lo", "hi"]
    assert curve["n"].iloc[0] == 2 and curve["n"].iloc[-1] == 3_000
    assert curve["n"].is_monotonic_increasing and len(curve) <= 40
    for row in curve.itertuples():
        expected = mean_interval(values[:row.n], 0.9)
        assert (row.mean, row.lo, row.hi) == pytest.approx((expected.estimate, expected.lo, expected.hi), rel=1e-9)


def test_wilson_interval_textbook_value() -> None:
    # Agresti & Coull (1998) style check: 81 successes of 263 -> about [0.2553, 0.3662]
    interval = wilson_interval(81, 263)
    assert abs(interval.lo - 0.2553) < 5e-4 and abs(interval.hi - 0.3662) < 5e-4
    assert interval.estimate == 81 / 263 and interval.n == 263 and interval.method == "Wilson"
    empty = wilson_interval(0, 0)
    assert (empty.lo, empty.hi) == (0.0, 1.0) and math.isnan(empty.estimate) and wilson_interval(5, 5).hi == 1.0


def test_proportion_convergence_matches_wilson_interval() -> None:
    wins = np.random.default_rng(43).random(5_000) < 0.3
    curve = proportion_convergence(wins, points=30)
    assert isinstance(curve, pd.DataFrame) and list(curve.columns) == ["n", "mean", "lo", "hi"]
    assert curve["n"].iloc[0] == 1 and curve["n"].iloc[-1] == 5_000
    for row in curve.itertuples():
        k = int(wins[:row.n].sum())
        assert row.mean == pytest.approx(k / row.n)
        expected = wilson_interval(k, int(row.n))
        assert (row.lo, row.hi) == pytest.approx((expected.lo, expected.hi))
    with pytest.raises(ValueError, match="successes_bool"):
        proportion_convergence([0, 2, 1])
    with pytest.raises(ValueError, match="points"):
        convergence_curve([1.0, 2.0], points=0)


def test_holm_adjust_matches_statsmodels():
    """Holm's step-down adjustment against statsmodels' multipletests (an independent implementation)."""
    from statsmodels.stats.multitest import multipletests

    from simkit.analysis.stats import holm_adjust

    rng = np.random.default_rng(5)
    for size in (1, 2, 7, 40):
        p = rng.uniform(0, 0.2, size) ** 2
        expected = multipletests(p, method="holm")[1]
        assert np.allclose(holm_adjust(p), expected, atol=1e-15)
    with_nan = holm_adjust([0.01, float("nan"), 0.02])
    assert np.isnan(with_nan[1]) and np.allclose(with_nan[[0, 2]], [0.02, 0.02])


def test_paired_ratio_difference_is_paired_and_covers():
    """Identical runs differ by exactly 0 (Welch's interval would not); on simulated paired runs
    whose true ratio difference is known, the interval covers it about 95 % of the time."""
    from simkit.analysis.stats import paired_ratio_difference

    rng = np.random.default_rng(8)
    won = (rng.uniform(size=500) < 0.7).astype(float)
    hu = np.where(won == 1, rng.gamma(4.0, 14.0, 500), 0.0)
    same = paired_ratio_difference(hu, won, hu, won)
    assert (same.mean, same.lo, same.hi) == (0.0, 0.0, 0.0)
    covered = 0
    for _ in range(400):
        won_a = (rng.uniform(size=800) < 0.7).astype(float)
        base = rng.gamma(4.0, 14.0, 800)
        won_b = np.where(rng.uniform(size=800) < 0.9, won_a, 1 - won_a)  # mostly the same deals won
        hu_a = np.where(won_a == 1, base + 3.0, 0.0)  # a's wins are worth 3 hu more: truth +3
        hu_b = np.where(won_b == 1, base, 0.0)
        r = paired_ratio_difference(hu_a, won_a, hu_b, won_b)
        covered += r.lo <= 3.0 <= r.hi
    assert 0.92 <= covered / 400 <= 0.98, covered / 400
