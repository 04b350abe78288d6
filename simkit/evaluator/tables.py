"""Small constant tables of the evaluator, built once at import from the rules text.

Everything here is a plain ``numpy`` array indexed by small integers, read by the numba
kernels in :mod:`simkit.evaluator.kernel`.

Per-type vocabulary
-------------------
*Type kind* ``TK_JIANG`` (将: fat, may stand alone as a single), ``TK_FAT`` (车, 卒) or
``TK_PLAIN`` (士 相 马 炮).

*Exposed state* of a type (its exposed components): ``EX_NONE``, ``EX_ZHAN`` (one 占 pair),
``EX_PENG`` (碰), ``EX_KONG`` (楼), ``EX_ZHAN2`` (two 占 pairs).  占 pairs are components
only under rule ``zhan_in_chariot``; otherwise the kernel reads their type as ``EX_NONE``.

*Component class* of a type in a decomposition (all its components, concealed and exposed):
``CL_NONE`` (no component), ``CL_PAIR`` (one component of 2 cards), ``CL_OUT`` (one 出
component: 3 or 4 cards), ``CL_TWO_PAIRS`` (two components of 2 cards).  With at most four
copies of a type no other combination exists.  For chariots, 清 and 天地 only the class matters.

*Concealed split* of the ``m`` concealed copies of a type left after 圆s: ``SP_SINGLES`` (all
singles, 将 only), ``SP_PAIR`` (a pair, the rest singles), ``SP_ZI`` (a 子, the rest singles),
``SP_NAO`` (a 闹), ``SP_TWO_PAIRS``.
"""

from __future__ import annotations

import itertools

import numpy as np

from simkit.cards import CHE, FAT_RANKS, JIANG, N_COLOURS, N_COPIES, N_RANKS, N_TYPES, TRIAD_SIZE, XIANG, ZU

TK_JIANG, TK_FAT, TK_PLAIN = 0, 1, 2
EX_NONE, EX_ZHAN, EX_PENG, EX_KONG, EX_ZHAN2 = 0, 1, 2, 3, 4
CL_NONE, CL_PAIR, CL_OUT, CL_TWO_PAIRS = 0, 1, 2, 3
SP_SINGLES, SP_PAIR, SP_ZI, SP_NAO, SP_TWO_PAIRS = 0, 1, 2, 3, 4

EXPOSED_COMPONENTS = {EX_NONE: (), EX_ZHAN: (2,), EX_PENG: (3,), EX_KONG: (4,), EX_ZHAN2: (2, 2)}
# cards in components, hu of the concealed groups (plain, fat) for each split, singles excluded
SPLIT_COMPONENTS = {SP_SINGLES: (), SP_PAIR: (2,), SP_ZI: (3,), SP_NAO: (4,), SP_TWO_PAIRS: (2, 2)}
_SPLIT_HU_PLAIN = {SP_SINGLES: 0, SP_PAIR: 0, SP_ZI: 3, SP_NAO: 9, SP_TWO_PAIRS: 0}

N_COMPONENTS_OF_CLASS = np.array([0, 1, 1, 2], dtype=np.int64)

# per type: fat (将 车 卒) or plain, and the hu of its exposed groups (docs/rules.md §2: 碰 plain 1 / fat 2,
# 楼 plain 6 / fat 12)
FAT_FACTOR = 2
PENG_HU_PLAIN = 1
KONG_HU_PLAIN = 6
IS_FAT_TYPE = np.array([int(t % N_RANKS in FAT_RANKS) for t in range(N_TYPES)], dtype=np.int64)
PENG_HU = np.array([PENG_HU_PLAIN * (FAT_FACTOR if f else 1) for f in IS_FAT_TYPE], dtype=np.int64)
KONG_HU = np.array([KONG_HU_PLAIN * (FAT_FACTOR if f else 1) for f in IS_FAT_TYPE], dtype=np.int64)
# independent parts of a holding for idle counting: 0-3 将士相 triads, 4-7 车马炮 triads, 8 卒
N_PARTS = 2 * N_COLOURS + 1  # 9
PART_CMP = N_COLOURS  # first 车马炮 part
PART_ZU = 2 * N_COLOURS
PART_OF_TYPE = np.array([PART_ZU if t % N_RANKS == ZU else t // N_RANKS + (0 if t % N_RANKS <= XIANG else PART_CMP)
                         for t in range(N_TYPES)], dtype=np.int64)
