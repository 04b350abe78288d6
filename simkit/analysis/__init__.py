"""Statistics on simulation datasets: summaries, comparisons, hand probabilities, plots.

Submodules: :mod:`~simkit.analysis.summary` (win rates, dealer advantage, distributions,
patterns), :mod:`~simkit.analysis.stats` (intervals, bootstrap, tests, SPRT),
:mod:`~simkit.analysis.compare` (duplicate comparisons), :mod:`~simkit.analysis.probability`
(dealt-hand events), :mod:`~simkit.analysis.plots`, :mod:`~simkit.analysis.report`.
"""

from simkit.analysis.summary import (
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

__all__ = [
    "dealer_advantage",
    "distributions",
    "exhausted_rate",
    "hu_distribution",
    "pattern_frequencies",
    "tail_probabilities",
    "win_kinds",
    "win_rates",
    "win_rates_by_policy",
]
