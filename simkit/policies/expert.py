"""``expert``: a strong, fast parametric policy built on the features a good player weighs.

It scores a holding with a *hand value* Φ (higher is better) and acts one ply ahead on it:

* **discard**: the legal discard d maximising ``Φ(holding - d) - danger(d)``;
* **claim**: each legal claim is scored as ``Φ`` after the claim and its best discard, plus
  ``claim_hu`` per hu the new meld scores; passing is scored as ``Φ`` of the holding with the
  card's type locked (docs/rules.md §7: a passed type can no longer be claimed, so its outs vanish).
  A choice that forbids winning (declining a 发子, or a 碰 through a chariot) costs
  :data:`NOWIN_PENALTY`; a claim after which the holding wins with enough units wins at once;
* **win**: declared when the units reach ``min_units`` or the stock holds at most
  ``late_stock`` cards (so ``min_units`` 1 always wins; 2 plays on for a second unit);
* a player who can no longer win (有子不发 / 有车子不出车) passes every claim and discards the
  safest card.

Φ adds, per independent part of the holding (the eight triads and the 卒 system, see
:func:`simkit.evaluator.kernel.part_of`), ``-idle`` × its idle cards, the *outs* (every unseen
copy of a type, not locked, times the progress a claim on it brings: idle cards it removes + 1
for the discard it earns; weighted ``outs_peng`` for 碰 / 发子, ``outs_chow`` for 吃 / 占,
which only the next player or the drawer may take), ``pair`` per pair (× :data:`DEAD_PAIR` when no
copy is left to 碰), ``hu`` × the hu of its 子 / 闹 plus ``zi`` per 子 whose 4th copy is unseen
(a 楼 to come), ``fat`` per fat card, ``partner`` per two present types of one 圆, and its
素车: ``hu`` × the chariot's value when complete, ``prospect`` × it when one component is
missing but can still come.  Across parts: 肥车 / 长车 of 将 and 卒, 清 (an 出 in three
colours of one rank) and 天地 (将 and 卒 出 of one colour), complete (``hu`` × value) or one
component short (``prospect`` × value).

``danger(d)`` is ``danger`` × (1 + ``danger_late`` × the share of the stock drawn: late discards
feed hands closer to a win) × the chance that an opponent can claim the discard, from the
unseen copies and the opponents' hand sizes (binomial approximation): a 碰 by either
opponent, weighted up by ``danger_feed`` per 出 the claimer already shows on the discard's
triad partners or on its rank in other colours (feeding a visible chariot or 清; for a 将 or a 卒
only its rank counts), plus
``danger_chow`` × the chance that the next player can 吃 or 占 it.

It reads only the observation, or the acting player's own view of the state
(:func:`expert_state`: own cards and locks, every exposed meld, the dead cards, the stock size
and the seats' concealed-card counts).  Deterministic: it draws no random numbers.

Parameters (``params[i]``, defaults in :data:`EXPERT_DEFAULTS`: tuned with ``simkit tune`` by
SPSA against a pool of greedy and expert, two rounds of 1.5 and 1.8 million deals starting from
hand-tuned values — docs/tournaments.md "Tuning"; the hand-tuned start is :data:`EXPERT_HAND_TUNED`)::

    0 idle         57.6   value lost per idle card
    1 outs_peng    13.4   per unseen card × progress of a 碰 / 发子 on it
    2 outs_chow    0.78   per unseen card × progress of a 吃 / 占 on it
    3 hu           95.9   per hu of concealed 子 / 闹 and complete chariots, 清, 天地
    4 pair         22.5   per concealed pair
    5 zi           88.3   per concealed 子 whose 4th copy is unseen
    6 fat          1.40   per fat card (将 车 卒)
    7 partner      1.78   per two present types of one 圆 (将士相, 车马炮, 卒)
    8 prospect     6.04   × value of a chariot / 清 / 天地 one component short
    9 danger       13.7   × chance an opponent can claim the discard
   10 danger_chow  0.67   weight of the next player's 吃 / 占 against a 碰
   11 danger_feed  0.43   extra danger per 出 the claimer shows next to the card
   12 min_units    1      win with at least this many units ...
   13 late_stock   0      ... or whenever the stock holds at most this many cards
   14 claim_hu     54.2   per hu of the meld a claim exposes
   15 danger_late  1.08   danger × (1 + danger_late × share of the stock drawn)

>>> EXPERT_PARAM_NAMES[0], EXPERT_DEFAULTS[0], len(EXPERT_DEFAULTS) == len(EXPERT_PARAM_NAMES)
('idle', 57.6, True)
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from simkit.cards import CHE, JIANG, N_CARDS, N_COLOURS, N_COPIES, N_RANKS, N_SEATS, N_TYPES, PAO, SHI, TRIAD_SIZE, ZU
from simkit.deck import STOCK_CARDS
from simkit.engine import kernel as E
from simkit.engine.layout import (
    A_KONG,
    A_PASS,
    A_PENG,
    A_WIN,
    M_KONG,
    M_PENG,
    MELD_TYPES,
    M_ZHAN,
    N_ACTIONS,
    O_ACTIVE,
    O_CONC,
    O_DEAD,
    O_EXP,
    O_EXPCARDS,
    O_LOCK,
    O_NCHOW,
    O_NCONC,
    O_NOWIN,
    O_PHASE,
    O_SEAT,
    O_STOCK_LEFT,
    O_XIANGGONG,
    PH_DISCARD,
    S_ACTIVE,
    S_CONC,
    S_DEAD,
    S_EXP,
    S_EXPCARDS,
    S_LOCK,
    S_NCHOW,
    S_NOWIN,
    S_PHASE,
    S_STOCK_POS,
    S_XIANGGONG,
    chain_regions,
)
from simkit.evaluator import kernel as K
from simkit.evaluator.tables import (
    FAT_CHARIOT_VALUE,
    IS_FAT_TYPE,
    KONG_HU,
    LONG_CHARIOT_VALUE,
    N_PARTS,
    PART_CMP,
    PART_ZU,
    PENG_HU,
    PLAIN_CHARIOT_VALUE,
    QING_VALUE,
    TIANDI_VALUE,
    TRIAD_IDLE,
    ZU_IDLE,
)
from simkit.exposed import EXP_BLOCK, N_EXP_ROWS
from simkit.jit import hot_kernel
from simkit.rules import RULE_MUST_CHARIOT_OUT, RULE_MUST_KONG, RULE_ZHAN_IN_CHARIOT

# ---- parameters
X_IDLE = 0
X_OUTS_PENG = 1
X_OUTS_CHOW = 2
X_HU = 3
X_PAIR = 4
X_ZI = 5
X_FAT = 6
X_PARTNER = 7
X_PROSPECT = 8
X_DANGER = 9
X_DANGER_CHOW = 10
X_DANGER_FEED = 11
X_MIN_UNITS = 12
X_LATE_STOCK = 13
X_CLAIM_HU = 14
X_DANGER_LATE = 15
# ONE table of the parameters, params[i] is row i: (name, default, lo, hi), defaults the tuned
# values below (EXPERT_DEFAULTS); the registry checks a spec's values against the ranges
WEIGHT_MAX = 1.0e4  # the largest weight a spec may give (the tuned ones are below 100)
EXPERT_PARAMS = (
    ("idle", 57.6, 0.0, WEIGHT_MAX), ("outs_peng", 13.4, 0.0, WEIGHT_MAX), ("outs_chow", 0.78, 0.0, WEIGHT_MAX),
    ("hu", 95.9, 0.0, WEIGHT_MAX), ("pair", 22.5, 0.0, WEIGHT_MAX), ("zi", 88.3, 0.0, WEIGHT_MAX),
    ("fat", 1.40, 0.0, WEIGHT_MAX), ("partner", 1.78, 0.0, WEIGHT_MAX), ("prospect", 6.04, 0.0, WEIGHT_MAX),
    ("danger", 13.7, 0.0, WEIGHT_MAX), ("danger_chow", 0.67, 0.0, WEIGHT_MAX), ("danger_feed", 0.43, 0.0, WEIGHT_MAX),
    ("min_units", 1.0, 0.0, 1000.0), ("late_stock", 0.0, 0.0, 21.0), ("claim_hu", 54.2, 0.0, WEIGHT_MAX),
    ("danger_late", 1.08, 0.0, WEIGHT_MAX),
)
EXPERT_PARAM_NAMES = tuple(row[0] for row in EXPERT_PARAMS)
# hand-tuned by coordinate search against greedy (the start of the SPSA tuning)
EXPERT_HAND_TUNED = (70.0, 4.0, 2.0, 40.0, 10.0, 80.0, 2.0, 4.0, 5.0, 20.0, 0.5, 1.0, 1.0, 0.0, 25.0, 0.0)
# tuned: simkit tune, round 2's mean of the last quarter of the iterates (docstring), 3 digits
EXPERT_DEFAULTS = tuple(float(row[1]) for row in EXPERT_PARAMS)

ZI_HU_PLAIN = 3  # a concealed 子 (docs/rules.md §2); fat types score double
NAO_HU_PLAIN = 9  # a concealed 闹
DEAD_PAIR = 0.5  # a pair's share of the pair weight when no copy of it is left to 碰
NOWIN_PENALTY = 1.0e6  # a choice after which the player can no longer win
NOWIN_DANGER = 1.0e4  # a player who cannot win discards by danger first
NO_VALUE = -1.0e18
WIN_KEY = 1.0e15  # a winning claim beats every other choice, by units

# ---- scratch (``work``, int64): the evaluator's workspace first, then these regions, each where
# the previous one ends
EXPERT_WORK = chain_regions((
    ("XW_OUT", K.N_OUT),
    ("XW_CHOICE", K.N_CHOICE),
    ("XW_CONC", N_TYPES),  # the acting player's concealed counts (changed and restored)
    ("XW_EXP", EXP_BLOCK),  # (4, 28): their exposed block, for the evaluator
    ("XW_USED", MELD_TYPES),  # the concealed types a claim uses
    ("XW_UNSEEN", N_TYPES),  # copies of each type the player has not seen
    ("XW_OUT_COMP", N_TYPES),  # the player's exposed 出 (碰 / 楼) per type
    ("XW_LOCK", N_TYPES),  # the player's passed (locked) types
    ("XW_PART_VALUE", N_PARTS),  # float64 (viewed): Φ of each part
    ("XW_DANGER", N_TYPES),  # float64 (viewed): danger of a discard per type, once per decision
    ("XW_DANGER_DONE", N_TYPES),  # 1 where XW_DANGER holds this decision's value
), base=K.WORK_SIZE)
(XW_OUT, XW_CHOICE, XW_CONC, XW_EXP, XW_USED, XW_UNSEEN, XW_OUT_COMP, XW_LOCK, XW_PART_VALUE, XW_DANGER,
 XW_DANGER_DONE) = EXPERT_WORK.offsets
EXPERT_WORK_SIZE = EXPERT_WORK.size
EXPERT_WORK_REGIONS = EXPERT_WORK.table  # (name, offset, size) of each region, in order

# ---- the kernels' grouped arguments (issue 53: short signatures), numba named tuples built once a
# decision by :func:`_expert_core`
HandView = namedtuple("HandView", ("conc", "unseen", "out_comp", "lock", "params"))
HandView.__doc__ = """The acting player's view that Φ reads: concealed counts (changed and restored
by the searches), unseen copies, exposed 出 and locks per type (int64 arrays of N_TYPES), and the
policy's parameters."""
DangerContext = namedtuple("DangerContext", ("weight", "cache", "done", "src", "exp_all_at", "me", "n_unseen",
                                             "n_next", "n_other", "can_next", "can_other"))
