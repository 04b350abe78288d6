"""Naive reference ("oracle") hand evaluator for 四色牌, written straight from the rules (docs/rules.md).

This file is deliberately slow and simple. It shares no code with simkit and
is used in tests to check the fast evaluator on random holdings. Only the
Python standard library is used.

Method (docs/rules.md §2-§4, §6, §8):

1. List every way to split the concealed cards into groups (圆, single 将, pair,
   子, 闹), always taking a group that contains the lowest remaining type
   (memoised on the remaining counts). Each complete decomposition is kept as
   a *signature*: its concealed components, each as (type, is_out), and its
   number of single 将. Only the best hu of the other concealed groups (圆,
   子, 闹; pairs are 0) is kept for each signature. This loses nothing:
   chariots, 清, 天地 and the patterns look only at a component's type and
   whether it is an 出 (k >= 3), and the singles score only through their
   number (§8 single_jiang_cap counts them together with the table 将). A 子
   and a 闹 differ only in their own group hu, and that is already in the
   stored total.
2. For each signature, add the fixed exposed components (碰, 楼, and the 占
   pairs only under §8 zhan_in_chariot: by default a 占 pair is no component),
   and score the single 将: concealed singles + table 将, at most
   single_jiang_cap of them when the cap is not 0. Then
   enumerate every set of disjoint chariots, keep the best, and add 清, 天地 and
   the 步 bonus. Chariots fall into independent *families* whose type sets do
   not overlap, so no two chariots from different families can share a
   component:
       family "JSX": every 将/士/相 (素车 将士相 of each colour, 肥车/长车 of 将),
       family "CMP" of colour c: 车/马/炮 of colour c (素车 车马炮),
       family "Z":   every 卒 (肥车/长车 of 卒).
   So the best set of disjoint chariots is the sum of the best per family.
   Each family is solved by brute force and cached.
3. hu is the maximum over signatures. The patterns are the union over
   signatures. min_idle comes from a separate, even simpler recursion in which
   a non-将 card may be left idle.
"""

from __future__ import annotations

import functools
import math
import itertools
from typing import Mapping, Sequence

# ---------------------------------------------------------------- cards (§1)

COLOURS = "YRWG"  # 黄 红 白 绿
RANKS = "JSXCMPZ"  # 将 士 相 车 马 炮 卒
COLOURS_ZH = "黄红白绿"
RANKS_ZH = "将士相车马炮卒"
J, S, X, C, M, P, Z = range(7)
FAT_RANKS = frozenset({J, C, Z})  # "fat (肥)" column of §1
QING_RANKS = (S, X, C, M, P)  # §3 清: "one rank among 士相车马炮"

# Type index colour*7 + rank (§1).
TYPE_NAMES: list[str] = [c + r for c in COLOURS for r in RANKS]
NUM_TYPES = 28


def tix(colour: int, rank: int) -> int:
    """Type index of (colour, rank), §1: colour*7 + rank."""
    return colour * 7 + rank


def colour_of(t: int) -> int:
    return t // 7


def rank_of(t: int) -> int:
    return t % 7


def is_fat(t: int) -> bool:
    return rank_of(t) in FAT_RANKS


def parse_cards(text: str) -> list[int]:
    """'RJ*3 RS YZ' (or '红将*3 红士 黄卒') -> list of 28 counts."""
    counts = [0] * NUM_TYPES
    for token in text.split():
        name, _, times = token.partition("*")
        n = int(times) if times else 1
        if len(name) != 2:
            raise ValueError(f"bad card {token!r}")
        a, b = name[0], name[1]
        if a in COLOURS and b in RANKS:
            t = tix(COLOURS.index(a), RANKS.index(b))
        elif a in COLOURS_ZH and b in RANKS_ZH:
            t = tix(COLOURS_ZH.index(a), RANKS_ZH.index(b))
        else:
            raise ValueError(f"bad card {token!r}")
        counts[t] += n
    return counts


# ---------------------------------------------------------- groups (§2)

def _yuan_shapes() -> list[tuple[int, ...]]:
    """Every 圆 set (§2): same-colour 将士相; same-colour 车马炮; 卒 of 3 or 4
    different colours. Each shape is a tuple of distinct type indices."""
    shapes = []
    for c in range(4):
        shapes.append((tix(c, J), tix(c, S), tix(c, X)))
        shapes.append((tix(c, C), tix(c, M), tix(c, P)))
    for n in (3, 4):
        for cols in itertools.combinations(range(4), n):
            shapes.append(tuple(tix(c, Z) for c in cols))
    return shapes


