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

from simkit.cards import N_SEATS
from simkit.defaults import DEFAULT_REFERENCE, DEFAULT_REVIEW_ROLLOUTS, DEFAULT_SAMPLES
from simkit.errors import SimkitError
from simkit.policies.registry import PolicySpec
from simkit.specs.analyze import AnalyzeSpec, RolloutSettings
from simkit.specs.base import RunSpec, as_policy, check_int


@dataclasses.dataclass(frozen=True, kw_only=True)
class ReviewSpec(RolloutSettings):
    """A review's settings: ``seat`` (the seat reviewed); each decision's analysis
    (:meth:`analysis`: the :class:`~simkit.specs.analyze.RolloutSettings`, ``rollouts`` fewer than
    an analysis's, its determinisations keyed by ``seed``, the log's deal and the decision); and
    the loss against ``reference`` (None: none) from ``samples`` stock orders per decision, on the
    deal's true cards (a replay log's).  Its fields are given by name."""

    KIND = "review"

    seat: int
    rollouts: int = DEFAULT_REVIEW_ROLLOUTS
    reference: str | PolicySpec | None = DEFAULT_REFERENCE
    samples: int = DEFAULT_SAMPLES

    def check(self) -> None:
        check_seat(self)
        super().check()
        if self.reference is not None:
            self._set("reference", as_policy(self.reference, "reference"))
        check_int(self, "samples", 2)

    def analysis(self, seed: int, first: int) -> AnalyzeSpec:
        """The analysis of one decision: this review's rollout settings, determinisations
        ``first ..`` of ``seed`` (:func:`simkit.studies.review.review_decision` keys both)."""
        return AnalyzeSpec(**dict(self.rollout_settings(), seed=seed), first=first)


def check_seat(spec: RunSpec) -> None:
    """Field ``seat``: 0, 1 or 2 (numpy integers become ints)."""
    value = spec.seat
    if isinstance(value, bool) or not hasattr(value, "__index__") or not 0 <= int(value.__index__()) < N_SEATS:
        raise SimkitError(f"seat must be 0, 1 or 2, got {value!r}", parameters=("seat",))
    spec._set("seat", int(value.__index__()))
