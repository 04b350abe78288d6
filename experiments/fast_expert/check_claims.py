"""expert's choices on the recorded states of record.py three ways: expert_state (claims decided by
local scores), expert_state_margin with an infinite margin (every claim decision takes the full
search) and the recording; prints the mismatches (0 expected):
python experiments/fast_expert/check_claims.py STATES.npz"""

from __future__ import annotations

import sys

import numpy as np

from simkit.policies import expert as X
from simkit.policies.builtin import POLICY_WORK_SIZE
from simkit.rules import RuleSet

if __name__ == "__main__":
    d = np.load(sys.argv[1])
    states, players, masks, actions, params = d["states"], d["players"], d["masks"], d["actions"], d["params"]
    rules = RuleSet().to_array()
    work = np.zeros(POLICY_WORK_SIZE, dtype=np.int64)
    bad = 0
    for i in range(len(actions)):
        fast = X.expert_state(states[i].copy(), players[i], masks[i], params, rules, work)
        full = X.expert_state_margin(states[i].copy(), players[i], masks[i], params, rules, work, np.inf)
        bad += fast != actions[i] or full != actions[i]
    print("mismatches", bad, "of", len(actions))
