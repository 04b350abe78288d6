"""The sequential test of a mean (simkit.analysis.sequential): its statistic against a direct
constrained optimisation, its error rates on resampled real payoff-difference streams, and the
estimate and interval after it stops (coverage by simulation)."""

from __future__ import annotations

import json

import math
import pathlib

import numpy as np
import pandas as pd
import pytest
from scipy import optimize, stats

from simkit.analysis import sequential
from simkit.studies.compare import compare, sprt_plot_stem, write_comparison_report
from simkit.analysis.sequential import (EmpiricalMeanSPRT, SequentialEstimate, default_burn_in, empirical_log_likelihood,
                                        simulate_sprt)
from simkit.analysis.stats import wald_boundaries
from simkit.cli import main
from simkit.specs.base import Execution
from simkit.specs.compare import CompareSpec

DATA = pathlib.Path(__file__).parent / "data" / "greedy_patient_differences.csv"
HEAVY = pathlib.Path(__file__).parent / "data" / "greedy_patient_heavy_differences.csv"
ALPHA = BETA = 0.05


def payoff_differences(path: pathlib.Path = DATA) -> tuple[np.ndarray, np.ndarray]:
    """(values, counts) of 50,000 real greedy - patient per-deal differences (tests/data), or of
    the audit's heavy-tailed 5,000 (``HEAVY``)."""
    table = pd.read_csv(path, comment="#")
    return table["value"].to_numpy(dtype=float), table["count"].to_numpy(dtype=np.int64)


def error_rates(delta: float, sequences: int, seed: int) -> dict[str, float]:
    """P(accept H1 | mean 0), P(accept H0 | mean delta) and the average sample numbers on
    streams resampled from the real differences shifted to those means."""
    values, counts = payoff_differences()
    under_h0 = simulate_sprt(values, 0.0, EmpiricalMeanSPRT(delta, ALPHA, BETA),
                             sequences=sequences, seed=seed, weights=counts)
    under_h1 = simulate_sprt(values, delta, EmpiricalMeanSPRT(delta, ALPHA, BETA),
                             sequences=sequences, seed=seed + 1, weights=counts)
    return {"alpha": float(np.mean(under_h0["decision"] == 1)), "beta": float(np.mean(under_h1["decision"] == -1)),
            "asn_h0": float(under_h0["n"].mean()), "asn_h1": float(under_h1["n"].mean()),
            "undecided": float(np.mean(under_h0["decision"] == 0) + np.mean(under_h1["decision"] == 0))}


# ----------------------------------------------------------------------------- the statistic


def test_test_data_is_the_documented_sample() -> None:
    values, counts = payoff_differences()
    assert counts.sum() == 50_000 and values.size == np.unique(values).size
    assert np.allclose(values * 12, np.round(values * 12))  # means of six seatings' differences
    mean = counts @ values / counts.sum()
    sd = math.sqrt(counts @ (values - mean) ** 2 / (counts.sum() - 1))
    skewness = counts @ ((values - mean) / sd) ** 3 / counts.sum()
    assert mean == pytest.approx(0.309, abs=0.001) and sd == pytest.approx(1.29, abs=0.01) and skewness > 0.5
    values, counts = payoff_differences(HEAVY)
    assert counts.sum() == 5_000 and values.size == np.unique(values).size
    assert list(values[-3:]) == [28.0, 30.0, 34.5] and list(counts[-3:]) == [1, 1, 1]  # the three heavy deals
    assert values[-4] < 20.0


def test_default_burn_in_grows_as_one_over_delta_squared() -> None:
    """max(300, ceil(9 / delta^2)) deals (worked by hand), the same for -delta, and the default of
    the class and of the simulation."""
    assert [default_burn_in(d) for d in (1.0, 0.2, 0.17, 0.15, 0.1, -0.1, 0.05)] == [300, 300, 312, 400, 900, 900, 3600]
    assert EmpiricalMeanSPRT(delta=0.1).min_n == 900 and EmpiricalMeanSPRT(delta=0.1, min_n=50).min_n == 50
    assert int(simulate_sprt([-1.0, 0.0, 1.0, 2.0], 1.0, EmpiricalMeanSPRT(0.1),
                             sequences=20, seed=1)["n"].min()) >= 900
    for bad in (0.0, math.nan, math.inf):
        with pytest.raises(ValueError, match="delta"):
            default_burn_in(bad)


@pytest.mark.parametrize("s", [-0.4, 0.1, 0.55, 1.6])
def test_empirical_log_likelihood_is_the_constrained_maximum(s: float) -> None:
    """l(s) = max sum log(n q_i) over weights q on the observations with mean s (SLSQP)."""
    x = np.random.default_rng(3).choice([-2.0, -1.0, 0.0, 0.0, 0.0, 1.0, 1.0, 2.5, 5.0], size=30)
    n = x.size
    constraints = [{"type": "eq", "fun": lambda q: q.sum() - 1.0}, {"type": "eq", "fun": lambda q: q @ x - s}]
    best = optimize.minimize(lambda q: -np.sum(np.log(n * q)), np.full(n, 1.0 / n), method="SLSQP",
                             bounds=[(1e-12, 1.0)] * n, constraints=constraints,
                             options={"ftol": 1e-14, "maxiter": 1000})
    assert empirical_log_likelihood(x, s) == pytest.approx(-best.fun, rel=1e-7, abs=1e-9)


def test_empirical_log_likelihood_edges() -> None:
    assert empirical_log_likelihood([0.0, 1.0, 1.0, 2.0], 1.0) == pytest.approx(0.0, abs=1e-12)  # the mean itself
    assert empirical_log_likelihood([0.0, 1.0], 1.0) == -math.inf  # on the edge: all mass on one value
    assert empirical_log_likelihood([3.0, 3.0], 3.0) == 0.0
    assert empirical_log_likelihood([0.0, 1.0], -0.5) == -math.inf


