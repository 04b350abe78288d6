"""The numba deal engine (docs/rules.md §5-7): a deal as a state machine over one int64 array.

Public entry points (all njit, plain arrays in and out):

* :func:`_reset` — deal a deck and start the dealer's opening discard phase;
* :func:`legal_mask` — legal actions of the player to act;
* :func:`apply` — apply one action, then run every automatic step (draws, unclaimed
  cards, table 将, 相公, 穿牌) up to the next decision or the end of the deal;
* :func:`observe` — what one player may see;
* :func:`draw_win` — who would win at once on a given drawn card (the luck adjustment's
  question, :mod:`simkit.runner.luck`, asked while ``advance`` pauses before a draw).

``rules`` is ``RuleSet.to_array()``; ``work`` an evaluator workspace
(:func:`simkit.evaluator.kernel.new_workspace`); ``ev``/``ev_n`` an event log
(``(capacity, EVENT_WIDTH)`` and a 1-element counter; capacity 0 disables logging).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from simkit.engine.layout import (
    A_CHOW_TRIAD,
    A_CHOW_ZU,
    A_CHOW_ZU4,
    A_KONG,
    A_PASS,
    A_PENG,
    A_WIN,
    A_ZHAN,
    E_CLAIM,
    E_DISCARD,
    E_DRAW,
    E_EXHAUSTED,
    E_NOWIN,
    E_PASS,
    E_TABLE,
    E_WIN,
    E_XIANGGONG,
    M_CHOW,
    M_KONG,
    M_PENG,
    M_TABLE,
    M_ZHAN,
    HIST_WIDTH,
    MAX_HIST,
    MAX_MELDS,
    MELD_TYPES,
    MELD_WIDTH,
    N_ACTIONS,
    O_ACTIVE,
    O_CONC,
    O_DEAD,
    O_DEALER,
    O_DECIDED,
    O_EXP,
    O_EXPCARDS,
    O_FIRST,
    O_GAIN,
    O_GAIN_TYPE,
    O_HIST,
    O_LOCK,
    O_NCHOW,
    O_NCONC,
    O_NHIST,
    O_NHIST_UNKNOWN,
    O_NOWIN,
    O_PHASE,
    O_PLAYER,
    O_SEAT,
    O_SOURCE,
    O_SOURCE_PLAYER,
    O_STAGE,
    O_STOCK_LEFT,
    O_XIANGGONG,
    PH_CLAIM,
    PH_DISCARD,
    PH_DRAW,
    PH_OVER,
    PH_RESOLVE,
    S_ACTIVE,
    S_ACTIVE_ID,
    S_CLAIMS,
    S_CONC,
    S_DEAD,
    S_DEALER,
    S_DECIDED,
    S_DECK,
    S_DRAWS,
    S_EXP,
    S_EXPCARDS,
    S_FIRST,
    S_GAIN,
    S_GAIN_TYPE,
    S_HIST,
    S_HU,
    S_LOCK,
    S_LOU,
    S_MELDS,
    S_NCHOW,
    S_NHIST,
    S_NMELDS,
    S_NOWIN,
    S_PATTERNS,
    S_PAYOFF,
    S_PHASE,
    S_PLAYER,
    S_SOURCE,
    S_SOURCE_PLAYER,
    S_STAGE,
    S_STEPS,
    S_STOCK_POS,
    S_TURNS,
    S_UNITS,
    S_WIN_KIND,
    S_WINNER,
    S_XIANGGONG,
    SRC_DISCARD,
    SRC_DRAW,
    ST_CHOW,
    ST_DONE,
    ST_PENG,
    WIN_DISCARD,
    WIN_DRAW,
    WIN_TABLE,
    WIN_TIANHU,
    chain_regions,
)
from simkit.cards import CHE, JIANG, N_CARDS, N_COLOURS, N_COPIES, N_RANKS, N_SEATS, N_TYPES, TRIAD_SIZE, XIANG, ZU
from simkit.deck import DEALER_CARDS, deal_counts_kernel
from simkit.evaluator import kernel as K
from simkit.exposed import EXP_BLOCK, N_EXP_ROWS
from simkit.jit import hot_kernel
from simkit.rules import (
    RULE_DRAWN_CARD_CHOW_BY,
    RULE_DRAWN_JIANG_CHOW,
    RULE_MUST_CHARIOT_OUT,
    RULE_MUST_KONG,
    RULE_PASS_LOCKS_TYPE,
    RULE_PASS_LOCKS_WIN,
    RULE_TIANHU,
    RULE_ZHAN_IN_CHARIOT,
)



@hot_kernel(cache=True, nogil=True)
def _next(p):
    return (p + 1) % N_SEATS


@njit(cache=True, nogil=True, inline="always")
def _log(ev, ev_n, kind, p, t, a, b, c):
    """Append one event to the log (dropped when full; capacity 0 disables logging).

    Inlined into the engine (numba IR): as a compiled call it cost an atomic incref and
    decref of ``ev`` / ``ev_n`` at every event even with logging disabled."""
    n = ev_n[0]
    if n < ev.shape[0]:
        ev[n, 0] = kind
        ev[n, 1] = p
        ev[n, 2] = t
        ev[n, 3] = a
        ev[n, 4] = b
        ev[n, 5] = c
        ev_n[0] = n + 1


@njit(cache=True, nogil=True, inline="always")
def _public(s, kind, p, t, detail):
    """Append a row (kind, player, type, detail) to the public history (layout: ``S_HIST``;
    it cannot overflow, see ``MAX_HIST``)."""
    n = s[S_NHIST]
    if n < MAX_HIST:
        row = S_HIST + HIST_WIDTH * n
        s[row] = kind
        s[row + 1] = p
        s[row + 2] = t
        s[row + 3] = detail
        s[S_NHIST] = n + 1


@njit(cache=True, nogil=True, inline="always")
def chance_outcomes(s, counts):
    """The chance outcomes of the next draw (OpenSpiel's chance node): ``counts[t]`` the stock's
    copies of each type, each card of the stock equally likely to come next; returns the stock
    size (the outcome t has probability ``counts[t] / size``).  The one place the stock is counted
    (the luck of a draw, play-out values)."""
    for t in range(N_TYPES):
        counts[t] = 0
    pos = s[S_STOCK_POS]
    for i in range(pos, N_CARDS):
        counts[s[S_DECK + i] // N_COPIES] += 1
    return N_CARDS - pos


# _conc / _exp return views: inlined (numba IR), as the kernels without reference counting that
# use them (simkit.jit.hot_kernel) may call no kernel that returns an array
@njit(cache=True, nogil=True, inline="always")
def _conc(s, p):
    return s[S_CONC + N_TYPES * p : S_CONC + N_TYPES * (p + 1)]


@njit(cache=True, nogil=True, inline="always")
def _exp(s, p):
    return s[S_EXP + EXP_BLOCK * p : S_EXP + EXP_BLOCK * (p + 1)].reshape((N_EXP_ROWS, N_TYPES))


@hot_kernel(cache=True, nogil=True)
def _total_cards(s, p):
    total = 0
    for t in range(N_TYPES):
        total += s[S_CONC + N_TYPES * p + t] + s[S_EXPCARDS + N_TYPES * p + t]
    return total


@hot_kernel(cache=True, nogil=True)
def has_discard(conc):
    for t in range(N_TYPES):
        if conc[t] > 0 and t % N_RANKS != JIANG:
            return True
    return False


@njit(cache=True, nogil=True, inline="always")
def _holding_wins(conc, exp, n_chow, rules, work):
    """Evaluator verdict on a holding (no 31-card or flag checks)."""
    if K.min_idle_kernel(conc) > 0:
        return False
    out = work[EW_OUT : EW_OUT + K.N_OUT]
    choice = work[EW_CHOICE : EW_CHOICE + K.N_CHOICE]
    K.evaluate_kernel(conc, exp, n_chow, rules, K.WANT_WINS, out, choice, work[EW_EVAL : EW_EVAL + K.WORK_SIZE])
    return out[K.OUT_WINS] == 1


# engine scratch ``work[ENGINE_WORK_SIZE]``: the evaluator's workspace first (EW_EVAL), then
# these regions, each where the previous one ends
EW_EVAL = 0  # evaluator workspace (K.WORK_SIZE)
ENGINE_WORK = chain_regions((
    ("EW_OUT", K.N_OUT),  # evaluator result
    ("EW_CHOICE", K.N_CHOICE),  # evaluator best decomposition
    ("EW_CONC", N_TYPES),  # a holding after a claim: concealed counts
    ("EW_EXP", EXP_BLOCK),  # ... and its exposed counts
    ("EW_USED", MELD_TYPES),  # concealed types a claim uses
    ("EW_MEMBERS", MELD_TYPES),  # a claimed 圆's types
    ("EW_CHANCE", 1),  # CHANCE_*: does advance pause before each stock draw (luck accounting)?
), base=K.WORK_SIZE)
EW_OUT, EW_CHOICE, EW_CONC, EW_EXP, EW_USED, EW_MEMBERS, EW_CHANCE = ENGINE_WORK.offsets
ENGINE_WORK_SIZE = ENGINE_WORK.size

# work[EW_CHANCE]: CHANCE_OFF (a new workspace) draws without pausing; CHANCE_PAUSE makes advance
# return at PH_DRAW before each draw from a non-empty stock, as CHANCE_PAUSED; the next advance
# call then draws that card (and pauses again before the next draw).  The pause lets a caller see
# the state before a chance event (:mod:`simkit.runner.luck`); it changes no card and no decision.
CHANCE_OFF = 0
CHANCE_PAUSE = 1
CHANCE_PAUSED = 2


def new_engine_workspace() -> np.ndarray:
    """Scratch array for the engine kernels (one per thread)."""
    return np.zeros(ENGINE_WORK_SIZE, dtype=np.int64)


@hot_kernel(cache=True, nogil=True)
def _gain_locked(s, p, t, rules):
    """docs/rules.md §7 passed cards cannot win: p passed a legal claim on type t, and t is the card
    that brings p to this discard phase (option ``pass_locks_win``)."""
    return rules[RULE_PASS_LOCKS_WIN] == 1 and t >= 0 and s[S_LOCK + N_TYPES * p + t] == 1


@hot_kernel(cache=True, nogil=True)
def _can_win(s, p, rules, work):
    """May player p declare a win now (31 cards, no flag, 天胡 rule, evaluator)?"""
    if s[S_XIANGGONG + p] or s[S_NOWIN + p]:
        return False
    if s[S_FIRST] == 1 and rules[RULE_TIANHU] == 0:
        return False
    if _gain_locked(s, p, s[S_GAIN_TYPE], rules):
        return False
    if _total_cards(s, p) != DEALER_CARDS:
        return False
    conc = _conc(s, p)
    if K.min_idle_kernel(conc) > 0:
        return False  # incomplete: no need for the evaluator (nor for a view of the exposed block)
    return _holding_wins(conc, _exp(s, p), s[S_NCHOW + p], rules, work)


@hot_kernel(cache=True, nogil=True)
def meld_cards(action, t, used):
    """Concealed types a claim uses (used[0..3], -1 padded) and its meld kind."""
    for i in range(MELD_TYPES):
        used[i] = -1
    colour = t // N_RANKS
    rank = t % N_RANKS
    if action == A_PENG:
        used[0] = t
        used[1] = t
        return M_PENG
    if action == A_KONG:
        used[0] = t
        used[1] = t
        used[2] = t
        return M_KONG
    if action == A_ZHAN:
        used[0] = t
        return M_ZHAN
    if action == A_CHOW_TRIAD:
        first = colour * N_RANKS + (JIANG if rank <= XIANG else CHE)  # its triad: 将士相 or 车马炮
        k = 0
        for x in range(first, first + TRIAD_SIZE):
            if x != t:
                used[k] = x
                k += 1
        return M_CHOW
    # 卒 圆s
    k = 0
    for c in range(N_COLOURS):
        if c == colour:
            continue
        if action == A_CHOW_ZU4 or c != action - A_CHOW_ZU:
            used[k] = c * N_RANKS + ZU
            k += 1
    return M_CHOW


@hot_kernel(cache=True, nogil=True)
def _claim_possible(s, q, action, t):
    """Does q hold the concealed cards of this claim on type t (no other check)?"""
    conc = S_CONC + N_TYPES * q  # q's concealed counts are s[conc + type]
    colour = t // N_RANKS
    rank = t % N_RANKS
    if action == A_PENG:
        return s[conc + t] == 2
    if action == A_KONG:
        return s[conc + t] == 3
    if action == A_ZHAN:
        return s[conc + t] >= 1
    if action == A_CHOW_TRIAD:
        if rank == ZU:
            return False
        first = colour * N_RANKS + (JIANG if rank <= XIANG else CHE)  # its triad: 将士相 or 车马炮
        for x in range(first, first + TRIAD_SIZE):
            if x != t and s[conc + x] < 1:
                return False
        return True
    if rank != ZU:
        return False
    if action == A_CHOW_ZU4:
        for c in range(N_COLOURS):
            if c != colour and s[conc + c * N_RANKS + ZU] < 1:
                return False
        return True
    left_out = action - A_CHOW_ZU
    if left_out == colour:
        return False
    for c in range(N_COLOURS):
        if c != colour and c != left_out and s[conc + c * N_RANKS + ZU] < 1:
            return False
    return True


@hot_kernel(cache=True, nogil=True)
def _claim_keeps_playable(s, q, action, t, spare, blocked, rules, work):
    """docs/rules.md §5.3: after the claim q must be able to discard or to win.  ``spare``: q's
    concealed non-将 cards (:func:`_spare_cards`); ``blocked``: the claim itself leaves q
    unable to win (it declines a legal 发子 / a 碰 through a chariot, or t is a passed type
    under ``pass_locks_win``), so only a discard keeps it playable."""
    if spare > 3:
        return True  # a claim uses at most three concealed cards: one is left to discard
    used = work[EW_USED : EW_USED + MELD_TYPES]
    meld_cards(action, t, used)
    # a concealed non-将 card left over after the claim can be discarded
    for i in range(MELD_TYPES):
        if used[i] >= 0 and used[i] % N_RANKS != JIANG:
            spare -= 1
    if spare > 0:
        return True
    if blocked or s[S_XIANGGONG + q] or s[S_NOWIN + q]:
        return False
    n_chow = _claimed_holding(s, q, action, t, work)
    exp = work[EW_EXP : EW_EXP + EXP_BLOCK].reshape((N_EXP_ROWS, N_TYPES))
    return _holding_wins(work[EW_CONC : EW_CONC + N_TYPES], exp, n_chow, rules, work)


@hot_kernel(cache=True, nogil=True)
def _claimed_holding(s, q, action, t, work):
    """q's holding after the claim ``action`` on type t, in work[EW_CONC] (concealed counts) and
    work[EW_EXP] (exposed block); returns its exposed 圆 count."""
    used = work[EW_USED : EW_USED + MELD_TYPES]
    kind = meld_cards(action, t, used)
    conc = work[EW_CONC : EW_CONC + N_TYPES]
    exp = work[EW_EXP : EW_EXP + EXP_BLOCK].reshape((N_EXP_ROWS, N_TYPES))
    # element by element: an array-to-slice copy compiles numba's shape-mismatch message
    # (string formatting) into every kernel that reaches it
    for i in range(N_TYPES):
        conc[i] = s[S_CONC + N_TYPES * q + i]
    for i in range(EXP_BLOCK):
        work[EW_EXP + i] = s[S_EXP + EXP_BLOCK * q + i]
    for i in range(MELD_TYPES):
        if used[i] >= 0:
            conc[used[i]] -= 1
    n_chow = s[S_NCHOW + q]
    if kind == M_PENG:
        exp[K.EXP_PENG, t] += 1
    elif kind == M_KONG:
        exp[K.EXP_KONG, t] += 1
    elif kind == M_ZHAN:
        exp[K.EXP_ZHAN, t] += 1
    else:
        n_chow += 1
    return n_chow


@hot_kernel(cache=True, nogil=True)
def _holding_units(conc, exp, n_chow, rules, work):
    """Units of a holding that wins (docs/rules.md §6), 0 if it does not."""
    if K.min_idle_kernel(conc) > 0:
        return 0
    out = work[EW_OUT : EW_OUT + K.N_OUT]
    choice = work[EW_CHOICE : EW_CHOICE + K.N_CHOICE]
    K.evaluate_kernel(conc, exp, n_chow, rules, 1, out, choice, work[EW_EVAL : EW_EVAL + K.WORK_SIZE])
    return out[K.OUT_UNITS] if out[K.OUT_WINS] == 1 else 0


@hot_kernel(cache=True, nogil=True)
def draw_win(s, t, rules, mask, work, asked):
    """Who would win at once if the pending draw (phase PH_DRAW, stock not empty) turned over a
    card of type t: ``(seat, units)``, or ``(-1, 0)``.  For each player q who would be asked
    about the card with a legal claim (up to the winner), ``asked[q, 0]`` is set to 1 + the
    fewest idle concealed cards (:func:`simkit.evaluator.kernel.min_idle_kernel`) that one of
    those claims leaves and ``asked[q, 1]`` to the claims' bit mask (bit a - A_PENG for action
    a); both 0 for the others.  The claims on t are asked in the
    engine's order (docs/rules.md §5: 碰 / 发子, then 吃 / 占, then the drawer's next player by
    option, then a drawn 将 to the drawer's table), and the first player with a legal claim
    after which a win is legal is taken to claim and win with the best such claim.  Reads
    ``s`` only (the fields it sets for the question are restored); clobbers ``mask``."""
    drawer = s[S_PLAYER]
    saved_active, saved_source, saved_player = s[S_ACTIVE], s[S_SOURCE], s[S_SOURCE_PLAYER]
    saved_stage, saved_decided = s[S_STAGE], s[S_DECIDED]
    s[S_ACTIVE] = t
    s[S_SOURCE] = SRC_DRAW
    s[S_SOURCE_PLAYER] = drawer
    decided = 0
    winner = -1
    best = 0
    for q in range(N_SEATS):
        asked[q, 0] = 0
        asked[q, 1] = 0
    for stage in range(ST_PENG, ST_DONE):
        q = _stage_candidate(s, stage, rules)
        if q < 0 or (decided >> q) & 1 or _claim_mask(s, q, stage, rules, mask, work) == 0:
            continue
        decided |= 1 << q
        fewest = 1 << 30
        # a player who can no longer win still improves its hand by a claim
        can_win = not (s[S_XIANGGONG + q] or s[S_NOWIN + q] or _gain_locked(s, q, t, rules))
        peng_legal, kong_legal = mask[A_PENG], mask[A_KONG]
        chariot = peng_legal and rules[RULE_MUST_CHARIOT_OUT] == 1 and _chariot_through(s, q, t, rules)
        for a in range(A_PASS + 1, N_ACTIONS):
            if not mask[a]:
                continue
            asked[q, 1] |= 1 << (a - A_PENG)
            n_chow = _claimed_holding(s, q, a, t, work)
            exp = work[EW_EXP : EW_EXP + EXP_BLOCK].reshape((N_EXP_ROWS, N_TYPES))
            conc = work[EW_CONC : EW_CONC + N_TYPES]
            fewest = min(fewest, K.min_idle_kernel(conc))
            if not can_win or (kong_legal and a != A_KONG and rules[RULE_MUST_KONG]) or (chariot and a != A_PENG):
                continue  # declining the legal 发子 / 碰 takes away the win (apply_legal's flags)
            best = max(best, _holding_units(conc, exp, n_chow, rules, work))
        if fewest < (1 << 30):
            asked[q, 0] = 1 + fewest
        if best > 0:
            winner = q
            break
    if winner < 0 and t % N_RANKS == JIANG and not s[S_XIANGGONG + drawer] and not s[S_NOWIN + drawer] \
            and not _gain_locked(s, drawer, t, rules):
        # nobody claims the drawn 将: it goes to the drawer's table, and the drawer may win
        conc = work[EW_CONC : EW_CONC + N_TYPES]
        for i in range(N_TYPES):
            conc[i] = s[S_CONC + N_TYPES * drawer + i]
        for i in range(EXP_BLOCK):
            work[EW_EXP + i] = s[S_EXP + EXP_BLOCK * drawer + i]
        work[EW_EXP + N_TYPES * K.EXP_TABLE + t] += 1
        exp = work[EW_EXP : EW_EXP + EXP_BLOCK].reshape((N_EXP_ROWS, N_TYPES))
        best = _holding_units(conc, exp, s[S_NCHOW + drawer], rules, work)
        if best > 0:
            winner = drawer
    s[S_ACTIVE], s[S_SOURCE], s[S_SOURCE_PLAYER] = saved_active, saved_source, saved_player
    s[S_STAGE], s[S_DECIDED] = saved_stage, saved_decided
    return winner, best


@hot_kernel(cache=True, nogil=True)
def _spare_cards(s, q):
    """Concealed non-将 cards of q (the cards q could discard)."""
    spare = 0
    for x in range(N_TYPES):
        if x % N_RANKS != JIANG:
            spare += s[S_CONC + N_TYPES * q + x]
    return spare


@hot_kernel(cache=True, nogil=True)
def _is_chow_player(s, q):
    src = s[S_SOURCE_PLAYER]
    if s[S_SOURCE] == SRC_DISCARD:
        return q == _next(src)
    return q == src


@hot_kernel(cache=True, nogil=True)
def _chow_conceivable(s, q, t):
    """Cheap pre-check: could q 吃 or 占 type t at all (cards held, nothing else)?"""
    base = S_CONC + N_TYPES * q
    if s[base + t] >= 1:
        return True
    colour = t // N_RANKS
    rank = t % N_RANKS
    if rank == ZU:
        n = 0
        for c in range(N_COLOURS):
            if c != colour and s[base + c * N_RANKS + ZU] >= 1:
                n += 1
        return n >= 2
    first = colour * N_RANKS + (JIANG if rank <= XIANG else CHE)  # its triad: 将士相 or 车马炮
    for x in range(first, first + TRIAD_SIZE):
        if x != t and s[base + x] < 1:
            return False
    return True


@hot_kernel(cache=True, nogil=True)
def _claim_mask(s, q, stage, rules, mask, work):
    """Legal claims (not PASS) of q on the active card at this stage; returns their number."""
    for a in range(N_ACTIONS):
        mask[a] = False
    t = s[S_ACTIVE]
    if s[S_XIANGGONG + q]:
        return 0
    if rules[RULE_PASS_LOCKS_TYPE] and s[S_LOCK + N_TYPES * q + t]:
        return 0
    n = 0
    spare = _spare_cards(s, q)
    # a claim of a passed type cannot bring a win (pass_locks_win; reachable with pass_locks_type off)
    locked = _gain_locked(s, q, t, rules)
    if stage == ST_PENG:
        if s[S_SOURCE] == SRC_DISCARD and q == s[S_SOURCE_PLAYER]:
            return 0
        for a in (A_PENG, A_KONG):
            if _claim_possible(s, q, a, t) and _claim_keeps_playable(s, q, a, t, spare, locked, rules, work):
                mask[a] = True
                n += 1
        if n == 0 or not _is_chow_player(s, q) or _drawn_jiang_to_table(s, t, rules):
            return n
    if not _chow_conceivable(s, q, t):
        return n
    # a 吃 / 占 taken instead of a legal 发子 / 碰 sets the flags of docs/rules.md §7 at once; the claim
    # must leave q playable with them (§5.3)
    declines = _decline_sets_nowin(s, q, t, mask[A_PENG], mask[A_KONG], rules)
    for a in (A_ZHAN, A_CHOW_TRIAD, A_CHOW_ZU, A_CHOW_ZU + 1, A_CHOW_ZU + 2, A_CHOW_ZU + 3, A_CHOW_ZU4):
        if _claim_possible(s, q, a, t) and _claim_keeps_playable(s, q, a, t, spare, locked or declines, rules, work):
            mask[a] = True
            n += 1
    return n


@hot_kernel(cache=True, nogil=True)
def _drawn_jiang_to_table(s, t, rules):
    """docs/rules.md §5.5 with ``drawn_jiang_chow`` off: nobody may 吃 / 占 a drawn 将 (it goes to the
    table unless 碰 / 发子)."""
    return s[S_SOURCE] == SRC_DRAW and t % N_RANKS == JIANG and rules[RULE_DRAWN_JIANG_CHOW] == 0


@hot_kernel(cache=True, nogil=True)
def _decline_sets_nowin(s, q, t, peng_legal, kong_legal, rules):
    """Does an action of q other than a legal 发子 / 碰 on t make q unable to win (docs/rules.md §7:
    有子不发不能赢, 有车子不出车不能赢)?"""
    if kong_legal and rules[RULE_MUST_KONG]:
        return True
    return peng_legal and rules[RULE_MUST_CHARIOT_OUT] == 1 and _chariot_through(s, q, t, rules)


@hot_kernel(cache=True, nogil=True)
def _discard_mask(s, p, rules, mask, work):
    for a in range(N_ACTIONS):
        mask[a] = False
    n = 0
    conc = _conc(s, p)
    for t in range(N_TYPES):
        if conc[t] > 0 and t % N_RANKS != JIANG:
            mask[t] = True
            n += 1
    if _can_win(s, p, rules, work):
        mask[A_WIN] = True
        n += 1
    return n


@hot_kernel(cache=True, nogil=True)
def legal_mask(s, rules, mask, work):
    """Legal actions of the player to act (all False when the deal is over)."""
    phase = s[S_PHASE]
    if phase == PH_DISCARD:
        return _discard_mask(s, s[S_PLAYER], rules, mask, work)
    if phase == PH_CLAIM:
        n = _claim_mask(s, s[S_PLAYER], s[S_STAGE], rules, mask, work)
        mask[A_PASS] = True
        return n + 1
    for a in range(N_ACTIONS):
        mask[a] = False
    return 0


@hot_kernel(cache=True, nogil=True)
def _chariot_cards(s, q, x, rules):
    """Cards of type x that q holds towards a chariot: concealed + exposed, 占 pairs only
    under ``zhan_in_chariot`` (docs/rules.md §7)."""
    n = s[S_CONC + N_TYPES * q + x] + s[S_EXPCARDS + N_TYPES * q + x]
    if rules[RULE_ZHAN_IN_CHARIOT] == 0:
        n -= 2 * s[S_EXP + EXP_BLOCK * q + N_TYPES * K.EXP_ZHAN + x]
    return n


@hot_kernel(cache=True, nogil=True)
def _chariot_through(s, q, t, rules):
    """docs/rules.md §7: q holds a chariot through t (concealed + exposed cards)."""
    colour = t // N_RANKS
    rank = t % N_RANKS
    if rank != ZU:
        first = colour * N_RANKS + (JIANG if rank <= XIANG else CHE)  # its triad: 将士相 or 车马炮
        ok = True
        for x in range(first, first + TRIAD_SIZE):
            if _chariot_cards(s, q, x, rules) < 2:
                ok = False
        if ok:
            return True
    if rank == JIANG or rank == ZU:
        if _chariot_cards(s, q, t, rules) < 2:
            return False
        n = 0
        for c in range(N_COLOURS):
            if _chariot_cards(s, q, c * N_RANKS + rank, rules) >= 2:
                n += 1
        return n >= 3
    return False


@hot_kernel(cache=True, nogil=True)
def add_meld(s, p, kind, t0, t1, t2, t3):
    k = s[S_NMELDS + p]
    if k < MAX_MELDS:
        base = S_MELDS + (p * MAX_MELDS + k) * MELD_WIDTH
        s[base] = kind
        s[base + 1] = t0
        s[base + 2] = t1
        s[base + 3] = t2
        s[base + 4] = t3
        s[S_NMELDS + p] = k + 1
    return k


@hot_kernel(cache=True, nogil=True)
def _do_claim(s, q, action, work, ev, ev_n):
    t = s[S_ACTIVE]
    used = work[EW_USED : EW_USED + MELD_TYPES]
    kind = meld_cards(action, t, used)
    for i in range(MELD_TYPES):
        if used[i] >= 0:
            s[S_CONC + N_TYPES * q + used[i]] -= 1
            s[S_EXPCARDS + N_TYPES * q + used[i]] += 1
    s[S_EXPCARDS + N_TYPES * q + t] += 1
    if kind == M_PENG:
        s[S_EXP + EXP_BLOCK * q + N_TYPES * K.EXP_PENG + t] += 1
        slot = add_meld(s, q, kind, t, -1, -1, -1)
    elif kind == M_KONG:
        s[S_EXP + EXP_BLOCK * q + N_TYPES * K.EXP_KONG + t] += 1
        slot = add_meld(s, q, kind, t, -1, -1, -1)
    elif kind == M_ZHAN:
        s[S_EXP + EXP_BLOCK * q + N_TYPES * K.EXP_ZHAN + t] += 1
        slot = add_meld(s, q, kind, t, -1, -1, -1)
    else:
        s[S_NCHOW + q] += 1
        # the 圆's types in type order: t and the used cards
        members = work[EW_MEMBERS : EW_MEMBERS + MELD_TYPES]
        k = 0
        for x in range(N_TYPES):
            if x == t:
                members[k] = x
                k += 1
            for i in range(MELD_TYPES):
                if used[i] == x and x != t:
                    members[k] = x
                    k += 1
        while k < MELD_TYPES:
            members[k] = -1
            k += 1
        slot = add_meld(s, q, kind, members[0], members[1], members[2], members[3])
    _log(ev, ev_n, E_CLAIM, q, t, kind, slot, s[S_SOURCE])
    _public(s, E_CLAIM, q, t, kind)
    s[S_CLAIMS] += 1
    s[S_GAIN] = WIN_DISCARD if s[S_SOURCE] == SRC_DISCARD else WIN_DRAW
    s[S_GAIN_TYPE] = t
    s[S_ACTIVE] = -1
    s[S_ACTIVE_ID] = -1
    s[S_PHASE] = PH_DISCARD
    s[S_PLAYER] = q


@hot_kernel(cache=True, nogil=True)
def _finish_win(s, p, rules, work, ev, ev_n):
    out = work[EW_OUT : EW_OUT + K.N_OUT]
    choice = work[EW_CHOICE : EW_CHOICE + K.N_CHOICE]
    K.evaluate_kernel(_conc(s, p), _exp(s, p), s[S_NCHOW + p], rules, 1, out, choice, work[EW_EVAL : EW_EVAL + K.WORK_SIZE])
    units = out[K.OUT_UNITS]
    s[S_WINNER] = p
    s[S_WIN_KIND] = WIN_TIANHU if s[S_FIRST] == 1 else s[S_GAIN]
    s[S_HU] = out[K.OUT_HU]
    s[S_LOU] = out[K.OUT_LOU]
    s[S_STEPS] = out[K.OUT_STEPS]
    s[S_UNITS] = units
    s[S_PATTERNS] = out[K.OUT_PATTERNS]
    for q in range(N_SEATS):
        s[S_PAYOFF + q] = 2 * units if q == p else -units
    s[S_PHASE] = PH_OVER
    _log(ev, ev_n, E_WIN, p, -1, s[S_WIN_KIND], units, s[S_HU])
    _public(s, E_WIN, p, -1, s[S_WIN_KIND])


@hot_kernel(cache=True, nogil=True)
def _reset(s, deck, dealer):
    """Deal ``deck`` (112 card ids): ``dealer`` gets the first 31, then 30 each in turn.
    Everything is cleared but the history rows (only the ``S_NHIST`` rows written are read)."""
    for i in range(S_HIST):
        s[i] = 0
    for i in range(N_CARDS):  # not a slice copy: see _claim_keeps_playable
        s[S_DECK + i] = deck[i]
    s[S_STOCK_POS] = deal_counts_kernel(deck, dealer, s[S_CONC : S_CONC + N_SEATS * N_TYPES])
    s[S_DEALER] = dealer
    s[S_PLAYER] = dealer
    s[S_PHASE] = PH_DISCARD
    s[S_FIRST] = 1
    s[S_GAIN] = WIN_TIANHU
    s[S_GAIN_TYPE] = -1
    s[S_ACTIVE] = -1
    s[S_ACTIVE_ID] = -1
    s[S_WINNER] = -1
    s[S_WIN_KIND] = -1
    s[S_HU] = -1


@hot_kernel(cache=True, nogil=True)
def _stage_candidate(s, stage, rules):
    """The player who may claim at this stage, or -1."""
    t = s[S_ACTIVE]
    src = s[S_SOURCE_PLAYER]
    if stage == ST_PENG:
        for q in range(N_SEATS):
            if s[S_SOURCE] == SRC_DISCARD and q == src:
                continue
            c = s[S_CONC + N_TYPES * q + t]
            if c == 2 or c == 3:
                return q
        return -1
    if stage == ST_CHOW:
        if s[S_SOURCE] == SRC_DISCARD:
            return _next(src)
        if _drawn_jiang_to_table(s, t, rules):
            return -1
        return src
    # ST_CHOW_NEXT: drawer's next player, drawn non-将 cards, by option only
    if s[S_SOURCE] == SRC_DRAW and rules[RULE_DRAWN_CARD_CHOW_BY] == 1 and t % N_RANKS != JIANG:
        return _next(src)
    return -1


@hot_kernel(cache=True, nogil=True)
def advance(s, rules, mask, work, ev, ev_n):
    """Run automatic steps until a decision (PH_DISCARD / PH_CLAIM) or the end; with
    ``work[EW_CHANCE]`` = CHANCE_PAUSE also before each draw from a non-empty stock (phase
    PH_DRAW: the next call draws)."""
    while True:
        phase = s[S_PHASE]
        if phase == PH_OVER or phase == PH_CLAIM:
            return
        if phase == PH_DISCARD:
            p = s[S_PLAYER]
            if _discard_mask(s, p, rules, mask, work) > 0:
                return
            # cannot discard and cannot win: 相公, the next player draws
            s[S_XIANGGONG + p] = 1
            _log(ev, ev_n, E_XIANGGONG, p, -1, 0, 0, 0)
            _public(s, E_XIANGGONG, p, -1, 0)
            s[S_FIRST] = 0
            s[S_PHASE] = PH_DRAW
            s[S_PLAYER] = _next(p)
        elif phase == PH_DRAW:
            p = s[S_PLAYER]
            pos = s[S_STOCK_POS]
            if pos >= N_CARDS:
                s[S_PHASE] = PH_OVER
                s[S_WINNER] = -1
                _log(ev, ev_n, E_EXHAUSTED, -1, -1, 0, 0, 0)
                return
            if work[EW_CHANCE] == CHANCE_PAUSE:
                work[EW_CHANCE] = CHANCE_PAUSED
                return
            if work[EW_CHANCE] == CHANCE_PAUSED:
                work[EW_CHANCE] = CHANCE_PAUSE
            card = s[S_DECK + pos]
            s[S_STOCK_POS] = pos + 1
            s[S_DRAWS] += 1
            s[S_ACTIVE] = card // N_COPIES
            s[S_ACTIVE_ID] = card
            s[S_SOURCE] = SRC_DRAW
            s[S_SOURCE_PLAYER] = p
            s[S_STAGE] = ST_PENG
            s[S_DECIDED] = 0
            s[S_PHASE] = PH_RESOLVE
            _log(ev, ev_n, E_DRAW, p, card // N_COPIES, 0, 0, 0)
            _public(s, E_DRAW, p, card // N_COPIES, 0)
        else:  # PH_RESOLVE
            stage = s[S_STAGE]
            while stage != ST_DONE:
                q = _stage_candidate(s, stage, rules)
                if q >= 0 and not (s[S_DECIDED] >> q) & 1 and _claim_mask(s, q, stage, rules, mask, work) > 0:
                    mask[A_PASS] = True  # mask now holds the decision's legal actions
                    s[S_STAGE] = stage
                    s[S_PLAYER] = q
                    s[S_PHASE] = PH_CLAIM
                    return
                stage += 1
            s[S_STAGE] = ST_DONE
            t = s[S_ACTIVE]
            src = s[S_SOURCE_PLAYER]
            s[S_ACTIVE] = -1
            s[S_ACTIVE_ID] = -1
            if s[S_SOURCE] == SRC_DRAW and t % N_RANKS == JIANG:
                # an unclaimed drawn 将 goes to the drawer's table
                s[S_EXP + EXP_BLOCK * src + N_TYPES * K.EXP_TABLE + t] += 1
                s[S_EXPCARDS + N_TYPES * src + t] += 1
                add_meld(s, src, M_TABLE, t, -1, -1, -1)
                _log(ev, ev_n, E_TABLE, src, t, 0, 0, 0)
                _public(s, E_TABLE, src, t, 0)
                if s[S_XIANGGONG + src]:
                    s[S_PHASE] = PH_DRAW
                    s[S_PLAYER] = _next(src)
                    continue
                s[S_GAIN_TYPE] = t  # a passed 将 type cannot bring a win (pass_locks_win)
                n_conc = 0
                for x in range(N_TYPES):
                    n_conc += s[S_CONC + N_TYPES * src + x]
                if n_conc == 1 and not _can_win(s, src, rules, work):
                    # one concealed card and a drawn 将: 相公 (seed)
                    s[S_XIANGGONG + src] = 1
                    _log(ev, ev_n, E_XIANGGONG, src, -1, 1, 0, 0)
                    _public(s, E_XIANGGONG, src, -1, 1)
                    s[S_PHASE] = PH_DRAW
                    s[S_PLAYER] = _next(src)
                    continue
                s[S_GAIN] = WIN_TABLE
                s[S_PHASE] = PH_DISCARD
                s[S_PLAYER] = src
            else:
                s[S_DEAD + t] += 1
                s[S_PHASE] = PH_DRAW
                s[S_PLAYER] = _next(src)


@hot_kernel(cache=True, nogil=True)
def apply(s, action, rules, mask, work, ev, ev_n):
    """Apply a legal action of the player to act, then advance.  Returns False (and changes
    nothing) if the action is not legal.  Leaves in ``mask`` the legal actions of the next
    decision."""
    n = legal_mask(s, rules, mask, work)
    if n == 0 or action < 0 or action >= N_ACTIONS or not mask[action]:
        return False
    apply_legal(s, action, rules, mask, work, ev, ev_n)
    return True


@hot_kernel(cache=True, nogil=True)
def apply_legal(s, action, rules, mask, work, ev, ev_n):
    """:func:`apply` for an action known to be legal, with ``mask`` the current legal
    mask (as left by :func:`advance` / :func:`apply`): no re-validation."""
    p = s[S_PLAYER]
    if s[S_PHASE] == PH_DISCARD:
        if action == A_WIN:
            _finish_win(s, p, rules, work, ev, ev_n)
            return
        s[S_CONC + N_TYPES * p + action] -= 1
        s[S_TURNS] += 1
        s[S_FIRST] = 0
        s[S_ACTIVE] = action
        s[S_ACTIVE_ID] = -1  # copies in a hand are not told apart: only drawn cards keep an id
        s[S_SOURCE] = SRC_DISCARD
        s[S_SOURCE_PLAYER] = p
        s[S_STAGE] = ST_PENG
        s[S_DECIDED] = 0
        s[S_PHASE] = PH_RESOLVE
        _log(ev, ev_n, E_DISCARD, p, action, 0, 0, 0)
        _public(s, E_DISCARD, p, action, 0)
    else:
        t = s[S_ACTIVE]
        s[S_DECIDED] |= 1 << p
        if mask[A_KONG] and action != A_KONG and rules[RULE_MUST_KONG] and not s[S_NOWIN + p]:
            s[S_NOWIN + p] = 1
            _log(ev, ev_n, E_NOWIN, p, t, 0, 0, 0)
        if (
            mask[A_PENG]
            and action != A_PENG
            and rules[RULE_MUST_CHARIOT_OUT]
            and not s[S_NOWIN + p]
            and _chariot_through(s, p, t, rules)
        ):
            s[S_NOWIN + p] = 1
            _log(ev, ev_n, E_NOWIN, p, t, 1, 0, 0)
        if action == A_PASS:
            if rules[RULE_PASS_LOCKS_TYPE] or rules[RULE_PASS_LOCKS_WIN]:
                s[S_LOCK + N_TYPES * p + t] = 1
            _log(ev, ev_n, E_PASS, p, t, s[S_STAGE], 0, 0)
            s[S_STAGE] += 1
            s[S_PHASE] = PH_RESOLVE
        else:
            _do_claim(s, p, action, work, ev, ev_n)
    advance(s, rules, mask, work, ev, ev_n)


@njit(cache=True, nogil=True, inline="always")
def start(s, deck, dealer, rules, mask, work, ev, ev_n):
    """Reset to a new deal and advance to the first decision."""
    _reset(s, deck, dealer)
    advance(s, rules, mask, work, ev, ev_n)


@njit(cache=True, nogil=True, inline="always")
def _observe_common(s, p, obs):
    """The words of an observation rewritten at every call: the scalars, the 圆 counts, 相公
    and p's own cannot-win flag."""
    obs[O_SEAT] = p
    obs[O_PHASE] = s[S_PHASE]
    obs[O_PLAYER] = s[S_PLAYER]
    obs[O_ACTIVE] = s[S_ACTIVE]
    obs[O_SOURCE] = s[S_SOURCE]
    obs[O_SOURCE_PLAYER] = s[S_SOURCE_PLAYER]
    obs[O_STAGE] = s[S_STAGE]
    obs[O_STOCK_LEFT] = N_CARDS - s[S_STOCK_POS]
    obs[O_FIRST] = s[S_FIRST]
    obs[O_DEALER] = s[S_DEALER]
    obs[O_DECIDED] = s[S_DECIDED] & (1 << p)
    obs[O_GAIN] = s[S_GAIN]
    obs[O_GAIN_TYPE] = s[S_GAIN_TYPE]
    for q in range(N_SEATS):
        obs[O_NCHOW + q] = s[S_NCHOW + q]
        obs[O_XIANGGONG + q] = s[S_XIANGGONG + q]
        obs[O_NOWIN + q] = s[S_NOWIN + q] if q == p else 0


