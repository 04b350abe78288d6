"""Statistics on simulation datasets."""

from simkit.analysis.summary import exhausted_rate, hu_distribution, win_rates

__all__ = ["exhausted_rate", "hu_distribution", "win_rates"]
