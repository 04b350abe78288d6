"""Cards of 四色牌: 28 types x 4 copies = 112 cards (docs/rules.md §1).

A card *type* is ``colour * 7 + rank`` with colours Y R W G (黄 红 白 绿) and ranks
J S X C M P Z (将 士 相 车 马 炮 卒).  A card *id* is ``type * 4 + copy`` (0..111).

A holding is represented either as a 28-count vector (``numpy.int64`` array, copies of
each type) or as a 112-bit bitset held in two ``uint64`` words: bit ``id`` of the pair
``(low, high)`` with ids 0..63 in ``low`` and 64..111 in ``high``.  Type ``t`` owns the
nibble of bits ``4t..4t+3``, so types 0..15 live in ``low`` and 16..27 in ``high``.

>>> int(parse_counts("RJ*3 RS 红将")[7])
4
>>> format_counts(parse_counts("RX RJ RS RJ"))
'RJ*2 RS RX'
"""

from __future__ import annotations

import functools
import re
from typing import Iterable, Sequence

import numpy as np

from simkit.errors import CardError

N_COLOURS = 4
N_RANKS = 7
N_TYPES = N_COLOURS * N_RANKS  # 28
N_COPIES = 4
N_CARDS = N_TYPES * N_COPIES  # 112
N_SEATS = 3  # players at the table
TRIAD_SIZE = 3  # ranks of a triad: 将士相 (JIANG..XIANG) or 车马炮 (CHE..PAO) of one colour

COLOUR_LETTERS = "YRWG"
RANK_LETTERS = "JSXCMPZ"
COLOUR_CHINESE = "黄红白绿"
RANK_CHINESE = "将士相车马炮卒"

YELLOW, RED, WHITE, GREEN = 0, 1, 2, 3
JIANG, SHI, XIANG, CHE, MA, PAO, ZU = 0, 1, 2, 3, 4, 5, 6
FAT_RANKS = (JIANG, CHE, ZU)

TYPE_NAMES: tuple[str, ...] = tuple(
    COLOUR_LETTERS[c] + RANK_LETTERS[r] for c in range(N_COLOURS) for r in range(N_RANKS)
)
TYPE_NAMES_CHINESE: tuple[str, ...] = tuple(
    COLOUR_CHINESE[c] + RANK_CHINESE[r] for c in range(N_COLOURS) for r in range(N_RANKS)
)

_NAME_TO_TYPE: dict[str, int] = {}
for _t, (_latin, _chinese) in enumerate(zip(TYPE_NAMES, TYPE_NAMES_CHINESE)):
    _NAME_TO_TYPE[_latin] = _t
    _NAME_TO_TYPE[_chinese] = _t

_TOKEN = re.compile(r"^(?P<name>[^*\s]+?)(?:\*(?P<count>\d+))?$")


def card_type(colour: int, rank: int) -> int:
    """Type index of a (colour, rank) pair.

    >>> card_type(RED, JIANG)
    7
    """
    return colour * N_RANKS + rank


def colour_of(card_type_index: int) -> int:
    """Colour (0..3) of a type index."""
    return card_type_index // N_RANKS


def rank_of(card_type_index: int) -> int:
    """Rank (0..6) of a type index."""
    return card_type_index % N_RANKS


def is_fat(card_type_index: int) -> bool:
    """True for the fat (肥) ranks 将, 车 and 卒.

    >>> is_fat(parse_type("GC")), is_fat(parse_type("GM"))
    (True, False)
    """
    return rank_of(card_type_index) in FAT_RANKS


def is_jiang(card_type_index: int) -> bool:
    """True for a 将 of any colour."""
    return rank_of(card_type_index) == JIANG


def parse_type(name: str) -> int:
    """Type index of one card name, Latin (``RJ``, case-insensitive) or Chinese (``红将``).

    >>> parse_type("rj"), parse_type("绿卒")
    (7, 27)
    """
    key = name.strip()
    t = _NAME_TO_TYPE.get(key.upper(), _NAME_TO_TYPE.get(key))
    if t is None:
        raise CardError(f"unknown card {name!r} (expected e.g. 'RJ' or '红将')")
    return t