@njit(cache=True, nogil=True, inline="always")
def _observe_concealed(s, p, obs):
    """p's concealed counts (a view: one index normalisation instead of one per word, as p's
    sign is unknown to the compiler)."""
    conc = s[S_CONC + N_TYPES * p : S_CONC + N_TYPES * p + N_TYPES]
    own = obs[O_CONC : O_CONC + N_TYPES]
    for t in range(N_TYPES):
        own[t] = conc[t]


@njit(cache=True, nogil=True, inline="always")
def _observe_resolved(s, p, obs, t, own_locks):
    """The words an active card of type t can change when it is resolved without a history
    row: its dead count, and p's passed type t (``own_locks``: obs already holds p's row)."""
    obs[O_DEAD + t] = s[S_DEAD + t]
    if own_locks:
        obs[O_LOCK + N_TYPES * p + t] = s[S_LOCK + N_TYPES * p + t]


@njit(cache=True, nogil=True, inline="always")
def _n_concealed(s, q):
    n = 0
    for t in range(N_TYPES):
        n += s[S_CONC + N_TYPES * q + t]
    return n


@njit(cache=True, nogil=True)
def public_state(obs, s):
    """Copy into state ``s`` what observation ``obs`` shows of the whole table: every exposed group
    and card, the passed types and flags it holds, the dead cards, whose decision of which kind
    and on which card, the dealer; the result fields cleared.  The hidden cards (concealed hands,
    stock) are the caller's: a determinisation (:func:`simkit.policies.mc.determinise`) or a
    position's own (:meth:`simkit.engine.position.Position.state`)."""
    for i in range(N_SEATS * EXP_BLOCK):
        s[S_EXP + i] = obs[O_EXP + i]
    for i in range(N_SEATS * N_TYPES):
        s[S_EXPCARDS + i] = obs[O_EXPCARDS + i]
        s[S_LOCK + i] = obs[O_LOCK + i]
    for t in range(N_TYPES):
        s[S_DEAD + t] = obs[O_DEAD + t]
    for p in range(N_SEATS):
        s[S_NCHOW + p] = obs[O_NCHOW + p]
        s[S_XIANGGONG + p] = obs[O_XIANGGONG + p]
        s[S_NOWIN + p] = obs[O_NOWIN + p]
    s[S_PHASE] = obs[O_PHASE]
    s[S_PLAYER] = obs[O_PLAYER]
    s[S_ACTIVE] = obs[O_ACTIVE]
    s[S_ACTIVE_ID] = obs[O_ACTIVE] * N_COPIES if obs[O_ACTIVE] >= 0 else -1
    s[S_SOURCE] = obs[O_SOURCE]
    s[S_SOURCE_PLAYER] = obs[O_SOURCE_PLAYER]
    s[S_STAGE] = obs[O_STAGE]
    s[S_DECIDED] = obs[O_DECIDED]
    s[S_FIRST] = obs[O_FIRST]
    s[S_GAIN] = obs[O_GAIN]
    s[S_GAIN_TYPE] = obs[O_GAIN_TYPE]
    s[S_DEALER] = obs[O_DEALER]
    s[S_WINNER] = -1
    s[S_WIN_KIND] = -1
    s[S_HU] = -1