DangerContext.__doc__ = """What :func:`discard_danger` reads, and its once-a-decision cache: the danger
``weight`` of the decision, ``cache`` / ``done`` (float64 / int64 per type), the source array
with its exposed block at ``exp_all_at``, the acting seat ``me``, the unseen total, the
opponents' concealed counts and whether each may claim."""
SeatView = namedtuple("SeatView", ("me", "conc_at", "exp_all_at", "expcards_at", "dead_at", "lock_at", "n_chow",
                                   "phase", "t", "stock_left", "n_next", "n_other", "xianggong_next",
                                   "xianggong_other", "cannot_win"))
SeatView.__doc__ = """Where player ``me``'s view lies in an observation or the state (the region
offsets, the same layout in both) and the scalars of the decision: 吃 count, phase, active card,
stock left, the opponents' concealed counts and 相公 flags, whether ``me`` can no longer win."""


# ---- speed (issue 14): the kernels below that Φ and the danger evaluate many times a decision
# take only arrays their caller owns and keeps alive (they allocate and return no array), so they
# are compiled without numba's reference counting (``_nrt=False``): with it every call increfs
# and decrefs each array argument (two atomic operations apiece, which numba's pruning leaves in
# place here), and those cost about a fifth of expert's time.  The results are the same numbers.

# ---- outs tables: the progress (idle cards of the part removed + 1 for the discard it earns) a
# claim on one more card of a type brings, for every holding of the type's part.  A row per
# (part holding, type in the part); its fields the largest and the smallest progress of the
# claims weighted ``outs_peng`` (碰, 发子) and of those weighted ``outs_chow`` (占, 吃 / 卒 圆):
# a weight >= 0 gains most with the largest, a negative one with the smallest, so the best
# weighted gain over the claims is one multiplication (the same number as the maximum over
# every claim's gain).  For a type the player lacks the only claim is a 吃 with the two
# partners present (卒: none is counted), in the ``chow`` fields.
NO_OUTS = -(1 << 20)  # no such claim
OUTS_PENG_HI = 0
OUTS_PENG_LO = 1
OUTS_CHOW_HI = 2
OUTS_CHOW_LO = 3
N_OUTS_FIELDS = 4
N_TRIAD_CODES = (N_COPIES + 1) ** TRIAD_SIZE  # 125: a triad's holding: 25 × n0 + 5 × n1 + n2 (0-4 copies each)
N_ZU_CODES = (N_COPIES + 1) ** N_COLOURS  # 625: the 卒 system's: z0 + 5 z1 + 25 z2 + 125 z3 (the index of ZU_IDLE)
OUTS_ZU_ROW = 2 * N_TRIAD_CODES * TRIAD_SIZE  # first 卒 row; a triad's row is (has_jiang × 125 + code) × 3 + type


def _outs_fields(row, peng_progress, chow_progress):
    """Fill one outs row from the progress lists of its claims (``NO_OUTS`` where none)."""
    if peng_progress:
        row[OUTS_PENG_HI] = max(peng_progress)
        row[OUTS_PENG_LO] = min(peng_progress)
    if chow_progress:
        row[OUTS_CHOW_HI] = max(chow_progress)
        row[OUTS_CHOW_LO] = min(chow_progress)


