"""Does the belief over hidden cards (:mod:`simkit.runner.belief`) make analyze's values truer?
(issue 38, items 1-2)

For decisions of seat 1 in played deals (a table of one policy), with at least two legal actions,
three estimates of the value Q(s, a) of the action the seat took (a1) and of another action (a2,
analyze's best under the default opponent model, or its runner-up when that is a1):

(u) analyze's default: uniform determinisations made closer to complete (``sharpen``);
(p) analyze with ``belief``: hidden cards drawn given the table's play (Metropolis chains);
(t) the truth: rollouts from the true state, only the stock reordered, the table continuing.

(t) is unbiased for the value of the true state, so over decisions the mean squared error of an
estimator against (t) is its own squared error plus (t)'s noise, the same for both: the
difference of the two mean squared errors compares the estimators without that noise (paired by
decision; intervals clustered by deal).  The same for the difference Q(a2) - Q(a1), the margin
analyze reports, and for the prediction of the opponents' concealed cards (squared error of the
mean count of each type).

Usage: python experiments/belief_check.py TABLE DEALS SEED [ROLLOUTS]   (TABLE as "expert";
BELIEF_CHAINS=K in the environment: the belief's number of chains)
"""

from __future__ import annotations

import functools
import os
import sys
import time

import numpy as np

from simkit.policies.registry import parse_policies
from simkit.replay import log_decisions, replay_jsonl
from simkit.rules import RuleSet
from simkit.runner.rollout import OUT_PAYOFF, rollouts
import simkit.studies.analyze as analyze_module
from analysis_bias import interval as clustered  # a mean with its interval clustered by deal
from simkit.specs.analyze import AnalyzeSpec
from simkit.specs.base import Execution
from simkit.studies.analyze import DEFAULT_BELIEF, analyze_position

if "BELIEF_CHAINS" in os.environ:
    analyze_module.belief_particles = functools.partial(analyze_module.belief_particles,
                                                        chains=int(os.environ["BELIEF_CHAINS"]))

SEAT = 1


def main(policy: str, deals: int, seed: int, n: int = 256) -> None:
    rules = RuleSet()
    table = ",".join([policy] * 3)
    specs = parse_policies(table)
    rows: dict[str, list[float]] = {k: [] for k in ("u_value", "p_value", "u_margin", "p_margin", "t_margin",
                                                       "u_bias", "p_bias", "u_mbias", "p_mbias")}
    deal_of: list[int] = []
    start = time.perf_counter()
    for deal in range(deals):
        for d in log_decisions(replay_jsonl(seed, deal, table, rules, dealer=deal % 3, seating="fixed").splitlines()):
            legal = d.position.legal_actions()
            if d.seat != SEAT or len(legal) < 2:
                continue
            key = seed * 10_000 + deal * 100 + d.index
            default = analyze_position(d.position, AnalyzeSpec(policy=policy, rollouts=n, seed=key, race=False),
                                       Execution(workers=2))
            a1 = d.action
            a2 = default.best.action if default.best.action != a1 else default.actions[1].action
            pair = sorted({a1, a2})
            pair_spec = AnalyzeSpec(policy=policy, rollouts=n, seed=key + 1, race=False, actions=pair)
            u = analyze_position(d.position, pair_spec, Execution(workers=2))
            p = analyze_position(d.position, pair_spec.replace(belief=DEFAULT_BELIEF), Execution(workers=2))
            out = rollouts(d.position.observation(), [a1, a2], [True, True], 0, n, key + 2, specs, rules, workers=2,
                           known=d.state)
            t1, t2 = float(out[0, :, OUT_PAYOFF].mean()), float(out[1, :, OUT_PAYOFF].mean())
            deal_of.append(deal)
            for name, est in (("u", u), ("p", p)):
                e1, e2 = est.estimate(a1).payoff, est.estimate(a2).payoff
                rows[f"{name}_value"].append((e1 - t1) ** 2)
                rows[f"{name}_bias"].append(e1 - t1)
                rows[f"{name}_margin"].append(((e2 - e1) - (t2 - t1)) ** 2)
                rows[f"{name}_mbias"].append((e2 - e1) - (t2 - t1))
            rows["t_margin"].append(t2 - t1)
    print(f"{policy} table, seat {SEAT}, {deals} deals of seed {seed}: {len(deal_of)} decisions, {n} rollouts each "
          f"({time.perf_counter() - start:.0f} s)")
    print()
    print("| per decision, 牌 | mean [95 %, clustered by deal] |")
    print("|---|---|")
    print(f"| value of the action taken: error of (u), default | {clustered(rows['u_bias'], deal_of)} |")
    print(f"| value of the action taken: error of (p), belief | {clustered(rows['p_bias'], deal_of)} |")
    print(f"| squared error of the value: (p) - (u) | "
          f"{clustered(np.subtract(rows['p_value'], rows['u_value']).tolist(), deal_of)} |")
    print(f"| squared error of the value, (u) | {clustered(rows['u_value'], deal_of)} |")
    print(f"| squared error of the margin Q(a2) - Q(a1): (p) - (u) | "
          f"{clustered(np.subtract(rows['p_margin'], rows['u_margin']).tolist(), deal_of)} |")
    print(f"| squared error of the margin, (u) | {clustered(rows['u_margin'], deal_of)} |")
    print(f"| margin Q(a2) - Q(a1): error of (u), default | {clustered(rows['u_mbias'], deal_of)} |")
    print(f"| margin Q(a2) - Q(a1): error of (p), belief | {clustered(rows['p_mbias'], deal_of)} |")
    print(f"| margin Q(a2) - Q(a1), (t) the truth | {clustered(rows['t_margin'], deal_of)} |")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), *(int(x) for x in sys.argv[4:5]))