YUAN_SHAPES = _yuan_shapes()


def zi_hu(t: int) -> int:
    """子 (3 identical, concealed): plain 3, fat 6."""
    return 6 if is_fat(t) else 3


def nao_hu(t: int) -> int:
    """闹 (4 identical, concealed): plain 9, fat 18."""
    return 18 if is_fat(t) else 9


def _groups_containing(t: int, counts: tuple[int, ...]):
    """Yield (kind, hu, component or None, {type: copies taken}) for every
    concealed group that contains type t and fits in counts (§2 table).

    component is (t, is_out) for a pair (False) / 子 or 闹 (True), else None.
    """
    n = counts[t]
    if rank_of(t) == J and n >= 1:
        yield "single", 1, None, {t: 1}  # single 将: 1 hu
    if n >= 2:
        yield "pair", 0, (t, False), {t: 2}  # 对 pair: 0 hu
    if n >= 3:
        yield "zi", zi_hu(t), (t, True), {t: 3}  # 子
    if n >= 4:
        yield "nao", nao_hu(t), (t, True), {t: 4}  # 闹
    for shape in YUAN_SHAPES:  # 圆: 1 hu
        if t in shape and all(counts[u] >= 1 for u in shape):
            yield "yuan", 1, None, {u: 1 for u in shape}


def _take(counts: tuple[int, ...], taken: dict[int, int]) -> tuple[int, ...]:
    lst = list(counts)
    for u, k in taken.items():
        lst[u] -= k
    return tuple(lst)


def concealed_signatures(counts: Sequence[int]) -> dict[tuple, int]:
    """All complete decompositions of the concealed cards (no idle card).

    Returns {(components, n_singles): best hu of the groups other than single
    将}, where components is the tuple of concealed components (type, is_out)
    and n_singles the number of single 将. The dict is empty if and only if the
    concealed cards are incomplete.
    """
    memo: dict[tuple[int, ...], dict[tuple, int]] = {}

    def rec(cnt: tuple[int, ...]) -> dict[tuple, int]:
        if cnt in memo:
            return memo[cnt]
        t = next((u for u in range(NUM_TYPES) if cnt[u]), None)
        if t is None:
            return {((), 0): 0}  # nothing left: one (empty) way
        out: dict[tuple, int] = {}
        # Every copy of the lowest remaining type t is in exactly one group.
        # So some group contains one copy of t. Try each such group and recurse.
        for kind, hu, comp, taken in _groups_containing(t, cnt):
            for (sig, n_singles), base in rec(_take(cnt, taken)).items():
                # (Signatures are only used as dict keys to merge equal
                # decompositions; a non-canonical order would cost time, not
                # correctness.)
                new_sig = (comp,) + sig if comp is not None else sig
                if kind == "single":
                    key, value = (new_sig, n_singles + 1), base  # scored later, by number
                else:
                    key, value = (new_sig, n_singles), base + hu
                if value > out.get(key, -1):
                    out[key] = value
        memo[cnt] = out
        return out

    return rec(tuple(counts))


def naive_min_idle(counts: Sequence[int]) -> int:
    """Fewest idle cards over all decompositions that may leave idle cards.
    A 将 is never idle (§2): it can always be a single 将."""
    memo: dict[tuple[int, ...], int] = {}

    def rec(cnt: tuple[int, ...]) -> int:
        if cnt in memo:
            return memo[cnt]
        t = next((u for u in range(NUM_TYPES) if cnt[u]), None)
        if t is None:
            return 0
        best = 10**9
        # The lowest remaining card either sits in a group ...
        for _kind, _hu, _comp, taken in _groups_containing(t, cnt):
            best = min(best, rec(_take(cnt, taken)))
        # ... or is idle (never a 将).
        if rank_of(t) != J:
            best = min(best, 1 + rec(_take(cnt, {t: 1})))
        memo[cnt] = best
        return best

    return rec(tuple(counts))


# ------------------------------------------------------- chariots (§3)

PLAIN_VALUE = (10, 20, 30, 40)  # 素车 by 出 count 0..3
FAT_VALUE = (20, 40, 60, 100)  # 肥车 by 出 count 0..3
LONG_VALUE = (40, 80, 120, 160, 200)  # 长车 by 出 count 0..4


def family_of(t: int) -> str:
    """Chariot family of a type (see the module docstring)."""
    r = rank_of(t)
    if r in (J, S, X):
        return "JSX"
    if r in (C, M, P):
        return "CMP" + COLOURS[colour_of(t)]
    return "Z"


