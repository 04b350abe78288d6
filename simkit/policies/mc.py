"""``mc``: determinised Monte Carlo search with greedy rollouts.

At each decision with more than one legal action the player samples ``R`` determinisations
of what it cannot see — the unknown cards are dealt at random to the opponents' concealed
hands (their sizes are public) and to the stock — then, for each candidate action, applies it
in every determinisation and plays the deal out with ``greedy`` at all seats.  The action
with the best mean payoff wins (the same determinisations for every candidate: common random
numbers).  It leaves greedy's own choice only on evidence: another candidate must beat it by
a paired mean whose t statistic over the determinisations exceeds ``z``.
params: ``[0]`` R, rollouts per candidate (default 16); ``[1]`` the number of discard
candidates (default 4: greedy's choice first, then the others in greedy's discard order;
every claim option is always a candidate); ``[2]`` z (default 1.5); ``[3]`` where to search:
0 every decision (default), 1 claim decisions only, 2 discard decisions only; ``[4]``
opponent-model strength: hill-climbing swaps that make each sampled opponent hand closer to
complete (default 0: opponents' hands sampled uniformly; 40 measured no better, at twice the cost).  A deviation
also needs at least 4 determinisations in which the two actions' payoffs differ.

The observation is all it uses: it never reads the hidden cards of the real deal.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from simkit.engine import kernel as E
from simkit.engine import layout as L
from simkit.policies.builtin import POLICY_WORK_SIZE, greedy_like, greedy_state, keep_value
from simkit.evaluator import kernel as K
from simkit.rng import next_below

MAX_ROLLOUTS = 64


@njit(cache=True, nogil=True)
def _sharpen(s2, p, rng, steps):
    """Opponent model: real opponents have spent the deal discarding idle cards, so their
    hands are far closer to complete than random ones.  Hill-climb: swap a random concealed
    card of p with a random stock card when that leaves fewer idle cards."""
    stock_lo = s2[L.S_STOCK_POS]
    n_stock = 112 - stock_lo
    if n_stock == 0:
        return
    conc = s2[L.S_CONC + 28 * p : L.S_CONC + 28 * (p + 1)]
    n_conc = 0
    for t in range(28):
        n_conc += conc[t]
    if n_conc == 0:
        return
    idle = K.min_idle_kernel(conc)
    for _ in range(steps):
        if idle == 0:
            return
        k = next_below(rng, n_conc)
        x = -1
        for t in range(28):
            if k < conc[t]:
                x = t
                break
            k -= conc[t]
        j = stock_lo + next_below(rng, n_stock)
        y = s2[L.S_DECK + j] // 4
        if x == y:
            continue
        conc[x] -= 1
        conc[y] += 1
        new_idle = K.min_idle_kernel(conc)
        if new_idle < idle:
            idle = new_idle
            s2[L.S_DECK + j] = x * 4
        else:
            conc[y] -= 1
            conc[x] += 1


@njit(cache=True, nogil=True)
def _determinise(obs, rng, s2):
    """A full state consistent with ``obs``; False if the observation is inconsistent."""
    s2[:] = 0
    me = obs[L.O_SEAT]
    unknown = np.zeros(28, dtype=np.int64)
    for t in range(28):
        n = 4 - obs[L.O_CONC + t] - obs[L.O_DEAD + t]
        for p in range(3):
            n -= obs[L.O_EXPCARDS + 28 * p + t]
        if obs[L.O_ACTIVE] == t:
            n -= 1
        if n < 0:
            return False
        unknown[t] = n
    pool = np.empty(112, dtype=np.int64)
    k = 0
    for t in range(28):
        for _ in range(unknown[t]):
            pool[k] = t
            k += 1
    stock_left = obs[L.O_STOCK_LEFT]
    need = stock_left
    for p in range(3):
        if p != me:
            need += obs[L.O_NCONC + p]
    if need != k:
        return False
    for i in range(k - 1, 0, -1):
        j = next_below(rng, i + 1)
        tmp = pool[i]
        pool[i] = pool[j]
        pool[j] = tmp
    idx = 0
    for p in range(3):
        if p == me:
            for t in range(28):
                s2[L.S_CONC + 28 * p + t] = obs[L.O_CONC + t]
        else:
            for _ in range(obs[L.O_NCONC + p]):
                s2[L.S_CONC + 28 * p + pool[idx]] += 1
                idx += 1
    s2[L.S_STOCK_POS] = 112 - stock_left
    for i in range(stock_left):
        s2[L.S_DECK + 112 - stock_left + i] = pool[idx] * 4
        idx += 1
    for i in range(3 * 4 * 28):
        s2[L.S_EXP + i] = obs[L.O_EXP + i]
    for i in range(3 * 28):
        s2[L.S_EXPCARDS + i] = obs[L.O_EXPCARDS + i]
        s2[L.S_LOCK + i] = obs[L.O_LOCK + i]
    for t in range(28):
        s2[L.S_DEAD + t] = obs[L.O_DEAD + t]
    for p in range(3):
        s2[L.S_NCHOW + p] = obs[L.O_NCHOW + p]
        s2[L.S_XIANGGONG + p] = obs[L.O_XIANGGONG + p]
        s2[L.S_NOWIN + p] = obs[L.O_NOWIN + p]
    s2[L.S_PHASE] = obs[L.O_PHASE]
    s2[L.S_PLAYER] = obs[L.O_PLAYER]
    s2[L.S_ACTIVE] = obs[L.O_ACTIVE]
    s2[L.S_ACTIVE_ID] = obs[L.O_ACTIVE] * 4 if obs[L.O_ACTIVE] >= 0 else -1
    s2[L.S_SOURCE] = obs[L.O_SOURCE]
    s2[L.S_SOURCE_PLAYER] = obs[L.O_SOURCE_PLAYER]
    s2[L.S_STAGE] = obs[L.O_STAGE]
    s2[L.S_DECIDED] = obs[L.O_DECIDED]
    s2[L.S_FIRST] = obs[L.O_FIRST]
    s2[L.S_GAIN] = obs[L.O_GAIN]
    s2[L.S_GAIN_TYPE] = obs[L.O_GAIN_TYPE]
    s2[L.S_DEALER] = obs[L.O_DEALER]
    s2[L.S_WINNER] = -1
    s2[L.S_WIN_KIND] = -1
    s2[L.S_HU] = -1
    return True


@njit(cache=True, nogil=True)
def _rollout(s2, me, rules, mask, work, pwork, no_params, ev, ev_n):
    """Play s2 to the end with greedy everywhere; my payoff."""
    for _ in range(2000):
        if s2[L.S_PHASE] == L.PH_OVER:
            break
        # greedy reads only the acting player's own view of s2: no observation copy
        a = greedy_state(s2, s2[L.S_PLAYER], mask, no_params, rules, pwork, False)
        E.apply_legal(s2, a, rules, mask, work, ev, ev_n)
    return s2[L.S_PAYOFF + me]


@njit(cache=True, nogil=True)
def mc_act(obs, mask, params, rng, rules, work):
    """The ``mc`` policy (see the module docstring)."""
    greedy_choice = greedy_like(obs, mask, params, rules, work, False)
    if mask[L.A_WIN]:
        return L.A_WIN
    n_legal = 0
    for a in range(L.N_ACTIONS):
        if mask[a]:
            n_legal += 1
    if n_legal <= 1:
        return greedy_choice
    mode = int(params[3])  # 0: search every decision, 1: claims only, 2: discards only
    is_discard = obs[L.O_PHASE] == L.PH_DISCARD
    if (mode == 1 and is_discard) or (mode == 2 and not is_discard):
        return greedy_choice
    rollouts = int(params[0]) if params[0] >= 1 else 16
    rollouts = min(rollouts, MAX_ROLLOUTS)
    max_cands = int(params[1]) if params[1] >= 1 else 4
    # candidates: greedy's choice, then discards by idle-after / keep value, all claims
    cands = np.full(L.N_ACTIONS, -1, dtype=np.int64)
    n_c = 0
    cands[n_c] = greedy_choice
    n_c += 1
    if obs[L.O_PHASE] == L.PH_DISCARD:
        conc = obs[L.O_CONC : L.O_CONC + 28].copy()
        scores = np.full(28, 1 << 40, dtype=np.int64)
        for t in range(28):
            if mask[t] and t != greedy_choice:
                keep = keep_value(conc, t)
                conc[t] -= 1
                scores[t] = K.min_idle_kernel(conc) * 1000 + keep
                conc[t] += 1
        while n_c < max_cands:
            best = -1
            for t in range(28):
                if scores[t] < (1 << 40) and (best < 0 or scores[t] < scores[best]):
                    best = t
            if best < 0:
                break
            cands[n_c] = best
            n_c += 1
            scores[best] = 1 << 40
    else:
        for a in range(L.N_ACTIONS):
            if mask[a] and a != greedy_choice:
                cands[n_c] = a
                n_c += 1
    if n_c == 1:
        return greedy_choice
    me = obs[L.O_SEAT]
    dets = np.zeros((rollouts, L.N_STATE), dtype=np.int64)
    n_det = 0
    sharpen = int(params[4]) if params[4] >= 0 else 0
    for r in range(rollouts):
        if _determinise(obs, rng, dets[n_det]):
            for p in range(3):
                if p != obs[L.O_SEAT]:
                    _sharpen(dets[n_det], p, rng, sharpen)
            n_det += 1
    if n_det == 0:
        return greedy_choice
    s2 = np.zeros(L.N_STATE, dtype=np.int64)
    mask2 = np.zeros(L.N_ACTIONS, dtype=np.bool_)
    ework = np.zeros(E.ENGINE_WORK_SIZE, dtype=np.int64)
    pwork = np.zeros(POLICY_WORK_SIZE, dtype=np.int64)
    no_params = np.zeros(8, dtype=np.float64)
    ev = np.zeros((0, L.EVENT_WIDTH), dtype=np.int64)
    ev_n = np.zeros(1, dtype=np.int64)
    # payoff of every candidate in every determinisation (common random numbers)
    pay = np.zeros((n_c, n_det), dtype=np.float64)
    for i in range(n_c):
        a = cands[i]
        for r in range(n_det):
            for j in range(L.N_STATE):  # not a slice copy (see simkit.engine.kernel._claim_keeps_playable)
                s2[j] = dets[r, j]
            E.legal_mask(s2, rules, mask2, ework)
            if not mask2[a]:
                pay[i, r] = -1e9
                continue
            E.apply_legal(s2, a, rules, mask2, ework, ev, ev_n)
            pay[i, r] = _rollout(s2, me, rules, mask2, ework, pwork, no_params, ev, ev_n)
    # leave greedy's choice (candidate 0) only on evidence: paired t > z
    z = params[2] if params[2] > 0 else 1.5
    best_action = greedy_choice
    best_gain = 0.0
    for i in range(1, n_c):
        mean = 0.0
        n_differ = 0
        for r in range(n_det):
            mean += pay[i, r] - pay[0, r]
            if pay[i, r] != pay[0, r]:
                n_differ += 1
        mean /= n_det
        if n_differ < 4:
            continue  # too few determinisations tell the two apart
        var = 0.0
        for r in range(n_det):
            d = pay[i, r] - pay[0, r] - mean
            var += d * d
        if n_det > 1:
            var /= n_det - 1
        se = np.sqrt(var / n_det)
        if mean > best_gain and (mean > z * se if se > 0 else mean > 0):
            best_gain = mean
            best_action = cands[i]
    return best_action
