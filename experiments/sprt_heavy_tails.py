"""Error rates of ``compare --sprt``'s sequential test under heavy tails, by burn-in (issue 39).

The construction of the audit: the per-deal differences of 5,000 greedy − patient duplicate
deals of a seed (the mean of the six seatings; plain), and the same with three deals replaced by
+34.5, +30 and +28 牌 (heavy).  Each sample is resampled with replacement, shifted to μ = 0
(α = P(accept H1)) and to μ = δ (β = P(accept H0)), and the test is run on ``SEQUENCES`` streams
per hypothesis (:func:`simkit.analysis.sequential.simulate_sprt`, δ = 0.2, α = β = 0.05);
coverage is the share of the 95 % intervals after stopping that hold the true mean.

Usage: python experiments/sprt_heavy_tails.py SEED SEQUENCES BURN_IN [BURN_IN ...]
Prints a Markdown table (one row per sample and burn-in) with the standard error of α and β.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from simkit.analysis.sequential import EmpiricalMeanSPRT, simulate_sprt
from simkit.policies.registry import parse_policy
from simkit.runner.luck import duplicate_luck, zero_value_block

DELTA = 0.2
HEAVY = (34.5, 30.0, 28.0)


def samples(seed: int, deals: int = 5_000) -> dict[str, np.ndarray]:
    pay, _ = duplicate_luck(parse_policy("greedy"), parse_policy("patient"), seed, deals, zero_value_block())
    plain = pay.mean(axis=1)
    heavy = plain.copy()
    heavy[: len(HEAVY)] = HEAVY  # deals 0..2 of the seed: chosen by position, not by value
    return {"plain": plain, "heavy": heavy}


def main(seed: int, sequences: int, burn_ins: list[int]) -> None:
    print(f"seed {seed}, {sequences:,} sequences per hypothesis, δ = {DELTA}, α = β = 0.05\n")
    print("| sample | burn-in | α | β | coverage | ASN (μ = 0 / μ = δ) | seconds |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, sample in samples(seed).items():
        for burn_in in burn_ins:
            start = time.perf_counter()
            design = EmpiricalMeanSPRT(DELTA, min_n=burn_in)
            null = simulate_sprt(sample, 0.0, design, sequences=sequences, seed=seed * 10 + 1, confidence=0.95)
            alt = simulate_sprt(sample, DELTA, design, sequences=sequences, seed=seed * 10 + 2, confidence=0.95)
            alpha = float((null["decision"] == 1).mean())
            beta = float((alt["decision"] == -1).mean())
            se_a, se_b = (np.sqrt(p * (1 - p) / sequences) for p in (alpha, beta))
            cover = float(np.mean(np.concatenate([(null["lo"] <= 0.0) & (0.0 <= null["hi"]),
                                                  (alt["lo"] <= DELTA) & (DELTA <= alt["hi"])])))
            print(f"| {name} | {burn_in} | {alpha:.4f} ± {se_a:.4f} | {beta:.4f} ± {se_b:.4f} | {cover:.3f} | "
                  f"{null['n'].mean():.0f} / {alt['n'].mean():.0f} | {time.perf_counter() - start:.0f} |",
                  flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]), [int(b) for b in sys.argv[3:]])
