"""Probabilities of events on a dealt hand: exact (combinatorics) and Monte Carlo.

A seat's dealt hand is a uniformly random set of ``hand_size`` of the 112 cards
(RULES.md §1, §5): 31 cards for the dealer (seat 0), 30 for seats 1 and 2.  An *event* is
a property of that hand's 28-count vector ``n[t]`` (copies of type ``t`` held, 0..4).  All
events are about the cards *held*; none says that a group is played, exposed or scored:
"holds the components of a 长车" means the cards are there, not that the hand wins with one.

Events (name, parameter, meaning; "component" is RULES §2: k = 2..4 identical cards):

``jiang_at_least_k`` (k = 0..16)
    holds at least k 将 cards (any colours): ``n[YJ]+n[RJ]+n[WJ]+n[GJ] >= k``.
``pairs_at_least_k`` (k = 0..28)
    at least k types held two or more times (types that can form a component).
``zi_at_least_k`` (k = 0..28)
    at least k types held exactly three times (dealt 子, RULES §2).
``nao_at_least_k`` (k = 0..28)
    at least k types held four times (dealt 闹, RULES §2).
``nao``
    holds all four copies of at least one type (a 闹) = ``nao_at_least_k`` with k = 1.
``long_chariot_jiang`` / ``long_chariot_zu``
    holds >= 2 copies of the 将 (resp. 卒) of each of the four colours: the components of a
    将 (resp. 卒) 长车 (RULES §3).
``long_chariot``
    either of the two.
``fat_chariot_jiang`` / ``fat_chariot_zu``
    holds >= 2 copies of the 将 (resp. 卒) in at least three colours: the components of a
    肥车 (RULES §3).  Every 长车 holding is also a 肥车 holding.
``fat_chariot``
    either of the two.
``plain_chariot``
    for some colour, holds >= 2 copies of each of that colour's 将, 士, 相, or >= 2 copies
    of each of its 车, 马, 炮: the components of a 素车 (RULES §3).
``any_chariot``
    ``plain_chariot`` or ``fat_chariot`` (the components of some chariot).
``complete`` (Monte Carlo only)
    the dealt hand, all concealed, has a decomposition with no idle card (RULES §2, §4).
``dealer_complete`` (Monte Carlo only, seat 0 only)
    the dealer's dealt 31 cards are complete.
``dealer_wins`` (Monte Carlo only, seat 0 only)
    the dealer's dealt 31 cards would win at the opening discard phase (天胡 potential):
    the evaluator's ``wins`` (complete and U >= 1 by the §6 formula or a pattern win), the
    ``wins`` column of :func:`simkit.analysis.dealt.deal_table`.  The ``tianhu`` option is the
    engine's; it is ignored here.
``hu_at_least_h`` (h >= 0, Monte Carlo only)
    the dealt hand is complete and its hu (RULES §4, all cards concealed) is >= h.
``min_idle_at_most_m`` (m = 0..31, Monte Carlo only)
    the dealt hand needs at most m idle cards (``min_idle`` of the evaluator).

Exact values: the number of hands of size n satisfying an event is the coefficient of x^n in
a product over the types of Σ_c C(4, c) x^c, restricted by the event.  Events that couple
types (counts of qualifying types, the triads of a colour, the 将 / 卒 of the colours) are
handled by a DP over the types in index order with a small state; the count divided by
C(112, n) is an exact :class:`fractions.Fraction`.  :func:`count_hands` runs the same DP on
any subset of the 28 types (a scaled-down deck, 4 copies each), which the tests check by
enumerating physical cards.

Monte Carlo: deal number N of ``seed`` is the engine's deal N (:mod:`simkit.analysis.dealt`:
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
>>> r = estimate_probability("jiang_at_least_k", deals=2000, seed=1, k=8)
>>> r.deals, 0.0 <= r.lo <= r.p <= r.hi <= 1.0, r.exact is not None
(2000, True, True)
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Iterable, Sequence
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd
from numba import njit, prange

from simkit.analysis.dealt import deal_features
from simkit.analysis.results import Result
from simkit.analysis.stats import wilson_interval
from simkit.cards import N_TYPES
from simkit.deck import (
    DEALER_CARDS,
    N_SEATS,
    PLAYER_CARDS,
    check_seat,
    deal_counts_kernel,
    fixed_hand_cards,
    fixed_hand_deck,
    parse_dealt_hand,
)
from simkit.errors import SimkitError
from simkit.evaluator import features as F
from simkit.rng import root_key
from simkit.rules import RuleSet

__all__ = [
    "EVENTS",
    "EventSpec",
    "ProbabilityEstimate",
    "ProbabilityTable",
    "conditional_probability",
    "conditional_table",
    "count_hands",
    "estimate_probability",
    "event_indicators",
    "exact_probability",
    "hand_size",
    "probability_table",
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


def _level(code: int) -> int:
    """The :func:`~simkit.evaluator.features.hand_features` level an event code reads."""
    if code < FIRST_EVALUATOR_CODE:
        return F.LEVEL_COUNTS
    return F.LEVEL_IDLE if code == EV_MIN_IDLE_AT_MOST else F.LEVEL_EVAL

N_CARDS = 112
RANK_JIANG = 0
RANK_ZU = 6


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
    EventSpec("jiang_at_least_k", EV_JIANG_AT_LEAST, ">= k 将 cards", "k", 0, 16),
    EventSpec("pairs_at_least_k", EV_PAIRS_AT_LEAST, ">= k types held >= 2 times", "k", 0, 28),
    EventSpec("zi_at_least_k", EV_ZI_AT_LEAST, ">= k types held exactly 3 times (子)", "k", 0, 28),
    EventSpec("nao_at_least_k", EV_NAO_AT_LEAST, ">= k types held 4 times (闹)", "k", 0, 28),
    EventSpec("nao", EV_NAO_AT_LEAST, "holds a 闹 (all 4 copies of a type)", fixed=1),
    EventSpec("long_chariot_jiang", EV_LONG_CHARIOT_JIANG, "components of a 将 长车: >= 2 of each colour's 将"),
    EventSpec("long_chariot_zu", EV_LONG_CHARIOT_ZU, "components of a 卒 长车: >= 2 of each colour's 卒"),
    EventSpec("long_chariot", EV_LONG_CHARIOT, "components of a 长车 (将 or 卒)"),
    EventSpec("fat_chariot_jiang", EV_FAT_CHARIOT_JIANG, "components of a 将 肥车: >= 2 将 in >= 3 colours"),
    EventSpec("fat_chariot_zu", EV_FAT_CHARIOT_ZU, "components of a 卒 肥车: >= 2 卒 in >= 3 colours"),
    EventSpec("fat_chariot", EV_FAT_CHARIOT, "components of a 肥车 (将 or 卒)"),
    EventSpec("plain_chariot", EV_PLAIN_CHARIOT, "components of a 素车: >= 2 each of a colour's 将士相 or 车马炮"),
    EventSpec("any_chariot", EV_ANY_CHARIOT, "components of some chariot (素车 or 肥车)"),
    EventSpec("complete", EV_COMPLETE, "dealt hand complete (no idle card)", exact=False),
    EventSpec("dealer_complete", EV_COMPLETE, "dealer's dealt 31 cards complete", exact=False, seats=(0,)),
    EventSpec("dealer_wins", EV_WINS, "dealer's dealt 31 cards win (天胡 potential)", exact=False, seats=(0,)),
    EventSpec("hu_at_least_h", EV_HU_AT_LEAST, "dealt hand complete with hu >= h", "h", 0, 100_000, exact=False),
    EventSpec("min_idle_at_most_m", EV_MIN_IDLE_AT_MOST, "dealt hand has <= m idle cards", "m", 0, 31, exact=False),
)
EVENTS: dict[str, EventSpec] = {s.name: s for s in _SPECS}
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
    ("dealer_complete", {}),
    ("dealer_wins", {}),
    *(("min_idle_at_most_m", {"m": m}) for m in (2, 4, 6)),
    ("hu_at_least_h", {"h": 48}),
)


def hand_size(seat: int) -> int:
    """Cards dealt to ``seat``: 31 for the dealer (seat 0), 30 otherwise."""
    _check_seat(seat)
    return DEALER_CARDS if seat == 0 else PLAYER_CARDS


def _check_seat(seat: Any) -> int:
    if isinstance(seat, bool) or not isinstance(seat, (int, np.integer)) or not 0 <= int(seat) < N_SEATS:
        raise ValueError(f"seat must be 0, 1 or 2, got {seat!r}")
    return int(seat)


def _known() -> str:
    return ", ".join(EVENTS)


def _resolve(event: Any, params: dict[str, Any]) -> tuple[EventSpec, int]:
    """Validated (spec, parameter value) of an event name and its parameters."""
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


def _no_closed_form(event: str) -> ValueError:
    return ValueError(f"event {event!r} has no closed form (Monte Carlo only); exact events: {', '.join(EXACT_EVENTS)}")


def _label(spec: EventSpec, value: int) -> str:
    return spec.name if spec.param is None else f"{spec.name}({spec.param}={value})"


def _check_seat_for(spec: EventSpec, seat: Any) -> int:
    seat = _check_seat(seat)
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
    return t % 7


def _count_machine(qualifies: Callable[[int, int], bool], k: int) -> Machine:
    """Number of types with ``qualifies(type, count)``, capped at k; accept >= k."""

    def step(s: int, t: int, c: int) -> int:
        return min(k, s + 1) if qualifies(t, c) else s

    return 0, step, lambda s: s >= k


def _jiang_machine(k: int) -> Machine:
    def step(s: int, t: int, c: int) -> int:
        return min(k, s + c) if _rank(t) == RANK_JIANG else s

    return 0, step, lambda s: s >= k


def _colour_pairs_machine(rank: int, k: int) -> Machine:
    """Colours whose ``rank`` card is held >= 2 times, capped at k; accept >= k."""
    return _count_machine(lambda t, c: _rank(t) == rank and c >= 2, k)


def _triad(t: int) -> int:
    """Triad key of a type (colour * 2 + 0 for 将士相, + 1 for 车马炮), -1 for 卒."""
    r = _rank(t)
    return -1 if r == RANK_ZU else 2 * (t // 7) + (r // 3)


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
        return _count_machine(lambda t, c: c == 4, value)
    if code == EV_LONG_CHARIOT_JIANG:
        return _colour_pairs_machine(RANK_JIANG, 4)
    if code == EV_LONG_CHARIOT_ZU:
        return _colour_pairs_machine(RANK_ZU, 4)
    if code == EV_LONG_CHARIOT:
        return _any(_colour_pairs_machine(RANK_JIANG, 4), _colour_pairs_machine(RANK_ZU, 4))
    if code == EV_FAT_CHARIOT_JIANG:
        return _colour_pairs_machine(RANK_JIANG, 3)
    if code == EV_FAT_CHARIOT_ZU:
        return _colour_pairs_machine(RANK_ZU, 3)
    if code == EV_FAT_CHARIOT:
        return _any(_colour_pairs_machine(RANK_JIANG, 3), _colour_pairs_machine(RANK_ZU, 3))
    if code == EV_PLAIN_CHARIOT:
        return _plain_machine()
    if code == EV_ANY_CHARIOT:
        return _any(_plain_machine(), _colour_pairs_machine(RANK_JIANG, 3), _colour_pairs_machine(RANK_ZU, 3))
    raise AssertionError(f"no closed form for event code {code}")


@functools.cache
def _count_kernel(code: int, value: int, size: int, types: tuple[int, ...]) -> int:
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
    spec, value = _resolve(event, params)
    if not spec.exact:
        raise _no_closed_form(event)
    chosen = tuple(range(N_TYPES)) if types is None else tuple(sorted({int(t) for t in types}))
    if any(not 0 <= t < N_TYPES for t in chosen):
        raise ValueError(f"types must be type indices 0..27, got {list(chosen)}")
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or not 0 <= size <= 4 * len(chosen):
        raise ValueError(f"size must be an integer in 0..{4 * len(chosen)}, got {size!r}")
    return _count_kernel(spec.code, value, int(size), chosen)


def exact_probability(event: str, seat: int = 0, **params: int) -> Fraction:
    """Exact probability that ``seat``'s dealt hand satisfies ``event`` (a Fraction).

    >>> exact_probability("jiang_at_least_k", seat=1, k=17)
    Traceback (most recent call last):
    ...
    ValueError: event 'jiang_at_least_k': k must be an integer in 0..16, got 17
    """
    spec, value = _resolve(event, params)
    seat = _check_seat_for(spec, seat)
    if not spec.exact:
        raise _no_closed_form(event)
    n = hand_size(seat)
    return Fraction(_count_kernel(spec.code, value, n, tuple(range(N_TYPES))), math.comb(N_CARDS, n))


# ---------------------------------------------------------------------------
# numba indicators (on the features of simkit.evaluator.features)
# ---------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def _indicator(code, value, feats):
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


@njit(cache=True, nogil=True)
def _indicators_kernel(hands, events, rules, level, out):
    """out[i, e] = indicator of events[e] = (code, value) on the 28-count row hands[i]."""
    feats = np.zeros(F.N_FEATURES, dtype=np.int64)
    exposed, res, choice, work = F.feature_scratch()
    for i in range(hands.shape[0]):
        F.hand_features(hands[i], level, rules, exposed, res, choice, work, feats)
        for e in range(events.shape[0]):
            out[i, e] = _indicator(events[e, 0], events[e, 1], feats)


@njit(cache=True, nogil=True)
def _batch_hits(root, first_deal, stop, events, level, rules, hits):
    """hits[seat, e] += indicator of events[e] on seat's hand, over deals first_deal .. stop - 1."""
    rng = np.zeros(4, dtype=np.uint64)
    deck = np.zeros(112, dtype=np.int64)
    dealt = np.zeros(N_SEATS * 28, dtype=np.int64)
    feats = np.zeros((N_SEATS, F.N_FEATURES), dtype=np.int64)
    exposed, res, choice, work = F.feature_scratch()
    for deal in range(first_deal, stop):
        deal_features(root, deal, level, rules, rng, deck, dealt, exposed, res, choice, work, feats)
        for seat in range(N_SEATS):
            for e in range(events.shape[0]):
                hits[seat, e] += _indicator(events[e, 0], events[e, 1], feats[seat])


