"""Dealt hands: the hands every deal of a seeded run deals, and their features.

Deal number N of seed S is the engine's deal N (:func:`simkit.deck.deal_deck`, seeded by
(S, N) only): the same cards ``simkit simulate`` / ``simkit replay`` deal for that seed and
deal number.  Seat 0 is the dealer (31 cards), seats 1 and 2 hold 30, as in a run of
independent deals (in a run in sessions the same deck goes to the session's dealer first).
Every result here is therefore a pure function of (seed, number of deals, rules), whatever
the batch size, thread count or machine.  The features of a hand are those of
:func:`simkit.evaluator.features.hand_features`.

This is the simulation behind ``simkit prob`` (:mod:`simkit.studies.probability` counts
events on these hands) and ``simkit prob --hands`` / ``simkit deals`` (:func:`deal_table`, one
row per deal and seat, written with its report by
:func:`simkit.analysis.report.write_dealt_hands_report`).

>>> table = deal_table(6, seed=1, batch_size=4)
>>> table.shape, sorted(set(table["seat"])), table["batch"].tolist()[::3]
((18, 13), [0, 1, 2], [0, 0, 0, 0, 1, 1])
>>> bool((dealt_hands(1, 6).sum(axis=2) == [31, 30, 30]).all())
True
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from numba import njit

from simkit.cards import N_CARDS, N_SEATS, N_TYPES
from simkit.deck import DEALER_CARDS, PLAYER_CARDS, deal_counts_kernel, deal_deck
from simkit.evaluator import features as F
from simkit.jit import run_chunks
from simkit.rng import root_key
from simkit.rules import RuleSet
from simkit.runner.batch import check_memory

__all__ = ["REGRESSION_FEATURES", "TABLE_FEATURES", "deal_features", "deal_table", "dealt_feature_matrix",
           "dealt_hands"]

# deal_table's feature columns: (column, feature index, dtype)
TABLE_FEATURES = (
    ("n_jiang", F.F_JIANG, np.int16),
    ("n_pairs", F.F_PAIRS, np.int16),
    ("n_zi", F.F_ZI, np.int16),
    ("n_nao", F.F_NAO, np.int16),
    ("min_idle", F.F_MIN_IDLE, np.int16),
    ("complete", F.F_COMPLETE, bool),
    ("hu", F.F_HU, np.int16),
    ("units", F.F_UNITS, np.int16),
    ("wins", F.F_WINS, bool),
)
CHUNK = 256  # deals per unit of parallel work

# dealt_feature_matrix's features of each seat's hand, the dataset's dealt_<name>_k columns
# (simkit.runner.batch.DEALT_COLUMNS): (name, feature index); columns seat-major
REGRESSION_FEATURES = (("jiang", F.F_JIANG), ("pairs", F.F_PAIRS), ("zi", F.F_ZI), ("nao", F.F_NAO),
                       ("chariots", F.F_CHARIOTS), ("idle", F.F_MIN_IDLE))
_REGRESSION_INDICES = np.array([index for _, index in REGRESSION_FEATURES], dtype=np.int64)


@njit(cache=True, nogil=True)
def _deal_hands(root, deal, rng, deck, dealt):
    """dealt (flat 3 x 28) = the hands of deal number ``deal``, seat 0 dealing."""
    deal_deck(root, deal, rng, deck)
    dealt[:] = 0
    deal_counts_kernel(deck, 0, dealt)


@njit(cache=True, nogil=True)
def deal_features(root, deal, level, rules, rng, deck, dealt, exposed, out, choice, work, feats):
    """feats[seat] = the features (up to ``level``) of seat's hand in deal number ``deal``."""
    _deal_hands(root, deal, rng, deck, dealt)
    for seat in range(N_SEATS):
        hand = dealt[N_TYPES * seat : N_TYPES * (seat + 1)]
        F.hand_features(hand, level, rules, exposed, out, choice, work, feats[seat])


@njit(cache=True, nogil=True)
def _hands_kernel(root, first_deal, hands):
    """hands[i] (flat 3 x 28 counts) = the hands of deal first_deal + i."""
    rng = np.zeros(4, dtype=np.uint64)
    deck = np.zeros(N_CARDS, dtype=np.int64)
    for i in range(hands.shape[0]):
        _deal_hands(root, first_deal + i, rng, deck, hands[i])


@njit(cache=True, nogil=True)
def _features_chunk(k, root, level, rules, features):
    """features[d] = deal_features of deal d, for the deals d of chunk k."""
    n = features.shape[0]
    rng = np.zeros(4, dtype=np.uint64)
    deck = np.zeros(N_CARDS, dtype=np.int64)
    dealt = np.zeros(N_SEATS * N_TYPES, dtype=np.int64)
    exposed, out, choice, work = F.feature_scratch()
    for d in range(k * CHUNK, min(n, (k + 1) * CHUNK)):
        deal_features(root, d, level, rules, rng, deck, dealt, exposed, out, choice, work, features[d])


