"""The naive oracle (tests/naive.py) against an even dumber evaluator on small random
holdings.  That evaluator enumerates decompositions as explicit group lists, with no memo
and no signature merging; it finds chariots as subsets of components and searches every
disjoint subset of chariots, with no family split.
"""

from __future__ import annotations

import itertools
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import naive  # noqa: E402
from naive import PATTERN_NAMES, TYPE_NAMES, XIAOJIA_PATTERNS  # noqa: E402,F401


FAT = {"J", "C", "Z"}


def T(name: str) -> int:
    return TYPE_NAMES.index(name)



def _rank(t):
    return TYPE_NAMES[t][1]


def _col(t):
    return TYPE_NAMES[t][0]


def _brute_yuan():
    out = []
    for c in "YRWG":
        out.append(tuple(T(c + r) for r in "JSX"))
        out.append(tuple(T(c + r) for r in "CMP"))
    for n in (3, 4):
        for cs in itertools.combinations("YRWG", n):
            out.append(tuple(T(c + "Z") for c in cs))
    return out


BRUTE_YUAN = _brute_yuan()


def brute_decompositions(counts):
    """Yield every decomposition as a list of (kind, type tuple)."""
    counts = list(counts)
    nz = [t for t in range(28) if counts[t]]
    if not nz:
        yield []
        return
    t = nz[0]
    options = []
    if _rank(t) == "J":
        options.append(("single", (t,), {t: 1}))
    for k, kind in ((2, "pair"), (3, "zi"), (4, "nao")):
        if counts[t] >= k:
            options.append((kind, (t,), {t: k}))
    for y in BRUTE_YUAN:
        if t in y and all(counts[u] for u in y):
            options.append(("yuan", y, {u: 1 for u in y}))
    for kind, types, take in options:
        rest = counts[:]
        for u, k in take.items():
            rest[u] -= k
        for d in brute_decompositions(rest):
            yield [(kind, types)] + d


def _chariot_kind(comps):
    """comps: list of (type, k). Return chariot kind or None (§3)."""
    types = [t for t, _ in comps]
    if len(set(types)) != len(types):
        return None
    ranks = {_rank(t) for t in types}
    cols = {_col(t) for t in types}
    if len(comps) == 3 and len(cols) == 1 and ranks in ({"J", "S", "X"}, {"C", "M", "P"}):
        return "plain"
    if len(ranks) == 1 and ranks <= {"J", "Z"} and len(cols) == len(comps):
        return {3: "fat", 4: "long"}.get(len(comps))
    return None


def brute_evaluate(concealed, exposed, rules):
    lou_doubles = rules.get("lou_doubles", True)
    tol = rules.get("hu_tolerance", 2)
    jic = rules.get("jiang_in_chariot", False)
    pw = rules.get("pattern_wins", True)
    scl = rules.get("steps_count_lou", False)
    zic = rules.get("zhan_in_chariot", False)
    cap = rules.get("single_jiang_cap", 0)
    L = sum(1 for k, _ in exposed if k == "kong")
    s = sum(1 for k, _ in exposed if k == "peng") + (L if scl else 0)
    fat_lou = any(k == "kong" and _rank(ts[0]) in FAT for k, ts in exposed)
    plain_lou = any(k == "kong" and _rank(ts[0]) not in FAT for k, ts in exposed)
    best, pats = None, set()
    for d in brute_decompositions(concealed):
        hu = 0
        comps = []
        singles = 0  # single 将: concealed singles and table 将
        for kind, ts in d:
            fat = _rank(ts[0]) in FAT
            hu += {"single": 0, "yuan": 1, "pair": 0, "zi": 6 if fat else 3,
                   "nao": 18 if fat else 9}[kind]
            singles += kind == "single"
            if kind in ("pair", "zi", "nao"):
                comps.append((ts[0], {"pair": 2, "zi": 3, "nao": 4}[kind]))
        for kind, ts in exposed:
            fat = _rank(ts[0]) in FAT
            hu += {"chow": 1, "table": 0, "zhan": 0, "peng": 2 if fat else 1,
                   "kong": 12 if fat else 6}[kind]
            singles += kind == "table"
            # a 占 pair is a component only under zhan_in_chariot
            if kind in ("peng", "kong") or (kind == "zhan" and zic):
                comps.append((ts[0], {"zhan": 2, "peng": 3, "kong": 4}[kind]))
        hu += min(singles, cap) if cap else singles
        # 清 / 天地 / 步
        outs = {t for t, k in comps if k >= 3}
        qing3 = qing4 = False
        for r in "SXCMP":
            n = sum(1 for c in "YRWG" if T(c + r) in outs)
            hu += {3: 20, 4: 40}.get(n, 0)
            qing3 |= n >= 3
            qing4 |= n == 4
        td = sum(1 for c in "YRWG" if T(c + "J") in outs and T(c + "Z") in outs)
        hu += 20 * td
        hu += 20 * (s - 4) if s >= 5 else 0
        # every chariot: subsets of component indices of size 3 or 4
        chariots = []
        for n in (3, 4):
            for idx in itertools.combinations(range(len(comps)), n):
                kind = _chariot_kind([comps[i] for i in idx])
                if kind:
                    o = sum(1 for i in idx if comps[i][1] >= 3)
                    v = {"plain": [10, 20, 30, 40], "fat": [20, 40, 60, 100],
                         "long": [40, 80, 120, 160, 200]}[kind][o]
                    if jic and o >= 1:
                        v += sum(2 for i in idx if _rank(comps[i][0]) == "J" and comps[i][1] == 2)
                    chariots.append((set(idx), v, kind, o))
        # every subset of pairwise disjoint chariots
        cb = 0
        for n in range(len(chariots) + 1):
            found = False
            for sub in itertools.combinations(chariots, n):
                used = [i for ch in sub for i in ch[0]]
                if len(used) == len(set(used)):
                    found = True
                    cb = max(cb, sum(ch[1] for ch in sub))
            if not found:
                break
        total = hu + cb
        best = total if best is None else max(best, total)
        pm = max([o for _, _, k, o in chariots if k == "plain"], default=-1)
        fm = max([o for _, _, k, o in chariots if k == "fat"], default=-1)
        lm = max([o for _, _, k, o in chariots if k == "long"], default=-1)
        co = max(pm, fm, lm) >= 1
        flags = [L >= 2, pm >= 0 and fat_lou, fm >= 0 and plain_lou, fm >= 2, lm >= 1,
                 s >= 5 and co, s >= 5 and qing3, s >= 5 and td > 0, qing3 and td > 0,
                 qing3 and co, co and td > 0, pm >= 3, qing4, s >= 6,
                 pm >= 3 and L >= 2, fm >= 1 and L >= 2, lm >= 2 and L >= 1, s >= 6 and lm >= 0]
        pats |= {name for name, f in zip(PATTERN_NAMES, flags) if f}
    # min idle: smallest multiset of non-将 cards whose removal leaves a complete hand
    non_j = [t for t in range(28) for _ in range(concealed[t]) if _rank(t) != "J"]
    min_idle = None
    for n in range(len(non_j) + 1):
        for idle in set(itertools.combinations(non_j, n)):
            rest = list(concealed)
            for t in idle:
                rest[t] -= 1
            if next(brute_decompositions(rest), None) is not None:
                min_idle = n
                break
        if min_idle is not None:
            break
    if best is None:
        return {"complete": False, "hu": None, "lou": L, "steps": s, "units": 0,
                "wins": False, "patterns": frozenset(), "min_idle": min_idle}
    U = (best + tol) * (2 ** L if lou_doubles else 1) // 50
    if pw and pats:
        U = max(U, 5 if pats & XIAOJIA_PATTERNS else 1)
    return {"complete": True, "hu": best, "lou": L, "steps": s, "units": U,
            "wins": U >= 1, "patterns": frozenset(pats), "min_idle": 0}