def type_name(card_type_index: int, chinese: bool = False) -> str:
    """Name of a type index.

    >>> type_name(7), type_name(7, chinese=True)
    ('RJ', '红将')
    """
    if not 0 <= card_type_index < N_TYPES:
        raise CardError(f"card type index {card_type_index} out of range 0..27")
    return TYPE_NAMES_CHINESE[card_type_index] if chinese else TYPE_NAMES[card_type_index]


def parse_types(text: str) -> list[int]:
    """Parse a whitespace-separated card list into a flat list of type indices.

    ``RJ*3`` expands to three entries.  Commas also separate cards.

    >>> parse_types("RJ*2 YS")
    [7, 7, 1]
    """
    out: list[int] = []
    for token in text.replace(",", " ").split():
        t, count = _parse_token(token)
        out.extend([t] * count)
    return out


@functools.lru_cache(maxsize=4096)
def _parse_token(token: str) -> tuple[int, int]:
    """(type, count) of one card token (``RJ``, ``红将``, ``rj*3``); memoised, as a scored
    file repeats the same few hundred tokens (an error is raised again each time)."""
    m = _TOKEN.match(token)
    if m is None:
        raise CardError(f"malformed card token {token!r}")
    t = parse_type(m.group("name"))
    count = int(m.group("count")) if m.group("count") is not None else 1
    if count < 1:
        raise CardError(f"card token {token!r} has a count below 1")
    if count > N_COPIES:
        raise CardError(f"{count} copies of {TYPE_NAMES[t]} (at most {N_COPIES} exist)")
    return t, count


def parse_count_list(text: str, max_copies: int = N_COPIES) -> list[int]:
    """:func:`parse_counts` as a plain list of 28 ints (the same checks and errors), for
    callers that handle many hands in Python.

    >>> parse_count_list("YJ*2 GZ")[:2]
    [2, 0]
    """
    counts = [0] * N_TYPES
    for token in text.replace(",", " ").split():
        t, count = _parse_token(token)
        counts[t] += count
    if max(counts) > max_copies:
        t = next(t for t, n in enumerate(counts) if n > max_copies)
        raise CardError(f"{counts[t]} copies of {TYPE_NAMES[t]} (at most {max_copies} exist)")
    return counts


def parse_counts(text: str, max_copies: int = N_COPIES) -> np.ndarray:
    """Parse a hand into a 28-count vector, refusing more than ``max_copies`` of a type.

    >>> parse_counts("YJ*2 GZ").tolist()[:2], int(parse_counts("YJ*2 GZ").sum())
    ([2, 0], 3)
    >>> parse_counts("RJ*5")
    Traceback (most recent call last):
    ...
    simkit.errors.CardError: 5 copies of RJ (at most 4 exist)
    """
    return np.array(parse_count_list(text, max_copies), dtype=np.int64)


def check_counts(counts: Sequence[int] | np.ndarray, max_copies: int = N_COPIES) -> np.ndarray:
    """Validate a 28-count vector and return it as an int64 array."""
    arr = np.asarray(counts)
    if arr.shape != (N_TYPES,):
        raise CardError(f"a count vector needs {N_TYPES} entries, got shape {arr.shape}")
    if not np.issubdtype(arr.dtype, np.integer):
        if not np.all(np.equal(np.mod(arr, 1), 0)):
            raise CardError("card counts must be integers")
    arr = arr.astype(np.int64)
    if (arr < 0).any():
        t = int(np.argmax(arr < 0))
        raise CardError(f"negative count of {TYPE_NAMES[t]}")
    if (arr > max_copies).any():
        t = int(np.argmax(arr > max_copies))
        raise CardError(f"{int(arr[t])} copies of {TYPE_NAMES[t]} (at most {max_copies} exist)")
    return arr