@njit(cache=True, parallel=True)
def _hits_kernel(root, n_deals, batch_size, events, level, rules, hits):
    """hits[b, seat, e] = hits of events[e] on seat's hand over batch b (deals b * batch_size
    onwards, at most batch_size of them, up to n_deals); batches in parallel."""
    for b in prange(hits.shape[0]):
        _batch_hits(root, b * batch_size, min(n_deals, (b + 1) * batch_size), events, level, rules, hits[b])


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
            out.append(_resolve(item, {}))
        elif isinstance(item, (tuple, list)) and len(item) == 2 and isinstance(item[0], str):
            name, params = item
            if isinstance(params, dict):
                out.append(_resolve(name, dict(params)))
            else:
                spec = EVENTS.get(name)
                key = spec.param if spec is not None and spec.param is not None else "value"
                out.append(_resolve(name, {key: params}))
        else:
            raise ValueError(f"an event is a name, (name, {{param: value}}) or (name, value), got {item!r}")
    if not out:
        raise ValueError("no events given")
    return out


def _event_array(resolved: Sequence[tuple[EventSpec, int]]) -> tuple[np.ndarray, int]:
    """(events x (code, value)) array and the feature level they read."""
    arr = np.array([[spec.code, value] for spec, value in resolved], dtype=np.int64).reshape(-1, 2)
    return arr, max(_level(spec.code) for spec, _ in resolved)


