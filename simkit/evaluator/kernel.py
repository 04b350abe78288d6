"""The numba hand evaluator kernel (docs/rules.md §2-4, §6).

How it works
------------
The groups of 四色牌 couple card types only in a few ways: a 圆 of 将士相 or 车马炮 ties the
three types of one colour's *triad*, 卒 圆s tie the 卒 of different colours, and the
patterns tie components across types (素车 inside a triad; 肥车/长车 across the 将 or the
卒 of different colours; 清 across colours of one rank; 天地 between the 将 and 卒 of a
colour).  So the holding splits into independent *parts* — four 将士相 triads, four
车马炮 triads and the 卒 system — whose choices meet only in those cross terms:

* each part enumerates its own decompositions and keeps, per *interface* (which of its
  types have an 出 component, and the component class of the 将 it leaves for 肥车/长车),
  the best hu of the part including its own 素车s;
* the 车马炮 triads meet only through 清 of 车/马/炮, the 将士相 triads through 清 of 士/相
  and the 将 chariots, the 卒 system through the 卒 chariots; 天地 links the 将 and 卒 of a
  colour, which is a 16 x 16 table at the end.

Each step is a short exact enumeration over small lists, so the result is the exact
maximum of docs/rules.md §4 over every decomposition and chariot choice.  Pattern wins (§6) only
need "is there a decomposition with these features", which is monotone in the features:
each part keeps its Pareto-maximal feature vectors and the union of patterns is taken over
their combinations.

Two rule options reach into the parts:

* ``zhan_in_chariot`` off (the default): an exposed 占 pair is no chariot component, so the
  exposed state of its type is read as ``EX_NONE`` (:func:`exposed_state`); it scores 0 and
  is never 出, so nothing else (清, 天地, patterns) sees it either.
* ``single_jiang_cap`` k > 0: at most k single 将 (concealed singles + table 将) score.
  Singles only occur in the 将士相 triads, so each 将士相 option also carries its number of
  concealed singles in its interface code (``code | singles << 5``), options of one colour
  that another option of the same 出 bits / offered class beats whatever the other colours
  hold are dropped, and :func:`_combine_triads`, which sees one option of every colour,
  subtracts the excess ``max(0, table + Σ singles - k)``.  That is exact: the hu of a
  decomposition is the uncapped hu minus exactly that excess, and an option's singles only
  enter through it (see :func:`_triad_options` for why one split per class suffices).
  With k = 0 the codes are the plain 32 and nothing is subtracted.  The cap changes no
  feature of a decomposition (only its hu), so the pattern pass does not see it.

The kernels take plain arrays; the layout constants below name every index.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from simkit.jit import hot_kernel  # simkit.jit: how simkit's kernels compile, before any of them does
from simkit.cards import CHE, JIANG, N_COLOURS, N_RANKS, N_TYPES, TRIAD_SIZE, ZU
from simkit.evaluator.tables import (
    CHARIOT_TABLE,
    CL_OUT,
    CL_TWO_PAIRS,
    EX_KONG,
    EX_NONE,
    EX_PENG,
    EX_ZHAN,
    EX_ZHAN2,
    IS_FAT_TYPE,
    KONG_HU,
    N_COMPONENTS_OF_CLASS,
    N_PARTS,
    PART_CMP,
    PART_ZU,
    PART_OF_TYPE,
    PENG_HU,
    PLAIN_CHARIOT_VALUE,
    QING_VALUE,
    TIANDI_VALUE,
    TK_FAT,
    TK_JIANG,
    TK_PLAIN,
    TRIAD_IDLE,
    TYPE_HU,
    TYPE_SINGLES,
    ZU_IDLE,
    ZU_YUAN,
)
# rows of the exposed array ``exposed[4, 28]`` (counts per type): defined with the exposed
# groups (:mod:`simkit.exposed`), re-exported here for the kernels and their callers
from simkit.exposed import EXP_KONG, EXP_PENG, EXP_TABLE, EXP_ZHAN, N_EXP_ROWS  # noqa: F401
from simkit.rules import (
    RULE_HU_TOLERANCE,
    RULE_JIANG_IN_CHARIOT,
    RULE_LOU_DOUBLES,
    RULE_PATTERN_WINS,
    RULE_SINGLE_JIANG_CAP,
    RULE_STEPS_COUNT_LOU,
    RULE_ZHAN_IN_CHARIOT,
)

# result array ``out[N_OUT]``
OUT_COMPLETE = 0
OUT_HU = 1  # -1 when incomplete
OUT_LOU = 2
OUT_STEPS = 3
OUT_UNITS = 4
OUT_WINS = 5
OUT_PATTERNS = 6  # bit i = PATTERN_NAMES[i] (when computed)
OUT_MIN_IDLE = 7
OUT_PATTERN_FLOOR = 8  # 0, 1 or 5 (when computed)
OUT_PATTERNS_DONE = 9  # 1 when OUT_PATTERNS / OUT_PATTERN_FLOOR were computed
N_OUT = 10

# best decomposition ``choice[N_CHOICE]``: one arg word per triad, then the 卒 system
CHOICE_JSX = 0  # + colour: arg word of the 将士相 triad
CHOICE_CMP = 4  # + colour: arg word of the 车马炮 triad
CHOICE_ZU_YUAN = 8  # + colour: 卒 of that colour in 卒 圆s
CHOICE_ZU_CLASS = 12  # + colour: component class of that 卒
N_CHOICE = 16
# arg word: t | class0 << 3 | class1 << 5 | class2 << 7 | n_plain_chariots << 9

# pattern bits, in the order of docs/rules.md §6 (names in simkit.evaluator.patterns)
PAT_TWO_LOU = 0
PAT_PLAIN_CHARIOT_FAT_LOU = 1
PAT_FAT_CHARIOT_PLAIN_LOU = 2
PAT_FAT_CHARIOT_2_OUT = 3
PAT_LONG_CHARIOT_1_OUT = 4
PAT_STEPS5_CHARIOT_OUT = 5
PAT_STEPS5_QING3 = 6
PAT_STEPS5_TIANDI = 7
PAT_QING3_TIANDI = 8
PAT_QING3_CHARIOT_OUT = 9
PAT_CHARIOT_OUT_TIANDI = 10
PAT_PLAIN_CHARIOT_ALL_OUT = 11
PAT_QING4 = 12
PAT_STEPS6 = 13
PAT_PLAIN_CHARIOT_ALL_OUT_TWO_LOU = 14
PAT_FAT_CHARIOT_OUT_TWO_LOU = 15
PAT_LONG_CHARIOT_2_OUT_LOU = 16
PAT_STEPS6_LONG_CHARIOT = 17
N_PATTERNS = 18
XIAOJIA_MASK = (1 << 14) | (1 << 15) | (1 << 16) | (1 << 17)

NEG = -(1 << 40)

# ``want_patterns`` of :func:`evaluate_kernel` for callers that read only ``OUT_WINS``
WANT_WINS = 2

# interface codes of a triad: 出 bits (3) | offered 将 class << 3 (2 bits) ...
N_CODES = 32
# ... | concealed single 将 (0..4) << 5 under rule single_jiang_cap
N_CODES_CAP = 5 * N_CODES
N_OPTIONS = N_CODES_CAP  # room for one triad's options (stride of the option lists)
N_PAT_CODES = 120  # triad feature codes: 出 bits + 8 * 将 level (3) + 24 * (smax + 1) (5)
N_ZPAT_CODES = 3**N_COLOURS  # 81: 卒 level tuples, base 3
N_KEYS = 16  # sets of colours (4 bits)
N_LIST = 128  # a pattern-pass scratch list (>= N_PAT_CODES)

# scratch workspace ``work[WORK_SIZE]`` (int64), so that the kernel never allocates:
# each region starts where the previous one ends (offset = previous offset + its size)
SZ_HU_BY_CODE = N_CODES_CAP
SZ_ARG_BY_CODE = N_CODES_CAP
SZ_OPTION_LIST = 4 * N_OPTIONS  # flat (4 colours, N_OPTIONS)
SZ_COUNTS = 8  # jsx_n (4), cmp_n (4)
SZ_TRIAD_PAT = 4 * N_PAT_CODES  # flags, 4 colours
SZ_ZPAT = N_ZPAT_CODES  # flags
SZ_BEST = 3 * N_KEYS  # cmp_best, jsx_best, zu_best
SZ_IDX = 4 * 4 * N_KEYS  # cmp_idx, jsx_idx, zu_u, zu_cls: each flat (16, 4)
SZ_COLOUR = 4 * N_LIST  # pattern pass: Pareto colour codes of 4 colours
SZ_COLOUR_N = 4  # their counts
SZ_TMP = 3 * N_LIST  # 3 scratch lists
SZ_ZCODES = N_ZPAT_CODES  # Pareto 卒 level codes
W_HU_BY_CODE = 0
W_ARG_BY_CODE = W_HU_BY_CODE + SZ_HU_BY_CODE
W_JSX_CODES = W_ARG_BY_CODE + SZ_ARG_BY_CODE
W_JSX_HUS = W_JSX_CODES + SZ_OPTION_LIST
W_JSX_ARGS = W_JSX_HUS + SZ_OPTION_LIST
W_CMP_CODES = W_JSX_ARGS + SZ_OPTION_LIST
W_CMP_HUS = W_CMP_CODES + SZ_OPTION_LIST
W_CMP_ARGS = W_CMP_HUS + SZ_OPTION_LIST
W_COUNTS = W_CMP_ARGS + SZ_OPTION_LIST
W_JSX_PAT = W_COUNTS + SZ_COUNTS
W_CMP_PAT = W_JSX_PAT + SZ_TRIAD_PAT
W_ZPAT = W_CMP_PAT + SZ_TRIAD_PAT
W_BEST = W_ZPAT + SZ_ZPAT
W_IDX = W_BEST + SZ_BEST
W_COLOUR = W_IDX + SZ_IDX
W_COLOUR_N = W_COLOUR + SZ_COLOUR
W_TMP = W_COLOUR_N + SZ_COLOUR_N
W_ZCODES = W_TMP + SZ_TMP
WORK_SIZE = W_ZCODES + SZ_ZCODES

# every region of the workspace: (name, offset, size), in order (tests check the layout)
WORK_REGIONS = (
    ("W_HU_BY_CODE", W_HU_BY_CODE, SZ_HU_BY_CODE),
    ("W_ARG_BY_CODE", W_ARG_BY_CODE, SZ_ARG_BY_CODE),
    ("W_JSX_CODES", W_JSX_CODES, SZ_OPTION_LIST),
    ("W_JSX_HUS", W_JSX_HUS, SZ_OPTION_LIST),
    ("W_JSX_ARGS", W_JSX_ARGS, SZ_OPTION_LIST),
    ("W_CMP_CODES", W_CMP_CODES, SZ_OPTION_LIST),
    ("W_CMP_HUS", W_CMP_HUS, SZ_OPTION_LIST),
    ("W_CMP_ARGS", W_CMP_ARGS, SZ_OPTION_LIST),
    ("W_COUNTS", W_COUNTS, SZ_COUNTS),
    ("W_JSX_PAT", W_JSX_PAT, SZ_TRIAD_PAT),
    ("W_CMP_PAT", W_CMP_PAT, SZ_TRIAD_PAT),
    ("W_ZPAT", W_ZPAT, SZ_ZPAT),
    ("W_BEST", W_BEST, SZ_BEST),
    ("W_IDX", W_IDX, SZ_IDX),
    ("W_COLOUR", W_COLOUR, SZ_COLOUR),
    ("W_COLOUR_N", W_COLOUR_N, SZ_COLOUR_N),
    ("W_TMP", W_TMP, SZ_TMP),
    ("W_ZCODES", W_ZCODES, SZ_ZCODES),
)


def new_workspace() -> np.ndarray:
    """A scratch array for :func:`evaluate_kernel` (one per thread)."""
    return np.zeros(WORK_SIZE, dtype=np.int64)


class Triad(NamedTuple):
    """One triad of :func:`_triad_options` (scalars, one kernel argument): its first type
    (three same-colour types from there), the ``TK_*`` kind of that type, whether it is a
    将士相 triad, and the rules it is scored by: ``jiang_bonus`` (rule jiang_in_chariot),
    ``zhan_comp`` (zhan_in_chariot), ``cap_on`` (single_jiang_cap > 0)."""

    first_type: int
    kind0: int
    is_jiang_triad: bool
    jiang_bonus: int
    zhan_comp: int
    cap_on: bool


class TriadScoring(NamedTuple):
    """How :func:`_combine_triads` scores a combination of one triad kind (scalars, one kernel
    argument): the ranks counted for 清 (``qing_bits``), whether 将 chariots count
    (``use_chariots``, by the ``chariot_row`` passed beside), the single 将 ``cap`` (0: none)
    and the ``table_singles`` 将 on the table."""

    qing_bits: int
    use_chariots: bool
    cap: int
    table_singles: int


class Exposed(NamedTuple):
    """The features of a holding's exposed part that patterns read (scalars, one kernel
    argument): its 楼 (``n_lou``; a fat / plain one among them), and its steps."""

    n_lou: int
    fat_lou: bool
    plain_lou: bool
    steps: int


@hot_kernel(cache=True, nogil=True)
def exposed_state(exposed, t, zhan_in_chariot):
    """Exposed components of type t (``EX_*``) as the chariots see them.

    A 占 pair is a component only under rule ``zhan_in_chariot``; otherwise it is read as
    no component at all (it scores 0 and is never 出, so nothing else needs it)."""
    if exposed[EXP_KONG, t] > 0:
        return EX_KONG
    if exposed[EXP_PENG, t] > 0:
        return EX_PENG
    if not zhan_in_chariot:
        return EX_NONE
    if exposed[EXP_ZHAN, t] >= 2:
        return EX_ZHAN2
    if exposed[EXP_ZHAN, t] == 1:
        return EX_ZHAN
    return EX_NONE


@hot_kernel(cache=True, nogil=True)
def part_of(t):
    """Independent part of type t for idle counting: 0-3 将士相 triads, 4-7 车马炮, 8 卒."""
    return PART_OF_TYPE[t]


@hot_kernel(cache=True, nogil=True)
def part_idle(conc, part):
    """Fewest idle cards of one part (see :func:`part_of`)."""
    if part == PART_ZU:
        return ZU_IDLE[conc[ZU] + 5 * conc[N_RANKS + ZU] + 25 * conc[2 * N_RANKS + ZU] + 125 * conc[3 * N_RANKS + ZU]]
    if part < PART_CMP:
        base = part * N_RANKS + JIANG
        return TRIAD_IDLE[1, conc[base], conc[base + 1], conc[base + 2]]
    base = (part - PART_CMP) * N_RANKS + CHE
    return TRIAD_IDLE[0, conc[base], conc[base + 1], conc[base + 2]]


@hot_kernel(cache=True, nogil=True)
def part_span(part):
    """(first member, step, number of members) of a part: its members are ``first + i × step``,
    as :data:`~simkit.evaluator.tables.PART_MEMBERS` lists them."""
    if part == PART_ZU:
        return ZU, N_RANKS, N_COLOURS
    if part < PART_CMP:
        return part * N_RANKS + JIANG, 1, TRIAD_SIZE
    return (part - PART_CMP) * N_RANKS + CHE, 1, TRIAD_SIZE


@hot_kernel(cache=True, nogil=True)
def part_code(conc, part):
    """Code of one part's counts: sum(count of member i * 5**i), members as
    :data:`~simkit.evaluator.tables.PART_MEMBERS` (the row of ``PART_IDLE_BY_CODE`` and the
    other part tables is ``PART_KIND[part]``)."""
    if part == PART_ZU:
        return conc[ZU] + 5 * conc[N_RANKS + ZU] + 25 * conc[2 * N_RANKS + ZU] + 125 * conc[3 * N_RANKS + ZU]
    if part < PART_CMP:
        base = part * N_RANKS + JIANG
    else:
        base = (part - PART_CMP) * N_RANKS + CHE
    return conc[base] + 5 * conc[base + 1] + 25 * conc[base + 2]


@hot_kernel(cache=True, nogil=True)
def min_idle_kernel(conc):
    """Fewest idle cards over all decompositions (0 iff the concealed cards are complete)."""
    idle = 0
    for part in range(N_PARTS):
        idle += part_idle(conc, part)
    return idle


@hot_kernel(cache=True, nogil=True)
def _triad_options(triad, conc, exposed, hu_by_code, arg_by_code, pat):
    """Enumerate the decompositions of one triad (:class:`Triad`: three same-colour types).

    hu_by_code[code] gets the best hu with interface ``code`` = 出 bits of the three types
    | offered 将 class << 3 (将士相 triads only) | concealed single 将 << 5 (only when
    ``cap_on``: rule single_jiang_cap > 0; then hu_by_code has N_CODES_CAP entries);
    arg_by_code the arg word reaching it.
    pat[bits + 8 * jiang_level + 24 * (smax + 1)] marks the pattern features reachable:
    jiang_level 0/1/2 = no 将 component / pair(s) / 出; smax = 出 of a formable 素车 or -1.

    Per type only the class of its components is enumerated, with the best split of that
    class (TYPE_HU).  Under the cap a split with fewer singles could be worth more, but the
    best split of a class also has the fewest singles of the class (asserted in
    :mod:`simkit.evaluator.tables`), so it is never beaten by another split of the class.
    """
    first_type, kind0, is_jiang_triad, jiang_bonus, zhan_comp, cap_on = triad
    hu_by_code[:] = NEG
    arg_by_code[:] = -1
    pat[:] = 0
    n0 = conc[first_type]
    n1 = conc[first_type + 1]
    n2 = conc[first_type + 2]
    e0 = exposed_state(exposed, first_type, zhan_comp)
    e1 = exposed_state(exposed, first_type + 1, zhan_comp)
    e2 = exposed_state(exposed, first_type + 2, zhan_comp)
    t_max = min(n0, min(n1, n2))
    for t in range(t_max + 1):
        m0 = n0 - t
        m1 = n1 - t
        m2 = n2 - t
        for c0 in range(4):
            h0 = TYPE_HU[kind0, e0, m0, c0]
            if h0 < 0:
                continue
            singles_bits = (TYPE_SINGLES[kind0, e0, m0, c0] << 5) if cap_on else 0
            for c1 in range(4):
                h1 = TYPE_HU[TK_PLAIN, e1, m1, c1]
                if h1 < 0:
                    continue
                for c2 in range(4):
                    h2 = TYPE_HU[TK_PLAIN, e2, m2, c2]
                    if h2 < 0:
                        continue
                    base = t + h0 + h1 + h2
                    o0 = 1 if c0 == CL_OUT else 0
                    o1 = 1 if c1 == CL_OUT else 0
                    o2 = 1 if c2 == CL_OUT else 0
                    outs = o0 + o1 + o2
                    bits = o0 | (o1 << 1) | (o2 << 2)
                    k0 = N_COMPONENTS_OF_CLASS[c0]
                    kmin = min(k0, min(N_COMPONENTS_OF_CLASS[c1], N_COMPONENTS_OF_CLASS[c2]))
                    smax = outs if kmin >= 1 else -1
                    level = 0
                    if is_jiang_triad:
                        level = 2 if o0 == 1 else (1 if k0 >= 1 else 0)
                    pat[bits + 8 * level + 24 * (smax + 1)] = 1
                    for q in range(kmin + 1):
                        if q == 0:
                            value = base
                            offer = c0
                        elif q == 1:
                            value = base + PLAIN_CHARIOT_VALUE[outs]
                            if is_jiang_triad and jiang_bonus and outs >= 1 and o0 == 0:
                                value += 2  # the 将 pair of a 素车 with 出 scores 1 per 将
                            offer = 1 if c0 == CL_TWO_PAIRS else 0
                        else:  # two 素车, all components pairs
                            value = base + 2 * PLAIN_CHARIOT_VALUE[0]
                            offer = 0
                        if not is_jiang_triad:
                            offer = 0
                        code = bits | (offer << 3) | singles_bits
                        if value > hu_by_code[code]:
                            hu_by_code[code] = value
                            arg_by_code[code] = t | (c0 << 3) | (c1 << 5) | (c2 << 7) | (q << 9)


@hot_kernel(cache=True, nogil=True)
def _singles_dominated(hu_by_code, code, h):
    """True if another 将士相 option with the same 出 bits and offered class (``code & 31``)
    but a different number of concealed singles (``code >> 5``) is never worse under the cap.

    With the rest of the holding fixed, an option (h, s) adds ``h - max(0, E + s)`` (E: the
    other singles minus the cap) = ``min(h, h - s - E)``; (h2, s2) is at least as good for
    every E iff h2 >= h and h2 - s2 >= h - s.  Two different options never dominate each
    other (that needs s2 == s), so every dropped option leaves a kept one at least as good.
    (Over every triad the options of one code turn out totally ordered this way, so under
    the cap each code keeps one option, as without it; tests check both.)
    """
    low = code & (N_CODES - 1)
    s = code >> 5
    for s2 in range(5):
        if s2 == s:
            continue
        h2 = hu_by_code[low | (s2 << 5)]
        if h2 > NEG and h2 >= h and h2 - s2 >= h - s:
            return True
    return False


@hot_kernel(cache=True, nogil=True)
def _combine_triads(codes, hus, counts, chariot_row, scoring, best, best_idx):
    """Combine the four colours' option lists of one triad kind, scored as ``scoring`` says
    (:class:`TriadScoring`).

    ``codes`` / ``hus``: flat (4, N_OPTIONS) lists, colour c's option i at c * N_OPTIONS + i.
    best[key] (key = bit-0 出 of each colour, i.e. which colours' 将 / 车 are 出) gets the best
    total of the triads' hu + 清 of the ranks in ``qing_bits`` + (将 chariots, with
    ``use_chariots``: ``chariot_row``); best_idx
    (flat (16, 4)) the option indices reaching it.  ``cap`` > 0 (rule single_jiang_cap, 将士相
    triads only): the hus count every single at 1, so the singles beyond the cap, counting
    the ``table_singles`` 将 on the table (scored at 1 in the fixed part) and the singles of
    each code (``code >> 5``), are taken off again; this is the capped hu of exactly the
    decompositions combined here.
    """
    qing_bits, use_chariots, cap, table_singles = scoring
    best[:] = NEG
    for i0 in range(counts[0]):
        for i1 in range(counts[1]):
            for i2 in range(counts[2]):
                for i3 in range(counts[3]):
                    a = codes[i0]
                    b = codes[N_OPTIONS + i1]
                    c = codes[2 * N_OPTIONS + i2]
                    d = codes[3 * N_OPTIONS + i3]
                    value = hus[i0] + hus[N_OPTIONS + i1] + hus[2 * N_OPTIONS + i2] + hus[3 * N_OPTIONS + i3]
                    for k in range(3):
                        if (qing_bits >> k) & 1:
                            n = ((a >> k) & 1) + ((b >> k) & 1) + ((c >> k) & 1) + ((d >> k) & 1)
                            value += QING_VALUE[n]
                    if use_chariots:
                        offer = ((a >> 3) & 3) | (((b >> 3) & 3) << 2) | (((c >> 3) & 3) << 4) | (((d >> 3) & 3) << 6)
                        value += chariot_row[offer]
                    if cap > 0:
                        over = table_singles - cap + (a >> 5) + (b >> 5) + (c >> 5) + (d >> 5)
                        if over > 0:
                            value -= over
                    key = (a & 1) | ((b & 1) << 1) | ((c & 1) << 2) | ((d & 1) << 3)
                    if value > best[key]:
                        best[key] = value
                        best_idx[4 * key] = i0
                        best_idx[4 * key + 1] = i1
                        best_idx[4 * key + 2] = i2
                        best_idx[4 * key + 3] = i3


@hot_kernel(cache=True, nogil=True)
def _zu_options(conc, exposed, zhan_comp, chariot_row, best, best_u, best_cls, zpat):
    """Enumerate the 卒 system: 卒 圆s (3 or 4 colours), then each colour's rest.

    best[zbits] = best hu of 卒 圆s + 卒 groups + 卒 chariots with 出 卒 in colours zbits (its
    卒 in 圆s and component classes in the flat (16, 4) best_u / best_cls);
    zpat[sum(level_c * 3**c)] marks the reachable 卒 levels (0 none, 1 pairs, 2 出).
    """
    best[:] = NEG
    zpat[:] = 0
    z0 = conc[6]
    z1 = conc[13]
    z2 = conc[20]
    z3 = conc[27]
    e0 = exposed_state(exposed, 6, zhan_comp)
    e1 = exposed_state(exposed, 13, zhan_comp)
    e2 = exposed_state(exposed, 20, zhan_comp)
    e3 = exposed_state(exposed, 27, zhan_comp)
    for u0 in range(z0 + 1):
        for u1 in range(z1 + 1):
            for u2 in range(z2 + 1):
                for u3 in range(z3 + 1):
                    yuan = ZU_YUAN[u0 + 5 * u1 + 25 * u2 + 125 * u3]
                    if yuan < 0:
                        continue
                    m0 = z0 - u0
                    m1 = z1 - u1
                    m2 = z2 - u2
                    m3 = z3 - u3
                    for c0 in range(4):
                        h0 = TYPE_HU[TK_FAT, e0, m0, c0]
                        if h0 < 0:
                            continue
                        for c1 in range(4):
                            h1 = TYPE_HU[TK_FAT, e1, m1, c1]
                            if h1 < 0:
                                continue
                            for c2 in range(4):
                                h2 = TYPE_HU[TK_FAT, e2, m2, c2]
                                if h2 < 0:
                                    continue
                                for c3 in range(4):
                                    h3 = TYPE_HU[TK_FAT, e3, m3, c3]
                                    if h3 < 0:
                                        continue
                                    value = yuan + h0 + h1 + h2 + h3 + chariot_row[c0 | (c1 << 2) | (c2 << 4) | (c3 << 6)]
                                    zbits = 0
                                    level = 0
                                    p3 = 1
                                    for c in range(N_COLOURS):
                                        cls = c0 if c == 0 else (c1 if c == 1 else (c2 if c == 2 else c3))
                                        if cls == CL_OUT:
                                            zbits |= 1 << c
                                            level += 2 * p3
                                        elif cls != 0:
                                            level += p3
                                        p3 *= 3
                                    zpat[level] = 1
                                    if value > best[zbits]:
                                        best[zbits] = value
                                        best_u[4 * zbits] = u0
                                        best_u[4 * zbits + 1] = u1
                                        best_u[4 * zbits + 2] = u2
                                        best_u[4 * zbits + 3] = u3
                                        best_cls[4 * zbits] = c0
                                        best_cls[4 * zbits + 1] = c1
                                        best_cls[4 * zbits + 2] = c2
                                        best_cls[4 * zbits + 3] = c3


@hot_kernel(cache=True, nogil=True)
def _pareto(codes, n, mode, out_codes):
    """Copy into out_codes the distinct codes[:n] that no other code dominates; return count."""
    m = 0
    for i in range(n):
        a = codes[i]
        keep = True
        for j in range(n):
            b = codes[j]
            if b != a and _dominates(b, a, mode):
                keep = False
                break
        if keep:
            for k in range(m):
                if out_codes[k] == a:
                    keep = False
                    break
        if keep:
            out_codes[m] = a
            m += 1
    return m


@hot_kernel(cache=True, nogil=True)
def _dominates(b, a, mode):
    """True if feature code b is at least as good as a in every feature (b != a)."""
    if mode == 2:  # triad code: 出 bits (3) + 8 * jiang level + 24 * (smax + 1)
        if (a & 7) & ~(b & 7):
            return False
        if (a >> 3) % 3 > (b >> 3) % 3:
            return False
        return a // 24 <= b // 24
    if mode == 0:  # colour code: rank bits (5) | jiang level << 5 | (smax + 1) << 7
        if (a & 31) & ~(b & 31):
            return False
        if ((a >> 5) & 3) > ((b >> 5) & 3):
            return False
        return (a >> 7) <= (b >> 7)
    # 卒 level tuple, base 3
    for c in range(N_COLOURS):
        if a % 3 > b % 3:
            return False
        a //= 3
        b //= 3
    return True


@hot_kernel(cache=True, nogil=True)
def _chariot_features(levels_code, base3):
    """(肥车 best 出 or -1, 长车 best 出 or -1, 出 colour bits) of one rank's component levels."""
    n_comp = 0
    n_out = 0
    bits = 0
    for c in range(N_COLOURS):
        if base3:
            lv = levels_code % 3
            levels_code //= 3
        else:
            lv = (levels_code >> (2 * c)) & 3
        if lv >= 1:
            n_comp += 1
        if lv == 2:
            n_out += 1
            bits |= 1 << c
    fat = min(n_out, 3) if n_comp >= 3 else -1
    long = n_out if n_comp == 4 else -1
    return fat, long, bits