def _chariot_candidates(comps: tuple[tuple[int, bool], ...]):
    """Every single chariot formable from comps (component list (type, is_out)).
    Yields (kind, tuple of component indices). A chariot takes exactly one
    component for each type it covers (§3)."""
    by_type: dict[int, list[int]] = {}
    for i, (t, _out) in enumerate(comps):
        by_type.setdefault(t, []).append(i)

    def choices(types):
        # one component of each type (nothing if some type has no component)
        if not all(u in by_type for u in types):
            return ()
        return itertools.product(*(by_type[u] for u in types))

    for c in range(4):
        # 素车: 3 components of one colour covering 将,士,相 or 车,马,炮.
        for triad in ((J, S, X), (C, M, P)):
            for pick in choices([tix(c, r) for r in triad]):
                yield "plain", pick
    for r in (J, Z):
        # 肥车: 3 components of 将 (or 卒) in 3 different colours.
        for cols in itertools.combinations(range(4), 3):
            for pick in choices([tix(c, r) for c in cols]):
                yield "fat", pick
        # 长车: 4 components of 将 (or 卒), one in each colour.
        for pick in choices([tix(c, r) for c in range(4)]):
            yield "long", pick


def _chariot_value(kind: str, pick, comps, jiang_in_chariot: bool) -> int:
    outs = sum(1 for i in pick if comps[i][1])
    value = {"plain": PLAIN_VALUE, "fat": FAT_VALUE, "long": LONG_VALUE}[kind][outs]
    if jiang_in_chariot and outs >= 1:
        # §8 jiang_in_chariot: once a chariot holding 将 has >= 1 出, each 将 in
        # its pair components scores 1 (a pair = 2 将 = 2 hu).
        value += sum(2 for i in pick if rank_of(comps[i][0]) == J and not comps[i][1])
    return value


@functools.lru_cache(maxsize=1 << 16)
def family_chariots(comps: tuple[tuple[int, bool], ...], jiang_in_chariot: bool):
    """For the components of one family, return
    (best total value of a set of disjoint chariots,
     max 出 of a single formable 素车, 肥车, 长车 (-1 if none formable))."""
    cands = []
    max_out = {"plain": -1, "fat": -1, "long": -1}
    for kind, pick in _chariot_candidates(comps):
        mask = 0
        for i in pick:
            mask |= 1 << i
        cands.append((mask, _chariot_value(kind, pick, comps, jiang_in_chariot)))
        outs = sum(1 for i in pick if comps[i][1])
        max_out[kind] = max(max_out[kind], outs)

    # Best set of pairwise disjoint chariots (a component belongs to at most
    # one chariot). Look at the lowest still-available component: either it is
    # in no chosen chariot, or it is in exactly one chosen chariot, which
    # must use only available components.
    @functools.lru_cache(maxsize=None)
    def best(avail: int) -> int:
        if avail == 0:
            return 0
        low = avail & -avail
        result = best(avail & ~low)  # lowest component in no chariot
        for mask, value in cands:
            if mask & low and mask & avail == mask:
                result = max(result, value + best(avail & ~mask))
        return result

    return best((1 << len(comps)) - 1), max_out["plain"], max_out["fat"], max_out["long"]


# --------------------------------------------------------- evaluation

FAMILY = [family_of(t) for t in range(NUM_TYPES)]
RANK_TYPES = {r: frozenset(tix(c, r) for c in range(4)) for r in range(7)}  # a rank, 4 colours
TIANDI_PAIRS = [(tix(c, J), tix(c, Z)) for c in range(4)]  # (将, 卒) of one colour

DEFAULT_RULES = {
    "lou_doubles": True,
    "hu_tolerance": 2,
    "jiang_in_chariot": False,
    "pattern_wins": True,
    "steps_count_lou": False,
    "zhan_in_chariot": False,  # §8: off = a 占 pair is never a chariot component
    "single_jiang_cap": 0,  # §8: at most this many single 将 score; 0 = no cap
}

PATTERN_NAMES = (
    # pattern wins (§6), U >= 1
    "two_lou",
    "plain_chariot_fat_lou",
    "fat_chariot_plain_lou",
    "fat_chariot_2_out",
    "long_chariot_1_out",
    "steps5_chariot_out",
    "steps5_qing3",
    "steps5_tiandi",
    "qing3_tiandi",
    "qing3_chariot_out",
    "chariot_out_tiandi",
    "plain_chariot_all_out",
    "qing4",
    "steps6",
    # 小甲 patterns (§6), U >= 5
    "plain_chariot_all_out_two_lou",
    "fat_chariot_out_two_lou",
    "long_chariot_2_out_lou",
    "steps6_long_chariot",
)
XIAOJIA_PATTERNS = frozenset(PATTERN_NAMES[14:])

