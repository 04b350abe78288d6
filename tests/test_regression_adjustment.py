"""The cross-fitted regression adjustment (simkit.analysis.regression) and
``simkit compare --variance-reduction``: the implementation against a pure-Python twin, exact
unbiasedness by enumeration, the folds' independence, the comparison's independence of batch
size and workers, and bad input as one line."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

from naive import naive_cross_fitted_adjustment
from helpers import one_line_error, run_cli
from simkit.analysis.regression import cross_fitted_adjustment
from simkit.errors import SimkitError
from simkit.storage import load_dataset
from simkit.studies.compare import (
    REFERENCE_DEALS_PER_DEAL,
    REFERENCE_FIRST_DEAL,
    compare,
    seating_differences,
)
from simkit.studies.dealt import REGRESSION_FEATURES, dealt_feature_matrix
from simkit.specs.base import Execution
from simkit.specs.compare import CompareSpec


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_adjustment_matches_the_naive_twin(seed):
    rng = np.random.default_rng(seed)
    n, p, folds = int(rng.integers(20, 60)), int(rng.integers(1, 4)), int(rng.integers(2, 6))
    features = rng.normal(size=(n, p)) + rng.integers(0, 3, size=(n, p))
    outcomes = 0.5 + features @ rng.normal(size=p) + rng.standard_t(3, size=n)
    reference = rng.normal(size=(int(rng.integers(5, 40)), p))
    unit_ids = rng.permutation(5 * n)[:n]  # distinct deal numbers, not consecutive, in any order
    fit = cross_fitted_adjustment(outcomes, features, reference, unit_ids, folds)
    adjusted, mean, standard_error = naive_cross_fitted_adjustment(outcomes.tolist(), features.tolist(),
                                                                   reference.tolist(), unit_ids.tolist(), folds)
    np.testing.assert_allclose(fit.adjusted, adjusted, rtol=1e-10, atol=1e-10)
    assert fit.test.mean == pytest.approx(mean, rel=1e-10, abs=1e-12)
    assert fit.test.standard_error == pytest.approx(standard_error, rel=1e-10)
    assert fit.test.lo < fit.test.mean < fit.test.hi


def test_per_seating_fits_average_to_the_per_deal_fit():
    """Fitting each seating's differences on the seats' features (coefficients per seating:
    which hand each policy held) and averaging the six adjustments is the fit of the per-deal
    mean: least squares is linear in the outcome, so the kernel fits the mean once."""
    rng = np.random.default_rng(7)
    features = rng.integers(0, 6, size=(90, 6)).astype(float)
    per_seating = rng.normal(size=(90, 6)) + features @ rng.normal(size=(6, 6))
    reference = rng.integers(0, 6, size=(300, 6)).astype(float)
    whole = cross_fitted_adjustment(per_seating.mean(axis=1), features, reference, folds=5)
    by_seating = [cross_fitted_adjustment(per_seating[:, s], features, reference, folds=5).adjustment
                  for s in range(6)]
    np.testing.assert_allclose(np.mean(by_seating, axis=0), whole.adjustment, atol=1e-10)


def _same_fold_estimate(outcomes, features, centre, folds):
    """The bug the cross-fitting prevents: each fold's slope fitted on that fold's own units."""
    fold_of = np.arange(outcomes.size) % folds
    estimate = 0.0
    for k in range(folds):
        own = fold_of == k
        x = features[own] - features[own].mean(axis=0)
        slope = np.linalg.lstsq(x, outcomes[own] - outcomes[own].mean(), rcond=None)[0]
        estimate += np.sum(outcomes[own] - (features[own] - centre) @ slope)
    return estimate / outcomes.size


def test_adjusted_mean_is_exactly_unbiased_by_enumeration():
    """Every sample of 6 units from a 3-point population, weighted by its probability: the
    adjusted estimate's expectation is the true mean exactly (the slope of a unit's fold comes
    from other units, independent of it).  A slope fitted on the unit's own fold is biased
    here, so a kernel that did so fails this test."""
    support_x = np.array([[0.0], [1.0], [3.0]])
    support_y = np.array([0.0, 2.0, 1.0])  # not linear in x: in-fold fitting then biases the mean
    probabilities = np.array([0.5, 0.3, 0.2])
    truth = float(probabilities @ support_y)
    # the reference: the population itself, weighted as it is drawn (its mean is E[x] exactly)
    reference = np.repeat(support_x, [5, 3, 2], axis=0)
    expected = same_fold = 0.0
    for sample in itertools.product(range(3), repeat=6):
        weight = float(np.prod(probabilities[list(sample)]))
        outcomes, features = support_y[list(sample)], support_x[list(sample)]
        expected += weight * cross_fitted_adjustment(outcomes, features, reference, folds=3).test.mean
        same_fold += weight * _same_fold_estimate(outcomes, features, reference.mean(axis=0), 3)
    assert expected == pytest.approx(truth, abs=1e-12)
    assert abs(same_fold - truth) > 1e-3  # the enumeration sees the same-fold bias


def test_a_folds_outcomes_never_move_its_own_adjustment():
    rng = np.random.default_rng(3)
    features = rng.normal(size=(50, 2))
    outcomes = features @ [1.0, -2.0] + rng.normal(size=50)
    reference = rng.normal(size=(100, 2))
    before = cross_fitted_adjustment(outcomes, features, reference, folds=5)
    for fold in range(5):
        changed = outcomes.copy()
        changed[np.arange(50) % 5 == fold] += rng.normal(scale=10.0, size=10)
        after = cross_fitted_adjustment(changed, features, reference, folds=5)
        own = np.arange(50) % 5 == fold
        np.testing.assert_array_equal(after.adjustment[own], before.adjustment[own])
        assert not np.allclose(after.adjustment[~own], before.adjustment[~own])


def test_interval_covers_on_synthetic_data():
    """95 % t interval (reference noise included) over 600 synthetic samples of 150 units with
    a known mean and a strong covariate: coverage 95 % within its noise, and the adjustment
    narrows the interval."""
    rng = np.random.default_rng(11)
    covered, ratios = 0, []
    for _ in range(600):
        x = rng.normal(size=(150, 3))
        y = 1.0 + x @ [1.0, 0.5, 0.0] + rng.normal(size=150)
        fit = cross_fitted_adjustment(y, x, rng.normal(size=(1500, 3)), folds=10)
        covered += fit.test.lo <= 1.0 <= fit.test.hi
        ratios.append(y.var(ddof=1) / 150 / fit.test.standard_error ** 2)
    assert 0.93 <= covered / 600 <= 0.97
    assert np.median(ratios) > 1.8  # 2.25 for a perfect fit with 10 % of the gain lost to the reference


@pytest.mark.parametrize("bad, words", [
    (dict(outcomes=[1.0]), "at least 2"),
    (dict(features=np.zeros((4, 2))), "rows"),
    (dict(reference_features=np.zeros((1, 1))), "at least 2 rows"),
    (dict(reference_features=np.zeros((5, 2))), "columns"),
    (dict(folds=1), "folds"),
    (dict(unit_ids=[0, 0, 1, 2, 3]), "distinct"),
    (dict(outcomes=[1.0, np.nan, 0.0, 1.0, 2.0]), "finite"),
])
def test_bad_adjustment_input_is_one_line(bad, words):
    arguments = dict(outcomes=np.arange(5.0), features=np.arange(5.0)[:, None],
                     reference_features=np.arange(4.0)[:, None], folds=2)
    arguments.update(bad)
    with pytest.raises(SimkitError) as info:
        cross_fitted_adjustment(**arguments)
    assert words in str(info.value) and "\n" not in str(info.value)


def test_dealt_feature_matrix_is_the_datasets_dealt_columns(tmp_path):
    compare(CompareSpec("greedy", "random", deals=40, seed=5, batch_size=40), tmp_path / "c", Execution(quiet=True))
    frame = load_dataset(tmp_path / "c" / "seating-BAB")
    columns = [f"dealt_{name}_{seat}" for seat in range(3) for name, _ in REGRESSION_FEATURES]
    np.testing.assert_array_equal(dealt_feature_matrix(5, 40), frame[columns].to_numpy(dtype=float))
    np.testing.assert_array_equal(dealt_feature_matrix(5, 10, 30), dealt_feature_matrix(5, 40)[30:])


def _without_cpu(payload: dict) -> dict:
    return {k: v for k, v in payload.items() if k not in ("cpu_seconds", "cpu_duplicate_seconds",
                                                          "cpu_per_deal_duplicate_seconds",
                                                          "cpu_per_deal_adjustment_seconds",
                                                          "efficiency_vs_duplicate")}


def test_regression_compare_is_the_same_for_any_batch_size_and_workers(tmp_path):
    runs = [compare(CompareSpec("greedy", "random", deals=90, seed=8, batch_size=size, variance_reduction="regression"),
                    tmp_path / f"run{i}", Execution(workers=workers, quiet=True))
            for i, (size, workers) in enumerate([(90, 1), (20, 1), (35, 2)])]
    payloads = [_without_cpu(r.to_json()) for r in runs]
    assert payloads[0] == payloads[1] == payloads[2]
    first = runs[0]
    assert first.variance_reduction_method == "regression" and payloads[0]["variance_reduction_method"] == "regression"
    assert payloads[0]["regression"]["reference_deals"] == REFERENCE_DEALS_PER_DEAL * 90
    # the figures are the statistics layer's on the folder's differences and the dealt features
    per = seating_differences(tmp_path / "run0")
    fit = cross_fitted_adjustment(per.mean(axis=1), dealt_feature_matrix(8, 90),
                                  dealt_feature_matrix(8, 900, REFERENCE_FIRST_DEAL), np.arange(90), 10)
    assert first.adjusted.test.mean == fit.test.mean and first.adjusted.test.standard_error == fit.test.standard_error
    assert first.test.mean == pytest.approx(per.mean())  # plain duplicate's estimate is still there, unchanged


DOCUMENTED_FIELDS = {"policy_a", "policy_b", "seed", "deals", "confidence", "duplicate", "adjusted",
                     "variance_reduction", "value_model", "sprt", "cpu_seconds", "cpu_duplicate_seconds",
                     "efficiency_vs_duplicate"}


def _json_of(argv, capsys) -> dict:
    from simkit.cli import main

    assert main([str(a) for a in argv]) == 0
    return json.loads(capsys.readouterr().out)


def test_json_keeps_its_fields_and_names_the_method(tmp_path, capsys):
    argv = ["compare", "greedy", "random", "--deals", 30, "--seed", 4, "--out", tmp_path / "c", "--json", "--quiet",
            "--batch-size", 30]
    plain = _json_of(argv, capsys)
    assert DOCUMENTED_FIELDS <= set(plain) and plain["variance_reduction_method"] == "none"
    assert plain["adjusted"] is None and plain["regression"] is None
    adjusted = _json_of(argv + ["--variance-reduction", "regression"], capsys)
    assert DOCUMENTED_FIELDS <= set(adjusted) and adjusted["variance_reduction_method"] == "regression"
    assert adjusted["duplicate"] == plain["duplicate"] and adjusted["value_model"] is None
    assert set(adjusted["adjusted"]) >= {"estimate", "t_lo", "t_hi", "standard_error", "p_value"}
    assert adjusted["variance_reduction"]["adjusted_vs_duplicate"] > 0


def test_unknown_method_and_bad_combinations_are_one_line_errors(tmp_path, capsys):
    with pytest.raises(SimkitError) as info:
        compare(CompareSpec("greedy", "random", deals=10, variance_reduction="cuped"), tmp_path / "a",
                Execution(quiet=True))
    assert "variance_reduction must be one of none, regression, luck" in str(info.value)
    assert "\n" not in str(info.value) and not (tmp_path / "a").exists()
    for method, luck, sprt, words in [("none", True, None, "luck"), ("regression", "m.npz", None, "luck"),
                                      ("regression", None, (0.2, 0.05, 0.05), "sequential")]:
        with pytest.raises(SimkitError) as info:
            CompareSpec("greedy", "random", variance_reduction=method, luck=luck, sprt=sprt)
        assert words in str(info.value) and "\n" not in str(info.value)
    rc, err = run_cli(["compare", "greedy", "random", "--out", tmp_path / "b", "--variance-reduction", "cuped"],
                      capsys)
    one_line_error(rc, err, "--variance-reduction", "none, regression, luck", "'cuped'")
    rc, err = run_cli(["compare", "greedy", "random", "--out", tmp_path / "b", "--variance-reduction", "regression",
                       "--sprt", "0.2,0.05,0.05"], capsys)
    one_line_error(rc, err, "sequential")
    rc, err = run_cli(["compare", "greedy", "random", "--out", tmp_path / "b", "--variance-reduction", "none",
                       "--luck"], capsys)
    one_line_error(rc, err, "--luck")
    assert not (tmp_path / "b").exists()
