"""Time expert on the recorded states of record.py (CPU time of a compiled loop over them):
python experiments/fast_expert/profile.py STATES.npz [REPEATS]"""

from __future__ import annotations

import sys
import time

import numpy as np
from numba import njit

from simkit.engine import layout as L
from simkit.policies.builtin import POLICY_WORK_SIZE
from simkit.policies.expert import expert_state
from simkit.rules import RuleSet


@njit(nogil=True)
def run_all(states, players, masks, params, rules, work, select, out):
    total = 0
    for i in range(states.shape[0]):
        if select[i]:
            s = states[i]
            a = expert_state(s, players[i], masks[i], params, rules, work)
            out[i] = a
            total += a
    return total


def timed(states, players, masks, params, rules, work, select, out, repeats):
    best = np.inf
    for _ in range(repeats):
        t0 = time.thread_time()
        run_all(states, players, masks, params, rules, work, select, out)
        best = min(best, time.thread_time() - t0)
    return best


if __name__ == "__main__":
    d = np.load(sys.argv[1])
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    states, players, masks, actions, params = d["states"], d["players"], d["masks"], d["actions"], d["params"]
    rules = RuleSet().to_array()
    work = np.zeros(POLICY_WORK_SIZE, dtype=np.int64)
    out = np.full(len(actions), -9, dtype=np.int64)
    phase = states[:, L.S_PHASE]
    everything = np.ones(len(actions), dtype=np.bool_)
    run_all(states, players, masks, params, rules, work, everything, out)
    assert np.array_equal(out, actions), "decisions differ from the recording"
    for name, sel in (("all", everything), ("discard", phase == L.PH_DISCARD), ("claim", phase != L.PH_DISCARD)):
        t = timed(states, players, masks, params, rules, work, sel, out, repeats)
        print(f"{name:8s} {sel.sum():6d} decisions  {t * 1e3:8.2f} ms  {t / sel.sum() * 1e6:6.3f} us/decision")
