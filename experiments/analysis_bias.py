"""Where does the bias of ``simkit analyze``'s action differences come from?  (issue 38, item 1)

For decisions of seat 1 sampled from played deals, the difference between analyze's best
action a1 and the action the seat's policy took a2 is estimated four ways:

(a)  analyze's own margin: its sampled hidden cards (the opponent model), its continuation
     (the rollout policy at every seat), racing, the best chosen on the same rollouts;
(a') the same analysis re-run on fresh determinisations (another seed, no racing, only a1 and
     a2): analyze's belief and continuation without the winner's curse;
(b)  rollouts from the *true* state (every hand as in the log, the stock reordered) continued by
     the table's actual policies: the true difference of expected payoffs;
(c)  the realised difference: the deal played on from the true state, true stock, once with a1
     and once with a2 (one sample per decision; its mean must equal (b)'s: a check of the harness).

(a) - (a') is the winner's curse; (a') - (b) is the error of the belief over hidden cards and of
the continuation model; with an all-expert table analyze's continuation *is* the table, so there
(a') - (b) is the belief's error alone.

Usage: python experiments/analysis_bias.py TABLE DEALS SEED [ROLLOUTS]
(TABLE as "expert,expert,expert"; seat 1 is reviewed.)  Prints a Markdown table.
"""

from __future__ import annotations

import math
import sys
import time

import numpy as np
from scipy import stats

from simkit.engine import kernel as E
from simkit.engine import layout as L
from simkit.policies.dispatch import builtin_act_state
from simkit.policies.registry import parse_policies, policy_arrays
from simkit.replay import log_decisions, replay_jsonl
from simkit.rng import root_key, seat_stream, stream_state
from simkit.rules import RuleSet
from simkit.runner.play import new_scratch
from simkit.runner.rollout import OUT_PAYOFF, rollouts
from simkit.specs.analyze import AnalyzeSpec
from simkit.specs.base import Execution
from simkit.studies.analyze import analyze_position

SEAT = 1


def realised(state: np.ndarray, action: int, table: str, seed: int, deal: int, rules: RuleSet) -> float:
    """The deal played on from the true state with its true stock: ``action``, then the table's
    policies, drawing from the deal's own seat streams restarted (the same for both actions)."""
    ids, params, _ = policy_arrays(parse_policies(table))
    rules_array = rules.to_array()
    s, _, rngs, mask, obs, work, pwork, ev, ev_n, _, _ = new_scratch()
    s[:] = state
    root = root_key(seed + 1)
    for p in range(3):
        stream_state(root, deal, seat_stream(p), rngs[p])
    E.new_deal_observation(obs)
    E.legal_mask(s, rules_array, mask, work)
    assert E.apply(s, action, rules_array, mask, work, ev, ev_n)
    while s[L.S_PHASE] != L.PH_OVER:
        p = int(s[L.S_PLAYER])
        E.legal_mask(s, rules_array, mask, work)
        chosen = builtin_act_state(ids[p], s, obs, mask, params[p], rngs[p], rules_array, pwork)
        assert E.apply(s, int(chosen), rules_array, mask, work, ev, ev_n)
    return float(s[L.S_PAYOFF + SEAT])


def interval(values: list[float], deals: list[int]) -> str:
    """Mean per decision with a 95 % interval clustered by deal (decisions of one deal share its
    cards and stock, so they are not independent): the ratio estimator's standard error over
    deals."""
    x = np.asarray(values, dtype=float)
    groups = np.unique(deals)
    if x.size < 2 or groups.size < 2:
        return "n/a"
    mean = float(x.mean())
    residual = np.array([np.sum(x[np.asarray(deals) == g] - mean) for g in groups])
    se = math.sqrt(groups.size / (groups.size - 1) * np.sum(residual ** 2)) / x.size
    half = stats.t.ppf(0.975, groups.size - 1) * se
    return f"{mean:+.3f} [{mean - half:+.3f}, {mean + half:+.3f}]"


def main(table: str, deals: int, seed: int, analysis_rollouts: int = 256, true_rollouts: int = 128) -> None:
    rules = RuleSet()
    specs = parse_policies(table)
    rows = {"a": [], "a_fresh": [], "b": [], "c": []}
    deal_of: list[int] = []
    decisions = same = 0
    start = time.perf_counter()
    for deal in range(deals):
        lines = replay_jsonl(seed, deal, table, rules, dealer=deal % 3, seating="fixed").splitlines()
        for d in log_decisions(lines):
            if d.seat != SEAT or len(d.position.legal_actions()) < 2:
                continue
            decisions += 1
            key = seed * 10_000 + deal * 100 + d.index
            analysis = analyze_position(d.position, AnalyzeSpec(rollouts=analysis_rollouts, seed=key),
                                        Execution(workers=2))
            a1, a2 = analysis.best.action, d.action
            if a1 == a2:
                same += 1
                continue
            deal_of.append(deal)
            rows["a"].append(analysis.estimate(a1).payoff - analysis.estimate(a2).payoff)
            fresh = analyze_position(d.position, AnalyzeSpec(rollouts=analysis_rollouts, seed=key + 1, race=False,
                                                             actions=[a1, a2]), Execution(workers=2))
            rows["a_fresh"].append(fresh.estimate(a1).payoff - fresh.estimate(a2).payoff)
            out = rollouts(d.position.observation(), [a1, a2], [True, True], 0, true_rollouts, key + 2, specs, rules,
                           workers=2, known=d.state)
            rows["b"].append(float((out[0, :, OUT_PAYOFF] - out[1, :, OUT_PAYOFF]).mean()))
            rows["c"].append(realised(d.state, a1, table, seed, deal, rules)
                             - realised(d.state, a2, table, seed, deal, rules))
    print(f"table {table}, seat {SEAT}, {deals} deals of seed {seed}: {decisions} decisions, analyze's best = the "
          f"table's action at {same}; {len(rows['a'])} differ ({time.perf_counter() - start:.0f} s)")
    print()
    print("| estimate of Q(analyze's best) - Q(action taken), 牌 per decision where they differ | mean [95 %] |")
    print("|---|---|")
    print(f"| (a) analyze's own margin | {interval(rows['a'], deal_of)} |")
    print(f"| (a') analyze re-run on fresh determinisations | {interval(rows['a_fresh'], deal_of)} |")
    print(f"| (b) true state, stock reordered, table's policies | {interval(rows['b'], deal_of)} |")
    print(f"| (c) realised: true stock, played on both ways | {interval(rows['c'], deal_of)} |")
    print(f"| (a) - (a') winner's curse | {interval(np.subtract(rows['a'], rows['a_fresh']).tolist(), deal_of)} |")
    print(f"| (a') - (b) belief and continuation | {interval(np.subtract(rows['a_fresh'], rows['b']).tolist(), deal_of)} |")
    print(f"| (c) - (b) harness check (must cover 0) | {interval(np.subtract(rows['c'], rows['b']).tolist(), deal_of)} |")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), *(int(x) for x in sys.argv[4:5]))
