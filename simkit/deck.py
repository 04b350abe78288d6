"""Shuffled decks and deals (docs/rules.md §5): dealer 31 cards, the others 30, stock 21.

>>> deal = deal_from_seed(7)
>>> [len(h) for h in deal.hands], len(deal.stock)
([31, 30, 30], 21)
>>> bool(np.array_equal(deal_from_seed(7).deck, deal.deck))
True
"""

from __future__ import annotations

import dataclasses
from typing import Sequence

import numpy as np
from numba import njit

from simkit.cards import N_CARDS, N_COPIES, N_SEATS, N_TYPES, check_counts, ids_to_counts, parse_counts
from simkit.errors import CardError, SimkitError
from simkit.rng import STREAM_CARDS, next_below, seed_state, stream_state

DEALER_CARDS = 31
PLAYER_CARDS = 30
STOCK_CARDS = N_CARDS - DEALER_CARDS - (N_SEATS - 1) * PLAYER_CARDS  # 21


@njit(cache=True, nogil=True)
def shuffle_kernel(state, deck):
    """Fisher-Yates shuffle of ``deck`` in place, drawing from the xoshiro ``state``."""
    for i in range(deck.shape[0] - 1, 0, -1):
        j = next_below(state, i + 1)
        tmp = deck[i]
        deck[i] = deck[j]
        deck[j] = tmp


