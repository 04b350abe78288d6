"""Statistics on data: summaries of datasets, intervals, tests, sequential tests, ratings,
exact probabilities, plots and reports.  Nothing here plays a deal: what runs simulations
to answer a question (comparisons, tournaments, tuning, equity, dealt-hand Monte Carlo) is
:mod:`simkit.studies`, the layer above.

Submodules: :mod:`~simkit.analysis.summary` (win rates, dealer advantage, distributions,
patterns), :mod:`~simkit.analysis.stats` (intervals, bootstrap, tests),
:mod:`~simkit.analysis.sequential` (SPRT), :mod:`~simkit.analysis.regression` (cross-fitted
regression adjustment of a mean), :mod:`~simkit.analysis.ratings` (Bradley-Terry),
:mod:`~simkit.analysis.exact` (dealt-hand events, exact), :mod:`~simkit.analysis.plots`,
:mod:`~simkit.analysis.report`.

Every summary returns a pandas DataFrame or a frozen result object of
:mod:`~simkit.analysis.results` (``.to_frame()`` gives it as a one-row DataFrame); intervals are
two-sided at ``confidence`` (default 0.95).  Plot functions draw on ``ax=`` and return the Axes.
"""

from simkit.analysis.results import (
    EqualRatesTest,
    Interval,
    MeanTest,
    Result,
    TwoProportionTest,
    VarianceReduction,
    WaldBoundaries,
    WelchTest,
    format_level,
)
from simkit.analysis.summary import (
    HuDistribution,
    dealer_advantage,
    distributions,
    exhausted_rate,
    hu_distribution,
    pattern_frequencies,
    tail_probabilities,
    win_kinds,
    win_rates,
    win_rates_by_policy,
)
from simkit.errors import DegenerateDataWarning

__all__ = [
    "DegenerateDataWarning",
    "EqualRatesTest",
    "HuDistribution",
    "Interval",
    "MeanTest",
    "Result",
    "TwoProportionTest",
    "VarianceReduction",
    "WaldBoundaries",
    "WelchTest",
    "dealer_advantage",
    "distributions",
    "exhausted_rate",
    "format_level",
    "hu_distribution",
    "pattern_frequencies",
    "tail_probabilities",
    "win_kinds",
    "win_rates",
    "win_rates_by_policy",
]
