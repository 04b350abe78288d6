"""Random holdings for tests and benchmarks.

* :func:`random_holdings` — uniformly random sets of cards from the 112-card deck.
* :func:`random_group_holdings` — holdings built from random groups (圆, pairs, 子, 闹,
  single 将, whole chariots, 清 triples), optionally with exposed groups, so that most are
  complete and rich in chariots, 清, 天地 and 楼.
* :func:`random_score_records` — ``simkit score --jsonl`` input lines: random 31-card
  holdings of both kinds with random exposed groups, card notations and rule sets.

Both are numba kernels driven by the xoshiro PRNG of :mod:`simkit.rng`: the output is a
pure function of the seed.

>>> conc, exp, chows = random_group_holdings(5, seed=1, total=31)
>>> conc.shape, exp.shape, chows.shape
((5, 28), (5, 4, 28), (5,))
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
from numba import njit

from simkit.cards import (
    CHE,
    JIANG,
    N_CARDS,
    N_COLOURS,
    N_COPIES,
    N_RANKS,
    N_TYPES,
    PAO,
    SHI,
    TRIAD_SIZE,
    TYPE_NAMES,
    TYPE_NAMES_CHINESE,
    ZU,
    format_counts,
)
from simkit.deck import DEALER_CARDS, shuffle_kernel
from simkit.exposed import EXP_KONG, EXP_PENG, EXP_TABLE, EXP_ZHAN, N_EXP_ROWS
from simkit.rng import next_below, seed_state

# group kinds drawn by the builder, with integer weights
G_YUAN_JSX, G_YUAN_CMP, G_ZU3, G_ZU4, G_PAIR, G_ZI, G_NAO, G_SINGLE, G_CHARIOT, G_FAT_CHARIOT, G_QING = range(11)
GROUP_WEIGHTS = np.array([12, 12, 6, 3, 25, 18, 6, 8, 5, 5, 3], dtype=np.int64)


@njit(cache=True, nogil=True)
def _uniform_kernel(state, n_cards, out):
    deck = np.arange(N_CARDS, dtype=np.int64)
    for i in range(out.shape[0]):
        shuffle_kernel(state, deck)
        for k in range(n_cards):
            out[i, deck[k] // N_COPIES] += 1


def random_holdings(n: int, seed: int, n_cards: int = DEALER_CARDS) -> np.ndarray:
    """(n, 28) counts of uniformly random ``n_cards``-card holdings."""
    if not 0 <= n_cards <= N_CARDS:
        raise ValueError(f"n_cards must lie in 0..{N_CARDS}, got {n_cards}")
    out = np.zeros((n, N_TYPES), dtype=np.int64)
    _uniform_kernel(seed_state(seed), n_cards, out)
    return out


@njit(cache=True, nogil=True)
def _pick_weighted(state, weights):
    total = 0
    for w in weights:
        total += w
    x = next_below(state, total)
    for k in range(weights.shape[0]):
        if x < weights[k]:
            return k
        x -= weights[k]
    return weights.shape[0] - 1


@njit(cache=True, nogil=True)
def _add(avail, conc, exp, t, k, as_exposed, exp_row):
    avail[t] -= k
    if as_exposed:
        exp[exp_row, t] += 1
    else:
        conc[t] += k


@njit(cache=True, nogil=True)
def _try_group(state, kind, avail, conc, exp, room, p_exposed_pct):
    """Try to add one random group of ``kind``; returns (cards added, chows added)."""
    exposed = next_below(state, 100) < p_exposed_pct
    colour = next_below(state, N_COLOURS)
    if kind == G_YUAN_JSX or kind == G_YUAN_CMP:
        first = colour * N_RANKS + (JIANG if kind == G_YUAN_JSX else CHE)
        if room < 3 or avail[first] < 1 or avail[first + 1] < 1 or avail[first + 2] < 1:
            return 0, 0
        for t in range(first, first + TRIAD_SIZE):
            avail[t] -= 1
            if not exposed:
                conc[t] += 1
        return 3, 1 if exposed else 0
    if kind == G_ZU3 or kind == G_ZU4:
        size = 3 if kind == G_ZU3 else 4
        skip = next_below(state, N_COLOURS) if size == 3 else -1
        if room < size:
            return 0, 0
        for c in range(N_COLOURS):
            if c != skip and avail[c * N_RANKS + ZU] < 1:
                return 0, 0
        for c in range(N_COLOURS):
            if c != skip:
                avail[c * N_RANKS + ZU] -= 1
                if not exposed:
                    conc[c * N_RANKS + ZU] += 1
        return size, 1 if exposed else 0
    t = next_below(state, N_TYPES)
    if kind == G_PAIR:
        if room < 2 or avail[t] < 2 or (exposed and exp[EXP_ZHAN, t] + exp[EXP_PENG, t] + exp[EXP_KONG, t] > 0):
            return 0, 0
        _add(avail, conc, exp, t, 2, exposed, EXP_ZHAN)
        return 2, 0
    if kind == G_ZI:
        if room < 3 or avail[t] < 3:
            return 0, 0
        _add(avail, conc, exp, t, 3, exposed, EXP_PENG)
        return 3, 0
    if kind == G_NAO:
        if room < 4 or avail[t] < 4:
            return 0, 0
        _add(avail, conc, exp, t, 4, exposed, EXP_KONG)
        return 4, 0
    if kind == G_SINGLE:
        t = colour * N_RANKS + JIANG
        if room < 1 or avail[t] < 1:
            return 0, 0
        _add(avail, conc, exp, t, 1, exposed, EXP_TABLE)
        return 1, 0
    if kind == G_CHARIOT:  # pairs (or a 子) of a whole 将士相 / 车马炮 triad
        first = colour * N_RANKS + (CHE - JIANG) * next_below(state, 2) + JIANG
        need = 0
        for t in range(first, first + TRIAD_SIZE):
            if avail[t] < 2:
                return 0, 0
            need += 2
        if room < need + 1:
            return 0, 0
        for t in range(first, first + TRIAD_SIZE):
            _add(avail, conc, exp, t, 2, False, EXP_ZHAN)
        return need, 0
    # G_FAT_CHARIOT: pairs of 将 or 卒 in 3 or 4 colours; G_QING: 子 of one rank in 3 colours
    if kind == G_FAT_CHARIOT:
        rank = JIANG + (ZU - JIANG) * next_below(state, 2)
    else:
        rank = SHI + next_below(state, PAO - SHI + 1)
    k = 2 if kind == G_FAT_CHARIOT else 3
    n_col = 3 + next_below(state, 2) if kind == G_FAT_CHARIOT else 3
    skip = next_below(state, N_COLOURS) if n_col == 3 else -1
    if room < k * n_col:
        return 0, 0
    for c in range(N_COLOURS):
        if c != skip and avail[c * N_RANKS + rank] < k:
            return 0, 0
    for c in range(N_COLOURS):
        if c != skip:
            _add(avail, conc, exp, c * N_RANKS + rank, k, False, EXP_ZHAN)
    return k * n_col, 0


@njit(cache=True, nogil=True)
def _group_kernel(state, total_min, total_max, p_exposed_pct, weights, conc_out, exp_out, chow_out):
    avail = np.empty(N_TYPES, dtype=np.int64)
    for i in range(conc_out.shape[0]):
        total = total_min + next_below(state, total_max - total_min + 1)
        for attempt in range(10000):
            avail[:] = N_COPIES
            conc_out[i, :] = 0
            exp_out[i, :, :] = 0
            chows = 0
            have = 0
            for step in range(400):
                if have == total:
                    break
                kind = _pick_weighted(state, weights)
                added, chow = _try_group(state, kind, avail, conc_out[i], exp_out[i], total - have, p_exposed_pct)
                have += added
                chows += chow
            if have == total:
                chow_out[i] = chows
                break


def random_group_holdings(
    n: int,
    seed: int,
    total: int | tuple[int, int] = DEALER_CARDS,
    p_exposed: float = 0.0,
    weights: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Holdings built from random groups: ``(concealed (n,28), exposed (n,4,28), n_chow (n,))``.

    ``total`` is the number of cards (or an inclusive range); ``p_exposed`` the chance that a
    group is laid exposed instead (pair -> 占, 子 -> 碰, 闹 -> 楼, 圆 -> 吃, 将 -> table).
    Most results are complete; none has more than 4 copies of a type.
    """
    lo, hi = (total, total) if isinstance(total, int) else total
    if not 1 <= lo <= hi <= N_CARDS:
        raise ValueError(f"total must lie in 1..{N_CARDS}, got {total}")
    w = GROUP_WEIGHTS if weights is None else np.asarray(weights, dtype=np.int64)
    conc = np.zeros((n, N_TYPES), dtype=np.int64)
    exp = np.zeros((n, N_EXP_ROWS, N_TYPES), dtype=np.int64)
    chows = np.zeros(n, dtype=np.int64)
    _group_kernel(seed_state(seed), lo, hi, int(round(100 * p_exposed)), w, conc, exp, chows)
    return conc, exp, chows


