"""A position: one player's decision as that player sees it (docs/analysis.md, "Positions").

A :class:`Position` holds what the player to act knows: its concealed cards, every seat's
exposed groups (table 将 included), the dead cards, the stock size, whose decision it is and
of which kind (a discard phase, or a claim on an active card from a discard or a draw), the
dealer, its own passed types, every seat's flags and the rule set.  The hidden cards (the other
concealed hands and the stock) are what analysis samples.

Two forms, both read by :func:`parse_position`:

* text, ``key=value`` fields separated by ``;``::

    seat=0; dealer=0; turn=discard; hand=YJ*3 RJ*3 ...; exposed1=peng:RC; dead=YZ GC; stock=12

  claims add ``card=RJ; source=discard; from=1`` (and optionally ``stage=chow``); a discard
  phase may say how its 31st card came, ``got=draw:RJ`` (``tianhu`` for the dealer's opening);
  ``locks=RJ GC`` (own passed types), ``xianggong=1,2`` (seats that are 相公), ``nowin=true`` (the
  player may no longer win: 有子不发 / 有车子不出车; another seat's flag is hidden),
  ``history=draw:1:RJ:0 discard:1:GC:0 ...`` (the public history of the deal so far, one
  ``event:seat:card:detail`` per row, as the engine records it: what the belief over the hidden
  cards, :mod:`simkit.runner.belief`, reads; a position of a played deal carries it, a typed one
  need not), and any rule option by name (``pass_locks_win=false``);
* JSON, an object with the same keys (``exposed``: a list of three strings; ``rules``: an
  object of rule options).

:meth:`Position.text` and :meth:`Position.to_json` write them back; a round trip gives an equal
position.  Anything impossible (a 5th copy, a holding of the wrong size for the phase, an
exposed group that cannot exist, a stock size that does not add up) raises
:class:`PositionError`, one line naming what is wrong.

>>> p = parse_position("seat=1; dealer=0; turn=claim; hand=YJ*4 YS*4 YX*4 YC*4 YM*4 YP*4 YZ*4 RJ*2; "
...                    "card=RJ; source=discard; from=0; stock=21")
>>> [action_text(a, p) for a in p.legal_actions()], p.concealed_sizes
(['pass', 'peng', 'zhan'], (30, 30, 30))
>>> parse_position(p.text()) == p
True
>>> parse_position(p.text().replace("stock=21", "stock=20"))
Traceback (most recent call last):
...
simkit.engine.position.PositionError: stock 20 does not add up: 112 cards - 31 seen - 60 in the other two hands leaves 21 (list every dead card)
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from simkit.cards import (
    JIANG,
    N_CARDS,
    N_COPIES,
    N_RANKS,
    N_SEATS,
    N_TYPES,
    TYPE_NAMES,
    format_counts,
    parse_counts,
    parse_type,
)
from simkit.deck import DEALER_CARDS, PLAYER_CARDS
from simkit.engine import kernel as E
from simkit.engine import layout as L
from simkit.errors import CardError, GroupError, RuleError, SimkitError, loads_json
from simkit.exposed import (
    EXP_BLOCK,
    ExposedGroup,
    exposed_arrays,
    exposed_counts,
    format_exposed,
    parse_exposed,
)
from simkit.rules import DrawnCardChowBy, RuleSet

DECISIONS = ("discard", "claim")
SOURCES = ("discard", "draw")  # L.SRC_DISCARD, L.SRC_DRAW
STAGES = ("peng", "chow", "chow_next")  # L.ST_PENG, L.ST_CHOW, L.ST_CHOW_NEXT
GOT = ("discard", "draw", "table", "tianhu")  # L.WIN_DISCARD .. L.WIN_TIANHU: how a discard phase's 31st card came
STOCK_CARDS = N_CARDS - DEALER_CARDS - 2 * PLAYER_CARDS  # 21
_FIELDS = ("seat", "dealer", "turn", "hand", "exposed0", "exposed1", "exposed2", "dead", "stock", "card", "source",
           "from", "stage", "got", "locks", "xianggong", "nowin", "history")
# the kinds of public-history rows (layout: the engine's S_HIST / O_HIST); a pass leaves none
HISTORY_KINDS = (L.E_DISCARD, L.E_DRAW, L.E_CLAIM, L.E_TABLE, L.E_XIANGGONG, L.E_WIN, L.E_NOWIN)


class PositionError(SimkitError):
    """An impossible or malformed position (one line naming what is wrong)."""


def _counts_tuple(counts: Sequence[int] | np.ndarray) -> tuple[int, ...]:
    return tuple(int(x) for x in np.asarray(counts, dtype=np.int64))


@dataclasses.dataclass(frozen=True)
class Position:
    """One decision of player ``seat``, as it sees the deal (see the module docstring).

    ``hand``, ``dead`` and ``locks``: 28 counts; ``exposed``: three tuples of
    :class:`~simkit.exposed.ExposedGroup`; ``decision``: ``"discard"`` or ``"claim"``; a claim
    has ``card`` (the active type), ``source`` and ``source_player`` and its ``stage``; a
    discard phase has ``got`` (how its 31st card came) and ``got_card`` (-1: unknown).
    Built by :func:`parse_position`, :func:`position_from_state` or the constructor; every
    construction is checked (:class:`PositionError`)."""

    seat: int
    hand: tuple[int, ...]
    exposed: tuple[tuple[ExposedGroup, ...], ...]
    dead: tuple[int, ...]
    stock: int
    dealer: int
    decision: str
    card: int = -1
    source: str = "discard"
    source_player: int = -1
    stage: str = ""
    got: str = "discard"
    got_card: int = -1
    locks: tuple[int, ...] = (0,) * N_TYPES
    xianggong: tuple[bool, ...] = (False,) * N_SEATS
    nowin: bool = False
    rules: RuleSet = dataclasses.field(default_factory=RuleSet)
    history: tuple[tuple[int, int, int, int], ...] = ()

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        # the legal actions, computed once by legal_actions(): a private attribute, no field (not
        # part of the position's value, equality, hash, repr or constructor)
        set_(self, "_legal_cache", None)
        set_(self, "hand", _counts_tuple(self.hand))
        set_(self, "dead", _counts_tuple(self.dead))
        set_(self, "locks", _counts_tuple(self.locks))
        set_(self, "exposed", tuple(tuple(groups) for groups in self.exposed))
        set_(self, "xianggong", tuple(bool(x) for x in self.xianggong))
        set_(self, "nowin", bool(self.nowin))
        set_(self, "history", _history_rows(self.history))
        _check(self)
        if self.decision == "claim" and not self.stage:
            set_(self, "stage", _claim_stage(self))
        _check_decision(self)

    # -- derived
    @property
    def cards_held(self) -> tuple[int, int, int]:
        """Cards each seat holds (concealed + exposed): 31 for the player in a discard phase and
        for a 相公, 30 otherwise."""
        out = []
        for q in range(N_SEATS):
            out.append(31 if (self.decision == "discard" and q == self.seat) or self.xianggong[q] else 30)
        return tuple(out)  # type: ignore[return-value]

    @property
    def concealed_sizes(self) -> tuple[int, int, int]:
        """Concealed cards of each seat (the others' are hidden, their number is public)."""
        return tuple(held - int(exposed_counts(self.exposed[q]).sum())  # type: ignore[return-value]
                     for q, held in enumerate(self.cards_held))

    def seen_counts(self) -> np.ndarray:
        """Copies of each type the player can see: own hand, every exposed card, the dead cards
        and the active card."""
        seen = np.array(self.hand, dtype=np.int64) + np.array(self.dead, dtype=np.int64)
        for q in range(N_SEATS):
            seen += exposed_counts(self.exposed[q])
        if self.decision == "claim":
            seen[self.card] += 1
        return seen

    def unseen_counts(self) -> np.ndarray:
        """Copies of each type in the other concealed hands and the stock."""
        return N_COPIES - self.seen_counts()

    # -- forms
    def to_dict(self) -> dict[str, Any]:
        """The JSON form as a mapping (only the rule options that differ from the defaults)."""
        out: dict[str, Any] = {"seat": self.seat, "dealer": self.dealer, "turn": self.decision,
                               "hand": format_counts(self.hand),
                               "exposed": [format_exposed(g) for g in self.exposed],
                               "dead": format_counts(self.dead), "stock": self.stock}
        if self.decision == "claim":
            out.update({"card": TYPE_NAMES[self.card], "source": self.source, "from": self.source_player,
                        "stage": self.stage})
        else:
            out["got"] = self.got + (f":{TYPE_NAMES[self.got_card]}" if self.got_card >= 0 else "")
        if any(self.locks):
            out["locks"] = format_counts(self.locks)
        seats = [q for q in range(N_SEATS) if self.xianggong[q]]
        if seats:
            out["xianggong"] = seats
        if self.nowin:
            out["nowin"] = True
        if self.history:
            out["history"] = [history_row_text(row) for row in self.history]
        default = RuleSet().to_dict()
        rules = {k: v for k, v in self.rules.to_dict().items() if default[k] != v}
        if rules:
            out["rules"] = rules
        return out

    def to_json(self) -> str:
        """The JSON form (one line)."""
        return json.dumps(self.to_dict(), ensure_ascii=False)

    def text(self, history: bool = True) -> str:
        """The compact text form (``key=value; ...``); ``history`` False leaves the public
        history out (a shorter line for people; the belief needs it)."""
        d = self.to_dict()
        parts = []
        for key in ("seat", "dealer", "turn", "hand"):
            parts.append(f"{key}={d[key]}")
        for q in range(N_SEATS):
            if d["exposed"][q]:
                parts.append(f"exposed{q}={d['exposed'][q]}")
        for key in ("dead", "stock", "card", "source", "from", "stage", "got", "locks"):
            if key in d:
                parts.append(f"{key}={d[key]}")
        if "xianggong" in d:
            parts.append(f"xianggong={','.join(str(q) for q in d['xianggong'])}")
        if self.nowin:
            parts.append("nowin=true")
        if self.history and history:
            parts.append(f"history={' '.join(d['history'])}")
        for key, value in d.get("rules", {}).items():
            parts.append(f"{key}={str(value).lower() if isinstance(value, bool) else value}")
        return "; ".join(parts)

    def observation(self) -> np.ndarray:
        """The engine's observation array (``layout.N_OBS``) of this position: what the policies
        and the determinisations of :mod:`simkit.policies.mc` read (no public history)."""
        return self._observation(self.stage)

    def _observation(self, stage: str) -> np.ndarray:
        """:meth:`observation` of a claim asked at ``stage`` (the stage being derived)."""
        obs = np.zeros(L.N_OBS, dtype=np.int64)
        me = self.seat
        obs[L.O_SEAT] = me
        obs[L.O_PLAYER] = me
        obs[L.O_DEALER] = self.dealer
        obs[L.O_STOCK_LEFT] = self.stock
        obs[L.O_CONC : L.O_CONC + N_TYPES] = self.hand
        for q in range(N_SEATS):
            exp, n_chow = exposed_arrays(self.exposed[q])
            obs[L.O_EXP + EXP_BLOCK * q : L.O_EXP + EXP_BLOCK * (q + 1)] = exp.ravel()
            obs[L.O_EXPCARDS + N_TYPES * q : L.O_EXPCARDS + N_TYPES * (q + 1)] = exposed_counts(self.exposed[q])
            obs[L.O_NCHOW + q] = n_chow
            obs[L.O_NCONC + q] = self.concealed_sizes[q]
            obs[L.O_XIANGGONG + q] = int(self.xianggong[q])
        obs[L.O_DEAD : L.O_DEAD + N_TYPES] = self.dead
        obs[L.O_LOCK + N_TYPES * me : L.O_LOCK + N_TYPES * (me + 1)] = self.locks
        obs[L.O_NOWIN + me] = int(self.nowin)
        obs[L.O_NHIST] = len(self.history)
        for i, row in enumerate(self.history):
            obs[L.O_HIST + L.HIST_WIDTH * i : L.O_HIST + L.HIST_WIDTH * (i + 1)] = row
        if self.decision == "claim":
            obs[L.O_PHASE] = L.PH_CLAIM
            obs[L.O_ACTIVE] = self.card
            obs[L.O_SOURCE] = SOURCES.index(self.source)
            obs[L.O_SOURCE_PLAYER] = self.source_player
            obs[L.O_STAGE] = STAGES.index(stage)
            obs[L.O_GAIN] = L.WIN_DISCARD
            obs[L.O_GAIN_TYPE] = -1
        else:
            obs[L.O_PHASE] = L.PH_DISCARD
            obs[L.O_ACTIVE] = -1
            obs[L.O_SOURCE_PLAYER] = -1
            obs[L.O_FIRST] = int(self.got == "tianhu")
            obs[L.O_GAIN] = GOT.index(self.got)
            obs[L.O_GAIN_TYPE] = self.got_card
        return obs

    def state(self) -> np.ndarray:
        """A full engine state consistent with the position: the unseen cards dealt to the other
        hands and the stock in card order (one determinisation; the legal actions and
        anything else the player can see do not depend on which)."""
        return self._state(self.stage)

    def _state(self, stage: str) -> np.ndarray:
        """:meth:`state` of a claim asked at ``stage``."""
        obs = self._observation(stage)
        s = np.zeros(L.N_STATE, dtype=np.int64)
        unseen = self.unseen_counts()
        pool = [t for t in range(N_TYPES) for _ in range(int(unseen[t]))]
        k = 0
        for q in range(N_SEATS):
            if q == self.seat:
                s[L.S_CONC + N_TYPES * q : L.S_CONC + N_TYPES * (q + 1)] = self.hand
                continue
            for _ in range(self.concealed_sizes[q]):
                s[L.S_CONC + N_TYPES * q + pool[k]] += 1
                k += 1
        s[L.S_STOCK_POS] = N_CARDS - self.stock
        for i in range(self.stock):
            s[L.S_DECK + N_CARDS - self.stock + i] = pool[k] * N_COPIES
            k += 1
        E.public_state(obs, s)
        for q in range(N_SEATS):
            for group in self.exposed[q]:
                kind = L.MELD_KIND_NAMES.index(group.kind)
                types = list(group.types) + [-1] * (4 - len(group.types))
                E.add_meld(s, q, kind, types[0], types[1], types[2], types[3])
        return s

    def legal_actions(self) -> list[int]:
        """The legal action ids of the player (dense ints of :mod:`simkit.engine.layout`), in
        increasing order.  Computed once per position; each call returns a new list."""
        legal: tuple[int, ...] | None = self._legal_cache  # type: ignore[attr-defined]
        if legal is None:
            legal = tuple(_legal(self.state(), self.rules))
            object.__setattr__(self, "_legal_cache", legal)
        return list(legal)


def _legal(s: np.ndarray, rules: RuleSet) -> list[int]:
    mask = np.zeros(L.N_ACTIONS, dtype=np.bool_)
    E.legal_mask(s, rules.to_array(), mask, E.new_engine_workspace())
    return [int(a) for a in np.flatnonzero(mask)]


# ---------------------------------------------------------------------------- checks


def _seat(value: Any, name: str) -> int:
    text = str(value).strip()
    if isinstance(value, bool) or text not in ("0", "1", "2"):
        raise PositionError(f"{name} must be a seat 0, 1 or 2, got {value!r}")
    return int(text)


def _check(p: Position) -> None:
    """Everything but the decision's legality: sizes, copies, stock arithmetic."""
    _seat(p.seat, "seat")
    _seat(p.dealer, "dealer")
    if p.decision not in DECISIONS:
        raise PositionError(f"turn must be discard or claim, got {p.decision!r}")
    if len(p.hand) != N_TYPES or len(p.dead) != N_TYPES or len(p.locks) != N_TYPES:
        raise PositionError("hand, dead and locks need 28 counts each")
    if len(p.exposed) != N_SEATS or len(p.xianggong) != N_SEATS:
        raise PositionError("exposed and xianggong need one entry per seat")
    for name in ("hand", "dead", "locks"):
        counts = np.array(getattr(p, name))
        if (counts < 0).any():
            raise PositionError(f"{name} has a negative count")
    if any(x not in (0, 1) for x in p.locks):
        raise PositionError("locks hold each passed type once")
    if not isinstance(p.rules, RuleSet):
        raise PositionError(f"rules must be a RuleSet, got {type(p.rules).__name__}")
    for q in range(N_SEATS):
        for group in p.exposed[q]:
            if not isinstance(group, ExposedGroup):
                raise PositionError(f"exposed{q} holds {group!r}, not an exposed group")
    if p.decision == "claim":
        if not 0 <= p.card < N_TYPES:
            raise PositionError(f"a claim needs the active card, got {p.card!r}")
        if p.source not in SOURCES:
            raise PositionError(f"source must be discard or draw, got {p.source!r}")
        _seat(p.source_player, "from")
        if p.stage and p.stage not in STAGES:
            raise PositionError(f"stage must be one of {', '.join(STAGES)}, got {p.stage!r}")
        if p.source == "discard" and p.seat == p.source_player:
            raise PositionError(f"seat {p.seat} discarded {TYPE_NAMES[p.card]}: it has no claim on it")
    else:
        if p.got not in GOT:
            raise PositionError(f"got must be one of {', '.join(GOT)}, got {p.got!r}")
        if p.got == "tianhu" and (p.seat != p.dealer or p.stock != STOCK_CARDS):
            raise PositionError("got=tianhu is the dealer's opening discard phase: the dealer's seat, a full stock")
        if p.got == "tianhu" and (played := _opening_problem(p)):
            raise PositionError(f"got=tianhu is the dealer's dealt hand before any play, but {played}")
        if not -1 <= p.got_card < N_TYPES:
            raise PositionError(f"got card must be a card type, got {p.got_card!r}")
        if p.xianggong[p.seat]:
            raise PositionError(f"seat {p.seat} is 相公: it has no discard phase")
    seen = p.seen_counts()
    if (seen > N_COPIES).any():
        t = int(np.argmax(seen > N_COPIES))
        raise PositionError(f"{int(seen[t])} copies of {TYPE_NAMES[t]} are seen (hand, exposed, dead, active card); "
                            f"{N_COPIES} exist")
    sizes = p.concealed_sizes
    held = p.cards_held
    if sizes[p.seat] != int(sum(p.hand)):
        exposed = held[p.seat] - sizes[p.seat]
        raise PositionError(f"seat {p.seat} holds {int(sum(p.hand))} concealed + {exposed} exposed cards; a "
                            f"{'discard phase' if p.decision == 'discard' and not p.xianggong[p.seat] else 'claim'} "
                            f"needs {held[p.seat]}")
    for q in range(N_SEATS):
        if sizes[q] < 0:
            raise PositionError(f"seat {q} shows {held[q] - sizes[q]} exposed cards; a hand holds {held[q]}")
    if not 0 <= p.stock <= STOCK_CARDS:
        raise PositionError(f"stock must be 0..{STOCK_CARDS} cards, got {p.stock}")
    others = sum(sizes[q] for q in range(N_SEATS) if q != p.seat)
    unseen = N_CARDS - int(seen.sum())
    if unseen - others != p.stock:
        raise PositionError(f"stock {p.stock} does not add up: {N_CARDS} cards - {int(seen.sum())} seen - {others} in "
                            f"the other two hands leaves {unseen - others} (list every dead card)")


def _opening_problem(p: Position) -> str | None:
    """What the position shows that only play makes (an exposed group, a passed type, a 相公
    seat, a lost right to win), which the dealer's opening (天胡: the dealt 31 cards, docs/rules.md
    §5-6) cannot hold; None when it shows none."""
    for q in range(N_SEATS):
        if p.exposed[q]:
            return (f"seat {q} shows exposed groups ({format_exposed(p.exposed[q])}): none exist before the first "
                    "discard")
    if any(p.locks):
        return "it has passed types (locks): no claim was offered before the first discard"
    if any(p.xianggong):
        return "a seat is 相公: nobody is before the first discard"
    if p.nowin:
        return "nowin is set: no claim was declined before the first discard"
    return None


def _claim_stage(p: Position) -> str:
    """The first claim stage at which the seat is the one asked and may claim (the engine's
    order: 碰 / 发子 player, then the 吃 player, then the drawer's next player)."""
    for stage in STAGES:
        if _stage_seat(p, stage) == p.seat and len(_legal(p._state(stage), p.rules)) > 1:
            return stage
    raise PositionError(f"seat {p.seat} has no claim on {TYPE_NAMES[p.card]} "
                        f"({p.source} of seat {p.source_player})")


def _stage_seat(p: Position, stage: str) -> int:
    """The seat asked at ``stage``, as far as the player can tell (the 碰 stage: itself when it
    holds two or three copies, else someone it cannot see or nobody)."""
    t, src = p.card, p.source_player
    if stage == "peng":
        if p.hand[t] in (2, 3) and not (p.source == "discard" and p.seat == src):
            return p.seat
        return -1
    if stage == "chow":
        if p.source == "discard":
            return (src + 1) % N_SEATS
        if t % N_RANKS == JIANG and not p.rules.drawn_jiang_chow:
            return -1
        return src
    if (p.source == "draw" and p.rules.drawn_card_chow_by == DrawnCardChowBy.DRAWER_THEN_NEXT
            and t % N_RANKS != JIANG):
        return (src + 1) % N_SEATS
    return -1


def history_row_text(row: Sequence[int]) -> str:
    """One public-history row as ``event:seat:card:detail`` (card ``-`` for none).

    >>> history_row_text((L.E_CLAIM, 2, 7, L.M_PENG))
    'claim:2:RJ:1'
    """
    kind, seat, card, detail = (int(x) for x in row)
    return f"{L.EVENT_NAMES[kind]}:{seat}:{TYPE_NAMES[card] if card >= 0 else '-'}:{detail}"


def _history_rows(rows: Any) -> tuple[tuple[int, int, int, int], ...]:
    """The public history as a tuple of checked 4-number rows (one line naming a bad row)."""
    if isinstance(rows, np.ndarray):
        rows = rows.tolist()
    if not isinstance(rows, (list, tuple)):
        raise PositionError(f"history must list rows (event, seat, card, detail), got {type(rows).__name__}")
    if len(rows) > L.MAX_HIST:
        raise PositionError(f"history has {len(rows)} rows; a deal makes at most {L.MAX_HIST}")
    out = []
    for i, row in enumerate(rows):
        try:
            kind, seat, card, detail = (int(x) for x in row)
        except (TypeError, ValueError):
            raise PositionError(f"history row {i + 1} is not 4 whole numbers: {row!r}") from None
        if kind not in HISTORY_KINDS or not 0 <= seat < N_SEATS or not -1 <= card < N_TYPES:
            raise PositionError(f"history row {i + 1} ({row!r}) is no public event (event, seat 0-2, card)")
        out.append((kind, seat, card, detail))
    return tuple(out)


def _parse_history(value: Any) -> tuple[tuple[int, int, int, int], ...]:
    """The ``history`` field: ``event:seat:card:detail`` items, space separated (text) or listed
    (JSON)."""
    items = value.split() if isinstance(value, str) else value
    if not isinstance(items, (list, tuple)):
        raise PositionError(f"history must list events (event:seat:card:detail), got {value!r}")
    rows = []
    for item in items:
        if not isinstance(item, str):
            rows.append(item)
            continue
        parts = item.split(":")
        if len(parts) != 4 or parts[0] not in L.EVENT_NAMES:
            raise PositionError(f"history item {item!r} is not event:seat:card:detail "
                                f"(events: {', '.join(L.EVENT_NAMES[k] for k in HISTORY_KINDS)})")
        try:
            card = -1 if parts[2] == "-" else parse_type(parts[2])
        except CardError as exc:
            raise PositionError(f"history item {item!r}: {exc}") from None
        rows.append((L.EVENT_NAMES.index(parts[0]), _int(parts[1], "history seat"), card,
                     _int(parts[3], "history detail")))
    return _history_rows(rows)


def _check_decision(p: Position) -> None:
    if p.decision == "claim":
        if _stage_seat(p, p.stage) != p.seat:
            raise PositionError(f"seat {p.seat} is not asked at the {p.stage} stage of {TYPE_NAMES[p.card]} "
                                f"({p.source} of seat {p.source_player})")
        if len(p.legal_actions()) <= 1:
            raise PositionError(f"seat {p.seat} has no claim on {TYPE_NAMES[p.card]} at the {p.stage} stage")
    elif not p.legal_actions():
        raise PositionError(f"seat {p.seat} has no legal discard (every concealed card is a 将)")


# ---------------------------------------------------------------------------- reading


def _flag_seats(value: Any, name: str) -> tuple[bool, ...]:
    if isinstance(value, str):
        items = [x for x in value.replace(",", " ").split() if x]
    elif isinstance(value, (list, tuple)):
        items = list(value)
    else:
        raise PositionError(f"{name} must list seats, got {value!r}")
    flags = [False] * N_SEATS
    for item in items:
        flags[_seat(item, name)] = True
    return tuple(flags)


def _flag(value: Any, name: str) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes"):
        return True
    if text in ("0", "false", "no", ""):
        return False
    raise PositionError(f"{name} must be true or false, got {value!r}")


def _counts(value: Any, name: str) -> np.ndarray:
    if value is None:
        return np.zeros(N_TYPES, dtype=np.int64)
    if not isinstance(value, str):
        raise PositionError(f"{name} must be cards in notation (RJ*2 GC ...), got {value!r}")
    try:
        return parse_counts(value)
    except CardError as exc:
        raise PositionError(f"{name}: {exc}") from None


def _int(value: Any, name: str) -> int:
    if isinstance(value, bool):
        raise PositionError(f"{name} must be a whole number, got {value!r}")
    try:
        return int(str(value).strip())
    except ValueError:
        raise PositionError(f"{name} must be a whole number, got {value!r}") from None


def position_from_mapping(mapping: Mapping[str, Any]) -> Position:
    """A :class:`Position` from the JSON form's mapping (see the module docstring)."""
    if not isinstance(mapping, Mapping):
        raise PositionError(f"a position is a JSON object, got {type(mapping).__name__}")
    data = dict(mapping)
    rule_items = data.pop("rules", None) or {}
    if not isinstance(rule_items, Mapping):
        raise PositionError(f"rules must be an object of rule options, got {type(rule_items).__name__}")
    rule_items = dict(rule_items)
    exposed = data.pop("exposed", None)
    if exposed is not None:
        if not isinstance(exposed, (list, tuple)) or len(exposed) != N_SEATS:
            raise PositionError("exposed must list three strings (one per seat)")
        for q in range(N_SEATS):
            data.setdefault(f"exposed{q}", exposed[q])
    for key in list(data):
        if key not in _FIELDS:
            if key in RuleSet.option_names():
                rule_items[key] = data.pop(key)
            else:
                raise PositionError(f"unknown position field {key!r} (known: {', '.join(_FIELDS)}, or a rule option)")
    for key in ("seat", "turn", "hand", "stock"):
        if key not in data:
            raise PositionError(f"the position has no {key}")
    try:
        rules = RuleSet.from_dict(rule_items) if rule_items else RuleSet()
    except RuleError as exc:
        raise PositionError(str(exc)) from None
    try:
        exposed_groups = tuple(tuple(parse_exposed(str(data.get(f"exposed{q}") or ""))) for q in range(N_SEATS))
    except (GroupError, CardError) as exc:
        raise PositionError(f"exposed: {exc}") from None
    turn = str(data["turn"]).strip()
    card, source, source_player, stage, got, got_card = -1, "discard", -1, "", "discard", -1
    if turn == "claim":
        for key in ("card", "from"):
            if key not in data:
                raise PositionError(f"a claim position needs {key}")
        try:
            card = parse_type(str(data["card"]).strip())
        except CardError as exc:
            raise PositionError(f"card: {exc}") from None
        source = str(data.get("source", "discard")).strip()
        source_player = _seat(data["from"], "from")
        stage = str(data.get("stage", "")).strip()
    elif turn == "discard":
        for key in ("card", "source", "from", "stage"):
            if key in data:
                raise PositionError(f"{key} belongs to a claim position, not a discard phase")
        how, _, what = str(data.get("got", "discard")).strip().partition(":")
        got = how
        if what:
            try:
                got_card = parse_type(what.strip())
            except CardError as exc:
                raise PositionError(f"got: {exc}") from None
    return Position(
        seat=_seat(data["seat"], "seat"), hand=_counts(data["hand"], "hand"), exposed=exposed_groups,
        dead=_counts(data.get("dead"), "dead"), stock=_int(data["stock"], "stock"),
        dealer=_seat(data.get("dealer", 0), "dealer"), decision=turn, card=card, source=source,
        source_player=source_player, stage=stage, got=got, got_card=got_card,
        locks=_counts(data.get("locks"), "locks"), xianggong=_flag_seats(data.get("xianggong", ()), "xianggong"),
        nowin=_flag(data.get("nowin", False), "nowin"), rules=rules,
        history=_parse_history(data.get("history", ())))


def parse_position(text: str) -> Position:
    """A :class:`Position` from its text or JSON form (see the module docstring)."""
    if not isinstance(text, str) or not text.strip():
        raise PositionError("a position is text (key=value; ...) or a JSON object; got nothing")
    text = text.strip()
    if text.startswith("{"):
        try:
            data = loads_json(text)
        except json.JSONDecodeError as exc:
            raise PositionError(f"the position is not valid JSON: {exc.msg} (line {exc.lineno} column {exc.colno})") \
                from None
        return position_from_mapping(data)
    data: dict[str, Any] = {}
    for item in text.replace("\n", ";").split(";"):
        if not item.strip():
            continue
        key, eq, value = item.partition("=")
        key = key.strip()
        if not eq or not key:
            raise PositionError(f"position field {item.strip()!r} is not key=value")
        if key in data:
            raise PositionError(f"position field {key!r} is given twice")
        data[key] = value.strip()
    return position_from_mapping(data)


def position_from_state(s: np.ndarray, rules: RuleSet) -> Position:
    """The position of the player to act in engine state ``s`` (a decision: a discard phase or
    a claim), as that player sees it."""
    phase = int(s[L.S_PHASE])
    if phase not in (L.PH_DISCARD, L.PH_CLAIM):
        raise PositionError("the state is at no decision (the deal is over or between steps)")
    me = int(s[L.S_PLAYER])
    exposed = []
    for q in range(N_SEATS):
        groups = []
        for kind_id, types in L.state_melds(s, q):
            kind = L.MELD_KIND_NAMES[kind_id]
            groups.append(ExposedGroup(kind, types[:1] if kind != "chow" else types))
        exposed.append(tuple(groups))
    common = dict(
        seat=me, hand=s[L.S_CONC + N_TYPES * me : L.S_CONC + N_TYPES * (me + 1)], exposed=tuple(exposed),
        dead=s[L.S_DEAD : L.S_DEAD + N_TYPES], stock=N_CARDS - int(s[L.S_STOCK_POS]), dealer=int(s[L.S_DEALER]),
        locks=s[L.S_LOCK + N_TYPES * me : L.S_LOCK + N_TYPES * (me + 1)],
        xianggong=s[L.S_XIANGGONG : L.S_XIANGGONG + N_SEATS], nowin=bool(s[L.S_NOWIN + me]), rules=rules,
        history=tuple(tuple(int(x) for x in s[L.S_HIST + L.HIST_WIDTH * i : L.S_HIST + L.HIST_WIDTH * (i + 1)])
                      for i in range(int(s[L.S_NHIST]))))
    if phase == L.PH_CLAIM:
        return Position(decision="claim", card=int(s[L.S_ACTIVE]), source=SOURCES[int(s[L.S_SOURCE])],
                        source_player=int(s[L.S_SOURCE_PLAYER]), stage=STAGES[int(s[L.S_STAGE])], **common)
    got = "tianhu" if s[L.S_FIRST] == 1 else GOT[int(s[L.S_GAIN])]
    return Position(decision="discard", got=got, got_card=int(s[L.S_GAIN_TYPE]) if got != "tianhu" else -1, **common)


# ---------------------------------------------------------------------------- actions in words


def claim_cards(action: int, card: int) -> tuple[int, ...]:
    """The card types of the group a claim ``action`` on ``card`` exposes (the card included).

    >>> [TYPE_NAMES[t] for t in claim_cards(L.A_CHOW_ZU + 3, parse_type("RZ"))]
    ['YZ', 'RZ', 'WZ']
    """
    colour, rank = divmod(card, N_RANKS)
    if action == L.A_PENG:
        return (card,) * 3
    if action == L.A_KONG:
        return (card,) * 4
    if action == L.A_ZHAN:
        return (card,) * 2
    if action == L.A_CHOW_TRIAD:
        first = colour * N_RANKS + (0 if rank <= 2 else 3)
        return tuple(range(first, first + 3))
    zu = N_RANKS - 1
    if action == L.A_CHOW_ZU4:
        return tuple(c * N_RANKS + zu for c in range(4))
    if L.A_CHOW_ZU <= action < L.A_CHOW_ZU4:
        return tuple(c * N_RANKS + zu for c in range(4) if c != action - L.A_CHOW_ZU)
    raise ValueError(f"action {action} is no claim")


def action_text(action: int, position: Position) -> str:
    """An action of ``position`` in words: ``discard RJ``, ``win``, ``pass``, ``peng``, ``kong``,
    ``zhan`` or ``chow YZ,RZ,WZ`` (the group's cards).  :func:`parse_action` reads it back."""
    if 0 <= action < N_TYPES:
        return f"discard {TYPE_NAMES[action]}"
    names = {L.A_WIN: "win", L.A_PASS: "pass", L.A_PENG: "peng", L.A_KONG: "kong", L.A_ZHAN: "zhan"}
    if action in names:
        return names[action]
    return "chow " + ",".join(TYPE_NAMES[t] for t in claim_cards(action, position.card))


_ACTION_ALIASES = {"win": L.A_WIN, "hu": L.A_WIN, "胡": L.A_WIN, "pass": L.A_PASS, "过": L.A_PASS,
                   "peng": L.A_PENG, "碰": L.A_PENG, "kong": L.A_KONG, "发子": L.A_KONG, "zhan": L.A_ZHAN,
                   "占": L.A_ZHAN}


def parse_action(text: str, position: Position) -> int:
    """The legal action of ``position`` that ``text`` names (:func:`action_text`'s words, or a
    card name alone for a discard, ``chow`` alone when one 吃 is legal); a one-line
    :class:`PositionError` otherwise."""
    words = str(text).strip().split(None, 1)
    legal = position.legal_actions()
    if not words:
        raise PositionError("an action is needed (discard RJ, win, pass, peng, kong, zhan, chow ...)")
    head = words[0].lower() if words[0].isascii() else words[0]
    rest = words[1].strip() if len(words) > 1 else ""
    if head in ("discard", "打") or (not rest and head not in _ACTION_ALIASES and head not in ("chow", "吃")):
        name = rest if head in ("discard", "打") else words[0]
        try:
            action = parse_type(name)
        except CardError as exc:
            raise PositionError(f"action {text!r}: {exc}") from None
    elif head in _ACTION_ALIASES and not rest:
        action = _ACTION_ALIASES[head]
    elif head in ("chow", "吃"):
        chows = [a for a in legal if a >= L.A_CHOW_TRIAD]
        if rest:
            try:
                wanted = sorted(parse_type(x) for x in rest.replace(",", " ").split())
            except CardError as exc:
                raise PositionError(f"action {text!r}: {exc}") from None
            chows = [a for a in chows if sorted(claim_cards(a, position.card)) == wanted]
        if len(chows) != 1:
            options = ", ".join(action_text(a, position) for a in legal if a >= L.A_CHOW_TRIAD) or "none"
            raise PositionError(f"action {text!r} names {'no' if not chows else 'more than one'} legal 吃 "
                                f"(legal: {options})")
        action = chows[0]
    else:
        raise PositionError(f"unknown action {text!r} (discard RJ, win, pass, peng, kong, zhan, chow ...)")
    if action not in legal:
        raise PositionError(f"action {text!r} is not legal here (legal: "
                            f"{', '.join(action_text(a, position) for a in legal)})")
    return action


def decision_kind(position: Position) -> str:
    """``claim``, ``win`` (a discard phase in which the player may win) or ``discard``."""
    if position.decision == "claim":
        return "claim"
    return "win" if L.A_WIN in position.legal_actions() else "discard"
