"""Result objects of the analysis functions, and how an interval's level is written.

Every summary of :mod:`simkit.analysis` returns either a pandas DataFrame or one of these
frozen dataclasses: typed fields, and :meth:`Result.to_frame` for a one-row DataFrame (so that
results of several calls concatenate with ``pd.concat``).  Intervals are two-sided at the
``confidence`` they record; :func:`format_level` writes that level as report text does.

>>> interval = Interval(estimate=0.5, lo=0.4, hi=0.6, confidence=0.9, method="Wilson", n=100)
>>> interval.to_frame().columns.tolist()
['estimate', 'lo', 'hi', 'confidence', 'method', 'n']
>>> format_level(interval.confidence)
'90%'
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
import pandas as pd

__all__ = [
    "EqualRatesTest",
    "Interval",
    "MeanTest",
    "Result",
    "TwoProportionTest",
    "VarianceReduction",
    "WaldBoundaries",
    "WelchTest",
    "format_level",
]

# metadata of a field that stays out of to_frame() (arrays, nested results)
NOT_IN_FRAME = {"frame": False}


def format_level(confidence: float) -> str:
    """A confidence level as report text: ``0.95`` -> ``'95%'``, ``0.999`` -> ``'99.9%'``.

    >>> format_level(0.95), format_level(0.9), format_level(0.99), format_level(0.999), format_level(0.68)
    ('95%', '90%', '99%', '99.9%', '68%')
    """
    return f"{round(100.0 * float(confidence), 10):g}%"


def finite_or_none(value: Any) -> Any:
    """``value`` with every non-finite float (at any depth of dicts and lists) replaced by None,
    numpy scalars as Python numbers: what a result's ``to_json`` writes (JSON has no NaN).

    >>> finite_or_none({"a": [1.0, float("nan")], "b": np.int64(3)})
    {'a': [1.0, None], 'b': 3}
    """
    if isinstance(value, dict):
        return {k: finite_or_none(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite_or_none(v) for v in value]
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, np.integer):
        return int(value)
    return value


@dataclasses.dataclass(frozen=True)
class Result:
    """Base of the result objects: :meth:`to_dict` and :meth:`to_frame` over the scalar fields."""

    def to_dict(self) -> dict[str, Any]:
        """The fields (those that are no arrays or nested results) by name."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.metadata.get("frame", True)}

    def to_frame(self) -> pd.DataFrame:
        """One row, one column per field of :meth:`to_dict`."""
        return pd.DataFrame([self.to_dict()])


@dataclasses.dataclass(frozen=True)
class Interval(Result):
    """An estimate with its two-sided interval at ``confidence``; ``method`` names the interval
    (``Wilson``, ``t``, ``BCa bootstrap``, ...) and ``n`` the sample it is drawn from.  A
    degenerate sample gives NaN bounds (see :func:`~simkit.analysis.stats.paired_bootstrap_interval`)."""

    estimate: float
    lo: float
    hi: float
    confidence: float
    method: str
    n: int

    @property
    def width(self) -> float:
        """hi - lo."""
        return self.hi - self.lo

    def contains(self, value: float) -> bool:
        """lo <= value <= hi (False for NaN bounds)."""
        return bool(self.lo <= value <= self.hi)


@dataclasses.dataclass(frozen=True)
class MeanTest(Result):
    """One-sample t test that a mean is 0, with the t interval (:func:`~simkit.analysis.stats.paired_mean_test`)."""

    mean: float
    lo: float
    hi: float
    t: float
    p_value: float
    n: int
    std: float
    standard_error: float
    confidence: float


@dataclasses.dataclass(frozen=True)
class TwoProportionTest(Result):
    """Two independent proportions: difference p1 - p2 with Newcombe's interval and the pooled z
    test (:func:`~simkit.analysis.stats.two_proportion_test`)."""

    p1: float
    p2: float
    difference: float
    lo: float
    hi: float
    z: float
    p_value: float
    confidence: float


@dataclasses.dataclass(frozen=True)
class WelchTest(Result):
    """Welch's comparison of two means: difference mean(a) - mean(b), its t interval with
    Welch-Satterthwaite ``dof``, ``t`` and the two-sided ``p_value``
    (:func:`~simkit.studies.equity.welch_test`)."""

    difference: float
    lo: float
    hi: float
    t: float
    p_value: float
    dof: float
    confidence: float


@dataclasses.dataclass(frozen=True)
class EqualRatesTest(Result):
    """Chi-square goodness of fit of K equally likely categories
    (:func:`~simkit.analysis.stats.equal_rates_test`)."""

    statistic: float
    dof: int
    p_value: float
    n: float
    expected: float


@dataclasses.dataclass(frozen=True)
class VarianceReduction(Result):
    """Variance of a duplicate design against unpaired play
    (:func:`~simkit.analysis.stats.duplicate_variance_reduction`)."""

    var_paired_per_deal: float
    var_unpaired_per_game: float
    games_per_deal: int
    reduction_factor: float


@dataclasses.dataclass(frozen=True)
class WaldBoundaries(Result):
    """Wald's SPRT boundaries of the log-likelihood ratio for error rates ``alpha`` and ``beta``
    (:func:`~simkit.analysis.stats.wald_boundaries`)."""

    lower: float
    upper: float
    alpha: float
    beta: float


def nan_interval(estimate: float, confidence: float, method: str, n: int) -> Interval:
    """An interval that cannot be computed: NaN bounds around ``estimate``."""
    return Interval(float(estimate), math.nan, math.nan, float(confidence), method, int(n))