def _build_outs_progress() -> np.ndarray:
    """OUTS_PROGRESS[row, field]: see the comment above (plain Python, at import)."""
    table = np.full((OUTS_ZU_ROW + N_ZU_CODES * N_COLOURS, N_OUTS_FIELDS), NO_OUTS, dtype=np.int64)
    for has_jiang in (0, 1):
        for code in range(N_TRIAD_CODES):
            counts = (code // 25, code // 5 % 5, code % 5)

            def triad_idle(*removed, counts=counts, has_jiang=has_jiang):
                n = list(counts)
                for x in removed:
                    n[x] -= 1
                return int(TRIAD_IDLE[has_jiang, n[0], n[1], n[2]])

            idle = triad_idle()
            for i in range(TRIAD_SIZE):
                p0, p1 = [x for x in range(TRIAD_SIZE) if x != i]
                peng = []
                chow = []
                if counts[i] >= 2:  # 碰
                    peng.append(idle - triad_idle(i, i) + 1)
                if counts[i] >= 3:  # 发子
                    peng.append(idle - triad_idle(i, i, i) + 1)
                if counts[i] >= 1:  # 占
                    chow.append(idle - triad_idle(i) + 1)
                if counts[p0] > 0 and counts[p1] > 0:  # 吃 a 圆 of the triad
                    chow.append(idle - triad_idle(p0, p1) + 1)
                _outs_fields(table[(has_jiang * N_TRIAD_CODES + code) * TRIAD_SIZE + i], peng, chow)
    for code in range(N_ZU_CODES):
        counts = tuple(code // 5**c % 5 for c in range(N_COLOURS))

        def zu_idle(*removed, counts=counts):
            n = list(counts)
            for x in removed:
                n[x] -= 1
            return int(ZU_IDLE[n[0] + 5 * n[1] + 25 * n[2] + 125 * n[3]])

        idle = zu_idle()
        for colour in range(N_COLOURS):
            if counts[colour] == 0:
                continue  # a 卒 the player lacks counts no outs
            o0, o1, o2 = [x for x in range(N_COLOURS) if x != colour]
            peng = []
            chow = [idle - zu_idle(colour) + 1]  # 占
            if counts[colour] >= 2:
                peng.append(idle - zu_idle(colour, colour) + 1)
            if counts[colour] >= 3:
                peng.append(idle - zu_idle(colour, colour, colour) + 1)
            for pair in ((o0, o1), (o0, o2), (o1, o2), (o0, o1, o2)):  # 卒 圆s with the other colours
                if all(counts[x] > 0 for x in pair):
                    chow.append(idle - zu_idle(*pair) + 1)
            _outs_fields(table[OUTS_ZU_ROW + code * N_COLOURS + colour], peng, chow)
    return table


OUTS_PROGRESS = _build_outs_progress()


@hot_kernel(cache=True, nogil=True)
def _outs_gain(row, params):
    """Best weighted progress (>= 0) of a claim on one more card of a held type (row of
    :data:`OUTS_PROGRESS`): ``max(0, outs_peng × 碰 / 发子 progress, outs_chow × 占 / 吃 progress)``."""
    best = 0.0
    progress = OUTS_PROGRESS[row, OUTS_PENG_HI]
    if progress != NO_OUTS:
        weight = params[X_OUTS_PENG]
        if weight < 0.0:
            progress = OUTS_PROGRESS[row, OUTS_PENG_LO]
        gain = weight * progress
        if gain > best:
            best = gain
    progress = OUTS_PROGRESS[row, OUTS_CHOW_HI]
    if progress != NO_OUTS:
        weight = params[X_OUTS_CHOW]
        if weight < 0.0:
            progress = OUTS_PROGRESS[row, OUTS_CHOW_LO]
        gain = weight * progress
        if gain > best:
            best = gain
    return best


@hot_kernel(cache=True, nogil=True)
def _live(conc, unseen, x):
    """Can type x still become a component (a pair by 占, or a 碰)?"""
    return (conc[x] == 1 and unseen[x] >= 1) or unseen[x] >= 2


@hot_kernel(cache=True, nogil=True)
def _type_terms(value, view, t, row, chow_if_missing):
    """``value`` plus the terms of Φ that type t adds on its own (pairs, 子 / 闹, fat cards,
    outs; ``row`` its row of :data:`OUTS_PROGRESS`), in the order Φ sums them (``view``: a
    :data:`HandView`)."""
    conc, unseen, _, lock, params = view
    c = conc[t]
    u = unseen[t]
    fat = IS_FAT_TYPE[t]
    if c == 2:
        value += params[X_PAIR] * (1.0 if u > 0 else DEAD_PAIR)
    elif c == 3:
        value += params[X_HU] * ZI_HU_PLAIN * (1 + fat)
        if u > 0:
            value += params[X_ZI]
    elif c == 4:
        value += params[X_HU] * NAO_HU_PLAIN * (1 + fat)
    value += params[X_FAT] * fat * c
    if u > 0 and lock[t] == 0:
        if c > 0:
            value += u * _outs_gain(row, params)
        elif chow_if_missing:
            # a type the player lacks: a 吃 with two partners present
            progress = OUTS_PROGRESS[row, OUTS_CHOW_HI]
            if progress != NO_OUTS:
                value += u * params[X_OUTS_CHOW] * progress
    return value


@hot_kernel(cache=True, nogil=True, inline="always")
def _members_terms(value, view, first, step, size, row0, triad):
    """Φ's per-type terms of one part's members ``first + i × step`` (i < ``size``; a triad or
    the 卒s; ``view``: a :data:`HandView`), added to ``value``, and the counts its part terms
    read: (value, members present, components, 出 components, the member that is no component
    (-1: none)).

    One body for both kinds of part, inlined (numba IR, ``inline="always"``) at each of
    :func:`part_value`'s two calls, which pass the span, the size and ``triad`` as constants:
    each call's loop compiles unrolled for its kind.  (A loop over ``PART_MEMBERS[part]`` with
    a size read from ``PART_SIZE`` is neither: expert × 3 played about 15 % fewer deals/s.)"""
    conc = view.conc
    out_comp = view.out_comp
    n_present = 0
    n_comp = 0
    n_out = 0
    missing = -1
    for i in range(size):
        t = first + i * step
        value = _type_terms(value, view, t, row0 + i, triad)
        c = conc[t]
        if c > 0:
            n_present += 1
        if c >= 2 or out_comp[t] > 0:
            n_comp += 1
            if c >= 3 or out_comp[t] > 0:
                n_out += 1
        else:
            missing = t
    return value, n_present, n_comp, n_out, missing


@hot_kernel(cache=True, nogil=True)
def part_value(conc, part, unseen, out_comp, lock, params):
    """The hand value Φ of one part (see the module docstring).

    >>> import numpy as np
    >>> conc = np.zeros(28, np.int64); conc[[3, 4, 5]] = 1  # YC YM YP: one 圆, no idle card
    >>> part_value(conc, 4, np.zeros(28, np.int64), np.zeros(28, np.int64), np.zeros(28, np.int64),
    ...            np.array(EXPERT_DEFAULTS)) > part_value(conc * 0, 4, conc * 0, conc * 0, conc * 0,
    ...            np.array(EXPERT_DEFAULTS))
    True
    """
    if part == PART_ZU:
        code = K.part_code(conc, PART_ZU)
        value = -params[X_IDLE] * ZU_IDLE[code]
        value, n_present, n_comp, n_out, missing = _members_terms(
            value, HandView(conc, unseen, out_comp, lock, params), ZU, N_RANKS, N_COLOURS,
            OUTS_ZU_ROW + N_COLOURS * code, False)
    else:
        has_jiang = 1 if part < PART_CMP else 0
        first = K.part_span(part)[0]
        c0 = conc[first]
        c1 = conc[first + 1]
        c2 = conc[first + 2]
        value = -params[X_IDLE] * TRIAD_IDLE[has_jiang, c0, c1, c2]
        value, n_present, n_comp, n_out, missing = _members_terms(
            value, HandView(conc, unseen, out_comp, lock, params), first, 1, TRIAD_SIZE,
            (has_jiang * N_TRIAD_CODES + 25 * c0 + 5 * c1 + c2) * TRIAD_SIZE, True)
    value += params[X_PARTNER] * (n_present * (n_present - 1) // 2)
    if part != PART_ZU:
        if n_comp == TRIAD_SIZE:
            value += params[X_HU] * PLAIN_CHARIOT_VALUE[n_out]
        elif n_comp == TRIAD_SIZE - 1 and _live(conc, unseen, missing):
            value += params[X_PROSPECT] * PLAIN_CHARIOT_VALUE[n_out]
    return value


@hot_kernel(cache=True, nogil=True, inline="always")
def _chariot_terms(value, conc, unseen, out_comp, hu, prospect, rank):
    """``value`` plus Φ's 肥车 / 长车 terms of ``rank`` (将 or 卒) across the four colours."""
    n_comp = 0
    n_out = 0
    n_near = 0
    for colour in range(N_COLOURS):
        t = colour * N_RANKS + rank
        if conc[t] >= 2 or out_comp[t] > 0:
            n_comp += 1
            if conc[t] >= 3 or out_comp[t] > 0:
                n_out += 1
        elif _live(conc, unseen, t):
            n_near += 1
    if n_comp == 4:
        value += hu * LONG_CHARIOT_VALUE[n_out]
    elif n_comp == 3:
        value += hu * FAT_CHARIOT_VALUE[n_out]
        if n_near > 0:
            value += prospect * (LONG_CHARIOT_VALUE[n_out] - FAT_CHARIOT_VALUE[n_out])
    elif n_comp == 2 and n_near > 0:
        value += prospect * FAT_CHARIOT_VALUE[n_out]
    return value


@hot_kernel(cache=True, nogil=True, inline="always")
def _qing_terms(value, conc, unseen, out_comp, hu, prospect, rank):
    """``value`` plus Φ's 清 terms of ``rank`` (士 .. 炮) across the four colours."""
    n_out = 0
    n_near = 0
    for colour in range(N_COLOURS):
        t = colour * N_RANKS + rank
        if conc[t] >= 3 or out_comp[t] > 0:
            n_out += 1
        elif conc[t] == 2 and unseen[t] > 0:
            n_near += 1
    if n_out >= 3:
        value += hu * QING_VALUE[n_out]
    elif n_out == 2 and n_near > 0:
        value += prospect * QING_VALUE[3]
    return value


@hot_kernel(cache=True, nogil=True, inline="always")
def _tiandi_terms(value, conc, unseen, out_comp, hu, prospect, colour):
    """``value`` plus Φ's 天地 term of ``colour`` (its 将 and 卒)."""
    j = colour * N_RANKS + JIANG
    z = colour * N_RANKS + ZU
    j_out = conc[j] >= 3 or out_comp[j] > 0
    z_out = conc[z] >= 3 or out_comp[z] > 0
    if j_out and z_out:
        value += hu * TIANDI_VALUE
    elif (j_out and conc[z] == 2 and unseen[z] > 0) or (z_out and conc[j] == 2 and unseen[j] > 0):
        value += prospect * TIANDI_VALUE
    return value


@hot_kernel(cache=True, nogil=True)
def cross_value(conc, unseen, out_comp, params):
    """Φ's terms across parts: 肥车 / 长车 of 将 and 卒, 清, 天地 (complete or one short)."""
    value = 0.0
    hu = params[X_HU]
    prospect = params[X_PROSPECT]
    for rank in (JIANG, ZU):
        value = _chariot_terms(value, conc, unseen, out_comp, hu, prospect, rank)
    for rank in range(SHI, PAO + 1):
        value = _qing_terms(value, conc, unseen, out_comp, hu, prospect, rank)
    for colour in range(N_COLOURS):
        value = _tiandi_terms(value, conc, unseen, out_comp, hu, prospect, colour)
    return value


@hot_kernel(cache=True, nogil=True)
def _cross_change(conc, unseen, out_comp, params, t):
    """The change of :func:`cross_value` when one card of type t leaves the concealed cards
    (``conc`` holds it, and is restored): only the terms that read type t are evaluated, the
    chariot of its rank and its colour's 天地 for a 将 / 卒, the 清 of its rank otherwise.
    The same change up to rounding (the other terms cancel exactly in exact arithmetic)."""
    hu = params[X_HU]
    prospect = params[X_PROSPECT]
    rank = t % N_RANKS
    colour = t // N_RANKS
    if rank == JIANG or rank == ZU:
        before = _tiandi_terms(_chariot_terms(0.0, conc, unseen, out_comp, hu, prospect, rank), conc, unseen,
                               out_comp, hu, prospect, colour)
        conc[t] -= 1
        after = _tiandi_terms(_chariot_terms(0.0, conc, unseen, out_comp, hu, prospect, rank), conc, unseen,
                              out_comp, hu, prospect, colour)
    else:
        before = _qing_terms(0.0, conc, unseen, out_comp, hu, prospect, rank)
        conc[t] -= 1
        after = _qing_terms(0.0, conc, unseen, out_comp, hu, prospect, rank)
    conc[t] += 1
    return after - before


@hot_kernel(cache=True, nogil=True)
def _power(x, k):
    """x ** k for a small k >= 0 (a few multiplications: k <= 4 copies)."""
    y = 1.0
    for _ in range(k):
        y *= x
    return y


@hot_kernel(cache=True, nogil=True)
def _at_least_one(u, p):
    """Chance that a hand holding a share p of the unseen cards has one of u copies."""
    if u <= 0:
        return 0.0
    return 1.0 - _power(1.0 - p, u)


@hot_kernel(cache=True, nogil=True)
def _at_least_two(u, p):
    """Chance that it has two of them (binomial approximation)."""
    if u <= 1:
        return 0.0
    miss = _power(1.0 - p, u - 1)
    return 1.0 - miss * (1.0 - p) - u * p * miss


@hot_kernel(cache=True, nogil=True)
def discard_danger(danger_context, d, unseen, params):
    """``danger(d)`` of the module docstring (without the ``danger`` weight): the chance that
    an opponent can claim a discard of type d, the 碰 weighted up per 出 the claimer shows next
    to d.  Read from ``danger_context`` (a :data:`DangerContext`; its weight and cache are not
    used here): the source array with the exposed blocks at ``exp_all_at``, the seat ``me``,
    the unseen total ``n_unseen``, ``n_next`` / ``n_other`` the concealed cards of the next /
    other opponent, ``can_next`` / ``can_other`` whether they may claim at all (not 相公)."""
    _, _, _, src, exp_all_at, me, n_unseen, n_next, n_other, can_next, can_other = danger_context
    if n_unseen <= 0:
        return 0.0
    u = unseen[d]
    colour = d // N_RANKS
    rank = d % N_RANKS
    danger = 0.0
    for k in range(2):
        q = (me + 1 + k) % N_SEATS
        share = (n_next if k == 0 else n_other) / n_unseen
        if share > 1.0:
            share = 1.0
        if not (can_next if k == 0 else can_other):
            continue
        p_peng = _at_least_two(u, share)
        if p_peng > 0.0:
            related = 0
            base = exp_all_at + EXP_BLOCK * q
            if rank == ZU or rank == JIANG:
                for c in range(N_COLOURS):
                    x = c * N_RANKS + rank
                    if c != colour and src[base + N_TYPES * K.EXP_PENG + x] + src[base + N_TYPES * K.EXP_KONG + x] > 0:
                        related += 1
            else:
                first = colour * N_RANKS + (JIANG if rank < CHE else CHE)
                for x in range(first, first + TRIAD_SIZE):
                    if x != d and (src[base + N_TYPES * K.EXP_PENG + x] + src[base + N_TYPES * K.EXP_KONG + x]) > 0:
                        related += 1
                for c in range(N_COLOURS):
                    x = c * N_RANKS + rank
                    if c != colour and src[base + N_TYPES * K.EXP_PENG + x] + src[base + N_TYPES * K.EXP_KONG + x] > 0:
                        related += 1
            danger += p_peng * (1.0 + params[X_DANGER_FEED] * related)
        if k == 0:
            # the next player may 吃 / 占 it
            p_chow = 0.0
            if rank == ZU:
                a0 = -1.0
                a1 = -1.0
                a2 = -1.0
                for c in range(N_COLOURS):
                    if c != colour:
                        a = _at_least_one(unseen[c * N_RANKS + ZU], share)
                        if a0 < 0:
                            a0 = a
                        elif a1 < 0:
                            a1 = a
                        else:
                            a2 = a
                p_chow = a0 * a1 + a0 * a2 + a1 * a2 - 2.0 * a0 * a1 * a2
            else:
                first = colour * N_RANKS + (JIANG if rank < CHE else CHE)
                p_chow = 1.0
                for x in range(first, first + TRIAD_SIZE):
                    if x != d:
                        p_chow *= _at_least_one(unseen[x], share)
            p_zhan = _at_least_one(u, share)
            p_any = 1.0 - (1.0 - p_chow) * (1.0 - p_zhan)
            danger += params[X_DANGER_CHOW] * p_any
    return danger


@hot_kernel(cache=True, nogil=True)
def _cached_danger(d, danger, view):
    """:func:`discard_danger` of type d, computed once per decision (it reads nothing a claim
    under consideration changes): ``danger.done[d]`` marks the value in ``danger.cache[d]``."""
    if danger.done[d] == 0:
        danger.cache[d] = discard_danger(danger, d, view.unseen, view.params)
        danger.done[d] = 1
    return danger.cache[d]


@hot_kernel(cache=True, nogil=True, inline="always")
def _discard_change(conc, part, t, value_now, unseen, out_comp, lock, params):
    """The change of Φ when one card of type t (in ``part``) is discarded: ``value_now`` is the
    part's value before the discard; of the cross terms only those that read type t are
    evaluated (:func:`_cross_change`; inlined where used)."""
    cross_changes = t % N_RANKS == ZU or conc[t] >= 2  # only these reach the cross terms
    cross = 0.0
    if cross_changes:
        cross = _cross_change(conc, unseen, out_comp, params, t)
    conc[t] -= 1
    delta = part_value(conc, part, unseen, out_comp, lock, params) - value_now
    conc[t] += 1
    if cross_changes:
        delta += cross
    return delta


@hot_kernel(cache=True, nogil=True, inline="always")
def _has_discard(conc, part):
    """Whether ``part`` holds a card the player may discard (any but a 将): without one,
    :func:`_part_discards` returns (-1, ``floor``) and records nothing, so its caller may skip
    it and the part's value it would be given."""
    first, step, size = K.part_span(part)
    for i in range(size):
        t = first + i * step
        if conc[t] > 0 and t % N_RANKS != JIANG:
            return True
    return False


@hot_kernel(cache=True, nogil=True)
def _part_discards(view, part, value_now, floor, danger, scores, reference, behind):
    """(best discard of ``part``, its change of Φ minus its danger) among the discards that
    beat ``floor`` strictly, else (-1, ``floor``): ``value_now`` is the part's value before
    the discard (``view`` a :class:`HandView`, ``danger`` a :class:`DangerContext`).  With
    ``floor`` = NO_VALUE this is
    the part's best discard; a caller that only wants the best over several parts passes the
    best so far (when ``danger.weight`` >= 0: the danger can only lower a change, so a
    discard that does not beat it before its danger is skipped unweighed).

    With a ``scores`` array (not empty; then ``floor`` should be NO_VALUE), every discard's
    score goes into ``scores[t]`` too, except that one scoring at most ``reference`` (the best
    score of the decision so far) minus ``behind`` before its danger gets -inf unweighed (it is
    at least ``behind`` below the best).  Without (an empty array) ``reference`` and ``behind``
    are not read."""
    record = scores.shape[0] > 0
    conc = view.conc
    danger_weight = danger.weight
    first, step, size = K.part_span(part)
    best_t = -1
    best_delta = floor
    for i in range(size):
        t = first + i * step
        if conc[t] == 0 or t % N_RANKS == JIANG:
            continue
        delta = _discard_change(conc, part, t, value_now, view.unseen, view.out_comp, view.lock, view.params)
        if record:
            if danger_weight >= 0.0 and delta <= max(reference, best_delta) - behind:
                scores[t] = -np.inf  # far behind: its score is not needed
                continue
        elif delta <= best_delta:
            continue  # the danger (>= 0) can only lower it further
        if danger_weight != 0.0:
            delta -= danger_weight * _cached_danger(t, danger, view)
        if record:
            scores[t] = delta
        if delta > best_delta:
            best_delta = delta
            best_t = t
    return best_t, best_delta


@hot_kernel(cache=True, nogil=True)
def _other_parts_discard(view, claim_part, part_values, prune, danger, no_scores):
    """The best discard's change of Φ minus its danger outside ``claim_part`` (NO_VALUE: none),
    its cross terms taken as they are now (``part_values`` holds each part's Φ)."""
    other_delta = NO_VALUE
    for part in range(N_PARTS):
        if part != claim_part and _has_discard(view.conc, part):
            _, delta = _part_discards(view, part, part_values[part], other_delta if prune else NO_VALUE, danger,
                                      no_scores, 0.0, 0.0)
            if delta > other_delta:
                other_delta = delta
    return other_delta


@hot_kernel(cache=True, nogil=True, inline="always")
def _claim_value(rest, part_after, cross_now, cross_after, delta, claim_gain, penalised):
    """A claim's score: Φ of the other parts (``rest``), its part's Φ after it, the change of the
    cross terms, the best discard after it (``delta``), its hu weighted (``claim_gain``), less
    :data:`NOWIN_PENALTY` when it forbids winning; non-decreasing in ``delta``."""
    value = rest + part_after - cross_now + cross_after + delta
    value += claim_gain
    if penalised:
        value -= NOWIN_PENALTY
    return value


# ---- the claims' certified comparison (issue 51 item 3).  Every score of a claim decision is
# ``R`` plus a few terms, R = Φ of the parts the claim leaves alone (with the cross terms now, as
# the original sums them), or a constant (a winning claim).  R cancels between two scores, so a
# claim decision without scores to record compares the scores less R ("local" scores, summed in
# the same order) and evaluates no other part's Φ: a comparison whose two local scores differ by
# more than the rounding both sums can make (:func:`_certified_greater`) has the same outcome as
# the full scores' comparison; any other one (a tie or a near tie) falls back to the full
# evaluation, so the choice is the same, bit for bit.
PART_BOUND = 1000.0  # |part_value| <= PART_BOUND × Σ |weights 0..8| (coefficients: idle 16, hu 112, outs 272, ...)
CERT_EPS = 1.0e-13  # rounding margin per unit of magnitude (12 roundings of 2^-53 each are 1.3e-15)
UNDECIDED = -1  # _claim_fast: a comparison too close to call on local scores


@hot_kernel(cache=True, nogil=True)
def part_value_bound(params):
    """An upper bound of ``abs(part_value(...))`` over every holding of every part with
    ``params``: the idle count is at most 16, a part has at most 4 types, each type's terms
    weigh ``pair`` at most once, ``hu`` 18 times, ``zi`` once, ``fat`` 4 times and each outs
    weight 4 × 17 times, ``partner`` at most 6 times, a chariot ``hu`` or ``prospect`` 40 times:
    no coefficient reaches :data:`PART_BOUND`."""
    b = 0.0
    for i in range(X_PROSPECT + 1):
        b += abs(params[i])
    return PART_BOUND * b


@hot_kernel(cache=True, nogil=True, inline="always")
def _certified_greater(l_new, s_new, const_new, l_best, s_best, const_best, r_max, eps):
    """Whether a candidate's full score beats the best's (1) or not (0), or ``UNDECIDED``, from
    their local scores ``l`` (the full score less R, |R| <= ``r_max``; a constant score when
    ``const``) and ``s`` (the sum of the magnitudes of the local score's terms): a full score
    differs from R + ``l`` by at most ``eps`` × (``r_max`` + ``s``)."""
    if const_new and const_best:
        return 1 if l_new > l_best else 0
    if const_new:
        reach = r_max + abs(l_best) + eps * (r_max + s_best)
        if l_new > reach:
            return 1
        if l_new < -reach:
            return 0
        return UNDECIDED
    if const_best:
        reach = r_max + abs(l_new) + eps * (r_max + s_new)
        if l_best > reach:
            return 0
        if l_best < -reach:
            return 1
        return UNDECIDED
    margin = eps * (2.0 * r_max + s_new + s_best)
    d = l_new - l_best
    if d > margin:
        return 1
    if d < -margin:
        return 0
    return UNDECIDED


@hot_kernel(cache=True, nogil=True)
def _chariot_through(conc, src, expcards_at, exp_at, t, zhan_in_chariot):
    """docs/rules.md §7 from the player's own view: a chariot through t (concealed + exposed cards)."""
    colour = t // N_RANKS
    rank = t % N_RANKS
    if rank != ZU:
        first = colour * N_RANKS + (JIANG if rank < CHE else CHE)
        ok = True
        for x in range(first, first + TRIAD_SIZE):
            n = conc[x] + src[expcards_at + x]
            if not zhan_in_chariot:
                n -= 2 * src[exp_at + N_TYPES * K.EXP_ZHAN + x]
            if n < 2:
                ok = False
        if ok:
            return True
    if rank == JIANG or rank == ZU:
        n_colours = 0
        through = False
        for c in range(N_COLOURS):
            x = c * N_RANKS + rank
            n = conc[x] + src[expcards_at + x]
            if not zhan_in_chariot:
                n -= 2 * src[exp_at + N_TYPES * K.EXP_ZHAN + x]
            if n >= 2:
                n_colours += 1
                if x == t:
                    through = True
        return through and n_colours >= 3
    return False


@hot_kernel(cache=True, nogil=True)
def _evaluate(conc, src, exp_at, n_chow, exp_row, t, rules, work):
    """Evaluator on the player's holding (+ one exposed group of type t in ``exp_row``, or a
    圆 when ``exp_row`` is -1 and t >= 0); fills ``work[XW_OUT:]`` (and returns nothing: a
    hot kernel, as its callers)."""
    exp = work[XW_EXP : XW_EXP + EXP_BLOCK].reshape((N_EXP_ROWS, N_TYPES))
    for i in range(EXP_BLOCK):
        work[XW_EXP + i] = src[exp_at + i]
    if t >= 0:
        if exp_row >= 0:
            exp[exp_row, t] += 1
        else:
            n_chow += 1
    out = work[XW_OUT : XW_OUT + K.N_OUT]
    choice = work[XW_CHOICE : XW_CHOICE + K.N_CHOICE]
    K.evaluate_kernel(conc, exp, n_chow, rules, 0, out, choice, work[: K.WORK_SIZE])


@njit(cache=True, nogil=True, inline="always")
def take_claim(action, t, conc, used):
    """Take the concealed cards the claim ``action`` on type ``t`` uses out of ``conc`` (the
    engine's own account, :func:`simkit.engine.kernel.meld_cards`, written into ``used``);
    returns (the exposed row it adds, -1 for a 吃; the hu it exposes).  Inlined where called:
    expert's claim searches and greedy's claim outcome share it."""
    kind = E.meld_cards(action, t, used)
    for i in range(MELD_TYPES):
        if used[i] >= 0:
            conc[used[i]] -= 1
    if kind == M_PENG:
        return K.EXP_PENG, PENG_HU[t]
    if kind == M_KONG:
        return K.EXP_KONG, KONG_HU[t]
    if kind == M_ZHAN:
        return K.EXP_ZHAN, 0
    return -1, 1


@njit(cache=True, nogil=True, inline="always")
def _winning_claim(view, src, exp_at, n_chow, exp_row, t, rules, work, stock_left):
    """WIN_KEY + the units of a claim that wins and that expert takes (enough units, or late in
    the stock), else NO_VALUE; ``view.conc`` holds the holding after the claim.  Inlined in both
    claim searches (:func:`_claim_fast`, :func:`_expert_core`)."""
    if K.min_idle_kernel(view.conc) == 0:
        _evaluate(view.conc, src, exp_at, n_chow, exp_row, t, rules, work)
        out = work[XW_OUT : XW_OUT + K.N_OUT]
        params = view.params
        if out[K.OUT_WINS] == 1 and (out[K.OUT_UNITS] >= params[X_MIN_UNITS] or stock_left <= params[X_LATE_STOCK]):
            return WIN_KEY + out[K.OUT_UNITS]
    return NO_VALUE


@njit(cache=True, nogil=True, inline="always")
def _after_claim(view, claim_part, t, exp_row, beat, danger, no_scores):
    """(cross terms, Φ of the claim's part, its best discard's delta) after a claim that does
    not win, ``view.conc`` the holding after it: a 碰 or a kong exposes one more copy of ``t`` while
    they are evaluated (``beat``: :func:`_part_discards`'s pruning bound).  Inlined in both claim
    searches."""
    exposes_out = exp_row == K.EXP_PENG or exp_row == K.EXP_KONG
    if exposes_out:
        view.out_comp[t] += 1
    cross_after = cross_value(view.conc, view.unseen, view.out_comp, view.params)
    part_after = part_value(view.conc, claim_part, view.unseen, view.out_comp, view.lock, view.params)
    _, delta = _part_discards(view, claim_part, part_after, beat, danger, no_scores, 0.0, 0.0)
    if exposes_out:
        view.out_comp[t] -= 1
    return cross_after, part_after, delta


@hot_kernel(cache=True, nogil=True)
def _claim_fast(view, danger, src, exp_at, n_chow, t, n_claims, cross_now, kong_forced, peng_forced, stock_left,
                mask, rules, work, part_values, no_scores, eps):
    """The choice of a claim decision (no scores recorded) by local scores (the comment above
    :data:`PART_BOUND`), or ``UNDECIDED`` where a comparison is too close to call; the same
    candidates and terms as :func:`_expert_core`'s claim search, in the same order.  ``view``'s
    arrays are restored; ``part_values`` (N_PARTS floats) is scratch, ``no_scores`` an empty
    float array.  Compiled without reference counting (a hot kernel), as the kernels it calls:
    with it, the call's named tuples of arrays cost more than the evaluations it saves."""
    conc = view.conc
    unseen = view.unseen
    out_comp = view.out_comp
    lock = view.lock
    params = view.params
    claim_part = K.part_of(t)
    r_max = (abs(cross_now) + (N_PARTS + 1) * part_value_bound(params)) * 1.001
    prune = danger.weight >= 0.0
    other_known = False
    other_delta = NO_VALUE
    if n_claims > 1:
        for part in range(N_PARTS):
            if part != claim_part and _has_discard(conc, part):
                part_values[part] = part_value(conc, part, unseen, out_comp, lock, params)
        other_delta = _other_parts_discard(view, claim_part, part_values, prune, danger, no_scores)
        other_known = True
    old_lock = lock[t]
    lock[t] = 1
    best_l = part_value(conc, claim_part, unseen, out_comp, lock, params)
    lock[t] = old_lock
    best_s = abs(best_l)
    if kong_forced or peng_forced:
        best_l -= NOWIN_PENALTY
        best_s += NOWIN_PENALTY
    best_const = False
    best_action = A_PASS
    used = work[XW_USED : XW_USED + MELD_TYPES]
    for a in range(N_ACTIONS):
        if not mask[a] or a == A_PASS:
            continue
        exp_row, gain = take_claim(a, t, conc, used)
        const = False
        local = 0.0
        size = 0.0
        verdict = UNDECIDED
        win = _winning_claim(view, src, exp_at, n_chow, exp_row, t, rules, work, stock_left)
        if win != NO_VALUE:
            const = True
            local = win
        if not const:
            cross_after, part_after, delta = _after_claim(view, claim_part, t, exp_row,
                                                          other_delta if prune and other_known else NO_VALUE,
                                                          danger, no_scores)
            penalised = (kong_forced and a != A_KONG) or (peng_forced and a != A_PENG)
            claim_gain = params[X_CLAIM_HU] * gain
            size = (abs(part_after) + abs(cross_now) + abs(cross_after) + abs(claim_gain)
                    + (NOWIN_PENALTY if penalised else 0.0))
            if not other_known and delta != NO_VALUE:
                # one claim: its value with its own part's best discard is a lower bound that
                # decides when above the pass (as in _expert_core)
                bound = _claim_value(0.0, part_after, cross_now, cross_after, delta, claim_gain, penalised)
                if _certified_greater(bound, size + abs(delta), False, best_l, best_s, best_const, r_max, eps) == 1:
                    verdict = 1
                    local = bound
                    size += abs(delta)
            if verdict == UNDECIDED:
                if not other_known:
                    for i in range(MELD_TYPES):  # searched on the holding before the claim
                        if used[i] >= 0:
                            conc[used[i]] += 1
                    for part in range(N_PARTS):
                        if part != claim_part and _has_discard(conc, part):
                            part_values[part] = part_value(conc, part, unseen, out_comp, lock, params)
                    other_delta = _other_parts_discard(view, claim_part, part_values, prune, danger, no_scores)
                    other_known = True
                    for i in range(MELD_TYPES):
                        if used[i] >= 0:
                            conc[used[i]] -= 1
                if other_delta > delta:
                    delta = other_delta
                if delta == NO_VALUE:
                    const = True
                    local = WIN_KEY
                else:
                    local = _claim_value(0.0, part_after, cross_now, cross_after, delta, claim_gain, penalised)
                    size += abs(delta)
        for i in range(MELD_TYPES):
            if used[i] >= 0:
                conc[used[i]] += 1
        if verdict == UNDECIDED:
            verdict = _certified_greater(local, size, const, best_l, best_s, best_const, r_max, eps)
            if verdict == UNDECIDED:
                return UNDECIDED
        if verdict == 1:
            best_l = local
            best_s = size
            best_const = const
            best_action = a
    return best_action


@hot_kernel(cache=True, nogil=True)
def _expert_core(src, seat, mask, params, rules, work, scores, scores_behind, eps):
    """expert on the view of ``src`` (an observation or the state) that ``seat`` (a
    :class:`SeatView`) locates: its offsets name the regions, which have the same layout in both.  A ``scores`` array of N_ACTIONS
    floats (an empty one: none) also receives the score of every legal discard, claim and
    pass of the decision (-inf elsewhere, and for a discard at least ``scores_behind`` below
    the best; comparable within the decision, the choice's the largest).  Without scores, a
    claim decision is decided by :func:`_claim_fast` (``eps`` its rounding margin,
    :data:`CERT_EPS`), which falls back to the search below where a comparison is too close."""
    me = seat.me
    exp_all_at = seat.exp_all_at
    expcards_at = seat.expcards_at
    n_chow = seat.n_chow
    phase = seat.phase
    t = seat.t
    stock_left = seat.stock_left
    cannot_win = seat.cannot_win
    record = scores.shape[0] > 0
    no_scores = scores[:0]  # the claims' searches of the best discard record nothing
    if record:
        for a in range(scores.shape[0]):
            scores[a] = -np.inf
    conc = work[XW_CONC : XW_CONC + N_TYPES]
    unseen = work[XW_UNSEEN : XW_UNSEEN + N_TYPES]
    out_comp = work[XW_OUT_COMP : XW_OUT_COMP + N_TYPES]
    lock = work[XW_LOCK : XW_LOCK + N_TYPES]
    part_values = work[XW_PART_VALUE : XW_PART_VALUE + N_PARTS].view(np.float64)
    danger_cache = work[XW_DANGER : XW_DANGER + N_TYPES].view(np.float64)
    danger_done = work[XW_DANGER_DONE : XW_DANGER_DONE + N_TYPES]
    exp_at = exp_all_at + EXP_BLOCK * me
    n_unseen = 0
    # the regions read as slices indexed by the loop's counter (known >= 0: numba's indexing
    # then skips its negative-index wraparound, which an offset + counter index pays)
    src_conc = src[seat.conc_at : seat.conc_at + N_TYPES]
    src_dead = src[seat.dead_at : seat.dead_at + N_TYPES]
    src_shown = src[expcards_at : expcards_at + N_SEATS * N_TYPES]
    src_peng = src[exp_at + N_TYPES * K.EXP_PENG : exp_at + N_TYPES * (K.EXP_PENG + 1)]
    src_kong = src[exp_at + N_TYPES * K.EXP_KONG : exp_at + N_TYPES * (K.EXP_KONG + 1)]
    src_lock = src[seat.lock_at : seat.lock_at + N_TYPES]
    for x in range(N_TYPES):
        conc[x] = src_conc[x]
        seen = conc[x] + src_dead[x] + src_shown[x] + src_shown[N_TYPES + x] + src_shown[2 * N_TYPES + x]
        if x == t:
            seen += 1  # the active card
        u = N_COPIES - seen
        if u < 0:
            u = 0
        unseen[x] = u
        n_unseen += u
        out_comp[x] = src_peng[x] + src_kong[x]
        lock[x] = src_lock[x]
        danger_done[x] = 0
    view = HandView(conc, unseen, out_comp, lock, params)
    if phase == PH_DISCARD and mask[A_WIN]:
        _evaluate(conc, src, exp_at, n_chow, -1, -1, rules, work)
        out = work[XW_OUT : XW_OUT + K.N_OUT]
        if out[K.OUT_UNITS] >= params[X_MIN_UNITS] or stock_left <= params[X_LATE_STOCK]:
            return A_WIN
    n_claims = 0
    if phase != PH_DISCARD:
        for a in range(N_ACTIONS):
            if mask[a] and a != A_PASS:
                n_claims += 1
        if n_claims == 0 or cannot_win:
            return A_PASS
    danger_weight = NOWIN_DANGER if cannot_win else params[X_DANGER] * (
        1.0 + params[X_DANGER_LATE] * (STOCK_CARDS - stock_left) / STOCK_CARDS)
    # only the best of several parts' discards counts: with a danger that can only lower a
    # change, a part's discards need only beat the best so far (the same best, found sooner)
    prune = danger_weight >= 0.0
    danger = DangerContext(danger_weight, danger_cache, danger_done, src, exp_all_at, me, n_unseen, seat.n_next,
                           seat.n_other, seat.xianggong_next == 0, seat.xianggong_other == 0)
    if phase == PH_DISCARD:
        # the discard maximising the change of Φ minus its danger (the first of equals)
        best_t = -1
        best_delta = NO_VALUE
        for part in range(N_PARTS):
            if not _has_discard(conc, part):
                continue  # nothing to discard: neither its value nor a search is needed
            value = part_value(conc, part, unseen, out_comp, lock, params)
            # recording scores every discard (the part's first best is the pruned search's too)
            part_t, delta = _part_discards(view, part, value, best_delta if prune and not record else NO_VALUE,
                                           danger, scores, best_delta, scores_behind)
            if part_t >= 0 and delta > best_delta:
                best_delta = delta
                best_t = part_t
        if best_t >= 0:
            return best_t
        return A_WIN  # only a win is legal
    # claim decision on the active card t: its part is the only one a claim changes
    claim_part = K.part_of(t)
    zhan_in_chariot = rules[RULE_ZHAN_IN_CHARIOT] == 1
    # which choices forbid winning (docs/rules.md §7)
    kong_forced = mask[A_KONG] and rules[RULE_MUST_KONG] == 1
    peng_forced = (mask[A_PENG] and rules[RULE_MUST_CHARIOT_OUT] == 1
                   and _chariot_through(conc, src, expcards_at + N_TYPES * me, exp_at, t, zhan_in_chariot))
    cross_now = cross_value(conc, unseen, out_comp, params)
    if not record:
        # by local scores, without the Φ of the parts no claim changes (the same choice)
        choice = _claim_fast(view, danger, src, exp_at, n_chow, t, n_claims, cross_now, kong_forced, peng_forced,
                             stock_left, mask, rules, work, part_values, no_scores, eps)
        if choice != UNDECIDED:
            return choice
    # Φ of each part, and the best discard outside the claim's part (its cross terms taken as
    # they are now; a discard decision reads only their changes, _cross_change)
    total = cross_now
    for part in range(N_PARTS):
        value = part_value(conc, part, unseen, out_comp, lock, params)
        part_values[part] = value
        total += value
    # With a single claim and no scores to record, the best discard outside the claim's part is
    # searched only when the claim's own part does not already decide (below).
    other_known = n_claims > 1 or record
    other_delta = NO_VALUE
    if other_known:
        other_delta = _other_parts_discard(view, claim_part, part_values, prune, danger, no_scores)
    # passing locks the type
    old_lock = lock[t]
    lock[t] = 1
    best_action = A_PASS
    best_value = total - part_values[claim_part] + part_value(conc, claim_part, unseen, out_comp, lock, params)
    lock[t] = old_lock
    if kong_forced or peng_forced:
        best_value -= NOWIN_PENALTY
    if record:
        scores[A_PASS] = best_value
    used = work[XW_USED : XW_USED + MELD_TYPES]
    for a in range(N_ACTIONS):
        if not mask[a] or a == A_PASS:
            continue
        exp_row, gain = take_claim(a, t, conc, used)
        value = _winning_claim(view, src, exp_at, n_chow, exp_row, t, rules, work, stock_left)
        if value == NO_VALUE:
            # the best discard after the claim: from the claim's part, or the best elsewhere
            cross_after, part_after, delta = _after_claim(view, claim_part, t, exp_row,
                                                          other_delta if prune and other_known else NO_VALUE,
                                                          danger, no_scores)
            penalised = (kong_forced and a != A_KONG) or (peng_forced and a != A_PENG)
            if not other_known and delta != NO_VALUE:
                # the value with the claim's part's best discard only is a lower bound (the value
                # is non-decreasing in delta, rounding included): above the pass, it decides
                bound = _claim_value(total - part_values[claim_part], part_after, cross_now, cross_after, delta,
                                     params[X_CLAIM_HU] * gain, penalised)
                if bound > best_value:
                    value = bound
            if value == NO_VALUE:
                if not other_known:
                    for i in range(MELD_TYPES):  # searched on the holding before the claim
                        if used[i] >= 0:
                            conc[used[i]] += 1
                    other_delta = _other_parts_discard(view, claim_part, part_values, prune, danger, no_scores)
                    other_known = True
                    for i in range(MELD_TYPES):
                        if used[i] >= 0:
                            conc[used[i]] -= 1
                if other_delta > delta:
                    delta = other_delta
                if delta == NO_VALUE:
                    value = WIN_KEY  # no discard left: the claim is legal only because it wins
                else:
                    value = _claim_value(total - part_values[claim_part], part_after, cross_now, cross_after, delta,
                                         params[X_CLAIM_HU] * gain, penalised)
        for i in range(MELD_TYPES):
            if used[i] >= 0:
                conc[used[i]] += 1
        if record:
            scores[a] = value
        if value > best_value:
            best_value = value
            best_action = a
    return best_action


@hot_kernel(cache=True, nogil=True)
def expert_act(obs, mask, params, rules, work):
    """expert on an observation (the plug-in contract, without the unused rng)."""
    return expert_act_scores(obs, mask, params, rules, work, work[:0].view(np.float64), np.inf)


@hot_kernel(cache=True, nogil=True)
def expert_act_scores(obs, mask, params, rules, work, scores, behind):
    """:func:`expert_act`, also writing every candidate's score into ``scores`` (N_ACTIONS
    floats; an empty array: none), as ``_expert_core`` describes (a discard ``behind`` points
    or more below the best may get -inf)."""
    me = obs[O_SEAT]
    nxt = (me + 1) % N_SEATS
    other = (me + 2) % N_SEATS
    seat = SeatView(me, O_CONC, O_EXP, O_EXPCARDS, O_DEAD, O_LOCK + N_TYPES * me, obs[O_NCHOW + me], obs[O_PHASE],
                    obs[O_ACTIVE], obs[O_STOCK_LEFT], obs[O_NCONC + nxt], obs[O_NCONC + other], obs[O_XIANGGONG + nxt],
                    obs[O_XIANGGONG + other], obs[O_NOWIN + me] == 1)
    return _expert_core(obs, seat, mask, params, rules, work, scores, behind, CERT_EPS)


@hot_kernel(cache=True, nogil=True)
def expert_state(s, p, mask, params, rules, work):
    """:func:`expert_act` reading player p's view straight from the state (no observation
    copy): p's own concealed cards, locks and cannot-win flag, every seat's exposed groups and
    cards, the dead cards, the active card, the stock size, the seats' concealed-card counts
    and 相公 flags — the same numbers the observation holds, so the same choice."""
    return expert_state_margin(s, p, mask, params, rules, work, CERT_EPS)


@hot_kernel(cache=True, nogil=True)
def expert_state_margin(s, p, mask, params, rules, work, eps):
    """:func:`expert_state` with the claims' rounding margin ``eps`` (:data:`CERT_EPS`; the
    tests pass ``np.inf``, with which every claim decision takes the full search)."""
    nxt = (p + 1) % N_SEATS
    other = (p + 2) % N_SEATS
    n_next = 0
    n_other = 0
    for x in range(N_TYPES):
        n_next += s[S_CONC + N_TYPES * nxt + x]
        n_other += s[S_CONC + N_TYPES * other + x]
    seat = SeatView(p, S_CONC + N_TYPES * p, S_EXP, S_EXPCARDS, S_DEAD, S_LOCK + N_TYPES * p, s[S_NCHOW + p],
                    s[S_PHASE], s[S_ACTIVE], N_CARDS - s[S_STOCK_POS], n_next, n_other, s[S_XIANGGONG + nxt],
                    s[S_XIANGGONG + other], s[S_NOWIN + p] == 1)
    return _expert_core(s, seat, mask, params, rules, work, work[:0].view(np.float64), np.inf, eps)