def test_llr_path_is_the_difference_of_empirical_log_likelihoods() -> None:
    generator = np.random.default_rng(5)
    stream = generator.choice([-1.5, -0.5, 0.0, 0.0, 0.25, 1.0, 3.0], size=400)
    test = EmpiricalMeanSPRT(delta=0.3, mu0=-0.1, min_n=10_000)  # never decides: the whole path
    test.update(stream)
    assert test.n == 400 and test.decision == "continue"
    for k in (5, 17, 60, 399):
        prefix = stream[:k + 1]
        expected = empirical_log_likelihood(prefix, 0.2) - empirical_log_likelihood(prefix, -0.1)
        assert test.path[k] == pytest.approx(expected, rel=1e-9, abs=1e-9)
    assert test.llr == test.path[-1]
    assert test.mean == pytest.approx(stream.mean()) and test.variance == pytest.approx(stream.var(ddof=1))


def test_stopping_point_does_not_depend_on_batching() -> None:
    values, counts = payoff_differences()
    generator = np.random.default_rng(31)
    stream = generator.choice(values - 0.309 + 0.15, p=counts / counts.sum(), size=20_000)
    whole = EmpiricalMeanSPRT(delta=0.2)
    whole.update(stream)
    assert whole.decision != "continue" and whole.used_in_last_update == whole.n
    batched = EmpiricalMeanSPRT(delta=0.2)
    consumed = 0
    for piece in np.split(stream, np.sort(generator.choice(np.arange(1, stream.size), size=300, replace=False))):
        batched.update(piece)
        consumed += batched.used_in_last_update
    assert (batched.n, batched.decision, consumed) == (whole.n, whole.decision, whole.n)
    assert batched.llr == pytest.approx(whole.llr, rel=1e-9)
    assert np.allclose(batched.path, whole.path, rtol=1e-9, atol=1e-12)
    assert batched.mean == pytest.approx(stream[:whole.n].mean(), rel=1e-9)


def test_no_decision_before_min_n_and_infinite_llr_outside_the_range() -> None:
    test = EmpiricalMeanSPRT(delta=0.5, min_n=30)
    assert test.update(np.full(10, 2.0)) == "continue"
    assert test.llr == math.inf  # neither mean is possible on the values seen, all lie beyond H1's mean
    assert test.update(np.r_[-1.0, np.full(8, 2.0)]) == "continue"  # llr finite and large, but n < 30
    assert test.llr > test.upper_boundary
    assert test.update(np.full(50, 2.0)) == "accept_h1"
    assert test.n == 30 and test.used_in_last_update == 11
    assert test.update(np.zeros(5)) == "accept_h1" and test.used_in_last_update == 0
    low = EmpiricalMeanSPRT(delta=0.5, min_n=5)
    assert low.update(np.full(10, -1.0)) == "accept_h0" and low.llr == -math.inf and low.n == 5


def test_negative_delta_mirrors_the_test() -> None:
    stream = np.random.default_rng(8).choice([-2.0, -1.0, 0.0, 0.5, 1.0, 4.0], size=5_000)
    up, down = EmpiricalMeanSPRT(delta=0.3, mu0=0.1), EmpiricalMeanSPRT(delta=-0.3, mu0=-0.1)
    up.update(stream)
    down.update(-stream)
    assert (up.decision, up.n) == (down.decision, down.n)
    assert up.llr == pytest.approx(down.llr, rel=1e-9)


@pytest.mark.parametrize(("keywords", "name"), [
    ({"delta": 0.0}, "delta"), ({"delta": 0.1, "min_n": 1}, "min_n"), ({"delta": 0.1, "resolution": 0.0}, "resolution"),
    ({"delta": 0.1, "alpha": 0.7, "beta": 0.6}, "alpha"), ({"delta": 0.1, "mu0": np.inf}, "mu0"),
])
def test_rejects_bad_input(keywords: dict, name: str) -> None:
    with pytest.raises(ValueError, match=name):
        EmpiricalMeanSPRT(**keywords)
    with pytest.raises(ValueError, match="finite"):
        EmpiricalMeanSPRT(delta=0.1).update([1.0, np.nan])


def test_simulation_runs_the_same_test_as_the_class() -> None:
    """simulate_sprt with one sequence draws block after block of uniforms from the seed; the
    class fed the same values decides at the same deal."""
    values, counts = payoff_differences()
    probabilities = counts / counts.sum()
    shifted = values - probabilities @ values + 0.1
    for seed in range(6):
        run = simulate_sprt(values, 0.1, EmpiricalMeanSPRT(0.2), sequences=1, seed=seed, weights=counts)
        generator = np.random.default_rng(seed)
        cumulative = np.cumsum(probabilities)
        cumulative[-1] = 1.0
        test = EmpiricalMeanSPRT(delta=0.2)
        while test.decision == "continue":
            codes = np.searchsorted(cumulative, generator.random((1, sequential._SIMULATION_BLOCK)), side="right")
            test.update(shifted[codes[0]])
        assert (int(run["n"].iloc[0]), int(run["decision"].iloc[0])) == (test.n, 1 if test.decision == "accept_h1" else -1)
        assert run["mean"].iloc[0] == pytest.approx(test.mean, rel=1e-9, abs=1e-12)
        assert run["sd"].iloc[0] == pytest.approx(math.sqrt(test.variance), rel=1e-6)


def test_error_rates_on_real_payoff_differences_fast() -> None:
    """1,500 sequences per hypothesis at delta = 0.2 (the slow test runs 5,000 at two deltas)."""
    rates = error_rates(0.2, 1_500, seed=20)
    assert rates["undecided"] == 0.0
    assert 0.02 <= rates["alpha"] <= 0.08 and 0.02 <= rates["beta"] <= 0.08
    assert 150 < rates["asn_h0"] < 400 and 150 < rates["asn_h1"] < 400


def test_unequal_levels_set_each_boundary_from_its_own_error() -> None:
    """alpha bounds the false acceptance of H1, beta that of H0, and the two are not exchangeable:
    Wald's bounds for alpha = 0.01, beta = 0.2 are log(0.2 / 0.99) and log(0.8 / 0.01) (worked by
    hand), and on resampled real differences the false-H1 rate stays near 0.01 while the false-H0
    rate is several times larger.  Every other test uses alpha = beta, where a swap is invisible."""
    test = EmpiricalMeanSPRT(delta=0.2, alpha=0.01, beta=0.2)
    assert test.lower_boundary == pytest.approx(-1.59939, abs=1e-5)
    assert test.upper_boundary == pytest.approx(4.38203, abs=1e-5)
    values, counts = payoff_differences()
    under_h0 = simulate_sprt(values, 0.0, EmpiricalMeanSPRT(0.2, 0.01, 0.2),
                             sequences=1_000, seed=4_401, weights=counts)
    under_h1 = simulate_sprt(values, 0.2, EmpiricalMeanSPRT(0.2, 0.01, 0.2),
                             sequences=1_000, seed=4_402, weights=counts)
    false_h1, false_h0 = float(np.mean(under_h0["decision"] == 1)), float(np.mean(under_h1["decision"] == -1))
    assert false_h1 <= 0.03 and 0.04 <= false_h0 <= 0.3, (false_h1, false_h0)  # swapped: ~0.2 and ~0.01


