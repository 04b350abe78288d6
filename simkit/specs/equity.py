"""The spec of ``simkit equity``: one seat's dealt hand fixed, the other cards shuffled, played to
the end (:func:`simkit.studies.equity.equity`; its deals: :mod:`simkit.runner.equity`).

Its identity is the equity dataset's (``OUT/equity``): the identity of the run of ordinary
deals it varies (:attr:`EquitySpec.simulation`: fixed seats, independent deals) with
``equity`` = {hand, seat, deck} added, as the folders written before specs hold it.

>>> hand = "YJ*3 YS YX YC*3 RJ*3 RS RX RC*3 WJ*3 WS WX WC*3 GJ*3 GS GX YZ*2"  # wins on the deal (天胡)
>>> spec = EquitySpec(hand, 0, deals=5, seed=1)
>>> spec.identity()["equity"]["hand"], spec.simulation.n_batches
('YJ*3 YS YX YC*3 YZ*2 RJ*3 RS RX RC*3 WJ*3 WS WX WC*3 GJ*3 GS GX', 1)
>>> EquitySpec("YJ*3", 1, deals=5, seed=1)
Traceback (most recent call last):
...
simkit.errors.CardError: seat 1's dealt hand has 30 cards, got 3 (seat 0, the dealer, holds 31)
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from simkit.cards import format_counts
from simkit.deck import check_seat, parse_dealt_hand
from simkit.specs.base import (
    IDENTITY,
    RunSpec,
    as_rules,
    check_bool,
    check_float,
    check_int,
    check_positive_int,
    field,
)
from simkit.specs.dataset import EQUITY, dataset_identity
from simkit.specs.simulate import DEFAULT_BATCH_SIZE, SimulateSpec

DECK_SCHEME = "fixed-seat-block-v1"  # how the fixed hand and the shuffled rest fill the deck (simkit.runner.equity)


@dataclasses.dataclass(frozen=True)
class EquitySpec(RunSpec):
    """The equity of ``seat``'s dealt ``hand`` (``simkit score`` notation or 28 counts; 31 cards
    for seat 0, the dealer, 30 for seats 1 and 2) over ``deals`` deals of ``seed`` played by
    ``policies`` (seat k plays policy k; seat 0 deals every deal) under ``rules``, in batches of
    ``batch_size`` deals.

    ``baseline``: also play the ordinary deals 0 .. deals - 1 of the same seed and policies and
    compare (their own dataset, ``OUT/baseline``: not in this identity); ``confidence``: the
    level of every interval.  ``labels`` is set by a run that resumes a folder (the values of
    its policy columns), not by a caller.  ``hand`` is kept as its 28 counts; ``simulation``
    (not a parameter) is the run of ordinary deals the equity deals vary, made here so that a
    worker process receives the policies' source digests of the process that started the run."""

    KIND = "equity"

    hand: Any
    seat: int = 0
    policies: Any = "greedy,greedy,greedy"
    deals: int = 10_000
    seed: int = 0
    rules: Any = None
    batch_size: int = DEFAULT_BATCH_SIZE
    baseline: bool = field(True, identity=False)
    confidence: float = field(0.95, identity=False)
    labels: tuple[str, ...] | None = field(None, identity=False)
    simulation: SimulateSpec = dataclasses.field(init=False, repr=False, metadata={IDENTITY: False})

    def check(self) -> None:
        self._set("seat", check_seat(self.seat))
        self._set("hand", tuple(int(c) for c in parse_dealt_hand(self.hand, self.seat)))
        self._set("rules", as_rules(self.rules))
        check_positive_int(self, "deals")
        check_int(self, "seed", 0)
        check_positive_int(self, "batch_size")
        check_bool(self, "baseline")
        check_float(self, "confidence", 0.0, 1.0, open_lo=True, open_hi=True)
        # fixed seats: seat K plays policy K in every deal (the baseline too)
        simulation = SimulateSpec(self.deals, self.policies, self.seed, self.rules, self.batch_size,
                                  session_length=1, seating="fixed", labels=self.labels)
        self._set("policies", simulation.policies)
        self._set("labels", simulation.labels)
        self._set("simulation", simulation)

    @property
    def counts(self) -> np.ndarray:
        """The hand's 28 counts."""
        return np.array(self.hand, dtype=np.int64)

    @property
    def hand_text(self) -> str:
        return format_counts(self.counts)

    def identity(self) -> dict[str, Any]:
        """The equity dataset's identity: its ordinary deals' (:attr:`simulation`) with
        ``equity`` = {hand, seat, deck scheme}."""
        return dataset_identity({**self.simulation.identity(),
                                 EQUITY: {"hand": self.hand_text, "seat": self.seat, "deck": DECK_SCHEME}})
