"""Array layout of the deal engine: state offsets, phases, actions, events, observations.

A deal's whole state is one ``int64`` array (``N_STATE`` long) with the named offsets below,
so that numba kernels copy, clone and pass it around as plain data (the rule set stays apart,
in :class:`simkit.rules.RuleSet`: OpenSpiel's Game/State split).

Actions are dense ints (``N_ACTIONS`` of them):

====================  ==========================================================
``0..27``             discard one concealed card of that type
``A_WIN``             declare a win (discard phase)
``A_PASS``            take no claim on the active card
``A_PENG``            碰: two concealed copies + the active card, exposed
``A_KONG``            发子: three concealed copies + the active card, a 楼
``A_ZHAN``            占: one concealed copy + the active card, a 占 pair
``A_CHOW_TRIAD``      吃 a 将士相 / 车马炮 圆 with the two other types of the colour
``A_CHOW_ZU + c``     吃 a 3-colour 卒 圆 leaving out colour ``c`` (c != the card's colour)
``A_CHOW_ZU4``        吃 a 4-colour 卒 圆 with three concealed 卒 of the other colours
====================  ==========================================================

>>> decode_action(A_PENG), encode_action("discard", 7)
(('peng', -1), 7)
"""

from __future__ import annotations

import dataclasses
from typing import Sequence

from simkit.cards import N_CARDS, N_COLOURS, N_SEATS, N_TYPES, TYPE_NAMES, parse_type
from simkit.exposed import EXP_BLOCK


@dataclasses.dataclass(frozen=True)
class Regions:
    """Named regions of a flat array laid one after the other (:func:`chain_regions`).

    ``table``: ``(name, offset, size)`` of each region in order; ``offsets``: the offsets alone,
    in the same order (to unpack into the module's named constants); ``base``: the offset of
    the first region (where the layout it extends ends); ``size``: the end of the last one."""

    table: tuple[tuple[str, int, int], ...]
    base: int
    size: int

    @property
    def offsets(self) -> tuple[int, ...]:
        return tuple(offset for _, offset, _ in self.table)


def chain_regions(sizes: Sequence[tuple[str, int]], base: int = 0) -> Regions:
    """Lay the regions ``sizes`` (ordered ``(name, size)`` pairs) one after the other from
    offset ``base``: each starts where the previous one ends.

    >>> r = chain_regions([("a", 3), ("b", 2)], base=10)
    >>> r.offsets, r.size, r.table
    ((10, 13), 15, (('a', 10, 3), ('b', 13, 2)))
    """
    if base < 0:
        raise ValueError(f"a layout's base offset must be >= 0, got {base}")
    table = []
    offset = base
    for name, size in sizes:
        if any(name == other for other, _, _ in table):
            raise ValueError(f"region {name!r} is named twice")
        if size < 0:
            raise ValueError(f"region {name!r} has a negative size {size}")
        table.append((name, offset, size))
        offset += size
    return Regions(tuple(table), base, offset)


# ---- actions
A_DISCARD = 0  # + type
A_WIN = A_DISCARD + N_TYPES  # 28
A_PASS = A_WIN + 1  # 29
A_PENG = A_PASS + 1  # 30
A_KONG = A_PENG + 1  # 31
A_ZHAN = A_KONG + 1  # 32
A_CHOW_TRIAD = A_ZHAN + 1  # 33
A_CHOW_ZU = A_CHOW_TRIAD + 1  # 34, + colour left out (34..37)
A_CHOW_ZU4 = A_CHOW_ZU + N_COLOURS  # 38
N_ACTIONS = A_CHOW_ZU4 + 1  # 39

# ---- phases
PH_DISCARD = 0  # S_PLAYER holds 31 cards: win or discard
PH_CLAIM = 1  # S_PLAYER decides on the active card (stage S_STAGE)
PH_OVER = 2
PH_DRAW = 3  # internal: S_PLAYER draws next (never a decision)
PH_RESOLVE = 4  # internal: looking for the next claimer of the active card (never a decision)

# claim stages for the active card
ST_PENG = 0  # the 碰 / 发子 player (with the 吃/占 options too if they are also the chow player)
ST_CHOW = 1  # the chow player: next of the discarder, or the drawer
ST_CHOW_NEXT = 2  # drawer's next player (rule drawn_card_chow_by=drawer_then_next)
ST_DONE = 3

# source of the active card
SRC_DISCARD = 0
SRC_DRAW = 1

# how the winner got the 31st card
WIN_NONE = -1
WIN_DISCARD = 0  # claimed a discard
WIN_DRAW = 1  # claimed a drawn card
WIN_TABLE = 2  # a drawn 将 went to the table
WIN_TIANHU = 3  # dealer's dealt 31 cards
WIN_KIND_NAMES = ("discard", "draw", "table", "tianhu")

# exposed meld kinds in the meld log
M_CHOW, M_PENG, M_KONG, M_ZHAN, M_TABLE = 0, 1, 2, 3, 4
MELD_KIND_NAMES = ("chow", "peng", "kong", "zhan", "table")
MAX_MELDS = 24
MELD_TYPES = N_COLOURS  # the most types a meld holds (a 4-colour 卒 圆)
MELD_WIDTH = 1 + MELD_TYPES  # kind, type0..type3 (-1 unused)

