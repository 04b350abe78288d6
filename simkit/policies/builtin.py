"""Built-in numba policies.

Every policy has the signature (the plug-in contract, see :mod:`simkit.policies.registry`)::

    policy(obs, mask, params, rng, rules, work) -> action

``obs``: the acting player's observation (``simkit.engine.layout.O_*``); ``mask``: bool
legal-action mask (``N_ACTIONS``); ``params``: float64 parameter array of the policy;
``rng``: the seat's xoshiro state (uint64[4], advance it only through :mod:`simkit.rng`);
``rules``: ``RuleSet.to_array()``; ``work``: int64 scratch of ``POLICY_WORK_SIZE``.
It must return a legal action.

* ``random`` — uniform over the legal actions, but always declares a legal win.
* ``greedy`` — one ply on the evaluator: wins when it can; claims when the claim (with its
  best following discard) leaves fewer idle cards, or as many and more hu (碰 / 发子 / 吃);
  always takes a legal 发子 and a 碰 through a chariot (declining them forbids winning);
  discards the card whose loss leaves the fewest idle cards, breaking ties by a keep value
  (pairs, 子, fat cards and 圆 partners are kept).  params: none.
* ``patient`` — a hu-maximiser: like greedy but declares a win only with at least
  ``params[0]`` units (default 2) unless the stock has at most ``params[1]`` cards left
  (default 6), and takes any 碰 / 发子 that costs at most ``params[2]`` extra idle cards
  (default 1).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from simkit.engine import kernel as E
from simkit.engine.layout import (
    A_KONG,
    A_PASS,
    A_PENG,
    A_WIN,
    M_KONG,
    M_PENG,
    M_ZHAN,
    N_ACTIONS,
    O_ACTIVE,
    O_CONC,
    O_EXP,
    O_NCHOW,
    O_PHASE,
    O_SEAT,
    O_STOCK_LEFT,
    PH_DISCARD,
)
from simkit.evaluator import kernel as K
from simkit.rng import next_below

P_RANDOM = 0
P_GREEDY = 1
P_PATIENT = 2
P_MC = 3

# policy scratch: evaluator workspace, out, choice, a holding (28 + 112), used (4)
POLICY_WORK_SIZE = K.WORK_SIZE + K.N_OUT + K.N_CHOICE + 28 + 112 + 8
_W_OUT = K.WORK_SIZE
_W_CHOICE = _W_OUT + K.N_OUT
_W_CONC = _W_CHOICE + K.N_CHOICE
_W_EXP = _W_CONC + 28
_W_USED = _W_EXP + 112


@njit(cache=True, nogil=True)
def _random_act(mask, rng):
    if mask[A_WIN]:
        return A_WIN
    n = 0
    for a in range(N_ACTIONS):
        if mask[a]:
            n += 1
    k = next_below(rng, n)
    for a in range(N_ACTIONS):
        if mask[a]:
            if k == 0:
                return a
            k -= 1
    return A_PASS


@njit(cache=True, nogil=True)
def keep_value(conc, t):
    """How much a card of type t is worth keeping in a concealed holding (heuristic)."""
    c = conc[t]
    rank = t % 7
    colour = t // 7
    value = 0
    if c >= 2:
        value += 20
    if c >= 3:
        value += 20
    if rank == 0 or rank == 3 or rank == 6:
        value += 3
    if rank == 6:
        for x in range(4):
            if x != colour and conc[x * 7 + 6] > 0:
                value += 3
    else:
        first = colour * 7 + (0 if rank < 3 else 3)
        for x in range(first, first + 3):
            if x != t and conc[x] > 0:
                value += 4
    return value


@njit(cache=True, nogil=True)
def best_discard(conc):
    """(discard type, idle cards left) minimising idle cards, ties by lowest keep value."""
    best_t = -1
    best_score = 1 << 30
    best_idle = 1 << 30
    total = 0
    part_idle = np.empty(9, dtype=np.int64)
    for part in range(9):
        part_idle[part] = K._part_idle(conc, part)
        total += part_idle[part]
    for t in range(28):
        if conc[t] == 0 or t % 7 == 0:
            continue
        keep = keep_value(conc, t)
        part = K._part_of(t)
        conc[t] -= 1
        idle = total - part_idle[part] + K._part_idle(conc, part)
        conc[t] += 1
        score = idle * 1000 + keep
        if score < best_score:
            best_score = score
            best_t = t
            best_idle = idle
    return best_t, best_idle


@njit(cache=True, nogil=True)
def _claim_outcome(obs, action, rules, work):
    """(wins right after the claim, idle cards after the best next discard, hu gain)."""
    seat = obs[O_SEAT]
    t = obs[O_ACTIVE]
    conc = work[_W_CONC : _W_CONC + 28]
    for x in range(28):
        conc[x] = obs[O_CONC + x]
    fat = t % 7 == 0 or t % 7 == 3 or t % 7 == 6
    used = work[_W_USED : _W_USED + 4]
    kind = E._meld_cards(action, t, used)  # the engine's own account of the cards a claim uses
    for i in range(4):
        if used[i] >= 0:
            conc[used[i]] -= 1
    gain = 1  # an exposed 圆
    exp_row = -1
    if kind == M_PENG:
        exp_row = K.EXP_PENG
        gain = 2 if fat else 1
    elif kind == M_KONG:
        exp_row = K.EXP_KONG
        gain = 12 if fat else 6
    elif kind == M_ZHAN:
        exp_row = K.EXP_ZHAN
        gain = 0
    wins = False
    if K._min_idle(conc) == 0:
        # complete after the claim: ask the evaluator (the exposed block is copied only now)
        exp = work[_W_EXP : _W_EXP + 112].reshape((4, 28))
        for i in range(112):
            work[_W_EXP + i] = obs[O_EXP + 112 * seat + i]
        n_chow = obs[O_NCHOW + seat]
        if exp_row >= 0:
            exp[exp_row, t] += 1
        else:
            n_chow += 1
        out = work[_W_OUT : _W_OUT + K.N_OUT]
        choice = work[_W_CHOICE : _W_CHOICE + K.N_CHOICE]
        K._evaluate_kernel(conc, exp, n_chow, rules, 0, out, choice, work[: K.WORK_SIZE])
        wins = out[K.OUT_WINS] == 1
    _, idle = best_discard(conc)
    return wins, idle, gain


@njit(cache=True, nogil=True)
def _greedy_like(obs, mask, params, rules, work, patient):
    if obs[O_PHASE] == PH_DISCARD:
        if mask[A_WIN]:
            if not patient:
                return A_WIN
            out = work[_W_OUT : _W_OUT + K.N_OUT]
            choice = work[_W_CHOICE : _W_CHOICE + K.N_CHOICE]
            seat = obs[O_SEAT]
            conc = work[_W_CONC : _W_CONC + 28]
            for x in range(28):
                conc[x] = obs[O_CONC + x]
            exp = work[_W_EXP : _W_EXP + 112].reshape((4, 28))
            for i in range(112):
                work[_W_EXP + i] = obs[O_EXP + 112 * seat + i]
            K._evaluate_kernel(conc, exp, obs[O_NCHOW + seat], rules, 0, out, choice, work[: K.WORK_SIZE])
            if out[K.OUT_UNITS] >= params[0] or obs[O_STOCK_LEFT] <= params[1]:
                return A_WIN
        conc = work[_W_CONC : _W_CONC + 28]
        for x in range(28):
            conc[x] = obs[O_CONC + x]
        t, _ = best_discard(conc)
        if t >= 0:
            return t
        return A_WIN  # only a win is legal
    # claim decision
    if mask[A_KONG]:
        return A_KONG
    conc = work[_W_CONC : _W_CONC + 28]
    for x in range(28):
        conc[x] = obs[O_CONC + x]
    idle_now = K._min_idle(conc)
    best_action = A_PASS
    best_key = idle_now * 100
    slack = params[2] if patient else 0
    peng_idle = 1 << 30
    for a in range(N_ACTIONS):
        if not mask[a] or a == A_PASS:
            continue
        wins, idle, gain = _claim_outcome(obs, a, rules, work)
        if a == A_PENG:
            peng_idle = idle
        if wins:
            key = -100000 - gain
        else:
            effective = idle
            if patient and (a == A_PENG or a == A_KONG) and idle <= idle_now + slack:
                effective = min(idle, idle_now)
            key = effective * 100 - gain
        if key < best_key:
            best_key = key
            best_action = a
    if best_action == A_PASS and mask[A_PENG] and peng_idle <= idle_now:
        # declining a 碰 through a chariot forbids winning (the engine marks it): greedy takes
        # a legal 碰 that adds no idle card rather than pass it
        return A_PENG
    return best_action


