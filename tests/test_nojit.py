"""The kernels are plain Python too: with NUMBA_DISABLE_JIT=1 they give the same results
(STUMPY-style check that the compiled code and its source agree)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np

from simkit.evaluator import evaluate_many
from simkit.generate import random_group_holdings
from simkit.policies.registry import parse_policies, policy_arrays
from simkit.rules import RuleSet
from simkit.runner.play import play_deals

MC_POLICIES = "mc:4,2,1,1,0,2,0,greedy,random"  # 4 rollouts raced after 2, every claim: slow enough without the JIT
EXPERT_POLICIES = "expert,greedy,expert"

SCRIPT = f"MC_POLICIES = {MC_POLICIES!r}\nEXPERT_POLICIES = {EXPERT_POLICIES!r}\n" + r"""
import json, warnings
import numpy as np
warnings.simplefilter("ignore")
from simkit.evaluator import evaluate_many
from simkit.generate import random_group_holdings
from simkit.policies.registry import parse_policies, policy_arrays
from simkit.rules import RuleSet
from simkit.runner.play import play_deals
conc, exp, chows = random_group_holdings(60, seed=21, total=(6, 31), p_exposed=0.2)
res = evaluate_many(conc, exp, chows)
ids, params, _ = policy_arrays(parse_policies("greedy,patient,random"))
deals = play_deals(2, 21, ids, params, RuleSet().to_array())
ids, params, _ = policy_arrays(parse_policies(MC_POLICIES))
mc_deals = play_deals(1, 21, ids, params, RuleSet().to_array())
ids, params, _ = policy_arrays(parse_policies(EXPERT_POLICIES))
expert_deals = play_deals(2, 21, ids, params, RuleSet().to_array())
print(json.dumps({"expert_deals": expert_deals.tolist(),
                  "hu": res["hu"].tolist(), "units": res["units"].tolist(), "patterns": res["patterns"].tolist(),
                  "min_idle": res["min_idle"].tolist(), "conc": conc.tolist(), "deals": deals.tolist(),
                  "mc_deals": mc_deals.tolist()}))
"""


def test_pure_python_kernels_agree_with_compiled():
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    proc = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, timeout=600,
                          check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    slow = json.loads(proc.stdout.strip().splitlines()[-1])
    conc, exp, chows = random_group_holdings(60, seed=21, total=(6, 31), p_exposed=0.2)
    assert slow["conc"] == conc.tolist()  # the generator itself agrees
    fast = evaluate_many(conc, exp, chows)
    for key in ("hu", "units", "patterns", "min_idle"):
        assert slow[key] == fast[key].tolist(), key
    ids, params, _ = policy_arrays(parse_policies("greedy,patient,random"))
    deals = play_deals(2, 21, ids, params, RuleSet().to_array())
    assert np.array_equal(np.array(slow["deals"]), deals)
    ids, params, _ = policy_arrays(parse_policies(MC_POLICIES))
    assert np.array_equal(np.array(slow["mc_deals"]), play_deals(1, 21, ids, params, RuleSet().to_array()))
    ids, params, _ = policy_arrays(parse_policies(EXPERT_POLICIES))
    assert np.array_equal(np.array(slow["expert_deals"]), play_deals(2, 21, ids, params, RuleSet().to_array()))