def _random_small_holding(rng):
    counts = [0] * 28
    exposed = []
    # favour the ranks and colours that build chariots, 清 and 天地
    col, rank = rng.choice("YRWG"), rng.choice("SXCMP")
    pool = ([T(c + "J") for c in "YRWG"] * 3 + [T(c + "Z") for c in "YRWG"] * 2
            + [T(col + r) for r in "JSXCMP"] * 2 + [T(c + rank) for c in "YRWG"] * 2
            + list(range(28)))
    for _ in range(rng.randint(0, 7)):  # exposed groups
        t = rng.choice(pool)
        kind = rng.choice(["peng", "peng", "kong", "zhan", "table"])
        need = {"peng": 3, "kong": 4, "zhan": 2, "table": 1}[kind]
        if kind == "table" and _rank(t) != "J":
            continue
        if counts[t] + need <= 4:
            counts[t] += need  # counts here track total copies in use
            exposed.append((kind, (t,)))
    if rng.random() < 0.2:
        y = rng.choice(BRUTE_YUAN)
        if all(counts[u] < 4 for u in y):
            for u in y:
                counts[u] += 1
            exposed.append(("chow", y))
    used = counts[:]
    concealed = [0] * 28
    for _ in range(rng.randint(0, 5)):  # concealed groups (and sometimes noise)
        t = rng.choice(pool)
        k = rng.choice([1, 2, 2, 3, 3, 4])
        if used[t] + k <= 4:
            used[t] += k
            concealed[t] += k
    if sum(concealed) > 12:
        return _random_small_holding(rng)
    return concealed, exposed


def test_matches_brute_force():
    rng = random.Random(20240601)
    option_sets = [{}, {"jiang_in_chariot": True}, {"steps_count_lou": True},
                   {"lou_doubles": False, "hu_tolerance": 0}, {"pattern_wins": False},
                   {"zhan_in_chariot": True}, {"zhan_in_chariot": True, "jiang_in_chariot": True},
                   {"single_jiang_cap": 1}, {"single_jiang_cap": 2, "jiang_in_chariot": True},
                   {"single_jiang_cap": 3, "zhan_in_chariot": True}]
    n_complete = 0
    for i in range(3000):
        concealed, exposed = _random_small_holding(rng)
        rules = option_sets[i % len(option_sets)]
        got = naive.naive_evaluate(concealed, exposed, rules)
        want = brute_evaluate(concealed, exposed, rules)
        assert got == want, (concealed, exposed, rules)
        n_complete += got["complete"]
    assert n_complete > 750

