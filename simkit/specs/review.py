"""The spec of a review (``simkit review``, :func:`simkit.studies.review.review_decisions`): the
seat reviewed, how each of its decisions is analysed, and the loss against a reference
(:func:`simkit.studies.review.review_log_against_reference`).

A review's folder (``review.json``, ``review.md``, ...) records what it ran with as the review's
own figures (policy, seed, rollouts, luck, confidence, belief; the reference and its stock
orders); a review resumes nothing, so the spec's identity is the generic one.

>>> spec = ReviewSpec(seat=1, rollouts=32)
>>> spec.analysis(seed=7, first=64).rollouts, spec.analysis(seed=7, first=64).first
(32, 64)
>>> ReviewSpec(seat=3)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
simkit.errors.SimkitError: seat must be 0, 1 or 2, got 3
"""

from __future__ import annotations

import dataclasses
from typing import Any

from simkit.cards import N_SEATS
from simkit.defaults import (
    DEFAULT_BATCH,
    DEFAULT_BELIEF_NOISE,
    DEFAULT_POLICY,
    DEFAULT_REFERENCE,
    DEFAULT_REVIEW_ROLLOUTS,
    DEFAULT_SAMPLES,
    DEFAULT_SHARPEN,
)
from simkit.errors import SimkitError
from simkit.policies.registry import PolicySpec
from simkit.specs.analyze import AnalyzeSpec, check_confidence, check_luck
from simkit.specs.base import RunSpec, as_policy, check_float, check_int, check_positive_int


@dataclasses.dataclass(frozen=True)
class ReviewSpec(RunSpec):
    """A review's settings: ``seat`` (the seat reviewed); each decision's analysis
    (:meth:`analysis`: ``policy``, ``rollouts``, ``luck``, ``batch``, ``confidence``, ``sharpen``,
    ``belief``, ``belief_noise``, as :class:`~simkit.specs.analyze.AnalyzeSpec`'s, its
    determinisations keyed by ``seed``, the log's deal and the decision); and the loss against
    ``reference`` (None: none) from ``samples`` stock orders per decision, on the deal's true
    cards (a replay log's)."""

    KIND = "review"

    seat: int
    policy: str | PolicySpec = DEFAULT_POLICY
    rollouts: int = DEFAULT_REVIEW_ROLLOUTS
    seed: int = 0
    luck: Any = None
    batch: int = DEFAULT_BATCH
    confidence: float = 0.95
    sharpen: int = DEFAULT_SHARPEN
    belief: int = 0
    belief_noise: float = DEFAULT_BELIEF_NOISE
    reference: str | PolicySpec | None = DEFAULT_REFERENCE
    samples: int = DEFAULT_SAMPLES

    def check(self) -> None:
        check_seat(self)
        self._set("policy", as_policy(self.policy))
        check_positive_int(self, "rollouts")
        check_int(self, "seed", 0)
        check_luck(self)
        check_positive_int(self, "batch")
        check_confidence(self)
        check_int(self, "sharpen", 0)
        check_int(self, "belief", 0)
        check_float(self, "belief_noise", 0.0, 1.0)
        if self.reference is not None:
            self._set("reference", as_policy(self.reference, "reference"))
        check_int(self, "samples", 2)

    def analysis(self, seed: int, first: int) -> AnalyzeSpec:
        """The analysis of one decision: this review's settings, determinisations ``first ..``
        of ``seed`` (:func:`simkit.studies.review.review_decision` keys both)."""
        return AnalyzeSpec(policy=self.policy, rollouts=self.rollouts, seed=seed, first=first, luck=self.luck,
                           batch=self.batch, confidence=self.confidence, sharpen=self.sharpen, belief=self.belief,
                           belief_noise=self.belief_noise)


def check_seat(spec: RunSpec) -> None:
    """Field ``seat``: 0, 1 or 2 (numpy integers become ints)."""
    value = spec.seat
    if isinstance(value, bool) or not hasattr(value, "__index__") or not 0 <= int(value.__index__()) < N_SEATS:
        raise SimkitError(f"seat must be 0, 1 or 2, got {value!r}", parameters=("seat",))
    spec._set("seat", int(value.__index__()))
