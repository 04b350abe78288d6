"""Shuffled decks and deals (RULES.md §5): dealer 31 cards, the others 30, stock 21.

>>> deal = deal_from_seed(7)
>>> [len(h) for h in deal.hands], len(deal.stock)
([31, 30, 30], 21)
>>> bool(np.array_equal(deal_from_seed(7).deck, deal.deck))
True
"""

from __future__ import annotations

import dataclasses

import numpy as np
from numba import njit

from simkit.cards import N_CARDS, N_TYPES, ids_to_counts
from simkit.rng import next_below, seed_state, stream_state

DEALER_CARDS = 31
PLAYER_CARDS = 30
STOCK_CARDS = 21
N_SEATS = 3


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
            counts[28 * seat + deck[i] // 4] += 1
        pos += size
    return pos


@njit(cache=True, nogil=True)
def deal_deck(root, deal, rng, deck):
    """Shuffle ``deck`` into deal number ``deal``'s order (stream 0 of (root, deal), see
    :mod:`simkit.rng`): the deck every deal N of a run with root ``root_key(seed)`` is dealt
    from, in the engine and in the dealt-hand statistics (:mod:`simkit.analysis.dealt`);
    ``rng``: uint64[4] scratch."""
    stream_state(root, deal, 0, rng)
    for i in range(112):
        deck[i] = i
    shuffle_kernel(rng, deck)


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
        return self.deck[DEALER_CARDS + 2 * PLAYER_CARDS :]

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