@hot_kernel(cache=True, nogil=True, inline="always")
def new_deal_observation(obs):
    """Mark ``obs``, which only :func:`observe` has written since it was zeros or marked, as
    holding no observation of the coming deal: ``O_NHIST_UNKNOWN`` plus the history rows it
    holds (beyond them it holds zeros), so that the next :func:`observe` rewrites every word
    but clears only those rows, not the whole history region.  An array of unknown content
    gets ``O_NHIST_UNKNOWN`` instead (every row cleared)."""
    n = obs[O_NHIST]
    if 0 < n <= MAX_HIST:
        obs[O_NHIST] = O_NHIST_UNKNOWN + n
    elif not O_NHIST_UNKNOWN <= n <= O_NHIST_UNKNOWN + MAX_HIST:
        obs[O_NHIST] = O_NHIST_UNKNOWN  # (an earlier mark, never observed since, stays)


@hot_kernel(cache=True, nogil=True)
def observe(s, p, obs):
    """Fill ``obs`` (N_OBS) with what player p may know: own concealed cards, every exposed
    group and card, the dead cards, the public history in order (draws, discards, claims,
    table 将, 相公, the win), the stock count, the seats' concealed-card counts, and p's *own*
    passed types, cannot-win flag and decision on the active card (another seat's show only
    that it could claim, which its hand decides).

    ``obs`` must be zeros, an earlier observation of the same deal (any seat's), or carry
    ``O_NHIST_UNKNOWN``: a caller that reuses one array for a new deal sets that first, or
    marks it with :func:`new_deal_observation`.
    Policies treat ``obs`` as read-only (a later call may build on what it holds)."""
    # No clearing of the whole array (the history region is large).  An array holding an
    # earlier observation of this deal with history rows (1 <= O_NHIST <= the state's) is
    # updated: every exposed group and card and every concealed count changes only with a
    # public history row (E_CLAIM / E_TABLE: the seat's exposed block; E_CLAIM / E_DISCARD:
    # its concealed cards), so only the rows added since are copied, with the blocks of the
    # seats they name, the earlier seat's passed types are cleared, and the scalars and flags
    # are rewritten; dead cards and passed types change only for the active cards (below).
    # Any other array (zeros, O_NHIST_UNKNOWN, a later count) gets every word and a cleared
    # history tail.  Both give the same words (tests/test_hidden_information.py,
    # tests/test_observe.py).
    previous = obs[O_NHIST]
    n_hist = s[S_NHIST]
    old = obs[O_SEAT]
    if 1 <= previous <= n_hist and 0 <= p < N_SEATS and 0 <= old < N_SEATS:
        # A dead card or a passed type changes only when an active card is resolved, and
        # each active card arrives with a history row (E_DISCARD / E_DRAW): the active card
        # obs shows (O_ACTIVE) and those of the rows since are the only types to refresh.
        own_locks = old == p
        if not own_locks:
            stale = obs[O_LOCK + N_TYPES * old : O_LOCK + N_TYPES * old + N_TYPES]
            for t in range(N_TYPES):
                stale[t] = 0
            lock = s[S_LOCK + N_TYPES * p : S_LOCK + N_TYPES * p + N_TYPES]
            own = obs[O_LOCK + N_TYPES * p : O_LOCK + N_TYPES * p + N_TYPES]
            for t in range(N_TYPES):
                own[t] = lock[t]
        active = obs[O_ACTIVE]
        if 0 <= active < N_TYPES:
            _observe_resolved(s, p, obs, active, own_locks)
        exposed = 0  # bit q: seat q's exposed block changed (a claim or a table 将)
        concealed = 0  # bit q: seat q's concealed cards changed (a claim or a discard)
        claimed = 0  # bit q: seat q claimed (its concealed count is counted again)
        for row in range(previous, n_hist):
            h = HIST_WIDTH * row
            kind = s[S_HIST + h]
            q = s[S_HIST + h + 1]
            t = s[S_HIST + h + 2]
            obs[O_HIST + h] = kind
            obs[O_HIST + h + 1] = q
            obs[O_HIST + h + 2] = t
            obs[O_HIST + h + 3] = s[S_HIST + h + 3]
            if kind == E_CLAIM:
                exposed |= 1 << q
                concealed |= 1 << q
                claimed |= 1 << q
            elif kind == E_TABLE:
                exposed |= 1 << q
            elif kind == E_DISCARD:
                concealed |= 1 << q
                obs[O_NCONC + q] -= 1  # one card out of q's hand (a claim is counted below)
                _observe_resolved(s, p, obs, t, own_locks)
            elif kind == E_DRAW:
                _observe_resolved(s, p, obs, t, own_locks)
        _observe_common(s, p, obs)
        if not own_locks or (concealed >> p) & 1:
            _observe_concealed(s, p, obs)
        for q in range(N_SEATS):
            if (claimed >> q) & 1:
                obs[O_NCONC + q] = _n_concealed(s, q)
            if (exposed >> q) & 1:
                for i in range(EXP_BLOCK):
                    obs[O_EXP + EXP_BLOCK * q + i] = s[S_EXP + EXP_BLOCK * q + i]
                for t in range(N_TYPES):
                    obs[O_EXPCARDS + N_TYPES * q + t] = s[S_EXPCARDS + N_TYPES * q + t]
    else:
        for i in range(N_SEATS * N_TYPES):
            obs[O_LOCK + i] = 0
        if 0 <= p < N_SEATS:
            for t in range(N_TYPES):
                obs[O_LOCK + N_TYPES * p + t] = s[S_LOCK + N_TYPES * p + t]
        _observe_common(s, p, obs)
        _observe_concealed(s, p, obs)
        for t in range(N_TYPES):
            obs[O_DEAD + t] = s[S_DEAD + t]
        for i in range(N_SEATS * EXP_BLOCK):
            obs[O_EXP + i] = s[S_EXP + i]
        for i in range(N_SEATS * N_TYPES):
            obs[O_EXPCARDS + i] = s[S_EXPCARDS + i]
        for q in range(N_SEATS):
            obs[O_NCONC + q] = _n_concealed(s, q)
        clear_to = MAX_HIST  # rows the array may hold: all, unless its count is known
        if 0 <= previous <= MAX_HIST:
            clear_to = previous
        elif O_NHIST_UNKNOWN < previous <= O_NHIST_UNKNOWN + MAX_HIST:
            clear_to = previous - O_NHIST_UNKNOWN  # marked by new_deal_observation
        for i in range(HIST_WIDTH * n_hist, HIST_WIDTH * clear_to):
            obs[O_HIST + i] = 0
        for i in range(HIST_WIDTH * n_hist):
            obs[O_HIST + i] = s[S_HIST + i]
    obs[O_NHIST] = n_hist


@hot_kernel(cache=True, nogil=True)
def card_total(s):
    """Cards accounted for: stock + hands + exposed + dead + active (always 112)."""
    total = N_CARDS - s[S_STOCK_POS]
    for i in range(N_SEATS * N_TYPES):
        total += s[S_CONC + i] + s[S_EXPCARDS + i]
    for t in range(N_TYPES):
        total += s[S_DEAD + t]
    if s[S_ACTIVE] >= 0:
        total += 1
    return total