def test_small_effect_on_heavy_tails_keeps_beta_fast() -> None:
    """Issue 50: on the audit's heavy-tailed sample, delta = 0.1, alpha = 0.05, beta = 0.10, the
    fixed burn-in of 300 let P(accept H0 | mu = delta) reach 0.13 (10,000 sequences); the default
    burn-in (900 deals here) keeps it near 0.07.  1,500 sequences: standard error about 0.007."""
    values, counts = payoff_differences(HEAVY)
    under_h1 = simulate_sprt(values, 0.1, EmpiricalMeanSPRT(0.1, 0.05, 0.10),
                             sequences=1_500, seed=5_001, weights=counts)
    assert float(np.mean(under_h1["decision"] == -1)) <= 0.10
    assert int(under_h1["n"].min()) == 900 and (under_h1["decision"] != 0).all()


@pytest.mark.slow
@pytest.mark.parametrize(("delta", "alpha", "beta"), [(0.1, 0.05, 0.05), (0.1, 0.05, 0.10), (0.2, 0.05, 0.05),
                                                      (0.2, 0.05, 0.10)])
def test_error_rates_on_heavy_tails_within_a_tenth_of_nominal(delta: float, alpha: float, beta: float) -> None:
    """Issue 50: on the heavy-tailed sample (three deals of +28 to +34.5 among 5,000) each error
    rate at most 1.1 x nominal plus about one standard error at 4,000 sequences per hypothesis
    (measured on 10,000, docs/methods.md "Small effects": at most 0.98 x nominal), and not
    absurdly conservative (>= 0.4 x nominal: a burn-in that wastes most of its deals fails).  The
    former fixed burn-in of 300 gave beta 1.53 x and 1.31 x nominal at delta = 0.1."""
    values, counts = payoff_differences(HEAVY)
    seed = int(1_000 * delta + 100 * beta)
    under_h0 = simulate_sprt(values, 0.0, EmpiricalMeanSPRT(delta, alpha, beta),
                             sequences=4_000, seed=seed, weights=counts)
    under_h1 = simulate_sprt(values, delta, EmpiricalMeanSPRT(delta, alpha, beta),
                             sequences=4_000, seed=seed + 1, weights=counts)
    false_h1, false_h0 = float(np.mean(under_h0["decision"] == 1)), float(np.mean(under_h1["decision"] == -1))
    assert 0.4 * alpha <= false_h1 <= 1.1 * alpha + math.sqrt(alpha / 4_000), false_h1
    assert 0.4 * beta <= false_h0 <= 1.1 * beta + math.sqrt(beta / 4_000), false_h0


@pytest.mark.slow
@pytest.mark.parametrize("delta", [0.1, 0.2])
def test_error_rates_on_real_payoff_differences(delta: float) -> None:
    """Issue 39: each error rate at most 0.055 at the default burn-in (300 at delta = 0.2, 900 at 0.1;
    issue 12 asked for 1.5 points of nominal; the burn-in that keeps the levels under heavy tails
    makes the test conservative on plain data: about 0.027 at 300, docs/methods.md), and not absurdly conservative (>= 0.015: a
    burn-in or boundary error that wastes most of its deals fails)."""
    rates = error_rates(delta, 6_000, seed=1_200)
    assert rates["undecided"] == 0.0
    assert 0.015 <= rates["alpha"] <= 0.055, rates
    assert 0.015 <= rates["beta"] <= 0.055, rates


# ----------------------------------------------------------------------------- Brownian motion pieces


@pytest.mark.parametrize("nu", [-0.2, 0.0, 0.07])
def test_exit_probabilities_of_brownian_motion(nu: float) -> None:
    up, down = 3.0, 2.0
    eventually = sequential._exit_upper_by(nu, up, down, 1e5)
    expected = down / (up + down) if nu == 0 else (1 - math.exp(2 * nu * down)) / (math.exp(-2 * nu * up) - math.exp(2 * nu * down))
    assert float(eventually) == pytest.approx(expected, rel=1e-9)
    for time in (0.3, 4.0, 25.0):
        total = (sequential._exit_upper_by(nu, up, down, time) + sequential._exit_upper_by(-nu, down, up, time)
                 + sequential._alive_above(nu, up, down, time, -down))
        assert float(total) == pytest.approx(1.0, abs=1e-9)
    # against a fine random walk (steps of 0.01 time units), 4,000 paths to time 6
    generator = np.random.default_rng(2)
    position = np.zeros(4_000)
    state = np.zeros(4_000, dtype=np.int8)
    for _ in range(600):
        moving = state == 0
        position[moving] += nu * 0.01 + 0.1 * generator.standard_normal(moving.sum())
        state[moving & (position >= up)] = 1
        state[moving & (position <= -down)] = -1
    for observed, formula in ((np.mean(state == 1), sequential._exit_upper_by(nu, up, down, 6.0)),
                              (np.mean((state == 0) & (position >= 0.5)), sequential._alive_above(nu, up, down, 6.0, 0.5))):
        assert abs(observed - float(formula)) < 4 * math.sqrt(float(formula) * (1 - float(formula)) / 4_000) + 0.01


# ----------------------------------------------------------------------------- the estimate after stopping


def stopped_test(stream: np.ndarray, delta: float = 0.2, **keywords) -> EmpiricalMeanSPRT:
    test = EmpiricalMeanSPRT(delta=delta, **keywords)
    test.update(stream)
    return test