@hot_kernel(cache=True, nogil=True)
def _pattern_mask(fixed, qing, smax, fmax, lmax, tiandi):
    """The patterns of one combination: the exposed part's features ``fixed``
    (:class:`Exposed`), the 清 count, the 出 of the best 素车 (``smax``, -1: none), of a fat
    and a long chariot (``fmax``, ``lmax``), and whether 天地 joins."""
    n_lou, fat_lou, plain_lou, steps = fixed
    chariot_out = smax >= 1 or fmax >= 1 or lmax >= 1
    mask = 0
    if n_lou >= 2:
        mask |= 1 << PAT_TWO_LOU
    if smax >= 0 and fat_lou:
        mask |= 1 << PAT_PLAIN_CHARIOT_FAT_LOU
    if fmax >= 0 and plain_lou:
        mask |= 1 << PAT_FAT_CHARIOT_PLAIN_LOU
    if fmax >= 2:
        mask |= 1 << PAT_FAT_CHARIOT_2_OUT
    if lmax >= 1:
        mask |= 1 << PAT_LONG_CHARIOT_1_OUT
    if steps >= 5 and chariot_out:
        mask |= 1 << PAT_STEPS5_CHARIOT_OUT
    if steps >= 5 and qing >= 3:
        mask |= 1 << PAT_STEPS5_QING3
    if steps >= 5 and tiandi:
        mask |= 1 << PAT_STEPS5_TIANDI
    if qing >= 3 and tiandi:
        mask |= 1 << PAT_QING3_TIANDI
    if qing >= 3 and chariot_out:
        mask |= 1 << PAT_QING3_CHARIOT_OUT
    if chariot_out and tiandi:
        mask |= 1 << PAT_CHARIOT_OUT_TIANDI
    if smax == 3:
        mask |= 1 << PAT_PLAIN_CHARIOT_ALL_OUT
    if qing == 4:
        mask |= 1 << PAT_QING4
    if steps >= 6:
        mask |= 1 << PAT_STEPS6
    if smax == 3 and n_lou >= 2:
        mask |= 1 << PAT_PLAIN_CHARIOT_ALL_OUT_TWO_LOU
    if fmax >= 1 and n_lou >= 2:
        mask |= 1 << PAT_FAT_CHARIOT_OUT_TWO_LOU
    if lmax >= 2 and n_lou >= 1:
        mask |= 1 << PAT_LONG_CHARIOT_2_OUT_LOU
    if steps >= 6 and lmax >= 0:
        mask |= 1 << PAT_STEPS6_LONG_CHARIOT
    return mask


