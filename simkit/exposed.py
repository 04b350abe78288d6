"""Exposed groups (docs/rules.md §2): 吃 (chow), 碰 (peng), 楼 (kong), 占 (zhan) and a table 将.

Text form, as taken by ``simkit score --exposed``: space-separated ``kind:cards`` items,
cards of a chow separated by commas::

    peng:RC kong:YZ chow:RJ,RS,RX zhan:GM table:RJ

>>> groups = parse_exposed("peng:RC chow:YZ,RZ,GZ")
>>> [g.kind for g in groups], format_exposed(groups)
(['peng', 'chow'], 'peng:RC chow:YZ,RZ,GZ')
"""

from __future__ import annotations

import dataclasses
from typing import Iterable, Sequence

import numpy as np

from simkit.cards import (
    CHE,
    JIANG,
    MA,
    N_COPIES,
    N_TYPES,
    PAO,
    SHI,
    TYPE_NAMES,
    XIANG,
    ZU,
    colour_of,
    parse_type,
    rank_of,
)
from simkit.errors import CardError, GroupError

KINDS = ("chow", "peng", "kong", "zhan", "table")
KIND_ALIASES = {
    "chow": "chow", "chi": "chow", "吃": "chow", "圆": "chow",
    "peng": "peng", "碰": "peng", "步": "peng",
    "kong": "kong", "lou": "kong", "楼": "kong", "发子": "kong",
    "zhan": "zhan", "占": "zhan", "嗲": "zhan",
    "table": "table", "将": "table",
}
CARDS_OF_KIND = {"peng": 3, "kong": 4, "zhan": 2, "table": 1}

# rows of the kernel form ``exposed[4, 28]`` (counts per type; :func:`exposed_arrays`), as the
# evaluator and the engine read it (:mod:`simkit.evaluator.kernel` re-exports them)
EXP_ZHAN = 0  # 占 pairs
EXP_PENG = 1  # 碰
EXP_KONG = 2  # 楼
EXP_TABLE = 3  # single 将 on the table
N_EXP_ROWS = 4
EXP_BLOCK = N_EXP_ROWS * N_TYPES  # one seat's exposed counts, flat (the state's and the scratch's block)


@dataclasses.dataclass(frozen=True)
class ExposedGroup:
    """One exposed group: ``kind`` in :data:`KINDS` and the card types it holds.

    For ``chow`` the 3 (or 4) types of the 圆; for the other kinds the single type.
    """

    kind: str
    types: tuple[int, ...]

    def __post_init__(self) -> None:
        validate_group(self.kind, self.types)

    @property
    def n_cards(self) -> int:
        """Number of cards the group holds."""
        return len(self.types) if self.kind == "chow" else CARDS_OF_KIND[self.kind]

    def card_counts(self) -> np.ndarray:
        """28-count vector of the cards of this group."""
        counts = np.zeros(N_TYPES, dtype=np.int64)
        if self.kind == "chow":
            for t in self.types:
                counts[t] += 1
        else:
            counts[self.types[0]] += CARDS_OF_KIND[self.kind]
        return counts

    def text(self) -> str:
        """``kind:cards`` notation."""
        return f"{self.kind}:{','.join(TYPE_NAMES[t] for t in self.types)}"


def is_yuan(types: Sequence[int]) -> bool:
    """True if the types form a 圆: same-colour 将士相 or 车马炮, or 卒 of 3/4 different colours.

    >>> is_yuan([parse_type(x) for x in ("GC", "GM", "GP")]), is_yuan([parse_type("GC")] * 3)
    (True, False)
    """
    types = list(types)
    if len(types) == 3 and len({colour_of(t) for t in types}) == 1:
        ranks = sorted(rank_of(t) for t in types)
        if ranks in ([JIANG, SHI, XIANG], [CHE, MA, PAO]):
            return True
    if len(types) in (3, 4) and all(rank_of(t) == ZU for t in types):
        return len({colour_of(t) for t in types}) == len(types)
    return False


def validate_group(kind: str, types: Sequence[int]) -> None:
    """Raise :class:`GroupError` unless (kind, types) is a legal exposed group."""
    if kind not in KINDS:
        raise GroupError(f"unknown exposed group kind {kind!r} (expected one of {', '.join(KINDS)})")
    for t in types:
        if not isinstance(t, (int, np.integer)) or not 0 <= int(t) < N_TYPES:
            raise GroupError(f"exposed {kind} has a bad card type {t!r}")
    names = ",".join(TYPE_NAMES[t] for t in types)
    if kind == "chow":
        if not is_yuan(types):
            raise GroupError(f"chow:{names} is not a 圆 (same-colour 将士相 / 车马炮, or 卒 of 3-4 colours)")
        return
    if len(types) != 1:
        raise GroupError(f"{kind}:{names} must name exactly one card")
    if kind == "table" and rank_of(types[0]) != JIANG:
        raise GroupError(f"table:{names} is not a 将 (only a drawn 将 goes to the table)")


def parse_exposed(text: str | None) -> list[ExposedGroup]:
    """Parse the ``kind:cards`` notation (``None`` or blank gives no groups)."""
    groups: list[ExposedGroup] = []
    if not text:
        return groups
    for item in text.split():
        if ":" not in item:
            raise GroupError(f"exposed group {item!r} is not of the form kind:cards")
        raw_kind, _, cards = item.partition(":")
        kind = KIND_ALIASES.get(raw_kind.strip().lower(), KIND_ALIASES.get(raw_kind.strip()))
        if kind is None:
            raise GroupError(f"unknown exposed group kind {raw_kind!r} (expected one of {', '.join(KINDS)})")
        names = [c for c in cards.split(",") if c.strip()]
        if not names:
            raise GroupError(f"exposed group {item!r} names no card")
        groups.append(ExposedGroup(kind, tuple(parse_type(n) for n in names)))
    return groups


def format_exposed(groups: Iterable[ExposedGroup]) -> str:
    """Inverse of :func:`parse_exposed`."""
    return " ".join(g.text() for g in groups)


def exposed_counts(groups: Iterable[ExposedGroup]) -> np.ndarray:
    """28-count vector of all exposed cards."""
    total = np.zeros(N_TYPES, dtype=np.int64)
    for g in groups:
        total += g.card_counts()
    return total


def check_copies(concealed: np.ndarray, groups: Sequence[ExposedGroup]) -> None:
    """Refuse a holding with more than 4 copies of a type across hand and exposed groups."""
    total = np.asarray(concealed, dtype=np.int64) + exposed_counts(groups)
    if (total > N_COPIES).any():
        t = int(np.argmax(total > N_COPIES))
        raise CardError(f"{int(total[t])} copies of {TYPE_NAMES[t]} across hand and exposed groups (at most 4 exist)")


def exposed_arrays(groups: Iterable[ExposedGroup]) -> tuple[np.ndarray, int]:
    """Kernel form: ``(exposed[4, 28], n_chow)``, rows 占 / 碰 / 楼 / table 将 counts."""
    arr = np.zeros((N_EXP_ROWS, N_TYPES), dtype=np.int64)
    n_chow = 0
    row = {"zhan": EXP_ZHAN, "peng": EXP_PENG, "kong": EXP_KONG, "table": EXP_TABLE}
    for g in groups:
        if g.kind == "chow":
            n_chow += 1
        else:
            arr[row[g.kind], g.types[0]] += 1
    return arr, n_chow