EXPOSED_HU = {
    # §2 table; decision 1 (a table 将 is a single 将: scored with the concealed singles)
    "chow": lambda t: 1,
    "table": lambda t: 0,
    "zhan": lambda t: 0,
    "peng": lambda t: 2 if is_fat(t) else 1,
    "kong": lambda t: 12 if is_fat(t) else 6,
}


def _score_signature(sig, base, exposed_comps, exposed_hu, step_bonus, steps, lou,
                     has_fat_lou, has_plain_lou, jiang_in_chariot):
    """hu and pattern names of one complete decomposition (signature)."""
    comps = list(sig) + exposed_comps
    # chariots: best disjoint set = sum of per-family bests
    families: dict[str, list] = {}
    for comp in comps:
        families.setdefault(FAMILY[comp[0]], []).append(comp)
    chariot_total = 0
    plain_max = fat_max = long_max = -1
    for fam_comps in families.values():
        v, pm, fm, lm = family_chariots(tuple(sorted(fam_comps)), jiang_in_chariot)
        chariot_total += v
        plain_max, fat_max, long_max = max(plain_max, pm), max(fat_max, fm), max(long_max, lm)

    out_types = {t for t, is_out in comps if is_out}
    # 清: a rank among 士相车马炮 with an 出 in >= 3 colours; 三清 20, 四清 40;
    # each rank scores its own 清.
    qing = 0
    qing3 = qing4 = False
    for r in QING_RANKS:
        n_col = len(out_types.intersection(RANK_TYPES[r]))
        if n_col == 3:
            qing += 20
        elif n_col == 4:
            qing += 40
        qing3 |= n_col >= 3
        qing4 |= n_col == 4
    # 天地: a colour with an 出 of 将 and an 出 of 卒: 20 each colour.
    tiandi_cols = sum(1 for jt, zt in TIANDI_PAIRS if jt in out_types and zt in out_types)
    tiandi = tiandi_cols >= 1

    hu = base + exposed_hu + chariot_total + qing + 20 * tiandi_cols + step_bonus

    chariot_out = max(plain_max, fat_max, long_max) >= 1
    flags = {
        "two_lou": lou >= 2,
        "plain_chariot_fat_lou": plain_max >= 0 and has_fat_lou,
        "fat_chariot_plain_lou": fat_max >= 0 and has_plain_lou,
        "fat_chariot_2_out": fat_max >= 2,
        "long_chariot_1_out": long_max >= 1,
        "steps5_chariot_out": steps >= 5 and chariot_out,
        "steps5_qing3": steps >= 5 and qing3,
        "steps5_tiandi": steps >= 5 and tiandi,
        "qing3_tiandi": qing3 and tiandi,
        "qing3_chariot_out": qing3 and chariot_out,
        "chariot_out_tiandi": chariot_out and tiandi,
        "plain_chariot_all_out": plain_max >= 3,
        "qing4": qing4,
        "steps6": steps >= 6,
        "plain_chariot_all_out_two_lou": plain_max >= 3 and lou >= 2,
        "fat_chariot_out_two_lou": fat_max >= 1 and lou >= 2,
        "long_chariot_2_out_lou": long_max >= 2 and lou >= 1,
        "steps6_long_chariot": steps >= 6 and long_max >= 0,
    }
    return hu, {name for name, ok in flags.items() if ok}


