"""Turn the kernel's choice words into a human-readable best decomposition.

Plain Python, run only when a caller asks for ``best``.  The hu of the listed items adds
up to the evaluated hu (a test checks this), so the explanation doubles as a check.
"""

from __future__ import annotations

import functools
import itertools
from typing import Sequence

import numpy as np

from simkit.cards import (
    COLOUR_CHINESE,
    JIANG,
    N_COLOURS,
    N_RANKS,
    N_TYPES,
    PAO,
    RANK_CHINESE,
    SHI,
    TYPE_NAMES,
    ZU,
    is_fat,
)
from simkit.evaluator import kernel as K
from simkit.evaluator.tables import (
    EX_KONG,
    EX_NONE,
    EX_PENG,
    EX_ZHAN,
    EX_ZHAN2,
    CL_NONE,
    CL_OUT,
    CL_TWO_PAIRS,
    FAT_CHARIOT_VALUE,
    LONG_CHARIOT_VALUE,
    PLAIN_CHARIOT_VALUE,
    QING_VALUE,
    SPLIT_COMPONENTS,
    TK_FAT,
    TK_JIANG,
    TK_PLAIN,
    TYPE_SPLIT,
    chariot_assignments,
)
from simkit.exposed import ExposedGroup
from simkit.rules import RULE_JIANG_IN_CHARIOT, RULE_SINGLE_JIANG_CAP, RULE_STEPS_COUNT_LOU, RULE_ZHAN_IN_CHARIOT

_EXPOSED_WORD = {"chow": "吃圆", "peng": "碰", "kong": "楼", "zhan": "占", "table": "将(table)"}
_SPLIT_WORD = {2: "pair", 3: "子", 4: "闹"}
_SPLIT_HU = {2: 0, 3: 3, 4: 9}  # plain types; fat ones score twice
_ZU_SPLIT_HU = {2: 0, 3: 6, 4: 18}
_EXPOSED_ROW = {"zhan": K.EXP_ZHAN, "peng": K.EXP_PENG, "kong": K.EXP_KONG, "table": K.EXP_TABLE}
_EXPOSED_HU = {  # (kind, fat): hu of an exposed group other than chow and table
    ("peng", True): 2, ("peng", False): 1, ("kong", True): 12, ("kong", False): 6, ("zhan", True): 0, ("zhan", False): 0,
}
# the tables as nested lists: explain runs in Python, where list indexing is far cheaper
_TYPE_SPLIT = TYPE_SPLIT.tolist()
_SPLIT_COMPONENTS = {sp: tuple(comps) for sp, comps in SPLIT_COMPONENTS.items()}
_ZU_YUAN = K.ZU_YUAN.tolist()
_PLAIN_CHARIOT_VALUE = PLAIN_CHARIOT_VALUE.tolist()
_FAT_CHARIOT_VALUE = FAT_CHARIOT_VALUE.tolist()
_LONG_CHARIOT_VALUE = LONG_CHARIOT_VALUE.tolist()
_QING_VALUE = QING_VALUE.tolist()
_FAT = tuple(is_fat(t) for t in range(N_TYPES))
_CARDS = tuple(tuple(TYPE_NAMES[t] if k == 1 else f"{TYPE_NAMES[t]}*{k}" for k in range(5)) for t in range(N_TYPES))
_TRIADS = tuple(
    (c, first, kinds, slot)
    for c in range(N_COLOURS)
    for first, kinds, slot in (
        (c * N_RANKS, (TK_JIANG, TK_PLAIN, TK_PLAIN), K.CHOICE_JSX + c),
        (c * N_RANKS + 3, (TK_FAT, TK_PLAIN, TK_PLAIN), K.CHOICE_CMP + c),
    )
)