# options a score record may set, with the values drawn for them (strings as --rule takes them)
_RECORD_RULE_VALUES: dict[str, tuple[Any, ...]] = {
    "lou_doubles": (True, False, "off", "on"),
    "hu_tolerance": (0, 2, 10, 49, "5"),
    "jiang_in_chariot": (True, False, "true"),
    "pattern_wins": (True, False, "no"),
    "steps_count_lou": (True, False),
    "zhan_in_chariot": (True, False, "on"),
    "single_jiang_cap": (0, 1, 2, 3, 5, "3"),
    "tianhu": (True, False),
    "next_dealer": ("winner_else_next", "winner_else_same"),
    "drawn_card_chow_by": ("drawer", "drawer_then_next"),
}
_EXPOSED_ROWS = ((EXP_ZHAN, "zhan"), (EXP_PENG, "peng"), (EXP_KONG, "kong"), (EXP_TABLE, "table"))


def _yuans() -> list[tuple[int, ...]]:
    out: list[tuple[int, ...]] = []
    for c in range(N_COLOURS):
        for first in (JIANG, CHE):  # its 将士相 and 车马炮 圆s
            out.append(tuple(c * N_RANKS + first + i for i in range(TRIAD_SIZE)))
    zu = [c * N_RANKS + ZU for c in range(N_COLOURS)]
    out.extend(tuple(x for x in zu if x != skip) for skip in zu)
    out.append(tuple(zu))
    return out


