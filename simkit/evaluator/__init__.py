"""Hand evaluator: hu, 楼, 步, units, pattern wins and distance to complete (docs/rules.md §2-4, §6)."""

from simkit.evaluator.api import Evaluation, evaluate, evaluate_many, min_idle
from simkit.evaluator.patterns import PATTERN_NAMES, XIAOJIA_PATTERNS, pattern_names

__all__ = [
    "Evaluation",
    "evaluate",
    "evaluate_many",
    "min_idle",
    "PATTERN_NAMES",
    "XIAOJIA_PATTERNS",
    "pattern_names",
]
