"""Deck shuffling and dealing (docs/rules.md §5), and the PRNG behind them."""

import numpy as np
from scipy import stats

from simkit.deck import deal_counts, deal_from_seed, shuffled_deck
from simkit.rng import next_below, seed_state


def test_deal_sizes_and_conservation():
    deal = deal_from_seed(123)
    assert [len(h) for h in deal.hands] == [31, 30, 30] and len(deal.stock) == 21
    assert sorted(deal.deck.tolist()) == list(range(112))
    counts = deal.hand_counts()
    assert counts.sum(axis=1).tolist() == [31, 30, 30]
    assert np.array_equal(counts, deal_counts(deal.deck))


def test_deterministic_per_seed_and_different_across_seeds():
    assert np.array_equal(shuffled_deck(5), shuffled_deck(5))
    assert not np.array_equal(shuffled_deck(5), shuffled_deck(6))
    seq = np.random.SeedSequence(99).spawn(2)
    assert not np.array_equal(shuffled_deck(seq[0]), shuffled_deck(seq[1]))


def test_shuffle_is_uniform_on_positions():
    # position of card 0 over many shuffles: chi-square against uniform on 112 slots
    hits = np.zeros(112)
    for s in range(5600):
        hits[int(np.argmax(shuffled_deck(s) == 0))] += 1
    assert stats.chisquare(hits).pvalue > 1e-4


def test_next_below_is_unbiased_and_in_range():
    state = seed_state(1)
    draws = np.array([next_below(state, 7) for _ in range(14000)])
    assert draws.min() == 0 and draws.max() == 6
    assert stats.chisquare(np.bincount(draws, minlength=7)).pvalue > 1e-4
