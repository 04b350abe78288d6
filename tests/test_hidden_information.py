"""No built-in policy peeks at what its player cannot see.

At decision points of real deals, the hidden cards (the two opponents' concealed cards and the
stock's order) are reshuffled consistently with what the acting player has seen: the same
multiset of unseen cards, each opponent keeping their number of concealed cards, the stock its
size.  The player's observation must not change, and every built-in policy, run on the state
itself as the batch kernels run it (``builtin_act_state``: greedy and patient read the
player's own view straight from the state, mc determinises from the observation), must choose
the same action from the same random-stream state.  A policy reading an opponent's hand or the
next stock card fails here (checked below by a deliberately peeking policy).
"""

from __future__ import annotations

import numpy as np
import pytest
from numba import njit

from simkit.engine import kernel as E
from simkit.engine import layout as L
from simkit.engine.env import Game
from simkit.policies.builtin import P_EXPERT, P_GREEDY, P_LEARNED, P_MC, P_PATIENT, P_RANDOM, POLICY_WORK_SIZE
from simkit.policies.dispatch import builtin_act_state
from simkit.policies.model import BUILTIN_MODEL
from simkit.policies.registry import parse_policies, policy_arrays
from simkit.rules import RuleSet

POLICY_IDS = {"random": P_RANDOM, "greedy": P_GREEDY, "patient": P_PATIENT, "mc": P_MC, "expert": P_EXPERT,
              "learned": P_LEARNED}


def _params(name: str) -> np.ndarray:
    """The parameter row the kernels give the policy (a learned policy's holds its model)."""
    return policy_arrays(parse_policies([name] * 3))[1][0]


