"""Dealt-hand statistics: deal many seeded deals and describe each seat's dealt hand.

This is the first simulation simkit runs end to end (before the play engine exists): it
estimates how often the dealer is dealt a complete or winning 31-card hand (天胡), how
far the dealt hands are from complete, and how many 将, pairs, 子 and 闹 they hold.

Determinism: deals run in batches of a fixed size; batch ``b`` is seeded by
``SeedSequence(seed).spawn(n_batches)[b]``, so the table is a pure function of
(seed, number of deals, batch size, rules), whatever the number of threads.

>>> table = deal_table(n_deals=6, seed=1, batch_size=4)
>>> table.shape, sorted(set(table["seat"]))
((18, 13), [0, 1, 2])
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from numba import njit, prange

from simkit.deck import DEALER_CARDS, N_SEATS, PLAYER_CARDS, _deal_counts_kernel, _shuffle_kernel
from simkit.evaluator import kernel as K
from simkit.rng import seed_state
from simkit.rules import RuleSet

# columns of the per-seat feature array
F_N_CARDS, F_N_JIANG, F_N_PAIRS, F_N_ZI, F_N_NAO, F_MIN_IDLE, F_COMPLETE, F_HU, F_UNITS, F_WINS = range(10)
N_FEATURES = 10
FEATURE_NAMES = ("n_cards", "n_jiang", "n_pairs", "n_zi", "n_nao", "min_idle", "complete", "hu", "units", "wins")


@njit(cache=True, nogil=True)
def count_features(counts):
    """(将 cards, types held >= 2 times, types held 3 times (子), types held 4 times (闹))."""
    pairs = 0
    zi = 0
    nao = 0
    for t in range(28):
        if counts[t] >= 2:
            pairs += 1
        if counts[t] == 3:
            zi += 1
        if counts[t] == 4:
            nao += 1
    return counts[0] + counts[7] + counts[14] + counts[21], pairs, zi, nao


@njit(cache=True, nogil=True)
def _deal_features_kernel(state, n_deals, rules, features):
    """Deal ``n_deals`` deals from one PRNG state; features[deal, seat, F_*]."""
    deck = np.arange(112, dtype=np.int64)
    dealt = np.zeros(N_SEATS * 28, dtype=np.int64)
    exposed = np.zeros((K.N_EXP_ROWS, 28), dtype=np.int64)
    out = np.zeros(K.N_OUT, dtype=np.int64)
    choice = np.zeros(K.N_CHOICE, dtype=np.int64)
    work = np.zeros(K.WORK_SIZE, dtype=np.int64)
    for d in range(n_deals):
        _shuffle_kernel(state, deck)
        dealt[:] = 0
        _deal_counts_kernel(deck, 0, dealt)
        for seat in range(N_SEATS):
            size = DEALER_CARDS if seat == 0 else PLAYER_CARDS
            counts = dealt[28 * seat : 28 * (seat + 1)]
            f = features[d, seat]
            f[F_N_CARDS] = size
            f[F_N_JIANG], f[F_N_PAIRS], f[F_N_ZI], f[F_N_NAO] = count_features(counts)
            K._evaluate_kernel(counts, exposed, 0, rules, 0, out, choice, work)
            f[F_MIN_IDLE] = out[K.OUT_MIN_IDLE]
            f[F_COMPLETE] = out[K.OUT_COMPLETE]
            f[F_HU] = out[K.OUT_HU]
            f[F_UNITS] = out[K.OUT_UNITS]
            f[F_WINS] = out[K.OUT_WINS]


@njit(cache=True, parallel=True)
def _batches_kernel(states, sizes, rules, features):
    offsets = np.zeros(sizes.shape[0] + 1, dtype=np.int64)
    for b in range(sizes.shape[0]):
        offsets[b + 1] = offsets[b] + sizes[b]
    for b in prange(sizes.shape[0]):
        _deal_features_kernel(states[b], sizes[b], rules, features[offsets[b] : offsets[b + 1]])


def deal_table(n_deals: int, seed: int, batch_size: int = 10_000, rules: RuleSet | None = None) -> pd.DataFrame:
    """One row per (deal, seat) with the dealt hand's features (see :data:`FEATURE_NAMES`)."""
    if n_deals < 1:
        raise ValueError(f"n_deals must be >= 1, got {n_deals}")
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    rules = rules if rules is not None else RuleSet()
    n_batches = (n_deals + batch_size - 1) // batch_size
    children = np.random.SeedSequence(seed).spawn(n_batches)
    states = np.stack([seed_state(child) for child in children])
    sizes = np.full(n_batches, batch_size, dtype=np.int64)
    sizes[-1] = n_deals - batch_size * (n_batches - 1)
    features = np.zeros((n_deals, N_SEATS, N_FEATURES), dtype=np.int64)
    _batches_kernel(states, sizes, rules.to_array(), features)
    deal_id = np.repeat(np.arange(n_deals, dtype=np.int64), N_SEATS)
    frame = pd.DataFrame(
        {
            "deal_id": deal_id,
            "batch": (deal_id // batch_size).astype(np.int32),
            "seat": np.tile(np.arange(N_SEATS, dtype=np.int8), n_deals),
        }
    )
    flat = features.reshape(-1, N_FEATURES)
    for j, name in enumerate(FEATURE_NAMES):
        if name in ("complete", "wins"):
            frame[name] = flat[:, j].astype(bool)
        else:
            frame[name] = flat[:, j].astype(np.int16)
    return frame
