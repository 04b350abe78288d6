"""Does the review's interval of a deal's total loss against the best action cover a fresh,
independent re-evaluation?  (issue 38, "honest intervals", for the loss the analysis confirms)

Deals 0 .. DEALS-1 of SEED are played with POLICY in seat 1 and expert elsewhere (seats fixed),
and seat 1 is reviewed with the defaults (``simkit review``: up to 512 determinisations per
action, racing, the confirmation; seed 0).  Each decision where the review's best differs from
the chosen action is then measured again: the two actions only, ``--fresh`` determinisations
(default 4,096), no racing, no confirmation, with analyze's seed ``FRESH_SEED`` (another seed:
independent determinisations).  A deal's fresh total is the sum of those differences; the test
is whether the review's interval of the deal's total holds it.  Deals with no such decision (the
review's total is exactly 0 with a zero interval) are not counted.

The fresh total is itself noisy: with 4,096 determinisations against the review's at most 512
its standard error is about a third of the review's, so a well-calibrated 95 % interval holds it
in about 93.5 % of deals (P(|Z| < 1.96 / sqrt(1 + 1/8))).

Usage: python experiments/review_coverage.py DEALS SEED [--policy greedy] [--fresh 4096]
"""

from __future__ import annotations

import argparse
import math
import time

from scipy import stats

from simkit.replay import replay_jsonl
from simkit.specs.analyze import AnalyzeSpec
from simkit.specs.review import ReviewSpec
from simkit.studies.analyze import analyze_position
from simkit.studies.review import parse_decision_log, review_decisions

SEAT = 1
FRESH_SEED = 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("deals", type=int)
    parser.add_argument("seed", type=int)
    parser.add_argument("--policy", default="greedy")
    parser.add_argument("--fresh", type=int, default=4096)
    args = parser.parse_args()
    table = f"expert,{args.policy},expert"
    covered = counted = 0
    start = time.perf_counter()
    misses = []
    for deal in range(args.deals):
        lines = replay_jsonl(args.seed, deal, table, seating="fixed").splitlines()
        decisions = parse_decision_log(lines)
        taken = {d.index: d.action for d in decisions}
        review = review_decisions(decisions, ReviewSpec(seat=SEAT))
        lo, hi = review.total_interval()
        if hi - lo == 0.0:
            continue
        fresh = 0.0
        for decision in review.decisions:
            if decision.loss == 0.0 and decision.loss_lo == decision.loss_hi:
                continue  # the choice is the best: no loss to measure
            best = decision.analysis.best.action
            chosen = taken[decision.index]
            fresh_spec = AnalyzeSpec(actions=[best, chosen], rollouts=args.fresh, race=False, confirm=False,
                                     seed=FRESH_SEED)
            again = analyze_position(decision.analysis.position, fresh_spec)
            fresh += again.estimate(best).payoff - again.estimate(chosen).payoff
        counted += 1
        inside = lo <= fresh <= hi
        covered += inside
        if not inside:
            misses.append((deal, round(review.total_loss, 3), round(lo, 3), round(hi, 3), round(fresh, 3)))
        print(f"deal {deal}: review {review.total_loss:+.3f} [{lo:+.3f}, {hi:+.3f}], fresh {fresh:+.3f}"
              f"{'' if inside else '  MISS'}  ({time.perf_counter() - start:.0f} s)", flush=True)
    rate = covered / counted if counted else math.nan
    ci = stats.binomtest(covered, counted).proportion_ci(0.95) if counted else None
    print(f"\n{args.policy} in seat {SEAT}, seed {args.seed}: covered {covered} of {counted} deals "
          f"({rate:.1%}, 95 % Clopper-Pearson [{ci.low:.1%}, {ci.high:.1%}]); misses {misses}")


if __name__ == "__main__":
    main()
