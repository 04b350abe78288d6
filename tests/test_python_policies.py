"""Python-tier policies: deals played in Python give the rows the compiled batch kernels give."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from numba import njit

from simkit.engine.env import DealError
from simkit.engine.layout import HIST_WIDTH, N_ACTIONS, O_HIST, O_NHIST
from simkit.policies.builtin import P_GREEDY, POLICY_WORK_SIZE, greedy_like
from simkit.policies.registry import USER_SLOT_BASE, parse_policies, policy_arrays
from simkit.rules import RuleSet
from simkit.runner.play import R_ERROR, SEATING_CODES, play_deals
from simkit.runner.python_play import Actor, play_deals_python
from simkit.specs.simulate import SimulateSpec
from simkit.specs.base import Execution
from simkit.specs.compare import CompareSpec
from simkit.specs.tournament import TournamentSpec

QUIET = Execution(quiet=True)


class PythonGreedy:
    """greedy, called from Python on the observation (the same choices as the built-in)."""

    def __init__(self) -> None:
        self.rules = RuleSet().to_array()
        self.work = np.zeros(POLICY_WORK_SIZE, dtype=np.int64)
        self.params = np.zeros(8)

    def act(self, observation, legal_actions):
        mask = np.zeros(N_ACTIONS, dtype=np.bool_)
        mask[legal_actions] = True
        return int(greedy_like(observation.array, mask, self.params, self.rules, self.work, False))


class FirstLegal:
    def act(self, observation, legal_actions):
        return legal_actions[0]


class Illegal:
    def act(self, observation, legal_actions):
        return -5


def _builtin_actors(text: str) -> list[Actor]:
    ids, params, _ = policy_arrays(parse_policies(text))
    return [Actor(builtin_id=int(ids[k]), params=params[k]) for k in range(3)]


@pytest.mark.parametrize("seating,session_length", [("fixed", 1), ("rotate", 1), ("all", 1), ("rotate", 6)])
def test_python_loop_gives_the_batch_kernel_rows(seating, session_length):
    text = "greedy,patient,random"
    ids, params, user = policy_arrays(parse_policies(text))
    rules = RuleSet().to_array()
    expected = play_deals(24, 9, ids, params, rules, first_deal=12, user_functions=user,
                          session_length=session_length, seating=SEATING_CODES[seating])
    got = play_deals_python(24, 9, _builtin_actors(text), rules, first_deal=12, session_length=session_length,
                            seating=SEATING_CODES[seating])
    assert np.array_equal(got, expected)


def test_a_python_policy_plays_as_its_compiled_twin():
    rules = RuleSet().to_array()
    ids, params, user = policy_arrays(parse_policies("greedy,greedy,random"))
    expected = play_deals(30, 4, ids, params, rules, user_functions=user, seating=SEATING_CODES["rotate"])
    actors = [Actor(python=PythonGreedy())] + _builtin_actors("greedy,greedy,random")[1:]
    got = play_deals_python(30, 4, actors, rules, seating=SEATING_CODES["rotate"])
    assert np.array_equal(got, expected) and not got[:, R_ERROR].any()


def test_an_illegal_python_action_is_flagged_not_played():
    actors = [Actor(python=Illegal())] + _builtin_actors("greedy,greedy,greedy")[1:]
    rows = play_deals_python(3, 1, actors, RuleSet().to_array(), check=False)
    assert rows[:, R_ERROR].tolist() == [1, 1, 1]  # ERR_ILLEGAL_ACTION at seat 0
    with pytest.raises(DealError, match=r"^deal 0 of seed 1 \(policies by seat: Illegal, greedy, greedy\): seat 0 "
                                        r"\(Illegal\) returned an illegal action \(3 deals of these 3 stopped\)$"):
        play_deals_python(3, 1, actors, RuleSet().to_array())
    rows = play_deals_python(3, 1, [Actor(python=FirstLegal())] + _builtin_actors("greedy,greedy,greedy")[1:],
                             RuleSet().to_array())
    assert rows[:, R_ERROR].tolist() == [0, 0, 0]


class RaisesOnDeal:
    """Raises in act on its second decision, or in new_deal of the deal ``bad_deal``."""

    def __init__(self, where: str, bad_deal: int) -> None:
        self.where, self.bad_deal, self.decisions = where, bad_deal, 0

    def new_deal(self, rng):
        self.decisions += 1000
        if self.where == "new_deal" and self.decisions == 1000 * (self.bad_deal + 1):
            raise KeyError("no table")

    def act(self, observation, legal_actions):
        if self.where == "act" and self.decisions // 1000 == self.bad_deal + 1:
            raise ZeroDivisionError("boom inside act")
        return legal_actions[0]


@pytest.mark.parametrize("where, exc, text", [("act", ZeroDivisionError, "ZeroDivisionError: boom inside act"),
                                              ("new_deal", KeyError, "KeyError: 'no table'")])
def test_a_python_policy_that_raises_is_a_deal_error_naming_it(where, exc, text):
    """Issue 21 F6: an exception of a Python policy's act or new_deal is ONE line naming the
    deal, the seed, the policies by seat (as seated: seat 1 of deal 4 under rotation) and what
    was raised, the policy's own exception chained as the cause (the traceback of --debug)."""
    actors = _builtin_actors("greedy,greedy,greedy")
    actors[0] = Actor(python=RaisesOnDeal(where, bad_deal=1))
    with pytest.raises(DealError) as info:
        play_deals_python(3, 7, actors, RuleSet().to_array(), first_deal=3, seating=SEATING_CODES["rotate"],
                          policies=["mine:x=1", "greedy", "patient"])
    # deal 4 rotated: seats 0, 1, 2 play P1, P2, P0
    assert str(info.value) == ("deal 4 of seed 7 (policies by seat: greedy, patient, mine:x=1): seat 2 (mine:x=1) "
                               f"raised {text} in {where}"), str(info.value)
    assert isinstance(info.value.__cause__, exc)


