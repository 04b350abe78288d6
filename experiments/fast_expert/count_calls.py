"""Count expert's kernel calls per decision on recorded states (NUMBA_DISABLE_JIT=1 run):
NUMBA_DISABLE_JIT=1 python experiments/fast_expert/count_calls.py STATES.npz [N]"""

from __future__ import annotations

import collections
import os
import sys

import numpy as np

assert os.environ.get("NUMBA_DISABLE_JIT") == "1"

from simkit.engine import layout as L  # noqa: E402
from simkit.evaluator import kernel as K  # noqa: E402
from simkit.policies import expert as X  # noqa: E402
from simkit.policies.builtin import POLICY_WORK_SIZE  # noqa: E402
from simkit.rules import RuleSet  # noqa: E402

counts = collections.Counter()


def counted(module, name, label):
    inner = getattr(module, name)

    def wrapper(*args, **kwargs):
        counts[label] += 1
        return inner(*args, **kwargs)

    setattr(module, name, wrapper)


for name in ("part_value", "_discard_change", "discard_danger", "_cross_change", "cross_value", "_evaluate",
             "_outs_gain", "_type_terms", "_part_discards", "_other_parts_discard", "_chariot_through"):
    counted(X, name, name)
counted(X.K, "min_idle_kernel", "min_idle_kernel")

if __name__ == "__main__":
    d = np.load(sys.argv[1])
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 3000
    rules = RuleSet().to_array()
    work = np.zeros(POLICY_WORK_SIZE, dtype=np.int64)
    by_phase = {}
    for i in range(n):
        s = d["states"][i]
        key = "discard" if s[L.S_PHASE] == L.PH_DISCARD else f"claim({int(d['masks'][i].sum()) - 1} claims)"
        before = counts.copy()
        a = X.expert_state(s.copy(), int(d["players"][i]), d["masks"][i], d["params"], rules, work)
        assert a == d["actions"][i]
        by_phase.setdefault(key, collections.Counter()).update(counts - before)
        by_phase[key]["decisions"] += 1
    for key in sorted(by_phase):
        c = by_phase[key]
        m = c.pop("decisions")
        print(f"{key}: {m} decisions; per decision: " + ", ".join(f"{k} {v / m:.2f}" for k, v in c.most_common()))