def _exposed_state(rows: list[list[int]], t: int, zhan_comp: int) -> int:
    """:func:`simkit.evaluator.kernel.exposed_state` on the exposed rows as lists."""
    if rows[K.EXP_KONG][t] > 0:
        return EX_KONG
    if rows[K.EXP_PENG][t] > 0:
        return EX_PENG
    if not zhan_comp:
        return EX_NONE
    if rows[K.EXP_ZHAN][t] >= 2:
        return EX_ZHAN2
    if rows[K.EXP_ZHAN][t] == 1:
        return EX_ZHAN
    return EX_NONE


@functools.lru_cache(maxsize=None)
def _zu_sets(u: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    """A split of the 卒 counts u into the most 3- or 4-colour sets."""
    sets = [s for k in (3, 4) for s in itertools.combinations(range(4), k)]
    target = _ZU_YUAN[u[0] + 5 * u[1] + 25 * u[2] + 125 * u[3]]

    def search(u: list[int], need: int) -> list | None:
        if sum(u) == 0:
            return [] if need == 0 else None
        if need <= 0:
            return None
        for s in sets:
            if all(u[c] >= 1 for c in s):
                rest = list(u)
                for c in s:
                    rest[c] -= 1
                sub = search(rest, need - 1)
                if sub is not None:
                    return [s] + sub
        return None

    return tuple(search(list(u), int(target)) or [])


@functools.lru_cache(maxsize=None)
def _chariots(offers: tuple[int, ...], bonus: bool) -> tuple:
    """The chariots of :func:`simkit.evaluator.tables.chariot_assignments` (memoised: 512 cases)."""
    return tuple(chariot_assignments(offers, bonus)[1])


def _triad_block(
    c: int, first: int, kinds: tuple[int, int, int], arg: int, counts: tuple[int, int, int],
    states: tuple[int, int, int], jiang_bonus: bool,
) -> tuple[tuple, bool, int, int]:
    """The lines of one triad (its 圆s, each type's split, its 素车s): a line is a string, or
    the type of a single 将 (its hu depends on the singles listed before it); whether there is
    such a single, the bit mask of its types with an 出 component and the 将 class the triad
    offers to 肥车/长车 (将士相 only).  :func:`explain` memoises it."""
    entries: list = []
    t_yuan = arg & 7
    classes = ((arg >> 3) & 3, (arg >> 5) & 3, (arg >> 7) & 3)
    q = (arg >> 9) & 3
    for _ in range(t_yuan):
        entries.append(f"圆 {TYPE_NAMES[first]} {TYPE_NAMES[first + 1]} {TYPE_NAMES[first + 2]} = 1")
    for i in range(3):
        t = first + i
        m = counts[i] - t_yuan
        comps = _SPLIT_COMPONENTS[_TYPE_SPLIT[kinds[i]][states[i]][m][classes[i]]]
        factor = 2 if _FAT[t] else 1
        for k in comps:
            entries.append(f"{_SPLIT_WORD[k]} {_CARDS[t][k]} = {_SPLIT_HU[k] * factor}")
        entries.extend([t] * (m - sum(comps)))
    outs = (classes[0] == CL_OUT) + (classes[1] == CL_OUT) + (classes[2] == CL_OUT)
    name = COLOUR_CHINESE[c] + "".join(RANK_CHINESE[(first + i) % N_RANKS] for i in range(3))
    for _ in range(q):
        n_out = outs if q == 1 else 0
        value = _PLAIN_CHARIOT_VALUE[n_out]
        extra = ""
        if jiang_bonus and first % N_RANKS == JIANG and n_out >= 1 and classes[0] != CL_OUT:
            value += 2
            extra = " (将 pair scores 2)"
        entries.append(f"素车 {name} {n_out}出{extra} = {value}")
    offer = 0
    if first % N_RANKS == JIANG:
        if q == 0:
            offer = classes[0]
        elif q == 1:
            offer = 1 if classes[0] == CL_TWO_PAIRS else CL_NONE
    outs_mask = sum(1 << (first + i) for i in range(3) if classes[i] == CL_OUT)
    has_singles = any(entry.__class__ is not str for entry in entries)
    return tuple(entries), has_singles, outs_mask, offer


@functools.lru_cache(maxsize=1 << 16)
def _zu_block(
    u: tuple[int, ...], zu_classes: tuple[int, ...], counts: tuple[int, ...], states: tuple[int, ...]
) -> tuple[tuple[str, ...], int]:
    """The lines of the 卒 system (its 圆s, then each colour's split) and the bit mask of the
    卒 types with an 出 component, memoised."""
    lines = [f"圆 {' '.join(TYPE_NAMES[c * N_RANKS + ZU] for c in s)} = 1" for s in _zu_sets(u)]
    for c in range(N_COLOURS):
        t = c * N_RANKS + ZU
        m = counts[c] - u[c]
        for k in _SPLIT_COMPONENTS[_TYPE_SPLIT[TK_FAT][states[c]][m][zu_classes[c]]]:
            lines.append(f"{_SPLIT_WORD[k]} {_CARDS[t][k]} = {_ZU_SPLIT_HU[k]}")
    return tuple(lines), sum(1 << (c * N_RANKS + ZU) for c in range(N_COLOURS) if zu_classes[c] == CL_OUT)


_SINGLE_LINE = tuple((f"single {TYPE_NAMES[t]} = 0", f"single {TYPE_NAMES[t]} = 1") for t in range(N_TYPES))


@functools.lru_cache(maxsize=1 << 14)
def _exposed_block(groups: tuple[ExposedGroup, ...]) -> tuple[tuple, tuple[list[int], list[int]], int, int]:
    """The exposed groups' lines (a table 将's line as the pair (``= 0``, ``= 1``): its hu
    depends on the singles listed before it), the exposed state of every type without and with
    rule ``zhan_in_chariot``, and the numbers of 碰 and 楼; memoised."""
    rows = [[0] * N_TYPES for _ in range(K.N_EXP_ROWS)]
    entries: list = []
    for g in groups:
        kind = g.kind
        if kind == "chow":
            entries.append(f"exposed {_EXPOSED_WORD[kind]} {' '.join(TYPE_NAMES[t] for t in g.types)} = 1")
            continue
        t = g.types[0]
        rows[_EXPOSED_ROW[kind]][t] += 1
        head = f"exposed {_EXPOSED_WORD[kind]} {_CARDS[t][g.n_cards]} = "
        if kind == "table":
            entries.append((head + "0", head + "1"))
        else:
            entries.append(head + str(_EXPOSED_HU[kind, _FAT[t]]))
    states = tuple([_exposed_state(rows, t, zhan_comp) for t in range(N_TYPES)] for zhan_comp in (0, 1))
    return tuple(entries), states, sum(rows[K.EXP_PENG]), sum(rows[K.EXP_KONG])


def explain(
    concealed: np.ndarray, groups: Sequence[ExposedGroup], rules_array: np.ndarray, choice: np.ndarray
) -> list[str]:
    """One line per scoring item of the best decomposition: ``'<what> <cards> = <hu>'``.

    Under rule ``single_jiang_cap`` k > 0 the first k single 将 listed (table 将 first, then
    concealed singles) score 1 and the rest ``= 0``, so the lines still add up to the hu.
    """
    lines: list[str] = []
    append = lines.append
    conc = concealed.tolist() if isinstance(concealed, np.ndarray) else [int(x) for x in concealed]
    choice = choice.tolist() if isinstance(choice, np.ndarray) else [int(x) for x in choice]
    cap = int(rules_array[RULE_SINGLE_JIANG_CAP])
    n_singles = 0  # single 将 listed so far (table and concealed)
    exposed_entries, exposed_states, n_peng, n_kong = _exposed_block(tuple(groups))
    for entry in exposed_entries:
        if entry.__class__ is str:
            append(entry)
        else:
            n_singles += 1
            append(entry[1 if cap == 0 or n_singles <= cap else 0])
    states = exposed_states[1 if rules_array[RULE_ZHAN_IN_CHARIOT] else 0]
    jiang_bonus = bool(rules_array[RULE_JIANG_IN_CHARIOT])
    outs = 0  # bit t: type t has an 出 component
    jiang_offer = [0, 0, 0, 0]
    cache = _TRIAD_CACHE
    for c, first, kinds, slot in _TRIADS:
        bonus = jiang_bonus and first % N_RANKS == JIANG
        key = (slot, choice[slot], conc[first], conc[first + 1], conc[first + 2], states[first], states[first + 1],
               states[first + 2], bonus)
        block = cache.get(key)
        if block is None:
            if len(cache) >= _CACHE_SIZE:
                cache.clear()
            block = cache[key] = _triad_block(
                c, first, kinds, key[1], key[2:5], key[5:8], bonus)
        entries, has_singles, block_outs, offer = block
        if has_singles:
            for entry in entries:
                if entry.__class__ is str:
                    append(entry)
                else:
                    n_singles += 1
                    append(_SINGLE_LINE[entry][1 if cap == 0 or n_singles <= cap else 0])
        else:
            lines.extend(entries)
        outs |= block_outs
        if first % N_RANKS == JIANG:
            jiang_offer[c] = offer
    # 卒 system
    zu_classes = tuple(choice[K.CHOICE_ZU_CLASS : K.CHOICE_ZU_CLASS + 4])
    zu_lines, zu_outs = _zu_block(tuple(choice[K.CHOICE_ZU_YUAN : K.CHOICE_ZU_YUAN + 4]), zu_classes,
                                  tuple(conc[ZU::N_RANKS]), tuple(states[ZU::N_RANKS]))
    lines.extend(zu_lines)
    lines.extend(_pattern_lines(tuple(jiang_offer), zu_classes, outs | zu_outs, jiang_bonus))
    steps = n_peng + (n_kong if rules_array[RULE_STEPS_COUNT_LOU] else 0)
    if steps >= 5:
        append(f"{steps}步 = {20 * (steps - 4)}")
    return lines


_TRIAD_CACHE: dict[tuple, tuple] = {}
_CACHE_SIZE = 1 << 16


@functools.lru_cache(maxsize=1 << 16)
def _pattern_lines(jiang_offer: tuple[int, ...], zu_classes: tuple[int, ...], outs: int, jiang_bonus: bool
                   ) -> tuple[str, ...]:
    """The 肥车 / 长车, 清 and 天地 lines, from the 将 classes the 将士相 triads offer, the 卒
    classes and the types with an 出 component (bit mask); memoised."""
    lines = []
    for rank, offers, bonus in ((0, jiang_offer, jiang_bonus), (6, zu_classes, False)):
        for colours, n_out in _chariots(offers, bonus):
            size = len(colours)
            value = (_FAT_CHARIOT_VALUE if size == 3 else _LONG_CHARIOT_VALUE)[n_out]
            extra = ""
            if bonus and n_out >= 1 and size > n_out:
                value += 2 * (size - n_out)
                extra = " (将 pairs score 1 each)"
            name = "肥车" if size == 3 else "长车"
            cards = "".join(COLOUR_CHINESE[c] for c in colours) + RANK_CHINESE[rank]
            lines.append(f"{name} {cards} {n_out}出{extra} = {value}")
    # 清
    for rank in range(SHI, PAO + 1):
        colours = [c for c in range(N_COLOURS) if outs >> (c * N_RANKS + rank) & 1]
        if len(colours) >= 3:
            word = "三清" if len(colours) == 3 else "四清"
            lines.append(
                f"{word} {''.join(COLOUR_CHINESE[c] for c in colours)}{RANK_CHINESE[rank]} = {_QING_VALUE[len(colours)]}")
    # 天地
    for c in range(N_COLOURS):
        if outs >> (c * N_RANKS + JIANG) & 1 and outs >> (c * N_RANKS + ZU) & 1:
            lines.append(f"天地 {COLOUR_CHINESE[c]} = 20")
    return tuple(lines)


def explained_total(lines: Sequence[str]) -> int:
    """Sum of the ``= hu`` values of :func:`explain` lines."""
    return sum(int(line.rsplit("=", 1)[1]) for line in lines)