def test_actor_needs_exactly_one_kind():
    with pytest.raises(ValueError):
        Actor()
    with pytest.raises(ValueError):
        Actor(builtin_id=P_GREEDY, python=FirstLegal())
    with pytest.raises(ValueError, match="act"):
        Actor(python=object())


CAUTIOUS = "experiments.user_policy_example:cautious:20"
CAUTIOUS_PY = "experiments.user_policy_example:CautiousPython:20"


def _columns(path):
    from simkit.storage import load_dataset

    return load_dataset(path).drop(columns=["policy_0", "policy_1", "policy_2"])


def test_a_python_policy_by_import_path_runs_in_simulate_on_workers(tmp_path):
    """A Python-tier policy in simulate: the same bytes with 1 and 2 worker processes (each
    imports the module), and the same deals as its compiled twin."""
    from simkit.runner.simulate import simulate

    one = simulate(SimulateSpec(60, f"{CAUTIOUS_PY},greedy,patient", 5, batch_size=20), tmp_path / "one", QUIET)
    two = simulate(SimulateSpec(60, f"{CAUTIOUS_PY},greedy,patient", 5, batch_size=20), tmp_path / "two",
                   Execution(workers=2, quiet=True))
    files = sorted(p.name for p in one.glob("*.parquet"))
    assert len(files) == 3
    assert all((one / f).read_bytes() == (two / f).read_bytes() for f in files)
    twin = simulate(SimulateSpec(60, f"{CAUTIOUS},greedy,patient", 5, batch_size=20), tmp_path / "twin", QUIET)
    import pandas as pd

    pd.testing.assert_frame_equal(_columns(one), _columns(twin))


def test_a_python_policy_runs_in_compare_and_tournament(tmp_path):
    from simkit.studies.compare import compare
    from simkit.studies.tournament import run_tournament

    python = compare(CompareSpec(CAUTIOUS_PY, "greedy", deals=12, seed=3, batch_size=6), tmp_path / "py",
                     Execution(quiet=True))
    compiled = compare(CompareSpec(CAUTIOUS, "greedy", deals=12, seed=3, batch_size=6), tmp_path / "nb",
                       Execution(quiet=True))
    assert np.array_equal(python.per_seating, compiled.per_seating)
    result = run_tournament(TournamentSpec([CAUTIOUS_PY, "greedy", "random"], deals=8, seed=3, batch_size=8,
                                           resamples=20), tmp_path / "t", Execution(quiet=True))
    assert result.ladder()["policy"].iloc[-1] == "random"


def test_python_policies_are_refused_where_only_compiled_ones_run(tmp_path):
    from simkit.policies.registry import PolicyError, parse_policies, policy_arrays

    with pytest.raises(PolicyError, match="Python policy"):
        policy_arrays(parse_policies(f"{CAUTIOUS_PY},greedy,greedy"))
    with pytest.raises(PolicyError, match="no attribute"):
        parse_policies("experiments.user_policy_example:NoSuchClass,greedy,greedy")


@njit
def _history_player(obs, mask, params, rng, rules, work):
    """Chooses by the public history (its length and the types in it): a stale or missing
    history row in a reused observation array changes its choices."""
    n = obs[O_NHIST]
    key = n
    for i in range(n):
        key += (i + 1) * obs[O_HIST + HIST_WIDTH * i + 2]
    legal = 0
    for a in range(N_ACTIONS):
        if mask[a]:
            legal += 1
    k = key % legal
    for a in range(N_ACTIONS):
        if mask[a]:
            if k == 0:
                return a
            k -= 1
    return -1