_YUANS = _yuans()


def _hand_text(rnd: random.Random, counts: list[int]) -> str:
    """A hand in one of the notations ``simkit score`` reads: canonical, or shuffled tokens,
    Chinese or lower-case names, repeats split or spelled ``*k``, commas."""
    if rnd.random() < 0.6:
        return format_counts(counts)
    tokens = []
    for t, n in enumerate(counts):
        while n > 0:
            k = rnd.randint(1, n)
            n -= k
            name = rnd.choice((TYPE_NAMES[t], TYPE_NAMES[t].lower(), TYPE_NAMES_CHINESE[t]))
            tokens.extend([name] * k if rnd.random() < 0.3 else [name if k == 1 else f"{name}*{k}"])
    rnd.shuffle(tokens)
    return rnd.choice((" ", "  ", ", ", ",")).join(tokens)


def _expose(rnd: random.Random, conc: list[int], groups: list[str], p: float) -> None:
    """Move some concealed groups of ``conc`` to exposed ``groups`` (text items)."""
    for t in range(N_TYPES):
        n = conc[t]
        if n >= 2 and rnd.random() < p:
            kind, k = {2: ("zhan", 2), 3: ("peng", 3), 4: ("kong", 4)}[n]
            if n >= 3 and rnd.random() < 0.3:
                kind, k = "zhan", 2
            conc[t] -= k
            groups.append(f"{kind}:{TYPE_NAMES[t]}")
        elif n >= 1 and t % N_RANKS == JIANG and rnd.random() < p:
            conc[t] -= 1
            groups.append(f"table:{TYPE_NAMES[t]}")
    for yuan in _YUANS:
        if all(conc[t] >= 1 for t in yuan) and rnd.random() < p:
            for t in yuan:
                conc[t] -= 1
            groups.append("chow:" + ",".join(TYPE_NAMES[t] for t in yuan))


def random_score_records(n: int, seed: int, grouped: float = 0.5) -> list[dict[str, Any]]:
    """``n`` valid ``simkit score --jsonl`` records (dicts): holdings of 31 cards (concealed
    and exposed), uniformly random (rarely complete) or, with probability ``grouped``, built
    from random groups (mostly complete), with random exposed groups (占 / 碰 / 楼 / table 将 /
    吃), card notations and per-line rule sets (every evaluator option, ``zhan_in_chariot``
    and ``single_jiang_cap`` included).  A pure function of the arguments.

    >>> [sorted(r) for r in random_score_records(2, seed=3)]
    [['exposed', 'hand', 'rules'], ['exposed', 'hand']]
    """
    if not 0.0 <= grouped <= 1.0:
        raise ValueError(f"grouped must lie in 0..1, got {grouped}")
    rnd = random.Random(seed)
    uniform = random_holdings(n, seed=seed)
    conc_g, exp_g, chow_g = random_group_holdings(n, seed=seed + 1, total=DEALER_CARDS, p_exposed=0.2)
    records: list[dict[str, Any]] = []
    for i in range(n):
        groups: list[str] = []
        if rnd.random() < 1.0 - grouped:
            conc = [int(x) for x in uniform[i]]
            _expose(rnd, conc, groups, rnd.choice((0.0, 0.05, 0.2)))
        else:
            conc = [int(x) for x in conc_g[i]]
            used = [conc[t] + 2 * int(exp_g[i, EXP_ZHAN, t]) + 3 * int(exp_g[i, EXP_PENG, t])
                    + 4 * int(exp_g[i, EXP_KONG, t]) + int(exp_g[i, EXP_TABLE, t]) for t in range(N_TYPES)]
            for row, kind in _EXPOSED_ROWS:
                for t in range(N_TYPES):
                    groups.extend([f"{kind}:{TYPE_NAMES[t]}"] * int(exp_g[i, row, t]))
            for _ in range(int(chow_g[i])):  # the builder keeps no chow's cards: choose a 圆 that fits
                room = DEALER_CARDS - sum(used)
                free = [y for y in _YUANS if len(y) <= room and all(used[t] < N_COPIES for t in y)]
                if free:
                    yuan = rnd.choice(free)
                    for t in yuan:
                        used[t] += 1
                    groups.append("chow:" + ",".join(TYPE_NAMES[t] for t in yuan))
            rnd.shuffle(groups)
        record: dict[str, Any] = {"hand": _hand_text(rnd, conc)}
        if groups or rnd.random() < 0.5:
            record["exposed"] = " ".join(groups)
        r = rnd.random()
        if r < 0.3:
            pass
        elif r < 0.4:
            record["rules"] = {}
        else:
            names = rnd.sample(sorted(_RECORD_RULE_VALUES), rnd.randint(1, 4))
            record["rules"] = {name: rnd.choice(_RECORD_RULE_VALUES[name]) for name in names}
        records.append(record)
    return records