def _check_run(deals: Any, seed: Any, batch_size: Any, confidence: Any) -> None:
    for name, v in (("deals", deals), ("batch_size", batch_size)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be an integer >= 0, got {seed!r}")
    if not isinstance(confidence, (float, int)) or not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")


def _simulate(events: np.ndarray, level: int, deals: int, seed: int, batch_size: int,
              rules: RuleSet) -> np.ndarray:
    """Hit counts (batches x 3 seats x events) over deals 0 .. deals - 1 of ``seed``."""
    n_batches = (deals + batch_size - 1) // batch_size
    hits = np.zeros((n_batches, N_SEATS, events.shape[0]), dtype=np.int64)
    _hits_kernel(root_key(seed), deals, batch_size, events, level, rules.to_array(), hits)
    return hits


TABLE_COLUMNS = ["event", "seat", "deals", "hits", "p", "lo", "hi", "exact", "z"]


@dataclasses.dataclass(frozen=True)
class ProbabilityEstimate(Result):
    """Monte Carlo estimate of P(event) for one seat (:func:`estimate_probability`): ``event``
    (label with its parameter), ``seat``, ``deals``, ``hits``, ``p``, its Wilson interval
    ``lo``/``hi`` at ``confidence``, ``exact`` (None without a closed form) and ``z`` =
    (p - exact) / sqrt(exact (1 - exact) / deals) (None without a closed form).
    :meth:`to_frame`: a row of :func:`probability_table` (plus ``confidence``)."""

    event: str
    seat: int
    deals: int
    hits: int
    p: float
    lo: float
    hi: float
    exact: float | None
    z: float | None
    confidence: float


@dataclasses.dataclass(frozen=True)
class ProbabilityTable(Result):
    """:func:`probability_table` with ``with_batches=True``: the ``table`` and each event's
    hits per batch (``per_batch``: {label: (batches, 3 seats) array}, from which
    :func:`batch_convergence` draws a running estimate without simulating again).
    :meth:`to_frame` is the table."""

    table: pd.DataFrame = dataclasses.field(repr=False, compare=False)
    per_batch: dict[str, np.ndarray] = dataclasses.field(repr=False, compare=False)
    confidence: float = 0.95

    def to_frame(self) -> pd.DataFrame:
        return self.table.copy()


def _row(spec: EventSpec, value: int, seat: int, deals: int, hits: int, confidence: float) -> dict[str, Any]:
    wilson = wilson_interval(hits, deals, confidence)
    lo, hi = wilson.lo, wilson.hi
    p = hits / deals
    exact = None
    z = None
    if spec.exact:
        exact = float(_count_kernel(spec.code, value, hand_size(seat), tuple(range(N_TYPES)))
                      / math.comb(N_CARDS, hand_size(seat)))
        if 0.0 < exact < 1.0:
            z = (p - exact) / math.sqrt(exact * (1.0 - exact) / deals)
        else:
            z = 0.0 if p == exact else math.inf
    return {"event": _label(spec, value), "seat": seat, "deals": deals, "hits": int(hits), "p": p,
            "lo": lo, "hi": hi, "exact": exact, "z": z}


def estimate_probability(event: str, deals: int, seed: int, seat: int = 0, batch_size: int = 10_000,
                         confidence: float = 0.95, *, rules: RuleSet | None = None,
                         **params: int) -> ProbabilityEstimate:
    """Monte Carlo estimate of P(event) for ``seat``'s dealt hand over ``deals`` seeded deals
    (:class:`ProbabilityEstimate`: hits, ``p``, the Wilson interval at ``confidence``, the
    exact value where a closed form exists).  ``rules`` only matter for evaluator events.
    """
    spec, value = _resolve(event, params)
    seat = _check_seat_for(spec, seat)
    _check_run(deals, seed, batch_size, confidence)
    rules = rules if rules is not None else RuleSet()
    arr, level = _event_array([(spec, value)])
    hits = _simulate(arr, level, int(deals), int(seed), int(batch_size), rules).sum(axis=0)
    return ProbabilityEstimate(**_row(spec, value, seat, int(deals), int(hits[seat, 0]), float(confidence)),
                               confidence=float(confidence))


def probability_table(deals: int, seed: int, events: Any = None, seats: Sequence[int] = (0, 1, 2),
                      batch_size: int = 10_000, confidence: float = 0.95,
                      rules: RuleSet | None = None, with_batches: bool = False) -> pd.DataFrame | ProbabilityTable:
    """One simulation of ``deals`` deals; one row per (event, seat) with the fields of
    :class:`ProbabilityEstimate` (intervals at ``confidence``).  ``events``: names,
    ``(name, {param: value})`` or ``(name, value)`` pairs (default :data:`DEFAULT_EVENTS`); an
    event defined for fewer seats (``dealer_*``) gets rows only for those.  ``with_batches``:
    a :class:`ProbabilityTable`, the table with each event's hits per batch.

    >>> t = probability_table(500, seed=2, events=["nao", ("jiang_at_least_k", 8), "dealer_wins"])
    >>> list(zip(t["event"], t["seat"]))[2:5]
    [('nao', 2), ('jiang_at_least_k(k=8)', 0), ('jiang_at_least_k(k=8)', 1)]
    >>> len(t), t["event"].iloc[-1], int(t["seat"].iloc[-1])  # seat 0 only
    (7, 'dealer_wins', 0)
    """
    resolved = normalise_events(DEFAULT_EVENTS if events is None else events)
    if isinstance(seats, (int, np.integer)):
        seats = (seats,)
    seat_list = [_check_seat(s) for s in seats]
    if not seat_list:
        raise ValueError("seats must name at least one of 0, 1, 2")
    _check_run(deals, seed, batch_size, confidence)
    rules = rules if rules is not None else RuleSet()
    arr, level = _event_array(resolved)
    per_batch = _simulate(arr, level, int(deals), int(seed), int(batch_size), rules)
    hits = per_batch.sum(axis=0)
    rows = [_row(spec, value, s, int(deals), int(hits[s, e]), float(confidence))
            for e, (spec, value) in enumerate(resolved) for s in seat_list if s in spec.seats]
    table = pd.DataFrame(rows, columns=TABLE_COLUMNS)
    if not with_batches:
        return table
    return ProbabilityTable(table, {_label(spec, value): per_batch[:, :, e] for e, (spec, value) in enumerate(resolved)},
                            float(confidence))


def event_indicators(hands: np.ndarray, events: Any, rules: RuleSet | None = None) -> np.ndarray:
    """(n_hands, n_events) 0/1 indicators computed by the numba kernel on 28-count rows.

    >>> event_indicators(np.array([[2] * 28]), ["long_chariot", "nao", ("pairs_at_least_k", 28)]).tolist()
    [[1, 0, 1]]
    """
    arr = np.asarray(hands)
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2 or arr.shape[1] != N_TYPES or not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"hands must be integer 28-count rows, got shape {arr.shape} dtype {arr.dtype}")
    if ((arr < 0) | (arr > 4)).any():
        raise ValueError("hand counts must lie in 0..4")
    resolved = normalise_events(events)
    rules = rules if rules is not None else RuleSet()
    ev, level = _event_array(resolved)
    out = np.zeros((arr.shape[0], ev.shape[0]), dtype=np.int64)
    _indicators_kernel(np.ascontiguousarray(arr, dtype=np.int64), ev, rules.to_array(), level, out)
    return out