def test_estimate_at_the_first_look_is_the_fixed_sample_interval() -> None:
    """A test that stops at its first look (min_n) is ordered by the llr there; in the linear
    normal approximation (used when the llr is infinite) that is the fixed-sample z interval."""
    stream = np.tile([0.5, 1.0, 2.0, 0.25, 1.5], 20)  # all values above mu1: llr = +inf
    test = stopped_test(stream, min_n=100)
    assert test.decision == "accept_h1" and test.n == 100 and test.llr == math.inf
    result = test.estimate()
    half = stats.norm.ppf(0.975) * math.sqrt(test.variance) / 10
    assert result.estimate == pytest.approx(test.mean, abs=1e-5)
    assert (result.lo, result.hi) == pytest.approx((test.mean - half, test.mean + half), abs=1e-5)


def test_estimate_properties() -> None:
    values, counts = payoff_differences()
    probabilities = counts / counts.sum()
    generator = np.random.default_rng(12)
    results = {}
    for seed in range(40):
        stream = generator.choice(values - probabilities @ values + 0.1, p=probabilities, size=5_000)
        test = stopped_test(stream)
        result = test.estimate()
        assert isinstance(result, SequentialEstimate) and result.n == test.n and result.decision == test.decision
        assert result.lo < result.estimate < result.hi and result.naive_mean == test.mean
        results[seed] = (test, result)
    h1_late = [(t, r) for t, r in results.values() if t.decision == "accept_h1" and t.n > 150]
    h0_late = [(t, r) for t, r in results.values() if t.decision == "accept_h0" and t.n > 150]
    assert h1_late and h0_late
    # stopping at H1 late means the mean was not large: the estimate sits below the plain mean
    # more often than not, and the opposite after an H0 stop
    assert np.mean([r.estimate < t.mean for t, r in h1_late]) > 0.5
    assert np.mean([r.estimate > t.mean for t, r in h0_late]) > 0.5
    test, result = h1_late[0]
    wider = test.estimate(confidence=0.99)
    assert wider.lo < result.lo and wider.hi > result.hi and wider.confidence == 0.99
    assert "conditional on stopping, biased" in result.text() and result.to_frame().shape == (1, 7)
    with pytest.raises(ValueError, match="confidence"):
        test.estimate(confidence=1.0)


def test_estimate_of_a_mirrored_test_is_mirrored() -> None:
    stream = np.random.default_rng(8).choice([-2.0, -1.0, 0.0, 0.5, 1.0, 4.0], size=5_000)
    up, down = stopped_test(stream, 0.3, mu0=0.1), stopped_test(-stream, -0.3, mu0=-0.1)
    a, b = up.estimate(), down.estimate()
    assert (b.estimate, b.lo, b.hi) == pytest.approx((-a.estimate, -a.hi, -a.lo), abs=1e-5)


def test_estimate_of_an_undecided_test_and_of_simulated_tests() -> None:
    stream = np.random.default_rng(9).choice([-2.0, -1.0, 0.0, 0.5, 1.0, 4.0], size=150)
    test = stopped_test(stream, 0.05)  # far from deciding after 150 deals: truncated there
    assert test.decision == "continue"
    result = test.estimate()
    assert result.lo < test.mean < result.hi and result.decision == "continue"
    values, counts = payoff_differences()
    runs = simulate_sprt(values, 0.1, EmpiricalMeanSPRT(0.2), sequences=30, seed=4, weights=counts, confidence=0.9)
    assert runs[["estimate", "lo", "hi"]].notna().all().all()
    assert ((runs["lo"] < runs["estimate"]) & (runs["estimate"] < runs["hi"])).all()


def test_estimate_under_unequal_levels_covers() -> None:
    """The estimate after stopping models the boundaries the test really has: at alpha = 0.01,
    beta = 0.2 and true mean delta, 1,000 stopped tests cover 0.967 (seed 77) with a mean bias of
    +0.009; with alpha and beta exchanged in the estimate's boundaries they cover 0.842, biased
    by -0.056 (measured)."""
    values, counts = payoff_differences()
    runs = simulate_sprt(values, 0.2, EmpiricalMeanSPRT(0.2, 0.01, 0.2),
                         sequences=1_000, seed=77, weights=counts, confidence=0.95)
    coverage = float(np.mean((runs["lo"] <= 0.2) & (0.2 <= runs["hi"])))
    assert coverage >= 0.93 and abs(float(runs["estimate"].mean()) - 0.2) < 0.03, coverage


def test_estimate_of_the_class_under_unequal_levels_is_the_simulated_one() -> None:
    """The class ``compare --sprt`` runs (EmpiricalMeanSPRT.estimate) gives, for a stream that the
    simulation also draws, the estimate and interval that simulate_sprt gives, at alpha = 0.01,
    beta = 0.2, where test_estimate_under_unequal_levels_covers checks the simulation's coverage.
    Mutant: alpha and beta exchanged in the class's estimate only (the simulation path keeps them):
    on issue 50's stopped test the estimate moved from 0.108 [-0.053, 0.310] to 0.001."""
    values, counts = payoff_differences()
    probabilities = counts / counts.sum()
    shifted = values - probabilities @ values + 0.1
    cumulative = np.cumsum(probabilities)
    cumulative[-1] = 1.0
    stops = set()
    for seed in range(4):
        run = simulate_sprt(values, 0.1, EmpiricalMeanSPRT(0.2, 0.01, 0.2),
                            sequences=1, seed=seed, weights=counts, confidence=0.95)
        generator = np.random.default_rng(seed)
        test = EmpiricalMeanSPRT(delta=0.2, alpha=0.01, beta=0.2)
        while test.decision == "continue":
            codes = np.searchsorted(cumulative, generator.random((1, sequential._SIMULATION_BLOCK)), side="right")
            test.update(shifted[codes[0]])
        assert test.n == int(run["n"].iloc[0])
        result = test.estimate()
        assert (result.estimate, result.lo, result.hi) == pytest.approx(
            (run["estimate"].iloc[0], run["lo"].iloc[0], run["hi"].iloc[0]), abs=1e-4)
        stops.add((test.decision, test.n > test.min_n))
    assert len(stops) >= 2  # more than one kind of stop among the four


