"""Events on a dealt hand and their exact probabilities (combinatorics).

The Monte Carlo estimates of the same events are :mod:`simkit.studies.probability`; the
other seats' hands given one's own, by Monte Carlo, :mod:`simkit.studies.conditional`.

A seat's dealt hand is a uniformly random set of ``hand_size`` of the 112 cards
(docs/rules.md §1, §5): 31 cards for the dealer (seat 0), 30 for seats 1 and 2.  An *event* is
a property of that hand's 28-count vector ``n[t]`` (copies of type ``t`` held, 0..4).  All
events are about the cards *held*; none says that a group is played, exposed or scored:
"holds the components of a 长车" means the cards are there, not that the hand wins with one.

Events (name, parameter, meaning; "component" is docs/rules.md §2: k = 2..4 identical cards):

``jiang_at_least_k`` (k = 0..16)
    holds at least k 将 cards (any colours): ``n[YJ]+n[RJ]+n[WJ]+n[GJ] >= k``.
``pairs_at_least_k`` (k = 0..28)
    at least k types held two or more times (types that can form a component).
``zi_at_least_k`` (k = 0..28)
    at least k types held exactly three times (dealt 子, docs/rules.md §2).
``nao_at_least_k`` (k = 0..28)
    at least k types held four times (dealt 闹, docs/rules.md §2).
``nao``
    holds all four copies of at least one type (a 闹) = ``nao_at_least_k`` with k = 1.
``long_chariot_jiang`` / ``long_chariot_zu``
    holds >= 2 copies of the 将 (resp. 卒) of each of the four colours: the components of a
    将 (resp. 卒) 长车 (docs/rules.md §3).
``long_chariot``
    either of the two.
``fat_chariot_jiang`` / ``fat_chariot_zu``
    holds >= 2 copies of the 将 (resp. 卒) in at least three colours: the components of a
    肥车 (docs/rules.md §3).  Every 长车 holding is also a 肥车 holding.
``fat_chariot``
    either of the two.
``plain_chariot``
    for some colour, holds >= 2 copies of each of that colour's 将, 士, 相, or >= 2 copies
    of each of its 车, 马, 炮: the components of a 素车 (docs/rules.md §3).
``any_chariot``
    ``plain_chariot`` or ``fat_chariot`` (the components of some chariot).
``complete`` (Monte Carlo only)
    the dealt hand, all concealed, has a decomposition with no idle card (docs/rules.md §2, §4).
``dealer_dealt_complete`` (Monte Carlo only, seat 0 only; alias ``dealer_complete``)
    the dealer's dealt 31 cards are complete.
``dealer_dealt_win`` (Monte Carlo only, seat 0 only; alias ``dealer_wins``, a name that read as
"the dealer wins the deal")
    the dealer's dealt 31 cards would win at the opening discard phase (天胡 potential):
    the evaluator's ``wins`` (complete and U >= 1 by the §6 formula or a pattern win), the
    ``wins`` column of :func:`simkit.studies.dealt.deal_table`.  The ``tianhu`` option is the
    engine's; it is ignored here.
``hu_at_least_h`` (h >= 0, Monte Carlo only)
    the dealt hand is complete and its hu (docs/rules.md §4, all cards concealed) is >= h.
``min_idle_at_most_m`` (m = 0..31, Monte Carlo only)
    the dealt hand needs at most m idle cards (``min_idle`` of the evaluator).

Exact values: the number of hands of size n satisfying an event is the coefficient of x^n in
a product over the types of Σ_c C(4, c) x^c, restricted by the event.  Events that couple
types (counts of qualifying types, the triads of a colour, the 将 / 卒 of the colours) are
handled by a DP over the types in index order with a small state; the count divided by
C(112, n) is an exact :class:`fractions.Fraction`.  :func:`count_hands` runs the same DP on
any subset of the 28 types (a scaled-down deck, 4 copies each), which the tests check by
enumerating physical cards.

Monte Carlo: deal number N of ``seed`` is the engine's deal N (:mod:`simkit.studies.dealt`:
the deck of :func:`simkit.deck.deal_deck`, seeded by (seed, N)), so ``simkit prob
--seed S`` counts the very hands ``simkit simulate --seed S`` deals.  One numba pass computes
the features of each hand (:func:`simkit.evaluator.features.hand_features`) and every
requested event for the three seats; batches of ``batch_size`` consecutive deals run in
parallel.  The hit counts are a pure function of (seed, deals, rules), whatever the batch size
or thread count; ``batch_size`` only sets the per-batch counts of ``with_batches`` and the
points of :func:`probability_convergence`.

Given a hand (``simkit prob --given``): :func:`conditional_probability` and
:func:`conditional_table` give the probabilities of the *other* seats' hands when one seat's
dealt hand is known: exact by the same DP with ``4 - given[t]`` copies of each type left (for
``jiang_at_least_k`` the hypergeometric tail), Monte Carlo over the decks of the equity deals
(:func:`simkit.deck.fixed_hand_deck`, the deals of ``simkit equity``).

>>> exact_probability("jiang_at_least_k", k=0)
Fraction(1, 1)
>>> round(float(exact_probability("nao", seat=0)), 6)
0.135685
>>> exact_probability("dealer_wins")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
ValueError: event 'dealer_wins' has no closed form (Monte Carlo only); exact events: jiang_at_least_k, ...
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Iterable, Sequence
from fractions import Fraction
from typing import Any

import numpy as np
from numba import njit

from simkit.cards import CHE, JIANG, N_CARDS, N_COLOURS, N_COPIES, N_RANKS, N_SEATS, N_TYPES, ZU
from simkit.deck import (
    DEALER_CARDS,
    PLAYER_CARDS,
    check_seat,
    parse_dealt_hand,
)
from simkit.errors import SimkitError
from simkit.evaluator import features as F

__all__ = [
    "DEFAULT_EVENTS",
    "EVENTS",
    "EVENT_ALIASES",
    "EventSpec",
    "conditional_probability",
    "count_available",
    "count_hands",
    "count_kernel",
    "event_array",
    "event_indicator",
    "event_label",
    "exact_probability",
    "hand_size",
    "normalise_events",
    "parse_event",
    "resolve_event",
]

# ---------------------------------------------------------------------------
# event codes (column 0 of the kernels' ``events`` array; column 1 is the parameter)
# ---------------------------------------------------------------------------
EV_JIANG_AT_LEAST = 0
EV_PAIRS_AT_LEAST = 1
EV_ZI_AT_LEAST = 2
EV_NAO_AT_LEAST = 3
EV_LONG_CHARIOT_JIANG = 4
EV_LONG_CHARIOT_ZU = 5
EV_LONG_CHARIOT = 6
EV_FAT_CHARIOT_JIANG = 7
EV_FAT_CHARIOT_ZU = 8
EV_FAT_CHARIOT = 9
EV_PLAIN_CHARIOT = 10
EV_ANY_CHARIOT = 11
EV_COMPLETE = 12
EV_WINS = 13
EV_HU_AT_LEAST = 14
EV_MIN_IDLE_AT_MOST = 15
FIRST_EVALUATOR_CODE = EV_COMPLETE  # codes >= this need the evaluator


def event_level(code: int) -> int:
    """The :func:`~simkit.evaluator.features.hand_features` level an event code reads."""
    if code < FIRST_EVALUATOR_CODE:
        return F.LEVEL_COUNTS
    return F.LEVEL_IDLE if code == EV_MIN_IDLE_AT_MOST else F.LEVEL_EVAL



# ---------------------------------------------------------------------------
# registry
# ---------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class EventSpec:
    """One named event: kernel ``code``; ``param`` names its parameter (``None`` if it has
    none) with inclusive range ``lo..hi`` (``fixed`` is the parameter of a parameter-free
    alias); ``exact``: a closed form exists; ``seats``: the seats it is defined for."""

    name: str
    code: int
    description: str
    param: str | None = None
    lo: int = 0
    hi: int = 0
    fixed: int = 0
    exact: bool = True
    seats: tuple[int, ...] = (0, 1, 2)


_SPECS = (
    EventSpec("jiang_at_least_k", EV_JIANG_AT_LEAST, "the dealt hand holds at least k 将 cards (any colour)",
              "k", 0, 16),
    EventSpec("pairs_at_least_k", EV_PAIRS_AT_LEAST, "at least k card types are held 2 or more times", "k", 0,
              N_TYPES),
    EventSpec("zi_at_least_k", EV_ZI_AT_LEAST, "at least k card types are held exactly 3 times (k 子)", "k", 0,
              N_TYPES),
    EventSpec("nao_at_least_k", EV_NAO_AT_LEAST, "at least k card types are held all 4 times (k 闹)", "k", 0,
              N_TYPES),
    EventSpec("nao", EV_NAO_AT_LEAST, "the hand holds a 闹: all 4 copies of some card type", fixed=1),
    EventSpec("long_chariot_jiang", EV_LONG_CHARIOT_JIANG,
              "the cards of a 将 长车 are dealt: 2 or more of every colour's 将"),
    EventSpec("long_chariot_zu", EV_LONG_CHARIOT_ZU, "the cards of a 卒 长车 are dealt: 2 or more of every colour's 卒"),
    EventSpec("long_chariot", EV_LONG_CHARIOT, "the cards of a 长车 are dealt (将 or 卒)"),
    EventSpec("fat_chariot_jiang", EV_FAT_CHARIOT_JIANG,
              "the cards of a 将 肥车 are dealt: 2 or more 将 in at least 3 colours"),
    EventSpec("fat_chariot_zu", EV_FAT_CHARIOT_ZU, "the cards of a 卒 肥车 are dealt: 2 or more 卒 in at least 3 colours"),
    EventSpec("fat_chariot", EV_FAT_CHARIOT, "the cards of a 肥车 are dealt (将 or 卒)"),
    EventSpec("plain_chariot", EV_PLAIN_CHARIOT,
              "the cards of a 素车 are dealt: in one colour, 2 or more each of 将 士 相, or of 车 马 炮"),
    EventSpec("any_chariot", EV_ANY_CHARIOT, "the cards of some chariot are dealt (素车 or 肥车)"),
    EventSpec("complete", EV_COMPLETE, "the dealt hand is complete: every card fits a group, no idle card",
              exact=False),
    EventSpec("dealer_dealt_complete", EV_COMPLETE, "the dealer's 31 dealt cards are complete", exact=False,
              seats=(0,)),
    EventSpec("dealer_dealt_win", EV_WINS,
              "the dealer's 31 dealt cards already win before any play (天胡 potential); not the dealer winning "
              "the deal", exact=False, seats=(0,)),
    EventSpec("hu_at_least_h", EV_HU_AT_LEAST, "the dealt hand is complete and counts at least h hu", "h", 0,
              100_000, exact=False),
    EventSpec("min_idle_at_most_m", EV_MIN_IDLE_AT_MOST, "the dealt hand has at most m idle cards (the fewest "
              "over its decompositions)", "m", 0, DEALER_CARDS, exact=False),
)
EVENTS: dict[str, EventSpec] = {s.name: s for s in _SPECS}
# former names, still accepted: each reads as its new name
EVENT_ALIASES: dict[str, str] = {"dealer_wins": "dealer_dealt_win", "dealer_complete": "dealer_dealt_complete"}
EXACT_EVENTS: tuple[str, ...] = tuple(s.name for s in _SPECS if s.exact)

DEFAULT_EVENTS: tuple[tuple[str, dict[str, int]], ...] = (
    *(("jiang_at_least_k", {"k": k}) for k in (4, 6, 8, 10, 12)),
    *(("pairs_at_least_k", {"k": k}) for k in (8, 10, 12)),
    *(("zi_at_least_k", {"k": k}) for k in (1, 2, 3)),
    ("nao", {}),
    ("nao_at_least_k", {"k": 2}),
    ("long_chariot_jiang", {}),
    ("long_chariot_zu", {}),
    ("long_chariot", {}),
    ("fat_chariot_jiang", {}),
    ("fat_chariot_zu", {}),
    ("fat_chariot", {}),
    ("plain_chariot", {}),
    ("any_chariot", {}),
    ("complete", {}),
    ("dealer_dealt_complete", {}),
    ("dealer_dealt_win", {}),
    *(("min_idle_at_most_m", {"m": m}) for m in (2, 4, 6)),
    ("hu_at_least_h", {"h": 48}),
)


def hand_size(seat: int) -> int:
    """Cards dealt to ``seat``: 31 for the dealer (seat 0), 30 otherwise."""
    check_any_seat(seat)
    return DEALER_CARDS if seat == 0 else PLAYER_CARDS


def check_any_seat(seat: Any) -> int:
    if isinstance(seat, bool) or not isinstance(seat, (int, np.integer)) or not 0 <= int(seat) < N_SEATS:
        raise ValueError(f"seat must be 0, 1 or 2, got {seat!r}")
    return int(seat)


def _known() -> str:
    return ", ".join(EVENTS)


def resolve_event(event: Any, params: dict[str, Any]) -> tuple[EventSpec, int]:
    """Validated (spec, parameter value) of an event name and its parameters."""
    if isinstance(event, str):
        event = EVENT_ALIASES.get(event, event)
    if not isinstance(event, str) or event not in EVENTS:
        raise ValueError(f"unknown event {event!r}; known events: {_known()}")
    spec = EVENTS[event]
    if spec.param is None:
        if params:
            raise ValueError(f"event {event!r} takes no parameters, got {', '.join(sorted(params))}")
        return spec, spec.fixed
    extra = sorted(set(params) - {spec.param})
    if extra:
        raise ValueError(f"event {event!r} takes only the parameter {spec.param}, got {', '.join(extra)}")
    if spec.param not in params:
        raise ValueError(f"event {event!r} needs the parameter {spec.param} ({spec.lo}..{spec.hi})")
    value = params[spec.param]
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not spec.lo <= int(value) <= spec.hi:
        raise ValueError(f"event {event!r}: {spec.param} must be an integer in {spec.lo}..{spec.hi}, got {value!r}")
    return spec, int(value)


def no_closed_form(event: str) -> ValueError:
    return ValueError(f"event {event!r} has no closed form (Monte Carlo only); exact events: {', '.join(EXACT_EVENTS)}")


def event_label(spec: EventSpec, value: int) -> str:
    return spec.name if spec.param is None else f"{spec.name}({spec.param}={value})"


def check_event_seat(spec: EventSpec, seat: Any) -> int:
    seat = check_any_seat(seat)
    if seat not in spec.seats:
        allowed = "/".join(map(str, spec.seats))
        raise ValueError(f"event {spec.name!r} is defined for seat {allowed} only, got seat {seat}")
    return seat


# ---------------------------------------------------------------------------
# exact counts: DP over the types with a small state
# ---------------------------------------------------------------------------
# A *machine* is (initial state, step(state, type, count) -> state, accept(state) -> bool).
Machine = tuple[Any, Callable[[Any, int, int], Any], Callable[[Any], bool]]


def _rank(t: int) -> int:
    return t % N_RANKS


def _count_machine(qualifies: Callable[[int, int], bool], k: int) -> Machine:
    """Number of types with ``qualifies(type, count)``, capped at k; accept >= k."""

    def step(s: int, t: int, c: int) -> int:
        return min(k, s + 1) if qualifies(t, c) else s

    return 0, step, lambda s: s >= k


def _jiang_machine(k: int) -> Machine:
    def step(s: int, t: int, c: int) -> int:
        return min(k, s + c) if _rank(t) == JIANG else s

    return 0, step, lambda s: s >= k


def _colour_pairs_machine(rank: int, k: int) -> Machine:
    """Colours whose ``rank`` card is held >= 2 times, capped at k; accept >= k."""
    return _count_machine(lambda t, c: _rank(t) == rank and c >= 2, k)


def _triad(t: int) -> int:
    """Triad key of a type (colour * 2 + 0 for 将士相, + 1 for 车马炮), -1 for 卒."""
    r = _rank(t)
    return -1 if r == ZU else 2 * (t // N_RANKS) + (0 if r < CHE else 1)


def _plain_machine() -> Machine:
    """State (done, triad being read, its types held >= 2 so far)."""

    def step(s: tuple[bool, int, int], t: int, c: int) -> tuple[bool, int, int]:
        done, tri, n = s
        key = _triad(t)
        if done or key < 0:
            return s
        if key != tri:
            tri, n = key, 0
        if n < 0 or c < 2:
            return (False, tri, -1)  # this triad has failed
        n += 1
        return (True, -1, 0) if n == 3 else (False, tri, n)

    return (False, -1, 0), step, lambda s: s[0]


def _any(*machines: Machine) -> Machine:
    """Product machine accepting when any part accepts."""
    inits = tuple(m[0] for m in machines)

    def step(s: tuple, t: int, c: int) -> tuple:
        return tuple(m[1](x, t, c) for m, x in zip(machines, s))

    return inits, step, lambda s: any(m[2](x) for m, x in zip(machines, s))


def _machine(code: int, value: int) -> Machine:
    if code == EV_JIANG_AT_LEAST:
        return _jiang_machine(value)
    if code == EV_PAIRS_AT_LEAST:
        return _count_machine(lambda t, c: c >= 2, value)
    if code == EV_ZI_AT_LEAST:
        return _count_machine(lambda t, c: c == 3, value)
    if code == EV_NAO_AT_LEAST:
        return _count_machine(lambda t, c: c == N_COPIES, value)
    if code == EV_LONG_CHARIOT_JIANG:
        return _colour_pairs_machine(JIANG, N_COLOURS)
    if code == EV_LONG_CHARIOT_ZU:
        return _colour_pairs_machine(ZU, N_COLOURS)
    if code == EV_LONG_CHARIOT:
        return _any(_colour_pairs_machine(JIANG, N_COLOURS), _colour_pairs_machine(ZU, N_COLOURS))
    if code == EV_FAT_CHARIOT_JIANG:
        return _colour_pairs_machine(JIANG, 3)
    if code == EV_FAT_CHARIOT_ZU:
        return _colour_pairs_machine(ZU, 3)
    if code == EV_FAT_CHARIOT:
        return _any(_colour_pairs_machine(JIANG, 3), _colour_pairs_machine(ZU, 3))
    if code == EV_PLAIN_CHARIOT:
        return _plain_machine()
    if code == EV_ANY_CHARIOT:
        return _any(_plain_machine(), _colour_pairs_machine(JIANG, 3), _colour_pairs_machine(ZU, 3))
    raise AssertionError(f"no closed form for event code {code}")


@functools.cache
def count_kernel(code: int, value: int, size: int, types: tuple[int, ...]) -> int:
    """Hands of ``size`` cards from ``types`` (4 copies each) satisfying the event:
    the x^size coefficient of Π_t Σ_c C(4, c) x^c, the product split by machine state."""
    init, step, accept = _machine(code, value)
    weights = [math.comb(4, c) for c in range(5)]
    dist: dict[Any, list[int]] = {init: [1] + [0] * size}
    for t in types:
        new: dict[Any, list[int]] = {}
        for s, poly in dist.items():
            for c in range(5):
                if c > size:
                    break
                target = new.get(s2 := step(s, t, c))
                if target is None:
                    target = new[s2] = [0] * (size + 1)
                w = weights[c]
                for d in range(size + 1 - c):
                    if poly[d]:
                        target[d + c] += w * poly[d]
        dist = new
    return sum(poly[size] for s, poly in dist.items() if accept(s))


def count_hands(event: str, size: int, types: Iterable[int] | None = None, **params: int) -> int:
    """Number of ``size``-card hands (sets of physical cards) drawn from the 4 copies of each
    type in ``types`` (default: all 28) that satisfy ``event``.

    >>> count_hands("nao", 4, types=[0, 1])  # YJ*4 or YS*4
    2
    >>> count_hands("jiang_at_least_k", 31, k=0) == math.comb(112, 31)
    True
    """
    spec, value = resolve_event(event, params)
    if not spec.exact:
        raise no_closed_form(event)
    chosen = tuple(range(N_TYPES)) if types is None else tuple(sorted({int(t) for t in types}))
    if any(not 0 <= t < N_TYPES for t in chosen):
        raise ValueError(f"types must be type indices 0..27, got {list(chosen)}")
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or not 0 <= size <= 4 * len(chosen):
        raise ValueError(f"size must be an integer in 0..{4 * len(chosen)}, got {size!r}")
    return count_kernel(spec.code, value, int(size), chosen)


def exact_probability(event: str, seat: int = 0, **params: int) -> Fraction:
    """Exact probability that ``seat``'s dealt hand satisfies ``event`` (a Fraction).

    >>> exact_probability("jiang_at_least_k", seat=1, k=17)
    Traceback (most recent call last):
    ...
    ValueError: event 'jiang_at_least_k': k must be an integer in 0..16, got 17
    """
    spec, value = resolve_event(event, params)
    seat = check_event_seat(spec, seat)
    if not spec.exact:
        raise no_closed_form(event)
    n = hand_size(seat)
    return Fraction(count_kernel(spec.code, value, n, tuple(range(N_TYPES))), math.comb(N_CARDS, n))


# ---------------------------------------------------------------------------
# numba indicators (on the features of simkit.evaluator.features)
# ---------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def event_indicator(code, value, feats):
    """1 when the hand with features ``feats`` satisfies event (code, value), else 0."""
    if code == EV_JIANG_AT_LEAST:
        return 1 if feats[F.F_JIANG] >= value else 0
    if code == EV_PAIRS_AT_LEAST:
        return 1 if feats[F.F_PAIRS] >= value else 0
    if code == EV_ZI_AT_LEAST:
        return 1 if feats[F.F_ZI] >= value else 0
    if code == EV_NAO_AT_LEAST:
        return 1 if feats[F.F_NAO] >= value else 0
    if code == EV_LONG_CHARIOT_JIANG:
        return 1 if feats[F.F_JIANG2] == 4 else 0
    if code == EV_LONG_CHARIOT_ZU:
        return 1 if feats[F.F_ZU2] == 4 else 0
    if code == EV_LONG_CHARIOT:
        return 1 if feats[F.F_JIANG2] == 4 or feats[F.F_ZU2] == 4 else 0
    if code == EV_FAT_CHARIOT_JIANG:
        return 1 if feats[F.F_JIANG2] >= 3 else 0
    if code == EV_FAT_CHARIOT_ZU:
        return 1 if feats[F.F_ZU2] >= 3 else 0
    if code == EV_FAT_CHARIOT:
        return 1 if feats[F.F_JIANG2] >= 3 or feats[F.F_ZU2] >= 3 else 0
    if code == EV_PLAIN_CHARIOT:
        return 1 if feats[F.F_TRIADS] >= 1 else 0
    if code == EV_ANY_CHARIOT:
        return 1 if feats[F.F_TRIADS] >= 1 or feats[F.F_JIANG2] >= 3 or feats[F.F_ZU2] >= 3 else 0
    if code == EV_COMPLETE:
        return feats[F.F_COMPLETE]
    if code == EV_WINS:
        return feats[F.F_WINS]
    if code == EV_HU_AT_LEAST:
        return 1 if feats[F.F_COMPLETE] == 1 and feats[F.F_HU] >= value else 0
    if code == EV_MIN_IDLE_AT_MOST:
        return 1 if feats[F.F_MIN_IDLE] <= value else 0
    return -1

# ---------------------------------------------------------------------------
# public Monte Carlo API
# ---------------------------------------------------------------------------
def normalise_events(events: Any) -> list[tuple[EventSpec, int]]:
    """Events given as names, (name, {param: value}) or (name, value) pairs."""
    if isinstance(events, str) or (isinstance(events, tuple) and len(events) == 2 and isinstance(events[0], str)
                                   and not isinstance(events[1], (str, tuple, list))):
        events = [events]
    out = []
    for item in events:
        if isinstance(item, str):
            out.append(resolve_event(item, {}))
        elif isinstance(item, (tuple, list)) and len(item) == 2 and isinstance(item[0], str):
            name, params = item
            if isinstance(params, dict):
                out.append(resolve_event(name, dict(params)))
            else:
                spec = EVENTS.get(EVENT_ALIASES.get(name, name))
                key = spec.param if spec is not None and spec.param is not None else "value"
                out.append(resolve_event(name, {key: params}))
        else:
            raise ValueError(f"an event is a name, (name, {{param: value}}) or (name, value), got {item!r}")
    if not out:
        raise ValueError("no events given")
    return out


def event_array(resolved: Sequence[tuple[EventSpec, int]]) -> tuple[np.ndarray, int]:
    """(events x (code, value)) array and the feature level they read."""
    arr = np.array([[spec.code, value] for spec, value in resolved], dtype=np.int64).reshape(-1, 2)
    return arr, max(event_level(spec.code) for spec, _ in resolved)

def parse_event(text: str) -> str | tuple[str, dict[str, int]]:
    """An event written on a command line or in an experiment file: ``name``, ``name:VALUE``
    or ``name:PARAM=VALUE``.

    >>> parse_event("nao"), parse_event("jiang_at_least_k:8"), parse_event("hu_at_least_h:h=48")
    ('nao', ('jiang_at_least_k', {'k': 8}), ('hu_at_least_h', {'h': 48}))
    """
    name, _, rest = text.strip().partition(":")
    if not rest:
        return name
    spec = EVENTS.get(EVENT_ALIASES.get(name, name))
    if spec is None:
        resolve_event(name, {})  # raises the one-line unknown-event error
    key, _, value = rest.rpartition("=")
    key = key or (spec.param if spec.param is not None else "value")
    try:
        return name, {key: int(value)}
    except ValueError:
        raise ValueError(f"event {text!r}: the parameter must be an integer, got {value!r}") from None

# ---------------------------------------------------------------------------
# given my hand: the other seats' dealt hands (``simkit prob --given``)
# ---------------------------------------------------------------------------
# Given seat g's dealt hand H (n_g cards), the other 112 - n_g cards are dealt uniformly, so
# seat s's hand is a uniformly random set of n_s of them: type t has a_t = 4 - H[t] copies
# left.  The number of such hands satisfying an event is the x^n_s coefficient of
# Π_t Σ_c C(a_t, c) x^c split by the same machines as above; divided by C(112 - n_g, n_s) it is
# exact.  Monte Carlo deals the decks of simkit.deck.fixed_hand_deck (the equity deals of
# simkit.runner.equity: deal N of seed S is the same deck in both).


@functools.cache
def count_available(code: int, value: int, size: int, available: tuple[int, ...]) -> int:
    """Hands of ``size`` cards drawn from ``available[t]`` copies of each type t (all 28 types,
    in index order) that satisfy event (code, value)."""
    init, step, accept = _machine(code, value)
    dist: dict[Any, list[int]] = {init: [1] + [0] * size}
    for t in range(N_TYPES):
        a = available[t]
        new: dict[Any, list[int]] = {}
        for s, poly in dist.items():
            for c in range(min(a, size) + 1):
                target = new.get(s2 := step(s, t, c))
                if target is None:
                    target = new[s2] = [0] * (size + 1)
                w = math.comb(a, c)
                for d in range(size + 1 - c):
                    if poly[d]:
                        target[d + c] += w * poly[d]
        dist = new
    return sum(poly[size] for s, poly in dist.items() if accept(s))


def given_hand(given: Any, given_seat: Any) -> tuple[np.ndarray, int]:
    try:
        seat = check_seat(given_seat)
        return parse_dealt_hand(given, seat), seat
    except SimkitError as exc:
        raise ValueError(f"given hand: {exc}") from None


def _other_seat(spec: EventSpec, seat: Any, given_seat: int) -> int:
    seat = check_event_seat(spec, seat)
    if seat == given_seat:
        raise ValueError(f"seat {seat} holds the given hand; ask about another seat")
    return seat


def conditional_probability(event: str, given: Any, given_seat: int = 0, seat: int = 1, **params: int) -> Fraction:
    """Exact probability that ``seat``'s dealt hand satisfies ``event`` given that
    ``given_seat`` holds ``given`` (text or 28 counts; 31 cards for seat 0, 30 otherwise).

    >>> mine = "YJ*4 RJ*4 WJ*4 GJ*3 YC*3 RC*3 WC*3 GC*3 YZ*2 RZ*2"  # 15 of the 16 将
    >>> conditional_probability("jiang_at_least_k", mine, 0, seat=1, k=1)  # the last 将: 30 of 81 cards
    Fraction(10, 27)
    >>> conditional_probability("jiang_at_least_k", mine, 0, seat=2, k=2)
    Fraction(0, 1)
    """
    spec, value = resolve_event(event, params)
    counts, given_seat = given_hand(given, given_seat)
    seat = _other_seat(spec, seat, given_seat)
    if not spec.exact:
        raise no_closed_form(event)
    available = tuple(int(4 - c) for c in counts)
    unseen = N_CARDS - int(counts.sum())
    return Fraction(count_available(spec.code, value, hand_size(seat), available), math.comb(unseen, hand_size(seat)))