def parse_event(text: str) -> str | tuple[str, dict[str, int]]:
    """An event written on a command line or in an experiment file: ``name``, ``name:VALUE``
    or ``name:PARAM=VALUE``.

    >>> parse_event("nao"), parse_event("jiang_at_least_k:8"), parse_event("hu_at_least_h:h=48")
    ('nao', ('jiang_at_least_k', {'k': 8}), ('hu_at_least_h', {'h': 48}))
    """
    name, _, rest = text.strip().partition(":")
    if not rest:
        return name
    spec = EVENTS.get(name)
    if spec is None:
        _resolve(name, {})  # raises the one-line unknown-event error
    key, _, value = rest.rpartition("=")
    key = key or (spec.param if spec.param is not None else "value")
    try:
        return name, {key: int(value)}
    except ValueError:
        raise ValueError(f"event {text!r}: the parameter must be an integer, got {value!r}") from None


def probability_convergence(event: Any, deals: int, seed: int, seat: int = 0, batch_size: int = 10_000,
                            confidence: float = 0.95, rules: RuleSet | None = None) -> pd.DataFrame:
    """The running estimate after each batch: columns n, mean (= p), lo, hi (Wilson).

    Deal N is seeded by (seed, N), so the first n deals are the same whatever the total: the
    row for n deals is the estimate a run of n deals would give.

    >>> curve = probability_convergence("nao", deals=3000, seed=1, batch_size=1000)
    >>> curve["n"].tolist()
    [1000, 2000, 3000]
    """
    (spec, value), = normalise_events([event])
    seat = _check_seat_for(spec, seat)
    _check_run(deals, seed, batch_size, confidence)
    arr, level = _event_array([(spec, value)])
    per_batch = _simulate(arr, level, int(deals), int(seed), int(batch_size),
                          rules if rules is not None else RuleSet())[:, seat, 0]
    return batch_convergence(per_batch, int(deals), int(batch_size), float(confidence))