def test_the_history_a_user_policy_sees_is_the_same_in_both_loops():
    """A compiled user policy that reads the public history plays the same deals in the batch
    kernels and in the Python loop (both reuse one observation array over their deals, with
    the history copied incrementally): catches a loop that observes at another moment or
    hands the policy another array.  (A stale row left by the previous deal is caught by the
    observe tests in test_hidden_information.py: a deal's first observation here always has a
    shorter history than the previous deal's last, which observe rewrites whole.)"""
    rules = RuleSet().to_array()
    ids = np.array([USER_SLOT_BASE, P_GREEDY, USER_SLOT_BASE], dtype=np.int64)
    params = np.zeros((3, 8))
    expected = play_deals(40, 6, ids, params, rules, user_functions=(_history_player, None, None))
    actors = [Actor(function=_history_player, params=params[0]), Actor(builtin_id=P_GREEDY, params=params[1]),
              Actor(function=_history_player, params=params[2])]
    got = play_deals_python(40, 6, actors, rules)
    assert np.array_equal(got, expected) and not got[:, R_ERROR].any()


POLICY_MODULE = '''
from polhelp import choose


class Pol:
    """plays the legal action the helper picks"""

    def act(self, observation, legal_actions):
        return choose(legal_actions)
'''
HELPER_MODULE = '''
def choose(legal_actions):
    return legal_actions[0]
'''


def _simulate_cli(folder):
    args = [sys.executable, "-m", "simkit", "simulate", "--deals", "20", "--policies", "pol:Pol,pol:Pol,pol:Pol",
            "--seed", "1", "--batch-size", "10", "--out", str(folder / "ds"), "--quiet"]
    return subprocess.run(args, cwd=folder, capture_output=True, text=True, timeout=600, check=False)


def test_editing_a_helper_module_of_a_python_policy_refuses_the_resume(tmp_path):
    """Issue 21 F5: the digest of a Python policy covers its module and the modules of its own
    source tree it imports, so an edit of a helper its act calls (here a behaviour-neutral
    one) refuses to continue the dataset; the class's source alone left it accepted, and one
    dataset could hold two versions of the policy."""
    (tmp_path / "pol.py").write_text(POLICY_MODULE, encoding="utf-8")
    (tmp_path / "polhelp.py").write_text(HELPER_MODULE, encoding="utf-8")
    first = _simulate_cli(tmp_path)
    assert first.returncode == 0, first.stderr[-2000:]
    assert _simulate_cli(tmp_path).returncode == 0  # unchanged: the run is the same
    manifest = (tmp_path / "ds" / "_manifest.json").read_bytes()
    (tmp_path / "polhelp.py").write_text(HELPER_MODULE.replace("[0]", "[-1]"), encoding="utf-8")
    refused = _simulate_cli(tmp_path)
    assert refused.returncode == 2
    lines = refused.stderr.strip().splitlines()
    assert len(lines) == 1 and "policy pol:Pol changed since this dataset was started" in lines[0]
    assert (tmp_path / "ds" / "_manifest.json").read_bytes() == manifest


def test_a_python_policy_digest_follows_its_own_modules_only(tmp_path):
    """In one process: re-imported after its helper changed, the policy has another digest;
    a module beside it that it does not import, and numpy / json, do not count."""
    import importlib

    from simkit.policies.registry import import_policy, policy_source_digest

    (tmp_path / "pol.py").write_text(POLICY_MODULE + "\nimport json\n\nimport numpy\n", encoding="utf-8")
    (tmp_path / "polhelp.py").write_text(HELPER_MODULE, encoding="utf-8")
    (tmp_path / "unrelated.py").write_text("X = 1\n", encoding="utf-8")

    def digest():
        for name in ("pol", "polhelp"):
            sys.modules.pop(name, None)
        importlib.invalidate_caches()
        return policy_source_digest(import_policy("pol:Pol"))

    sys.path.insert(0, str(tmp_path))
    try:
        before = digest()
        (tmp_path / "unrelated.py").write_text("X = 2\n", encoding="utf-8")
        assert digest() == before
        (tmp_path / "polhelp.py").write_text(HELPER_MODULE + "\n# edited\n", encoding="utf-8")
        assert digest() != before
    finally:
        sys.path.remove(str(tmp_path))
        for name in ("pol", "polhelp"):
            sys.modules.pop(name, None)