def _features_kernel(root, level, rules, features) -> None:
    """features[d] = deal_features of deal d, chunks of deals in parallel (Python threads:
    :func:`simkit.jit.run_chunks`)."""
    run_chunks(_features_chunk, [(k, root, level, rules, features)
                                 for k in range((features.shape[0] + CHUNK - 1) // CHUNK)])


@njit(cache=True, nogil=True)
def _feature_matrix_kernel(root, first_deal, indices, matrix):
    """matrix[i, seat * len(indices) + j] = feature indices[j] (LEVEL_IDLE) of seat's hand in
    deal number first_deal + i."""
    rules = np.zeros(1, dtype=np.int64)  # not read below LEVEL_EVAL
    rng = np.zeros(4, dtype=np.uint64)
    deck = np.zeros(N_CARDS, dtype=np.int64)
    dealt = np.zeros(N_SEATS * N_TYPES, dtype=np.int64)
    feats = np.zeros((N_SEATS, F.N_FEATURES), dtype=np.int64)
    exposed, out, choice, work = F.feature_scratch()
    width = indices.shape[0]
    for i in range(matrix.shape[0]):
        deal_features(root, first_deal + i, F.LEVEL_IDLE, rules, rng, deck, dealt, exposed, out, choice, work, feats)
        for seat in range(N_SEATS):
            for j in range(width):
                matrix[i, seat * width + j] = feats[seat, indices[j]]


def dealt_feature_matrix(seed: int, deals: int, first_deal: int = 0) -> np.ndarray:
    """(deals, 3 x 6) float array: per deal ``first_deal ..``, each seat's dealt-hand features
    :data:`REGRESSION_FEATURES` (将, pairs, 子, 闹, chariot sets, fewest idle cards; seat 0's
    six, then seat 1's, then seat 2's), seat 0 dealing: the ``dealt_*_k`` columns of the run's
    datasets, computed from (seed, deal number) alone.  The covariates of ``simkit compare
    --variance-reduction regression`` (:mod:`simkit.analysis.regression`)."""
    deals = _check_count("deals", deals)
    if isinstance(first_deal, bool) or not isinstance(first_deal, (int, np.integer)) or not \
            0 <= first_deal <= 2**63 - 1 - deals:
        raise ValueError(f"first_deal must be an integer >= 0 (with the deals, below 2**63), got {first_deal!r}")
    matrix = np.zeros((deals, N_SEATS * len(REGRESSION_FEATURES)), dtype=np.int64)
    _feature_matrix_kernel(root_key(seed), np.int64(first_deal), _REGRESSION_INDICES, matrix)
    return matrix.astype(float)


def _check_count(name: str, value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    return int(value)


def dealt_hands(seed: int, deals: int, first_deal: int = 0) -> np.ndarray:
    """(deals, 3, 28) counts of the hands of deals first_deal .. first_deal + deals - 1 of
    ``seed``, seat 0 dealing: the engine's dealt hands (dataset rows with dealer 0)."""
    if isinstance(first_deal, bool) or not isinstance(first_deal, (int, np.integer)) or first_deal < 0:
        raise ValueError(f"first_deal must be an integer >= 0, got {first_deal!r}")
    hands = np.zeros((_check_count("deals", deals), N_SEATS * N_TYPES), dtype=np.int64)
    _hands_kernel(root_key(seed), int(first_deal), hands)
    return hands.reshape(-1, N_SEATS, N_TYPES)


DEALT_BYTES_PER_DEAL = 320  # peak memory per deal of deal_table and its files (measured 0.29 kB: prob --hands,
# 40,000 and 400,000 deals; the table is held whole)


def check_dealt_table_memory(n_deals: int) -> None:
    """:func:`~simkit.runner.batch.check_memory` of the table :func:`deal_table` holds whole
    (:data:`DEALT_BYTES_PER_DEAL` per deal)."""
    check_memory(int(n_deals) * DEALT_BYTES_PER_DEAL, f"{int(n_deals):,}: a dealt-hands table of that many",
                 "deals")


def deal_table(n_deals: int, seed: int, batch_size: int = 10_000, rules: RuleSet | None = None) -> pd.DataFrame:
    """One row per (deal, seat) of deals 0 .. n_deals - 1 of ``seed``: ``deal_id``, ``batch``
    (``deal_id // batch_size``), ``seat``, ``n_cards`` and the hand's features
    (:data:`TABLE_FEATURES`: 将, pairs, 子, 闹, fewest idle cards, complete, hu, units, wins)."""
    n_deals = _check_count("n_deals", n_deals)
    batch_size = _check_count("batch_size", batch_size)
    check_dealt_table_memory(n_deals)
    rules = rules if rules is not None else RuleSet()
    features = np.zeros((n_deals, N_SEATS, F.N_FEATURES), dtype=np.int64)
    _features_kernel(root_key(seed), F.LEVEL_EVAL, rules.to_array(), features)
    deal_id = np.repeat(np.arange(n_deals, dtype=np.int64), N_SEATS)
    seat = np.tile(np.arange(N_SEATS, dtype=np.int8), n_deals)
    frame = pd.DataFrame({"deal_id": deal_id, "batch": (deal_id // batch_size).astype(np.int32), "seat": seat})
    frame["n_cards"] = np.where(seat == 0, DEALER_CARDS, PLAYER_CARDS).astype(np.int16)
    flat = features.reshape(-1, F.N_FEATURES)
    for name, index, dtype in TABLE_FEATURES:
        frame[name] = flat[:, index].astype(dtype)
    return frame