def naive_evaluate(concealed: Sequence[int],
                   exposed: Sequence[tuple[str, tuple[int, ...]]],
                   rules: Mapping[str, object] | None = None) -> dict:
    """Evaluate a holding (concealed counts + exposed groups) under rules."""
    opts = dict(DEFAULT_RULES)
    if rules:
        opts.update({k: rules[k] for k in DEFAULT_RULES if k in rules})
    concealed = tuple(int(n) for n in concealed)
    assert len(concealed) == NUM_TYPES

    # exposed groups are fixed (decision 1)
    exposed_hu = 0
    exposed_comps: list[tuple[int, bool]] = []
    n_peng = n_kong = n_table = 0
    has_fat_lou = has_plain_lou = False
    for kind, types in exposed:
        t = types[0]
        exposed_hu += EXPOSED_HU[kind](t)
        if kind == "table":
            n_table += 1
        elif kind == "zhan":
            # §2: a 占 pair is a component only under zhan_in_chariot
            if opts["zhan_in_chariot"]:
                exposed_comps.append((t, False))
        elif kind == "peng":
            exposed_comps.append((t, True))
            n_peng += 1
        elif kind == "kong":
            exposed_comps.append((t, True))
            n_kong += 1
            if is_fat(t):
                has_fat_lou = True
            else:
                has_plain_lou = True
    lou = n_kong
    steps = n_peng + (n_kong if opts["steps_count_lou"] else 0)
    step_bonus = 20 * (steps - 4) if steps >= 5 else 0

    min_idle = naive_min_idle(concealed)
    sigs = concealed_signatures(concealed)
    complete = bool(sigs)
    assert complete == (min_idle == 0)

    if not complete:
        return {"complete": False, "hu": None, "lou": lou, "steps": steps, "units": 0,
                "wins": False, "patterns": frozenset(), "min_idle": min_idle}

    cap = int(opts["single_jiang_cap"])
    best_hu = -1
    patterns: set[str] = set()
    for (sig, n_singles), base in sigs.items():
        # §8 single_jiang_cap: single 将 (concealed and on the table) score 1 each,
        # at most cap of them (0 = no cap)
        singles = n_singles + n_table
        singles_hu = min(singles, cap) if cap else singles
        hu, pats = _score_signature(sig, base + singles_hu, exposed_comps, exposed_hu, step_bonus,
                                    steps, lou, has_fat_lou, has_plain_lou,
                                    bool(opts["jiang_in_chariot"]))
        best_hu = max(best_hu, hu)
        patterns |= pats

    # §6 formula, §8 lou_doubles / hu_tolerance
    tol = int(opts["hu_tolerance"])
    if opts["lou_doubles"]:
        units = (best_hu + tol) * 2**lou // 50
    else:
        units = (best_hu + tol) // 50
    if opts["pattern_wins"]:
        if patterns & XIAOJIA_PATTERNS:
            units = max(units, 5)
        if patterns:
            units = max(units, 1)
    return {"complete": True, "hu": best_hu, "lou": lou, "steps": steps, "units": units,
            "wins": units >= 1, "patterns": frozenset(patterns), "min_idle": 0}


# ---- learned policy: the afterstate features, from the Observation (simkit.policies.learned)

_MELD_USES = {"peng": lambda t: [t, t], "kong": lambda t: [t, t, t], "zhan": lambda t: [t]}


def _chow_uses(action: int, t: int) -> list[int]:
    """The concealed types a 吃 of the active card t uses (rules.md §5: a 圆 of the colour, or 卒 of
    the other colours)."""
    from simkit.engine.layout import A_CHOW_TRIAD, A_CHOW_ZU, A_CHOW_ZU4

    colour, rank = colour_of(t), rank_of(t)
    if action == A_CHOW_TRIAD:
        first = 0 if rank < 3 else 3  # 将士相 or 车马炮
        return [tix(colour, r) for r in range(first, first + 3) if r != rank]
    if action == A_CHOW_ZU4:
        return [tix(c, 6) for c in range(4) if c != colour]
    left_out = action - A_CHOW_ZU
    return [tix(c, 6) for c in range(4) if c not in (colour, left_out)]