@njit(cache=True, nogil=True)
def deal_counts_kernel(deck, dealer, counts):
    """Add the dealt hands of ``deck`` to ``counts`` (flat, 3 x 28): ``dealer`` gets the first
    31 cards, then 30 each in turn order.  Returns the deck index of the first stock card."""
    pos = 0
    for k in range(N_SEATS):
        seat = (dealer + k) % N_SEATS
        size = DEALER_CARDS if k == 0 else PLAYER_CARDS
        for i in range(pos, pos + size):
            counts[N_TYPES * seat + deck[i] // N_COPIES] += 1
        pos += size
    return pos


@njit(cache=True, nogil=True)
def deal_deck(root, deal, rng, deck):
    """Shuffle ``deck`` into deal number ``deal``'s order (stream STREAM_CARDS of (root, deal), see
    :mod:`simkit.rng`): the deck every deal N of a run with root ``root_key(seed)`` is dealt
    from, in the engine and in the dealt-hand statistics (:mod:`simkit.studies.dealt`);
    ``rng``: uint64[4] scratch."""
    stream_state(root, deal, STREAM_CARDS, rng)
    for i in range(N_CARDS):
        deck[i] = i
    shuffle_kernel(rng, deck)


def dealt_hand_size(seat: int) -> int:
    """Cards dealt to ``seat`` when seat 0 deals: 31 for the dealer, 30 for seats 1 and 2."""
    return DEALER_CARDS if seat == 0 else PLAYER_CARDS


def check_seat(seat: object) -> int:
    """``seat`` as an int 0..2; a one-line :class:`~simkit.errors.SimkitError` otherwise."""
    if isinstance(seat, bool) or not isinstance(seat, (int, np.integer)) or not 0 <= int(seat) < N_SEATS:
        raise SimkitError(f"seat must be 0, 1 or 2, got {seat!r}")
    return int(seat)


def parse_dealt_hand(hand: str | np.ndarray | Sequence[int], seat: int) -> np.ndarray:
    """The 28-count vector of ``seat``'s dealt hand (seat 0 deals), given as text (``simkit
    score`` notation) or counts; a one-line :class:`~simkit.errors.CardError` for an unknown
    card, a 5th copy or a wrong number of cards.

    >>> int(parse_dealt_hand("YJ*4 RJ*4 WJ*4 GJ*3 YC*3 RC*3 WC*3 GC*3 YZ*2 RZ*2", 0).sum())
    31
    >>> parse_dealt_hand("YJ*3", 1)
    Traceback (most recent call last):
    ...
    simkit.errors.CardError: seat 1's dealt hand has 30 cards, got 3 (seat 0, the dealer, holds 31)
    """
    seat = check_seat(seat)
    if isinstance(hand, str):
        if not hand.strip():
            raise CardError("no hand given (e.g. \"RJ*3 RS*2 ...\": 31 cards for seat 0, the dealer, 30 for seats 1 "
                            "and 2)")
        counts = parse_counts(hand)
    else:
        counts = check_counts(hand)
    n = int(counts.sum())
    if n != dealt_hand_size(seat):
        who = "the dealer's (seat 0)" if seat == 0 else f"seat {seat}'s"
        other = "seats 1 and 2 hold 30" if seat == 0 else "seat 0, the dealer, holds 31"
        raise CardError(f"{who} dealt hand has {dealt_hand_size(seat)} cards, got {n} ({other})")
    return counts


def seat_block(seat: int) -> tuple[int, int]:
    """(first deck position, number of cards) of ``seat``'s dealt hand when seat 0 deals
    (:func:`deal_counts_kernel`): seat 0 gets positions 0..30, seat 1 31..60, seat 2 61..90.

    >>> seat_block(0), seat_block(1), seat_block(2)
    ((0, 31), (31, 30), (61, 30))
    """
    if seat == 0:
        return 0, DEALER_CARDS
    return DEALER_CARDS + PLAYER_CARDS * (seat - 1), PLAYER_CARDS


def fixed_hand_cards(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(card ids of a hand, the other card ids), both ascending, for a 28-count vector: the
    hand takes the lowest copies of each type (the engine reads only a card's type, ``id // 4``).

    >>> hand, rest = fixed_hand_cards(ids_to_counts([0, 1, 8]))
    >>> hand.tolist(), rest.size
    ([0, 1, 8], 109)
    """
    counts = np.asarray(counts, dtype=np.int64)
    ids = np.arange(N_CARDS, dtype=np.int64)
    held = (ids % N_COPIES) < counts[ids // N_COPIES]
    return ids[held], ids[~held]


@njit(cache=True, nogil=True)
def fixed_hand_deck(root, deal, seat, hand_ids, rest_ids, rng, deck):
    """The deck of equity deal number ``deal`` (seat 0 dealing): ``seat``'s dealing positions
    (:func:`seat_block`) hold ``hand_ids`` in order; the other 81 or 82 positions hold
    ``rest_ids`` shuffled (Fisher-Yates, :func:`shuffle_kernel`) with stream 0 of
    (root, deal), the stream that shuffles the ordinary deal N (:func:`deal_deck`).  So the
    deck is a pure function of (root, deal, hand, seat).  ``rng``: uint64[4] scratch."""
    stream_state(root, deal, STREAM_CARDS, rng)
    n_rest = rest_ids.shape[0]
    size = hand_ids.shape[0]
    start = 0 if seat == 0 else DEALER_CARDS + PLAYER_CARDS * (seat - 1)
    for i in range(n_rest):
        deck[i] = rest_ids[i]
    shuffle_kernel(rng, deck[:n_rest])
    for i in range(n_rest - 1, start - 1, -1):  # open the seat's block: later cards move up
        deck[i + size] = deck[i]
    for i in range(size):
        deck[start + i] = hand_ids[i]


@njit(cache=True, nogil=True)
def fixed_hand_decks(root, first_deal, seat, hand_ids, rest_ids, decks):
    """decks[i] = :func:`fixed_hand_deck` of deal ``first_deal + i``."""
    rng = np.zeros(4, dtype=np.uint64)
    for i in range(decks.shape[0]):
        fixed_hand_deck(root, first_deal + i, seat, hand_ids, rest_ids, rng, decks[i])


def shuffled_deck(seed: int | np.random.SeedSequence) -> np.ndarray:
    """The 112 card ids in dealing order for a seed (int64 array)."""
    deck = np.arange(N_CARDS, dtype=np.int64)
    shuffle_kernel(seed_state(seed), deck)
    return deck


@dataclasses.dataclass(frozen=True)
class Deal:
    """A dealt deck: ``deck`` in dealing order; seat 0 is the dealer."""

    deck: np.ndarray

    @property
    def hands(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Card ids of the three dealt hands (31, 30, 30)."""
        a = DEALER_CARDS
        b = a + PLAYER_CARDS
        c = b + PLAYER_CARDS
        return self.deck[:a], self.deck[a:b], self.deck[b:c]

    @property
    def stock(self) -> np.ndarray:
        """The 21 stock cards, top (next drawn) first."""
        return self.deck[DEALER_CARDS + (N_SEATS - 1) * PLAYER_CARDS :]

    def hand_counts(self) -> np.ndarray:
        """(3, 28) count vectors of the dealt hands."""
        return np.stack([ids_to_counts(h) for h in self.hands])


def deal_from_seed(seed: int | np.random.SeedSequence) -> Deal:
    """Shuffle and deal from a seed."""
    return Deal(shuffled_deck(seed))


def deal_counts(deck: np.ndarray) -> np.ndarray:
    """(3, 28) counts of the dealt hands of a deck, computed in numba."""
    counts = np.zeros(N_SEATS * N_TYPES, dtype=np.int64)
    deal_counts_kernel(np.ascontiguousarray(deck, dtype=np.int64), 0, counts)
    return counts.reshape(N_SEATS, N_TYPES)
