"""One deal loop's rules (issue 20 part 4, issue 21 "aborted deals shown as 穿牌"): a deal that
stops before its end — a policy's illegal action, an unknown policy id, MAX_DECISIONS reached —
is a one-line DealError naming the seed, the deal and the policies in every loop (the compiled
batch and session kernels, the Python-tier loop, play_python, replay, tune), never a result."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from helpers import module_on_path

import simkit.engine.env as env
import simkit.runner.python_play as python_play
from simkit.engine.env import DealError, play_python
from simkit.policies.builtin import P_GREEDY, P_MC, P_PATIENT
from simkit.policies.registry import USER_SLOT_BASE, PolicyError, parse_policies, policy_arrays, python_policy_object
from simkit.rules import RuleSet
from simkit.runner.play import (
    BASIC_KERNELS,
    ERR_ILLEGAL_ACTION,
    ERR_MAX_DECISIONS,
    ERR_SEAT,
    ERR_UNKNOWN_POLICY,
    N_RESULT,
    R_ERROR,
    check_rows,
    deals_of,
    kernels_for,
    lineup_of,
    play_deals,
)
from simkit.rng import root_key
from simkit.runner.python_play import Actor, play_deals_python
from simkit.specs.equity import EquitySpec

RULES = RuleSet().to_array()

MODULE = '''
from numba import njit
from simkit.engine.layout import A_PASS, N_ACTIONS


@njit
def illegal_late(obs, mask, params, rng, rules, work):
    """first legal action, but an illegal one once the stock is below 15 cards"""
    if obs[%d] < 15:
        return N_ACTIONS + 3
    for a in range(N_ACTIONS):
        if mask[a]:
            return a
    return -1


class IllegalPython:
    def act(self, observation, legal_actions):
        return 999
'''


@pytest.fixture(scope="module")
def cap_module(tmp_path_factory):
    from simkit.engine.layout import O_STOCK_LEFT

    yield from module_on_path(tmp_path_factory.mktemp("capmod"), "simkit_test_cap_policies",
                              MODULE % O_STOCK_LEFT)


class FirstLegal:
    def act(self, observation, legal_actions):
        return legal_actions[0]


def _one_line(exc) -> str:
    text = str(exc.value)
    assert "\n" not in text
    return text


# ---- MAX_DECISIONS: the one cap; reaching it is an error in every loop


def test_there_is_one_max_decisions():
    import simkit.engine.loop as loop
    import simkit.runner.play as play

    assert play.MAX_DECISIONS is env.MAX_DECISIONS and python_play.MAX_DECISIONS is env.MAX_DECISIONS
    assert loop.MAX_DECISIONS is env.MAX_DECISIONS  # the compiled loop of deals, play-outs and mc's rollouts


def test_python_loop_refuses_a_deal_that_reaches_the_cap(monkeypatch):
    actors = [Actor(python=FirstLegal()), Actor(builtin_id=P_GREEDY, params=np.zeros(16)),
              Actor(builtin_id=P_GREEDY, params=np.zeros(16))]
    assert not play_deals_python(2, 5, actors, RULES)[:, R_ERROR].any()  # the real cap: deals end
    monkeypatch.setattr(python_play, "MAX_DECISIONS", 6)
    rows = play_deals_python(2, 5, actors, RULES, check=False)
    assert (rows[:, R_ERROR] % ERR_SEAT == ERR_MAX_DECISIONS).all()
    with pytest.raises(DealError) as exc:
        play_deals_python(2, 5, actors, RULES, first_deal=4, policies=["mine", "greedy", "greedy"])
    assert _one_line(exc).startswith("deal 4 of seed 5 (policies by seat: mine, greedy, greedy)")
    assert "did not end within MAX_DECISIONS" in str(exc.value)


def test_play_python_refuses_a_deal_that_reaches_the_cap(monkeypatch):
    assert play_python([FirstLegal()] * 3, seed=2, deal=1).is_terminal()
    monkeypatch.setattr(env, "MAX_DECISIONS", 6)
    with pytest.raises(DealError) as exc:
        play_python([FirstLegal()] * 3, seed=2, deal=1)
    assert _one_line(exc) == ("deal 1 of seed 2 (policies by seat: FirstLegal, FirstLegal, FirstLegal): the deal did "
                              "not end within MAX_DECISIONS = 6 decisions")


NOJIT_SCRIPT = r"""
import json, warnings
warnings.simplefilter("ignore")
import simkit.engine.loop as loop
import simkit.runner.play as P
from simkit.engine.env import DealError
from simkit.policies.registry import parse_policies, policy_arrays
from simkit.rules import RuleSet
loop.MAX_DECISIONS = P.MAX_DECISIONS = 6  # read at run time by the loop's Python source and check_rows
ids, params, _ = policy_arrays(parse_policies("greedy,random,patient"))
out = {}
rows = P.play_deals(2, 3, ids, params, RuleSet().to_array(), check=False)
out["codes"] = (rows[:, P.R_ERROR] % P.ERR_SEAT).tolist()
for name, kw in (("batch", {}), ("sessions", {"session_length": 2}), ("rotate", {"seating": P.SEATING_ROTATE})):
    try:
        P.play_deals(2, 3, ids, params, RuleSet().to_array(), first_deal=2, **kw)
        out[name] = None
    except DealError as exc:
        out[name] = str(exc)