# ---- public history: what every player has seen happen, in order, one row (kind, player, type,
# detail) per event; kind is an E_* code below: E_DRAW (the drawn card is shown), E_DISCARD,
# E_CLAIM (detail: the meld kind M_*), E_TABLE (a drawn 将 to the table), E_XIANGGONG, E_NOWIN
# (detail: reason), E_WIN (detail: win kind).  Passes are not in it: a pass shows nothing (a
# player who could not claim and one who chose not to look the same).  At most 21 draws (112 -
# 31 - 2 x 30 stock cards), 114 discards (each takes one of the 93 dealt or 21 drawn cards out
# of a hand), 135 claims (one per drawn or discarded card), 21 table 将, 3 相公, 6 flags and one
# win: 301 rows, so MAX_HIST = 320 never overflows.
MAX_HIST = 320
HIST_WIDTH = 4

# ---- state offsets
S_CONC = 0  # 3 x 28 concealed counts
S_EXP = S_CONC + N_SEATS * N_TYPES  # 3 x 4 x 28 exposed group counts (占, 碰, 楼, table 将)
S_EXPCARDS = S_EXP + N_SEATS * EXP_BLOCK  # 3 x 28 exposed cards per type (all melds, chows included)
S_NCHOW = S_EXPCARDS + N_SEATS * N_TYPES  # 3 exposed 圆 counts
S_DEAD = S_NCHOW + N_SEATS  # 28 dead cards per type
S_LOCK = S_DEAD + N_TYPES  # 3 x 28 passed types (docs/rules.md §7: recorded under pass_locks_type / pass_locks_win)
S_DECK = S_LOCK + N_SEATS * N_TYPES  # 112 card ids in dealing order
S_STOCK_POS = S_DECK + N_CARDS  # index in the deck of the next stock card
S_PHASE = S_STOCK_POS + 1
S_PLAYER = S_PHASE + 1  # player to act
S_ACTIVE = S_PLAYER + 1  # active card type or -1
S_ACTIVE_ID = S_ACTIVE + 1  # its card id
S_SOURCE = S_ACTIVE_ID + 1  # SRC_*
S_SOURCE_PLAYER = S_SOURCE + 1  # discarder / drawer
S_STAGE = S_SOURCE_PLAYER + 1  # ST_* of the claim being decided
S_DECIDED = S_STAGE + 1  # bit mask of players who already decided on the active card
S_XIANGGONG = S_DECIDED + 1  # 3 flags: 相公
S_NOWIN = S_XIANGGONG + N_SEATS  # 3 flags: can no longer win (有子不发 / 有车子不出车)
S_DEALER = S_NOWIN + N_SEATS
S_FIRST = S_DEALER + 1  # 1 during the dealer's opening discard phase
S_GAIN = S_FIRST + 1  # WIN_* way the discard-phase player got the 31st card
S_GAIN_TYPE = S_GAIN + 1  # type of the card that brought the 31st card (claimed or table 将), -1: none
S_TURNS = S_GAIN_TYPE + 1  # discard phases played
S_DRAWS = S_TURNS + 1  # cards drawn
S_CLAIMS = S_DRAWS + 1  # claims made
S_WINNER = S_CLAIMS + 1  # -1: none (yet, or 穿牌)
S_WIN_KIND = S_WINNER + 1
S_HU = S_WIN_KIND + 1
S_LOU = S_HU + 1
S_STEPS = S_LOU + 1
S_UNITS = S_STEPS + 1
S_PATTERNS = S_UNITS + 1
S_PAYOFF = S_PATTERNS + 1  # 3
S_NMELDS = S_PAYOFF + N_SEATS  # 3
S_MELDS = S_NMELDS + N_SEATS  # 3 x MAX_MELDS x MELD_WIDTH
S_NHIST = S_MELDS + N_SEATS * MAX_MELDS * MELD_WIDTH  # rows of the public history so far
S_HIST = S_NHIST + 1  # MAX_HIST x HIST_WIDTH public history (see below)
N_STATE = S_HIST + MAX_HIST * HIST_WIDTH

