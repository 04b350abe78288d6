"""Does following ``simkit analyze`` gain what it predicts?  (issue 38, "advice realised")

Seat 1 follows analyze's best action (the player's view: its own determinisations and
continuation) at every decision — or, with ``--significant``, only where analyze's race
separated expert's choice from its best (status ``separated``) — and expert's choice elsewhere;
seats 0 and 2 play expert.
Each deal is played twice on the same cards: so (seat 1 following) and (expert in seat 1).

Three numbers per deal:

* realised gain: seat 1's payoff following, minus its payoff as expert (paired play);
* analyze's prediction: the sum over the changed decisions of analyze's own margin (best minus
  expert's choice);
* the performance-difference prediction: the sum over the changed decisions of
  Q(s, best) - Q(s, expert's choice) from the true state, expert continuing (the identity of
  simkit/studies/reference.py: its mean over deals equals the realised gain's).

Usage: python experiments/advice_realised.py DEALS SEED [--significant] [--rollouts N] [--belief N]
[--no-confirm]
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
from scipy import stats

from simkit.deck import deal_deck
from simkit.engine import kernel as E
from simkit.engine import layout as L
from simkit.engine.position import position_from_state
from simkit.policies.dispatch import builtin_act_state
from simkit.policies.registry import parse_policies, policy_arrays
from simkit.rng import root_key
from simkit.rules import RuleSet
from simkit.runner.play import DECK_RNG, new_scratch
from simkit.runner.rollout import OUT_PAYOFF, rollouts
from simkit.specs.analyze import AnalyzeSpec
from simkit.specs.base import Execution
from simkit.studies.analyze import analyze_position

SEAT = 1
options: dict = {}  # analyze's options (--belief, --no-confirm)
TABLE = "expert,expert,expert"


def play(seed: int, deal: int, follow: bool, significant: bool, analysis_rollouts: int, samples: int,
         rules: RuleSet) -> tuple[float, float, float, int]:
    """(seat 1's payoff, analyze's predicted gain, the identity's predicted gain, decisions changed)."""
    ids, params, _ = policy_arrays(parse_policies(TABLE))
    rules_array = rules.to_array()
    s, deck, rngs, mask, obs, work, pwork, ev, ev_n, _, _ = new_scratch()
    deal_deck(root_key(seed), deal, rngs[DECK_RNG], deck)
    E.new_deal_observation(obs)
    E.start(s, deck, deal % 3, rules_array, mask, work, ev, ev_n)
    predicted = identity = 0.0
    changed = 0
    specs = parse_policies(TABLE)
    while s[L.S_PHASE] != L.PH_OVER:
        p = int(s[L.S_PLAYER])
        E.legal_mask(s, rules_array, mask, work)
        action = int(builtin_act_state(ids[p], s, obs, mask, params[p], rngs[p], rules_array, pwork))
        if follow and p == SEAT and int(mask.sum()) >= 2:
            position = position_from_state(s, rules)
            key = seed * 100_000 + deal * 200 + changed + int(s[L.S_STOCK_POS])
            analysis = analyze_position(position, AnalyzeSpec(rollouts=analysis_rollouts, seed=key, **options),
                                        Execution(workers=2))
            best = analysis.best.action
            if best != action:
                margin = analysis.estimate(best).payoff - analysis.estimate(action).payoff
                if not significant or analysis.estimate(action).status == "separated":  # the race's verdict
                    out = rollouts(position.observation(), [best, action], [True, True], 0, samples, key + 1, specs,
                                   rules, workers=2, known=s)
                    identity += float((out[0, :, OUT_PAYOFF] - out[1, :, OUT_PAYOFF]).mean())
                    predicted += margin
                    changed += 1
                    action = best
            E.legal_mask(s, rules_array, mask, work)
        assert E.apply(s, action, rules_array, mask, work, ev, ev_n)
    return float(s[L.S_PAYOFF + SEAT]), predicted, identity, changed


def interval(x: np.ndarray) -> str:
    half = stats.t.ppf(0.975, x.size - 1) * x.std(ddof=1) / math.sqrt(x.size)
    return f"{x.mean():+.3f} [{x.mean() - half:+.3f}, {x.mean() + half:+.3f}]"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("deals", type=int)
    parser.add_argument("seed", type=int)
    parser.add_argument("--significant", action="store_true")
    parser.add_argument("--rollouts", type=int, default=256)
    parser.add_argument("--samples", type=int, default=64)
    parser.add_argument("--belief", type=int, default=0)
    parser.add_argument("--no-confirm", action="store_true")
    args = parser.parse_args()
    options.update(belief=args.belief, confirm=not args.no_confirm)
    rules = RuleSet()
    realised, predicted, identity, changed = [], [], [], []
    start = time.perf_counter()
    for deal in range(args.deals):
        base = play(args.seed, deal, False, False, args.rollouts, args.samples, rules)[0]
        payoff, p, i, c = play(args.seed, deal, True, args.significant, args.rollouts, args.samples, rules)
        realised.append(payoff - base)
        predicted.append(p)
        identity.append(i)
        changed.append(c)
    realised, predicted, identity = np.array(realised), np.array(predicted), np.array(identity)
    print(f"seat {SEAT} follows analyze ({'where significant' if args.significant else 'everywhere'}, "
          f"{args.rollouts} determinisations, {options}), expert elsewhere; {args.deals} deals of seed {args.seed}; "
          f"{np.mean(changed):.2f} decisions changed per deal ({time.perf_counter() - start:.0f} s)")
    print(f"| realised gain per deal (paired play) | {interval(realised)} |")
    print(f"| analyze's predicted gain | {interval(predicted)} |")
    print(f"| the identity's prediction (true state, expert continuing) | {interval(identity)} |")
    print(f"| realised - identity, paired | {interval(realised - identity)} |")
    print(f"| realised - analyze's prediction, paired | {interval(realised - predicted)} |")


if __name__ == "__main__":
    main()