def batch_convergence(per_batch_hits: np.ndarray, deals: int, batch_size: int,
                      confidence: float = 0.95) -> pd.DataFrame:
    """Running estimate (n, mean, lo, hi with Wilson bounds) from one event's hits per batch.

    >>> batch_convergence(np.array([1, 3]), deals=15, batch_size=10)["mean"].tolist()
    [0.1, 0.26666666666666666]
    """
    per_batch = np.asarray(per_batch_hits)
    n = np.minimum(np.arange(1, per_batch.size + 1) * batch_size, deals)
    k = np.cumsum(per_batch)
    bounds = [wilson_interval(int(a), int(b), confidence) for a, b in zip(k, n)]
    return pd.DataFrame({"n": n, "mean": k / n, "lo": [b.lo for b in bounds], "hi": [b.hi for b in bounds]})


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
def _count_available(code: int, value: int, size: int, available: tuple[int, ...]) -> int:
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


def _given(given: Any, given_seat: Any) -> tuple[np.ndarray, int]:
    try:
        seat = check_seat(given_seat)
        return parse_dealt_hand(given, seat), seat
    except SimkitError as exc:
        raise ValueError(f"given hand: {exc}") from None


def _other_seat(spec: EventSpec, seat: Any, given_seat: int) -> int:
    seat = _check_seat_for(spec, seat)
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
    spec, value = _resolve(event, params)
    counts, given_seat = _given(given, given_seat)
    seat = _other_seat(spec, seat, given_seat)
    if not spec.exact:
        raise _no_closed_form(event)
    available = tuple(int(4 - c) for c in counts)
    unseen = N_CARDS - int(counts.sum())
    return Fraction(_count_available(spec.code, value, hand_size(seat), available), math.comb(unseen, hand_size(seat)))