def naive_learned_features(observation, action: int, expert_scores: Sequence[float], expert_choice: int) -> dict:
    """The afterstate features of ``action`` as a dict {region name: list of raw values}, from
    an :class:`~simkit.engine.env.Observation`, written from their definitions (the module
    docstring of simkit.policies.learned) and not from the kernel; ``expert_scores`` /
    ``expert_choice``: expert's scores and choice on this observation (the kernel's, whose
    argmax the tests check separately)."""
    from simkit.engine.layout import A_KONG, A_PASS, A_PENG, A_ZHAN, E_DISCARD

    me = observation.seat
    nxt, other = (me + 1) % 3, (me + 2) % 3
    conc = [int(c) for c in observation.concealed]
    own_exp = [int(c) for c in observation.exposed_cards[me]]
    own_out = [int(observation.exposed[me, 1, t] + observation.exposed[me, 2, t] > 0) for t in range(28)]
    lock = [int(v != 0) for v in observation.pass_locks[me]]
    n_chow = int(observation.n_chow[me])
    active = observation.active_card if observation.phase != "discard" else -1
    unseen = []
    for t in range(28):
        seen = conc[t] + int(observation.dead[t]) + int(observation.exposed_cards[:, t].sum()) + (t == active)
        unseen.append(max(0, 4 - seen))
    discards = {nxt: [0] * 28, other: [0] * 28}
    for kind, player, t, _ in observation.history:
        if kind == E_DISCARD and int(player) in discards:
            discards[int(player)][int(t)] += 1
    kind_names = ("discard", "pass", "peng", "kong", "zhan", "chow")
    if action < 28:
        t, kind = action, "discard"
        conc[t] -= 1
    else:
        t = observation.active_card
        if action == A_PASS:
            kind = "pass"
            lock[t] = 1
        else:
            kind = {A_PENG: "peng", A_KONG: "kong", A_ZHAN: "zhan"}.get(action, "chow")
            uses = _MELD_USES[kind](t) if kind in _MELD_USES else _chow_uses(action, t)
            for u in uses:
                conc[u] -= 1
                own_exp[u] += 1
            own_exp[t] += 1
            if kind in ("peng", "kong"):
                own_out[t] = 1
            if kind == "chow":
                n_chow += 1

    def out_bits(q: int) -> list[int]:
        return [int(observation.exposed[q, 1, x] + observation.exposed[q, 2, x] > 0) for x in range(28)]

    score = list(expert_scores)
    if action == expert_choice:
        gap = 0
    else:
        raw = score[expert_choice] - score[action]
        gap = 255 if not math.isfinite(raw) or raw >= 510 else (0 if raw <= 0 else int(raw / 2 + 0.5))
    return {
        "F_LEVEL": [int(conc[x] >= k + 1) for x in range(28) for k in range(4)],
        "F_OWN_OUT": own_out, "F_OWN_EXP": own_exp, "F_LOCK": lock, "F_UNSEEN": unseen,
        "F_NEXT_OUT": out_bits(nxt), "F_OTHER_OUT": out_bits(other),
        "F_NEXT_EXP": [int(v) for v in observation.exposed_cards[nxt]],
        "F_OTHER_EXP": [int(v) for v in observation.exposed_cards[other]],
        "F_NEXT_DISC": discards[nxt], "F_OTHER_DISC": discards[other],
        "F_ACT_TYPE": [int(x == t) for x in range(28)],
        "F_KIND": [int(k == kind) for k in kind_names],
        "F_STOCK": [observation.stock_left],
        "F_NCONC_NEXT": [int(observation.n_concealed[nxt])], "F_NCONC_OTHER": [int(observation.n_concealed[other])],
        "F_XG_NEXT": [int(observation.xianggong[nxt] != 0)], "F_XG_OTHER": [int(observation.xianggong[other] != 0)],
        "F_DEALER_ME": [int(observation.dealer == me)], "F_DEALER_NEXT": [int(observation.dealer == nxt)],
        "F_NCHOW": [n_chow], "F_NOWIN": [int(observation.cannot_win[me] != 0)],
        "F_FROM_DRAW": [int(active >= 0 and observation.active_source == "draw")],
        "F_IDLE": [naive_min_idle(conc)],
        "F_EXPERT": [int(action == expert_choice)],
        "F_X_UNSEEN": [unseen[t]], "F_X_NEXT_DISC": [discards[nxt][t]], "F_X_OTHER_DISC": [discards[other][t]],
        "F_X_NEXT_OUT": [out_bits(nxt)[t]], "F_X_OTHER_OUT": [out_bits(other)[t]],
        "F_GAP": [gap],
    }



