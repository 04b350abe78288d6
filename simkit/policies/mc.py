"""``mc``: determinised Monte Carlo search with greedy (or expert) rollouts.

At a decision it searches, the player samples ``R`` determinisations of what it cannot see —
the unseen cards (those not in its hand, not exposed, not dead and not the active card) are
dealt at random to the opponents' concealed hands (their sizes are public) and to the stock —
then, for each candidate action, applies it in every determinisation and plays the deal out
with its base policy at all seats: ``greedy`` (default) or ``expert`` (``base`` 1).  The same
determinisations serve every candidate (common random numbers).  It leaves the base policy's
own choice only on evidence: another candidate must beat it by a paired mean whose t statistic
over the determinisations exceeds ``z``, in at least 4 determinisations where the two payoffs
differ (the largest such mean wins).

Where the search pays (issue 14: duplicate play against greedy, 1,000 deals × 6 seatings)
almost all of mc's gain comes from claim decisions — searching claims only gave +0.37 牌 per
seat per deal, searching discards only +0.04 (an interval containing 0), both against +0.39
for searching every decision — and, among claims, from 吃 / 占 / passing rather than from the
碰 and 发子 greedy takes (valued in mc's own model, 4,550 decisions of greedy deals with 96
fresh determinisations each: searching those gained 8 % of the claim searches' gain at half
their cost).  So the default searches claim decisions only (``search_mode`` 1),
skips greedy's 碰 / 发子 (``focus`` 1), and races the candidates: after the first ``race``
determinisations only the candidates whose paired mean beats greedy's choice go on, and the
search stops there when none does (most decisions).  About 13× less CPU per deal than the
exhaustive search, and stronger; ``mc:48,4,1,1,0,4,0,0,1`` (expert as the base policy, 48
determinisations, every claim decision) beats ``expert`` (the figures are in docs/engine.md).

params (by name, ``mc:rollouts=8:z=2``, or by position, ``mc:8,4,2``; :data:`MC_PARAMS` is the
table of their names, defaults and ranges, ``params[MC_ROLLOUTS]`` ... in the code):

* ``[0]`` rollouts: determinisations R (default 12, 1 .. 64);
* ``[1]`` candidates: discard candidates — greedy's choice, then the other discards in
  greedy's order, this many in all (default 4); every claim option is always a candidate;
* ``[2]`` z: the t threshold for leaving greedy's choice (default 1.0, > 0);
* ``[3]`` search_mode: 0 every decision, 1 claim decisions only (default), 2 discards only;
* ``[4]`` sharpen: opponent-model strength, hill-climbing swaps that make each sampled
  opponent hand closer to complete (default 0: uniform; 40 measured no better, at twice the cost);
* ``[5]`` race: determinisations of the first round of racing (default 3; 0: no racing,
  every candidate gets all R);
* ``[6]`` focus: 1 (default) keeps greedy's 碰 / 发子 and, where discards are searched,
  greedy's discards that leave idle cards, without searching; 0 searches them;
* ``[7]`` horizon: 0 (default) plays rollouts to the end; h > 0 stops them after h discard
  phases, a deal still on paying 0 (cheaper, measured weaker);
* ``[8]`` base: 0 greedy (default), 1 expert with its default parameters: the policy whose
  choice is candidate 0 and that plays the rollouts (about 4× the time of greedy's);
* ``[9]`` recut: 0 (default) races once, after ``race`` determinisations; 1 races again after
  2·race, 4·race, ... (each time over all the determinisations so far, among the candidates still
  alive), so a long search spends its determinisations on the candidates that keep beating the
  base choice;
* ``[10]`` confirm: 0 (default), or C fresh determinisations on which a candidate the search
  chose over the base choice must beat it again (paired mean above 0) to be played: the search's
  own margin for its choice is biased upwards (the winner's curse of a maximum over candidates),
  the fresh one is not.

``search`` (the registry's preset) is mc over expert at every decision with a choice, with every
legal candidate, sharpened determinisations (20 steps), 512 determinisations raced at 32, 64,
..., and confirmation on 256 fresh ones: the settings and the runs that chose them are in
experiments/search_tuning.md, its strength against expert in reports/search_strength.

Where this docstring says greedy's choice, read the base policy's when ``base`` is 1.

``mc:16,4,1.5,0,0,0,0`` is the exhaustive search of earlier versions, bit for bit.  (The
kernel reads a zero R, candidates or z as 16, 4, 1.5, as earlier versions did; a policy
spec refuses them: they are out of range.)  The observation is all
it uses: it never reads the hidden cards of the real deal.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from simkit.cards import N_CARDS, N_COPIES, N_SEATS, N_TYPES
from simkit.engine import kernel as E
from simkit.engine import layout as L
from simkit.engine.loop import InPlay, Table, decide_until
from simkit.policies.builtin import POLICY_WORK_SIZE, greedy_like, greedy_state, keep_value
from simkit.policies.expert import EXPERT_DEFAULTS, expert_act, expert_state
from simkit.evaluator import kernel as K
from simkit.jit import static_function
from simkit.rng import next_below

MAX_ROLLOUTS = 1024


@njit(cache=True, nogil=True)
def sharpen_hand(s2, p, rng, steps):
    """Opponent model: real opponents have spent the deal discarding idle cards, so their
    hands are far closer to complete than random ones.  Hill-climb: swap a random concealed
    card of p with a random stock card when that leaves fewer idle cards."""
    stock_lo = s2[L.S_STOCK_POS]
    n_stock = N_CARDS - stock_lo
    if n_stock == 0:
        return
    conc = s2[L.S_CONC + N_TYPES * p : L.S_CONC + N_TYPES * (p + 1)]
    n_conc = 0
    for t in range(N_TYPES):
        n_conc += conc[t]
    if n_conc == 0:
        return
    idle = K.min_idle_kernel(conc)
    for _ in range(steps):
        if idle == 0:
            return
        k = next_below(rng, n_conc)
        x = -1
        for t in range(N_TYPES):
            if k < conc[t]:
                x = t
                break
            k -= conc[t]
        j = stock_lo + next_below(rng, n_stock)
        y = s2[L.S_DECK + j] // N_COPIES
        if x == y:
            continue
        conc[x] -= 1
        conc[y] += 1
        new_idle = K.min_idle_kernel(conc)
        if new_idle < idle:
            idle = new_idle
            s2[L.S_DECK + j] = x * N_COPIES
        else:
            conc[y] -= 1
            conc[x] += 1


@njit(cache=True, nogil=True)
def determinise(obs, rng, s2):
    """A full state consistent with ``obs``; False if the observation is inconsistent."""
    s2[:] = 0
    me = obs[L.O_SEAT]
    unknown = np.zeros(N_TYPES, dtype=np.int64)
    for t in range(N_TYPES):
        n = N_COPIES - obs[L.O_CONC + t] - obs[L.O_DEAD + t]
        for p in range(N_SEATS):
            n -= obs[L.O_EXPCARDS + N_TYPES * p + t]
        if obs[L.O_ACTIVE] == t:
            n -= 1
        if n < 0:
            return False
        unknown[t] = n
    pool = np.empty(N_CARDS, dtype=np.int64)
    k = 0
    for t in range(N_TYPES):
        for _ in range(unknown[t]):
            pool[k] = t
            k += 1
    stock_left = obs[L.O_STOCK_LEFT]
    need = stock_left
    for p in range(N_SEATS):
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
    for p in range(N_SEATS):
        if p == me:
            for t in range(N_TYPES):
                s2[L.S_CONC + N_TYPES * p + t] = obs[L.O_CONC + t]
        else:
            for _ in range(obs[L.O_NCONC + p]):
                s2[L.S_CONC + N_TYPES * p + pool[idx]] += 1
                idx += 1
    s2[L.S_STOCK_POS] = N_CARDS - stock_left
    for i in range(stock_left):
        s2[L.S_DECK + N_CARDS - stock_left + i] = pool[idx] * N_COPIES
        idx += 1
    E.public_state(obs, s2)
    return True


@njit(cache=True, nogil=True, inline="always")
def _base_act(base, s, obs, mask, params, rng, rules, pwork):
    """The dispatcher of mc's rollouts (:func:`simkit.engine.loop.decide_until`): the base
    policy ``base`` (:data:`BASE_EXPERT` or :data:`BASE_GREEDY`, the seats' policy id) for the
    player p to act in ``s``; it reads only p's own view of the state, so no observation is made."""
    p = s[L.S_PLAYER]
    if base == BASE_EXPERT:
        return expert_state(s, p, mask, params, rules, pwork)
    return greedy_state(s, p, mask, params, rules, pwork, False)


_BASE_ACT = static_function(_base_act)


@njit(cache=True, nogil=True)
def _rollout(table, play, me, horizon):
    """Play ``play.s`` with the base policy everywhere (``table``: :func:`_base_table`) to the
    end, or (``horizon`` > 0) for at most that many more discard phases, by the deal loop
    (:func:`simkit.engine.loop.decide_until`); my payoff (0 when the deal is still on)."""
    s2 = play.s
    turns_left = horizon if horizon > 0 else 1 << 30
    decide_until(_BASE_ACT, table, play, 0, s2[L.S_TURNS] + turns_left)
    return s2[L.S_PAYOFF + me]


@njit(cache=True, nogil=True)
def _base_table(base, rules):
    """Every seat plays the base policy: expert with its default parameters (:data:`BASE_EXPERT`)
    or greedy with a zero parameter row (:data:`BASE_GREEDY`)."""
    ids = np.full(N_SEATS, base, dtype=np.int64)
    if base == BASE_EXPERT:
        expert_params = expert_base_params()
        params = np.empty((N_SEATS, expert_params.shape[0]), dtype=np.float64)
        for p in range(N_SEATS):
            params[p] = expert_params
    else:
        params = np.zeros((N_SEATS, 8), dtype=np.float64)
    return Table(ids, params, np.arange(N_SEATS), rules)


# candidate index of the base policy's own choice (the search leaves it only on evidence)
BASE_CANDIDATE = 0
NOT_EVALUATED = -1e18  # a payoff entry racing did not compute (never read by the decision)
ILLEGAL = -1e9  # the payoff of a candidate that is illegal in a determinisation
MIN_DIFFER = 4  # determinisations in which two candidates' payoffs must differ to tell them apart
DEFAULT_ROLLOUTS = 16
DEFAULT_CANDIDATES = 4
DEFAULT_Z = 1.5  # R, candidates and z of a zero params (the exhaustive search of earlier versions)
SEARCH_ALL, SEARCH_CLAIMS, SEARCH_DISCARDS = 0, 1, 2  # params[MC_SEARCH_MODE]
FOCUS_OFF, FOCUS_ON = 0, 1  # params[MC_FOCUS]
BASE_GREEDY, BASE_EXPERT = 0, 1  # params[MC_BASE]: the policy mc improves on and rolls out with
RECUT_OFF, RECUT_ON = 0, 1  # params[MC_RECUT]: race once (after ``race``) or at every doubling of it

# ---- parameters: ONE table, params[i] is row i: (name, default, lo, hi, kind); kind "int" takes
# whole numbers, "real" any number in [lo, hi], "positive" one in (lo, hi].  The registry's
# ``mc`` and ``search`` (other defaults) read it; the MC_* indices below come from it.
MC_PARAMS = (
    ("rollouts", 12.0, 1, MAX_ROLLOUTS, "int"),
    ("candidates", 4.0, 1, N_TYPES, "int"),
    ("z", 1.0, 0.0, 1.0e12, "positive"),
    ("search_mode", float(SEARCH_CLAIMS), SEARCH_ALL, SEARCH_DISCARDS, "int"),
    ("sharpen", 0.0, 0, 1_000_000, "int"),
    ("race", 3.0, 0, MAX_ROLLOUTS, "int"),
    ("focus", float(FOCUS_ON), FOCUS_OFF, FOCUS_ON, "int"),
    ("horizon", 0.0, 0, 1000, "int"),
    ("base", float(BASE_GREEDY), BASE_GREEDY, BASE_EXPERT, "int"),
    ("recut", float(RECUT_OFF), RECUT_OFF, RECUT_ON, "int"),
    ("confirm", 0.0, 0, MAX_ROLLOUTS, "int"),
)
MC_PARAM_NAMES = tuple(row[0] for row in MC_PARAMS)
MC_DEFAULTS = tuple(float(row[1]) for row in MC_PARAMS)
MC_ROLLOUTS = MC_PARAM_NAMES.index("rollouts")
MC_CANDIDATES = MC_PARAM_NAMES.index("candidates")
MC_Z = MC_PARAM_NAMES.index("z")
MC_SEARCH_MODE = MC_PARAM_NAMES.index("search_mode")
MC_SHARPEN = MC_PARAM_NAMES.index("sharpen")
MC_RACE = MC_PARAM_NAMES.index("race")
MC_FOCUS = MC_PARAM_NAMES.index("focus")
MC_HORIZON = MC_PARAM_NAMES.index("horizon")
MC_BASE = MC_PARAM_NAMES.index("base")
MC_RECUT = MC_PARAM_NAMES.index("recut")
MC_CONFIRM = MC_PARAM_NAMES.index("confirm")
N_EXPERT_PARAMS = len(EXPERT_DEFAULTS)


@njit(cache=True, nogil=True)
def expert_base_params():
    """expert's default parameters, as the array it takes."""
    params = np.empty(N_EXPERT_PARAMS, dtype=np.float64)
    for i in range(N_EXPERT_PARAMS):
        params[i] = EXPERT_DEFAULTS[i]
    return params


@njit(cache=True, nogil=True)
def _focus_skips(obs, base_choice, conc):
    """``focus`` 1: the base policy's choice needs no search.  A claim decision where it takes a
    碰 or a 发子 (search seldom improves on them), or a discard whose loss leaves idle cards
    (search pays off only when the discard leaves a complete holding)."""
    if obs[L.O_PHASE] != L.PH_DISCARD:
        return base_choice == L.A_PENG or base_choice == L.A_KONG
    conc[base_choice] -= 1
    idle = K.min_idle_kernel(conc)
    conc[base_choice] += 1
    return idle > 0


@njit(cache=True, nogil=True)
def mc_candidates(obs, mask, base_choice, max_cands, cands):
    """Fill ``cands`` with the candidate actions, the base policy's choice first; their number.

    A discard decision: the base choice, then the other legal discards by idle cards after
    the discard and keep value (greedy's order), ``max_cands`` in all.  A claim decision:
    the base choice, then every other legal option (passing included)."""
    n_c = 0
    cands[n_c] = base_choice
    n_c += 1
    if obs[L.O_PHASE] == L.PH_DISCARD:
        conc = np.empty(N_TYPES, dtype=np.int64)
        for t in range(N_TYPES):
            conc[t] = obs[L.O_CONC + t]
        scores = np.full(N_TYPES, 1 << 40, dtype=np.int64)
        for t in range(N_TYPES):
            if mask[t] and t != base_choice:
                keep = keep_value(conc, t)
                conc[t] -= 1
                scores[t] = K.min_idle_kernel(conc) * 1000 + keep
                conc[t] += 1
        while n_c < max_cands:
            best = -1
            for t in range(N_TYPES):
                if scores[t] < (1 << 40) and (best < 0 or scores[t] < scores[best]):
                    best = t
            if best < 0:
                break
            cands[n_c] = best
            n_c += 1
            scores[best] = 1 << 40
    else:
        for a in range(L.N_ACTIONS):
            if mask[a] and a != base_choice:
                cands[n_c] = a
                n_c += 1
    return n_c


@njit(cache=True, nogil=True)
def race_survives(pay, i, race):
    """Racing: candidate i stays in the search after the first ``race`` determinisations when
    its paired mean over them beats the base choice (a positive sum of differences)."""
    total = 0.0
    for r in range(race):
        total += pay[i, r] - pay[BASE_CANDIDATE, r]
    return total > 0


@njit(cache=True, nogil=True)
def mc_decide(pay, n_c, n_det, alive, z):
    """The index of the chosen candidate: the base choice (0) unless an ``alive`` candidate
    beats it by a paired mean over the ``n_det`` determinisations whose t statistic exceeds ``z``, in
    at least :data:`MIN_DIFFER` of them (the largest such mean wins).  Reads only the rows of
    alive candidates and of candidate 0."""
    best = BASE_CANDIDATE
    best_gain = 0.0
    for i in range(1, n_c):
        if not alive[i]:
            continue
        mean = 0.0
        n_differ = 0
        for r in range(n_det):
            mean += pay[i, r] - pay[BASE_CANDIDATE, r]
            if pay[i, r] != pay[BASE_CANDIDATE, r]:
                n_differ += 1
        mean /= n_det
        if n_differ < MIN_DIFFER:
            continue  # too few determinisations tell the two apart
        var = 0.0
        for r in range(n_det):
            d = pay[i, r] - pay[BASE_CANDIDATE, r] - mean
            var += d * d
        if n_det > 1:
            var /= n_det - 1
        se = np.sqrt(var / n_det)
        if mean > best_gain and (mean > z * se if se > 0 else mean > 0):
            best_gain = mean
            best = i
    return best


class SearchPlan(NamedTuple):
    """How :func:`mc_search` searches (one kernel argument): ``rollouts`` determinisations at
    most, racing after ``race`` of them (0: no racing) and again at every doubling with
    ``recut`` :data:`RECUT_ON`, ``sharpen`` hill-climbing steps per other hand, rollouts of at
    most ``horizon`` discard phases (0: to the end) by the ``base`` policy
    (:data:`BASE_GREEDY` or :data:`BASE_EXPERT`).  All int64."""

    rollouts: int
    race: int
    recut: int
    sharpen: int
    horizon: int
    base: int


@njit(cache=True, nogil=True)
def mc_search(obs, cands, n_c, plan, rng, rules, pay, alive):
    """Fill ``pay[i, r]``: my payoff when candidate i is applied in determinisation r and the
    deal is played out by the base policy (:data:`NOT_EVALUATED` where racing dropped i first);
    ``alive[i]``: whether i stayed in the race.  Returns the number of determinisations.
    ``plan``: a :class:`SearchPlan` (the names below are its fields).

    Determinisation-major: determinisation r (drawn, then sharpened, from ``rng`` in order)
    is rolled out for every candidate still alive, so no determinisation is stored and the
    random stream is consumed exactly as by a search without racing.  With ``race`` k in
    1 .. rollouts - 1, after the first k determinisations only the candidates
    :func:`race_survives` keeps go on (the base choice always); when none does, the search
    stops there.  ``recut`` :data:`RECUT_ON`: the race is run again after 2k, 4k, ...
    determinisations (while fewer than ``rollouts``), each time over all the determinisations
    so far, among the candidates still alive.  ``race`` 0 evaluates every candidate in every
    determinisation."""
    rollouts, race, recut, sharpen, horizon, base = plan
    me = obs[L.O_SEAT]
    d = np.empty(L.N_STATE, dtype=np.int64)
    s2 = np.empty(L.N_STATE, dtype=np.int64)
    mask2 = np.zeros(L.N_ACTIONS, dtype=np.bool_)
    ework = np.zeros(E.ENGINE_WORK_SIZE, dtype=np.int64)
    pwork = np.zeros(POLICY_WORK_SIZE, dtype=np.int64)
    ev = np.zeros((0, L.EVENT_WIDTH), dtype=np.int64)
    ev_n = np.zeros(1, dtype=np.int64)
    table = _base_table(base, rules)
    # the base policies draw no random number and read no observation: empty streams and view
    play = InPlay(s2, np.zeros((N_SEATS, 4), dtype=np.uint64), mask2, np.zeros(0, dtype=np.int64), ework, pwork, ev,
                  ev_n)
    for i in range(n_c):
        alive[i] = True
        for r in range(rollouts):
            pay[i, r] = NOT_EVALUATED
    n_det = 0
    cut = race
    for _ in range(rollouts):
        if n_det == cut and race > 0:
            n_alive = 0
            for i in range(1, n_c):
                alive[i] = alive[i] and race_survives(pay, i, cut)
                if alive[i]:
                    n_alive += 1
            if n_alive == 0:
                break  # no candidate can leave the base choice: stop early
            if recut == RECUT_ON:
                cut *= 2
        if not determinise(obs, rng, d):
            continue
        for p in range(N_SEATS):
            if p != me:
                sharpen_hand(d, p, rng, sharpen)
        for i in range(n_c):
            if not alive[i]:
                continue
            for j in range(L.N_STATE):  # not a slice copy (see simkit.engine.kernel._claim_keeps_playable)
                s2[j] = d[j]
            E.legal_mask(s2, rules, mask2, ework)
            a = cands[i]
            if not mask2[a]:
                pay[i, n_det] = ILLEGAL
                continue
            E.apply_legal(s2, a, rules, mask2, ework, ev, ev_n)
            pay[i, n_det] = _rollout(table, play, me, horizon)
        n_det += 1
    return n_det


@njit(cache=True, nogil=True)
def mc_act(obs, mask, params, rng, rules, work):
    """The ``mc`` policy (see the module docstring)."""
    base = BASE_EXPERT if int(params[MC_BASE]) == BASE_EXPERT else BASE_GREEDY
    if base == BASE_EXPERT:
        base_choice = expert_act(obs, mask, expert_base_params(), rules, work)
    else:
        base_choice = greedy_like(obs, mask, params, rules, work, False)
    if mask[L.A_WIN]:
        return L.A_WIN
    n_legal = 0
    for a in range(L.N_ACTIONS):
        if mask[a]:
            n_legal += 1
    if n_legal <= 1:
        return base_choice
    mode = int(params[MC_SEARCH_MODE])
    is_discard = obs[L.O_PHASE] == L.PH_DISCARD
    if (mode == SEARCH_CLAIMS and is_discard) or (mode == SEARCH_DISCARDS and not is_discard):
        return base_choice
    if int(params[MC_FOCUS]) == FOCUS_ON:
        conc = np.empty(N_TYPES, dtype=np.int64)
        for t in range(N_TYPES):
            conc[t] = obs[L.O_CONC + t]
        if _focus_skips(obs, base_choice, conc):
            return base_choice
    rollouts = int(params[MC_ROLLOUTS]) if params[MC_ROLLOUTS] >= 1 else DEFAULT_ROLLOUTS
    rollouts = min(rollouts, MAX_ROLLOUTS)
    max_cands = int(params[MC_CANDIDATES]) if params[MC_CANDIDATES] >= 1 else DEFAULT_CANDIDATES
    cands = np.empty(L.N_ACTIONS, dtype=np.int64)
    n_c = mc_candidates(obs, mask, base_choice, max_cands, cands)
    if n_c == 1:
        return base_choice
    sharpen = int(params[MC_SHARPEN]) if params[MC_SHARPEN] >= 0 else 0
    race = int(params[MC_RACE]) if params[MC_RACE] >= 1 else 0
    horizon = int(params[MC_HORIZON]) if params[MC_HORIZON] >= 1 else 0
    recut = RECUT_ON if int(params[MC_RECUT]) == RECUT_ON else RECUT_OFF
    pay = np.empty((n_c, rollouts), dtype=np.float64)
    alive = np.empty(n_c, dtype=np.bool_)
    n_det = mc_search(obs, cands, n_c, SearchPlan(rollouts, race, recut, sharpen, horizon, base), rng, rules, pay,
                      alive)
    if n_det == 0:
        return base_choice
    z = params[MC_Z] if params[MC_Z] > 0 else DEFAULT_Z
    chosen = mc_decide(pay, n_c, n_det, alive, z)
    confirm = min(int(params[MC_CONFIRM]), MAX_ROLLOUTS) if params[MC_CONFIRM] >= 1 else 0
    if chosen == BASE_CANDIDATE or confirm == 0:
        return cands[chosen]
    no_race = 0
    confirm_plan = SearchPlan(confirm, no_race, RECUT_OFF, sharpen, horizon, base)
    return cands[chosen] if mc_confirms(obs, base_choice, cands[chosen], confirm_plan, rng, rules) else base_choice


@njit(cache=True, nogil=True)
def mc_confirms(obs, base_choice, challenger, plan, rng, rules):
    """Confirmation (``plan.rollouts`` C > 0, ``plan`` a :class:`SearchPlan` without racing):
    the search chose ``challenger`` over the base choice on
    its own determinisations, so its margin there is biased upwards (the winner's curse of a
    maximum over candidates).  Both are rolled out again on C fresh determinisations (the
    stream goes on from the search's, so they are new ones) and the challenger is played only
    when its paired mean over them is above 0."""
    cands = np.empty(2, dtype=np.int64)
    cands[BASE_CANDIDATE] = base_choice
    cands[1] = challenger
    pay = np.empty((2, plan.rollouts), dtype=np.float64)
    alive = np.empty(2, dtype=np.bool_)
    n_det = mc_search(obs, cands, 2, plan, rng, rules, pay, alive)
    total = 0.0
    for r in range(n_det):
        total += pay[1, r] - pay[BASE_CANDIDATE, r]
    return n_det > 0 and total > 0