@njit(cache=True, nogil=True)
def _given_batch_hits(root, first_deal, stop, given_seat, hand_ids, rest_ids, events, level, rules, hits):
    """hits[seat, e] += indicator of events[e] on seat's hand over the decks of
    fixed_hand_deck(deal) for deals first_deal .. stop - 1."""
    rng = np.zeros(4, dtype=np.uint64)
    deck = np.zeros(112, dtype=np.int64)
    dealt = np.zeros(N_SEATS * 28, dtype=np.int64)
    feats = np.zeros(F.N_FEATURES, dtype=np.int64)
    exposed, res, choice, work = F.feature_scratch()
    for deal in range(first_deal, stop):
        fixed_hand_deck(root, deal, given_seat, hand_ids, rest_ids, rng, deck)
        dealt[:] = 0
        deal_counts_kernel(deck, 0, dealt)
        for seat in range(N_SEATS):
            if seat == given_seat:
                continue
            F.hand_features(dealt[28 * seat : 28 * (seat + 1)], level, rules, exposed, res, choice, work, feats)
            for e in range(events.shape[0]):
                hits[seat, e] += _indicator(events[e, 0], events[e, 1], feats)


@njit(cache=True, parallel=True)
def _given_hits_kernel(root, n_deals, batch_size, given_seat, hand_ids, rest_ids, events, level, rules, hits):
    """hits[b, seat, e] over batch b of the given-hand deals; batches in parallel."""
    for b in prange(hits.shape[0]):
        _given_batch_hits(root, b * batch_size, min(n_deals, (b + 1) * batch_size), given_seat, hand_ids, rest_ids,
                          events, level, rules, hits[b])