def naive_belief_weight(position, hidden, policy_ids, params, rules_array, noise: float, root, chain: int):
    """The belief's log likelihood of the hidden cards of ``hidden`` (a full engine state at the
    position) and the state its replay reaches, written plainly (simkit.runner.belief's twin):

    * each seat's dealt hand: its concealed cards now, plus every card it discarded, plus the
      cards of its exposed groups less the card each claim took (a table 将 came from the stock);
    * the deck: the dealt hands in dealing order, then the drawn cards in the history's order,
      then the hidden stock;
    * the replay searches: at each decision it tries *every* legal action on a copy, keeps those
      whose new history rows continue the position's history and whose new group (if any) is the
      seat's next group in the position, and follows each until one reaches the position (no
      reading of row kinds; a pass is whatever explains the rest);
    * another seat's decision with a choice multiplies the likelihood by
      (1 - noise) [its policy chose the action] + noise / (legal actions), the policy drawing
      from the chain's seat streams.

    Returns (log weight, state), or (-inf, None) when nothing explains the history."""
    import sys

    import numpy as np

    from simkit.cards import N_CARDS, N_COPIES, N_TYPES
    from simkit.engine import kernel as E
    from simkit.engine import layout as L
    from simkit.policies.builtin import POLICY_WORK_SIZE
    from simkit.policies.dispatch import builtin_act_state
    from simkit.rng import belief_seat_stream, stream_state

    me, dealer = position.seat, position.dealer
    history = [tuple(row) for row in position.history]
    dealt = [[int(x) for x in hidden[L.S_CONC + N_TYPES * q : L.S_CONC + N_TYPES * (q + 1)]] for q in range(3)]
    for kind, q, t, _ in history:
        if kind == L.E_DISCARD:
            dealt[q][t] += 1
    for q in range(3):
        taken = [row[2] for row in history if row[0] == L.E_CLAIM and row[1] == q]
        for group in position.exposed[q]:
            t0 = group.types[0]
            cards = {"chow": list(group.types), "peng": [t0] * 3, "kong": [t0] * 4, "zhan": [t0] * 2,
                     "table": []}[group.kind]
            if group.kind != "table":
                cards.remove(taken.pop(0))
            for t in cards:
                dealt[q][t] += 1
    deck = []
    for k in range(3):
        q = (dealer + k) % 3
        deck += [t for t in range(N_TYPES) for _ in range(dealt[q][t])]
    deck += [t for kind, _, t, _ in history if kind == L.E_DRAW]
    deck += [int(hidden[L.S_DECK + i]) // N_COPIES for i in range(N_CARDS - position.stock, N_CARDS)]
    if len(deck) != N_CARDS or any(deck.count(t) > N_COPIES for t in range(N_TYPES)):
        return -math.inf, None
    copies = [0] * N_TYPES
    ids = []
    for t in deck:
        ids.append(t * N_COPIES + copies[t])
        copies[t] += 1
    groups = {q: [(L.MELD_KIND_NAMES.index(g.kind), tuple(g.types)) for g in position.exposed[q]] for q in range(3)}
    work = E.new_engine_workspace()
    ev = np.zeros((0, L.EVENT_WIDTH), dtype=np.int64)
    ev_n = np.zeros(1, dtype=np.int64)
    obs = np.zeros(L.N_OBS, dtype=np.int64)
    E.new_deal_observation(obs)
    pwork = np.zeros(POLICY_WORK_SIZE, dtype=np.int64)
    rngs = np.zeros((3, 4), dtype=np.uint64)
    for q in range(3):
        stream_state(root, chain, belief_seat_stream(q), rngs[q])
    s = np.zeros(L.N_STATE, dtype=np.int64)
    mask = np.zeros(L.N_ACTIONS, dtype=np.bool_)
    E.start(s, np.array(ids, dtype=np.int64), dealer, rules_array, mask, work, ev, ev_n)
    phase = L.PH_CLAIM if position.decision == "claim" else L.PH_DISCARD
    card = position.card if position.decision == "claim" else -1

    def follow(s, rngs, logw):
        n_rows, q = int(s[L.S_NHIST]), int(s[L.S_PLAYER])
        if s[L.S_PHASE] == L.PH_OVER:
            return None
        if (n_rows == len(history) and q == me and s[L.S_PHASE] == phase and s[L.S_ACTIVE] == card
                and (phase == L.PH_DISCARD or ("peng", "chow", "chow_next")[int(s[L.S_STAGE])] == position.stage)):
            return logw, s
        mask = np.zeros(L.N_ACTIONS, dtype=np.bool_)
        n = E.legal_mask(s, rules_array, mask, work)
        choice = None
        if q != me and n >= 2:
            choice = builtin_act_state(policy_ids[q], s, obs, mask, params[q], rngs[q], rules_array, pwork)
        for a in (int(x) for x in np.flatnonzero(mask)):
            trial, trial_mask = s.copy(), mask.copy()
            E.apply_legal(trial, a, rules_array, trial_mask, work, ev, ev_n)
            rows = [tuple(int(x) for x in trial[L.S_HIST + L.HIST_WIDTH * h : L.S_HIST + L.HIST_WIDTH * (h + 1)])
                    for h in range(n_rows, int(trial[L.S_NHIST]))]
            if history[n_rows : n_rows + len(rows)] != rows or n_rows + len(rows) > len(history):
                continue
            laid = L.state_melds(trial, q)
            if len(laid) > int(s[L.S_NMELDS + q]) and (len(laid) > len(groups[q]) or laid[-1] != groups[q][len(laid) - 1]):
                continue
            weight = logw
            if choice is not None:
                weight += math.log(noise / n + (1.0 - noise) * (1.0 if choice == a else 0.0)) \
                    if noise > 0 or choice == a else -math.inf
            if weight == -math.inf:
                continue
            found = follow(trial, rngs.copy(), weight)
            if found is not None:
                return found
        return None

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 5000))
    try:
        found = follow(s, rngs, 0.0)
    finally:
        sys.setrecursionlimit(limit)
    return found if found is not None else (-math.inf, None)


