"""Coverage of a comparison's 95 % t interval, cut into blocks of its rows (issue 39's goals).

Reads a finished comparison folder (either design), cuts its per-row differences into
consecutive blocks of 150, 300 and 1,000 rows, and counts how often each block's 95 % t interval
holds the truth: the whole folder's mean, and ``TRUTH`` when given (e.g. the estimate of a
far larger plain-duplicate run of the same pair).  With a correct interval about 95 % cover;
one coverage figure of n blocks has a standard error of about sqrt(0.95 × 0.05 / n).

Usage: python experiments/block_coverage.py FOLDER [TRUTH]
"""

from __future__ import annotations

import sys

import numpy as np
from scipy import stats

from simkit.policies.registry import label_of_text
from simkit.runner.duplicate import comparison_design, read_comparison
from simkit.studies.compare import seating_differences

BLOCKS = (150, 300, 1000)


def coverage(rows: np.ndarray, size: int, truth: float) -> tuple[float, int]:
    """Share of the consecutive blocks of ``size`` rows whose 95 % t interval holds ``truth``."""
    blocks = rows[: rows.size // size * size].reshape(-1, size)
    half = stats.t.ppf(0.975, size - 1) * blocks.std(axis=1, ddof=1) / np.sqrt(size)
    return float((np.abs(blocks.mean(axis=1) - truth) <= half).mean()), blocks.shape[0]


def main(folder: str, truth: float | None = None) -> None:
    rows = seating_differences(folder).mean(axis=1)
    mean, se = rows.mean(), rows.std(ddof=1) / np.sqrt(rows.size)
    identity = read_comparison(folder)
    print(f"{folder}: {label_of_text(identity['policy_a'])} - {label_of_text(identity['policy_b'])}, design {comparison_design(identity)}, "
          f"seed {identity['seed']}: {rows.size:,} rows, mean {mean:+.4f} ± {se:.4f}")
    if truth is not None:
        print(f"  against {truth:+.4f}: difference {mean - truth:+.4f} ({(mean - truth) / se:+.2f} of this run's SE)")
    for size in BLOCKS:
        own, n = coverage(rows, size, mean)
        line = f"  blocks of {size}: {n:,} blocks, t interval holds the run's mean in {own:.1%}"
        if truth is not None:
            line += f", {truth:+.4f} in {coverage(rows, size, truth)[0]:.1%}"
        print(line)


if __name__ == "__main__":
    main(sys.argv[1], *(float(x) for x in sys.argv[2:3]))
