"""Record expert ×3's decisions (state, player, legal mask, choice) on deals of seed 2026:
the fixed set of states on which experiments/fast_expert/profile.py times expert's kernels and
tests compare decisions.  Usage: python experiments/fast_expert/record.py N_DEALS OUT.npz"""

from __future__ import annotations

import sys

import numpy as np

from simkit.engine import layout as L
from simkit.engine.env import Game
from simkit.policies.builtin import POLICY_WORK_SIZE
from simkit.policies.expert import expert_state
from simkit.policies.registry import effective_params, parse_policy
from simkit.rules import RuleSet


def record(n_deals: int, seed: int = 2026):
    game = Game(policies=("expert", "expert", "expert"))
    rules = RuleSet().to_array()
    params = np.array(effective_params(parse_policy("expert")), dtype=np.float64)
    work = np.zeros(POLICY_WORK_SIZE, dtype=np.int64)
    states, players, masks, actions = [], [], [], []
    for deal in range(n_deals):
        state = game.new_initial_state(seed=seed, deal=deal)
        while not state.is_terminal():
            players.append(state.current_player())
            states.append(np.array(state.state_array))
            masks.append(np.isin(np.arange(L.N_ACTIONS), state.legal_actions()))
            actions.append(int(expert_state(states[-1].copy(), players[-1], masks[-1], params, rules, work)))
            state.apply_action(actions[-1])
    return np.array(states), np.array(players), np.array(masks), np.array(actions), params


if __name__ == "__main__":
    n = int(sys.argv[1])
    states, players, masks, actions, params = record(n)
    np.savez_compressed(sys.argv[2], states=states, players=players, masks=masks, actions=actions, params=params)
    print(len(actions), "decisions;", (states[:, L.S_PHASE] == L.PH_DISCARD).sum(), "discard decisions")
