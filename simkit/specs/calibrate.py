"""The spec of a calibration (``simkit calibrate``, :func:`simkit.studies.reference.calibrate`, an
experiment's ``[[calibration]]``): ``policy`` in ``seat`` against ``reference``, deals ``first_deal
..`` of ``seed`` played both ways, each reviewed from ``samples`` stock orders per decision.

Its identity is what an experiment's calibration folder stores in ``identity.json`` and reuses
the folder by: every field, the policies with every parameter (a changed preset is another
calibration), the rules as their mapping, and the level of the intervals (the stored calibration
holds them).

>>> spec = CalibrateSpec("random", deals=3, samples=4)
>>> spec.identity()["policy"], spec.identity()["seat"], spec.identity()["rules"]["hu_tolerance"]
('random', 1, 2)
>>> CalibrateSpec("random", deals=1)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
simkit.errors.SimkitError: deals must be a whole number >= 2, got 1
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from simkit.defaults import DEFAULT_CALIBRATE_DEALS, DEFAULT_CALIBRATE_SEAT, DEFAULT_REFERENCE, DEFAULT_SAMPLES
from simkit.policies.registry import PolicySpec
from simkit.rules import RuleSet
from simkit.specs.analyze import check_confidence
from simkit.specs.base import RunSpec, as_policy, as_rules, check_int
from simkit.specs.review import check_seat


@dataclasses.dataclass(frozen=True)
class CalibrateSpec(RunSpec):
    """A calibration: ``policy`` (any compiled policy) in ``seat`` and ``reference`` (any policy
    the rollouts play) in the other seats, ``deals`` deals from ``first_deal`` of ``seed`` under
    ``rules``, played with the policy and with the reference in the seat; the review's rollouts
    take ``samples`` stock orders per decision; intervals at ``confidence``.  (Whether the
    policies can play there is :func:`~simkit.studies.reference.calibrate`'s check: it compiles
    them.)"""

    KIND = "calibration"

    policy: str | PolicySpec
    reference: str | PolicySpec = DEFAULT_REFERENCE
    seat: int = DEFAULT_CALIBRATE_SEAT
    deals: int = DEFAULT_CALIBRATE_DEALS
    seed: int = 0
    first_deal: int = 0
    samples: int = DEFAULT_SAMPLES
    rules: RuleSet | Mapping[str, Any] | None = None
    confidence: float = 0.95

    def check(self) -> None:
        self._set("policy", as_policy(self.policy))
        self._set("reference", as_policy(self.reference, "reference"))
        check_seat(self)
        check_int(self, "deals", 2)
        check_int(self, "seed", 0)
        check_int(self, "first_deal", 0)
        check_int(self, "samples", 2)
        self._set("rules", as_rules(self.rules))
        check_confidence(self)
