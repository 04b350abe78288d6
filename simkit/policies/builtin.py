"""Built-in numba policies.

Every policy has the signature (the plug-in contract, see :mod:`simkit.policies.registry`)::

    policy(obs, mask, params, rng, rules, work) -> action

``obs``: the acting player's observation (``simkit.engine.layout.O_*``; read-only); ``mask``: bool
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
* ``expert`` — a parametric hand-value policy (:mod:`simkit.policies.expert`): outs, pairs,
  子, chariot / 清 / 天地 prospects, locks, discard danger, a win-now threshold.
"""

from __future__ import annotations

from typing import NamedTuple

from numba import njit

from simkit.engine import kernel as E
from simkit.engine.layout import (
    A_KONG,
    A_PASS,
    A_PENG,
    A_WIN,
    MELD_TYPES,
    N_ACTIONS,
    O_ACTIVE,
    O_CONC,
    O_EXP,
    O_NCHOW,
    O_PHASE,
    O_SEAT,
    O_STOCK_LEFT,
    PH_DISCARD,
    S_ACTIVE,
    S_CONC,
    S_EXP,
    S_NCHOW,
    S_PHASE,
    S_STOCK_POS,
    chain_regions,
)
from simkit.cards import CHE, JIANG, N_CARDS, N_COLOURS, N_RANKS, N_TYPES, TRIAD_SIZE, XIANG, ZU
from simkit.evaluator import kernel as K
from simkit.evaluator.tables import (
    IS_FAT_TYPE,
    N_PARTS,
    NO_DISCARD,
    PART_DISCARD_DELTA,
    PART_IDLE_BY_CODE,
    PART_KIND,
    PART_MEMBERS,
    PART_OF_TYPE,
    PART_REMOVE_DELTA,
    PART_SIZE,
)
from simkit.exposed import EXP_BLOCK, N_EXP_ROWS
from simkit.jit import hot_kernel
from simkit.policies.expert import EXPERT_WORK_SIZE, take_claim
from simkit.policies.learned import LEARNED_WORK_SIZE
from simkit.rng import next_below

P_RANDOM = 0
P_GREEDY = 1
P_PATIENT = 2
P_MC = 3
P_EXPERT = 4  # simkit.policies.expert
P_LEARNED = 5  # simkit.policies.learned

# greedy / patient scratch: the evaluator's workspace first, then these regions, each where the
# previous one ends
GREEDY_WORK = chain_regions((
    ("_W_OUT", K.N_OUT),  # evaluator result
    ("_W_CHOICE", K.N_CHOICE),  # evaluator best decomposition
    ("_W_CONC", N_TYPES),  # a holding: concealed counts
    ("_W_EXP", EXP_BLOCK),  # ... and its exposed block
    ("_W_USED", MELD_TYPES),  # concealed types a claim uses
    ("_W_PIDLE", N_PARTS),  # idle cards per part of the holding
    ("_W_PDELTA", N_PARTS),  # best-discard delta per part
), base=K.WORK_SIZE)
_W_OUT, _W_CHOICE, _W_CONC, _W_EXP, _W_USED, _W_PIDLE, _W_PDELTA = GREEDY_WORK.offsets
# one scratch array serves every built-in policy: expert lays out its own regions (from 0)
POLICY_WORK_SIZE = max(GREEDY_WORK.size, EXPERT_WORK_SIZE, LEARNED_WORK_SIZE)


@hot_kernel(cache=True, nogil=True)
def random_act(mask, rng):
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


@hot_kernel(cache=True, nogil=True)
def keep_value(conc, t):
    """How much a card of type t is worth keeping in a concealed holding (heuristic)."""
    c = conc[t]
    rank = t % N_RANKS
    colour = t // N_RANKS
    value = 0
    if c >= 2:
        value += 20
    if c >= 3:
        value += 20
    if IS_FAT_TYPE[t]:
        value += 3
    if rank == ZU:
        for x in range(N_COLOURS):
            if x != colour and conc[x * N_RANKS + ZU] > 0:
                value += 3
    else:
        first = colour * N_RANKS + (JIANG if rank <= XIANG else CHE)  # its triad
        for x in range(first, first + TRIAD_SIZE):
            if x != t and conc[x] > 0:
                value += 4
    return value