@pytest.mark.slow
@pytest.mark.parametrize(("delta", "true_mean"), [(0.2, 0.0), (0.2, 0.1), (0.2, 0.2), (0.1, 0.1)])
def test_estimate_coverage_under_the_stopping_rule(delta: float, true_mean: float) -> None:
    """2,000 stopped tests on resampled real differences: the 95% interval under the stopping
    rule covers at least about 95% (measured 0.96-0.97 on these skewed data, docs/methods.md);
    the fixed-sample t interval after the same stops covers less."""
    values, counts = payoff_differences()
    runs = simulate_sprt(values, true_mean, EmpiricalMeanSPRT(delta),
                         sequences=2_000, seed=300, weights=counts, confidence=0.95)
    coverage = float(np.mean((runs["lo"] <= true_mean) & (true_mean <= runs["hi"])))
    assert 0.935 <= coverage <= 0.98, coverage
    half = stats.t.ppf(0.975, runs["n"] - 1) * runs["sd"] / np.sqrt(runs["n"])
    naive = float(np.mean((runs["mean"] - half <= true_mean) & (true_mean <= runs["mean"] + half)))
    assert naive < coverage
    assert abs(float(np.median(runs["estimate"])) - true_mean) < 0.03
    assert abs(float((runs["estimate"] - true_mean).mean())) < 0.03


# ----------------------------------------------------------------------------- compare --sprt


