"""A user policy in its own module, named by import path (README: "Your own policy").

    simkit simulate --policies experiments.user_policy_example:cautious,greedy,greedy \
        --deals 20000 --seed 7 --workers 2 --out runs/cautious
    simkit compare experiments.user_policy_example:cautious:20 greedy --deals 2000
    simkit tournament experiments.user_policy_example:cautious:20 greedy patient random --deals 400
    simkit compare experiments.user_policy_example:CautiousPython:20 greedy --deals 200 --workers 2   # Python tier
    python -m experiments.user_policy_example       # a run through the Python API

``cautious`` is ``greedy`` that declines the 吃 and 占 claims (keeping its hand concealed)
while the stock holds more than ``p0`` cards (``cautious:20``: until 20 are left; without a
parameter, p0 = 0: always).  It still takes every 碰 and 发子 greedy takes: declining those
forbids winning.  Worker processes import this module themselves (run from the repository
root, or put it on ``PYTHONPATH``); the dataset records a digest of this file's policy source
(``cautious`` and the helpers it calls), so resuming a run after editing them is refused.
"""

from __future__ import annotations

import sys
import tempfile

import numpy as np
from numba import njit

from simkit.engine.layout import A_CHOW_TRIAD, A_CHOW_ZU4, A_PASS, A_ZHAN, N_ACTIONS, O_STOCK_LEFT
from simkit.policies.builtin import POLICY_WORK_SIZE, greedy_like
from simkit.rules import RuleSet
from simkit.runner.simulate import simulate
from simkit.specs.base import Execution
from simkit.specs.simulate import SimulateSpec
from simkit.storage import load_dataset


@njit(nogil=True)
def declines(action, obs, params):
    """Whether ``cautious`` passes on greedy's ``action``: a 吃 or 占 claim while the stock
    holds more than params[0] cards."""
    is_chow_or_zhan = action == A_ZHAN or A_CHOW_TRIAD <= action <= A_CHOW_ZU4
    return is_chow_or_zhan and obs[O_STOCK_LEFT] > params[0]


@njit(nogil=True)
def cautious(obs, mask, params, rng, rules, work):
    """greedy, declining 吃 / 占 while the stock holds more than params[0] cards."""
    action = greedy_like(obs, mask, params, rules, work, False)
    if declines(action, obs, params) and mask[A_PASS]:
        return A_PASS
    return action


class CautiousPython:
    """The same policy in Python (the Python tier: ``act(observation, legal_actions)``), to show
    the slower tier and to check it: it makes ``cautious``'s choices, so its datasets hold the
    same deals.  ``experiments.user_policy_example:CautiousPython:20`` makes ``CautiousPython(20)``."""

    def __init__(self, stock_limit: float = 0.0) -> None:
        self.params = np.zeros(8)
        self.params[0] = stock_limit
        self.rules = RuleSet().to_array()
        self.work = np.zeros(POLICY_WORK_SIZE, dtype=np.int64)

    def act(self, observation, legal_actions):
        mask = np.zeros(N_ACTIONS, dtype=np.bool_)
        mask[legal_actions] = True
        obs = observation.array
        action = int(greedy_like(obs, mask, self.params, self.rules, self.work, False))
        if declines(action, obs, self.params) and mask[A_PASS]:
            return A_PASS
        return action


def main() -> None:
    out = sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="cautious-")
    path = simulate(SimulateSpec(2_000, "experiments.user_policy_example:cautious,greedy,greedy", seed=7, batch_size=500),
                    out, Execution(workers=2, quiet=True))
    df = load_dataset(path, columns=["payoff_0", "payoff_1", "payoff_2", "policy_0", "policy_1", "policy_2"])
    for name in ("experiments.user_policy_example:cautious", "greedy"):
        total = sum(df.loc[df[f"policy_{k}"] == name, f"payoff_{k}"].sum() for k in range(3))
        seats = sum(int((df[f"policy_{k}"] == name).sum()) for k in range(3))
        print(f"{name}: mean payoff {total / seats:+.3f} per deal played ({seats:,} seat-deals)")


if __name__ == "__main__":
    main()