@hot_kernel(cache=True, nogil=True)
def best_discard(conc):
    """(discard type, idle cards left) minimising idle cards, ties by lowest keep value, then
    by lowest type; (-1, NO_DISCARD) if no card may be discarded.  A discard changes only its
    own part (:mod:`simkit.evaluator.tables`: ``PART_*``), so the fewest idle cards left are
    the holding's plus the least :data:`PART_DISCARD_DELTA` over the parts, and only the cards
    of the parts reaching it compete on keep value."""
    total = 0
    least = NO_DISCARD
    for part in range(N_PARTS):
        kind = PART_KIND[part]
        code = K.part_code(conc, part)
        total += PART_IDLE_BY_CODE[kind, code]
        delta = PART_DISCARD_DELTA[kind, code]
        if delta < least:
            least = delta
    if least == NO_DISCARD:
        return -1, NO_DISCARD
    best_t = -1
    best_keep = 1 << 30
    for part in range(N_PARTS):
        kind = PART_KIND[part]
        code = K.part_code(conc, part)
        if PART_DISCARD_DELTA[kind, code] != least:
            continue
        for i in range(PART_SIZE[part]):
            if PART_REMOVE_DELTA[kind, code, i] != least:
                continue
            t = PART_MEMBERS[part, i]
            keep = keep_value(conc, t)
            if keep < best_keep or (keep == best_keep and t < best_t):
                best_keep = keep
                best_t = t
    return best_t, total + least


class GreedyView(NamedTuple):
    """What greedy reads of a player's view (scalars, one kernel argument): ``src[conc_at:]``
    their 28 concealed counts and ``src[exp_at:]`` their (4, 28) exposed block in ``src`` (an
    observation or the state), ``n_chow`` their exposed 圆s, the ``phase``, ``t`` the active
    card and ``stock_left`` the cards left in the stock."""

    conc_at: int
    exp_at: int
    n_chow: int
    phase: int
    t: int
    stock_left: int


class Claim(NamedTuple):
    """A claim decision as greedy weighs it (scalars, one kernel argument): ``src[exp_at:]``
    the claimer's exposed block, ``n_chow`` their exposed 圆s, ``t`` the card offered and
    ``idle_now`` their idle cards before any claim."""

    exp_at: int
    n_chow: int
    t: int
    idle_now: int


@hot_kernel(cache=True, nogil=True)
def _claim_outcome(src, claim, action, evaluate, rules, work):
    """(wins right after the claim, idle cards after the best next discard, hu gain,
    complete right after the claim); ``evaluate`` False skips the evaluator (wins False).

    ``work[_W_CONC:]`` holds the claimer's concealed counts (left unchanged),
    ``work[_W_PIDLE:]`` / ``work[_W_PDELTA:]`` the idle cards and
    :data:`~simkit.evaluator.tables.PART_DISCARD_DELTA` of each part; ``claim``
    (:class:`Claim`): the claimer's exposed block in ``src``, their exposed 圆s, the card and
    their idle cards (``idle_now``)."""
    exp_at, n_chow, t, total = claim
    conc = work[_W_CONC : _W_CONC + N_TYPES]
    used = work[_W_USED : _W_USED + MELD_TYPES]
    exp_row, gain = take_claim(action, t, conc, used)  # the engine's own account of the cards it uses
    # every card a claim uses lies in the part of t: only that part's figures change
    part = PART_OF_TYPE[t]
    code = K.part_code(conc, part)
    after = total - work[_W_PIDLE + part] + PART_IDLE_BY_CODE[PART_KIND[part], code]
    wins = False
    if after == 0 and evaluate:
        # complete after the claim: ask the evaluator (the exposed block is copied only now)
        exp = work[_W_EXP : _W_EXP + EXP_BLOCK].reshape((N_EXP_ROWS, N_TYPES))
        for i in range(EXP_BLOCK):
            work[_W_EXP + i] = src[exp_at + i]
        if exp_row >= 0:
            exp[exp_row, t] += 1
        else:
            n_chow += 1
        out = work[_W_OUT : _W_OUT + K.N_OUT]
        choice = work[_W_CHOICE : _W_CHOICE + K.N_CHOICE]
        K.evaluate_kernel(conc, exp, n_chow, rules, K.WANT_WINS, out, choice, work[: K.WORK_SIZE])
        wins = out[K.OUT_WINS] == 1
    delta = PART_DISCARD_DELTA[PART_KIND[part], code]
    for q in range(N_PARTS):
        if q != part and work[_W_PDELTA + q] < delta:
            delta = work[_W_PDELTA + q]
    idle = NO_DISCARD if delta == NO_DISCARD else after + delta
    for i in range(MELD_TYPES):
        if used[i] >= 0:
            conc[used[i]] += 1
    return wins, idle, gain, after == 0