print(json.dumps(out))
"""


def test_compiled_loops_refuse_a_deal_that_reaches_the_cap():
    """The batch and session kernels, run as their Python source with the cap lowered (no
    policy can make a deal endless: each decision spends a card), flag the deal and
    play_deals raises; before, the capped deal was recorded as a result."""
    proc = subprocess.run([sys.executable, "-c", NOJIT_SCRIPT], capture_output=True, text=True, timeout=600,
                          env=dict(os.environ, NUMBA_DISABLE_JIT="1"), check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["codes"] == [ERR_MAX_DECISIONS, ERR_MAX_DECISIONS]
    assert out["batch"].startswith("deal 2 of seed 3 (policies by seat: greedy, random, patient)")
    assert out["sessions"].startswith("deal 2 of seed 3 (policies by seat: greedy, random, patient)")
    assert out["rotate"].startswith("deal 2 of seed 3 (policies by seat: patient, greedy, random)")  # seating 2
    assert all("MAX_DECISIONS = 6 decisions" in out[k] for k in ("batch", "sessions", "rotate"))


# ---- unknown policy ids


def test_an_unknown_policy_id_is_refused_before_any_kernel_runs():
    ids, params, _ = policy_arrays(parse_policies("greedy,greedy,greedy"))
    for bad in (7, -1, USER_SLOT_BASE):  # USER_SLOT_BASE: no user function in slot 0
        ids2 = ids.copy()
        ids2[1] = bad
        with pytest.raises(PolicyError, match=f"policy 1: unknown policy id {bad}"):
            play_deals(3, 1, ids2, params, RULES)


@pytest.mark.parametrize("bad", [9, P_MC])
def test_the_basic_kernel_flags_an_unknown_id_instead_of_playing_greedy(bad):
    """The kernels themselves (the Python check bypassed): basic_act_state knows random,
    greedy and patient only, so mc's id is unknown there too; both used to play greedy."""
    ids = np.array([P_GREEDY, bad, P_PATIENT], dtype=np.int64)
    params = np.zeros((3, 16))
    rows = np.zeros((4, N_RESULT), dtype=np.int64)
    BASIC_KERNELS.play_batch(deals_of(root_key(1), 0, 4), lineup_of(ids, params, RULES), rows)
    codes = rows[:, R_ERROR]
    assert ((codes % ERR_SEAT == ERR_UNKNOWN_POLICY) & (codes // ERR_SEAT == 1)).all()
    with pytest.raises(DealError, match="seat 1 \\(x\\) has an unknown policy id"):
        check_rows(rows, 1, ["g", "x", "p"])


def test_a_user_dispatcher_flags_an_empty_slot(cap_module):
    ids, params, user = policy_arrays(parse_policies("simkit_test_cap_policies:illegal_late,greedy,greedy"))
    ids = ids.copy()
    ids[2] = USER_SLOT_BASE + 1  # no function in slot 1
    rows = np.zeros((2, N_RESULT), dtype=np.int64)
    kernels_for(user, ids).play_batch(deals_of(root_key(1), 0, 2), lineup_of(ids, params, RULES), rows)
    # seat 0's policy acts first; the deal stops at the first decision of seat 2 or earlier
    assert (rows[:, R_ERROR] != 0).all()
    assert any(int(c) % ERR_SEAT == ERR_UNKNOWN_POLICY and int(c) // ERR_SEAT == 2 for c in rows[:, R_ERROR])


# ---- an illegal action is an error everywhere


def test_play_deals_raises_on_an_illegal_user_action_naming_seat_and_policy(cap_module):
    specs = parse_policies("greedy,simkit_test_cap_policies:illegal_late,greedy")
    ids, params, user = policy_arrays(specs)
    rows = play_deals(3, 1, ids, params, RULES, user_functions=user, check=False)
    assert (rows[:, R_ERROR] == ERR_ILLEGAL_ACTION + ERR_SEAT * 1).all()
    with pytest.raises(DealError) as exc:
        play_deals(3, 1, ids, params, RULES, user_functions=user, first_deal=10,
                   policies=[s.text() for s in specs])
    assert _one_line(exc) == ("deal 10 of seed 1 (policies by seat: greedy, simkit_test_cap_policies:illegal_late, "
                              "greedy): seat 1 (simkit_test_cap_policies:illegal_late) returned an illegal action "
                              "(3 deals of these 3 stopped)")


EQUITY_HAND = "YJ*3 YS*2 YX YC YM YP RC*2 RM RP*2 RZ WJ WS*3 WX WC WM WP GJ GS GX GC GM*2 GZ*2"  # 31: seat 0


@pytest.mark.parametrize("where", ["memory", "folder"])
def test_equity_refuses_an_illegal_action_naming_the_policy_as_given(cap_module, tmp_path, where):
    """equity's deals, in memory or in a folder, go through the runner's check (one DealError
    naming the policies as the run names them), never a count of stopped deals."""
    from simkit.studies.equity import equity

    out = None if where == "memory" else tmp_path / "eq"
    with pytest.raises(DealError) as exc:
        equity(EquitySpec(EQUITY_HAND, seat=0, policies="greedy,simkit_test_cap_policies:illegal_late:3,greedy",
                          deals=4, seed=2, batch_size=2, baseline=False), out)
    assert _one_line(exc) == ("deal 0 of seed 2 (policies by seat: greedy, simkit_test_cap_policies:illegal_late:3, "
                              "greedy): seat 1 (simkit_test_cap_policies:illegal_late:3) returned an illegal action "
                              "(2 deals of these 2 stopped)")


def test_replay_refuses_a_deal_that_ended_on_an_illegal_action(cap_module, capsys):
    """It used to end the log with {"result": "exhausted"} (a 穿牌) and exit 0."""
    from simkit.cli import main
    from simkit.replay import replay_events

    policies = "simkit_test_cap_policies:illegal_late,greedy,greedy"
    with pytest.raises(DealError, match="deal 3 of seed 2 .*seat 0 .*illegal action"):
        list(replay_events(2, 3, policies, seating="fixed"))
    # a session's earlier deals: the dealer of deal 5 comes from deals 3 and 4, which stop
    with pytest.raises(DealError, match="deal 3 of seed 2 "):
        list(replay_events(2, 5, policies, seating="fixed", session_length=3))
    assert main(["replay", "--seed", "2", "--deal", "3", "--policies", policies, "--seating", "fixed",
                 "--engine", "compiled"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1 and "illegal action" in err


def test_a_python_policy_with_an_illegal_action_is_refused_in_the_python_loop(cap_module):
    illegal = python_policy_object(parse_policies("simkit_test_cap_policies:IllegalPython,greedy,greedy")[0])
    actors = [Actor(python=FirstLegal()), Actor(python=illegal), Actor(python=FirstLegal())]
    with pytest.raises(DealError, match="seat 1 \\(IllegalPython\\) returned an illegal action"):
        play_deals_python(2, 1, actors, RULES)


def test_play_python_refuses_an_illegal_action_in_one_line():
    class Bad:
        def act(self, observation, legal_actions):
            return 999

    with pytest.raises(DealError) as exc:
        play_python([Bad(), FirstLegal(), FirstLegal()], seed=4, deal=2)
    assert _one_line(exc) == ("deal 2 of seed 4 (policies by seat: Bad, FirstLegal, FirstLegal): seat 0 (Bad) "
                              "returned an illegal action 999")


def test_play_python_says_a_policy_that_raises_in_one_line():
    class Raises:
        def act(self, observation, legal_actions):
            raise RuntimeError("no idea")

    with pytest.raises(DealError) as exc:
        play_python([FirstLegal(), FirstLegal(), Raises()], seed=4, deal=2)
    assert _one_line(exc) == ("deal 2 of seed 4 (policies by seat: FirstLegal, FirstLegal, Raises): seat 2 (Raises) "
                              "raised RuntimeError: no idea in act")
    assert isinstance(exc.value.__cause__, RuntimeError)


def test_tune_refuses_instead_of_scoring_an_aborted_deal_as_zero(cap_module, tmp_path):
    from simkit.specs.base import Execution
    from simkit.studies.tuning import TuneSpec, tune

    with pytest.raises(DealError, match=r"seat \d \(simkit_test_cap_policies:illegal_late:[^)]*\) returned an illegal"):
        tune(TuneSpec("simkit_test_cap_policies:illegal_late:1", {"p0": (0, 2)}, ["greedy"], 6 * 30 * 2, seed=1,
                      iteration_deals=30, validate_deals=10, batch_size=10), tmp_path / "t", Execution(quiet=True))
    assert not (tmp_path / "t" / "validation").exists()  # stopped in the training rounds, before validating
