"""Given one seat's dealt hand, the other seats' hands by Monte Carlo over the equity deals
(:func:`simkit.deck.fixed_hand_deck`), next to the exact values of
:func:`simkit.analysis.exact.conditional_probability`."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from numba import njit, prange

from simkit.analysis.exact import (
    DEFAULT_EVENTS,
    check_any_seat,
    count_available,
    event_array,
    event_indicator,
    event_label,
    given_hand,
    hand_size,
    normalise_events,
)
from simkit.studies.probability import check_run
from simkit.analysis.stats import wilson_interval
from simkit.cards import N_CARDS, N_SEATS, N_TYPES
from simkit.deck import (
    deal_counts_kernel,
    fixed_hand_cards,
    fixed_hand_deck,
)
from simkit.evaluator import features as F
from simkit.rng import root_key
from simkit.rules import RuleSet

__all__ = [
    "conditional_table",
]
@njit(cache=True, nogil=True)
def _given_batch_hits(root, first_deal, stop, given_seat, hand_ids, rest_ids, events, level, rules, hits):
    """hits[seat, e] += indicator of events[e] on seat's hand over the decks of
    fixed_hand_deck(deal) for deals first_deal .. stop - 1."""
    rng = np.zeros(4, dtype=np.uint64)
    deck = np.zeros(N_CARDS, dtype=np.int64)
    dealt = np.zeros(N_SEATS * N_TYPES, dtype=np.int64)
    feats = np.zeros(F.N_FEATURES, dtype=np.int64)
    exposed, res, choice, work = F.feature_scratch()
    for deal in range(first_deal, stop):
        fixed_hand_deck(root, deal, given_seat, hand_ids, rest_ids, rng, deck)
        dealt[:] = 0
        deal_counts_kernel(deck, 0, dealt)
        for seat in range(N_SEATS):
            if seat == given_seat:
                continue
            hand = dealt[N_TYPES * seat : N_TYPES * (seat + 1)]
            F.hand_features(hand, level, rules, exposed, res, choice, work, feats)
            for e in range(events.shape[0]):
                hits[seat, e] += event_indicator(events[e, 0], events[e, 1], feats)


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
    counts, given_seat = given_hand(given, given_seat)
    resolved = normalise_events(DEFAULT_EVENTS if events is None else events)
    if seats is None:
        seat_list = [s for s in range(N_SEATS) if s != given_seat]
    else:
        seat_list = [check_any_seat(s) for s in ((seats,) if isinstance(seats, (int, np.integer)) else seats)]
        if given_seat in seat_list:
            raise ValueError(f"seat {given_seat} holds the given hand; ask about another seat")
        if not seat_list:
            raise ValueError("seats must name at least one seat other than the given hand's")
    check_run(deals, seed, batch_size, confidence)
    rules = rules if rules is not None else RuleSet()
    arr, level = event_array(resolved)
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
                exact = count_available(spec.code, value, hand_size(s), available) / math.comb(unseen, hand_size(s))
                if 0.0 < exact < 1.0:
                    z = (p - exact) / math.sqrt(exact * (1.0 - exact) / int(deals))
                else:
                    z = 0.0 if p == exact else math.inf
            rows.append({"event": event_label(spec, value), "seat": s, "given_seat": given_seat, "deals": int(deals),
                         "hits": k, "p": p, "lo": lo, "hi": hi, "exact": exact, "z": z})
    return pd.DataFrame(rows, columns=["event", "seat", "given_seat", "deals", "hits", "p", "lo", "hi", "exact", "z"])
