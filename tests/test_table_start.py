"""``simkit play`` on a cold kernel cache (issue 52): the first decision compiles what it needs
and no more; the bots' and the hint's kernels compile on a background thread while the person
reads, the bots through the narrowest policy switch (expert bots: expert alone; no greedy, mc or learned) and the
hint's rollouts without the value model's code.

Which kernels a step compiled is read from each entry kernel's compiled signatures, in a child
process of its own (the kernels this test process already ran would show as compiled); the child
loads them from numba's cache when it holds them, compiles them otherwise (the same signatures).
That the narrower switches and kernels play the same moves is tested where they are compared with
the full ones: tests/test_play.py (the table's log is replay's, byte for byte),
tests/test_analyze.py (the rollout kernels against a plain Python loop)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

from simkit.policies.builtin import P_EXPERT, P_GREEDY, P_MC, P_PATIENT, P_RANDOM
from simkit.policies.dispatch import (
    act_state_for,
    basic_act_state,
    builtin_act_state,
    expert_act_state,
    fast_act_state,
)

CHILD = textwrap.dedent("""
    import json, sys
    from simkit.engine import kernel as E
    from simkit.policies import dispatch
    from simkit.runner import rollout
    from simkit.studies.table import table_setup, warm_first_decision, warm_rest_in_background

    KERNELS = {"full switch": dispatch.builtin_act_state, "fast switch": dispatch.fast_act_state,
               "expert switch": dispatch.expert_act_state, "apply": E.apply_legal,
               "hint rollouts": rollout._rollout_chunk_expert_plain,
               "rollouts with luck": rollout._rollout_chunk_expert,
               "fast rollouts": rollout._rollout_chunk_fast_plain, "full rollouts": rollout._rollout_chunk_plain}

    def compiled():
        return sorted(name for name, kernel in KERNELS.items() if kernel.signatures)

    setup = table_setup(seat=int(sys.argv[1]), bots=["expert", "expert"], seed=7, log=None)
    position = warm_first_decision(setup)
    first = compiled()
    warm_rest_in_background(setup, position).join()
    print(json.dumps({"first": first, "rest": compiled(), "position": position is not None}))
""")


def _child(seat: int) -> dict:
    done = subprocess.run([sys.executable, "-c", CHILD, str(seat)], capture_output=True, text=True, timeout=1200,
                          env=dict(os.environ, PYTHONIOENCODING="utf-8"), check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_switch_the_python_loop_calls_is_the_narrowest():
    assert act_state_for([P_RANDOM, P_GREEDY, P_PATIENT]) is basic_act_state
    assert act_state_for([P_EXPERT, P_EXPERT]) is expert_act_state
    assert act_state_for([P_EXPERT, P_GREEDY]) is fast_act_state
    assert act_state_for([P_EXPERT, P_MC]) is builtin_act_state


def test_the_first_decision_waits_for_no_bot_and_no_hint():
    """Seat 0 deals first: its first decision needs the deal's start only.  The rest, on the
    background thread, is the bots' switch of expert alone and the hint's rollouts by expert
    without luck: never a wider switch (greedy; mc and learned) nor the value model's code."""
    seen = _child(0)
    assert seen["position"]
    assert seen["first"] == []
    assert seen["rest"] == ["apply", "expert switch", "hint rollouts"]


def test_a_later_seat_waits_for_the_bots_only():
    """Seat 2: the bots move before the person's first decision, so it waits for them, and not
    for the hint."""
    seen = _child(2)
    assert seen["first"] == ["apply", "expert switch"]
    assert seen["rest"] == ["apply", "expert switch", "hint rollouts"]
