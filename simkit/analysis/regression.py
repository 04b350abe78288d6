"""Cross-fitted regression adjustment of a mean (control variates on what is known before play).

For units i = 0 .. n-1 (the deals of a comparison) with an outcome ``y_i`` (the deal's paired
difference) and features ``x_i`` known before the outcome (the dealt hands' features), the
adjusted estimate of E[y] is

    theta = mean_i [ y_i - (x_i - m) . b_fold(i) ]

where ``b_k`` is the least-squares slope of y on x fitted on the units of every fold *but* k
(K-fold cross-fitting; the fold of a unit is ``unit_id % folds``, so it depends on the unit's
number only, never on how the units were computed), and ``m`` is the mean of the features over
a *reference* sample of units drawn independently of the outcomes (deals that are only dealt,
never played).  Each bracket has expectation E[y] exactly: ``b_fold(i)`` is a function of other
units only, hence independent of ``x_i``, and ``m`` is independent of both, so
E[(x_i - m) . b] = (E[x] - E[x]) . E[b] = 0 for any sample size (the slopes are finite: a
minimum-norm least-squares fit).  This is CUPED (Deng, Xu, Kohavi & Walker 2013, "Improving the
sensitivity of online controlled experiments by utilizing pre-experiment data", WSDM) with the
coefficients cross-fitted (Chernozhukov et al. 2018, "Double/debiased machine learning for
treatment and structural parameters", Econometrics Journal), and the covariate's mean taken
from an independent sample rather than from the units themselves (with the units' own mean a
one-sample adjustment cancels, and fitting on a unit's own fold biases it).

Standard error: ``sqrt(s^2 / n + bbar' S bbar / M)``, with ``s^2`` the variance of the adjusted
values, ``bbar`` the folds' slopes averaged with their units' weights, ``S`` the covariance of
the ``M`` reference rows: the second term is the reference mean's own noise.  The interval is
Student t on n - 1 degrees of freedom (asymptotically valid, as for cross-fitted estimators).

>>> rng = np.random.default_rng(1)
>>> x = rng.normal(size=(400, 1)); y = 2.0 + 3.0 * x[:, 0] + rng.normal(size=400)
>>> result = cross_fitted_adjustment(y, x, rng.normal(size=(40_000, 1)), folds=4)
>>> bool(abs(result.test.mean - 2.0) < 2 * result.test.standard_error), result.coefficients.shape
(True, (4, 1))
>>> round(float(y.std(ddof=1) / 20 / result.test.standard_error), 1)  # plain standard error / adjusted
2.7
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
from scipy import stats

from simkit.analysis.results import MeanTest, Result
from simkit.analysis.stats import check_confidence, t_statistic_and_p
from simkit.errors import SimkitError

DEFAULT_FOLDS = 10  # folds of the cross-fitting: each slope is fitted on 90 % of the units

__all__ = ["DEFAULT_FOLDS", "RegressionAdjustment", "cross_fitted_adjustment"]


@dataclasses.dataclass(frozen=True)
class RegressionAdjustment(Result):
    """The cross-fitted regression adjustment of a mean (:func:`cross_fitted_adjustment`):
    ``adjusted`` (per unit: outcome minus ``adjustment``), ``adjustment`` (per unit:
    ``(x - reference_mean) . coefficients[fold]``), the folds' slopes ``coefficients``
    (folds x features), the reference sample's mean and size, and ``test``: the estimate (the
    mean of ``adjusted``) with its standard error (the reference mean's noise included), t
    interval, t and two-sided p-value against 0."""

    adjusted: np.ndarray = dataclasses.field(repr=False, compare=False)
    adjustment: np.ndarray = dataclasses.field(repr=False, compare=False)
    coefficients: np.ndarray = dataclasses.field(repr=False, compare=False)
    reference_mean: np.ndarray = dataclasses.field(repr=False, compare=False)
    reference_size: int
    folds: int
    test: MeanTest


def _fold_slopes(outcomes: np.ndarray, features: np.ndarray, fold_of_unit: np.ndarray, folds: int) -> np.ndarray:
    """(folds, p): for each fold k, the least-squares slope (minimum norm, with an intercept) of
    ``outcomes`` on ``features`` over the units whose fold is not k; zero where fewer than 2
    units are left to fit on."""
    slopes = np.zeros((folds, features.shape[1]))
    for fold in range(folds):
        training = fold_of_unit != fold
        if np.count_nonzero(training) < 2:
            continue
        centred_features = features[training] - features[training].mean(axis=0)
        centred_outcomes = outcomes[training] - outcomes[training].mean()
        slopes[fold] = np.linalg.lstsq(centred_features, centred_outcomes, rcond=None)[0]
    return slopes


def _adjusted_mean_test(adjusted: np.ndarray, reference_variance: float, confidence: float) -> MeanTest:
    """The t test of the adjusted values' mean with standard error
    ``sqrt(var(adjusted) / n + reference_variance)``."""
    n = adjusted.size
    mean = float(adjusted.mean())
    spread = float(adjusted.std(ddof=1))
    standard_error = math.sqrt(spread**2 / n + max(reference_variance, 0.0))
    half_width = float(stats.t.ppf(0.5 + confidence / 2, n - 1)) * standard_error
    t_statistic, p_value = t_statistic_and_p(mean, standard_error, n - 1)
    return MeanTest(mean, mean - half_width, mean + half_width, float(t_statistic), p_value, int(n),
                    standard_error * math.sqrt(n), standard_error, confidence)


def _as_matrix(values, name: str, rows: int | None = None, columns: int | None = None) -> np.ndarray:
    """``values`` as a finite float array: 1-d for ``outcomes``, else 2-d (rows x columns)."""
    try:
        array = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise SimkitError(f"{name} must be numbers, got {type(values).__name__}") from None
    if array.ndim != (1 if name == "outcomes" else 2):
        raise SimkitError(f"{name} must be a {'1-d array' if name == 'outcomes' else '2-d array (units x features)'}, "
                          f"got shape {array.shape}")
    if rows is not None and array.shape[0] != rows:
        raise SimkitError(f"{name} must have {rows} rows (one per unit), got {array.shape[0]}")
    if columns is not None and array.shape[1] != columns:
        raise SimkitError(f"{name} must have {columns} columns (the features), got {array.shape[1]}")
    if not np.all(np.isfinite(array)):
        raise SimkitError(f"{name} must be finite (no NaN or infinity)")
    return array


def cross_fitted_adjustment(outcomes, features, reference_features, unit_ids=None, folds: int = DEFAULT_FOLDS,
                            confidence: float = 0.95) -> RegressionAdjustment:
    """The cross-fitted regression-adjusted mean of ``outcomes`` (n) on ``features`` (n x p),
    the features centred on the mean of ``reference_features`` (M x p, M >= 2: rows drawn from
    the features' distribution independently of the outcomes).  ``unit_ids`` (default 0 .. n-1,
    distinct integers >= 0) key the folds: unit i is in fold ``unit_ids[i] % folds``.  Unbiased
    for E[outcome] at every n (module docstring); a one-line :class:`SimkitError` for bad input."""
    confidence = check_confidence(confidence)
    y = _as_matrix(outcomes, "outcomes")
    if y.size < 2:
        raise SimkitError(f"outcomes needs at least 2 values, got {y.size}")
    x = _as_matrix(features, "features", rows=y.size)
    reference = _as_matrix(reference_features, "reference_features", columns=x.shape[1])
    if reference.shape[0] < 2:
        raise SimkitError(f"reference_features needs at least 2 rows, got {reference.shape[0]}")
    if isinstance(folds, bool) or not isinstance(folds, (int, np.integer)) or folds < 2:
        raise SimkitError(f"folds must be an integer >= 2, got {folds!r}")
    ids = np.arange(y.size) if unit_ids is None else np.asarray(unit_ids)
    if ids.shape != (y.size,) or not np.issubdtype(ids.dtype, np.integer) or (ids.size and ids.min() < 0) \
            or np.unique(ids).size != ids.size:
        raise SimkitError("unit_ids must be distinct integers >= 0, one per outcome")
    fold_of_unit = (ids % int(folds)).astype(np.int64)
    slopes = _fold_slopes(y, x, fold_of_unit, int(folds))
    reference_mean = reference.mean(axis=0)
    adjustment = np.einsum("ij,ij->i", x - reference_mean, slopes[fold_of_unit])
    adjusted = y - adjustment
    weights = np.bincount(fold_of_unit, minlength=int(folds)) / y.size
    average_slope = weights @ slopes
    covariance = np.atleast_2d(np.cov(reference, rowvar=False, ddof=1))
    reference_variance = float(average_slope @ covariance @ average_slope) / reference.shape[0]
    test = _adjusted_mean_test(adjusted, reference_variance, confidence)
    return RegressionAdjustment(adjusted, adjustment, slopes, reference_mean, int(reference.shape[0]), int(folds),
                                test)