def format_counts(counts: Sequence[int] | np.ndarray, chinese: bool = False) -> str:
    """Text form of a count vector in type order, ``RJ*3`` for repeats.

    >>> format_counts(parse_counts("RS RJ*3"), chinese=True)
    '红将*3 红士'
    """
    parts = []
    for t, n in enumerate(np.asarray(counts).tolist()):
        if n == 1:
            parts.append(type_name(t, chinese))
        elif n > 1:
            parts.append(f"{type_name(t, chinese)}*{n}")
    return " ".join(parts)


def format_types(types: Iterable[int], chinese: bool = False) -> str:
    """Text form of a list of type indices (kept in the given order, no ``*n``)."""
    return " ".join(type_name(t, chinese) for t in types)


# ---------------------------------------------------------------------------
# card ids and bitsets
# ---------------------------------------------------------------------------

WORD_BITS = 64  # a bitset word (uint64): ids 0..63 in ``low``, the others in ``high``
TYPES_PER_WORD = WORD_BITS // N_COPIES  # 16 types (one N_COPIES-bit group each) per word
HIGH_BITS = N_CARDS - WORD_BITS  # 48 ids in ``high``


def card_id(card_type_index: int, copy: int) -> int:
    """Card id (0..N_CARDS - 1) of copy ``copy`` (0..N_COPIES - 1) of a type."""
    return card_type_index * N_COPIES + copy


def type_of_card(card_id_value: int) -> int:
    """Type index of a card id."""
    return card_id_value // N_COPIES


def counts_to_bitset(counts: Sequence[int] | np.ndarray) -> tuple[int, int]:
    """Canonical bitset of a count vector: the lowest copies of each type are set.

    >>> counts_to_bitset(parse_counts("YJ*2"))
    (3, 0)
    """
    arr = check_counts(counts)
    low = 0
    high = 0
    for t in range(N_TYPES):
        nibble = (1 << int(arr[t])) - 1
        if t < TYPES_PER_WORD:
            low |= nibble << (N_COPIES * t)
        else:
            high |= nibble << (N_COPIES * (t - TYPES_PER_WORD))
    return low, high


def bitset_to_counts(low: int, high: int) -> np.ndarray:
    """28-count vector of a bitset ``(low, high)``.

    >>> int(bitset_to_counts(*counts_to_bitset(parse_counts("GZ*3 YJ"))).sum())
    4
    """
    low = int(low)
    high = int(high)
    if low < 0 or low >= 1 << WORD_BITS or high < 0 or high >= 1 << HIGH_BITS:
        raise CardError(f"a bitset is (low < 2**{WORD_BITS}, high < 2**{HIGH_BITS})")
    counts = np.zeros(N_TYPES, dtype=np.int64)
    for t in range(N_TYPES):
        word, shift = (low, N_COPIES * t) if t < TYPES_PER_WORD else (high, N_COPIES * (t - TYPES_PER_WORD))
        counts[t] = bin((word >> shift) & ((1 << N_COPIES) - 1)).count("1")
    return counts


def ids_to_counts(card_ids: Iterable[int]) -> np.ndarray:
    """28-count vector of a collection of card ids."""
    counts = np.zeros(N_TYPES, dtype=np.int64)
    for cid in card_ids:
        cid = int(cid)
        if not 0 <= cid < N_CARDS:
            raise CardError(f"card id {cid} out of range 0..{N_CARDS - 1}")
        counts[cid // N_COPIES] += 1
    return counts


def ids_to_bitset(card_ids: Iterable[int]) -> tuple[int, int]:
    """Bitset of a collection of distinct card ids."""
    low = 0
    high = 0
    for cid in card_ids:
        cid = int(cid)
        if not 0 <= cid < N_CARDS:
            raise CardError(f"card id {cid} out of range 0..{N_CARDS - 1}")
        if cid < WORD_BITS:
            if low >> cid & 1:
                raise CardError(f"card id {cid} given twice")
            low |= 1 << cid
        else:
            if high >> (cid - WORD_BITS) & 1:
                raise CardError(f"card id {cid} given twice")
            high |= 1 << (cid - WORD_BITS)
    return low, high
