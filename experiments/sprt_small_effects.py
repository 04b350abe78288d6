"""Error rates of ``compare --sprt``'s sequential test at small effects under heavy tails (issue 50).

The sample is the audit's heavy-tailed one (issues 39 and 50): 5,000 greedy − patient per-deal
differences of seed 5151 with three deals replaced by +34.5, +30 and +28 牌
(``tests/data/greedy_patient_heavy_differences.csv``; built by ``experiments/sprt_heavy_tails.py``'s
``samples(5151)["heavy"]``).  For each δ and nominal (α, β) the sample is resampled with
replacement, shifted to μ = 0 (α = P(accept H1)) and to μ = δ (β = P(accept H0)), and the test
of ``compare --sprt`` (:func:`simkit.analysis.sequential.simulate_sprt`) is run on ``SEQUENCES``
streams per hypothesis, with the default burn-in (:func:`simkit.analysis.sequential.default_burn_in`)
or, given ``BURN_IN``, that burn-in at every δ (300: the fixed default before issue 50).

Usage: python experiments/sprt_small_effects.py SEQUENCES [SEED [BURN_IN]]
Prints a Markdown table: α and β measured (± one standard error), their ratio to nominal, the
mean number of deals to stop under each hypothesis and the share of streams that stop at the
first look (the burn-in).
"""

from __future__ import annotations

import pathlib
import sys
import time

import numpy as np
import pandas as pd

from simkit.analysis.sequential import EmpiricalMeanSPRT, default_burn_in, simulate_sprt

SAMPLE = pathlib.Path(__file__).resolve().parents[1] / "tests" / "data" / "greedy_patient_heavy_differences.csv"
DELTAS = (0.1, 0.2)
LEVELS = ((0.05, 0.05), (0.05, 0.10))


def heavy_sample() -> tuple[np.ndarray, np.ndarray]:
    table = pd.read_csv(SAMPLE, comment="#")
    return table["value"].to_numpy(dtype=float), table["count"].to_numpy(dtype=np.int64)


def main(sequences: int, seed: int = 50, burn_in: int | None = None) -> None:
    values, counts = heavy_sample()
    print(f"heavy sample ({counts.sum():,} deals), {sequences:,} sequences per hypothesis, seed {seed}\n")
    print("| δ | burn-in | nominal α, β | α | β | α / nominal | β / nominal | mean deals (μ = 0 / μ = δ) "
          "| stopped at the burn-in (μ = 0 / μ = δ) | seconds |")
    print("|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    for d, delta in enumerate(DELTAS):
        for l, (alpha, beta) in enumerate(LEVELS):
            start = time.perf_counter()
            stream = seed * 100 + 10 * d + 2 * l
            first_look = default_burn_in(delta) if burn_in is None else burn_in
            design = EmpiricalMeanSPRT(delta, alpha, beta, min_n=first_look)
            null = simulate_sprt(values, 0.0, design, sequences=sequences, seed=stream, weights=counts)
            alt = simulate_sprt(values, delta, design, sequences=sequences, seed=stream + 1, weights=counts)
            a = float((null["decision"] == 1).mean())
            b = float((alt["decision"] == -1).mean())
            se_a, se_b = (np.sqrt(p * (1 - p) / sequences) for p in (a, b))
            first = [float((runs["n"] == first_look).mean()) for runs in (null, alt)]
            print(f"| {delta} | {first_look} | {alpha}, {beta} | {a:.4f} ± {se_a:.4f} | {b:.4f} ± {se_b:.4f} | {a / alpha:.2f} | "
                  f"{b / beta:.2f} | {null['n'].mean():.0f} / {alt['n'].mean():.0f} | "
                  f"{first[0]:.2f} / {first[1]:.2f} | {time.perf_counter() - start:.0f} |", flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]), *(int(x) for x in sys.argv[2:4]))