@hot_kernel(cache=True, nogil=True)
def _best_claim(src, claim, mask, params, rules, work, patient, evaluate):
    """greedy's best claim (A_PASS if none beats passing) of the :class:`Claim` ``claim``, the
    idle cards after the 碰 (if legal), the number of claims leaving a complete holding and the
    last of them; with ``evaluate`` False no claim counts as winning."""
    idle_now = claim.idle_now
    best_action = A_PASS
    best_key = idle_now * 100
    slack = params[2] if patient else 0
    peng_idle = 1 << 30
    n_complete = 0
    complete_action = -1
    for a in range(N_ACTIONS):
        if not mask[a] or a == A_PASS:
            continue
        wins, idle, gain, complete = _claim_outcome(src, claim, a, evaluate, rules, work)
        if complete:
            n_complete += 1
            complete_action = a
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
    return best_action, peng_idle, n_complete, complete_action


@hot_kernel(cache=True, nogil=True)
def _greedy_core(src, view, mask, params, rules, work, patient):
    """greedy / patient on a player's view (:class:`GreedyView`: where in ``src`` their 28
    concealed counts and (4, 28) exposed block lie, their exposed 圆s, the phase, the active
    card, the stock left); read from an observation or from the state (only what the player
    may see)."""
    conc_at, exp_at, n_chow, phase, t, stock_left = view
    conc = work[_W_CONC : _W_CONC + N_TYPES]
    for x in range(N_TYPES):
        conc[x] = src[conc_at + x]
    if phase == PH_DISCARD:
        if mask[A_WIN]:
            if not patient:
                return A_WIN
            out = work[_W_OUT : _W_OUT + K.N_OUT]
            choice = work[_W_CHOICE : _W_CHOICE + K.N_CHOICE]
            exp = work[_W_EXP : _W_EXP + EXP_BLOCK].reshape((N_EXP_ROWS, N_TYPES))
            for i in range(EXP_BLOCK):
                work[_W_EXP + i] = src[exp_at + i]
            K.evaluate_kernel(conc, exp, n_chow, rules, 0, out, choice, work[: K.WORK_SIZE])
            if out[K.OUT_UNITS] >= params[0] or stock_left <= params[1]:
                return A_WIN
        best_t, _ = best_discard(conc)
        if best_t >= 0:
            return best_t
        return A_WIN  # only a win is legal
    # claim decision
    if mask[A_KONG]:
        return A_KONG
    idle_now = 0
    for part in range(N_PARTS):
        kind = PART_KIND[part]
        code = K.part_code(conc, part)
        idle = PART_IDLE_BY_CODE[kind, code]
        work[_W_PIDLE + part] = idle
        idle_now += idle
        work[_W_PDELTA + part] = PART_DISCARD_DELTA[kind, code]
    # first without the evaluator: a claim that would win is taken anyway when it is the only
    # claim leaving a complete holding and the best claim even if it did not win
    claim = Claim(exp_at, n_chow, t, idle_now)
    best_action, peng_idle, n_complete, complete_action = _best_claim(
        src, claim, mask, params, rules, work, patient, False)
    if n_complete > 1 or (n_complete == 1 and best_action != complete_action):
        best_action, peng_idle, n_complete, complete_action = _best_claim(
            src, claim, mask, params, rules, work, patient, True)
    if best_action == A_PASS and mask[A_PENG] and peng_idle <= idle_now:
        # declining a 碰 through a chariot forbids winning (the engine marks it): greedy takes
        # a legal 碰 that adds no idle card rather than pass it
        return A_PENG
    return best_action


@njit(cache=True, nogil=True, inline="always")
def greedy_like(obs, mask, params, rules, work, patient):
    """greedy (patient=False) / patient on an observation."""
    seat = obs[O_SEAT]
    view = GreedyView(O_CONC, O_EXP + EXP_BLOCK * seat, obs[O_NCHOW + seat], obs[O_PHASE], obs[O_ACTIVE],
                      obs[O_STOCK_LEFT])
    return _greedy_core(obs, view, mask, params, rules, work, patient)


@njit(cache=True, nogil=True, inline="always")
def greedy_state(s, p, mask, params, rules, work, patient):
    """:func:`greedy_like` reading player p's view straight from the state (no observation
    copy): p's own concealed and exposed cards, the active card, the stock size."""
    view = GreedyView(S_CONC + N_TYPES * p, S_EXP + EXP_BLOCK * p, s[S_NCHOW + p], s[S_PHASE], s[S_ACTIVE],
                      N_CARDS - s[S_STOCK_POS])
    return _greedy_core(s, view, mask, params, rules, work, patient)