assert JIANG == 0 and CHE == XIANG + 1  # triads are the ranks JIANG..XIANG and CHE..PAO

# chariot values by number of 出 components (docs/rules.md §3)
PLAIN_CHARIOT_VALUE = np.array([10, 20, 30, 40], dtype=np.int64)  # 素车
FAT_CHARIOT_VALUE = np.array([20, 40, 60, 100], dtype=np.int64)  # 肥车
LONG_CHARIOT_VALUE = np.array([40, 80, 120, 160, 200], dtype=np.int64)  # 长车
# 清 by number of colours with an 出 component of one rank
QING_VALUE = np.array([0, 0, 0, 20, 40], dtype=np.int64)
TIANDI_VALUE = 20


def _class_of(components: tuple[int, ...]) -> int:
    if not components:
        return CL_NONE
    if len(components) == 1:
        return CL_PAIR if components[0] == 2 else CL_OUT
    if components == (2, 2):
        return CL_TWO_PAIRS
    return -1


def _build_type_options() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """TYPE_HU[kind, exposed, m, class]: best concealed hu of a type whose ``m`` concealed
    copies (after 圆s) are split so that its components have that class; -1 if impossible.
    TYPE_SPLIT holds the split that reaches it, TYPE_SINGLES its number of single 将 (each
    counted at 1 hu in TYPE_HU).

    Rule ``single_jiang_cap`` makes a split with fewer singles worth more than its TYPE_HU
    when the cap bites, so keeping one split per class is exact only if the kept split has
    both the best value and the fewest singles of its class: then any other split of the
    class has no more hu and no fewer singles, and with any cap (the capped total is
    ``hu - max(0, singles + others - cap)``, non-decreasing in hu and non-increasing in
    singles) it is never better.  The builder asserts this."""
    hu = np.full((3, 5, 5, 4), -1, dtype=np.int64)
    split = np.full((3, 5, 5, 4), -1, dtype=np.int64)
    n_singles = np.zeros((3, 5, 5, 4), dtype=np.int64)
    fewest = np.full((3, 5, 5, 4), 99, dtype=np.int64)
    for kind in (TK_JIANG, TK_FAT, TK_PLAIN):
        fat = kind in (TK_JIANG, TK_FAT)
        for ex, ex_comps in EXPOSED_COMPONENTS.items():
            for m in range(5):
                if m + sum(ex_comps) > 4:
                    continue
                for sp, sp_comps in SPLIT_COMPONENTS.items():
                    singles = m - sum(sp_comps)
                    if singles < 0 or (singles > 0 and kind != TK_JIANG):
                        continue
                    if sp == SP_TWO_PAIRS and singles:
                        continue
                    cls = _class_of(tuple(sorted(ex_comps + sp_comps)))
                    if cls < 0:
                        continue
                    value = _SPLIT_HU_PLAIN[sp] * (2 if fat else 1) + singles
                    fewest[kind, ex, m, cls] = min(fewest[kind, ex, m, cls], singles)
                    if value > hu[kind, ex, m, cls]:
                        hu[kind, ex, m, cls] = value
                        split[kind, ex, m, cls] = sp
                        n_singles[kind, ex, m, cls] = singles
    possible = hu >= 0
    assert (n_singles[possible] == fewest[possible]).all(), "a best split has more singles than another"
    return hu, split, n_singles


TYPE_HU, TYPE_SPLIT, TYPE_SINGLES = _build_type_options()