def reshuffle_hidden(s: np.ndarray, p: int, rng: np.random.Generator) -> np.ndarray:
    """A copy of state ``s`` with the cards p cannot see dealt again at random: the opponents'
    concealed cards and the stock (ids from S_STOCK_POS on), same sizes."""
    out = s.copy()
    opponents = [q for q in range(3) if q != p]
    stock_pos = int(s[L.S_STOCK_POS])
    stock_ids = s[L.S_DECK + stock_pos : L.S_DECK + 112].copy()
    pool = [t for q in opponents for t in range(28) for _ in range(int(s[L.S_CONC + 28 * q + t]))]
    pool += [int(c) // 4 for c in stock_ids]
    pool = np.array(pool, dtype=np.int64)
    rng.shuffle(pool)
    sizes = [int(s[L.S_CONC + 28 * q : L.S_CONC + 28 * q + 28].sum()) for q in opponents]
    k = 0
    for q, n in zip(opponents, sizes):
        out[L.S_CONC + 28 * q : L.S_CONC + 28 * q + 28] = np.bincount(pool[k : k + n], minlength=28)
        k += n
    # the stock: card ids of the reshuffled types (any free copy: the engine reads id // 4)
    free = {t: sorted(int(c) for c in stock_ids if int(c) // 4 == t) for t in range(28)}
    spare_ids = {t: [t * 4 + c for c in range(4)] for t in range(28)}
    used = {int(c) for c in s[L.S_DECK : L.S_DECK + stock_pos]}
    new_stock = []
    for t in pool[k:]:
        t = int(t)
        if free[t]:
            new_stock.append(free[t].pop())
        else:  # a copy that was in an opponent's hand: take an id not yet in the stock
            candidates = [c for c in spare_ids[t] if c not in new_stock and c not in stock_ids]
            new_stock.append(candidates[0] if candidates else t * 4)
    assert len(new_stock) == 112 - stock_pos and used is not None
    out[L.S_DECK + stock_pos : L.S_DECK + 112] = new_stock
    # what the opponents' hands decided is hidden too: their passed types, cannot-win flags
    # and whether they have decided on the active card
    for q in opponents:
        out[L.S_LOCK + 28 * q : L.S_LOCK + 28 * q + 28] = rng.integers(0, 2, 28)
        out[L.S_NOWIN + q] = rng.integers(0, 2)
        out[L.S_DECIDED] ^= int(rng.integers(0, 2)) << q
    return out


def _act(policy: str, s: np.ndarray, p: int, rules: np.ndarray, stream: np.ndarray) -> int:
    mask = np.zeros(L.N_ACTIONS, dtype=np.bool_)
    E.legal_mask(s.copy(), rules, mask, E.new_engine_workspace())
    obs = np.zeros(L.N_OBS, dtype=np.int64)
    work = np.zeros(POLICY_WORK_SIZE, dtype=np.int64)
    assert s[L.S_PLAYER] == p  # the dispatcher acts for the player to act in s
    return int(builtin_act_state(POLICY_IDS[policy.partition(":")[0]], s.copy(), obs, mask, _params(policy),
                                 stream.copy(), rules, work))


def _decision_points(seed: int, deals: int, every: int):
    """States (array copies) and their players at every ``every``-th decision of greedy deals."""
    game = Game(policies=("greedy", "greedy", "greedy"))
    rules = RuleSet().to_array()
    k = 0
    for deal in range(deals):
        state = game.new_initial_state(seed=seed, deal=deal)
        while not state.is_terminal():
            p = state.current_player()
            if k % every == 0:
                yield np.array(state.state_array), p
            k += 1
            s = np.array(state.state_array)
            state.apply_action(_act("greedy", s, p, rules, np.array([1, 2, 3, 4], dtype=np.uint64)))


# learned plays a model file (learned:PATH; plain learned is no built-in): the shipped model's
@pytest.mark.parametrize("policy", ["random", "greedy", "patient", "expert", f"learned:{BUILTIN_MODEL}"],
                         ids=["random", "greedy", "patient", "expert", "learned"])
def test_policy_ignores_hidden_cards(policy):
    rules = RuleSet().to_array()
    rng = np.random.default_rng(7)
    checked = 0
    for s, p in _decision_points(seed=3, deals=25, every=3):
        stream = rng.integers(1, 2**63, size=4, dtype=np.uint64)
        action = _act(policy, s, p, rules, stream)
        for _ in range(2):
            other = reshuffle_hidden(s, p, rng)
            obs_a, obs_b = np.zeros(L.N_OBS, np.int64), np.zeros(L.N_OBS, np.int64)
            E.observe(s, p, obs_a)
            E.observe(other, p, obs_b)
            assert np.array_equal(obs_a, obs_b)  # the observation shows nothing hidden
            assert _act(policy, other, p, rules, stream) == action
        checked += 1
    assert checked > 150


# the default mc (claims only, focus, racing); racing at every decision, sharpened, with a
# horizon; expert as the base policy
MC_SPECS = ["mc", "mc:8,3,1.5,0,10,2,0,6", "mc:4,3,1.5,0,0,2,0,0,1"]


@pytest.mark.slow
@pytest.mark.parametrize("spec", MC_SPECS)
def test_mc_ignores_hidden_cards(spec):
    """mc determinises the unseen cards from the observation: same stream, same choice."""
    rules = RuleSet().to_array()
    rng = np.random.default_rng(8)
    checked = 0
    for s, p in _decision_points(seed=4, deals=3, every=6):
        stream = rng.integers(1, 2**63, size=4, dtype=np.uint64)
        action = _act(spec, s, p, rules, stream)
        assert _act(spec, reshuffle_hidden(s, p, rng), p, rules, stream) == action
        checked += 1
    assert checked >= 10


@njit
def _peeking_policy(s, p):
    """Discards the type the next player holds most of (reads a hidden hand)."""
    q = (p + 1) % 3
    best = 0
    for t in range(28):
        if s[L.S_CONC + 28 * q + t] > s[L.S_CONC + 28 * q + best]:
            best = t
    return best


def test_the_reshuffle_catches_a_peeking_policy():
    rng = np.random.default_rng(9)
    changed = 0
    for s, p in _decision_points(seed=5, deals=5, every=2):
        if _peeking_policy(reshuffle_hidden(s, p, rng), p) != _peeking_policy(s, p):
            changed += 1
    assert changed > 10


def test_reshuffle_keeps_what_is_seen():
    rng = np.random.default_rng(10)
    for s, p in _decision_points(seed=6, deals=3, every=5):
        other = reshuffle_hidden(s, p, rng)
        assert E.card_total(other) == E.card_total(s)
        assert other[L.S_DECIDED] >> p & 1 == s[L.S_DECIDED] >> p & 1
        hidden = lambda x: np.bincount(np.concatenate([  # noqa: E731
            np.repeat(np.arange(28), x[L.S_CONC + 28 * q : L.S_CONC + 28 * q + 28]) for q in range(3) if q != p]
            + [x[L.S_DECK + int(x[L.S_STOCK_POS]) : L.S_DECK + 112] // 4]), minlength=28)
        assert np.array_equal(hidden(other), hidden(s))
        assert np.array_equal(other[L.S_CONC + 28 * p : L.S_CONC + 28 * p + 28], s[L.S_CONC + 28 * p : L.S_CONC + 28 * p + 28])


def test_public_history_is_the_public_part_of_the_event_log():
    """The observation's history is the event log without passes (and the 穿牌 marker), the
    same for every seat, in order; no deal comes near its capacity."""
    game = Game(policies=("greedy", "greedy", "greedy"))
    rules = RuleSet().to_array()
    public = {L.E_DRAW, L.E_DISCARD, L.E_CLAIM, L.E_TABLE, L.E_XIANGGONG, L.E_WIN}
    longest = 0
    for deal in range(60):
        state = game.new_initial_state(seed=12, deal=deal)
        while not state.is_terminal():
            p = state.current_player()
            state.apply_action(_act("greedy", np.array(state.state_array), p, rules,
                                    np.array([1, 2, 3, 4], dtype=np.uint64)))
        events = state.events()
        expected = [(int(k), int(q), int(t), int(a) if k in (L.E_CLAIM, L.E_WIN, L.E_XIANGGONG) else 0)
                    for k, q, t, a, _, _ in events if k in public]
        views = [state.observation(q).history for q in range(3)]
        assert [tuple(int(x) for x in row) for row in views[0]] == expected
        assert all(np.array_equal(v, views[0]) for v in views)
        longest = max(longest, len(expected))
    assert 0 < longest < L.MAX_HIST // 2


def test_observe_writes_every_field_whatever_the_array_held():
    """observe does not clear the whole array and copies only the history rows added since an
    earlier observation of the same deal: an array reused through a deal (any seat), or one
    marked O_NHIST_UNKNOWN (a new deal, or anything at all), must give exactly the observation
    a fresh array gets.  Policies must treat ``obs`` as read-only."""
    rng = np.random.default_rng(11)
    game = Game(policies=("greedy", "greedy", "greedy"))
    rules = RuleSet().to_array()
    reused = np.zeros(L.N_OBS, dtype=np.int64)
    checked = 0
    for deal in range(4):
        state = game.new_initial_state(seed=13, deal=deal)
        reused[L.O_NHIST] = L.O_NHIST_UNKNOWN  # a new deal in the same array
        while not state.is_terminal():
            s = np.array(state.state_array)
            p = state.current_player()
            for seat in (p, (p + 1) % 3):
                fresh = np.zeros(L.N_OBS, dtype=np.int64)
                E.observe(s, seat, fresh)
                E.observe(s, seat, reused)
                assert np.array_equal(reused, fresh)
            fresh = np.zeros(L.N_OBS, dtype=np.int64)
            E.observe(s, p, fresh)
            garbage = rng.integers(-9, 9, L.N_OBS)
            garbage[L.O_NHIST] = L.O_NHIST_UNKNOWN
            E.observe(s, p, garbage)
            assert np.array_equal(garbage, fresh)
            state.apply_action(_act("greedy", s, p, rules, np.array([1, 2, 3, 4], dtype=np.uint64)))
            checked += 1
    assert checked > 100