def test_compare_sprt_reports_decision_estimate_and_llr_plot(tmp_path: pathlib.Path, capsys) -> None:
    out = tmp_path / "cmp"
    assert main(["compare", "greedy", "random", "--sprt", "0.5,0.05,0.05", "--deals", "400", "--batch-size", "200",
                 "--out", str(out), "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert "H1 (A - B = 0.5) preferred over H0 (A - B = 0)" in printed and "after 300 deals" in printed
    assert "burn-in 300 deals" in printed
    assert "beats" not in printed  # the verdict says which hypothesis fits better, not more
    assert "estimate under the stopping rule" in printed and "conditional on stopping, biased" in printed
    assert f"log-likelihood ratio path: {out / (sprt_plot_stem('', 0) + '.png')}" in printed
    assert (out / "comparison_sprt_llr_0.png").stat().st_size > 0 and (out / "comparison_sprt_llr_0.svg").exists()
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "comparison_sprt_llr_0.png" in report and "conditional on stopping and biased" in report
    assert "(SPRT)" in report


def test_compare_sprt_result_fields(tmp_path: pathlib.Path) -> None:
    result = compare(CompareSpec("greedy", "patient", deals=600, seed=4, batch_size=150, sprt=(0.2, 0.05, 0.05)),
                     tmp_path / "gp", Execution(quiet=True))
    test = result.sprt
    assert isinstance(test, EmpiricalMeanSPRT) and result.deals == test.n and test.path.size == test.n
    bounds = wald_boundaries(0.05, 0.05)
    assert (test.lower_boundary, test.upper_boundary) == (bounds.lower, bounds.upper)
    row = result.summary_row()
    assert (row["estimate"], row["lo"], row["hi"]) == (result.sequential.estimate, result.sequential.lo,
                                                       result.sequential.hi)
    assert row["plain_mean"] == pytest.approx(result.per_seating.mean())
    assert "95% paired bootstrap" not in result.text()  # no plain CI after a sequential stop
    write_comparison_report(result, tmp_path / "gp")
    assert (tmp_path / "gp" / "comparison_sprt_llr_0.png").exists()


def test_burn_in_reaches_the_test_from_every_entry_point(tmp_path: pathlib.Path, capsys) -> None:
    """The CLI's default is the library's; --burn-in and compare(burn_in=) move the first look."""
    from simkit.cliargs import COMMANDS
    from simkit.experiment.spec import parse_experiment

    entry = 'name = "x"\n[[comparison]]\na = "greedy"\nb = "random"\ndeals = 900\nsprt = [0.1, 0.05, 0.05]\n'
    plain, given = parse_experiment(entry), parse_experiment(entry + "burn_in = 150\n")
    assert plain.comparisons[0].burn_in is None and given.comparisons[0].burn_in == 150  # None: default_burn_in

    for command in ("compare", "tournament"):  # None: the library's default_burn_in(delta)
        flag = next(a for a in next(c for c in COMMANDS if c.name == command).args if "--burn-in" in a.flags)
        assert flag.options["default"] is None
    assert main(["compare", "greedy", "random", "--sprt", "0.5,0.05,0.05", "--deals", "400", "--batch-size", "200",
                 "--burn-in", "150", "--out", str(tmp_path / "c"), "--quiet", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["sprt"]["burn_in"] == 150 and payload["sprt"]["deals"] == 150
    assert payload["sprt"]["decision"] == "accept_h1" and payload["adjusted"] is None
    # no --burn-in at a small delta: the first look of default_burn_in(0.1), after the 200-deal cap
    assert main(["compare", "greedy", "random", "--sprt", "0.1,0.05,0.05", "--deals", "200", "--batch-size", "200",
                 "--out", str(tmp_path / "d"), "--quiet", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["sprt"]["burn_in"] == 900 and payload["sprt"]["deals"] == 200
    assert payload["sprt"]["decision"] == "continue"


# ----------------------------------------------------------------------------- mutation-testing pins (issue 50)


def upper_tail(x: float) -> float:
    """1 - Phi(x) from math.erfc (accurate far into the upper tail; independent of scipy)."""
    return 0.5 * math.erfc(x / math.sqrt(2.0))


@pytest.mark.parametrize(("a", "b"), [
    (-1.0, 2.0), (0.5, 0.6), (-3.0, -2.0), (5.0, 5.001),
    (10.0, 11.0), (30.0, 30.5), (-35.0, -34.5), (12.0, math.inf), (-math.inf, -20.0),
])
def test_log_diff_normal_cdf_in_both_tails(a: float, b: float) -> None:
    """log(Phi(b) - Phi(a)) against erfc differences taken on the side where they do not cancel:
    at (10, 11) a plain Phi(b) - Phi(a) is 1 - 1 = 0 in floats (log -inf); the answer is -53.2."""
    if a >= 0:
        expected = math.log(upper_tail(a) - upper_tail(b))
    elif b <= 0:
        expected = math.log(upper_tail(-b) - upper_tail(-a))
    else:
        expected = math.log(1.0 - upper_tail(b) - upper_tail(-a))
    got = sequential._log_diff_normal_cdf(np.array([a]), np.array([b]))
    assert got.shape == (1,) and got[0] == pytest.approx(expected, rel=1e-10, abs=1e-12)


def test_log_diff_normal_cdf_of_an_empty_interval_is_silent() -> None:
    """a = b is log(0) = -inf, with no floating-point warning (also where both ends are -inf)."""
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        empty = sequential._log_diff_normal_cdf(np.array([-2.0, 0.0, 3.0, 40.0]), np.array([-2.0, 0.0, 3.0, 40.0]))
        assert np.all(empty == -math.inf)
        sequential._log_diff_normal_cdf(np.array([-math.inf]), np.array([-math.inf]))


def one_barrier(nu: np.ndarray, up: np.ndarray, time: np.ndarray, level: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(P(hit up by time), P(not hit up by time and W_t >= level)) for W_t = nu t + B_t, by the
    reflection principle: the sub-density of W_t on {max < up} is phi_t(x - nu t) - exp(2 nu up) phi_t(x - 2 up - nu t)."""
    root = np.sqrt(time)
    hit = stats.norm.cdf((nu * time - up) / root) + np.exp(2 * nu * up) * stats.norm.cdf((-nu * time - up) / root)
    free = stats.norm.cdf((up - nu * time) / root) - stats.norm.cdf((level - nu * time) / root)
    mirrored = stats.norm.cdf((-up - nu * time) / root) - stats.norm.cdf((level - 2 * up - nu * time) / root)
    return hit, free - np.exp(2 * nu * up) * mirrored


def test_brownian_pieces_on_arrays_against_one_barrier_formulas() -> None:
    """Vectors and a 2-d grid of (drift, barrier, time, level): with the lower barrier 60 standard
    deviations away the two-barrier series must equal the one-barrier reflection formulas,
    element by element; results are floats in [0, 1]."""
    nu = np.array([-0.8, -0.1, 0.0, 0.3, 1.2])[:, None]
    up = np.array([0.4, 1.0, 2.5])[None, :, None]
    time = np.array([0.2, 1.0, 3.0])
    level = np.array([-1.0, 0.1, 0.3])
    down = 60.0 * math.sqrt(3.0) + 20.0
    hit, alive = one_barrier(nu[..., None], up, time, np.minimum(level, up))
    got_hit = sequential._exit_upper_by(nu[..., None], up, down, time)
    got_alive = sequential._alive_above(nu[..., None], up, down, time, np.minimum(level, up))
    for got, expected in ((got_hit, hit), (got_alive, alive)):
        assert got.shape == (5, 3, 3) and got.dtype == np.float64
        assert np.allclose(got, expected, rtol=1e-9, atol=1e-13)
    # the same on flat vectors (one element per case)
    flat = sequential._alive_above(np.repeat(nu[:, 0], 3), 1.0, down, np.tile(time, 5), 0.2)
    assert flat.shape == (15,) and np.allclose(flat, one_barrier(np.repeat(nu[:, 0], 3), 1.0, np.tile(time, 5), 0.2)[1],
                                               rtol=1e-9, atol=1e-13)


def test_alive_probability_is_never_negative() -> None:
    """Where almost no path survives, the alternating image series sums to about -1e-16 in
    floats; the probability returned is clipped at 0 (the rows after it would take its log)."""
    nu = np.linspace(-3.0, 3.0, 13)[:, None, None]
    up = np.array([0.1, 0.5, 1.0, 3.0, 8.0])[None, :, None]
    time = np.array([0.01, 0.1, 1.0, 10.0, 100.0, 1000.0])
    for down in (0.1, 1.0, 5.0):
        alive = sequential._alive_above(nu, up, down, time, 0.5 * (up - down))
        assert alive.min() >= 0.0 and alive.max() <= 1.0


def test_image_series_truncation() -> None:
    """_image_count images on each side leave out only terms below 1e-17 (exp(-2 k^2 L^2 / t) at
    the first image left out), and the count is capped: an absurd time asks for 4.5e20 images."""
    for ratio in (0.05, 0.3, 0.7, 1.0, 1.5, 3.0, 10.0):  # sqrt(t) / L
        time, width = np.array([ratio**2]), np.array([1.0])
        images = sequential._image_count(time, width)
        assert math.exp(-2.0 * (images + 1) ** 2 / ratio**2) < 1e-17
    assert sequential._image_count(np.array([1e40]), np.array([1.0])) == 400
    assert 0.0 <= float(sequential._exit_upper_by(0.0, 1.0, 1.0, 1e40)) <= 1.0


def test_empirical_log_likelihood_on_two_values_and_one() -> None:
    """On two distinct values the mean fixes the distribution: P = ((x2 - s), (s - x1)) / (x2 - x1),
    shared by the c1 and c2 observations of each value: l(s) = c1 log(n P1 / c1) + c2 log(n P2 / c2);
    on one value l is 0 at it and -inf elsewhere."""
    for s in (-0.9, 0.0, 0.7, 1.9):
        p1, p2 = (2.0 - s) / 3.0, (s + 1.0) / 3.0
        expected = 3 * math.log(5 * p1 / 3) + 2 * math.log(5 * p2 / 2)
        assert empirical_log_likelihood([-1.0, 2.0, -1.0, 2.0, -1.0], s) == pytest.approx(expected, rel=1e-12)
    assert empirical_log_likelihood([2.0], 2.0) == 0.0
    assert empirical_log_likelihood(np.array([[2.0]]), 1.0) == -math.inf


@pytest.mark.parametrize("bad", [[], [1.0, math.nan], [0.0, math.inf], [1.0, None]])
def test_empirical_log_likelihood_rejects_bad_values(bad: list) -> None:
    with pytest.raises(ValueError, match=r"^values must be a non-empty array of finite values$"):
        empirical_log_likelihood(bad, 0.5)


def test_estimate_text_wording() -> None:
    estimate = SequentialEstimate(estimate=0.12345, lo=-0.01, hi=0.25, confidence=0.9, naive_mean=0.2,
                                  n=1_000, decision="accept_h1")
    assert estimate.text() == ("estimate under the stopping rule +0.1235, 90% interval [-0.0100, +0.2500] "
                               "(median-unbiased, stage-wise ordering); plain mean +0.2000 "
                               "(conditional on stopping, biased)")


def test_simulate_sprt_sample_and_weights_validation() -> None:
    sample = [-1.0, 0.0, 2.0]
    for bad in ([1.0], [1.0, math.nan], [1.0, None], [[0.0, math.inf]]):
        with pytest.raises(ValueError, match=r"^sample needs at least 2 finite values$"):
            simulate_sprt(bad, 0.0, EmpiricalMeanSPRT(0.5), sequences=1)
    for weights in ([1.0, 1.0], [2.0, -1.0, 1.0], [0.0, 0.0, 0.0], [1.0, None, 1.0]):
        with pytest.raises(ValueError, match=r"^weights must be non-negative, one per sample value, with a positive sum$"):
            simulate_sprt(sample, 0.0, EmpiricalMeanSPRT(0.5), sequences=1, weights=weights)
    for sequences in (0, 2.5, True):
        with pytest.raises(ValueError, match=r"^sequences must be a positive integer, got "):
            simulate_sprt(sample, 0.0, EmpiricalMeanSPRT(0.5), sequences=sequences)
    delta = 3.0 / math.sqrt(1_000_000.5)  # default burn-in 1,000,001: one more than the default max_n
    assert default_burn_in(delta) == 1_000_001
    with pytest.raises(ValueError, match=r"^max_n must be an integer >= min_n, got 1000000$"):
        simulate_sprt(sample, 0.0, EmpiricalMeanSPRT(delta), sequences=1)
    with pytest.raises(TypeError, match=r"^test must be an EmpiricalMeanSPRT \(its design is simulated\), got float$"):
        simulate_sprt(sample, 0.0, 0.5, sequences=1)  # a delta where the design belongs
    two = simulate_sprt([0.0, 1.0], 0.5, EmpiricalMeanSPRT(0.5, min_n=20), sequences=3, seed=4)  # two values are enough
    assert len(two) == 3


def test_simulate_sprt_weights_are_counts_or_probabilities() -> None:
    """Repeating a value, giving it a count as weight, or a probability as weight (a zero weight
    drops a value) are the same resampling distribution, hence the same runs for one seed."""
    keywords = dict(true_mean=0.3, test=EmpiricalMeanSPRT(0.5, min_n=20), sequences=40, seed=9)
    repeated = simulate_sprt([-1.0, 0.0, 0.0, 0.0, 2.0], **keywords)
    as_counts = simulate_sprt([-1.0, 0.0, 2.0, 5.0], weights=[1, 3, 1, 0], **keywords)
    as_probabilities = simulate_sprt([-1.0, 0.0, 2.0], weights=[0.2, 0.6, 0.2], **keywords)
    pd.testing.assert_frame_equal(repeated, as_counts)
    pd.testing.assert_frame_equal(repeated, as_probabilities)
    uniform = simulate_sprt([-1.0, 0.0, 2.0], **keywords)
    assert not uniform.equals(repeated)


def test_simulate_sprt_defaults_and_given_burn_in() -> None:
    """Defaults: 5,000 sequences, seed 0; a given min_n (not the default burn-in of delta, 300)
    is the first look."""
    runs = simulate_sprt([-1.0, 0.0, 2.0, 3.0], 0.25, EmpiricalMeanSPRT(0.5, min_n=12))
    assert len(runs) == 5_000 and int(runs["n"].min()) == 12 and runs["n"].nunique() > 20
    pd.testing.assert_frame_equal(runs, simulate_sprt([-1.0, 0.0, 2.0, 3.0], 0.25, EmpiricalMeanSPRT(0.5, min_n=12),
                                                      sequences=5_000, seed=0))


def test_increasing_root_finds_each_root_and_evaluates_only_what_is_left() -> None:
    """Roots of tanh(x - shift) = 0.3 (at shift + atanh 0.3) and of exp(x) = 2 (at log 2, where
    false position without the Illinois step crawls from one side) on wide brackets; an element
    whose bracket is already within its tolerance is the midpoint and is never evaluated."""
    shifts = np.array([-3.0, 0.2, 5.0, 0.0, 1.0])
    calls: list[np.ndarray | None] = []

    def function(x: np.ndarray, index: np.ndarray | None) -> np.ndarray:
        calls.append(None if index is None else index.copy())
        rows = np.arange(shifts.size) if index is None else index
        assert x.shape == rows.shape
        curved = rows == 4
        return np.where(curved, np.exp(x) / 2.0 * 0.3, np.tanh(x - shifts[rows]))

    root = np.r_[shifts[:4] + math.atanh(0.3), math.log(2.0)]
    low = np.r_[shifts[:3] - 10.0, root[3] - 4e-11, -20.0]
    high = np.r_[shifts[:3] + 7.0, root[3] + 3e-11, 20.0]
    tolerance = np.full(5, 1e-10)
    tolerance[4] = 1e-9
    found = sequential._increasing_root(function, 0.3, low, high, tolerance)
    assert np.all(np.abs(found - root) <= tolerance)
    assert found[3] == 0.5 * (low[3] + high[3])
    assert calls[0] is None and calls[1] is None and len(calls) <= 50  # the two ends, then 44 steps
    later = [index for index in calls[2:] if index is not None]
    # Illinois is superlinear on tanh: 10 evaluations each from brackets 17 wide (bisection: 38)
    assert max(sum(1 for index in later if row in index) for row in range(3)) <= 12
    assert len(later) == len(calls) - 2 and all(3 not in index and np.all(np.diff(index) > 0) for index in later)
    assert later[0].tolist() == [0, 1, 2, 4]


def test_increasing_root_on_steps_and_flat_ends() -> None:
    """Where |f - level| never gets near 0 (a step at r, or a loose tolerance) the answer is the
    middle of the last bracket: within tolerance / 2 of the root; a bracket exactly as wide as
    its tolerance is not searched; a linear function is solved by the first false-position step;
    a step with tolerance 0 stops after 100 steps at its last guess, next to the step; a flat
    function (f equal at both ends: no root in the bracket) stays inside its bracket, with no
    floating-point warning."""
    import warnings
    steps = np.array([0.3, -2.0, 7.5, 0.0, 0.0, 1.0, 0.0, 0.0, 0.7])
    calls: list[np.ndarray | None] = []

    def function(x: np.ndarray, index: np.ndarray | None) -> np.ndarray:
        calls.append(index)
        rows = np.arange(steps.size) if index is None else index
        step = np.where(x >= steps[rows], 1.0, -1.0)
        return np.select([(rows <= 2) | (rows == 8), rows == 3, rows == 4, rows == 6, rows == 7],
                         [step, np.tanh(x), np.zeros_like(x), np.ones_like(x), x], np.nan) + 0.25

    low = np.array([-5.0, -9.0, 0.0, -3.0, -1.0, 1.0, -1.0, -1.0, 0.0])
    high = np.array([5.0, 4.0, 8.0, 6.0, 2.0, 1.25, 2.0, 3.0, 1.0])
    tolerance = np.array([1e-6, 1e-6, 1e-6, 1e-3, 1e-6, 0.25, 1e-6, 1e-6, 0.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        found = sequential._increasing_root(function, 0.25, low, high, tolerance)
    assert np.all(np.abs(found[:3] - steps[:3]) <= 0.5 * tolerance[:3])
    assert abs(found[3]) <= 0.5e-3
    assert low[4] <= found[4] <= high[4] and low[6] <= found[6] <= high[6]
    assert found[5] == 1.125 and all(index is None or 5 not in index for index in calls)
    assert found[7] == 0.0 and sum(1 for index in calls if index is not None and 7 in index) == 1
    assert abs(found[8] - 0.7) <= 1e-12


@pytest.mark.parametrize(("function", "level", "low", "high", "root", "evaluations"), [
    (np.exp, 2.0, -5.0, 5.0, math.log(2.0), 18),
    (lambda x: x**3, 1.0, 0.0, 4.0, 1.0, 15),
    (lambda x: -(-x) ** 3, -1.0, -4.0, 0.0, -1.0, 15),
])
def test_increasing_root_illinois_steps_on_convex_and_concave(function, level, low, high, root, evaluations) -> None:
    """False position keeps one end of a convex (concave) function's bracket fixed and crawls;
    the Illinois step (halving the value kept twice) restores fast convergence: 15-18 evaluations
    to 1e-10 here, where bisection needs 37 and plain false position more than 100."""
    count = [0]

    def counted(x: np.ndarray, index: np.ndarray | None) -> np.ndarray:
        count[0] += 1
        return function(x)

    found = sequential._increasing_root(counted, level, np.array([low]), np.array([high]), np.array([1e-10]))
    assert abs(found[0] - root) <= 1e-10 and count[0] <= evaluations + 1


def test_stagewise_probability_against_a_simulated_random_walk() -> None:
    """P(outcome >= the observed one) for a Gaussian random walk (drift nu, unit variance per step)
    looked at from step m = 10 on, stopped outside (-3, 4.5), undecided at its cap (the n of an
    undecided case), against 40,000 seeded walks (ties count half: the Brownian model has none);
    tolerance 4 standard errors plus 0.02 for the continuous-time model with Siegmund's
    correction.  The cases of one drift go in one call (one row each)."""
    m, low, high, paths = 10, -3.0, 4.5, 40_000
    generator = np.random.default_rng(12)
    cases = [(0.15, 1, 10, 5.0), (0.15, 1, 25, 0.0), (0.15, 0, 16, 2.0), (-0.1, -1, 18, 0.0), (-0.1, -1, 10, -4.0),
             (-0.1, 0, 14, -1.0), (0.02, 0, 60, 1.0), (0.02, 0, 13, -2.0), (0.02, 0, 20, 0.5), (0.3, 1, 14, 0.0),
             (0.3, 1, 20, 0.0), (0.3, -1, 20, 0.0), (0.3, 0, 15, 0.0), (-0.1, -1, 25, 0.0)]
    for nu in sorted({case[0] for case in cases}):
        mine = [case for case in cases if case[0] == nu]
        walk = np.cumsum(nu + generator.standard_normal((paths, 60)), axis=1)
        outside = (walk <= low) | (walk >= high)
        outside[:, :m - 1] = False
        simulated = []
        for _, case_decision, n, y in mine:
            cap = n if case_decision == 0 else 60
            stopped = outside[:, :cap].any(axis=1)
            stop = np.where(stopped, outside[:, :cap].argmax(axis=1) + 1, cap)
            final = walk[np.arange(paths), stop - 1]
            decision = np.where(stopped, np.where(final >= high, 1, -1), 0)
            at_first = np.where(stop == m, final, 0.0)
            rank = np.select([decision == 1, decision == 0], [1e6 - stop + at_first, final], -1e6 + stop + at_first)
            observed = {1: 1e6 - n, 0: y, -1: -1e6 + n}[case_decision] + (y if n == m and case_decision else 0.0)
            simulated.append(np.mean(rank > observed) + 0.5 * np.mean(rank == observed))
        size = len(mine)
        got = sequential._stagewise_probability(np.full(size, nu), np.full(size, low), np.full(size, high),
                                                np.array([float(case[1]) for case in mine]),
                                                np.array([float(case[2]) for case in mine]),
                                                np.array([case[3] for case in mine]), m)
        for case, p, q in zip(mine, got, simulated):
            assert abs(p - q) <= 4.0 * math.sqrt(q * (1.0 - q) / paths) + 0.02, (case, p, q)


def test_a_new_test_is_empty_and_its_design_is_checked() -> None:
    fresh = EmpiricalMeanSPRT(delta=1.0, min_n=2)  # delta 1 and a first look at 2 are allowed
    assert (fresh.mu0, fresh.mu1) == (0.0, 1.0)  # H0: mean 0 by default
    assert (fresh.n, fresh.llr, fresh.decision, fresh.used_in_last_update) == (0, 0.0, "continue", 0)
    assert fresh.values.size == 0 and fresh.counts.size == 0 and fresh.path.size == 0 and math.isnan(fresh.mean)
    fresh.update([0.0, 2.0])
    assert fresh.n == 2 and fresh.counts.tolist() == [1, 1] and fresh.values.tolist() == [0.0, 2.0]
    for keywords, name in (({"delta": math.inf, "min_n": 10}, "delta"), ({"delta": -math.inf, "min_n": 10}, "delta"),
                           ({"delta": 0.1, "min_n": 2.5}, "min_n"), ({"delta": 0.1, "min_n": True}, "min_n")):
        with pytest.raises(ValueError, match=f"^{name} must be"):
            EmpiricalMeanSPRT(**keywords)