def _build_zu_yuan() -> np.ndarray:
    """ZU_YUAN[u0 + 5 u1 + 25 u2 + 125 u3]: most 卒 圆s (3 or 4 different colours) that use
    exactly u_c 卒 of colour c; -1 when no such split exists."""
    sets = [s for k in (3, 4) for s in itertools.combinations(range(4), k)]
    best = np.full(625, -1, dtype=np.int64)
    best[0] = 0
    # increasing total order: every set adds >= 3 cards
    for code in range(625):
        u = [(code // 5**c) % 5 for c in range(4)]
        for s in sets:
            if all(u[c] >= 1 for c in s):
                prev = list(u)
                for c in s:
                    prev[c] -= 1
                prev_code = sum(prev[c] * 5**c for c in range(4))
                if best[prev_code] >= 0:
                    best[code] = max(best[code], best[prev_code] + 1)
    return best


ZU_YUAN = _build_zu_yuan()


def _build_zu_idle() -> np.ndarray:
    """ZU_IDLE[z0 + 5 z1 + 25 z2 + 125 z3]: fewest idle 卒 over all 卒-圆 choices."""
    out = np.zeros(625, dtype=np.int64)
    for code in range(625):
        z = [(code // 5**c) % 5 for c in range(4)]
        best = 99
        for u in itertools.product(*(range(zc + 1) for zc in z)):
            if ZU_YUAN[sum(u[c] * 5**c for c in range(4))] < 0:
                continue
            best = min(best, sum(1 for c in range(4) if z[c] - u[c] == 1))
        out[code] = best
    return out


ZU_IDLE = _build_zu_idle()


def _build_triad_idle() -> np.ndarray:
    """TRIAD_IDLE[has_jiang, n0, n1, n2]: fewest idle cards of a triad (将士相 or 车马炮 of one
    colour) over the number of its 圆s; type 0 is a 将 (never idle) when has_jiang."""
    out = np.zeros((2, 5, 5, 5), dtype=np.int64)
    for has_jiang in (0, 1):
        for n in itertools.product(range(5), repeat=3):
            best = 99
            for t in range(min(n) + 1):
                idle = sum(1 for i in range(3) if n[i] - t == 1 and not (has_jiang and i == 0))
                best = min(best, idle)
            out[(has_jiang,) + n] = best
    return out


TRIAD_IDLE = _build_triad_idle()

# ---- parts as codes, for searching discards (greedy's): part p has the members
# PART_MEMBERS[p, :PART_SIZE[p]] (a triad's three types in rank order, or the four 卒), its code
# is sum(count of member i * 5**i), and PART_KIND[p] picks its row of the tables below
# (KIND_CMP 车马炮 triad, KIND_JSX 将士相 triad, KIND_ZU the 卒).
KIND_CMP = 0
KIND_JSX = 1
KIND_ZU = 2
N_PART_CODES = (N_COPIES + 1) ** N_COLOURS  # 625: codes of the largest part (the 4 卒)
NO_DISCARD = 1 << 30  # PART_DISCARD_DELTA of a part holding no card that may be discarded
_PAD = [-1] * (N_COLOURS - TRIAD_SIZE)
PART_MEMBERS = np.array([[c * N_RANKS + JIANG + i for i in range(TRIAD_SIZE)] + _PAD for c in range(N_COLOURS)]
                        + [[c * N_RANKS + CHE + i for i in range(TRIAD_SIZE)] + _PAD for c in range(N_COLOURS)]
                        + [[c * N_RANKS + ZU for c in range(N_COLOURS)]], dtype=np.int64)
PART_SIZE = np.array([TRIAD_SIZE] * (2 * N_COLOURS) + [N_COLOURS], dtype=np.int64)
PART_KIND = np.array([KIND_JSX] * N_COLOURS + [KIND_CMP] * N_COLOURS + [KIND_ZU], dtype=np.int64)
MEMBER_INDEX_OF_TYPE = np.array([int(np.nonzero(PART_MEMBERS[PART_OF_TYPE[t]] == t)[0][0]) for t in range(N_TYPES)],
                                dtype=np.int64)


def _part_counts(kind: int, code: int) -> list[int]:
    return [(code // 5**i) % 5 for i in range(4 if kind == KIND_ZU else 3)]


def _part_idle_of(kind: int, counts: list[int]) -> int:
    if kind == KIND_ZU:
        return int(ZU_IDLE[sum(counts[c] * 5**c for c in range(4))])
    return int(TRIAD_IDLE[(int(kind == KIND_JSX), *counts)])


def _build_part_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """PART_IDLE_BY_CODE[kind, code]: the part's fewest idle cards (TRIAD_IDLE / ZU_IDLE);
    PART_REMOVE_DELTA[kind, code, i]: its change when one card of member i leaves (NO_DISCARD
    if the member has none, or is a 将: never discarded); PART_DISCARD_DELTA[kind, code]: the
    least of these.  Codes a part cannot have (a triad's >= 125) stay NO_DISCARD / 0."""
    idle = np.zeros((3, N_PART_CODES), dtype=np.int64)
    remove = np.full((3, N_PART_CODES, 4), NO_DISCARD, dtype=np.int64)
    for kind in (KIND_CMP, KIND_JSX, KIND_ZU):
        size = 4 if kind == KIND_ZU else 3
        for code in range(5**size):
            counts = _part_counts(kind, code)
            idle[kind, code] = _part_idle_of(kind, counts)
            for i in range(size):
                if counts[i] == 0 or (kind == KIND_JSX and i == 0):
                    continue
                less = list(counts)
                less[i] -= 1
                remove[kind, code, i] = _part_idle_of(kind, less) - idle[kind, code]
    return idle, remove, remove.min(axis=2)


PART_IDLE_BY_CODE, PART_REMOVE_DELTA, PART_DISCARD_DELTA = _build_part_tables()


def chariot_assignments(classes: tuple[int, ...], jiang_bonus: bool) -> tuple[int, list]:
    """Best disjoint 肥车/长车 over four colours whose components have the given classes.

    Returns ``(value, chariots)`` with chariots a list of ``(colours, n_out)``.  With
    ``jiang_bonus`` (rule ``jiang_in_chariot``, 将 chariots) a chariot with >= 1 出 gains 2 per
    pair component in it.  Plain Python: used to build tables and to explain results.
    """
    pools = []
    for cls in classes:
        pools.append({CL_NONE: [], CL_PAIR: [0], CL_OUT: [1], CL_TWO_PAIRS: [0, 0]}[cls])

    def search(pools: list[list[int]]) -> tuple[int, list]:
        best: tuple[int, list] = (0, [])
        have = [c for c in range(4) if pools[c]]
        for size in (3, 4):
            for colours in itertools.combinations(have, size):
                rest = [list(p) for p in pools]
                outs = 0
                for c in colours:
                    # take the 出 component if there is one (classes never mix 出 and pairs)
                    comp = max(rest[c])
                    rest[c].remove(comp)
                    outs += comp
                value = (FAT_CHARIOT_VALUE if size == 3 else LONG_CHARIOT_VALUE)[outs]
                if jiang_bonus and outs >= 1:
                    value += 2 * (size - outs)
                sub_value, sub = search(rest)
                if value + sub_value > best[0]:
                    best = (int(value + sub_value), [(colours, outs)] + sub)
        return best

    return search(pools)


def _build_chariot_table() -> np.ndarray:
    """CHARIOT_TABLE[jiang_bonus, sum(class_c << 2c)]: best 肥车/长车 value of one rank."""
    table = np.zeros((2, 256), dtype=np.int64)
    for bonus in (0, 1):
        for code in range(256):
            classes = tuple((code >> (2 * c)) & 3 for c in range(4))
            table[bonus, code] = chariot_assignments(classes, bool(bonus))[0]
    return table


CHARIOT_TABLE = _build_chariot_table()
