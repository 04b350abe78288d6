"""mc against greedy, duplicate design: the same deals with mc in one seat and greedy in the
others, against greedy in every seat; the per-deal payoff difference of mc's seat is paired.

    python experiments/mc_vs_greedy.py [deals per seat] [seed] [mc parameters, e.g. 16,4,1.5,0]
"""

from __future__ import annotations

import sys
import time

import numpy as np

from simkit.analysis.results import format_level
from simkit.analysis.stats import mean_interval, paired_mean_test
from simkit.bench import hardware_line
from simkit.policies.registry import parse_policies, policy_arrays
from simkit.rules import RuleSet
from simkit.runner.play import R_PAYOFF, play_deals

CONFIDENCE = 0.95


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 11
    mc = "mc:" + sys.argv[3] if len(sys.argv) > 3 else "mc"
    rules = RuleSet().to_array()
    diffs = []
    start = time.perf_counter()
    for seat in range(3):
        names = ["greedy"] * 3
        base_ids, base_params, _ = policy_arrays(parse_policies(",".join(names)))
        names[seat] = mc
        ids, params, _ = policy_arrays(parse_policies(",".join(names)))
        first = seat * n  # different deals for each seating
        with_mc = play_deals(n, seed, ids, params, rules, first_deal=first)
        baseline = play_deals(n, seed, base_ids, base_params, rules, first_deal=first)
        d = with_mc[:, R_PAYOFF + seat] - baseline[:, R_PAYOFF + seat]
        diffs.append(d)
        print(f"mc in seat {seat}: mean payoff {with_mc[:, R_PAYOFF + seat].mean():+.4f} vs greedy "
              f"{baseline[:, R_PAYOFF + seat].mean():+.4f} (n={n})")
    d = np.concatenate(diffs).astype(float)
    interval = mean_interval(d, CONFIDENCE)
    test = paired_mean_test(d, CONFIDENCE)
    print(f"{mc} - greedy, paired per deal: {interval.estimate:+.4f} 牌/deal, {format_level(CONFIDENCE)} CI "
          f"[{interval.lo:+.4f}, {interval.hi:+.4f}] (t), t={test.t:.2f}, p={test.p_value:.2g}, n={d.size} deals; "
          f"{time.perf_counter() - start:.0f} s")
    print(f"hardware: {hardware_line()}")


if __name__ == "__main__":
    main()
