"""simkit: Monte Carlo simulation and statistics for 四色牌 (Sì Sè Pái), Guangshui/Yingshan rules."""

# before any kernel compiles: one compiled version per kernel (see simkit/jit.py)
import simkit.jit  # noqa: F401

__version__ = "0.1.0"