def conditional_table(given: Any, given_seat: int = 0, deals: int = 100_000, seed: int = 2026, events: Any = None,
                      seats: Sequence[int] | None = None, batch_size: int = 10_000, confidence: float = 0.95,
                      rules: RuleSet | None = None) -> pd.DataFrame:
    """P(event) for the other seats' dealt hands given ``given_seat``'s hand ``given``: one row
    per (event, seat) with ``given_seat``, ``deals``, ``hits``, ``p`` and its Wilson interval
    ``lo``/``hi`` (Monte Carlo over ``deals`` deals of ``seed`` holding the given hand),
    ``exact`` (:func:`conditional_probability`, None without a closed form) and ``z`` =
    (p - exact) / sqrt(exact (1 - exact) / deals).  ``seats``: default the two other seats;
    events as in :func:`probability_table` (default :data:`DEFAULT_EVENTS`).

    >>> mine = "YJ*4 RJ*4 WJ*4 GJ*3 YC*3 RC*3 WC*3 GC*3 YZ*2 RZ*2"
    >>> t = conditional_table(mine, 0, deals=2000, seed=1, events=[("jiang_at_least_k", 1)])
    >>> t[["event", "seat", "exact"]].values.tolist()  # 10/27 and 1 - 10/27
    [['jiang_at_least_k(k=1)', 1, 0.37037037037037035], ['jiang_at_least_k(k=1)', 2, 0.37037037037037035]]
    >>> bool(((t["lo"] <= t["exact"]) & (t["exact"] <= t["hi"])).all())
    True
    """
    counts, given_seat = _given(given, given_seat)
    resolved = normalise_events(DEFAULT_EVENTS if events is None else events)
    if seats is None:
        seat_list = [s for s in range(N_SEATS) if s != given_seat]
    else:
        seat_list = [_check_seat(s) for s in ((seats,) if isinstance(seats, (int, np.integer)) else seats)]
        if given_seat in seat_list:
            raise ValueError(f"seat {given_seat} holds the given hand; ask about another seat")
        if not seat_list:
            raise ValueError("seats must name at least one seat other than the given hand's")
    _check_run(deals, seed, batch_size, confidence)
    rules = rules if rules is not None else RuleSet()
    arr, level = _event_array(resolved)
    hand_ids, rest_ids = fixed_hand_cards(counts)
    n_batches = (int(deals) + int(batch_size) - 1) // int(batch_size)
    hits = np.zeros((n_batches, N_SEATS, arr.shape[0]), dtype=np.int64)
    _given_hits_kernel(root_key(int(seed)), int(deals), int(batch_size), given_seat, hand_ids, rest_ids, arr, level,
                       rules.to_array(), hits)
    hits = hits.sum(axis=0)
    available = tuple(int(4 - c) for c in counts)
    unseen = N_CARDS - int(counts.sum())
    rows = []
    for e, (spec, value) in enumerate(resolved):
        for s in seat_list:
            if s not in spec.seats:
                continue
            k = int(hits[s, e])
            wilson = wilson_interval(k, int(deals), confidence)
            lo, hi = wilson.lo, wilson.hi
            p = k / int(deals)
            exact = z = None
            if spec.exact:
                exact = _count_available(spec.code, value, hand_size(s), available) / math.comb(unseen, hand_size(s))
                if 0.0 < exact < 1.0:
                    z = (p - exact) / math.sqrt(exact * (1.0 - exact) / int(deals))
                else:
                    z = 0.0 if p == exact else math.inf
            rows.append({"event": _label(spec, value), "seat": s, "given_seat": given_seat, "deals": int(deals),
                         "hits": k, "p": p, "lo": lo, "hi": hi, "exact": exact, "z": z})
    return pd.DataFrame(rows, columns=["event", "seat", "given_seat", "deals", "hits", "p", "lo", "hi", "exact", "z"])