def _naive_solve(matrix: list[list[float]], vector: list[float]) -> list[float]:
    """x with matrix x = vector, Gauss-Jordan elimination with partial pivoting (full rank)."""
    size = len(vector)
    rows = [list(matrix[i]) + [vector[i]] for i in range(size)]
    for col in range(size):
        pivot = max(range(col, size), key=lambda r: abs(rows[r][col]))
        rows[col], rows[pivot] = rows[pivot], rows[col]
        for r in range(size):
            if r != col:
                factor = rows[r][col] / rows[col][col]
                rows[r] = [a - factor * b for a, b in zip(rows[r], rows[col])]
    return [rows[i][size] / rows[i][i] for i in range(size)]


def naive_cross_fitted_adjustment(outcomes: Sequence[float], features: Sequence[Sequence[float]],
                                  reference: Sequence[Sequence[float]], unit_ids: Sequence[int],
                                  folds: int) -> tuple[list[float], float, float]:
    """The cross-fitted regression adjustment (simkit.analysis.regression), straight from its
    definition: for each fold k (unit i in fold unit_ids[i] % folds), the least-squares slope
    of the outcome on the features with an intercept, from the normal equations over the units
    of the other folds; unit i's adjusted value is y_i - (x_i - m) . slope_fold(i), m the mean of
    the reference rows.  Returns (adjusted values, their mean, its standard error
    sqrt(var(adjusted) / n + bbar' S bbar / M), bbar the slopes averaged by the folds' units,
    S the reference rows' covariance, M their number).  Full-rank designs only."""
    n, p, m_rows = len(outcomes), len(features[0]), len(reference)
    fold_of = [u % folds for u in unit_ids]
    slopes = []
    for k in range(folds):
        train = [i for i in range(n) if fold_of[i] != k]
        mean_x = [sum(features[i][j] for i in train) / len(train) for j in range(p)]
        mean_y = sum(outcomes[i] for i in train) / len(train)
        gram = [[sum((features[i][a] - mean_x[a]) * (features[i][b] - mean_x[b]) for i in train) for b in range(p)]
                for a in range(p)]
        cross = [sum((features[i][a] - mean_x[a]) * (outcomes[i] - mean_y) for i in train) for a in range(p)]
        slopes.append(_naive_solve(gram, cross))
    centre = [sum(row[j] for row in reference) / m_rows for j in range(p)]
    adjusted = [outcomes[i] - sum((features[i][j] - centre[j]) * slopes[fold_of[i]][j] for j in range(p))
                for i in range(n)]
    mean = sum(adjusted) / n
    variance = sum((a - mean) ** 2 for a in adjusted) / (n - 1)
    average = [sum(slopes[fold_of[i]][j] for i in range(n)) / n for j in range(p)]
    covariance = [[sum((row[a] - centre[a]) * (row[b] - centre[b]) for row in reference) / (m_rows - 1)
                   for b in range(p)] for a in range(p)]
    reference_variance = sum(average[a] * covariance[a][b] * average[b] for a in range(p) for b in range(p)) / m_rows
    return adjusted, mean, math.sqrt(variance / n + reference_variance)


def naive_network_value(net: Sequence[float], x: Sequence[float]) -> float:
    """The value of a network block (simkit.policies.network, both simkit networks: ``learned``'s
    and the luck value model's) for inputs ``x``, straight from the format's definition, one
    number at a time: z = (x - mean) / scale when the inputs are standardised, else x; each
    hidden layer relu(b + sum_i a_i W[i]) of the layer below; the value b + sum_k a_k w_k over the
    last hidden layer; 0 for a block of no hidden layer."""
    from simkit.policies.network import NET_HEADER, NET_INPUTS, NET_LAYERS, NET_STANDARDISED, NET_WIDTHS

    net = [float(v) for v in net]
    n, layers = int(net[NET_INPUTS]), int(net[NET_LAYERS])
    if layers == 0:
        return 0.0
    at = NET_HEADER
    a = [float(v) for v in x]
    if net[NET_STANDARDISED] == 1.0:
        a = [(a[i] - net[at + i]) / net[at + n + i] for i in range(n)]
        at += 2 * n
    for layer in range(layers):
        below, width = len(a), int(net[NET_WIDTHS + layer])
        weights, biases = net[at : at + below * width], net[at + below * width : at + below * width + width]
        a = [max(0.0, biases[k] + sum(a[i] * weights[i * width + k] for i in range(below))) for k in range(width)]
        at += below * width + width
    return net[at + len(a)] + sum(a[k] * net[at + k] for k in range(len(a)))