# ---- observation offsets (what one player may see)
O_SEAT = 0
O_PHASE = 1
O_PLAYER = 2
O_ACTIVE = 3
O_SOURCE = 4
O_SOURCE_PLAYER = 5
O_STAGE = 6
O_STOCK_LEFT = 7
O_FIRST = 8
O_DEALER = 9
O_CONC = 10  # own concealed counts (28)
O_EXP = O_CONC + N_TYPES  # 3 x 4 x 28 exposed group counts of every player
O_EXPCARDS = O_EXP + N_SEATS * EXP_BLOCK  # 3 x 28 exposed cards of every player
O_NCHOW = O_EXPCARDS + N_SEATS * N_TYPES  # 3
O_NCONC = O_NCHOW + N_SEATS  # 3: number of concealed cards of each player
O_DEAD = O_NCONC + N_SEATS  # 28
O_LOCK = O_DEAD + N_TYPES  # 3 x 28
O_XIANGGONG = O_LOCK + N_SEATS * N_TYPES  # 3
O_NOWIN = O_XIANGGONG + N_SEATS  # 3
O_DECIDED = O_NOWIN + N_SEATS  # players who already decided on the active card (bit mask)
O_GAIN = O_DECIDED + 1  # how the discard-phase player got the 31st card (WIN_*)
O_GAIN_TYPE = O_GAIN + 1  # type of the card that brought the 31st card, -1: none
O_NHIST = O_GAIN_TYPE + 1  # rows of the public history
O_HIST = O_NHIST + 1  # MAX_HIST x HIST_WIDTH: the public history, in order (rows past O_NHIST are 0)
# an O_NHIST that no observation has: makes observe rewrite the whole history region.  Whoever
# reuses one observation array for a new deal sets it first (observe copies only the rows added
# since an earlier observation of the same deal)
O_NHIST_UNKNOWN = MAX_HIST + 1
N_OBS = O_HIST + MAX_HIST * HIST_WIDTH

# ---- events (replay log): kind, player, card type, a, b, c
E_DISCARD = 0  # player, type
E_DRAW = 1  # player, type
E_CLAIM = 2  # player, type, meld kind (M_*), meld slot
E_PASS = 3  # player, type, stage
E_TABLE = 4  # player, type (a drawn 将 to the table)
E_XIANGGONG = 5  # player
E_WIN = 6  # player, -, win kind
E_EXHAUSTED = 7  # 穿牌
E_NOWIN = 8  # player, type, reason (0 有子不发, 1 有车子不出车)
EVENT_WIDTH = 6
EVENT_NAMES = ("discard", "draw", "claim", "pass", "table", "xianggong", "win", "exhausted", "nowin")

_CLAIM_NAMES = {A_PENG: "peng", A_KONG: "kong", A_ZHAN: "zhan", A_CHOW_TRIAD: "chow", A_CHOW_ZU4: "chow"}


def action_name(action: int) -> str:
    """Readable name of an action id.

    >>> action_name(7), action_name(A_WIN), action_name(A_CHOW_ZU + 2)
    ('discard RJ', 'win', 'chow 卒 without colour 2')
    """
    kind, arg = decode_action(action)
    if kind == "discard":
        return f"discard {TYPE_NAMES[arg]}"
    if kind == "chow_zu":
        return f"chow 卒 without colour {arg}"
    return kind


def decode_action(action: int) -> tuple[str, int]:
    """``(kind, argument)`` of an action id; argument is a type, a colour or -1."""
    a = int(action)
    if 0 <= a < N_TYPES:
        return "discard", a
    if a in (A_CHOW_ZU, A_CHOW_ZU + 1, A_CHOW_ZU + 2, A_CHOW_ZU + 3):
        return "chow_zu", a - A_CHOW_ZU
    names = {A_WIN: "win", A_PASS: "pass", A_PENG: "peng", A_KONG: "kong", A_ZHAN: "zhan",
             A_CHOW_TRIAD: "chow_triad", A_CHOW_ZU4: "chow_zu4"}
    if a in names:
        return names[a], -1
    raise ValueError(f"unknown action id {action} (0..{N_ACTIONS - 1})")


def encode_action(kind: str, argument: int | str = -1) -> int:
    """Action id of ``(kind, argument)``; a discard takes a type index or card name.

    >>> encode_action("discard", "RJ"), encode_action("chow_zu", 1), encode_action("win")
    (7, 35, 28)
    """
    if kind == "discard":
        t = parse_type(argument) if isinstance(argument, str) else int(argument)
        if not 0 <= t < N_TYPES:
            raise ValueError(f"discard needs a card type 0..27, got {argument!r}")
        return A_DISCARD + t
    if kind == "chow_zu":
        if not 0 <= int(argument) < N_COLOURS:
            raise ValueError(f"chow_zu needs the colour left out (0..3), got {argument!r}")
        return A_CHOW_ZU + int(argument)
    ids = {"win": A_WIN, "pass": A_PASS, "peng": A_PENG, "kong": A_KONG, "zhan": A_ZHAN,
           "chow_triad": A_CHOW_TRIAD, "chow_zu4": A_CHOW_ZU4}
    if kind not in ids:
        raise ValueError(f"unknown action kind {kind!r}")
    return ids[kind]


def state_melds(state: Sequence[int], player: int) -> list[tuple[int, tuple[int, ...]]]:
    """A player's exposed groups read out of an engine state, in the order they were laid:
    ``(kind, types)``, kind an index of :data:`MELD_KIND_NAMES`, types the meld row's types
    without its unused ``-1`` slots.  The one reader of ``S_MELDS`` (positions, the ``env``
    and the replay log all use it)."""
    out = []
    for k in range(int(state[S_NMELDS + player])):
        base = S_MELDS + (player * MAX_MELDS + k) * MELD_WIDTH
        out.append((int(state[base]), tuple(int(x) for x in state[base + 1 : base + MELD_WIDTH] if x >= 0)))
    return out
