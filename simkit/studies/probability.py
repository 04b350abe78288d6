"""Monte Carlo estimates of the dealt-hand events of :mod:`simkit.analysis.exact`.

Deal number N of ``seed`` is the engine's deal N (:mod:`simkit.studies.dealt`), so ``simkit prob
--seed S`` counts the very hands ``simkit simulate --seed S`` deals.  Hit counts are a pure
function of (seed, deals, rules), whatever the batch size or thread count.

>>> r = estimate_probability("jiang_at_least_k", deals=2000, seed=1, k=8)
>>> r.deals, 0.0 <= r.lo <= r.p <= r.hi <= 1.0, r.exact is not None
(2000, True, True)
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from numba import njit, prange

from simkit.studies.dealt import deal_features
from simkit.analysis.results import Result
from simkit.analysis.exact import (
    DEFAULT_EVENTS,
    EventSpec,
    check_any_seat,
    check_event_seat,
    count_kernel,
    event_array,
    event_indicator,
    event_label,
    hand_size,
    normalise_events,
    resolve_event,
)
from simkit.analysis.stats import wilson_interval
from simkit.cards import N_CARDS, N_SEATS, N_TYPES
from simkit.evaluator import features as F
from simkit.rng import root_key
from simkit.rules import RuleSet

__all__ = [
    "ProbabilityEstimate",
    "ProbabilityTable",
    "batch_convergence",
    "check_run",
    "estimate_probability",
    "event_indicators",
    "probability_convergence",
    "probability_table",
]
@njit(cache=True, nogil=True)
def _indicators_kernel(hands, events, rules, level, out):
    """out[i, e] = indicator of events[e] = (code, value) on the 28-count row hands[i]."""
    feats = np.zeros(F.N_FEATURES, dtype=np.int64)
    exposed, res, choice, work = F.feature_scratch()
    for i in range(hands.shape[0]):
        F.hand_features(hands[i], level, rules, exposed, res, choice, work, feats)
        for e in range(events.shape[0]):
            out[i, e] = event_indicator(events[e, 0], events[e, 1], feats)


@njit(cache=True, nogil=True)
def _batch_hits(root, first_deal, stop, events, level, rules, hits):
    """hits[seat, e] += indicator of events[e] on seat's hand, over deals first_deal .. stop - 1."""
    rng = np.zeros(4, dtype=np.uint64)
    deck = np.zeros(N_CARDS, dtype=np.int64)
    dealt = np.zeros(N_SEATS * N_TYPES, dtype=np.int64)
    feats = np.zeros((N_SEATS, F.N_FEATURES), dtype=np.int64)
    exposed, res, choice, work = F.feature_scratch()
    for deal in range(first_deal, stop):
        deal_features(root, deal, level, rules, rng, deck, dealt, exposed, res, choice, work, feats)
        for seat in range(N_SEATS):
            for e in range(events.shape[0]):
                hits[seat, e] += event_indicator(events[e, 0], events[e, 1], feats[seat])


@njit(cache=True, parallel=True)
def _hits_kernel(root, n_deals, batch_size, events, level, rules, hits):
    """hits[b, seat, e] = hits of events[e] on seat's hand over batch b (deals b * batch_size
    onwards, at most batch_size of them, up to n_deals); batches in parallel."""
    for b in prange(hits.shape[0]):
        _batch_hits(root, b * batch_size, min(n_deals, (b + 1) * batch_size), events, level, rules, hits[b])



def check_run(deals: Any, seed: Any, batch_size: Any, confidence: Any) -> None:
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
        exact = float(count_kernel(spec.code, value, hand_size(seat), tuple(range(N_TYPES)))
                      / math.comb(N_CARDS, hand_size(seat)))
        if 0.0 < exact < 1.0:
            z = (p - exact) / math.sqrt(exact * (1.0 - exact) / deals)
        else:
            z = 0.0 if p == exact else math.inf
    return {"event": event_label(spec, value), "seat": seat, "deals": deals, "hits": int(hits), "p": p,
            "lo": lo, "hi": hi, "exact": exact, "z": z}


def estimate_probability(event: str, deals: int, seed: int, seat: int = 0, batch_size: int = 10_000,
                         confidence: float = 0.95, *, rules: RuleSet | None = None,
                         **params: int) -> ProbabilityEstimate:
    """Monte Carlo estimate of P(event) for ``seat``'s dealt hand over ``deals`` seeded deals
    (:class:`ProbabilityEstimate`: hits, ``p``, the Wilson interval at ``confidence``, the
    exact value where a closed form exists).  ``rules`` only matter for evaluator events.
    """
    spec, value = resolve_event(event, params)
    seat = check_event_seat(spec, seat)
    check_run(deals, seed, batch_size, confidence)
    rules = rules if rules is not None else RuleSet()
    arr, level = event_array([(spec, value)])
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

    >>> t = probability_table(500, seed=2, events=["nao", ("jiang_at_least_k", 8), "dealer_dealt_win"])
    >>> list(zip(t["event"], t["seat"]))[2:5]
    [('nao', 2), ('jiang_at_least_k(k=8)', 0), ('jiang_at_least_k(k=8)', 1)]
    >>> len(t), t["event"].iloc[-1], int(t["seat"].iloc[-1])  # seat 0 only
    (7, 'dealer_dealt_win', 0)
    """
    resolved = normalise_events(DEFAULT_EVENTS if events is None else events)
    if isinstance(seats, (int, np.integer)):
        seats = (seats,)
    seat_list = [check_any_seat(s) for s in seats]
    if not seat_list:
        raise ValueError("seats must name at least one of 0, 1, 2")
    check_run(deals, seed, batch_size, confidence)
    rules = rules if rules is not None else RuleSet()
    arr, level = event_array(resolved)
    per_batch = _simulate(arr, level, int(deals), int(seed), int(batch_size), rules)
    hits = per_batch.sum(axis=0)
    rows = [_row(spec, value, s, int(deals), int(hits[s, e]), float(confidence))
            for e, (spec, value) in enumerate(resolved) for s in seat_list if s in spec.seats]
    table = pd.DataFrame(rows, columns=TABLE_COLUMNS)
    if not with_batches:
        return table
    return ProbabilityTable(table, {event_label(spec, value): per_batch[:, :, e] for e, (spec, value) in enumerate(resolved)},
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
    ev, level = event_array(resolved)
    out = np.zeros((arr.shape[0], ev.shape[0]), dtype=np.int64)
    _indicators_kernel(np.ascontiguousarray(arr, dtype=np.int64), ev, rules.to_array(), level, out)
    return out



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
    seat = check_event_seat(spec, seat)
    check_run(deals, seed, batch_size, confidence)
    arr, level = event_array([(spec, value)])
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