@hot_kernel(cache=True, nogil=True)
def _no_pattern_possible(work, nz, fixed):
    """True when no combination of the colour codes and 卒 codes :func:`_patterns` would
    combine can have a pattern: every pattern is monotone in the features (:func:`_pattern_mask`
    asks only for a feature at least some value; :func:`_chariot_features` grows with the
    levels), so the mask of the features' maxima (per colour the union of the rank bits, the
    highest 将 level and smax; per colour the highest 卒 level) covers every combination's
    mask.  When that mask is empty the union is too, which is the case of most complete
    holdings the engine and greedy ask about (a complete holding below the win line)."""
    rank_counts = 0  # per rank (3 bits each): colours with an 出 component of that rank
    jlevels = 0
    smax1 = 0
    for c in range(N_COLOURS):
        n = work[W_COLOUR_N + c]
        if n == 0:
            return True  # colour c has no decomposition: nothing is combined
        bits = 0
        level = 0
        for i in range(n):
            code = work[W_COLOUR + N_LIST * c + i]
            bits |= code & 31
            level = max(level, (code >> 5) & 3)
            smax1 = max(smax1, code >> 7)
        for k in range(5):
            rank_counts += ((bits >> k) & 1) << (3 * k)
        jlevels |= level << (2 * c)
    if nz == 0:
        return True
    zlevels = 0
    power = 1
    for c in range(N_COLOURS):
        level = 0
        for i in range(nz):
            level = max(level, (work[W_ZCODES + i] // power) % 3)
        zlevels += level * power
        power *= 3
    qing = 0
    for k in range(5):
        qing = max(qing, (rank_counts >> (3 * k)) & 7)
    jf, jl, jbits = _chariot_features(jlevels, False)
    zf, zl, zbits = _chariot_features(zlevels, True)
    return _pattern_mask(fixed, qing, smax1 - 1, max(jf, zf), max(jl, zl), (jbits & zbits) != 0) == 0


@hot_kernel(cache=True, nogil=True)
def _patterns(work, fixed):
    """Union of the patterns over all complete decompositions, and the best floor (0/1/5)
    (``fixed``: the exposed part's features, :class:`Exposed`).

    Reads the feature flags the parts left in ``work``.  Every pattern is monotone in the
    features, so only Pareto-maximal feature vectors of each colour / of the 卒 system are
    combined.
    """
    tmp_a = work[W_TMP : W_TMP + N_LIST]
    tmp_b = work[W_TMP + N_LIST : W_TMP + 2 * N_LIST]
    tmp_c = work[W_TMP + 2 * N_LIST : W_TMP + 3 * N_LIST]
    for c in range(N_COLOURS):
        # Pareto sets of the two triads of colour c
        n_a = 0
        for a in range(N_PAT_CODES):
            if work[W_JSX_PAT + N_PAT_CODES * c + a]:
                tmp_c[n_a] = a
                n_a += 1
        n_a = _pareto(tmp_c, n_a, 2, tmp_a)
        n_b = 0
        for b in range(N_PAT_CODES):
            if work[W_CMP_PAT + N_PAT_CODES * c + b]:
                tmp_c[n_b] = b
                n_b += 1
        n_b = _pareto(tmp_c, n_b, 2, tmp_b)
        # colour code: rank bits 士 相 车 马 炮 | 将 level << 5 | (smax + 1) << 7
        n = 0
        for i in range(n_a):
            a = tmp_a[i]
            for j in range(n_b):
                b = tmp_b[j]
                smax1 = max(a // 24, b // 24)
                tmp_c[n] = ((a >> 1) & 3) | ((b & 7) << 2) | (((a >> 3) % 3) << 5) | (smax1 << 7)
                n += 1
        work[W_COLOUR_N + c] = _pareto(tmp_c, n, 0, work[W_COLOUR + N_LIST * c : W_COLOUR + N_LIST * (c + 1)])
    n = 0
    for a in range(N_ZPAT_CODES):
        if work[W_ZPAT + a]:
            tmp_c[n] = a
            n += 1
    nz = _pareto(tmp_c, n, 1, work[W_ZCODES : W_ZCODES + N_ZPAT_CODES])
    if _no_pattern_possible(work, nz, fixed):
        return 0, 0
    union = 0
    floor = 0
    for i0 in range(work[W_COLOUR_N]):
        k0 = work[W_COLOUR + i0]
        for i1 in range(work[W_COLOUR_N + 1]):
            k1 = work[W_COLOUR + N_LIST + i1]
            for i2 in range(work[W_COLOUR_N + 2]):
                k2 = work[W_COLOUR + 2 * N_LIST + i2]
                for i3 in range(work[W_COLOUR_N + 3]):
                    k3 = work[W_COLOUR + 3 * N_LIST + i3]
                    qing = 0
                    for k in range(5):
                        n = ((k0 >> k) & 1) + ((k1 >> k) & 1) + ((k2 >> k) & 1) + ((k3 >> k) & 1)
                        qing = max(qing, n)
                    smax = max(max(k0 >> 7, k1 >> 7), max(k2 >> 7, k3 >> 7)) - 1
                    jlevels = ((k0 >> 5) & 3) | (((k1 >> 5) & 3) << 2) | (((k2 >> 5) & 3) << 4) | (((k3 >> 5) & 3) << 6)
                    jf, jl, jbits = _chariot_features(jlevels, False)
                    for iz in range(nz):
                        zf, zl, zbits = _chariot_features(work[W_ZCODES + iz], True)
                        mask = _pattern_mask(fixed, qing, smax, max(jf, zf), max(jl, zl), (jbits & zbits) != 0)
                        union |= mask
                        if mask & XIAOJIA_MASK:
                            floor = 5
                        elif mask and floor == 0:
                            floor = 1
    return union, floor


@hot_kernel(cache=True, nogil=True)
def evaluate_kernel(conc, exposed, n_chow, rules, want_patterns, out, choice, work):
    """Evaluate one holding.

    ``conc``: 28 concealed counts; ``exposed``: (4, 28) counts of 占 / 碰 / 楼 / table 将 per
    type; ``n_chow``: exposed 圆s; ``rules``: ``RuleSet.to_array()``; ``want_patterns``: 1
    computes the pattern union always, 0 only when it can change the units, ``WANT_WINS``
    only when it can change ``OUT_WINS`` (then only ``OUT_WINS`` is reliable: the units may
    lack a pattern floor); ``out`` gets
    the ``OUT_*`` fields, ``choice`` the best decomposition; ``work``: :func:`new_workspace`.
    """
    for i in range(N_OUT):
        out[i] = 0
    for i in range(N_CHOICE):
        choice[i] = -1
    # exposed, fixed part
    fixed = n_chow
    n_lou = 0
    n_peng = 0
    fat_lou = False
    plain_lou = False
    table_singles = 0
    for t in range(N_TYPES):
        fat = IS_FAT_TYPE[t] == 1
        fixed += exposed[EXP_TABLE, t]
        table_singles += exposed[EXP_TABLE, t]
        fixed += exposed[EXP_PENG, t] * PENG_HU[t]
        fixed += exposed[EXP_KONG, t] * KONG_HU[t]
        n_peng += exposed[EXP_PENG, t]
        n_lou += exposed[EXP_KONG, t]
        if exposed[EXP_KONG, t] > 0:
            if fat:
                fat_lou = True
            else:
                plain_lou = True
    steps = n_peng + (n_lou if rules[RULE_STEPS_COUNT_LOU] else 0)
    out[OUT_LOU] = n_lou
    out[OUT_STEPS] = steps
    idle = min_idle_kernel(conc)
    out[OUT_MIN_IDLE] = idle
    if idle > 0:
        out[OUT_HU] = -1
        out[OUT_PATTERNS_DONE] = 1
        return
    out[OUT_COMPLETE] = 1
    jiang_bonus = rules[RULE_JIANG_IN_CHARIOT]
    zhan_comp = rules[RULE_ZHAN_IN_CHARIOT]
    cap = rules[RULE_SINGLE_JIANG_CAP]
    cap_on = cap > 0
    n_codes = N_CODES_CAP if cap_on else N_CODES  # 将士相 interface codes
    hu_by_code = work[W_HU_BY_CODE : W_HU_BY_CODE + n_codes]
    arg_by_code = work[W_ARG_BY_CODE : W_ARG_BY_CODE + n_codes]
    cmp_hu_by_code = work[W_HU_BY_CODE : W_HU_BY_CODE + N_CODES]
    cmp_arg_by_code = work[W_ARG_BY_CODE : W_ARG_BY_CODE + N_CODES]
    # flat (4, N_OPTIONS) option lists: colour c's option i at c * N_OPTIONS + i (1-D views:
    # a reshaped view costs a helper call per evaluation)
    jsx_codes = work[W_JSX_CODES : W_JSX_CODES + 4 * N_OPTIONS]
    jsx_hus = work[W_JSX_HUS : W_JSX_HUS + 4 * N_OPTIONS]
    jsx_args = work[W_JSX_ARGS : W_JSX_ARGS + 4 * N_OPTIONS]
    cmp_codes = work[W_CMP_CODES : W_CMP_CODES + 4 * N_OPTIONS]
    cmp_hus = work[W_CMP_HUS : W_CMP_HUS + 4 * N_OPTIONS]
    cmp_args = work[W_CMP_ARGS : W_CMP_ARGS + 4 * N_OPTIONS]
    jsx_n = work[W_COUNTS : W_COUNTS + 4]
    cmp_n = work[W_COUNTS + 4 : W_COUNTS + 8]
    # --- the eight triads
    for c in range(N_COLOURS):
        jsx_pat = work[W_JSX_PAT + N_PAT_CODES * c : W_JSX_PAT + N_PAT_CODES * (c + 1)]
        _triad_options(Triad(c * N_RANKS + JIANG, TK_JIANG, True, jiang_bonus, zhan_comp, cap_on), conc, exposed,
                       hu_by_code, arg_by_code, jsx_pat)
        n = 0
        for code in range(n_codes):
            h = hu_by_code[code]
            if h > NEG:
                if cap_on and _singles_dominated(hu_by_code, code, h):
                    continue
                jsx_codes[c * N_OPTIONS + n] = code
                jsx_hus[c * N_OPTIONS + n] = h
                jsx_args[c * N_OPTIONS + n] = arg_by_code[code]
                n += 1
        jsx_n[c] = n
        cmp_pat = work[W_CMP_PAT + N_PAT_CODES * c : W_CMP_PAT + N_PAT_CODES * (c + 1)]
        _triad_options(Triad(c * N_RANKS + CHE, TK_FAT, False, 0, zhan_comp, False), conc, exposed, cmp_hu_by_code,
                       cmp_arg_by_code, cmp_pat)
        n = 0
        for code in range(8):
            if cmp_hu_by_code[code] > NEG:
                cmp_codes[c * N_OPTIONS + n] = code
                cmp_hus[c * N_OPTIONS + n] = cmp_hu_by_code[code]
                cmp_args[c * N_OPTIONS + n] = cmp_arg_by_code[code]
                n += 1
        cmp_n[c] = n
    cmp_best = work[W_BEST : W_BEST + N_KEYS]
    jsx_best = work[W_BEST + N_KEYS : W_BEST + 2 * N_KEYS]
    zu_best = work[W_BEST + 2 * N_KEYS : W_BEST + 3 * N_KEYS]
    # flat (16, 4): key k's entry for colour c at 4 * k + c
    cmp_idx = work[W_IDX : W_IDX + 4 * N_KEYS]
    jsx_idx = work[W_IDX + 4 * N_KEYS : W_IDX + 8 * N_KEYS]
    zu_u = work[W_IDX + 8 * N_KEYS : W_IDX + 12 * N_KEYS]
    zu_cls = work[W_IDX + 12 * N_KEYS : W_IDX + 16 * N_KEYS]
    # --- 车马炮 triads: independent of everything but 清 of 车 马 炮
    _combine_triads(cmp_codes, cmp_hus, cmp_n, CHARIOT_TABLE[0], TriadScoring(7, False, 0, 0), cmp_best, cmp_idx)
    cmp_key = 0
    for key in range(16):
        if cmp_best[key] > cmp_best[cmp_key]:
            cmp_key = key
    # --- 将士相 triads: 清 of 士 相, 将 chariots; best per set of colours with a 将 出
    # (and the single 将 cap: every single lies in a 将士相 triad or on the table)
    _combine_triads(jsx_codes, jsx_hus, jsx_n, CHARIOT_TABLE[jiang_bonus], TriadScoring(6, True, cap, table_singles),
                    jsx_best, jsx_idx)
    # --- 卒 system
    _zu_options(conc, exposed, zhan_comp, CHARIOT_TABLE[0], zu_best, zu_u, zu_cls, work[W_ZPAT : W_ZPAT + SZ_ZPAT])
    # --- 天地 joins the 将 and 卒 sides
    best = NEG
    best_j = 0
    best_z = 0
    for jb in range(16):
        if jsx_best[jb] <= NEG:
            continue
        for zb in range(16):
            if zu_best[zb] <= NEG:
                continue
            both = jb & zb
            n_td = (both & 1) + ((both >> 1) & 1) + ((both >> 2) & 1) + ((both >> 3) & 1)
            value = jsx_best[jb] + zu_best[zb] + TIANDI_VALUE * n_td
            if value > best:
                best = value
                best_j = jb
                best_z = zb
    step_bonus = 20 * (steps - 4) if steps >= 5 else 0
    hu = fixed + cmp_best[cmp_key] + best + step_bonus
    out[OUT_HU] = hu
    for c in range(N_COLOURS):
        choice[CHOICE_JSX + c] = jsx_args[c * N_OPTIONS + jsx_idx[4 * best_j + c]]
        choice[CHOICE_CMP + c] = cmp_args[c * N_OPTIONS + cmp_idx[4 * cmp_key + c]]
        choice[CHOICE_ZU_YUAN + c] = zu_u[4 * best_z + c]
        choice[CHOICE_ZU_CLASS + c] = zu_cls[4 * best_z + c]
    tolerance = rules[RULE_HU_TOLERANCE]
    if rules[RULE_LOU_DOUBLES]:
        units = ((hu + tolerance) << n_lou) // 50
    else:
        units = (hu + tolerance) // 50
    # patterns: every pattern needs an 出 component somewhere (a 碰, 楼, 子 or 闹)
    any_out = n_peng + n_lou > 0
    if not any_out:
        for t in range(N_TYPES):
            if conc[t] >= 3:
                any_out = True
                break
    # a pattern floor (1 or 5) matters only below 5 units, and to the win only below 1
    if want_patterns == 1 or (rules[RULE_PATTERN_WINS] == 1 and units < (1 if want_patterns == WANT_WINS else 5)):
        out[OUT_PATTERNS_DONE] = 1
        if any_out:
            mask, floor = _patterns(work, Exposed(n_lou, fat_lou, plain_lou, steps))
            out[OUT_PATTERNS] = mask
            out[OUT_PATTERN_FLOOR] = floor
            if rules[RULE_PATTERN_WINS] == 1 and floor > units:
                units = floor
    out[OUT_UNITS] = units
    out[OUT_WINS] = 1 if units >= 1 else 0
