"""Runnable example of both plug-in tiers (see simkit/policies/registry.py).

    python experiments/plugin_policy_example.py

Tier 1: an @njit policy registered by name plays inside the batch kernel at full speed.
Tier 2: a Python class with act(observation, legal_actions) plays through simkit.engine.env (Game / State).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from simkit.engine.env import play_python
from simkit.engine.layout import A_PASS, A_WIN, N_ACTIONS, O_CONC, O_PHASE, PH_DISCARD
from simkit.policies import parse_policies, register_policy
from simkit.policies.registry import policy_arrays
from simkit.rules import RuleSet
from simkit.runner.play import R_PAYOFF, play_deals


@njit
def hoarder(obs, mask, params, rng, rules, work):
    """Tier 1: win when possible, never claim, discard the type held fewest times
    (params[0] = 1 prefers the highest type index among ties)."""
    if mask[A_WIN]:
        return A_WIN
    if obs[O_PHASE] != PH_DISCARD:
        return A_PASS
    best = -1
    for a in range(28):
        if mask[a]:
            fewer = best < 0 or obs[O_CONC + a] < obs[O_CONC + best]
            tie = best >= 0 and obs[O_CONC + a] == obs[O_CONC + best] and params[0] == 1
            if fewer or tie:
                best = a
    if best >= 0:
        return best
    for a in range(N_ACTIONS):
        if mask[a]:
            return a
    return A_PASS


class FirstLegal:
    """Tier 2: any object with act(observation, legal_actions)."""

    def act(self, observation, legal_actions):
        return A_WIN if A_WIN in legal_actions else legal_actions[0]


def main() -> None:
    register_policy("hoarder", hoarder, params=(1.0,))
    ids, params, user = policy_arrays(parse_policies("hoarder,greedy,greedy"))
    results = play_deals(2000, seed=1, policy_ids=ids, params=params,
                         rules_array=RuleSet().to_array(), user_functions=user)
    print("tier 1: hoarder mean payoff per deal against two greedy bots:",
          float(np.mean(results[:, R_PAYOFF])))
    env = play_python([FirstLegal(), FirstLegal(), FirstLegal()], seed=1, deal=0)
    print("tier 2: one deal of FirstLegal x3, payoffs", env.returns())


if __name__ == "__main__":
    main()
