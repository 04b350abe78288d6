"""Turn the kernel's choice words into a human-readable best decomposition.

Plain Python, run only when a caller asks for ``best``.  The hu of the listed items adds
up to the evaluated hu (a test checks this), so the explanation doubles as a check.
"""

from __future__ import annotations

import itertools
from typing import Sequence

import numpy as np

from simkit.cards import COLOUR_CHINESE, JIANG, N_RANKS, RANK_CHINESE, TYPE_NAMES, is_fat
from simkit.evaluator import kernel as K
from simkit.evaluator.tables import (
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
from simkit.exposed import ExposedGroup, exposed_arrays
from simkit.rules import RULE_JIANG_IN_CHARIOT, RULE_SINGLE_JIANG_CAP, RULE_STEPS_COUNT_LOU, RULE_ZHAN_IN_CHARIOT

_EXPOSED_WORD = {"chow": "吃圆", "peng": "碰", "kong": "楼", "zhan": "占", "table": "将(table)"}
_SPLIT_WORD = {2: "pair", 3: "子", 4: "闹"}


def _cards(t: int, k: int) -> str:
    return TYPE_NAMES[t] if k == 1 else f"{TYPE_NAMES[t]}*{k}"


def _zu_sets(u: Sequence[int]) -> list[tuple[int, ...]]:
    """A split of the 卒 counts u into the most 3- or 4-colour sets."""
    sets = [s for k in (3, 4) for s in itertools.combinations(range(4), k)]
    target = K.ZU_YUAN[u[0] + 5 * u[1] + 25 * u[2] + 125 * u[3]]

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

    return search(list(u), int(target)) or []


def explain(
    concealed: np.ndarray, groups: Sequence[ExposedGroup], rules_array: np.ndarray, choice: np.ndarray
) -> list[str]:
    """One line per scoring item of the best decomposition: ``'<what> <cards> = <hu>'``.

    Under rule ``single_jiang_cap`` k > 0 the first k single 将 listed (table 将 first, then
    concealed singles) score 1 and the rest ``= 0``, so the lines still add up to the hu.
    """
    lines: list[str] = []
    exposed, _ = exposed_arrays(groups)
    zhan_comp = int(rules_array[RULE_ZHAN_IN_CHARIOT])
    cap = int(rules_array[RULE_SINGLE_JIANG_CAP])
    n_singles = 0  # single 将 listed so far (table and concealed)

    def single_hu() -> int:
        nonlocal n_singles
        n_singles += 1
        return 1 if cap == 0 or n_singles <= cap else 0

    for g in groups:
        if g.kind == "chow":
            hu = 1
            cards = " ".join(TYPE_NAMES[t] for t in g.types)
        else:
            t = g.types[0]
            if g.kind == "table":
                hu = single_hu()
            else:
                hu = {"peng": 2 if is_fat(t) else 1, "kong": 12 if is_fat(t) else 6, "zhan": 0}[g.kind]
            cards = _cards(t, g.n_cards)
        lines.append(f"exposed {_EXPOSED_WORD[g.kind]} {cards} = {hu}")
    jiang_bonus = bool(rules_array[RULE_JIANG_IN_CHARIOT])
    out_of_type = np.zeros(28, dtype=bool)
    jiang_offer = [0, 0, 0, 0]
    for c in range(4):
        for first, kinds, arg in (
            (c * 7, (TK_JIANG, TK_PLAIN, TK_PLAIN), int(choice[K.CHOICE_JSX + c])),
            (c * 7 + 3, (TK_FAT, TK_PLAIN, TK_PLAIN), int(choice[K.CHOICE_CMP + c])),
        ):
            t_yuan = arg & 7
            classes = [(arg >> 3) & 3, (arg >> 5) & 3, (arg >> 7) & 3]
            q = (arg >> 9) & 3
            types = [first, first + 1, first + 2]
            for _ in range(t_yuan):
                lines.append(f"圆 {' '.join(TYPE_NAMES[t] for t in types)} = 1")
            for i, t in enumerate(types):
                e = K.exposed_state(exposed, t, zhan_comp)
                m = int(concealed[t]) - t_yuan
                sp = int(TYPE_SPLIT[kinds[i], e, m, classes[i]])
                comps = SPLIT_COMPONENTS[sp]
                for k in comps:
                    hu = {2: 0, 3: 3, 4: 9}[k] * (2 if is_fat(t) else 1)
                    lines.append(f"{_SPLIT_WORD[k]} {_cards(t, k)} = {hu}")
                for _ in range(m - sum(comps)):
                    lines.append(f"single {TYPE_NAMES[t]} = {single_hu()}")
                out_of_type[t] = classes[i] == CL_OUT
            outs = sum(1 for cl in classes if cl == CL_OUT)
            for _ in range(q):
                n_out = outs if q == 1 else 0
                value = int(PLAIN_CHARIOT_VALUE[n_out])
                extra = ""
                if jiang_bonus and first % N_RANKS == JIANG and n_out >= 1 and classes[0] != CL_OUT:
                    value += 2
                    extra = " (将 pair scores 2)"
                lines.append(
                    f"素车 {COLOUR_CHINESE[c]}{''.join(RANK_CHINESE[t % N_RANKS] for t in types)} {n_out}出{extra} = {value}"
                )
            if first % N_RANKS == JIANG:
                if q == 0:
                    jiang_offer[c] = classes[0]
                elif q == 1:
                    jiang_offer[c] = 1 if classes[0] == CL_TWO_PAIRS else CL_NONE
    # 卒 system
    u = [int(choice[K.CHOICE_ZU_YUAN + c]) for c in range(4)]
    zu_classes = [int(choice[K.CHOICE_ZU_CLASS + c]) for c in range(4)]
    for s in _zu_sets(u):
        lines.append(f"圆 {' '.join(TYPE_NAMES[c * 7 + 6] for c in s)} = 1")
    for c in range(4):
        t = c * 7 + 6
        e = K.exposed_state(exposed, t, zhan_comp)
        m = int(concealed[t]) - u[c]
        sp = int(TYPE_SPLIT[TK_FAT, e, m, zu_classes[c]])
        for k in SPLIT_COMPONENTS[sp]:
            lines.append(f"{_SPLIT_WORD[k]} {_cards(t, k)} = {({2: 0, 3: 6, 4: 18})[k]}")
        out_of_type[t] = zu_classes[c] == CL_OUT
    # 肥车 / 长车
    for rank, offers, bonus in ((0, jiang_offer, jiang_bonus), (6, zu_classes, False)):
        _, chariots = chariot_assignments(tuple(offers), bonus)
        for colours, n_out in chariots:
            size = len(colours)
            value = int((FAT_CHARIOT_VALUE if size == 3 else LONG_CHARIOT_VALUE)[n_out])
            extra = ""
            if bonus and n_out >= 1 and size > n_out:
                value += 2 * (size - n_out)
                extra = " (将 pairs score 1 each)"
            name = "肥车" if size == 3 else "长车"
            cards = "".join(COLOUR_CHINESE[c] for c in colours) + RANK_CHINESE[rank]
            lines.append(f"{name} {cards} {n_out}出{extra} = {value}")
    # 清
    for rank in range(1, 6):
        colours = [c for c in range(4) if out_of_type[c * 7 + rank]]
        if len(colours) >= 3:
            word = "三清" if len(colours) == 3 else "四清"
            lines.append(
                f"{word} {''.join(COLOUR_CHINESE[c] for c in colours)}{RANK_CHINESE[rank]} = {int(QING_VALUE[len(colours)])}"
            )
    # 天地
    for c in range(4):
        if out_of_type[c * 7] and out_of_type[c * 7 + 6]:
            lines.append(f"天地 {COLOUR_CHINESE[c]} = 20")
    steps = int(exposed[K.EXP_PENG].sum()) + (
        int(exposed[K.EXP_KONG].sum()) if rules_array[RULE_STEPS_COUNT_LOU] else 0
    )
    if steps >= 5:
        lines.append(f"{steps}步 = {20 * (steps - 4)}")
    return lines


def explained_total(lines: Sequence[str]) -> int:
    """Sum of the ``= hu`` values of :func:`explain` lines."""
    return sum(int(line.rsplit("=", 1)[1]) for line in lines)
