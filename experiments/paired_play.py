"""Paired play as ``simkit calibrate`` plays it, fast: POLICY in seat 1, expert in seats 0 and 2,
each deal played again with expert in seat 1 (seats fixed, deal N dealt by seat N mod 3), by the
batch kernels rather than replay logs, and no review.  Prints seat 1's gain (its payoff with
POLICY minus with expert) with a 95 % interval and POLICY's extra CPU per deal, and saves the
per-deal gains.  The tuning runs of search's settings (experiments/search_tuning.md) used it.

Usage: python experiments/paired_play.py POLICY SEED FIRST_DEAL DEALS [OUT.npy]
"""

from __future__ import annotations

import sys
import time

import numpy as np

from simkit.cards import N_SEATS
from simkit.policies.registry import parse_policies, policy_arrays
from simkit.rules import RuleSet
from simkit.runner.play import R_PAYOFF, play_deals

SEAT = 1


def seat_payoffs(policies: str, seed: int, first: int, deals: int) -> np.ndarray:
    """Seat 1's payoff in deals first .. first + deals - 1 of ``seed``, deal N dealt by seat N mod 3."""
    ids, params, _ = policy_arrays(parse_policies(policies))
    rules = RuleSet().to_array()
    return np.array([play_deals(1, seed, ids, params, rules, first_deal=k, dealer=k % N_SEATS)[0, R_PAYOFF + SEAT]
                     for k in range(first, first + deals)], dtype=np.float64)


def main(argv: list[str]) -> None:
    policy, seed, first, deals = argv[0], int(argv[1]), int(argv[2]), int(argv[3])
    table = f"expert,{policy},expert"
    seat_payoffs(table, seed, first, 1)  # compile before the clocks
    seat_payoffs("expert,expert,expert", seed, first, 1)
    start = time.process_time()
    played = seat_payoffs(table, seed, first, deals)
    middle = time.process_time()
    reference = seat_payoffs("expert,expert,expert", seed, first, deals)
    end = time.process_time()
    gain = played - reference
    half = 1.96 * gain.std(ddof=1) / np.sqrt(deals)
    print(f"{policy} seed {seed} deals {first}..{first + deals - 1}: gain {gain.mean():+.3f} "
          f"[{gain.mean() - half:+.3f}, {gain.mean() + half:+.3f}] 牌 a deal; "
          f"{(middle - start - (end - middle)) / deals:.3f} CPU-s a deal more than expert")
    if len(argv) > 4:
        np.save(argv[4], gain)


if __name__ == "__main__":
    main(sys.argv[1:])
