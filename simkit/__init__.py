"""simkit: Monte Carlo simulation and statistics for 四色牌 (Sì Sè Pái), Guangshui/Yingshan rules."""

__version__ = "0.1.0"
